//! edgebench: what does it cost to keep edge and IoT data in Redis over TCP, over a Unix
//! socket, in-process, or in a document store, for your workload?
//!
//! Data flows one way through the modules:
//!
//! ```text
//! cli → config → workload → runner → target / store → results → report (exporters)
//! ```
//!
//! - [`model`]: the EdgeX core-data events and readings.
//! - [`store`]: the [`store::CoreData`] trait and one module per backend.
//! - [`target`]: what a run talks to (spawned servers, URLs), opening stores on it.
//! - [`workload`]: the benchmarks (the ten EdgeX core-data benchmarks).
//! - [`runner`]: `go test -bench` calibration, HDR latency, allocation counting.
//! - [`results`]: the plain-data results model.
//! - [`report`]: exporters (benchtomd markdown, Go bench text, percentiles, CSV, JSON).
//! - [`config`] and [`cli`]: the two-stage command line.
//! - [`engine`], [`resp`] and [`server`]: the embedded engine, the RESP codec and the RESP
//!   server, from the `edgebench-engine` crate (`crates/edgebench-engine`), re-exported here.

pub mod app;
pub mod cli;
pub mod config;
pub mod kv;
pub mod model;
pub mod perf;
pub mod report;
pub mod results;
pub mod runner;
pub mod store;
pub mod target;
pub mod workload;

pub use edgebench_engine::{engine, resp, server};
