//! The commands, wired: typed config in, results and files out.
//!
//! `coredata` runs each target in turn: start it (spawn or connect), open a store, run the
//! workload, and after every finished benchmark rewrite all results files, so an error, a
//! crash or Ctrl-C keeps what finished. A target that cannot be started or fails part-way is
//! reported in one line and recorded in the results; the other targets still run. A spawned
//! server is stopped when its [`Target`] is dropped: at the end of its turn, on error, on
//! Ctrl-C (the workload returns `Interrupted`) and on panic (unwinding drops it).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context as _;

use crate::config::CoreDataConfig;
use crate::report;
use crate::results::{RunMeta, RunResults, TargetResults};
use crate::runner::Runner;
use crate::target::Target;
use crate::workload::coredata::{self, Progress, WorkloadError, BENCHMARKS};

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
pub fn coredata(cfg: &CoreDataConfig, status: &mut dyn Write) -> anyhow::Result<Outcome> {
    let dir = match &cfg.out {
        Some(d) => d.clone(),
        None => fresh_run_dir(Path::new("results"), "coredata"),
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

/// `results/<UTC timestamp>-<workload>`, with `-2`, `-3`… if that exists already.
fn fresh_run_dir(root: &Path, workload: &str) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let base = root.join(format!("{stamp}-{workload}"));
    let mut dir = base.clone();
    let mut k = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{k}", base.display()));
        k += 1;
    }
    dir
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

/// The status line on stderr: rewritten in place on a terminal, finished lines otherwise.
/// Writes are best-effort: a closed stderr (`2>&1 | head`) must not stop a run.
struct ProgressLine {
    tty: bool,
    shown: bool,
}

impl ProgressLine {
    fn new(tty: bool) -> Self {
        ProgressLine { tty, shown: false }
    }

    /// A transient status (a terminal only; a log would fill up with them).
    fn show(&mut self, out: &mut dyn Write, text: &str) {
        if self.tty {
            let _ = write!(out, "\r\x1b[2K{text}");
            let _ = out.flush();
            self.shown = true;
        }
    }

    /// A line that stays.
    fn line(&mut self, out: &mut dyn Write, text: &str) {
        self.clear(out);
        let _ = writeln!(out, "{text}");
    }

    fn clear(&mut self, out: &mut dyn Write) {
        if self.shown {
            let _ = write!(out, "\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// Runs `edgebench serve` until Ctrl-C or SIGTERM; `status` gets where it listens.
pub fn serve(cfg: &crate::config::ServeConfig, status: &mut dyn Write) -> anyhow::Result<()> {
    use crate::server::{run_many, Listener};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("edgebench-serve")
        .build()
        .context("cannot start the server runtime")?;
    runtime.block_on(async {
        let mut listeners = Vec::new();
        if let Some(addr) = &cfg.tcp {
            let l = Listener::bind_tcp(addr).await.with_context(|| {
                format!("cannot listen on {addr} (is the port taken? try --port)")
            })?;
            listeners.push(l);
        }
        if let Some(path) = &cfg.unixsocket {
            let l = Listener::bind_unix(path).with_context(|| {
                format!(
                    "cannot listen on unix socket {} (does its directory exist?)",
                    path.display()
                )
            })?;
            listeners.push(l);
        }
        for l in &listeners {
            if let Ok(endpoint) = l.endpoint() {
                let _ = writeln!(status, "edgebench serve: listening on {endpoint}");
            }
        }
        let shutdown = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async {
                    match term.as_mut() {
                        Some(t) => { t.recv().await; }
                        None => std::future::pending::<()>().await,
                    }
                } => {}
            }
        };
        run_many(
            listeners,
            crate::engine::Engine::new(),
            cfg.server.clone(),
            shutdown,
        )
        .await
        .context("the server stopped")?;
        let _ = writeln!(status, "edgebench serve: stopped");
        Ok(())
    })
}

/// What `edgebench kv` did: its results directory, and whether it ended early (and why).
#[derive(Debug)]
pub struct KvOutcome {
    /// Where the files went.
    pub dir: PathBuf,
    /// Set when the run ended before its end condition (a connection failed, Ctrl-C).
    pub stopped: Option<String>,
}

/// Runs `edgebench kv`: starts the target, runs the load, prints memtier's text on `out`
/// (or into `-o FILE`), and writes `results/<timestamp>-kv/` (memtier.txt, results.md).
pub fn kv(
    cfg: &crate::kv::KvConfig,
    interrupted: Arc<AtomicBool>,
    out: &mut dyn Write,
    status: &mut dyn Write,
) -> anyhow::Result<KvOutcome> {
    use crate::kv::load::{self, LoadTarget};
    use crate::kv::report;

    for w in &cfg.warnings {
        let _ = writeln!(status, "edgebench: warning: {w}");
    }
    if cfg.show_config {
        let _ = write!(status, "{}", cfg.show_config());
    }
    // The target: --target, or memtier's -u / -S / -s -p.
    let (target, name) = kv_target(cfg)?;
    let load_target = match (target.as_ref().and_then(Target::engine), &target) {
        (Some(engine), _) => LoadTarget::InProcess(engine),
        (None, Some(t)) => LoadTarget::Socket(t.redis_endpoint().ok_or_else(|| {
            anyhow::anyhow!(
                "--target {name}: edgebench kv needs a Redis-protocol target (embedded, \
                 embedded-tcp, embedded-uds, redis-tcp, redis-uds or a redis:// URL)"
            )
        })?),
        (None, None) => LoadTarget::Socket(memtier_endpoint(cfg)),
    };
    let where_ = match &load_target {
        LoadTarget::InProcess(_) => "in-process engine".to_string(),
        LoadTarget::Socket(e) => e.to_string(),
    };
    let _ = writeln!(status, "edgebench kv: {name} at {where_}");
    let result = load::run(cfg, &load_target, interrupted)?;
    drop(target);

    let mut text = report::header(cfg);
    text.push_str("\n\n");
    text.push_str(&report::all_stats(cfg, &result, "ALL STATS"));
    if !cfg.hide_histogram {
        text.push_str("\n\n");
        text.push_str(&report::distribution(&result));
    }
    let md = report::markdown(cfg, &result);
    let dir = fresh_run_dir(Path::new("results"), "kv");
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create results directory {}", dir.display()))?;
    crate::report::write_whole_file(&dir.join("memtier.txt"), text.as_bytes())?;
    crate::report::write_whole_file(&dir.join("results.md"), md.as_bytes())?;
    match &cfg.out_file {
        Some(path) => crate::report::write_whole_file(path, text.as_bytes())?,
        None => out.write_all(text.as_bytes())?,
    }
    // In-process, the client thread also runs the engine: being busy is the point there.
    if matches!(load_target, LoadTarget::Socket(_)) {
        for line in report::saturation(&result) {
            let _ = writeln!(status, "edgebench: warning: {line}");
        }
    }
    if let Some(why) = &result.stopped {
        let _ = writeln!(
            status,
            "edgebench: the run ended early: {why}; the figures cover what finished"
        );
    }
    Ok(KvOutcome {
        dir,
        stopped: result.stopped,
    })
}

/// The memtier options `edgebench kv` parses and checks but cannot run yet: a run with one of
/// them is refused with one line naming it, never run as if it were not there.
pub fn kv_not_yet(cfg: &crate::kv::KvConfig) -> Option<String> {
    let given: [(bool, &str); 9] = [
        (cfg.run_count > 1, "-x/--run-count above 1"),
        (cfg.print_all_runs, "--print-all-runs"),
        (cfg.json_out_file.is_some(), "--json-out-file"),
        (cfg.hdr_file_prefix.is_some(), "--hdr-file-prefix"),
        (!cfg.warmup.is_zero(), "--warmup"),
        (cfg.rate_limiting.is_some(), "--rate-limiting"),
        (cfg.rate.is_some(), "--rate"),
        (cfg.cluster_mode, "--cluster-mode"),
        (cfg.reconnect_interval.is_some(), "--reconnect-interval"),
    ];
    given.iter().find(|(on, _)| *on).map(|(_, flag)| {
        format!(
            "{flag} is not implemented yet in edgebench kv (issue 5, docs/kv.md); run without it"
        )
    })
}

/// `--target` started (and its column name), or `None` when memtier's flags say where.
fn kv_target(cfg: &crate::kv::KvConfig) -> anyhow::Result<(Option<Target>, String)> {
    let Some(item) = &cfg.target else {
        return Ok((None, "server".to_string()));
    };
    let specs = crate::target::parse_targets(std::slice::from_ref(item))
        .map_err(|e| anyhow::anyhow!("--target: {e}"))?;
    let [spec] = specs.as_slice() else {
        anyhow::bail!("--target {item:?}: edgebench kv runs against one target at a time");
    };
    let target = Target::start(spec)?;
    Ok((Some(target), spec.name.clone()))
}

/// memtier's own way of naming the server: `-S PATH`, else `-s HOST -p PORT` (a `-u` URI is
/// already folded into those by [`crate::kv::KvConfig`]).
fn memtier_endpoint(cfg: &crate::kv::KvConfig) -> crate::target::Endpoint {
    use crate::target::Endpoint;
    match &cfg.unix_socket {
        Some(path) => Endpoint::Unix(path.clone()),
        None => Endpoint::Tcp {
            host: cfg.server.clone().unwrap_or_else(|| "localhost".into()),
            port: cfg.port,
        },
    }
}

/// Why `edgebench perf` stopped: bad input (exit 2) or a failure while running (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// A flag, file or key the user gave is wrong; the message names it and the fix.
    #[error("{0}")]
    Usage(String),
    /// Something failed while running.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// The perf app's results directory (PadoGrid's `$APP_DIR/results`).
pub const PERF_RESULTS: &str = "results/perf";

/// `edgebench perf TOOL FLAGS`: PadoGrid's perf_test tools.
pub fn perf(
    tool: &str,
    flags: &[String],
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(), PerfError> {
    use crate::perf::csv::{clean_results, create_csv, PerfApp};
    let usage = |m: String| PerfError::Usage(m);
    let mut run = false;
    let mut list = false;
    let mut delete = false;
    let mut prop: Option<PathBuf> = None;
    let mut target: Option<String> = None;
    let mut i = 0;
    while i < flags.len() {
        let flag = flags[i].as_str();
        let mut value = |name: &str| {
            i += 1;
            flags
                .get(i)
                .cloned()
                .ok_or_else(|| usage(format!("{name} needs a value")))
        };
        match flag {
            "-run" => run = true,
            "-list" => list = true,
            "-delete" => delete = true,
            "-all" => {}
            "-prop" => prop = Some(PathBuf::from(value("-prop")?)),
            "--target" | "-target" => target = Some(value("--target")?),
            "-?" | "-h" | "--help" => {
                let _ = writeln!(
                    out,
                    "Usage: edgebench perf {tool} [-run] [-list] [-delete] [-prop FILE] [--target T]"
                );
                return Ok(());
            }
            "-db" => {
                return Err(usage(
                    "-db is not implemented yet in edgebench perf (issue 6); run without it".into(),
                ))
            }
            other => {
                return Err(usage(format!(
                    "unknown flag {other:?} for perf {tool}: use -run, -list, -delete, -prop FILE, \
                     -all or --target T"
                )))
            }
        }
        i += 1;
    }
    let app = PerfApp {
        name: "perf_test_edgebench".into(),
        results_dir: PathBuf::from(PERF_RESULTS),
    };
    match tool {
        "test_group" => {}
        "create_csv" => {
            let files = create_csv(&app).map_err(|e| usage(e.to_string()))?;
            for f in files {
                let _ = writeln!(out, "{}", f.display());
            }
            return Ok(());
        }
        "clean_results" => {
            let removed = clean_results(&app.results_dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = writeln!(out, "removed {} files from {}", removed.len(), PERF_RESULTS);
            return Ok(());
        }
        "create_group_config" => {
            let path = crate::perf::group_config::create_group_config(Path::new("etc"))
                .map_err(|e| usage(e.to_string()))?;
            let _ = writeln!(out, "{}", path.display());
            return Ok(());
        }
        "test_ingestion" | "test_tx" => {
            return Err(usage(format!(
                "{tool} is not implemented yet in edgebench perf (issue 6); test_group is"
            )))
        }
        other => {
            return Err(usage(format!(
                "unknown perf tool {other:?}: use test_group, create_csv, clean_results or \
                 create_group_config"
            )))
        }
    }
    let prop = prop.unwrap_or_else(|| PathBuf::from("etc/group.properties"));
    let cfg = crate::perf::GroupTestConfig::load(&prop).map_err(|e| usage(e.to_string()))?;
    for w in &cfg.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let (item, why) = match &target {
        Some(t) => (t.clone(), "from --target"),
        None if crate::target::redis_server_on_path() => (
            "redis-tcp".to_string(),
            "the default: redis-server is on PATH",
        ),
        None => (
            "embedded".to_string(),
            "the default: no redis-server on PATH, so the in-process engine",
        ),
    };
    if !run && !list && !delete {
        let _ = write!(out, "{}", describe_group_test(&cfg, &prop));
        let _ = writeln!(out, "target: {item} ({why})");
        let _ = writeln!(out, "To run the test, specify the '-run' option.");
        return Ok(());
    }
    let specs = crate::target::parse_targets(std::slice::from_ref(&item))
        .map_err(|e| usage(format!("--target: {e}")))?;
    let [spec] = specs.as_slice() else {
        return Err(usage(format!(
            "--target {item:?}: perf runs against one target at a time"
        )));
    };
    let target = Target::start(spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    let connector = perf_connector(&target).map_err(usage)?;
    let _ = writeln!(
        out,
        "target: {} at {} ({why})",
        spec.name,
        target.endpoint()
    );
    if list || delete {
        let mut con = connector().map_err(|e| anyhow::anyhow!("{e}"))?;
        if list {
            let sizes = crate::perf::run::list_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for (name, size) in sizes {
                let _ = writeln!(out, "{name}: {size}");
            }
        }
        if delete {
            let gone = crate::perf::run::delete_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = writeln!(out, "deleted: {}", gone.join(", "));
        }
        if !run {
            return Ok(());
        }
    }
    let product = spec.name.to_ascii_lowercase();
    let runs = crate::perf::run::run_group_test(
        &cfg,
        &*connector,
        &product,
        Path::new(PERF_RESULTS),
        stop,
        out,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut summary = String::from(
        "| Group | Threads | Invocations | M Throughput (inv/s) | M Latency (ms) | p50 (µs) | p99 (µs) | p99.9 (µs) |\n|-|-|-|-|-|-|-|-|\n",
    );
    for (r, path) in &runs {
        let max = r.max_ms().max(1) as f64;
        let worst = |f: fn(&crate::perf::results::OpLatency) -> u64| {
            r.latencies.iter().map(f).max().unwrap_or(0) as f64 / 1e3
        };
        summary.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.4} | {:.1} | {:.1} | {:.1} |\n",
            r.group,
            r.thread_count,
            r.actual_invocations,
            r.actual_invocations as f64 / max * 1000.0,
            max / r.actual_invocations.max(1) as f64,
            worst(|l| l.p50_ns),
            worst(|l| l.p99_ns),
            worst(|l| l.p999_ns),
        ));
        let _ = writeln!(out, "results: {}", path.display());
    }
    let md = Path::new(PERF_RESULTS).join(format!(
        "summary-{}-{}.md",
        product,
        chrono::Utc::now().format("%Y%m%d-%H%M%S")
    ));
    crate::report::write_whole_file(&md, summary.as_bytes()).map_err(anyhow::Error::from)?;
    let _ = write!(out, "{summary}");
    Ok(())
}

/// A connection per worker for the target: a socket, or the engine's in-process connection.
fn perf_connector(target: &Target) -> Result<Box<crate::perf::run::Connector>, String> {
    if let Some(engine) = target.engine() {
        return Ok(Box::new(move || {
            Ok(
                Box::new(crate::engine::EngineConnection::new(engine.clone()))
                    as Box<dyn redis::ConnectionLike + Send>,
            )
        }));
    }
    let Some(endpoint) = target.redis_endpoint() else {
        return Err(format!(
            "--target {}: perf needs a Redis-protocol target (embedded, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds or a redis:// URL)",
            target.name()
        ));
    };
    Ok(Box::new(move || {
        crate::target::connect(&endpoint, std::time::Duration::from_secs(5))
            .map(|c| Box::new(c) as Box<dyn redis::ConnectionLike + Send>)
            .map_err(|e| format!("{endpoint}: {e}"))
    }))
}

/// What `test_group` prints without `-run`: the configuration, as PadoGrid does.
fn describe_group_test(cfg: &crate::perf::GroupTestConfig, prop: &Path) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(o, "Group test configuration: {}", prop.display());
    let _ = writeln!(o, "   testCount: {}", cfg.test_count);
    let _ = writeln!(o, "   testIntervalInMsec: {}", cfg.test_interval_ms);
    let _ = writeln!(
        o,
        "   printStatusIntervalInSec: {}",
        cfg.print_status_interval_sec
    );
    for (n, stage) in cfg.schedule.stages.iter().enumerate() {
        let _ = writeln!(o, "   stage {}: {}", n + 1, stage.join(" & "));
        for g in stage {
            let group = &cfg.groups[g];
            let _ = writeln!(
                o,
                "      {g}: threadCount={} totalInvocationCount={} operations={}",
                group.thread_count, group.total_invocation_count, group.operations_raw
            );
            for op in &group.operations {
                let op = &cfg.operations[op];
                let _ = writeln!(
                    o,
                    "         {}: {} {} {:?} payloadSize={} batchSize={} totalEntryCount={}",
                    op.name,
                    op.data_structure.key(),
                    op.ds_name,
                    op.test_case,
                    op.payload_size,
                    op.batch_size,
                    op.total_entry_count
                );
            }
        }
    }
    o
}
