//! The `edgebench` binary: parse, run a command, map how it ended to an exit status (here
//! and nowhere else), print the error chain. Everything else is in the library.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;

use edgebench::app::{self, Interrupts, EXIT_INTERRUPTED};
use edgebench::cli::Cli;
use edgebench::runner::alloc::CountingAlloc;

/// B/op and allocs/op, as `go test -benchmem` reports them, counted around mimalloc: the
/// engine allocates per written key and member, and glibc's malloc was a fifth of the time of
/// a write (docs/PERFORMANCE.md), as Redis ships with jemalloc rather than libc's allocator.
#[global_allocator]
static ALLOC: CountingAlloc<mimalloc::MiMalloc> = CountingAlloc::new(mimalloc::MiMalloc);

fn main() -> ExitCode {
    // The in-process engine's INFO `used_memory` (the fleet's store size) is this
    // allocator's live heap, as redis-server's is its allocator's.
    edgebench::engine::cmd::server::set_heap_probe(edgebench::runner::alloc::live_bytes);
    // memtier options edgebench kv does not support are refused by name before clap sees
    // them (clap would only say "unexpected argument").
    let argv: Vec<String> = std::env::args().collect();
    let refused = match argv.get(1).map(String::as_str) {
        Some("kv") => edgebench::kv::reject_unsupported(&argv[2..]).err(),
        _ => None,
    };
    let ended = match refused {
        Some(e) => Err(app::Error::usage(e)),
        None => {
            let interrupts = Interrupts {
                flag: Arc::new(AtomicBool::new(false)),
                install: &on_ctrl_c,
            };
            app::run(Cli::parse(), &interrupts)
        }
    };
    match ended {
        Ok(ending) => ExitCode::from(ending.exit_code()),
        Err(e) => {
            // Not eprintln!: it panics when stderr is closed. A usage error is one line; a
            // failure prints its chain of causes.
            let _ = match &e {
                app::Error::Usage(line) => writeln!(std::io::stderr(), "edgebench: {line}"),
                app::Error::Failed(chain) => writeln!(std::io::stderr(), "edgebench: {chain:#}"),
            };
            ExitCode::from(e.exit_code())
        }
    }
}

/// The first Ctrl-C (or SIGTERM, SIGHUP) raises `flag`: the run stops after what is in flight,
/// keeps what finished, drops its private databases and stops the servers it spawned. A second
/// one exits at once; spawned servers still die with us (PR_SET_PDEATHSIG), but a document
/// store's private database is left behind, so the line says how to find it.
fn on_ctrl_c(flag: Arc<AtomicBool>) -> anyhow::Result<()> {
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            let _ = writeln!(
                std::io::stderr(),
                "edgebench: interrupted again: stopped at once, without cleanup; a PostgreSQL or \
                 MongoDB private database named edgebench_<12 hex digits> may be left (drop it \
                 with dropdb or dropDatabase)"
            );
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        let _ = writeln!(
            std::io::stderr(),
            "edgebench: stopping after what is in flight (Ctrl-C again to quit at once)"
        );
    })
    .context("cannot install the Ctrl-C handler")
}
