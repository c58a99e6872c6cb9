//! `edgebench coredata`: each target in turn: start it (spawn or connect), open a store, run the
//! workload, and after every finished benchmark rewrite all results files, so an error, a
//! crash or Ctrl-C keeps what finished. A target that cannot be started or fails part-way is
//! reported in one line and recorded in the results; the other targets still run. A spawned
//! server is stopped when its [`Target`] is dropped: at the end of its turn, on error, on
//! Ctrl-C (the workload returns `Interrupted`) and on panic (unwinding drops it).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::Context as _;

use super::shared::{Ending, Error, Interrupts};
use super::status::ProgressLine;
use crate::cli::CoreDataArgs;
use crate::config::CoreDataConfig;
use crate::report;
use crate::results::{RunMeta, RunResults, TargetResults};
use crate::runner::Runner;
use crate::target::Target;
use crate::workload::coredata::{self, Progress, WorkloadError, BENCHMARKS};

/// `edgebench coredata ARGS`: configure, run, print the `--format` tables on stdout.
pub fn main(
    args: &CoreDataArgs,
    interrupts: &Interrupts<'_>,
    status: &mut dyn Write,
) -> Result<Ending, Error> {
    let cfg = CoreDataConfig::from_args(args, interrupts.flag.clone()).map_err(Error::usage)?;
    for note in &cfg.notes {
        let _ = writeln!(status, "edgebench: note: {note}");
    }
    interrupts.watch()?;
    let outcome = run(&cfg, status)?;
    let mut stdout = std::io::stdout().lock();
    for format in &cfg.formats {
        let text = format
            .exporter()
            .render(&outcome.results)
            .context("cannot render the results")?;
        stdout.write_all(&text).context("cannot write to stdout")?;
    }
    stdout.flush().context("cannot write to stdout")?;
    let _ = writeln!(status, "edgebench: results in {}", outcome.dir.display());
    Ok(if outcome.interrupted {
        Ending::Interrupted
    } else if outcome.failed_targets > 0 {
        Ending::PartlyFailed
    } else {
        Ending::Finished
    })
}

/// How a `coredata` run ended.
#[derive(Debug)]
pub struct Outcome {
    /// What was measured (also written to `dir`).
    pub results: RunResults,
    /// Where the results files are.
    pub dir: PathBuf,
    /// Targets that could not be started or failed part-way.
    pub failed_targets: usize,
    /// Whether Ctrl-C stopped the run.
    pub interrupted: bool,
}

/// Runs `edgebench coredata`. Progress goes to `status` (stderr in the binary).
pub fn run(cfg: &CoreDataConfig, status: &mut dyn Write) -> anyhow::Result<Outcome> {
    let dir = match &cfg.out {
        Some(d) => d.clone(),
        None => super::shared::fresh_run_dir(Path::new("results"), "coredata"),
    };
    let mut results = RunResults {
        meta: meta("coredata", cfg),
        targets: Vec::new(),
    };
    // Fail on an unwritable directory before anything runs.
    write(&dir, &results)?;

    let mut progress = ProgressLine::new(std::io::stderr().is_terminal());
    let mut runner = Runner::new(cfg.benchtime, cfg.interrupted.clone());
    let mut failed_targets = 0;
    let mut interrupted = false;

    for spec in &cfg.targets {
        if cfg.interrupted.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let selected: Vec<&str> = BENCHMARKS
            .iter()
            .copied()
            .filter(|b| cfg.filter.matches(&spec.name, b))
            .collect();
        if selected.is_empty() {
            continue;
        }
        results.targets.push(TargetResults {
            name: spec.name.clone(),
            ..TargetResults::default()
        });
        let idx = results.targets.len() - 1;

        let target = match Target::start(spec).and_then(|t| {
            let store = t.open_store()?;
            Ok((t, store))
        }) {
            Ok(t) => t,
            Err(e) => {
                progress.line(status, &format!("edgebench: {e}"));
                results.targets[idx].error = Some(e.to_string());
                failed_targets += 1;
                write(&dir, &results)?;
                continue;
            }
        };
        let (target, mut store) = target;
        results.targets[idx].endpoint = target.endpoint();
        write(&dir, &results)?;

        let total = selected.len();
        let mut done = 0;
        let mut write_error = None;
        let outcome = coredata::run(
            store.as_mut(),
            &mut runner,
            &|b| cfg.filter.matches(&spec.name, b),
            cfg.count,
            &mut |p| match p {
                Progress::Preparing(what) => progress.show(
                    status,
                    &format!("[{} {done}/{total}] preparing {what}", spec.name),
                ),
                Progress::Round {
                    bench,
                    repetition,
                    round,
                } => progress.show(
                    status,
                    &format!(
                        "[{} {}/{total}] {bench} run {}/{} N={} ({:.2}s)",
                        spec.name,
                        done + 1,
                        repetition + 1,
                        cfg.count,
                        round.n,
                        round.elapsed_ns as f64 / 1e9
                    ),
                ),
                Progress::Finished(b) => {
                    done += 1;
                    results.targets[idx].benchmarks.push(b.clone());
                    if let Some(m) = b.median() {
                        progress.line(
                            status,
                            &format!(
                                "[{} {done}/{total}] {:<16} N={:<9} {:>14.0} ns/op",
                                spec.name, b.name, m.n, m.ns_per_op
                            ),
                        );
                    }
                    if write_error.is_none() {
                        write_error = write(&dir, &results).err();
                    }
                }
            },
        );
        drop(store);
        drop(target);
        if let Some(e) = write_error {
            return Err(e);
        }
        match outcome {
            Ok(()) => {}
            Err(WorkloadError::Interrupted) => {
                progress.clear(status);
                writeln!(
                    status,
                    "edgebench: interrupted; keeping the benchmarks that finished"
                )?;
                interrupted = true;
                break;
            }
            Err(e) => {
                let msg = format!("target {}: {e}", spec.name);
                progress.line(status, &format!("edgebench: {msg}"));
                results.targets[idx].error = Some(msg);
                failed_targets += 1;
            }
        }
    }
    progress.clear(status);
    write(&dir, &results)?;
    Ok(Outcome {
        results,
        dir,
        failed_targets,
        interrupted,
    })
}

fn write(dir: &Path, results: &RunResults) -> anyhow::Result<()> {
    report::write_files(dir, results)
        .with_context(|| format!("cannot write results to {} (use --out DIR)", dir.display()))
}

fn meta(workload: &str, cfg: &CoreDataConfig) -> RunMeta {
    RunMeta {
        workload: workload.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        benchtime: cfg.benchtime.to_string(),
        count: cfg.count,
        goos: std::env::consts::OS.to_string(),
        goarch: match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "386",
            other => other,
        }
        .to_string(),
        cpu: cpu_model(),
        procs: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        baseline: cfg.baseline.clone(),
    }
}

/// The CPU model, as `go test` prints it on its `cpu:` line (Linux only).
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}
