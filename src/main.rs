//! The `edgebench` binary: parse, configure, run, print. Everything else is in the library.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;

use edgebench::cli::{Cli, Command, ReportCommand};
use edgebench::config::{CoreDataConfig, ServeConfig};
use edgebench::report::{self, Format};
use edgebench::runner::alloc::CountingAlloc;

/// B/op and allocs/op, as `go test -benchmem` reports them, counted around mimalloc: the
/// engine allocates per written key and member, and glibc's malloc was a fifth of the time of
/// a write (docs/PERFORMANCE.md), as Redis ships with jemalloc rather than libc's allocator.
#[global_allocator]
static ALLOC: CountingAlloc<mimalloc::MiMalloc> = CountingAlloc::new(mimalloc::MiMalloc);

/// Exit status after Ctrl-C, as shells report a SIGINT death (128 + 2).
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    // memtier options edgebench kv does not support are refused by name before clap sees
    // them (clap would only say "unexpected argument").
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("kv") {
        if let Err(e) = edgebench::kv::reject_unsupported(&argv[2..]) {
            let _ = writeln!(std::io::stderr(), "edgebench: {e}");
            return ExitCode::from(2);
        }
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Not eprintln!: it panics when stderr is closed.
            let _ = writeln!(std::io::stderr(), "edgebench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The first Ctrl-C (or SIGTERM, SIGHUP) raises `flag`: the run stops after what is in flight, keeps what finished,
/// drops its private databases and stops the servers it spawned. A second one exits at once;
/// spawned servers still die with us (PR_SET_PDEATHSIG), but a document store's private
/// database is left behind, so the line says how to find it.
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

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Coredata(args) => {
            let interrupted = Arc::new(AtomicBool::new(false));
            let cfg = match CoreDataConfig::from_args(&args, interrupted.clone()) {
                Ok(cfg) => cfg,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "edgebench: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            for note in &cfg.notes {
                let _ = writeln!(std::io::stderr(), "edgebench: note: {note}");
            }
            on_ctrl_c(interrupted.clone())?;

            let outcome = edgebench::app::coredata(&cfg, &mut std::io::stderr())?;
            let mut stdout = std::io::stdout().lock();
            for format in &cfg.formats {
                stdout.write_all(&format.exporter().render(&outcome.results)?)?;
            }
            stdout.flush()?;
            let _ = writeln!(
                std::io::stderr(),
                "edgebench: results in {}",
                outcome.dir.display()
            );
            Ok(if outcome.interrupted {
                ExitCode::from(EXIT_INTERRUPTED)
            } else if outcome.failed_targets > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Serve(args) => {
            let cfg = match ServeConfig::from_args(&args) {
                Ok(cfg) => cfg,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "edgebench: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            // A server reports no B/op; counting would only bounce a cache line between cores.
            edgebench::runner::alloc::set_counting(false);
            edgebench::app::serve(&cfg, &mut std::io::stderr())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Kv(args) => {
            let cfg = match edgebench::kv::KvConfig::from_args(&args) {
                Ok(cfg) => cfg,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "edgebench: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            if let Some(e) = edgebench::app::mini_redis_refusal(&cfg) {
                let _ = writeln!(std::io::stderr(), "edgebench: {e}");
                return Ok(ExitCode::from(2));
            }
            let interrupted = Arc::new(AtomicBool::new(false));
            on_ctrl_c(interrupted.clone())?;
            // The client's own allocations are not reported; counting would cost every thread.
            edgebench::runner::alloc::set_counting(false);
            let outcome = edgebench::app::kv(
                &cfg,
                interrupted.clone(),
                &mut std::io::stdout().lock(),
                &mut std::io::stderr(),
            )?;
            let _ = writeln!(
                std::io::stderr(),
                "edgebench: results in {}",
                outcome.dir.display()
            );
            Ok(if interrupted.load(Ordering::Relaxed) {
                ExitCode::from(EXIT_INTERRUPTED)
            } else if outcome.stopped.is_some() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Perf(args) => {
            let stop = Arc::new(AtomicBool::new(false));
            on_ctrl_c(stop.clone())?;
            match edgebench::app::perf(&args.tool, &args.flags, &stop, &mut std::io::stdout()) {
                Ok(()) => Ok(if stop.load(Ordering::Relaxed) {
                    ExitCode::from(EXIT_INTERRUPTED)
                } else {
                    ExitCode::SUCCESS
                }),
                Err(edgebench::app::PerfError::Usage(e)) => {
                    let _ = writeln!(std::io::stderr(), "edgebench: {e}");
                    Ok(ExitCode::from(2))
                }
                Err(edgebench::app::PerfError::Failed(e)) => Err(e),
            }
        }
        Command::Report(ReportCommand::Benchtomd { file }) => {
            let text = match file.as_deref() {
                None => read_stdin()?,
                Some(p) if p.as_os_str() == "-" => read_stdin()?,
                Some(p) => std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            };
            let results = report::benchtomd::parse_go_bench(&text);
            std::io::stdout().write_all(&Format::Markdown.exporter().render(&results)?)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn read_stdin() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read standard input")?;
    Ok(text)
}
