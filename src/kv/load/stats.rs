//! What a run measures: per output row ([`RowStats`]: Sets, Gets, or one per `--command`)
//! counts and HDR latency histograms, per second of the run ([`SecondStats`]), per client
//! thread ([`ThreadStats`], merged when the threads join) and for the run ([`LoadResult`],
//! with memtier's Totals and `-x` aggregate); and the live counters ([`Live`]).
//!
//! Invariants: a reply is recorded once, in the row of its request's kind, unless its
//! (intended) send time falls in the warm-up; latency from the actual send is always
//! recorded, latency from the intended send only in open loop; merging adds counts and
//! histograms, so any split of the same replies over threads or runs gives the same totals.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;

use super::schedule::Clock;
use crate::kv::conn_gen::RequestKind;
use crate::kv::options::KvConfig;
use crate::resp::scan::ReplyKind;
use crate::runner::stats::latency_histogram;

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
    /// Cluster mode: a primary stopped answering and the load waited for a new one.
    pub failover: Option<Failover>,
}

/// A failover seen by the load (cluster mode): a primary's connection broke, and the clients
/// that used it waited until the slot map named another primary for its slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failover {
    /// When the first connection to the failed primary broke.
    pub broke: Instant,
    /// When the last client waiting resumed on the new slot map (`None`: the run ended
    /// first).
    pub resumed: Option<Instant>,
    /// Requests in flight on the broken connections: sent, never answered, counted as errors.
    pub lost: u64,
}

impl Failover {
    /// Both clients' failovers as one: from the first break to the last resume.
    pub fn merge(a: Option<Failover>, b: Option<Failover>) -> Option<Failover> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Failover {
                broke: a.broke.min(b.broke),
                resumed: a.resumed.zip(b.resumed).map(|(x, y)| x.max(y)),
                lost: a.lost + b.lost,
            }),
            (a, b) => a.or(b),
        }
    }

    /// How long the load had no primary for some slots, if it found one again.
    pub fn window(&self) -> Option<Duration> {
        self.resumed
            .map(|r| r.saturating_duration_since(self.broke))
    }
}

impl ThreadStats {
    pub(super) fn new(rows: usize) -> ThreadStats {
        ThreadStats {
            rows: (0..rows).map(|_| RowStats::default()).collect(),
            seconds: Vec::new(),
            late: 0,
            dropped: 0,
            failover: None,
        }
    }

    pub(super) fn add(&mut self, other: &ThreadStats) {
        for (m, s) in self.rows.iter_mut().zip(&other.rows) {
            m.add(s);
        }
        add_seconds(&mut self.seconds, &other.seconds, self.rows.len());
        self.late += other.late;
        self.dropped += other.dropped;
        self.failover = Failover::merge(self.failover, other.failover);
    }
}

/// Adds `theirs` (`[second][row]`) into `mine`, second by second, growing `mine` (with
/// `rows` rows a second) to the longer of the two.
pub fn add_seconds(mine: &mut Vec<Vec<SecondStats>>, theirs: &[Vec<SecondStats>], rows: usize) {
    if mine.len() < theirs.len() {
        mine.resize_with(theirs.len(), || {
            (0..rows).map(|_| SecondStats::default()).collect()
        });
    }
    for (m, t) in mine.iter_mut().zip(theirs) {
        for (m, s) in m.iter_mut().zip(t) {
            m.add(s);
        }
    }
}

/// What a reply counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
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
pub(super) struct Sample {
    pub(super) row: usize,
    pub(super) counts_hits: bool,
    pub(super) outcome: Outcome,
    pub(super) tx: usize,
    pub(super) rx: usize,
    /// When its batch went out.
    pub(super) sent: Instant,
    /// When it should have gone out (open loop).
    pub(super) intended: Option<Instant>,
    /// When its reply was complete.
    pub(super) done: Instant,
}

impl ThreadStats {
    /// Records one reply unless it belongs to the warm-up. Returns its latency (ns) for the
    /// live line.
    pub(super) fn record(&mut self, clock: &Clock, s: Sample) -> u64 {
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
    pub(super) fn note_ask(&mut self, clock: &Clock, row: usize, sent: Instant) {
        if sent >= clock.measure_from {
            self.rows[row].ask += 1;
        }
    }

    /// Counts a request sent `behind` after its intended time (open loop).
    pub(super) fn note_send(
        &mut self,
        clock: &Clock,
        intended: Instant,
        sent: Instant,
        interval: Duration,
    ) {
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
    /// Cluster mode: the failover the load went through, if any.
    pub failover: Option<FailoverReport>,
}

/// A failover as a run reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailoverReport {
    /// When the first connection broke, after the measured start.
    pub after: Duration,
    /// How long until every waiting client had a primary again; `None`: the run ended first.
    pub window: Option<Duration>,
    /// Requests in flight on the broken connections (counted as errors).
    pub lost: u64,
}

impl FailoverReport {
    /// One line for people: when, how long, what was lost.
    pub fn describe(&self) -> String {
        let after = self.after.as_secs_f64();
        match self.window {
            Some(w) => format!(
                "a primary stopped answering {after:.3} s into the run; {} requests in flight \
                 were lost (counted as errors); the slot map named a new primary {:.3} s later \
                 (the failover window)",
                self.lost,
                w.as_secs_f64()
            ),
            None => format!(
                "a primary stopped answering {after:.3} s into the run; {} requests in flight \
                 were lost (counted as errors); no new primary was named before the run ended",
                self.lost
            ),
        }
    }
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
            out.failover = out.failover.or(r.failover);
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
    pub(super) fn add(&self, ops: u64, bytes: u64, latency_ns: u64) {
        if ops > 0 {
            self.ops.fetch_add(ops, Ordering::Relaxed);
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
            self.latency_ns.fetch_add(latency_ns, Ordering::Relaxed);
        }
    }
}

/// The row `--wait-ratio`'s WAITs count in (memtier's name).
pub const WAITS_ROW: &str = "Waits";

/// The rows of a configuration and which row each request kind counts in.
pub(super) fn row_names(cfg: &KvConfig) -> Vec<String> {
    if cfg.commands.is_empty() {
        let mut names = vec!["Sets".to_string(), "Gets".to_string()];
        // memtier's Waits row, measured when --wait-ratio sends WAITs.
        if cfg.wait_ratio.is_some() {
            names.push(WAITS_ROW.to_string());
        }
        names
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
pub(super) struct RowMap {
    pub(super) command_rows: Vec<usize>,
    /// Per `--command`: the argument holding its first key, if it has one.
    pub(super) command_keys: Vec<Option<usize>>,
    /// Per `--command`: whether it may write (`--wait N` follows it with WAIT).
    pub(super) command_writes: Vec<bool>,
}

impl RowMap {
    pub(super) fn new(cfg: &KvConfig, names: &[String]) -> RowMap {
        let command_rows = cfg
            .commands
            .iter()
            .map(|c| {
                let name = if cfg.stats_by_line { &c.text } else { &c.name };
                names.iter().position(|n| n == name).unwrap_or(0)
            })
            .collect();
        let command_keys = cfg.commands.iter().map(|c| c.key_arg()).collect();
        let command_writes = cfg
            .commands
            .iter()
            .map(|c| crate::target::may_write(c.name.as_bytes()))
            .collect();
        RowMap {
            command_rows,
            command_keys,
            command_writes,
        }
    }

    /// The argument that holds the (first) key of a request of this kind: what cluster mode
    /// routes by. `None` for a keyless command.
    pub(super) fn key_arg(&self, kind: RequestKind) -> Option<usize> {
        match kind {
            RequestKind::Set | RequestKind::Get | RequestKind::MultiGet(_) => Some(1),
            RequestKind::Command(i) => self.command_keys[i],
            RequestKind::Wait => None,
        }
    }

    /// Whether a request of this kind may write: what `--wait N` follows with `WAIT N 0`
    /// (the classification coredata's `--wait` uses, [`crate::target::may_write`]).
    pub(super) fn writes(&self, kind: RequestKind) -> bool {
        match kind {
            RequestKind::Set => true,
            RequestKind::Get | RequestKind::MultiGet(_) | RequestKind::Wait => false,
            RequestKind::Command(i) => self.command_writes[i],
        }
    }

    pub(super) fn row(&self, kind: RequestKind) -> (usize, bool) {
        match kind {
            RequestKind::Set => (0, false),
            RequestKind::Get | RequestKind::MultiGet(_) => (1, true),
            // memtier counts no hits or misses for arbitrary commands (its text shows `---`).
            RequestKind::Command(i) => (self.command_rows[i], false),
            // The row after Sets and Gets; it exists whenever WAITs are generated.
            RequestKind::Wait => (2, false),
        }
    }
}
