//! edgebench: what does it cost to keep edge and IoT data in Redis over TCP, over a Unix
//! socket, in-process, or in a document store, for your workload?
//!
//! Data flows one way through the modules, for every command:
//!
//! ```text
//!            coredata              kv                    perf                fleet
//! cli ─→ config::CoreData      kv::KvConfig          perf::args          fleet::config
//!   (app/: one module per command wires its own column of this table)
//! workload  coredata::workload  kv::{keys,data,command} perf::{config,data} fleet::workload
//! runner    runner (go -bench)  kv::load (memtier)      perf::{run,ingest,tx} (open loop)
//! target ─→ Target::open_store  Target::redis_reach     Target::connector   event stores
//! results   results::RunResults kv::results::KvResults  perf::results       fleet::results
//! exporters report's formats    kv::results             perf::{csv,summary} fleet::export
//! page      coredata::html      kv::html                perf::html          fleet::html
//! merge     coredata::merge     kv::merge               —                   fleet::merge
//! ```
//!
//! A workload is a slice: each of [`coredata`], [`kv`], [`perf`] and [`fleet`] holds its run,
//! results, exporters, page section and merge in its own folder, and meets the reports
//! through one small trait, [`report::Workload`] (its `slice.rs`). `report html` and
//! `report merge` iterate the list [`app::WORKLOADS`] registers; [`report`] sits beneath every
//! workload and names none.
//!
//! - [`app`]: one module per command, the exit statuses ([`app::Ending`], [`app::Error`]) and
//!   the registered workloads ([`app::WORKLOADS`]).
//! - [`cli`] and [`config`]: the two-stage command line (clap strings, then typed config).
//! - [`v2018`] and [`edgex`]: the data of each contract, named for it: the 2018 PoC's events
//!   and readings (`v2018::Event`), and EdgeX 3/4's with their `/api/v3` DTOs (`edgex::Event`).
//! - [`coredata`]: the ten EdgeX core-data benchmarks of the 2018 PoC.
//! - [`kv`]: memtier_benchmark's key-value load; [`perf`]: PadoGrid's perf_test tools.
//! - [`fleet`]: a device fleet posting EdgeX events open loop: does the store keep up?
//! - [`runner`]: `go test -bench` calibration, HDR latency, allocation counting.
//! - [`target`]: the one way any command reaches a server or store: `--target` items (each
//!   read by its backend), and a started [`target::Target`] that opens stores, load
//!   connections and worker connections through its backend.
//! - [`service`]: EdgeX's core-data REST API (`/api/v3`), served in front of any store.
//! - [`store`]: the two store contracts ([`store::CoreData`], 2018; [`store::edgex::EventStore`],
//!   EdgeX 3/4), the seam a backend implements ([`store::backend`]: `Backend`, `Kind`,
//!   `Started`), the registry of backends ([`store::BACKENDS`]), and one folder per database
//!   holding its items, its layouts and how it starts.
//! - [`transport`]: how edgebench talks to a Redis-protocol server, below every store:
//!   endpoints, Redis URLs, connections, `WAIT` after writes, Redis Cluster's routing.
//! - [`results`]: the core-data results model (beneath the runner, which fills it).
//! - [`redact`]: passwords out of printed URLs and recorded command lines, at the bottom.
//! - [`report`]: what no workload owns: the [`report::Exporter`] trait and
//!   [`report::write_all`] (every results file written whole), the core-data file formats,
//!   the HTML page and its charts, the merge machinery, `report compare` and `benchtomd`, and
//!   the [`report::Workload`] seam.
//! - [`engine`], [`resp`] and [`server`]: the embedded engine, the RESP codec and the RESP
//!   server, from the `edgebench-engine` crate (`crates/edgebench-engine`), which knows
//!   nothing of the rest; re-exported here.

pub mod app;
pub mod cli;
pub mod config;
pub mod coredata;
pub mod edgex;
pub mod fleet;
pub mod kv;
pub mod perf;
pub mod redact;
pub mod report;
pub mod results;
pub mod runner;
pub mod service;
pub mod store;
pub mod target;
pub mod transport;
pub mod v2018;
pub mod ycsb;

pub use edgebench_engine::{engine, keyslot, resp, server};
