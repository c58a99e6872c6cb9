//! `edgebench fleet`, as one slice: a device fleet posting EdgeX events at a fixed rate, open
//! loop, against each target, from its typed config to its results files, its page and the
//! merge of several load hosts.
//!
//! ```text
//! config (flags + TOML → FleetConfig) → workload (FleetSpec → writers, readers, retention
//!   → FleetReport; find_max) → results (FleetRun: rows, summaries, markdown, CSVs)
//!   → export (fleet.json, fleet.md, per-second.csv, store-size.csv, written whole) + html
//! merge: several hosts' FleetRun → one; slice: how report html and report merge see it
//! ```
//!
//! The command itself is `app::fleet`. Nothing here imports `app` or `cli` beyond the clap
//! arguments the config reads.

pub mod config;
pub mod export;
pub mod html;
pub mod merge;
pub mod results;
pub mod slice;
pub mod workload;

pub use config::FleetConfig;
pub use slice::Fleet;
