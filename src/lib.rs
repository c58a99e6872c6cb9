//! edgebench: what does it cost to keep edge and IoT data in Redis over TCP, over a Unix
//! socket, in-process, or in a document store, for your workload?
//!
//! Data flows one way through the modules, for every command:
//!
//! ```text
//!            coredata          kv                 perf                serve
//! cli ─→ config::CoreData  kv::KvConfig      perf::args          config::ServeConfig
//!   (app/: one module per command wires its own row of this table)
//! workload  workload::coredata  kv::{keys,data,command}  perf::{config,data}   —
//! runner    runner (go -bench)  kv::load (memtier)       perf::{run,ingest,tx} server
//! target ─→ Target::open_store  Target::redis_reach      Target::connector     (engine)
//! store     store::CoreData     engine / RESP socket     redis-rs connection
//! results   results::RunResults report::kv::KvResults    perf::results
//! exporters report::write_all (Exporter)                 perf::{csv,summary}
//! ```
//!
//! - [`app`]: one module per command, and the exit statuses ([`app::Ending`], [`app::Error`]).
//! - [`cli`] and [`config`]: the two-stage command line (clap strings, then typed config).
//! - [`model`]: the EdgeX core-data events and readings.
//! - [`workload`]: the ten EdgeX core-data benchmarks of the 2018 PoC.
//! - [`kv`]: memtier_benchmark's key-value load; [`perf`]: PadoGrid's perf_test tools.
//! - [`runner`]: `go test -bench` calibration, HDR latency, allocation counting.
//! - [`target`]: the one way any command reaches a server or store: `--target` items, the
//!   Redis URL parser, spawned servers, and a started [`target::Target`] that opens stores,
//!   load connections and worker connections.
//! - [`service`]: EdgeX's core-data REST API (`/api/v3`), served in front of any store.
//! - [`store`]: the [`store::CoreData`] trait and one module per backend.
//! - [`results`]: the core-data results model.
//! - [`report`]: exporters behind one trait (benchtomd markdown, Go bench text, percentiles,
//!   CSV, JSON; kv's memtier text, markdown and JSON), written through
//!   [`report::write_all`].
//! - [`engine`], [`resp`] and [`server`]: the embedded engine, the RESP codec and the RESP
//!   server, from the `edgebench-engine` crate (`crates/edgebench-engine`), which knows
//!   nothing of the rest; re-exported here.

pub mod app;
pub mod cli;
pub mod config;
pub mod edgex;
pub mod kv;
pub mod model;
pub mod perf;
pub mod report;
pub mod results;
pub mod runner;
pub mod service;
pub mod store;
pub mod target;
pub mod transport;
pub mod workload;

pub use edgebench_engine::{engine, keyslot, resp, server};
