//! The `edgebench kv` load engine: `-t` threads, each driving its `-c` connections, each
//! connection keeping up to `--pipeline` requests in flight, closed loop or on a schedule.
//!
//! **What latency covers.** A request's latency runs from the moment the batch it belongs to
//! is handed to the socket (one clock read per batch, as memtier's `fill_pipeline`) to the
//! moment its reply has been scanned in full from the bytes read (one clock read per read).
//! For the in-process target there is no socket: from the moment the batch starts executing
//! to the moment this request's reply exists.
//!
//! **Open loop** (`--rate-limiting`, `--rate`). Each connection has a schedule: request `k`
//! is *intended* to go out at `first + k · interval`, `first` staggered over the connections
//! so they do not send in phase (memtier PR #519). A request is sent at its intended time or,
//! when the connection's pipeline is full, as soon as a reply frees a slot. Besides the
//! latency above (from the actual send, memtier's meaning), each request also records its
//! latency from the *intended* send time: the coordinated-omission-corrected latency (Gil
//! Tene, "How NOT to measure latency", 2015), which charges the server's stalls to every
//! request that should have gone out during them. A request sent more than one interval
//! after its intended time is *late*; a scheduled request whose intended time fell before the
//! end of the run but which was never sent is *dropped*.
//!
//! **Warm-up** (`--warmup D`). Requests whose send time (intended send time, in open loop) is
//! in the first D of the run are sent but not recorded; the measured wall time starts at D.
//!
//! **Threads and runtimes.** Each thread runs its own single-threaded tokio runtime and polls
//! its connections as one future (memtier: one libevent base per thread), so a connection
//! never migrates and the thread's CPU time is the client's cost for those connections.
//! The connections of one thread record into that thread's [`ThreadStats`] (HDR histograms
//! per row and the per-second series), reached through a `RefCell` that is never held across
//! an `.await`: nothing is locked, and the series costs memory per thread and second, not per
//! connection. Threads merge when they join. The live line reads three shared `AtomicU64`s
//! that each connection adds to once per read (a batch of replies), not once per request.
//!
//! **Stopping.** A connection stops sending when it has sent its `-n` share, when the
//! `--test-time` deadline passes, when Ctrl-C raised the stop flag, or when another
//! connection failed (then every connection stops: the run ends, reports what it measured,
//! and says why). Requests in flight are always drained, so every request sent is counted.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::cluster::{self, Redirect, Topology};
use super::{ConnGen, KvConfig, RequestBuf, RequestKind};
use crate::engine::{Engine, Reply};
use crate::resp::scan::{scan_reply, ReplyKind};
use crate::target::Endpoint;

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum LoadTarget {
    /// A Redis-protocol server.
    Socket(Endpoint),
    /// The engine in this process: commands run through [`Engine::execute`], no RESP.
    InProcess(Engine),
}

fn latency_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is valid")
}

/// One output row's counters and latency histograms (ns).
#[derive(Debug, Clone)]
pub struct RowStats {
    /// Requests answered.
    pub ops: u64,
    /// GET-like replies that found something.
    pub hits: u64,
    /// GET-like replies that found nothing (nil or empty).
    pub misses: u64,
    /// Error replies (redirections are counted apart).
    pub errors: u64,
    /// Cluster mode: `-MOVED` replies (memtier counts them as requests, with latency).
    pub moved: u64,
    /// Cluster mode: `-ASK` redirections (followed once; the request counts when its
    /// answer arrives).
    pub ask: u64,
    /// Request bytes written.
    pub bytes_tx: u64,
    /// Reply bytes read.
    pub bytes_rx: u64,
    /// Latency from the actual send (memtier's meaning), ns, 3 significant digits.
    pub latency: Histogram<u64>,
    /// Latency from the intended send time (open loop only; empty in closed loop), ns.
    pub corrected: Histogram<u64>,
}

impl Default for RowStats {
    fn default() -> Self {
        RowStats {
            ops: 0,
            hits: 0,
            misses: 0,
            errors: 0,
            moved: 0,
            ask: 0,
            bytes_tx: 0,
            bytes_rx: 0,
            latency: latency_histogram(),
            corrected: latency_histogram(),
        }
    }
}

impl RowStats {
    /// Adds `other`'s counts and histograms to these.
    pub fn add(&mut self, other: &RowStats) {
        self.ops += other.ops;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
        self.moved += other.moved;
        self.ask += other.ask;
        self.bytes_tx += other.bytes_tx;
        self.bytes_rx += other.bytes_rx;
        // Both are auto-resizing; adding cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.corrected.add(&other.corrected);
    }
}

/// One row's figures for one second of the run (memtier's `one_sec_cmd_stats`): counts, the
/// exact latency sum, minimum and maximum, and a coarse histogram for the second's
/// percentiles (1 significant digit: within 1/16 of the value; a 3-digit histogram per second
/// would cost ~100 KB per row and second).
#[derive(Debug, Clone)]
pub struct SecondStats {
    /// Requests answered in this second.
    pub ops: u64,
    /// GET-like hits.
    pub hits: u64,
    /// GET-like misses.
    pub misses: u64,
    /// Request bytes.
    pub bytes_tx: u64,
    /// Reply bytes.
    pub bytes_rx: u64,
    /// Sum of latencies from the actual send, ns.
    pub latency_sum_ns: u64,
    /// Smallest latency, ns (`u64::MAX` when no request).
    pub min_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// Latency from the actual send, ns, 1 significant digit.
    pub latency: Histogram<u32>,
}

impl Default for SecondStats {
    fn default() -> Self {
        SecondStats {
            ops: 0,
            hits: 0,
            misses: 0,
            bytes_tx: 0,
            bytes_rx: 0,
            latency_sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            latency: Histogram::new_with_bounds(1, 3_600_000_000_000, 1)
                .expect("valid bounds for a per-second histogram"),
        }
    }
}

impl SecondStats {
    /// Adds `other` into this second.
    pub fn add(&mut self, other: &SecondStats) {
        self.ops += other.ops;
        self.hits += other.hits;
        self.misses += other.misses;
        self.bytes_tx += other.bytes_tx;
        self.bytes_rx += other.bytes_rx;
        self.latency_sum_ns += other.latency_sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        let _ = self.latency.add(&other.latency);
    }
}

/// What one client thread (all its connections) measured.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    /// One per row.
    pub rows: Vec<RowStats>,
    /// `seconds[s][row]`: second `s` after the measured start (by reply time, as memtier's
    /// `roll_cur_stats`).
    pub seconds: Vec<Vec<SecondStats>>,
    /// Requests sent more than one interval after their intended time.
    pub late: u64,
    /// Scheduled requests never sent before the end.
    pub dropped: u64,
}

impl ThreadStats {
    fn new(rows: usize) -> ThreadStats {
        ThreadStats {
            rows: (0..rows).map(|_| RowStats::default()).collect(),
            seconds: Vec::new(),
            late: 0,
            dropped: 0,
        }
    }

    fn add(&mut self, other: &ThreadStats) {
        for (m, s) in self.rows.iter_mut().zip(&other.rows) {
            m.add(s);
        }
        let rows = self.rows.len();
        if self.seconds.len() < other.seconds.len() {
            self.seconds.resize_with(other.seconds.len(), || {
                (0..rows).map(|_| SecondStats::default()).collect()
            });
        }
        for (mine, theirs) in self.seconds.iter_mut().zip(&other.seconds) {
            for (m, s) in mine.iter_mut().zip(theirs) {
                m.add(s);
            }
        }
        self.late += other.late;
        self.dropped += other.dropped;
    }
}

/// What a reply counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A reply of this kind (a hit or a miss when the row counts them).
    Reply(ReplyKind),
    /// An MGET's array: `hits` of its `keys` were found, the rest are misses.
    MultiGet { hits: u64, keys: u64 },
    /// `-MOVED`.
    Moved,
    /// `-ASK` on a request already redirected once.
    Ask,
}

/// One reply, as the engine saw it.
struct Sample {
    row: usize,
    counts_hits: bool,
    outcome: Outcome,
    tx: usize,
    rx: usize,
    /// When its batch went out.
    sent: Instant,
    /// When it should have gone out (open loop).
    intended: Option<Instant>,
    /// When its reply was complete.
    done: Instant,
}

impl ThreadStats {
    /// Records one reply unless it belongs to the warm-up. Returns its latency (ns) for the
    /// live line.
    fn record(&mut self, clock: &Clock, s: Sample) -> u64 {
        let ns = s.done.saturating_duration_since(s.sent).as_nanos() as u64;
        if s.intended.unwrap_or(s.sent) < clock.measure_from {
            return ns;
        }
        let r = &mut self.rows[s.row];
        r.ops += 1;
        r.bytes_tx += s.tx as u64;
        r.bytes_rx += s.rx as u64;
        let (hit, miss) = match s.outcome {
            Outcome::Reply(ReplyKind::Error) => {
                r.errors += 1;
                (0, 0)
            }
            Outcome::Reply(ReplyKind::Miss) if s.counts_hits => (0, 1),
            Outcome::Reply(ReplyKind::Value) if s.counts_hits => (1, 0),
            Outcome::MultiGet { hits, keys } if s.counts_hits => (hits, keys - hits),
            Outcome::Moved => {
                r.moved += 1;
                (0, 0)
            }
            Outcome::Ask => {
                r.ask += 1;
                (0, 0)
            }
            _ => (0, 0),
        };
        r.hits += hit;
        r.misses += miss;
        let _ = r.latency.record(ns.max(1));
        if let Some(intended) = s.intended {
            let corrected = s.done.saturating_duration_since(intended).as_nanos() as u64;
            let _ = r.corrected.record(corrected.max(1));
        }
        let second = s
            .done
            .saturating_duration_since(clock.measure_from)
            .as_secs() as usize;
        let rows = self.rows.len();
        if self.seconds.len() <= second {
            self.seconds.resize_with(second + 1, || {
                (0..rows).map(|_| SecondStats::default()).collect()
            });
        }
        let b = &mut self.seconds[second][s.row];
        b.ops += 1;
        b.hits += hit;
        b.misses += miss;
        b.bytes_tx += s.tx as u64;
        b.bytes_rx += s.rx as u64;
        b.latency_sum_ns += ns;
        b.min_ns = b.min_ns.min(ns);
        b.max_ns = b.max_ns.max(ns);
        b.latency.saturating_record(ns.max(1));
        ns
    }

    /// Counts an `-ASK` that is being followed, unless its request belongs to the warm-up.
    fn note_ask(&mut self, clock: &Clock, row: usize, sent: Instant) {
        if sent >= clock.measure_from {
            self.rows[row].ask += 1;
        }
    }

    /// Counts a request sent `behind` after its intended time (open loop).
    fn note_send(&mut self, clock: &Clock, intended: Instant, sent: Instant, interval: Duration) {
        if intended >= clock.measure_from && sent.saturating_duration_since(intended) > interval {
            self.late += 1;
        }
    }
}

/// What a run measured: one [`RowStats`] per row (Sets, Gets; or one per `--command`).
#[derive(Debug, Clone)]
pub struct LoadResult {
    /// Row names and their figures, in output order.
    pub rows: Vec<(String, RowStats)>,
    /// The measured wall time: from the end of the warm-up (the first request without one) to
    /// the last reply.
    pub elapsed: Duration,
    /// When the measured time started.
    pub started_at: SystemTime,
    /// `seconds[s][row]`, as the rows.
    pub seconds: Vec<Vec<SecondStats>>,
    /// The open-loop rate in requests/s over all connections; `None` in closed loop.
    pub rate: Option<f64>,
    /// Open loop: requests sent more than one interval after their intended time.
    pub late: u64,
    /// Open loop: scheduled requests never sent before the end.
    pub dropped: u64,
    /// CPU time (user + system) of each client thread, and its wall time.
    pub thread_cpu: Vec<(Duration, Duration)>,
    /// Why the run ended early, if it did (a connection failed, Ctrl-C).
    pub stopped: Option<String>,
}

impl LoadResult {
    /// Every row added up (memtier's Totals).
    pub fn totals(&self) -> RowStats {
        let mut t = RowStats::default();
        for (_, r) in &self.rows {
            t.add(r);
        }
        t
    }

    /// Total operations per second over the measured time (memtier picks the best and worst
    /// of `-x` runs by this).
    pub fn ops_per_sec(&self) -> f64 {
        let ops: u64 = self.rows.iter().map(|(_, r)| r.ops).sum();
        ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The runs merged as memtier's `AGGREGATED AVERAGE RESULTS`: counts added and histograms
    /// merged, over the runs' added measured time, so rates are all operations over all the
    /// measured time (memtier averages the per-run rates: the same when runs last equally,
    /// as `--test-time` runs do). No per-second series, as memtier's average has none.
    pub fn aggregate(runs: &[LoadResult]) -> LoadResult {
        let mut out = runs[0].clone();
        out.seconds.clear();
        for r in &runs[1..] {
            for ((_, m), (_, s)) in out.rows.iter_mut().zip(&r.rows) {
                m.add(s);
            }
            out.elapsed += r.elapsed;
            out.late += r.late;
            out.dropped += r.dropped;
            out.thread_cpu.extend_from_slice(&r.thread_cpu);
            if out.stopped.is_none() {
                out.stopped.clone_from(&r.stopped);
            }
        }
        out
    }
}

/// The live counters a run updates once per batch of replies and the caller reads once a
/// second for the live line. They count every reply, warm-up included.
#[derive(Debug, Default)]
pub struct Live {
    /// Replies.
    pub ops: AtomicU64,
    /// Request and reply bytes.
    pub bytes: AtomicU64,
    /// Sum of latencies from the actual send, ns.
    pub latency_ns: AtomicU64,
}

impl Live {
    fn add(&self, ops: u64, bytes: u64, latency_ns: u64) {
        if ops > 0 {
            self.ops.fetch_add(ops, Ordering::Relaxed);
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
            self.latency_ns.fetch_add(latency_ns, Ordering::Relaxed);
        }
    }
}

/// The rows of a configuration and which row each request kind counts in.
fn row_names(cfg: &KvConfig) -> Vec<String> {
    if cfg.commands.is_empty() {
        vec!["Sets".into(), "Gets".into()]
    } else if cfg.stats_by_line {
        cfg.commands.iter().map(|c| c.text.clone()).collect()
    } else {
        // One row per command name (memtier's default `--command-stats-breakdown`).
        let mut names: Vec<String> = Vec::new();
        for c in cfg.commands.iter() {
            if !names.contains(&c.name) {
                names.push(c.name.clone());
            }
        }
        names
    }
}

/// Maps a request kind to its row index, and whether its replies count hits and misses.
#[derive(Debug, Clone)]
struct RowMap {
    command_rows: Vec<usize>,
    /// Per `--command`: the argument holding its first key, if it has one.
    command_keys: Vec<Option<usize>>,
}

impl RowMap {
    fn new(cfg: &KvConfig, names: &[String]) -> RowMap {
        let command_rows = cfg
            .commands
            .iter()
            .map(|c| {
                let name = if cfg.stats_by_line { &c.text } else { &c.name };
                names.iter().position(|n| n == name).unwrap_or(0)
            })
            .collect();
        let command_keys = cfg.commands.iter().map(|c| c.key_arg()).collect();
        RowMap {
            command_rows,
            command_keys,
        }
    }

    /// The argument that holds the (first) key of a request of this kind: what cluster mode
    /// routes by. `None` for a keyless command.
    fn key_arg(&self, kind: RequestKind) -> Option<usize> {
        match kind {
            RequestKind::Set | RequestKind::Get | RequestKind::MultiGet(_) => Some(1),
            RequestKind::Command(i) => self.command_keys[i],
        }
    }

    fn row(&self, kind: RequestKind) -> (usize, bool) {
        match kind {
            RequestKind::Set => (0, false),
            RequestKind::Get | RequestKind::MultiGet(_) => (1, true),
            // memtier counts no hits or misses for arbitrary commands (its text shows `---`).
            RequestKind::Command(i) => (self.command_rows[i], false),
        }
    }
}

/// Why a connection ended before its share was done.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The server could not be reached at the start.
    #[error("cannot connect to {endpoint}: {error}")]
    Connect {
        /// Where.
        endpoint: String,
        /// The OS error.
        error: io::Error,
    },
    /// `--cluster-mode` against the in-process engine.
    #[error(
        "--cluster-mode needs a Redis Cluster (-s/-p of one of its nodes); the in-process \
         engine is a single node: drop --cluster-mode or --target"
    )]
    InProcessCluster,
    /// The cluster's slot map could not be read, or the server is not a cluster.
    #[error(transparent)]
    Topology(#[from] cluster::TopologyError),
}

/// Reads the slot map from `endpoint` before the run (memtier's first `CLUSTER SLOTS`), so a
/// server that is not a cluster is one clear error rather than a failed connection per client.
fn read_topology(
    endpoint: &Endpoint,
    prelude: &[Vec<Vec<u8>>],
    timeout: Option<Duration>,
) -> Result<Topology, LoadError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| LoadError::Connect {
            endpoint: endpoint.to_string(),
            error,
        })?;
    let discover = cluster::discover(endpoint, prelude);
    Ok(match timeout {
        None => runtime.block_on(discover)?,
        Some(t) => runtime
            .block_on(async { tokio::time::timeout(t, discover).await })
            .map_err(|_| LoadError::Connect {
                endpoint: endpoint.to_string(),
                error: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no slot map within --connection-timeout {}", t.as_secs()),
                ),
            })??,
    })
}

/// The open-loop rate of one connection, requests/s: `--rate-limiting` as given (memtier:
/// per connection), or `--rate` split evenly over all connections.
pub fn connection_rate(cfg: &KvConfig) -> Option<f64> {
    let conns = f64::from(cfg.threads) * f64::from(cfg.clients);
    cfg.rate_limiting
        .map(f64::from)
        .or(cfg.rate.map(|r| r as f64 / conns.max(1.0)))
}

/// The run's times, shared by every connection.
#[derive(Debug, Clone, Copy)]
struct Clock {
    /// The end of the warm-up: requests sent (intended) before it are not recorded.
    measure_from: Instant,
    /// `--test-time`'s end.
    deadline: Option<Instant>,
    /// Open loop: one connection's interval between intended sends, ns.
    interval_ns: Option<f64>,
    /// All connections of the run, for staggering their schedules.
    total_conns: u64,
    pipeline: usize,
}

/// One connection's intended send times: `first + k · interval`.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    first: Instant,
    interval_ns: f64,
}

impl Schedule {
    fn at(&self, k: u64) -> Instant {
        self.first + Duration::from_nanos((k as f64 * self.interval_ns) as u64)
    }

    fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns as u64)
    }

    /// How many slots `k` have `at(k)` strictly before `t`.
    fn slots_before(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(self.first).as_nanos() as f64;
        (ns / self.interval_ns).ceil() as u64
    }

    /// Scheduled requests that were due before `end` (capped by the connection's `-n`
    /// share) and after the warm-up, but never sent.
    fn dropped(&self, sent: u64, limit: Option<u64>, end: Instant, measure_from: Instant) -> u64 {
        let due = self.slots_before(end);
        let due = limit.map_or(due, |l| due.min(l));
        due.saturating_sub(sent.max(self.slots_before(measure_from)))
    }
}

impl Clock {
    /// Connection `index`'s schedule once it is ready at `ready`, staggered by
    /// `index / total_conns` of an interval so that connections do not send in phase.
    fn schedule(&self, ready: Instant, index: u64) -> Option<Schedule> {
        self.interval_ns.map(|interval_ns| Schedule {
            first: ready
                + Duration::from_nanos(
                    (interval_ns * index as f64 / self.total_conns.max(1) as f64) as u64,
                ),
            interval_ns,
        })
    }

    /// When a connection that stopped sending at `now` stopped being due.
    fn end(&self, now: Instant) -> Instant {
        self.deadline.map_or(now, |d| d.min(now))
    }
}

/// Runs the load described by `cfg` against `target` until every connection is done.
/// `interrupted` (Ctrl-C) ends it early; what finished is kept. `live` is updated as replies
/// arrive; `tick` is called about once a second, from this thread, with the time since the
/// run started, while the run goes on.
pub fn run(
    cfg: &KvConfig,
    target: &LoadTarget,
    interrupted: Arc<AtomicBool>,
    live: &Arc<Live>,
    tick: &mut dyn FnMut(Duration),
) -> Result<LoadResult, LoadError> {
    let stop = Stop {
        interrupted,
        failed: Arc::new(AtomicBool::new(false)),
    };
    let names = row_names(cfg);
    let map = RowMap::new(cfg, &names);
    let buffer = cfg.value_buffer();
    let why: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let threads = cfg.threads as u64;
    let clients = cfg.clients as u64;
    let first = Arc::new(prelude(cfg));
    let mut plans: Vec<Vec<ConnPlan>> = Vec::new();
    for t in 0..threads {
        let mut conns = Vec::new();
        for c in 0..clients {
            let index = t * clients + c;
            conns.push(ConnPlan {
                index,
                gen: cfg.conn_gen(index, &buffer),
                limit: cfg.requests_for(index),
                prelude: first.clone(),
            });
        }
        plans.push(conns);
    }
    if let LoadTarget::Socket(endpoint) = target {
        // One probe connection: a clear error instead of N failed threads.
        probe(endpoint, cfg.connection_timeout)?;
    }
    let topology = match (cfg.cluster_mode, target) {
        (false, _) => None,
        (true, LoadTarget::InProcess(_)) => return Err(LoadError::InProcessCluster),
        (true, LoadTarget::Socket(endpoint)) => Some(Arc::new(read_topology(
            endpoint,
            &first,
            cfg.connection_timeout,
        )?)),
    };
    let rate = connection_rate(cfg);
    let started = Instant::now();
    let started_wall = SystemTime::now();
    let clock = Clock {
        measure_from: started + cfg.warmup,
        // A --test-time past what Instant can hold is no deadline at all.
        deadline: cfg.test_time.and_then(|d| started.checked_add(d)),
        interval_ns: rate.map(|r| 1e9 / r),
        total_conns: threads * clients,
        pipeline: cfg.pipeline.max(1) as usize,
    };
    let rows = names.len();
    let mut handles = Vec::new();
    for conns in plans {
        let target = target.clone();
        let stop = stop.clone();
        let why = why.clone();
        let map = map.clone();
        let live = live.clone();
        let topology = topology.clone();
        let cfg = cfg.clone();
        handles.push(std::thread::spawn(move || {
            let cpu0 = thread_cpu();
            let wall0 = Instant::now();
            let stats = match &target {
                LoadTarget::InProcess(engine) => run_in_process(
                    engine, conns, &clock, &stop, &map, rows, &live,
                )
                .unwrap_or_else(|e| {
                    fail(&why, &stop, e);
                    ThreadStats::new(rows)
                }),
                LoadTarget::Socket(endpoint) => run_sockets(
                    endpoint, topology, &cfg, conns, &clock, &stop, &why, &map, rows, &live,
                ),
            };
            let finished = Instant::now();
            (
                stats,
                thread_cpu().saturating_sub(cpu0),
                finished - wall0,
                finished,
            )
        }));
    }
    // The live line: poll the threads often (so the run's end is not delayed), tick once a
    // second. The run's end is each thread's own finishing time, not this loop's.
    let mut next_tick = started + Duration::from_secs(1);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        if now >= next_tick {
            tick(now - started);
            next_tick += Duration::from_secs(1);
        }
    }
    let mut merged = ThreadStats::new(rows);
    let mut thread_cpu = Vec::new();
    let mut end = started;
    for h in handles {
        match h.join() {
            Ok((stats, cpu, wall, finished)) => {
                merged.add(&stats);
                thread_cpu.push((cpu, wall));
                end = end.max(finished);
            }
            Err(_) => {
                why.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| "a client thread panicked".into());
            }
        }
    }
    let mut stopped = why.lock().unwrap_or_else(|e| e.into_inner()).take();
    if stopped.is_none() && stop.interrupted.load(Ordering::Relaxed) {
        stopped = Some("interrupted (Ctrl-C)".into());
    }
    Ok(LoadResult {
        rows: names.into_iter().zip(merged.rows).collect(),
        elapsed: end.saturating_duration_since(clock.measure_from),
        started_at: started_wall + cfg.warmup,
        seconds: merged.seconds,
        rate: rate.map(|r| r * clock.total_conns as f64),
        late: merged.late,
        dropped: merged.dropped,
        thread_cpu,
        stopped,
    })
}

/// When to stop sending: Ctrl-C (the caller's flag) or a failed connection (the run's own).
#[derive(Debug, Clone, Default)]
struct Stop {
    interrupted: Arc<AtomicBool>,
    failed: Arc<AtomicBool>,
}

impl Stop {
    fn load(&self, order: Ordering) -> bool {
        self.interrupted.load(order) || self.failed.load(order)
    }
}

/// One connection's number, generator and `-n` share (`None`: until the deadline), and what
/// it sends before the load (HELLO 3, AUTH, SELECT: memtier's connect sequence).
struct ConnPlan {
    index: u64,
    gen: ConnGen,
    limit: Option<u64>,
    prelude: Arc<Vec<Vec<Vec<u8>>>>,
}

/// The commands every connection sends once before its first request, in memtier's order
/// (`send_conn_setup_commands`): AUTH, SELECT, then HELLO, because Redis refuses HELLO from a
/// client that has not authenticated yet.
fn prelude(cfg: &KvConfig) -> Vec<Vec<Vec<u8>>> {
    let mut cmds = Vec::new();
    if let Some(credentials) = &cfg.authenticate {
        // memtier: "USER:PASSWORD" authenticates an ACL user, anything else is a password.
        let mut cmd = vec![b"AUTH".to_vec()];
        match credentials.split_once(':') {
            Some((user, pass)) if !user.is_empty() => {
                cmd.push(user.as_bytes().to_vec());
                cmd.push(pass.as_bytes().to_vec());
            }
            _ => cmd.push(credentials.as_bytes().to_vec()),
        }
        cmds.push(cmd);
    }
    if cfg.select_db != 0 {
        cmds.push(vec![
            b"SELECT".to_vec(),
            cfg.select_db.to_string().into_bytes(),
        ]);
    }
    match cfg.protocol {
        super::Protocol::Resp3 => cmds.push(vec![b"HELLO".to_vec(), b"3".to_vec()]),
        super::Protocol::Resp2 => cmds.push(vec![b"HELLO".to_vec(), b"2".to_vec()]),
        super::Protocol::Redis => {}
    }
    cmds
}

impl ConnPlan {
    fn may_send(&self, sent: u64, deadline: Option<Instant>, stop: &Stop) -> bool {
        !stop.load(Ordering::Relaxed)
            && self.limit.is_none_or(|l| sent < l)
            && deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// Opens and closes one connection to `endpoint`, within `timeout` (--connection-timeout)
/// when given, per resolved address as `TcpStream::connect_timeout` allows.
fn probe(endpoint: &Endpoint, timeout: Option<Duration>) -> Result<(), LoadError> {
    use std::net::ToSocketAddrs as _;
    let result = match (endpoint, timeout) {
        (Endpoint::Tcp { host, port }, None) => {
            std::net::TcpStream::connect((host.as_str(), *port)).map(drop)
        }
        (Endpoint::Tcp { host, port }, Some(t)) => {
            (host.as_str(), *port).to_socket_addrs().and_then(|addrs| {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                for addr in addrs {
                    match std::net::TcpStream::connect_timeout(&addr, t) {
                        Ok(_) => return Ok(()),
                        Err(e) => last = e,
                    }
                }
                Err(last)
            })
        }
        (Endpoint::Unix(path), _) => std::os::unix::net::UnixStream::connect(path).map(drop),
    };
    result.map_err(|error| LoadError::Connect {
        endpoint: endpoint.to_string(),
        error,
    })
}

/// The calling thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Sleeps are cut to this, so Ctrl-C and a failed connection stop a slow schedule promptly.
const MAX_NAP: Duration = Duration::from_millis(100);

fn run_in_process(
    engine: &Engine,
    conns: Vec<ConnPlan>,
    clock: &Clock,
    stop: &Stop,
    map: &RowMap,
    rows: usize,
    live: &Live,
) -> Result<ThreadStats, String> {
    let mut stats = ThreadStats::new(rows);
    let mut clients: Vec<_> = conns.iter().map(|_| engine.client()).collect();
    for (client, conn) in clients.iter_mut().zip(&conns) {
        for cmd in conn.prelude.iter() {
            let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
            if let Reply::Error(e) = engine.execute(client, &args) {
                let what = String::from_utf8_lossy(&cmd[0]).into_owned();
                return Err(format!("{what} failed: {e}"));
            }
        }
    }
    let ready = Instant::now();
    let schedules: Vec<Option<Schedule>> = conns
        .iter()
        .map(|c| clock.schedule(ready, c.index))
        .collect();
    let mut conns = conns;
    let mut sent = vec![0u64; conns.len()];
    let mut finished = vec![false; conns.len()];
    let mut req = RequestBuf::new();
    loop {
        let mut active = 0;
        let mut progressed = false;
        let mut wake: Option<Instant> = None;
        for (i, conn) in conns.iter_mut().enumerate() {
            if finished[i] {
                continue;
            }
            if !conn.may_send(sent[i], clock.deadline, stop) {
                finished[i] = true;
                if let Some(s) = &schedules[i] {
                    let end = clock.end(Instant::now());
                    stats.dropped += s.dropped(sent[i], conn.limit, end, clock.measure_from);
                }
                continue;
            }
            active += 1;
            // One batch of up to `pipeline` requests, as a pipelined socket client sends.
            let batch_start = Instant::now();
            let (mut ops, mut bytes, mut latency) = (0u64, 0u64, 0u64);
            for _ in 0..clock.pipeline {
                if conn.limit.is_some_and(|l| sent[i] >= l) {
                    break;
                }
                let intended = match &schedules[i] {
                    Some(s) => {
                        let t = s.at(sent[i]);
                        if t > batch_start {
                            wake = Some(wake.map_or(t, |w| w.min(t)));
                            break;
                        }
                        stats.note_send(clock, t, batch_start, s.interval());
                        Some(t)
                    }
                    None => None,
                };
                let kind = conn.gen.next_request(&mut req);
                let tx: usize = req.args().map(<[u8]>::len).sum();
                let reply = execute(engine, &mut clients[i], &req);
                let done = Instant::now();
                sent[i] += 1;
                progressed = true;
                let (row, counts_hits) = map.row(kind);
                let (outcome, rx) = classify(kind, &reply);
                latency += stats.record(
                    clock,
                    Sample {
                        row,
                        counts_hits,
                        outcome,
                        tx,
                        rx,
                        sent: batch_start,
                        intended,
                        done,
                    },
                );
                ops += 1;
                bytes += (tx + rx) as u64;
            }
            live.add(ops, bytes, latency);
        }
        if active == 0 {
            return Ok(stats);
        }
        if let (false, Some(w)) = (progressed, wake) {
            let now = Instant::now();
            let until = clock.deadline.map_or(w, |d| d.min(w)).min(now + MAX_NAP);
            std::thread::sleep(until.saturating_duration_since(now));
        }
    }
}

/// Runs one request on the engine. Up to 8 arguments go through an array on the stack, so
/// the usual SET and GET allocate nothing here.
fn execute(engine: &Engine, client: &mut crate::engine::Client, req: &RequestBuf) -> Reply {
    const INLINE: usize = 8;
    if req.len() <= INLINE {
        let mut args: [&[u8]; INLINE] = [&[]; INLINE];
        for (slot, arg) in args.iter_mut().zip(req.args()) {
            *slot = arg;
        }
        engine.execute(client, &args[..req.len()])
    } else {
        let args: Vec<&[u8]> = req.args().collect();
        engine.execute(client, &args)
    }
}

/// What an in-process reply to a request of `kind` counts as, and its payload size (bulk
/// bytes) for KB/sec.
fn classify(kind: RequestKind, reply: &Reply) -> (Outcome, usize) {
    let value = Outcome::Reply(ReplyKind::Value);
    match reply {
        Reply::Error(_) => (Outcome::Reply(ReplyKind::Error), 0),
        Reply::Nil | Reply::NilArray => (Outcome::Reply(ReplyKind::Miss), 0),
        Reply::Array(a) | Reply::Set(a) | Reply::Push(a) if a.is_empty() => {
            (Outcome::Reply(ReplyKind::Miss), 0)
        }
        Reply::Bulk(b) => (value, b.len()),
        Reply::Array(a) => {
            let rx = a
                .iter()
                .map(|r| if let Reply::Bulk(b) = r { b.len() } else { 0 })
                .sum();
            match kind {
                RequestKind::MultiGet(keys) => (
                    Outcome::MultiGet {
                        hits: a.iter().filter(|r| !matches!(r, Reply::Nil)).count() as u64,
                        keys: u64::from(keys),
                    },
                    rx,
                ),
                _ => (value, rx),
            }
        }
        _ => (value, 0),
    }
}

/// What a client thread's connections share: the run's clock and stop flags, the row map,
/// the thread's statistics and the live counters, and the connection options.
struct Ctx<'a> {
    clock: &'a Clock,
    stop: &'a Stop,
    map: &'a RowMap,
    stats: &'a RefCell<ThreadStats>,
    live: &'a Live,
    /// `--reconnect-interval`: requests per connection before it is closed and reopened.
    reconnect: Option<u64>,
    /// `--connection-timeout`.
    connect_timeout: Option<Duration>,
    /// The connect sequence (HELLO, AUTH, SELECT).
    prelude: &'a [Vec<Vec<u8>>],
}

#[allow(clippy::too_many_arguments)]
fn run_sockets(
    endpoint: &Endpoint,
    topology: Option<Arc<Topology>>,
    cfg: &KvConfig,
    conns: Vec<ConnPlan>,
    clock: &Clock,
    stop: &Stop,
    why: &Mutex<Option<String>>,
    map: &RowMap,
    rows: usize,
    live: &Live,
) -> ThreadStats {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            fail(why, stop, format!("cannot start a client runtime: {e}"));
            return ThreadStats::new(rows);
        }
    };
    let stats = RefCell::new(ThreadStats::new(rows));
    let prelude = conns.first().map(|c| c.prelude.clone()).unwrap_or_default();
    let ctx = Ctx {
        clock,
        stop,
        map,
        stats: &stats,
        live,
        reconnect: cfg.reconnect_interval.map(u64::from),
        connect_timeout: cfg.connection_timeout,
        prelude: &prelude,
    };
    runtime.block_on(async {
        let futures = conns.into_iter().map(|conn| {
            let (ctx, topology) = (&ctx, topology.as_ref());
            async move {
                if let Err(e) = drive(endpoint, topology, conn, ctx).await {
                    fail(why, stop, format!("connection to {endpoint} failed: {e}"));
                }
            }
        });
        futures_util::future::join_all(futures).await;
    });
    stats.into_inner()
}

/// Records the first failure and stops every connection.
fn fail(why: &Mutex<Option<String>>, stop: &Stop, reason: String) {
    why.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(reason);
    stop.failed.store(true, Ordering::Relaxed);
}

fn bad_reply(e: crate::resp::scan::BadReply) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Sends the connect sequence (HELLO, AUTH, SELECT); each reply must not be an error.
async fn send_prelude<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    prelude: &[Vec<Vec<u8>>],
) -> io::Result<()> {
    let mut input = Vec::new();
    for cmd in prelude {
        if let cluster::Value::Error(text) = cluster::query(stream, cmd, &mut input).await? {
            let what = String::from_utf8_lossy(&cmd[0]).into_owned();
            return Err(io::Error::other(format!("{what} failed: {text}")));
        }
    }
    Ok(())
}

/// A connection's byte stream, TCP or Unix socket, as one type: a client holds one per
/// cluster node and reopens them (`--reconnect-interval`).
trait Io: AsyncRead + AsyncWrite + Unpin {}
impl<T: AsyncRead + AsyncWrite + Unpin> Io for T {}

/// Connects to `node` (within `--connection-timeout`) and sends the connect sequence.
async fn open(node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<Box<dyn Io>> {
    let connect = async {
        let stream: Box<dyn Io> = match node {
            Endpoint::Tcp { host, port } => {
                let s = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
                let _ = s.set_nodelay(true);
                Box::new(s)
            }
            Endpoint::Unix(path) => Box::new(tokio::net::UnixStream::connect(path).await?),
        };
        Ok::<_, io::Error>(stream)
    };
    let mut stream = match ctx.connect_timeout {
        Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no connection to {node} within --connection-timeout {}",
                    t.as_secs()
                ),
            )
        })??,
        None => connect.await?,
    };
    send_prelude(&mut stream, ctx.prelude).await?;
    Ok(stream)
}

/// What an entry of a connection's queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A generated request.
    Request,
    /// `ASKING` before a redirected request: its `+OK` is not counted.
    Asking,
    /// A request resent after `-ASK` (once: a second `-ASK` is counted, not followed).
    Retry,
}

/// A request written or in flight: what it is, its size, when its batch went out, when it
/// was due (open loop), and in cluster mode its bytes, to resend after `-ASK`.
struct InFlight {
    kind: RequestKind,
    tx: usize,
    sent: Instant,
    intended: Option<Instant>,
    step: Step,
    copy: Option<Vec<u8>>,
}

/// One connection to one server (one per master in cluster mode).
struct Shard {
    node: Endpoint,
    stream: Box<dyn Io>,
    /// Requests written since the last flush, and their bytes.
    out: Vec<u8>,
    batch: Vec<InFlight>,
    input: Vec<u8>,
    in_flight: VecDeque<InFlight>,
    /// Requests sent since the connection was opened (`--reconnect-interval`).
    on_connection: u64,
}

impl Shard {
    async fn open(node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<Shard> {
        Ok(Shard {
            node: node.clone(),
            stream: open(node, ctx).await?,
            out: Vec::with_capacity(64 * 1024),
            // Grown on demand beyond this: a huge --pipeline must not allocate up front.
            batch: Vec::with_capacity(ctx.clock.pipeline.min(1024)),
            input: Vec::with_capacity(64 * 1024),
            in_flight: VecDeque::with_capacity(ctx.clock.pipeline.min(1024)),
            on_connection: 0,
        })
    }

    fn pending(&self) -> usize {
        self.in_flight.len() + self.batch.len()
    }
}

/// A generated request that waits for room on its connection (the request itself stays in
/// the connection's [`RequestBuf`]).
#[derive(Debug, Clone, Copy)]
struct Parked {
    kind: RequestKind,
    intended: Option<Instant>,
    shard: usize,
}

/// One memtier client: one connection, or in cluster mode one per master (memtier's
/// `cluster_client`), each with up to `--pipeline` requests in flight.
struct Client {
    shards: Vec<Shard>,
    /// Cluster mode: the slot map and, per node of it, the shard index.
    cluster: Option<(Arc<Topology>, Vec<usize>)>,
    /// Reusable buffers for the request copies kept in cluster mode.
    spare: Vec<Vec<u8>>,
    /// Where the next read starts looking, so no connection starves the others.
    next_read: usize,
    /// Round robin for keyless commands in cluster mode.
    keyless: usize,
}

impl Client {
    async fn open(
        endpoint: &Endpoint,
        topology: Option<&Arc<Topology>>,
        ctx: &Ctx<'_>,
    ) -> io::Result<Client> {
        let mut client = Client {
            shards: Vec::new(),
            cluster: None,
            spare: Vec::new(),
            next_read: 0,
            keyless: 0,
        };
        match topology {
            None => client.shards.push(Shard::open(endpoint, ctx).await?),
            Some(t) => client.use_topology(t.clone(), ctx).await?,
        }
        Ok(client)
    }

    /// Routes by `topology` from now on, opening connections to masters not yet connected.
    /// Connections to nodes that lost their slots stay open: their replies are still due.
    async fn use_topology(&mut self, topology: Arc<Topology>, ctx: &Ctx<'_>) -> io::Result<()> {
        let mut shard_of = Vec::with_capacity(topology.nodes.len());
        for node in &topology.nodes {
            shard_of.push(self.shard_for(node, ctx).await?);
        }
        self.cluster = Some((topology, shard_of));
        Ok(())
    }

    /// The shard connected to `node`, opened if there is none yet.
    async fn shard_for(&mut self, node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<usize> {
        if let Some(i) = self.shards.iter().position(|s| s.node == *node) {
            return Ok(i);
        }
        self.shards.push(Shard::open(node, ctx).await?);
        Ok(self.shards.len() - 1)
    }

    /// The shard that serves the request in `req`: the master of its key's slot in cluster
    /// mode, the only connection otherwise.
    fn route(&mut self, kind: RequestKind, req: &RequestBuf, map: &RowMap) -> usize {
        let Some((topology, shard_of)) = &self.cluster else {
            return 0;
        };
        match map.key_arg(kind) {
            Some(pos) => topology
                .node_of(cluster::hash_slot(req.arg(pos)))
                .map_or(0, |n| shard_of[n]),
            None => {
                self.keyless = (self.keyless + 1) % self.shards.len();
                self.keyless
            }
        }
    }

    /// Requests written or in flight on every connection.
    fn pending(&self) -> usize {
        self.shards.iter().map(Shard::pending).sum()
    }

    fn has_room(&self, shard: usize, ctx: &Ctx<'_>) -> bool {
        let s = &self.shards[shard];
        s.pending() < ctx.clock.pipeline && ctx.reconnect.is_none_or(|n| s.on_connection < n)
    }

    /// Writes `req` into `shard`'s next batch.
    fn queue(&mut self, shard: usize, p: Parked, req: &RequestBuf, now: Instant) {
        let s = &mut self.shards[shard];
        let before = s.out.len();
        req.write_resp(&mut s.out);
        let copy = self.cluster.is_some().then(|| {
            let mut v = self.spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(&s.out[before..]);
            v
        });
        s.batch.push(InFlight {
            kind: p.kind,
            tx: s.out.len() - before,
            sent: now,
            intended: p.intended,
            step: Step::Request,
            copy,
        });
        s.on_connection += 1;
    }

    /// Sends `ASKING` and then the redirected request `f` to `shard` (memtier follows no
    /// `-ASK`; edgebench follows each once, as a cluster client must for a migrating slot).
    fn queue_ask(&mut self, shard: usize, mut f: InFlight) {
        const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";
        let s = &mut self.shards[shard];
        s.out.extend_from_slice(ASKING);
        s.batch.push(InFlight {
            kind: f.kind,
            tx: ASKING.len(),
            sent: f.sent,
            intended: None,
            step: Step::Asking,
            copy: None,
        });
        if let Some(bytes) = &f.copy {
            s.out.extend_from_slice(bytes);
        }
        f.step = Step::Retry;
        s.batch.push(f);
    }

    /// Writes every connection's batch; a batch's requests are sent at the moment its write
    /// starts (redirected requests keep their first send time).
    async fn flush(&mut self, schedule: Option<&Schedule>, ctx: &Ctx<'_>) -> io::Result<()> {
        for s in &mut self.shards {
            if s.out.is_empty() {
                continue;
            }
            let t = Instant::now();
            s.stream.write_all(&s.out).await?;
            s.out.clear();
            if let Some(sched) = schedule {
                let mut st = ctx.stats.borrow_mut();
                for f in s.batch.iter().filter(|f| f.step == Step::Request) {
                    if let Some(i) = f.intended {
                        st.note_send(ctx.clock, i, t, sched.interval());
                    }
                }
            }
            for mut f in s.batch.drain(..) {
                if f.step == Step::Request {
                    f.sent = t;
                }
                s.in_flight.push_back(f);
            }
        }
        Ok(())
    }

    /// Waits until a connection with requests in flight has bytes: its index and the count
    /// read (0: the server closed it). `read_buf` is cancel safe, so polling it and dropping
    /// it unfinished loses nothing.
    async fn read(&mut self) -> (usize, io::Result<usize>) {
        let n = self.shards.len();
        let start = self.next_read;
        let shards = &mut self.shards;
        let (i, r) = std::future::poll_fn(|cx| {
            for k in 0..n {
                let i = (start + k) % n;
                let s = &mut shards[i];
                if s.in_flight.is_empty() {
                    continue;
                }
                let read = s.stream.read_buf(&mut s.input);
                let read = std::pin::pin!(read);
                if let std::task::Poll::Ready(r) = std::future::Future::poll(read, cx) {
                    return std::task::Poll::Ready((i, r));
                }
            }
            std::task::Poll::Pending
        })
        .await;
        self.next_read = (i + 1) % n;
        (i, r)
    }
}

/// Non-nil elements of an array reply: an MGET's hits, one per key found (memtier counts
/// `get_hits()` hits and `keys − hits` misses per MGET).
fn array_hits(reply: &[u8]) -> u64 {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return 0;
    };
    let count = std::str::from_utf8(&reply[1..end])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let mut pos = end + 2;
    let mut hits = 0;
    for _ in 0..count {
        match scan_reply(&reply[pos..]) {
            Ok(Some(s)) => {
                hits += u64::from(s.kind != ReplyKind::Miss);
                pos += s.len;
            }
            _ => break,
        }
    }
    hits
}

/// One client: keep up to `pipeline` requests in flight per connection; in closed loop
/// refill as replies come, in open loop send each request at its intended time (or as soon
/// as a slot frees). In cluster mode each request goes to its key's master; `-MOVED`
/// refreshes the slot map, `-ASK` is followed once with `ASKING`.
async fn drive(
    endpoint: &Endpoint,
    topology: Option<&Arc<Topology>>,
    mut conn: ConnPlan,
    ctx: &Ctx<'_>,
) -> io::Result<()> {
    let (clock, stop) = (ctx.clock, ctx.stop);
    let mut client = Client::open(endpoint, topology, ctx).await?;
    let mut req = RequestBuf::new();
    let mut sent = 0u64;
    let mut parked: Option<Parked> = None;
    let mut asks: Vec<(Endpoint, InFlight)> = Vec::new();
    let schedule = clock.schedule(Instant::now(), conn.index);
    loop {
        // A parked request past the deadline (or after a stop) is not sent.
        if parked.is_some() && !conn.may_send(sent - 1, clock.deadline, stop) {
            parked = None;
            sent -= 1;
        }
        let sending = parked.is_some() || conn.may_send(sent, clock.deadline, stop);
        // --reconnect-interval: close and reopen once the interval's replies are all in,
        // if there is more to send (memtier also reopens after the last one).
        if let Some(n) = ctx.reconnect {
            let s = &mut client.shards[0];
            if sending && s.on_connection >= n && s.pending() == 0 {
                s.stream = open(&s.node.clone(), ctx).await?;
                s.input.clear();
                s.on_connection = 0;
            }
        }
        let now = Instant::now();
        // Closed loop refills once half the window is free, not after every reply: each
        // write then carries at least pipeline/2 requests, so the server reads and answers
        // in batches (redis-benchmark waits for the whole window; memtier refills per reply,
        // which makes the server do one read per few requests).
        let window = clock.pipeline * client.shards.len();
        if schedule.is_some() || client.pending() <= window / 2 {
            loop {
                if let Some(p) = parked {
                    if !client.has_room(p.shard, ctx) {
                        break;
                    }
                    client.queue(p.shard, p, &req, now);
                    parked = None;
                }
                if !conn.may_send(sent, clock.deadline, stop) {
                    break;
                }
                let intended = match &schedule {
                    Some(s) if s.at(sent) > now => break,
                    Some(s) => Some(s.at(sent)),
                    None => None,
                };
                let kind = conn.gen.next_request(&mut req);
                sent += 1;
                let shard = client.route(kind, &req, ctx.map);
                parked = Some(Parked {
                    kind,
                    intended,
                    shard,
                });
            }
        }
        client.flush(schedule.as_ref(), ctx).await?;
        let sending = parked.is_some() || conn.may_send(sent, clock.deadline, stop);
        // Open loop: when the next request is due, if nothing waits for room.
        let next_due = match &schedule {
            Some(s) if sending && parked.is_none() => {
                let now = Instant::now();
                let cap = clock
                    .deadline
                    .map_or(now + MAX_NAP, |d| d.min(now + MAX_NAP));
                Some(s.at(sent).min(cap))
            }
            _ => None,
        };
        if client.pending() == 0 {
            match next_due {
                Some(t) => {
                    tokio::time::sleep_until(t.into()).await;
                    continue;
                }
                None if sending => continue,
                None => {
                    if let Some(s) = &schedule {
                        let end = clock.end(Instant::now());
                        ctx.stats.borrow_mut().dropped +=
                            s.dropped(sent, conn.limit, end, clock.measure_from);
                    }
                    return Ok(());
                }
            }
        }
        let (i, n) = match next_due {
            Some(t) => tokio::select! {
                r = client.read() => r,
                () = tokio::time::sleep_until(t.into()) => continue,
            },
            None => client.read().await,
        };
        let n = n?;
        let shard = &mut client.shards[i];
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} closed the connection with {} requests unanswered",
                    shard.node,
                    shard.in_flight.len()
                ),
            ));
        }
        let now = Instant::now();
        let mut pos = 0;
        let (mut ops, mut bytes, mut latency) = (0u64, 0u64, 0u64);
        let mut moved_to: Option<Endpoint> = None;
        {
            let mut st = ctx.stats.borrow_mut();
            let in_cluster = client.cluster.is_some();
            while let Some(reply) = scan_reply(&shard.input[pos..]).map_err(bad_reply)? {
                let body = &shard.input[pos..pos + reply.len];
                pos += reply.len;
                let Some(f) = shard.in_flight.pop_front() else {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a reply arrived for no request",
                    ));
                };
                let (row, counts_hits) = ctx.map.row(f.kind);
                let mut outcome = Outcome::Reply(reply.kind);
                match (f.step, reply.kind) {
                    (Step::Asking, _) => {
                        bytes += (f.tx + reply.len) as u64;
                        continue;
                    }
                    (_, ReplyKind::Error) if in_cluster => match cluster::redirect(body) {
                        Some(Redirect::Ask(node)) if f.step == Step::Request => {
                            st.note_ask(clock, row, f.intended.unwrap_or(f.sent));
                            asks.push((node, f));
                            continue;
                        }
                        Some(Redirect::Ask(_)) => outcome = Outcome::Ask,
                        Some(Redirect::Moved(node)) => {
                            outcome = Outcome::Moved;
                            moved_to = Some(node);
                        }
                        None => {}
                    },
                    (_, ReplyKind::Value) => {
                        if let RequestKind::MultiGet(keys) = f.kind {
                            outcome = Outcome::MultiGet {
                                hits: array_hits(body),
                                keys: u64::from(keys),
                            };
                        }
                    }
                    _ => {}
                }
                latency += st.record(
                    clock,
                    Sample {
                        row,
                        counts_hits,
                        outcome,
                        tx: f.tx,
                        rx: reply.len,
                        sent: f.sent,
                        intended: f.intended,
                        done: now,
                    },
                );
                ops += 1;
                bytes += (f.tx + reply.len) as u64;
                if let Some(copy) = f.copy {
                    client.spare.push(copy);
                }
            }
        }
        client.shards[i].input.drain(..pos);
        ctx.live.add(ops, bytes, latency);
        for (node, f) in asks.drain(..) {
            let s = client.shard_for(&node, ctx).await?;
            client.queue_ask(s, f);
        }
        if let Some(node) = moved_to {
            // memtier's handle_moved: read the slot map again (from the node that answered
            // for the slot now), then route by it; the parked request too.
            let topology = cluster::discover(&node, ctx.prelude)
                .await
                .map_err(io::Error::other)?;
            client.use_topology(Arc::new(topology), ctx).await?;
            if let Some(p) = &mut parked {
                p.shard = client.route(p.kind, &req, ctx.map);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(interval_ms: u64) -> (Instant, Schedule) {
        let t0 = Instant::now();
        (
            t0,
            Schedule {
                first: t0,
                interval_ns: (interval_ms * 1_000_000) as f64,
            },
        )
    }

    #[test]
    fn a_schedule_counts_its_slots_and_the_dropped_ones() {
        let (t0, s) = schedule(10);
        assert_eq!(s.at(3), t0 + Duration::from_millis(30));
        // Slots 0..=9 are due strictly before 100 ms.
        assert_eq!(s.slots_before(t0 + Duration::from_millis(100)), 10);
        assert_eq!(s.slots_before(t0 + Duration::from_millis(101)), 11);
        let end = t0 + Duration::from_millis(100);
        // 7 of 10 sent: 3 dropped; a -n share of 8 caps what was due.
        assert_eq!(s.dropped(7, None, end, t0), 3);
        assert_eq!(s.dropped(7, Some(8), end, t0), 1);
        assert_eq!(s.dropped(10, None, end, t0), 0);
        // Slots in the warm-up (before 50 ms: 0..=4) are not counted as dropped.
        assert_eq!(s.dropped(2, None, end, t0 + Duration::from_millis(50)), 5);
    }

    #[test]
    fn an_mget_counts_a_hit_or_a_miss_per_key() {
        // Over a socket: the array's nil elements are misses, the others hits.
        assert_eq!(array_hits(b"*3\r\n$1\r\nx\r\n$-1\r\n$0\r\n\r\n"), 2);
        assert_eq!(array_hits(b"*2\r\n$-1\r\n$-1\r\n"), 0);
        // In process: the same reply as the engine builds it.
        let reply = Reply::Array(vec![
            Reply::Bulk(b"x".to_vec()),
            Reply::Nil,
            Reply::Bulk(b"yz".to_vec()),
        ]);
        assert_eq!(
            classify(RequestKind::MultiGet(3), &reply),
            (Outcome::MultiGet { hits: 2, keys: 3 }, 3)
        );
        assert_eq!(
            classify(RequestKind::Get, &Reply::Nil),
            (Outcome::Reply(ReplyKind::Miss), 0)
        );
    }

    #[test]
    fn rates_are_per_connection() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            kv: crate::kv::KvArgs,
        }
        let cfg = |extra: &[&str]| {
            let mut argv = vec!["kv", "-t", "2", "-c", "5", "--test-time", "1"];
            argv.extend_from_slice(extra);
            let cli = <Cli as clap::Parser>::parse_from(argv);
            KvConfig::from_args(&cli.kv).unwrap()
        };
        assert_eq!(connection_rate(&cfg(&[])), None);
        assert_eq!(
            connection_rate(&cfg(&["--rate-limiting", "300"])),
            Some(300.0)
        );
        // --rate is the total: 1,000/s over 10 connections.
        assert_eq!(connection_rate(&cfg(&["--rate", "1000"])), Some(100.0));
    }
}
