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
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = cfg.threads {
        builder.worker_threads(n);
    }
    let runtime = builder
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

/// Runs `edgebench kv`: starts the target, runs the load `-x` times (a live line on `status`
/// once a second), prints memtier's text on `out` (or into `-o FILE`), writes
/// `--json-out-file` and `--hdr-file-prefix` files, and `results/<timestamp>-kv/`
/// (memtier.txt, results.md, results.json).
pub fn kv(
    cfg: &crate::kv::KvConfig,
    interrupted: Arc<AtomicBool>,
    out: &mut dyn Write,
    status: &mut dyn Write,
) -> anyhow::Result<KvOutcome> {
    use crate::kv::export;
    use crate::kv::load::{self, LoadResult, LoadTarget};
    use crate::kv::report;

    for w in &cfg.warnings {
        let _ = writeln!(status, "edgebench: warning: {w}");
    }
    if let Some(e) = mini_redis_refusal(cfg) {
        anyhow::bail!(e);
    }
    if cfg.show_config {
        let _ = write!(status, "{}", cfg.show_config());
    }
    // The target: --target, or memtier's -u / -S / -s -p.
    let (server, name) = kv_target(cfg)?;
    let load_target = match &server {
        KvServer::Target(t) => match t.engine() {
            Some(engine) => LoadTarget::InProcess(engine),
            None => LoadTarget::Socket(t.redis_endpoint().ok_or_else(|| {
                anyhow::anyhow!(
                    "--target {name}: edgebench kv needs a Redis-protocol target (embedded, \
                     embedded-tcp, embedded-uds, redis-tcp, redis-uds, mini-redis or a \
                     redis:// URL)"
                )
            })?),
        },
        KvServer::MiniRedis(m) => LoadTarget::Socket(crate::target::Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: m.port,
        }),
        KvServer::Memtier => LoadTarget::Socket(memtier_endpoint(cfg)),
    };
    let where_ = match &load_target {
        LoadTarget::InProcess(_) => "in-process engine".to_string(),
        LoadTarget::Socket(e) => e.to_string(),
    };
    let _ = writeln!(status, "edgebench kv: {name} at {where_}");
    let tty = std::io::stderr().is_terminal();
    let mut runs: Vec<LoadResult> = Vec::new();
    // A later -x run that cannot start (the server went away) keeps the runs that finished.
    let mut not_started: Option<String> = None;
    for run_id in 1..=cfg.run_count {
        let live = Arc::new(load::Live::default());
        let mut line = LiveLine::new(cfg, run_id, tty);
        let result = match load::run(cfg, &load_target, interrupted.clone(), &live, &mut |el| {
            line.tick(status, &live, el)
        }) {
            Ok(result) => result,
            Err(e) if !runs.is_empty() => {
                line.finish(status);
                not_started = Some(format!("run {run_id} could not start: {e}"));
                break;
            }
            Err(e) => return Err(e.into()),
        };
        line.finish(status);
        if let Some(prefix) = &cfg.hdr_file_prefix {
            for (file, bytes) in export::hdr_files(prefix, run_id, &result) {
                let _ = writeln!(status, "edgebench kv: writing HDR latency histogram {file}");
                crate::report::write_whole_file(Path::new(&file), &bytes)?;
            }
        }
        let ended = result.stopped.is_some();
        runs.push(result);
        if ended {
            break;
        }
    }
    drop(server);

    // memtier's tables: ALL STATS, or with -x (every run with --print-all-runs) BEST, WORST
    // and AGGREGATED AVERAGE; each followed by its latency distribution.
    let average;
    let mut sections: Vec<(String, &LoadResult)> = Vec::new();
    if runs.len() > 1 {
        if cfg.print_all_runs {
            for (i, r) in runs.iter().enumerate() {
                sections.push((format!("RUN #{} RESULTS", i + 1), r));
            }
        }
        sections.push((
            "BEST RUN RESULTS".into(),
            &runs[report::best_or_worst(&runs, true)],
        ));
        sections.push((
            "WORST RUN RESULTS".into(),
            &runs[report::best_or_worst(&runs, false)],
        ));
        average = LoadResult::aggregate(&runs);
        sections.push((
            format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()),
            &average,
        ));
    } else {
        sections.push(("ALL STATS".into(), &runs[0]));
    }
    let mut text = report::header(cfg);
    for (title, r) in &sections {
        text.push_str("\n\n");
        text.push_str(&report::all_stats(cfg, r, title));
        if !cfg.hide_histogram {
            text.push_str("\n\n");
            text.push_str(&report::distribution(r));
        }
    }
    let mut md = String::new();
    if runs.len() > 1 {
        for (i, r) in runs.iter().enumerate() {
            md.push_str(&format!("## Run {}\n\n", i + 1));
            md.push_str(&report::markdown(cfg, r));
            md.push('\n');
        }
        md.push_str(&report::runs_markdown(cfg, &runs));
    } else {
        md.push_str(&report::markdown(cfg, &runs[0]));
    }
    let json = export::document(cfg, &sections).to_pretty();
    let last = runs.last().expect("at least one run");
    let dir = fresh_run_dir(Path::new("results"), "kv");
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create results directory {}", dir.display()))?;
    crate::report::write_whole_file(&dir.join("memtier.txt"), text.as_bytes())?;
    crate::report::write_whole_file(&dir.join("results.md"), md.as_bytes())?;
    crate::report::write_whole_file(&dir.join("results.json"), json.as_bytes())?;
    if let Some(path) = &cfg.json_out_file {
        crate::report::write_whole_file(path, json.as_bytes())?;
    }
    match &cfg.out_file {
        Some(path) => crate::report::write_whole_file(path, text.as_bytes())?,
        None => out.write_all(text.as_bytes())?,
    }
    if last.rate.is_some() || !cfg.warmup.is_zero() {
        let _ = write!(status, "edgebench kv: {}", report::loop_note(cfg, last));
    }
    // In-process, the client thread also runs the engine: being busy is the point there.
    if matches!(load_target, LoadTarget::Socket(_)) {
        for r in &runs {
            for line in report::saturation(r) {
                let _ = writeln!(status, "edgebench: warning: {line}");
            }
        }
    }
    // memtier counts error replies as operations and says nothing; edgebench says so.
    for (i, r) in runs.iter().enumerate() {
        for (name, row) in &r.rows {
            if row.errors > 0 {
                let _ = writeln!(
                    status,
                    "edgebench: warning: run {}: {} of the {name} replies were errors (counted \
                     in Ops/sec, as memtier counts them; see results.md's Errors column)",
                    i + 1,
                    row.errors
                );
            }
        }
    }
    let stopped = runs.iter().find_map(|r| r.stopped.clone()).or(not_started);
    if let Some(why) = &stopped {
        let _ = writeln!(
            status,
            "edgebench: the run ended early: {why}; the figures cover what finished"
        );
    }
    Ok(KvOutcome { dir, stopped })
}

/// memtier's live line, once a second on stderr: rewritten in place (`\r`) on a terminal,
/// one line per second otherwise.
struct LiveLine {
    run: u32,
    tty: bool,
    threads: u32,
    /// `-n` runs: all requests of the run, for the progress percentage.
    total_requests: Option<u64>,
    test_time: Option<f64>,
    last: (u64, u64, u64, std::time::Duration),
    shown: bool,
}

impl LiveLine {
    fn new(cfg: &crate::kv::KvConfig, run: u32, tty: bool) -> LiveLine {
        let conns = u64::from(cfg.threads) * u64::from(cfg.clients);
        LiveLine {
            run,
            tty,
            threads: cfg.threads,
            total_requests: cfg
                .test_time
                .is_none()
                .then(|| (0..conns).filter_map(|i| cfg.requests_for(i)).sum()),
            test_time: cfg.test_time.map(|t| t.as_secs_f64()),
            last: (0, 0, 0, std::time::Duration::ZERO),
            shown: false,
        }
    }

    fn tick(
        &mut self,
        status: &mut dyn Write,
        live: &crate::kv::load::Live,
        elapsed: std::time::Duration,
    ) {
        let ops = live.ops.load(Ordering::Relaxed);
        let bytes = live.bytes.load(Ordering::Relaxed);
        let lat = live.latency_ns.load(Ordering::Relaxed);
        let (ops0, bytes0, lat0, t0) = self.last;
        let secs = elapsed.as_secs_f64().max(1e-9);
        let dt = (elapsed - t0).as_secs_f64().max(1e-9);
        let per_op_ms = |lat: u64, ops: u64| {
            if ops > 0 {
                lat as f64 / ops as f64 / 1e6
            } else {
                0.0
            }
        };
        let progress = match (self.total_requests, self.test_time) {
            (Some(n), _) if n > 0 => 100.0 * ops as f64 / n as f64,
            (_, Some(t)) if t > 0.0 => 100.0 * secs / t,
            _ => 0.0,
        };
        let text = crate::kv::report::live_line(
            self.run,
            progress.min(100.0),
            elapsed.as_secs(),
            self.threads,
            ops,
            (ops - ops0) as f64 / dt,
            ops as f64 / secs,
            (bytes - bytes0) as f64 / dt,
            bytes as f64 / secs,
            per_op_ms(lat - lat0, ops - ops0),
            per_op_ms(lat, ops),
        );
        if self.tty {
            let _ = write!(status, "\r\x1b[2K{text}");
        } else {
            let _ = writeln!(status, "{text}");
        }
        let _ = status.flush();
        self.shown = true;
        self.last = (ops, bytes, lat, elapsed);
    }

    fn finish(&mut self, status: &mut dyn Write) {
        if self.tty && self.shown {
            let _ = writeln!(status);
        }
    }
}

/// What `edgebench kv` runs against: a started `--target`, the in-process `mini-redis`
/// server, or memtier's `-s/-p/-S` server.
enum KvServer {
    Target(Target),
    MiniRedis(MiniRedis),
    Memtier,
}

/// The `--target` started (and its name), or [`KvServer::Memtier`] when memtier's flags say
/// where. `mini-redis` is handled here: it is a load-generator target, not a store, so the
/// target module does not know it.
fn kv_target(cfg: &crate::kv::KvConfig) -> anyhow::Result<(KvServer, String)> {
    let Some(item) = &cfg.target else {
        return Ok((KvServer::Memtier, "server".to_string()));
    };
    if item == "mini-redis" {
        return Ok((KvServer::MiniRedis(MiniRedis::start()?), item.clone()));
    }
    let specs = crate::target::parse_targets(std::slice::from_ref(item))
        .map_err(|e| anyhow::anyhow!("--target: {e}"))?;
    let [spec] = specs.as_slice() else {
        anyhow::bail!("--target {item:?}: edgebench kv runs against one target at a time");
    };
    let target = Target::start(spec)?;
    Ok((KvServer::Target(target), spec.name.clone()))
}

/// The commands the `mini-redis` crate's server answers (`mini_redis::cmd::Command`).
const MINI_REDIS_COMMANDS: [&str; 3] = ["GET", "SET", "PUBLISH"];

/// mini-redis's own connection limit (`MAX_CONNECTIONS` in its `server.rs`): more would wait
/// forever for a permit.
const MINI_REDIS_MAX_CONNECTIONS: u64 = 250;

/// Why a run cannot go to `--target mini-redis`, in one line: the first command it would send
/// that mini-redis does not know, or too many connections. `None` for other targets.
pub fn mini_redis_refusal(cfg: &crate::kv::KvConfig) -> Option<String> {
    if cfg.target.as_deref() != Some("mini-redis") {
        return None;
    }
    let why = |command: &str, from: &str| {
        Some(format!(
            "--target mini-redis cannot run {command} (sent because of {from}): the mini-redis \
             server knows only GET, SET, PUBLISH and SUBSCRIBE; drop {from} or use another target"
        ))
    };
    if cfg.protocol == crate::kv::Protocol::Resp3 {
        return why("HELLO", "-P resp3");
    }
    if cfg.protocol == crate::kv::Protocol::Resp2 {
        return why("HELLO", "-P resp2");
    }
    if cfg.authenticate.is_some() {
        return why("AUTH", "-a/--authenticate");
    }
    if cfg.select_db != 0 {
        return why("SELECT", "--select-db");
    }
    if cfg.commands.is_empty() {
        if cfg.expiry.is_some() {
            return why("SETEX", "--expiry-range");
        }
        if cfg.multi_key_get > 0 && cfg.ratio.gets > 0 {
            return why("MGET", "--multi-key-get");
        }
    }
    for c in cfg.commands.iter() {
        let name = c.name.to_ascii_uppercase();
        if name == "SUBSCRIBE" {
            return Some(
                "--target mini-redis cannot run --command SUBSCRIBE: it turns the connection \
                 into a stream of pushes, which has no replies to time"
                    .to_string(),
            );
        }
        if !MINI_REDIS_COMMANDS.contains(&name.as_str()) {
            return why(&name, &format!("--command \"{}\"", c.text));
        }
    }
    let conns = u64::from(cfg.threads) * u64::from(cfg.clients);
    if conns > MINI_REDIS_MAX_CONNECTIONS {
        return Some(format!(
            "--target mini-redis accepts at most {MINI_REDIS_MAX_CONNECTIONS} connections; this \
             run opens {conns} (-t {} × -c {}): use fewer",
            cfg.threads, cfg.clients
        ));
    }
    None
}

/// The `mini-redis` crate's server on a free 127.0.0.1 port, on its own thread and
/// single-threaded runtime; stopped (shutdown signal, thread joined) when dropped.
struct MiniRedis {
    port: u16,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MiniRedis {
    fn start() -> anyhow::Result<MiniRedis> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .context("mini-redis: cannot bind a port on 127.0.0.1")?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("mini-redis: cannot start its runtime")?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mini-redis".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                        let _ = mini_redis::server::run(listener, rx).await;
                    }
                });
            })
            .context("mini-redis: cannot start its thread")?;
        Ok(MiniRedis {
            port,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }
}

impl Drop for MiniRedis {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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
    use crate::perf::csv::{clean_results, create_csv, create_csv_all};
    let usage = |m: String| PerfError::Usage(m);
    let mut run = false;
    let mut list = false;
    let mut delete = false;
    let mut all = false;
    let mut prop: Option<PathBuf> = None;
    let mut target: Option<String> = None;
    // `-db`, `--db URL` or `--db-prop FILE`: write to a database (perf::db) instead.
    let mut db: Option<crate::perf::db::DbFlags> = None;
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
            "-all" => all = true,
            "-prop" => prop = Some(PathBuf::from(value("-prop")?)),
            "--target" | "-target" => target = Some(value("--target")?),
            "-?" | "-h" | "--help" => {
                let _ = writeln!(
                    out,
                    "Usage: edgebench perf {tool} [-run] [-list] [-delete] [-prop FILE] [--target T | -db [--db URL] [--db-prop FILE]]"
                );
                return Ok(());
            }
            "-db" => {
                db.get_or_insert_with(crate::perf::db::DbFlags::default);
            }
            "--db" | "--db-prop" => {
                let v = value(flag)?;
                let d = db.get_or_insert_with(crate::perf::db::DbFlags::default);
                if flag == "--db" {
                    d.url = Some(v);
                } else {
                    d.prop = Some(PathBuf::from(v));
                }
            }
            other => {
                return Err(usage(format!(
                    "unknown flag {other:?} for perf {tool}: use -run, -list, -delete, -prop FILE, \
                     -all, --target T, -db, --db URL or --db-prop FILE"
                )))
            }
        }
        i += 1;
    }
    // Each target is a PadoGrid "app" with its own results directory (perf::apps).
    let root = Path::new(PERF_RESULTS);
    let chosen = perf_target(target.as_deref())?;
    let app = crate::perf::apps::app_for(root, &chosen.spec.name);
    let csv_error = |e: crate::perf::csv::CsvError| usage(e.to_string());
    match tool {
        "test_group" => {}
        "create_csv" if all => {
            let apps = crate::perf::apps::list_apps(root)
                .map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?;
            let home = crate::perf::apps::all_apps_home(root);
            let files = create_csv_all(&home, &apps).map_err(csv_error)?;
            for f in files {
                let _ = writeln!(out, "   + {}", f.display());
            }
            if let Some((path, md)) =
                crate::perf::apps::write_group_comparison(root, &apps).map_err(csv_error)?
            {
                let _ = writeln!(out, "   + {}\n\n{md}", path.display());
            }
            return Ok(());
        }
        "create_csv" => {
            let files = create_csv(&app).map_err(csv_error)?;
            for f in files {
                let _ = writeln!(out, "   + {}", f.display());
            }
            return Ok(());
        }
        "clean_results" => {
            let mut dirs = vec![app.results_dir.clone()];
            if all {
                dirs = crate::perf::apps::list_apps(root)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?
                    .into_iter()
                    .map(|a| a.results_dir)
                    .collect();
                // The -all CSVs and the comparison live at the root.
                dirs.push(root.to_path_buf());
            }
            for dir in dirs {
                let _ = writeln!(out, "Cleaning {}...", dir.display());
                clean_results(&dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            let _ = writeln!(out, "clean_results complete.");
            return Ok(());
        }
        "create_group_config" => {
            let path = crate::perf::group_config::create_group_config(Path::new("etc"))
                .map_err(|e| usage(e.to_string()))?;
            let _ = writeln!(out, "{}", path.display());
            return Ok(());
        }
        "test_ingestion" | "test_tx" => {
            if list || delete {
                return Err(usage(format!(
                    "-list and -delete are test_group flags; {tool} takes [-run] [-prop FILE] [--target T]"
                )));
            }
            return perf_pbm(tool, run, prop, &chosen, stop, out);
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
    if let Some(mut flags) = db {
        if let Some(t) = &target {
            return Err(usage(format!(
                "--target {t} and -db: -db writes to the database of --db/etc/db.properties, \
                 --target to a Redis target; drop one"
            )));
        }
        (flags.run, flags.list, flags.delete) = (run, list, delete);
        if !run && !list && !delete {
            let _ = write!(out, "{}", describe_group_test(&cfg, &prop));
        }
        let (runs, product) = crate::perf::db::test_group_db(&cfg, &flags, root, stop, out)
            .map_err(|e| match e {
                crate::perf::db::DbError::Input(m) => usage(m),
                other => PerfError::Failed(other.into()),
            })?;
        if !runs.is_empty() {
            let dir = crate::perf::apps::app_for(root, &product).results_dir;
            write_group_summary(&runs, &product, &dir, out)?;
        }
        return Ok(());
    }
    if !run && !list && !delete {
        let _ = write!(out, "{}", describe_group_test(&cfg, &prop));
        let _ = writeln!(out, "target: {} ({})", chosen.item, chosen.why);
        let _ = writeln!(out, "To run the test, specify the '-run' option.");
        return Ok(());
    }
    let (_target, connector) = perf_start_target(&chosen, out)?;
    if list || delete {
        let mut con = connector().map_err(|e| anyhow::anyhow!("{e}"))?;
        // PadoGrid: `-delete` without `-run` only lists; it deletes before a run.
        let (list, delete) = if delete && !run {
            let _ = writeln!(
                out,
                "-delete removes data only together with -run (as PadoGrid); listing instead"
            );
            (true, false)
        } else {
            (list, delete)
        };
        // PadoGrid's layout: `  - name:` / `    data:` / `    size:` (/ `    deleted:`).
        if list && !delete {
            let listed = crate::perf::run::list_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for info in listed {
                let _ = write!(out, "{}", info.render(None));
            }
        }
        if delete {
            let gone = crate::perf::run::delete_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for (info, existed) in gone {
                let _ = write!(out, "{}", info.render(Some(existed)));
            }
        }
        if !run {
            return Ok(());
        }
    }
    let product = chosen.spec.name.to_ascii_lowercase();
    let runs =
        crate::perf::run::run_group_test(&cfg, &*connector, &product, &app.results_dir, stop, out)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    write_group_summary(&runs, &product, &app.results_dir, out)
}

/// The markdown summary of a run's groups (PadoGrid's M figures beside edgebench's
/// percentiles), printed and written to `<dir>/summary-<product>-<stamp>.md`.
fn write_group_summary(
    runs: &[(crate::perf::results::GroupRun, PathBuf)],
    product: &str,
    dir: &Path,
    out: &mut (dyn Write + Send),
) -> Result<(), PerfError> {
    use crate::perf::summary::{self, Columns, SummaryRow};
    let rows: Vec<SummaryRow> = runs
        .iter()
        .map(|(r, _)| SummaryRow {
            name: r.group.clone(),
            threads: r.thread_count,
            count: r.actual_invocations,
            max_ms: r.max_ms(),
            latencies: r.latencies.clone(),
        })
        .collect();
    for (_, path) in runs {
        let _ = writeln!(out, "results: {}", path.display());
    }
    let cols = Columns {
        name: "Group",
        count: "Invocations",
        unit: "inv",
    };
    let md = summary::markdown(cols, &rows);
    summary::write(dir, "summary", product, &md).map_err(anyhow::Error::from)?;
    let _ = write!(out, "{md}");
    Ok(())
}

/// The target a perf tool runs against, parsed once: the `--target` item, why it was chosen
/// (printed beside it) and its spec.
struct PerfTarget {
    item: String,
    why: &'static str,
    spec: crate::target::TargetSpec,
}

/// `--target`, else `redis-tcp` when `redis-server` is on PATH, else the in-process engine.
fn perf_target(target: Option<&str>) -> Result<PerfTarget, PerfError> {
    let (item, why) = match target {
        Some(t) => (t.to_string(), "from --target"),
        None if crate::target::redis_server_on_path() => (
            "redis-tcp".to_string(),
            "the default: redis-server is on PATH",
        ),
        None => (
            "embedded".to_string(),
            "the default: no redis-server on PATH, so the in-process engine",
        ),
    };
    let specs = crate::target::parse_targets(std::slice::from_ref(&item))
        .map_err(|e| PerfError::Usage(format!("--target: {e}")))?;
    let [spec] = <[_; 1]>::try_from(specs).map_err(|_| {
        PerfError::Usage(format!(
            "--target {item:?}: perf runs against one target at a time"
        ))
    })?;
    Ok(PerfTarget { item, why, spec })
}

/// Starts the chosen target, prints it, and returns the running target (keep it alive while
/// connecting) and a connector.
fn perf_start_target(
    chosen: &PerfTarget,
    out: &mut (dyn Write + Send),
) -> Result<(Target, Box<crate::perf::run::Connector>), PerfError> {
    let target = Target::start(&chosen.spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    let connector = perf_connector(&target).map_err(PerfError::Usage)?;
    let _ = writeln!(
        out,
        "target: {} at {} ({})",
        chosen.spec.name,
        target.endpoint(),
        chosen.why
    );
    Ok((target, connector))
}

/// `test_ingestion` / `test_tx`: print the configuration as PadoGrid does, or run it.
fn perf_pbm(
    tool: &str,
    run: bool,
    prop: Option<PathBuf>,
    chosen: &PerfTarget,
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(), PerfError> {
    use crate::perf::summary::Columns;
    use crate::perf::{PbmTest, PbmTestConfig};
    let ingestion = tool == "test_ingestion";
    let prop = prop.unwrap_or_else(|| {
        PathBuf::from(if ingestion {
            "etc/ingestion.properties"
        } else {
            "etc/tx.properties"
        })
    });
    let cfg = if ingestion {
        PbmTestConfig::load_ingestion(&prop)
    } else {
        PbmTestConfig::load_tx(&prop)
    }
    .map_err(|e| PerfError::Usage(e.to_string()))?;
    for w in &cfg.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let spec = &chosen.spec;
    let product = spec.name.to_ascii_lowercase();
    let _ = write!(
        out,
        "{}",
        crate::perf::pbm::describe(&cfg, &prop, &product, !run)
    );
    if !run {
        let _ = writeln!(out, "target: {} ({})", chosen.item, chosen.why);
        let _ = writeln!(out, "To run the test, specify the option, '-run'.");
        return Ok(());
    }
    let (_target, connector) = perf_start_target(chosen, out)?;
    let fresh = !matches!(spec.kind, crate::target::TargetKind::Redis(_));
    if cfg.test == PbmTest::Tx && fresh {
        // A target this command started is empty and ends with it: load what PadoGrid's
        // users load first with test_ingestion, from the ingestion file beside -prop.
        let beside = prop
            .parent()
            .unwrap_or(Path::new("."))
            .join("ingestion.properties");
        if beside.is_file() {
            let load = PbmTestConfig::load_ingestion(&beside)
                .map_err(|e| PerfError::Usage(e.to_string()))?;
            let _ = writeln!(
                out,
                "{} starts empty: loading {} first (not timed)",
                spec.name,
                beside.display()
            );
            crate::perf::ingest::preload(&load, &*connector, stop, out)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Interrupted while loading: no transaction ran, so no results file is written
                // (an empty one would put zeros into create_csv's spreadsheets).
                let _ = writeln!(out, "interrupted while loading: no transactions ran");
                return Ok(());
            }
        } else {
            let _ = writeln!(
                out,
                "note: {} starts empty and there is no {} to load first: every tx is on missing data",
                spec.name,
                beside.display()
            );
        }
    }
    // The target is this run's PadoGrid app (perf::apps).
    let app = crate::perf::apps::app_for(Path::new(PERF_RESULTS), &spec.name);
    let dir = app.results_dir.as_path();
    let _ = writeln!(
        out,
        "Please wait until done. This may take some time. Status printed in every {} sec.",
        cfg.print_status_interval_sec
    );
    let failed = |e: crate::perf::run::RunError| PerfError::Failed(anyhow::anyhow!("{e}"));
    let (outcomes, paths, cols, stem, notes, done) = if cfg.test == PbmTest::Ingestion {
        let runs = crate::perf::ingest::run_ingestion(&cfg, &*connector, &product, dir, stop, out)
            .map_err(failed)?;
        let (o, p): (Vec<_>, Vec<_>) = runs.into_iter().map(|(_, o, p)| (o, p)).unzip();
        let cols = Columns {
            name: "Map",
            count: "Entries",
            unit: "entries",
        };
        (
            o,
            p,
            cols,
            "summary-ingestion",
            String::new(),
            "Data ingestion complete",
        )
    } else {
        let runs =
            crate::perf::tx::run_tx(&cfg, &*connector, &product, dir, stop, out).map_err(failed)?;
        let (o, p): (Vec<_>, Vec<_>) = runs.into_iter().map(|(_, o, p)| (o, p)).unzip();
        let cols = Columns {
            name: "Map",
            count: "Transactions",
            unit: "tx",
        };
        let notes: String = o
            .iter()
            .map(|o| {
                format!(
                    "\n{} {}: {} on missing data, {} transactions retried after a concurrent change (WATCH)\n",
                    o.map.map, o.map.test_case, o.missing, o.retries
                )
            })
            .collect();
        (o, p, cols, "summary-tx", notes, "Transaction complete")
    };
    let _ = writeln!(out, "Results:");
    for p in &paths {
        let _ = writeln!(out, "   {}", p.display());
    }
    let refs: Vec<&crate::perf::pbm::MapOutcome> = outcomes.iter().collect();
    let (md, _) = crate::perf::pbm::write_summary(&refs, cols, stem, &product, dir, &notes)
        .map_err(anyhow::Error::from)?;
    let _ = write!(out, "{md}");
    let _ = writeln!(out, "\n{done}");
    Ok(())
}

/// A connection per worker for the target: a socket, or the engine's in-process connection.
pub fn perf_connector(target: &Target) -> Result<Box<crate::perf::run::Connector>, String> {
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
