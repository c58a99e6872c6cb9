//! `edgebench coredata`, as one slice: the ten EdgeX core-data benchmarks of the 2018 PoC,
//! from the selection of benchmarks to the page and the merge of several hosts.
//!
//! ```text
//! filter (--bench) → workload (the benchmarks, timed by crate::runner, over store::CoreData)
//!   → results::RunResults (the model, beneath the runner) → report's formats (results.md,
//!   bench.txt, percentiles.md, results.csv, results.json) + html (report.html)
//! merge: several hosts' RunResults → one; slice: how report html and report merge see it
//! ```
//!
//! The typed config is [`CoreDataConfig`] (`config.rs`) and the command `app::coredata`. The results
//! model stays in [`crate::results`] because the runner fills its measurements; its file
//! formats stay in [`crate::report`], beside the `report benchtomd` and `report compare`
//! tools that read them.

pub mod config;
pub mod filter;
pub mod html;
pub mod merge;
pub mod slice;
pub mod workload;

pub use config::CoreDataConfig;
pub use filter::BenchFilter;
pub use slice::CoreData;
