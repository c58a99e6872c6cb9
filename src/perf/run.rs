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

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use redis::{ConnectionLike, Value};

use super::config::{DataStructure, GroupTestConfig, Operation, TestCase};
use super::data::zero_blob;
use super::factory::{Entity, Writer};
use super::random::JavaRandom;
use super::results::{GroupRun, JavaTime, OpLatency};

/// Opens one connection per worker thread.
pub type Connector = dyn Fn() -> Result<Box<dyn ConnectionLike + Send>, String> + Sync;

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
                    let path = crate::perf::results::write_results_file(
                        results_dir,
                        &run.file_name(),
                        &run.render(),
                    )?;
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
    let mut merged: Vec<Histogram<u64>> = op_names.iter().map(|_| histogram()).collect();
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

pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is valid")
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
    let mut latencies: Vec<Histogram<u64>> = (0..ops).map(|_| histogram()).collect();
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

/// The seed of thread `t`'s `java.util.Random` for an operation. PadoGrid's threads share one
/// `Random` per operation, so together they draw one sequence, interleaved; a generator per
/// thread seeded alike would make every thread read the same keys in lockstep. Thread 1 keeps
/// `randomSeed`, thread `t` uses `randomSeed + t - 1`: reproducible, and different per thread.
pub(crate) fn thread_seed(seed: i64, t: u64) -> i64 {
    seed.wrapping_add(t.saturating_sub(1) as i64)
}

/// An operation with a factory: its writer, and the operation its ER children go to.
struct FactoryPlan<'a> {
    writer: Writer,
    child: Option<&'a Operation>,
}

/// The Redis value of a factory entity: a JSON object of its fields (Redisson would store
/// the object with its codec; JSON keeps it readable and comparable across targets).
fn entity_json(entity: &Entity) -> String {
    let fields: serde_json::Map<String, serde_json::Value> = entity
        .fields()
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
        .collect();
    serde_json::Value::Object(fields).to_string()
}

/// The command that writes `value` under `key` into `op`'s data structure (docs/perf.md's
/// table): one place for both the Blob and the factory writes. `None` for `sleep`.
fn write_cmd(op: &Operation, key: &str, value: &[u8]) -> Option<redis::Cmd> {
    let name = op.ds_name.as_str();
    let mut cmd;
    match op.data_structure {
        DataStructure::Map => {
            cmd = redis::cmd("HSET");
            cmd.arg(name).arg(key).arg(value);
        }
        DataStructure::MCache => {
            cmd = redis::cmd("SET");
            cmd.arg(format!("{name}:{key}")).arg(value);
            if op.ttl_sec > 0 {
                cmd.arg("EX").arg(op.ttl_sec);
            }
        }
        DataStructure::List | DataStructure::Queue => {
            cmd = redis::cmd("RPUSH");
            cmd.arg(name).arg(value);
        }
        DataStructure::Topic => {
            cmd = redis::cmd("PUBLISH");
            cmd.arg(name).arg(value);
        }
        DataStructure::STopic => {
            cmd = redis::cmd("SPUBLISH");
            cmd.arg(name).arg(value);
        }
        DataStructure::RTopic => {
            cmd = redis::cmd("XADD");
            cmd.arg(name).arg("*").arg("m").arg(value);
        }
        DataStructure::Sleep => return None,
    }
    Some(cmd)
}

/// putall's per-thread key cursor (§2.4): `batchSize` ids `startNum + keyIndex++`, wrapping
/// to the thread's first index at the end of its share of `totalEntryCount`. The Redis and
/// the `-db` runners (and `-db`'s list of written keys) share it.
pub(crate) struct PutAllCursor {
    index: u64,
    low: u64,
    high: u64,
}

impl PutAllCursor {
    pub(crate) fn new(op: &Operation, t: u64, threads: u64) -> Self {
        let share = op.total_entry_count / threads.max(1);
        PutAllCursor {
            index: (t - 1) * share,
            low: (t - 1) * share,
            high: t * share,
        }
    }

    /// The next entity id, `startNum + keyIndex`.
    pub(crate) fn next_id(&mut self, op: &Operation) -> i64 {
        if self.index >= self.high {
            self.index = self.low;
        }
        let n = self.index;
        self.index += 1;
        op.key_start_num + n as i64
    }
}

/// Per thread and operation: its random generator, payload and putall key cursor.
struct OpState {
    random: JavaRandom,
    payload: Vec<u8>,
    putall: PutAllCursor,
}

impl OpState {
    fn new(op: &Operation, t: u64, threads: u64) -> OpState {
        OpState {
            random: JavaRandom::new(thread_seed(op.random_seed, t)),
            payload: zero_blob(op.payload_size),
            putall: PutAllCursor::new(op, t, threads),
        }
    }

    fn random_key(&mut self, op: &Operation) -> String {
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        let v = i64::from(self.random.next_int_bound(bound));
        op.key(op.key_start_num + v)
    }

    fn next_putall_key(&mut self, op: &Operation) -> String {
        op.key(self.putall.next_id(op))
    }

    /// One invocation of an operation with a factory. Reads look up factory keys
    /// (`getKey(startNum + random)`; `getall` without `startNum`, as PadoGrid's `getall`);
    /// writes store each entity as JSON, its ER children in the child operation's structure,
    /// in one round trip. Cases without keys (poll, peek, take, remove) are the plain ones.
    fn invoke_factory(
        &mut self,
        op: &Operation,
        plan: &FactoryPlan<'_>,
        i: u64,
        con: &mut dyn ConnectionLike,
    ) -> Result<(), String> {
        let name = op.ds_name.as_str();
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        let mut cmd;
        match (op.data_structure, op.test_case) {
            (DataStructure::Map | DataStructure::MCache, TestCase::Get) => {
                let v = i64::from(self.random.next_int_bound(bound));
                let key = plan.writer.key(op.key_start_num + v);
                if op.data_structure == DataStructure::Map {
                    cmd = redis::cmd("HGET");
                    cmd.arg(name).arg(key);
                } else {
                    cmd = redis::cmd("GET");
                    cmd.arg(format!("{name}:{key}"));
                }
            }
            (DataStructure::Map | DataStructure::MCache, TestCase::GetAll) => {
                let keys: Vec<String> = (0..op.batch_size)
                    .map(|_| {
                        plan.writer
                            .key(i64::from(self.random.next_int_bound(bound)))
                    })
                    .collect();
                if op.data_structure == DataStructure::Map {
                    cmd = redis::cmd("HMGET");
                    cmd.arg(name).arg(keys);
                } else {
                    cmd = redis::cmd("MGET");
                    cmd.arg(
                        keys.iter()
                            .map(|k| format!("{name}:{k}"))
                            .collect::<Vec<_>>(),
                    );
                }
            }
            (_, TestCase::Poll | TestCase::Peek | TestCase::Take | TestCase::Remove) => {
                return self.invoke(op, i, con)
            }
            (_, tc) => {
                let batch = matches!(
                    tc,
                    TestCase::PutAll | TestCase::AddAll | TestCase::PublishAll
                );
                let ids: Vec<i64> = if batch {
                    (0..op.batch_size.max(1))
                        .map(|_| self.putall.next_id(op))
                        .collect()
                } else {
                    vec![op.key_start_num + i as i64 - 1]
                };
                let mut pipe = redis::pipe();
                for id in ids {
                    for (n, (_, entry)) in plan.writer.rows(id).into_iter().enumerate() {
                        let target = if n == 0 { Some(op) } else { plan.child };
                        let value = entity_json(&entry.value);
                        if let Some(c) =
                            target.and_then(|o| write_cmd(o, &entry.key, value.as_bytes()))
                        {
                            pipe.add_command(c);
                        }
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
        }
        cmd.query::<Value>(con).map(drop).map_err(|e| e.to_string())
    }

    /// Writes the thread's Blob under `key` into `op`'s data structure.
    fn write(&self, op: &Operation, key: &str, con: &mut dyn ConnectionLike) -> Result<(), String> {
        match write_cmd(op, key, &self.payload) {
            Some(cmd) => cmd.query::<Value>(con).map(drop).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// One invocation of `op` for invocation number `i` (1-based).
    fn invoke(
        &mut self,
        op: &Operation,
        i: u64,
        con: &mut dyn ConnectionLike,
    ) -> Result<(), String> {
        let name = op.ds_name.as_str();
        let key = || op.key(op.key_start_num + i as i64 - 1);
        let mut cmd;
        match (op.data_structure, op.test_case) {
            (DataStructure::Sleep, _) => {
                std::thread::sleep(Duration::from_millis(op.sleep_ms));
                return Ok(());
            }
            (DataStructure::Map, TestCase::Get) => {
                cmd = redis::cmd("HGET");
                cmd.arg(name).arg(self.random_key(op));
            }
            (DataStructure::Map, TestCase::GetAll) => {
                cmd = redis::cmd("HMGET");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(self.random_key(op));
                }
            }
            (DataStructure::Map, TestCase::PutAll) => {
                cmd = redis::cmd("HSET");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(self.next_putall_key(op)).arg(&self.payload[..]);
                }
            }
            (DataStructure::Map, _) => return self.write(op, &key(), con),
            (DataStructure::MCache, TestCase::Get) => {
                cmd = redis::cmd("GET");
                cmd.arg(format!("{name}:{}", self.random_key(op)));
            }
            (DataStructure::MCache, TestCase::GetAll) => {
                cmd = redis::cmd("MGET");
                for _ in 0..op.batch_size {
                    cmd.arg(format!("{name}:{}", self.random_key(op)));
                }
            }
            (DataStructure::MCache, TestCase::PutAll) => {
                let mut pipe = redis::pipe();
                for _ in 0..op.batch_size {
                    let k = self.next_putall_key(op);
                    if let Some(c) = write_cmd(op, &k, &self.payload) {
                        pipe.add_command(c);
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
            (DataStructure::MCache, _) => return self.write(op, &key(), con),
            (DataStructure::List, TestCase::AddAll) => {
                cmd = redis::cmd("RPUSH");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(&self.payload[..]);
                }
            }
            (DataStructure::List, TestCase::Remove) => {
                cmd = redis::cmd("LREM");
                cmd.arg(name).arg(1).arg(&self.payload[..]);
            }
            (DataStructure::List, _) => return self.write(op, "", con),
            (DataStructure::Queue, TestCase::Poll) => {
                cmd = redis::cmd("LPOP");
                cmd.arg(name);
            }
            (DataStructure::Queue, TestCase::Peek) => {
                cmd = redis::cmd("LINDEX");
                cmd.arg(name).arg(0);
            }
            (DataStructure::Queue, TestCase::Take) => {
                // BLPOP with a timeout, so an empty queue cannot hang the run forever.
                cmd = redis::cmd("BLPOP");
                cmd.arg(name).arg(1);
            }
            (DataStructure::Queue, _) => return self.write(op, "", con),
            (DataStructure::Topic | DataStructure::STopic | DataStructure::RTopic, tc) => {
                let n = if tc == TestCase::PublishAll {
                    op.batch_size.max(1)
                } else {
                    1
                };
                let mut pipe = redis::pipe();
                for _ in 0..n {
                    if let Some(c) = write_cmd(op, "", &self.payload) {
                        pipe.add_command(c);
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
        }
        match cmd.query::<Value>(con) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// One data structure as `-list`/`-delete` show it (PadoGrid: `  - name:`, `    data:`,
/// `    size:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructureInfo {
    /// The data structure's name (`map1`).
    pub name: String,
    /// Redisson's type name (`Map`, `MapCache`, `Queue`, ...).
    pub data: &'static str,
    /// Its size on the target (topics store nothing: `0`).
    pub size: i64,
}

impl StructureInfo {
    /// PadoGrid's lines for it; with `deleted`, the `    deleted:` line too.
    pub fn render(&self, deleted: Option<bool>) -> String {
        let mut out = format!(
            "  - name: {}\n    data: {}\n    size: {}\n",
            self.name, self.data, self.size
        );
        if let Some(d) = deleted {
            out.push_str(&format!("    deleted: {d}\n"));
        }
        out
    }
}

/// What `-list` shows: each data structure the groups use (and their ER children), once, in
/// the groups' order, and its size on the target.
pub fn list_structures(
    cfg: &GroupTestConfig,
    con: &mut dyn ConnectionLike,
) -> Result<Vec<StructureInfo>, String> {
    let mut out: Vec<StructureInfo> = Vec::new();
    for op in used_operations(cfg) {
        let name = &op.ds_name;
        if op.data_structure == DataStructure::Sleep || out.iter().any(|s| &s.name == name) {
            continue;
        }
        let size = match op.data_structure {
            DataStructure::Map => query_int(con, redis::cmd("HLEN").arg(name))?,
            DataStructure::List | DataStructure::Queue => {
                query_int(con, redis::cmd("LLEN").arg(name))?
            }
            DataStructure::RTopic => query_int(con, redis::cmd("XLEN").arg(name))?,
            DataStructure::MCache => mcache_keys(con, name)?.len() as i64,
            DataStructure::Topic | DataStructure::STopic | DataStructure::Sleep => 0,
        };
        out.push(StructureInfo {
            name: name.clone(),
            data: op.data_structure.redisson_type(),
            size,
        });
    }
    Ok(out)
}

/// The keys of an `mcache`'s entries (`<name>:*`).
fn mcache_keys(con: &mut dyn ConnectionLike, name: &str) -> Result<Vec<String>, String> {
    redis::cmd("KEYS")
        .arg(format!("{name}:*"))
        .query(con)
        .map_err(|e| e.to_string())
}

/// The operations the groups of `cfg` run, and the ER children they write into, each once,
/// in the groups' order: what `-list` and `-delete` cover (PadoGrid's `deleteDataStructures`).
/// An operation only named by a `ref` is not among them.
fn used_operations(cfg: &GroupTestConfig) -> Vec<&Operation> {
    let mut names: Vec<&str> = Vec::new();
    for group in cfg.schedule.stages.iter().flatten() {
        for name in cfg.groups.get(group).map_or(&[][..], |g| &g.operations[..]) {
            let child = cfg
                .operations
                .get(name)
                .and_then(|o| o.factory.as_ref())
                .and_then(|f| f.er.as_ref())
                .map(|er| er.operation.as_str());
            for n in std::iter::once(name.as_str()).chain(child) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    names
        .into_iter()
        .filter_map(|n| cfg.operations.get(n))
        .collect()
}

/// What `-delete` does: removes every data structure the groups use (and their ER
/// children); returns each as listed just before, and whether it existed (PadoGrid's
/// `deleted: <isExists>`).
pub fn delete_structures(
    cfg: &GroupTestConfig,
    con: &mut dyn ConnectionLike,
) -> Result<Vec<(StructureInfo, bool)>, String> {
    let mut out = Vec::new();
    for info in list_structures(cfg, con)? {
        let existed = match info.data {
            "Topic" | "ShardedTopic" => false,
            "MapCache" => {
                let keys = mcache_keys(con, &info.name)?;
                for chunk in keys.chunks(500) {
                    query_int(con, redis::cmd("DEL").arg(chunk))?;
                }
                !keys.is_empty()
            }
            _ => query_int(con, redis::cmd("DEL").arg(&info.name))? > 0,
        };
        out.push((info, existed));
    }
    Ok(out)
}

fn query_int(con: &mut dyn ConnectionLike, cmd: &redis::Cmd) -> Result<i64, String> {
    cmd.query(con).map_err(|e| e.to_string())
}
