//! The commands, one module each: typed config in, a run, results out through the exporters.
//!
//! Each module is a short orchestration of its command (`cli` → typed config → workload/run →
//! results → files and stdout):
//!
//! - [`coredata`]: the ten EdgeX core-data benchmarks, target by target;
//! - [`coredata_service`]: EdgeX's core-data REST API in front of a store, until Ctrl-C;
//! - [`serve`]: the engine served over RESP until Ctrl-C or SIGTERM;
//! - [`kv`]: memtier_benchmark's key-value load;
//! - [`perf`]: PadoGrid's perf_test tools;
//! - [`fleet`]: a device fleet, open loop, against each target;
//! - [`ycsb`]: YCSB's core workloads against each target;
//! - [`report`]: `report html`, `report compare` and `report benchtomd`.
//!
//! [`run`] dispatches a parsed command line. How a command ended is an [`Ending`] and why it
//! could not run is an [`Error`]; the binary maps both to exit statuses in one place
//! ([`Ending::exit_code`], [`Error::exit_code`]). Those, and the rest every command shares,
//! are in `shared.rs`; the status lines all commands print on stderr live in [`status`].

pub mod coredata;
pub mod coredata_service;
pub mod fleet;
pub mod kv;
pub mod perf;
pub mod report;
pub mod serve;
mod shared;
pub mod status;
pub mod ycsb;

use crate::cli::{Cli, Command};
use crate::report::Workload;
pub use shared::{fresh_run_dir, Ending, Error, Interrupts, EXIT_INTERRUPTED, EXIT_USAGE};

/// Every workload the reports know, in the order `report html` shows them on a page. A
/// directory belongs to the last one that recognises it (kv's hold a `results.json` as
/// core-data's do), so a more specific workload comes after a more general one.
pub const WORKLOADS: &[&dyn Workload] = &[
    &crate::coredata::CoreData,
    &crate::kv::Kv,
    &crate::fleet::Fleet,
    &crate::perf::Perf,
    // After core-data: a YCSB directory holds a results.json too (of `"kind": "ycsb"`).
    &crate::ycsb::slice::Ycsb,
];

/// Runs the parsed command line.
pub fn run(cli: Cli, interrupts: &Interrupts<'_>) -> Result<Ending, Error> {
    let stderr = &mut std::io::stderr();
    match cli.command {
        Command::Coredata(args) => coredata::main(&args, interrupts, stderr),
        Command::Serve(args) => serve::main(&args, stderr),
        Command::CoredataService(args) => coredata_service::main(&args, stderr),
        Command::Fleet(args) => fleet::main(&args, interrupts, stderr),
        Command::Kv(args) => kv::main(&args, interrupts, stderr),
        Command::Perf(args) => perf::main(&args, interrupts),
        Command::Ycsb(args) => ycsb::main(&args.words, interrupts, stderr),
        Command::Report(command) => report::main(&command),
    }
}
