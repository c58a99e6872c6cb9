//! Running `test_group` against a Redis-protocol target: stages one after another, the groups
//! of a stage at the same time, each group's `threadCount` threads each running its share of
//! invocations, one invocation = every operation of the group once, in the listed order
//! (reference §2.4; docs/perf.md says where we follow PadoGrid's documentation over its
//! Redis code).
//!
//! Each thread has its own connection (`redis::ConnectionLike`: a socket, or the engine's
//! in-process connection) and its own HDR histogram per operation; histograms merge when the
//! group's threads join. PadoGrid's figures (M and E throughput and latency) come from its own
//! timing rules (§2.5): each thread's loop time summed over `testCount` runs, and the group's
//! wall time from before the threads start to after they join.
//!
//! This file is the runner (stages, groups, threads, the status line, and the invocation loop
//! and thread seeds the `-db` runner shares); `invoke` is what one invocation of an operation
//! sends, `structures` is `-list`/`-delete`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use redis::ConnectionLike;

use super::config::{DataStructure, GroupTestConfig, Operation};
use super::factory::Writer;
use super::results::{GroupRun, JavaTime, OpLatency};

mod invoke;
mod structures;

pub(crate) use invoke::{thread_seed, PutAllCursor};
use invoke::{FactoryPlan, OpState};
pub use structures::{delete_structures, list_structures, StructureInfo};

use crate::runner::stats::latency_histogram;
use crate::target::Connector;

/// Why a group test could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// A command failed (the server said no, or the connection broke).
    #[error("group {group}, operation {op}: {message}")]
    Command {
        /// The group id.
        group: String,
        /// The operation id.
        op: String,
        /// The server's error.
        message: String,
    },
    /// A `test_ingestion`/`test_tx` call failed.
    #[error("map {map} ({test_case}): {message}")]
    Map {
        /// `eligibility` or `profile`.
        map: String,
        /// The map's test case.
        test_case: String,
        /// The server's error.
        message: String,
    },
    /// The results file could not be written.
    #[error("{0}")]
    Write(#[from] std::io::Error),
}

/// What one thread measured in one run.
pub(crate) struct ThreadOutcome {
    /// The thread's loop time, ms (PadoGrid's per-thread time).
    pub(crate) loop_ms: u64,
    /// Invocations it completed.
    pub(crate) invocations: u64,
    /// One histogram per operation, in the group's order (ns).
    pub(crate) latencies: Vec<Histogram<u64>>,
}

/// Runs every stage of `cfg` and writes one results file per group into `results_dir`.
/// `product` goes into file names (`group-<g>-<product>-<stamp>.txt`). Status lines go to
/// `status` every `printStatusIntervalInSec`. Returns the runs, in schedule order.
pub fn run_group_test(
    cfg: &GroupTestConfig,
    connect: &Connector,
    product: &str,
    results_dir: &Path,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(GroupRun, PathBuf)>, RunError> {
    let status = std::sync::Mutex::new(status);
    run_stages(
        cfg,
        results_dir,
        stop,
        || RunError::Connect("a group thread panicked".into()),
        |g, stage| run_group(cfg, g, stage, connect, product, stop, &status),
    )
}

/// Runs the stages of `cfg` one after another, the groups of a stage at the same time (a
/// thread each, `run_group(group, stage)`), and writes each group's results file into
/// `results_dir` once its stage ends. Stops between stages when `stop` is set. The Redis and
/// the `-db` group tests share it; `panicked` is the error of a group thread that panicked.
pub fn run_stages<E: From<std::io::Error> + Send>(
    cfg: &GroupTestConfig,
    results_dir: &Path,
    stop: &AtomicBool,
    panicked: impl Fn() -> E,
    run_group: impl Fn(&str, &[String]) -> Result<GroupRun, E> + Sync,
) -> Result<Vec<(GroupRun, PathBuf)>, E> {
    std::fs::create_dir_all(results_dir)?;
    let mut out = Vec::new();
    for stage in &cfg.schedule.stages {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let run_group = &run_group;
        let runs: Vec<Result<GroupRun, E>> = std::thread::scope(|s| {
            let handles: Vec<_> = stage
                .iter()
                .map(|g| s.spawn(move || run_group(g, stage)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
                .collect()
        });
        // Groups of a stage that finished keep their results files even when another group
        // of the stage failed; then the first failure ends the test.
        let mut failed = None;
        for run in runs {
            match run {
                Ok(run) => {
                    let path = crate::perf::results::write_results_file(results_dir, &run)?;
                    out.push((run, path));
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(out)
}

fn run_group(
    cfg: &GroupTestConfig,
    group_id: &str,
    stage: &[String],
    connect: &Connector,
    product: &str,
    stop: &AtomicBool,
    status: &std::sync::Mutex<&mut (dyn Write + Send)>,
) -> Result<GroupRun, RunError> {
    let ops: Vec<&Operation> = cfg.groups[group_id]
        .operations
        .iter()
        .map(|name| &cfg.operations[name])
        .collect();
    let names: Vec<&str> = ops.iter().map(|op| op.name.as_str()).collect();
    // Factories (and their ER children) make the values of an operation that names one.
    let now_ms = chrono::Utc::now().timestamp_millis();
    let plans: Vec<Option<FactoryPlan<'_>>> = ops
        .iter()
        .map(|op| {
            Writer::new(cfg, &op.name, now_ms).map(|writer| FactoryPlan {
                writer,
                child: op
                    .factory
                    .as_ref()
                    .and_then(|f| f.er.as_ref())
                    .and_then(|er| cfg.operations.get(&er.operation)),
            })
        })
        .collect();
    let group = GroupContext {
        cfg,
        group_id,
        stage,
        product,
        db: false,
        stop,
    };
    run_group_threads(
        &group,
        &names,
        status,
        || RunError::Connect("a worker thread panicked".into()),
        |_| connect().map_err(RunError::Connect),
        |con, t, threads, per_thread, done| {
            run_thread(
                group_id,
                &ops,
                &plans,
                t,
                threads,
                per_thread,
                con.as_mut(),
                stop,
                done,
            )
        },
    )
}

/// What a group's run needs to know besides how one thread works.
pub(crate) struct GroupContext<'a> {
    pub(crate) cfg: &'a GroupTestConfig,
    pub(crate) group_id: &'a str,
    /// The ids of its stage (`g1 & g2`).
    pub(crate) stage: &'a [String],
    pub(crate) product: &'a str,
    /// `-db` mode (the results header says so).
    pub(crate) db: bool,
    pub(crate) stop: &'a AtomicBool,
}

/// One group, shared by the Redis and the `-db` runners: `testCount` runs (with
/// `testIntervalInMsec` between them), each starting `threadCount` threads that run
/// `thread(t, threads, per_thread, done)` (`t` from 1, `done` counting invocations for the
/// status line printed every `printStatusIntervalInSec`), then merges what the threads measured
/// into PadoGrid's figures and edgebench's percentiles per operation (`op_names`, in order).
pub(crate) fn run_group_threads<E: Send, C>(
    group: &GroupContext<'_>,
    op_names: &[&str],
    status: &std::sync::Mutex<&mut (dyn Write + Send)>,
    panicked: impl Fn() -> E + Sync,
    connect: impl Fn(u64) -> Result<C, E> + Sync,
    thread: impl Fn(&mut C, u64, u64, u64, &AtomicU64) -> Result<ThreadOutcome, E> + Sync,
) -> Result<GroupRun, E> {
    let GroupContext {
        cfg,
        group_id,
        stop,
        ..
    } = *group;
    let g = &cfg.groups[group_id];
    let threads = u64::from(g.thread_count.max(1));
    let per_thread = g.invocation_count_per_thread();
    let file_time = JavaTime::now_local();
    let done = AtomicU64::new(0);
    let mut thread_ms = vec![0u64; threads as usize];
    let mut actual = 0u64;
    let mut merged: Vec<Histogram<u64>> = op_names.iter().map(|_| latency_histogram()).collect();
    // PadoGrid's threads each run all testCount runs on the client made before the group's
    // Start Time, and `wait(testIntervalInMsec)` after every run, the last one too: Elapsed
    // Time (E figures) includes the waits and not the connecting; thread times neither.
    let ready = std::sync::Barrier::new(threads as usize + 1);
    // A thread that cannot connect fails the group; the others then do not start their runs.
    let connect_failed = AtomicBool::new(false);
    let interval = Duration::from_secs(cfg.print_status_interval_sec.max(1));
    let (start, started, outcomes) = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=threads)
            .map(|t| {
                let (connect, thread, ready, done) = (&connect, &thread, &ready, &done);
                let connect_failed = &connect_failed;
                s.spawn(move || -> Result<ThreadOutcome, E> {
                    let connected = connect(t);
                    if connected.is_err() {
                        connect_failed.store(true, Ordering::Relaxed);
                    }
                    ready.wait();
                    let mut c = connected?;
                    let mut total = ThreadOutcome {
                        loop_ms: 0,
                        invocations: 0,
                        latencies: Vec::new(),
                    };
                    if connect_failed.load(Ordering::Relaxed) {
                        return Ok(total);
                    }
                    for _ in 0..cfg.test_count {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let o = thread(&mut c, t, threads, per_thread, done)?;
                        total.loop_ms += o.loop_ms;
                        total.invocations += o.invocations;
                        if total.latencies.is_empty() {
                            total.latencies = o.latencies;
                        } else {
                            for (m, h) in total.latencies.iter_mut().zip(&o.latencies) {
                                let _ = m.add(h);
                            }
                        }
                        if cfg.test_interval_ms > 0 && !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(cfg.test_interval_ms));
                        }
                    }
                    Ok(total)
                })
            })
            .collect();
        ready.wait();
        let start = JavaTime::now_local();
        let started = Instant::now();
        // The status line, PadoGrid's: `[<n> sec] Invocation Count (<g>): <count>` every
        // printStatusIntervalInSec, the count over all runs so far; once more at the end.
        let line = |_: Duration| status_line(group_id, started.elapsed(), &done);
        let outcomes: Vec<Result<ThreadOutcome, E>> = with_status(interval, status, line, || {
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
                .collect()
        });
        (start, started, outcomes)
    });
    for (t, outcome) in outcomes.into_iter().enumerate() {
        let o = outcome?;
        thread_ms[t] += o.loop_ms;
        actual += o.invocations;
        for (m, h) in merged.iter_mut().zip(&o.latencies) {
            let _ = m.add(h);
        }
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;
    if let Ok(mut w) = status.lock() {
        let _ = w.write_all(status_line(group_id, started.elapsed(), &done).as_bytes());
    }
    let stop_time = JavaTime::now_local();
    let latencies = op_names
        .iter()
        .zip(&merged)
        .map(|(name, h)| op_latency(name, h))
        .collect();
    Ok(GroupRun {
        product: group.product.to_string(),
        group: group_id.to_string(),
        concurrent_groups: group.stage.to_vec(),
        comment: g.comment.clone(),
        operations: g.operations_raw.clone(),
        test_count: cfg.test_count,
        test_interval_ms: cfg.test_interval_ms,
        total_invocation_count_per_run: g.total_invocation_count,
        thread_count: g.thread_count,
        invocation_count_per_thread: per_thread,
        db: group.db,
        file_time,
        start,
        stop: stop_time,
        actual_invocations: actual,
        thread_ms,
        elapsed_ms,
        latencies,
    })
}

/// PadoGrid's group status line.
fn status_line(group_id: &str, elapsed: Duration, done: &AtomicU64) -> String {
    format!(
        "[{} sec] Invocation Count ({group_id}): {}\n",
        elapsed.as_secs(),
        done.load(Ordering::Relaxed)
    )
}

/// Runs `body` while a reporter thread writes `line(elapsed)` to `status` every `interval`.
/// The reporter wakes on a channel, not a polling sleep, so it stops the moment `body`
/// returns: a run's elapsed time never includes waiting for it.
pub(crate) fn with_status<R>(
    interval: Duration,
    status: &std::sync::Mutex<&mut (dyn Write + Send)>,
    line: impl Fn(Duration) -> String + Sync,
    body: impl FnOnce() -> R,
) -> R {
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    std::thread::scope(|s| {
        let line = &line;
        s.spawn(move || {
            let mut next = started + interval;
            loop {
                let wait = next.saturating_duration_since(Instant::now());
                match done_rx.recv_timeout(wait) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        next += interval;
                        let text = line(started.elapsed());
                        if let Ok(mut w) = status.lock() {
                            let _ = w.write_all(text.as_bytes());
                        }
                    }
                    _ => break,
                }
            }
        });
        let out = body();
        drop(done_tx);
        out
    })
}

/// One operation's percentiles from its merged histogram (ns).
pub(crate) fn op_latency(name: &str, h: &Histogram<u64>) -> OpLatency {
    OpLatency {
        op: name.to_string(),
        count: h.len(),
        p50_ns: h.value_at_quantile(0.5),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
    }
}

/// One thread's loop over its invocations `[(t-1)*cpt+1, t*cpt]` (§2.4).
#[allow(clippy::too_many_arguments)]
fn run_thread(
    group: &str,
    ops: &[&Operation],
    plans: &[Option<FactoryPlan<'_>>],
    t: u64,
    threads: u64,
    per_thread: u64,
    con: &mut dyn ConnectionLike,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> Result<ThreadOutcome, RunError> {
    let mut state: Vec<OpState> = ops.iter().map(|op| OpState::new(op, t, threads)).collect();
    invocation_loop(t, per_thread, ops.len(), stop, done, |i, k| {
        let op = ops[k];
        let invoked = match &plans[k] {
            Some(plan) if !matches!(op.data_structure, DataStructure::Sleep) => {
                state[k].invoke_factory(op, plan, i, con)
            }
            _ => state[k].invoke(op, i, con),
        };
        invoked.map_err(|message| RunError::Command {
            group: group.to_string(),
            op: op.name.clone(),
            message,
        })
    })
}

/// A thread's loop over its invocations `i` in `[(t-1)*cpt+1, t*cpt]` (§2.4): each runs
/// `invoke(i, k)` for every operation `k` in order, timed into operation `k`'s histogram, and
/// counts into `done` for the status line. The loop's wall time is the thread's PadoGrid time.
/// Shared by the Redis and the `-db` runners.
pub(crate) fn invocation_loop<E>(
    t: u64,
    per_thread: u64,
    ops: usize,
    stop: &AtomicBool,
    done: &AtomicU64,
    mut invoke: impl FnMut(u64, usize) -> Result<(), E>,
) -> Result<ThreadOutcome, E> {
    let mut latencies: Vec<Histogram<u64>> = (0..ops).map(|_| latency_histogram()).collect();
    let mut invocations = 0;
    let loop_start = Instant::now();
    for i in (t - 1) * per_thread + 1..=t * per_thread {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        for (k, latency) in latencies.iter_mut().enumerate() {
            let began = Instant::now();
            invoke(i, k)?;
            let _ = latency.record(began.elapsed().as_nanos().max(1) as u64);
        }
        invocations += 1;
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(ThreadOutcome {
        loop_ms: loop_start.elapsed().as_millis() as u64,
        invocations,
        latencies,
    })
}
