//! `edgebench coredata`: each target in turn: start it (spawn or connect), open a store, run the
//! workload, and after every finished benchmark rewrite all results files, so an error, a
//! crash or Ctrl-C keeps what finished. A target that cannot be started or fails part-way is
//! reported in one line and recorded in the results; the other targets still run. A spawned
//! server is stopped when its [`Target`] is dropped: at the end of its turn, on error, on
//! Ctrl-C (the workload returns `Interrupted`) and on panic (unwinding drops it).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::shared::{Ending, Error, Interrupts};
use super::status::ProgressLine;
use crate::cli::CoreDataArgs;
use crate::coredata::workload::{self as coredata, Progress, WorkloadError, BENCHMARKS};
use crate::coredata::CoreDataConfig;
use crate::report;
use crate::results::{column_name, RunMeta, RunResults, TargetResults};
use crate::runner::Runner;
use crate::store::CoreData;
use crate::target::{Target, TargetSpec};

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
    let mut out = Output {
        dir,
        page_written: None,
    };
    out.write(&results)?;

    let mut runner = Runner::new(cfg.benchtime, cfg.interrupted.clone());
    let levels = cfg.parallel.clone().unwrap_or_else(|| vec![1]);
    // The bar's steps: every repetition of every benchmark of every column.
    let steps_of = |spec: &TargetSpec| benchmarks_of(cfg, spec) as u64 * u64::from(cfg.count);
    let total: u64 = cfg
        .targets
        .iter()
        .map(|spec| steps_of(spec) * levels.len() as u64)
        .sum();
    let mut progress =
        ProgressLine::with_bar(std::io::stderr().is_terminal(), total, "benchmark runs");
    let mut steps = 0;
    let mut failed_targets = 0;
    let mut interrupted = false;
    let mut barrier = cfg.start_at;

    'targets: for spec in &cfg.targets {
        if cfg.interrupted.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        if benchmarks_of(cfg, spec) == 0 {
            continue;
        }
        // A column per level, so a target that fails shows its error in each.
        let first = results.targets.len();
        for &clients in &levels {
            results
                .targets
                .push(TargetResults::new(&spec.name, clients));
        }
        let target = match Target::start(spec) {
            Ok(t) => t,
            Err(e) => {
                steps += steps_of(spec) * levels.len() as u64;
                progress.set_position(steps);
                progress.line(status, &format!("edgebench: {e}"));
                for t in &mut results.targets[first..] {
                    t.error = Some(e.to_string());
                }
                failed_targets += 1;
                out.write(&results)?;
                continue;
            }
        };
        // Several load hosts: the first target is up; start the benchmarks together.
        if let Some(at) = barrier.take() {
            let waited = crate::runner::barrier::wait_until(Some(at), &cfg.interrupted);
            if let Some(w) = crate::runner::barrier::late_warning(waited) {
                progress.line(status, &format!("edgebench: warning: {w}"));
            }
        }
        let mut failed = false;
        for idx in first..results.targets.len() {
            if cfg.interrupted.load(Ordering::Relaxed) {
                interrupted = true;
                break 'targets;
            }
            let level = Level {
                cfg,
                spec,
                target: &target,
                idx,
                steps_before: steps,
            };
            let outcome = level.run(&mut results, &mut runner, &mut out, &mut progress, status)?;
            steps += steps_of(spec);
            progress.set_position(steps);
            match outcome {
                Ok(()) => {}
                Err(LevelError::Interrupted) => {
                    progress.clear(status);
                    writeln!(
                        status,
                        "edgebench: interrupted; keeping the benchmarks that finished"
                    )?;
                    interrupted = true;
                    break 'targets;
                }
                Err(LevelError::Failed(msg)) => {
                    progress.line(status, &format!("edgebench: {msg}"));
                    results.targets[idx].error = Some(msg);
                    failed = true;
                    out.write(&results)?;
                }
            }
        }
        failed_targets += usize::from(failed);
    }
    progress.clear(status);
    out.finish(&results)?;
    Ok(Outcome {
        results,
        dir: out.dir,
        failed_targets,
        interrupted,
    })
}

/// One column: a started target run by one `--parallel` level's clients.
struct Level<'a> {
    cfg: &'a CoreDataConfig,
    spec: &'a TargetSpec,
    target: &'a Target,
    /// The column in the results.
    idx: usize,
    /// The progress bar's steps done before this column.
    steps_before: u64,
}

/// Why a level stopped early.
enum LevelError {
    /// Ctrl-C.
    Interrupted,
    /// Its clients could not connect or the workload failed; the one-line message.
    Failed(String),
}

impl Level<'_> {
    /// Opens the level's clients, runs the workload, and rewrites the results files after
    /// every finished benchmark. The outer error is a results file that cannot be written.
    fn run(
        &self,
        results: &mut RunResults,
        runner: &mut Runner,
        out: &mut Output,
        progress: &mut ProgressLine,
        status: &mut dyn Write,
    ) -> anyhow::Result<Result<(), LevelError>> {
        let (cfg, spec, idx) = (self.cfg, self.spec, self.idx);
        let column = results.targets[idx].column();
        let clients = results.targets[idx].parallel;
        let mut stores = match self.open_stores(clients) {
            Ok((stores, connect_ns)) => {
                results.targets[idx].connect_ns = Some(connect_ns);
                stores
            }
            Err(msg) => return Ok(Err(LevelError::Failed(msg))),
        };
        // Coerced one by one: a `Box<dyn CoreData>` holds a `'static` object, and `&mut` of
        // it would otherwise pin the borrow of `stores` to `'static` as well.
        let mut stores: Vec<&mut dyn CoreData> = stores
            .iter_mut()
            .map(|s| -> &mut dyn CoreData { s.as_mut() })
            .collect();
        results.targets[idx].endpoint = self.target.endpoint();
        out.write(results)?;

        let total = benchmarks_of(cfg, spec);
        let mut done = 0;
        let mut write_error = None;
        let outcome = coredata::run_clients(
            &mut stores,
            runner,
            &|b| cfg.filter.matches(&spec.name, b),
            cfg.count,
            &mut |p| match p {
                Progress::Preparing(what) => progress.show(
                    status,
                    &format!("[{column} {done}/{total}] preparing {what}"),
                ),
                Progress::Round {
                    bench,
                    repetition,
                    round,
                } => {
                    progress.set_position(
                        self.steps_before
                            + done as u64 * u64::from(cfg.count)
                            + u64::from(repetition),
                    );
                    progress.show(
                        status,
                        &format!(
                            "[{column} {}/{total}] {bench} run {}/{} N={} ({:.2}s)",
                            done + 1,
                            repetition + 1,
                            cfg.count,
                            round.n,
                            round.elapsed_ns as f64 / 1e9
                        ),
                    );
                }
                Progress::Finished(b) => {
                    done += 1;
                    results.targets[idx].benchmarks.push(b.clone());
                    if let Some(m) = b.median() {
                        progress.line(
                            status,
                            &format!(
                                "[{column} {done}/{total}] {:<16} N={:<9} {:>14.0} ns/op",
                                b.name, m.n, m.ns_per_op
                            ),
                        );
                    }
                    if write_error.is_none() {
                        write_error = out.write(results).err();
                    }
                }
            },
        );
        if let Some(e) = write_error {
            return Err(e);
        }
        Ok(outcome.map_err(|e| match e {
            WorkloadError::Interrupted => LevelError::Interrupted,
            e => LevelError::Failed(format!("target {column}: {e}")),
        }))
    }

    /// One store per client, each on its own connection, opened before anything is timed,
    /// and the median time one open took ([`crate::results::TargetResults::connect_ns`]):
    /// over the clients' opens and, up to [`CONNECT_SAMPLES`], opens made only to be timed
    /// and closed at once. One client's error is the target's own, as without `--parallel`.
    fn open_stores(&self, clients: u32) -> Result<(Vec<Box<dyn CoreData>>, u64), String> {
        let mut took = Vec::new();
        let mut open = |k: u32| {
            let start = Instant::now();
            let store = self.target.open_store().map_err(|e| match clients {
                1 => e.to_string(),
                _ => format!(
                    "target {}: cannot open client {k} of {clients}: {e}",
                    column_name(&self.spec.name, clients)
                ),
            });
            took.push(start.elapsed().as_nanos() as u64);
            store
        };
        let stores = (1..=clients)
            .map(&mut open)
            .collect::<Result<Vec<_>, _>>()?;
        for k in clients..CONNECT_SAMPLES {
            drop(open(k + 1)?);
        }
        took.sort_unstable();
        Ok((stores, took[took.len() / 2]))
    }
}

/// Store opens timed per target for its connection-setup figure (at least; `--parallel`
/// above it times each client's).
const CONNECT_SAMPLES: u32 = 5;

/// How many of the ten benchmarks `--bench` selects for `spec`'s columns.
fn benchmarks_of(cfg: &CoreDataConfig, spec: &TargetSpec) -> usize {
    BENCHMARKS
        .iter()
        .filter(|b| cfg.filter.matches(&spec.name, b))
        .count()
}

/// How often, at most, `report.html` is rewritten while a run goes on. The text files are
/// rewritten after every benchmark (a run stopped at any point keeps them whole); the page,
/// which costs 1–3 ms to assemble and write in a real run, at most this often and at the end,
/// so a default run of ~100 benchmarks in ~4 minutes pays for ~25 pages, not ~120
/// (docs/PERFORMANCE.md).
const PAGE_EVERY: Duration = Duration::from_secs(10);

/// A run's results directory and when its page was last written.
struct Output {
    dir: PathBuf,
    page_written: Option<Instant>,
}

impl Output {
    /// Rewrites the results files, and `report.html` when [`PAGE_EVERY`] has passed.
    fn write(&mut self, results: &RunResults) -> anyhow::Result<()> {
        let due = self
            .page_written
            .is_none_or(|at| at.elapsed() >= PAGE_EVERY);
        self.write_files(results, due)
    }

    /// Rewrites every results file, `report.html` included: the run's last word.
    fn finish(&mut self, results: &RunResults) -> anyhow::Result<()> {
        self.write_files(results, true)
    }

    fn write_files(&mut self, results: &RunResults, page: bool) -> anyhow::Result<()> {
        let dir = &self.dir;
        report::write_files(dir, results)
            .and_then(|()| match page {
                true => crate::coredata::html::write(dir, results),
                false => Ok(()),
            })
            .with_context(|| {
                format!("cannot write results to {} (use --out DIR)", dir.display())
            })?;
        if page {
            self.page_written = Some(Instant::now());
        }
        Ok(())
    }
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
        parallel: cfg.parallel.clone().unwrap_or_default(),
        run_id: cfg.run_id.clone(),
        hosts: Vec::new(),
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
