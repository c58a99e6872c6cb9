//! What `test_ingestion` and `test_tx` share (reference §3): every map of `mapNames` runs at
//! the same time on its own thread, each with `threadCount` worker threads, each worker
//! running its share `testCount` times; a status line per `printStatusIntervalInSec`; a
//! results file per map, written the moment that map finishes.
//!
//! Invariants:
//! - A worker's time is PadoGrid's `totalElapsedTimeInMsec`: each run's loop time summed,
//!   without the `testIntervalInMsec` pauses and without opening its connection.
//! - Each worker has its own connection and its own HDR histogram (one sample per call or
//!   transaction); histograms merge when the map's workers join.
//! - Counters the status line reads are per map and only ever added to.
//!
//! The Redis layout of the PBM model (documented in docs/perf.md), every key of group `G`
//! (`G` = prefix + group number, e.g. `x1`) carrying the hash tag `{G}`:
//! - `eligibility:{G}`: a hash, field = the EligKey's identity, value =
//!   [`super::data::pbm_value`] (serialized EligKey + Blob);
//! - `profile:{G}`: a string, the group's one ClientProfileKey + Blob;
//! - `summary:{G}`: a hash of the GroupSummary's fields, written by `test_tx`'s `tx`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use redis::ConnectionLike;

use super::config::{PbmMapConfig, PbmTestConfig};
use super::results::{write_results_file, JavaTime, OpLatency, PbmRun};
use super::run::{op_latency, with_status, RunError};
use super::summary::{self, Columns, SummaryRow};
use crate::runner::stats::latency_histogram;
use crate::target::Connector;

/// One map's counters, shared by its workers and read by the status line.
#[derive(Debug, Default)]
pub struct MapCounters {
    /// Entries written, keys read, or transactions run.
    pub done: AtomicU64,
    /// Operations that found no data (tx: no profile for the group).
    pub missing: AtomicU64,
    /// `tx` attempts aborted by a concurrent change (WATCH) and run again.
    pub retries: AtomicU64,
}

/// What a worker needs in one run.
pub struct Worker<'a> {
    /// The whole configuration (prefix, memberSetSize).
    pub cfg: &'a PbmTestConfig,
    /// This map's settings.
    pub map: &'a PbmMapConfig,
    /// 1-based thread number.
    pub thread: u64,
    /// Set by Ctrl-C: stop between calls.
    pub stop: &'a AtomicBool,
    /// The map's counters.
    pub counters: &'a MapCounters,
    /// This worker's latency samples, ns.
    pub latency: &'a mut Histogram<u64>,
    /// Writes one of PadoGrid's per-thread messages (getAll size mismatches) to the status
    /// output.
    pub say: &'a (dyn Fn(&str) + Sync),
}

impl Worker<'_> {
    /// `totalEntryCount / threadCount`.
    pub fn per_thread(&self) -> u64 {
        self.map.entry_count_per_thread()
    }

    /// Runs `call` and records its latency.
    pub fn timed<T>(&mut self, call: impl FnOnce() -> T) -> T {
        let began = Instant::now();
        let out = call();
        let _ = self
            .latency
            .record(began.elapsed().as_nanos().max(1) as u64);
        out
    }

    /// Whether Ctrl-C asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// What one run of one worker does.
pub type Work = dyn Fn(&mut Worker<'_>, &mut dyn ConnectionLike) -> Result<(), String> + Sync;

/// One map's finished run: what its results file reports.
#[derive(Debug, Clone)]
pub struct MapOutcome {
    /// The map's settings.
    pub map: PbmMapConfig,
    /// When the map started (also the file-name stamp).
    pub start: JavaTime,
    /// When its workers had all joined.
    pub stop: JavaTime,
    /// Each worker's summed run time, ms.
    pub thread_ms: Vec<u64>,
    /// Entries, keys or transactions.
    pub count: u64,
    /// Operations on missing data.
    pub missing: u64,
    /// Aborted and retried transactions.
    pub retries: u64,
    /// Percentiles of the map's calls.
    pub latency: OpLatency,
}

impl MapOutcome {
    /// The markdown summary row of this map.
    pub fn summary_row(&self) -> SummaryRow {
        SummaryRow {
            name: format!("{} {}", self.map.map, self.map.test_case),
            threads: self.map.thread_count,
            count: self.count,
            max_ms: self.thread_ms.iter().copied().max().unwrap_or(0),
            latencies: vec![self.latency.clone()],
        }
    }
}

/// The `finish` of both tools: a map's [`PbmRun`] from its outcome, with its results file
/// written into `results_dir`.
pub fn write_run(
    cfg: &PbmTestConfig,
    product: &str,
    results_dir: &Path,
    o: MapOutcome,
) -> Result<(PbmRun, MapOutcome, PathBuf), RunError> {
    let m = &o.map;
    let run = PbmRun {
        test: cfg.test,
        product: product.to_string(),
        test_case: m.test_case.to_string(),
        map: m.map.to_string(),
        batch_size: m.batch_size,
        test_count: cfg.test_count,
        test_interval_ms: cfg.test_interval_ms,
        total_entry_count: m.total_entry_count,
        thread_count: m.thread_count,
        payload_size: m.payload_size,
        prefix: cfg.prefix.clone(),
        entry_count_per_thread: m.entry_count_per_thread(),
        start: o.start.clone(),
        stop: o.stop.clone(),
        count: o.count,
        missing: o.missing,
        thread_ms: o.thread_ms.clone(),
        latencies: vec![o.latency.clone()],
    };
    let path = write_results_file(results_dir, &run)?;
    Ok((run, o, path))
}

/// Runs every map of `cfg` at the same time; `finish` turns each map's outcome into its
/// results (and writes its file) as soon as the map is done. `count_label` is PadoGrid's
/// status word (`Entry Count`, `Transaction Count`). Results come back in `mapNames` order.
pub fn run_maps<R: Send>(
    cfg: &PbmTestConfig,
    connect: &Connector,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
    count_label: &str,
    work: &Work,
    finish: &(dyn Fn(MapOutcome) -> Result<R, RunError> + Sync),
) -> Result<Vec<R>, RunError> {
    let counters: Vec<MapCounters> = cfg.maps.iter().map(|_| MapCounters::default()).collect();
    let status = Mutex::new(status);
    let interval = Duration::from_secs(cfg.print_status_interval_sec.max(1));
    // PadoGrid's status lines: `[n sec] Entry Count (eligibility): N`, the labels
    // right-aligned on the longest map name.
    let line = |elapsed: Duration| {
        let secs = (elapsed.as_millis() + 500) / 1000;
        let width = count_label.len() + " (eligibility)".len();
        let mut out = String::new();
        for (m, c) in cfg.maps.iter().zip(&counters) {
            let label = format!("{count_label} ({})", m.map);
            out.push_str(&format!(
                "[{secs} sec] {label:>width$}: {}\n",
                c.done.load(Ordering::Relaxed)
            ));
        }
        out
    };
    let started = Instant::now();
    let results: Vec<Result<R, RunError>> = with_status(interval, &status, line, || {
        std::thread::scope(|s| {
            let handles: Vec<_> = cfg
                .maps
                .iter()
                .zip(&counters)
                .map(|(m, c)| {
                    let status = &status;
                    s.spawn(move || {
                        run_map(cfg, m, c, connect, stop, status, work).and_then(finish)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(RunError::Connect("a map thread panicked".into())))
                })
                .collect()
        })
    });
    if let Ok(mut w) = status.lock() {
        let _ = w.write_all(line(started.elapsed()).as_bytes());
    }
    results.into_iter().collect()
}

fn run_map(
    cfg: &PbmTestConfig,
    map: &PbmMapConfig,
    counters: &MapCounters,
    connect: &Connector,
    stop: &AtomicBool,
    status: &Mutex<&mut (dyn Write + Send)>,
    work: &Work,
) -> Result<MapOutcome, RunError> {
    let start = JavaTime::now_local();
    let threads = u64::from(map.thread_count.max(1));
    let outcomes: Vec<Result<(u64, Histogram<u64>), RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=threads)
            .map(|t| {
                s.spawn(move || run_worker(cfg, map, t, counters, connect, stop, status, work))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RunError::Connect("a worker thread panicked".into())))
            })
            .collect()
    });
    let mut thread_ms = Vec::with_capacity(outcomes.len());
    let mut merged = latency_histogram();
    for o in outcomes {
        let (ms, h) = o?;
        thread_ms.push(ms);
        let _ = merged.add(&h);
    }
    let name = format!("{} {}", map.map, map.test_case);
    Ok(MapOutcome {
        map: map.clone(),
        start,
        stop: JavaTime::now_local(),
        thread_ms,
        count: counters.done.load(Ordering::Relaxed),
        missing: counters.missing.load(Ordering::Relaxed),
        retries: counters.retries.load(Ordering::Relaxed),
        latency: op_latency(&name, &merged),
    })
}

#[allow(clippy::too_many_arguments)]
fn run_worker(
    cfg: &PbmTestConfig,
    map: &PbmMapConfig,
    thread: u64,
    counters: &MapCounters,
    connect: &Connector,
    stop: &AtomicBool,
    status: &Mutex<&mut (dyn Write + Send)>,
    work: &Work,
) -> Result<(u64, Histogram<u64>), RunError> {
    let mut con = connect().map_err(RunError::Connect)?;
    let mut latency = latency_histogram();
    let mut total_ms = 0;
    let say = |line: &str| {
        if let Ok(mut w) = status.lock() {
            let _ = writeln!(w, "{line}");
        }
    };
    for run in 0..cfg.test_count {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if run > 0 && cfg.test_interval_ms > 0 {
            std::thread::sleep(Duration::from_millis(cfg.test_interval_ms));
        }
        let mut w = Worker {
            cfg,
            map,
            thread,
            stop,
            counters,
            latency: &mut latency,
            say: &say,
        };
        let began = Instant::now();
        work(&mut w, con.as_mut()).map_err(|message| RunError::Map {
            map: map.map.to_string(),
            test_case: map.test_case.to_string(),
            message,
        })?;
        total_ms += began.elapsed().as_millis() as u64;
    }
    Ok((total_ms, latency))
}

/// Writes the markdown summary of a run's maps (`<stem>-<product>-<stamp>.md` in `dir`);
/// `notes` follow the table. Returns the table and the path.
pub fn write_summary(
    outcomes: &[&MapOutcome],
    cols: Columns,
    stem: &str,
    product: &str,
    dir: &Path,
    notes: &str,
) -> std::io::Result<(String, std::path::PathBuf)> {
    let rows: Vec<SummaryRow> = outcomes.iter().map(|o| o.summary_row()).collect();
    let table = summary::Summary {
        cols,
        rows,
        notes: notes.to_string(),
    };
    summary::write(dir, stem, product, &table)
}

/// A Redis reply of `HGETALL` (RESP2 flat array or RESP3 map) → the values.
pub fn hash_values(reply: redis::Value) -> Vec<Vec<u8>> {
    use redis::Value;
    let bytes = |v: Value| match v {
        Value::BulkString(b) => b,
        Value::SimpleString(s) => s.into_bytes(),
        _ => Vec::new(),
    };
    match reply {
        Value::Array(items) => items.into_iter().skip(1).step_by(2).map(bytes).collect(),
        Value::Map(pairs) => pairs.into_iter().map(|(_, v)| bytes(v)).collect(),
        _ => Vec::new(),
    }
}

/// What `test_ingestion`/`test_tx` print before running (`configuration` = without `-run`),
/// line for line as PadoGrid's `main` prints it (its odd indentation included).
pub fn describe(cfg: &PbmTestConfig, prop: &Path, product: &str, configuration: bool) -> String {
    use super::config::{PbmTest, PbmTestCase};
    use super::results::fmt3;
    use std::fmt::Write as _;
    let ingestion = cfg.test == PbmTest::Ingestion;
    let title = match (ingestion, configuration) {
        (true, true) => "Data Ingestion Test Configuration",
        (true, false) => "Data Ingestion Test",
        (false, true) => "Transaction Test Configuration",
        (false, false) => "Transaction Test",
    };
    let bar = "***************************************";
    let mut o = String::new();
    let _ = writeln!(o, "\n{bar}\n{title}\n{bar}\n");
    let abs = std::path::absolute(prop).unwrap_or_else(|_| prop.to_path_buf());
    let _ = writeln!(o, "Configuration File: {}\n", abs.display());
    let product_pad = if ingestion { 21 } else { 26 };
    let _ = writeln!(o, "{:>w$}: {product}", "Product", w = product_pad + 7);
    let l = |o: &mut String, label: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(o, "{label:>33}: {v}");
    };
    l(&mut o, "Test Run Count", &cfg.test_count);
    l(&mut o, "Test Run Interval (msec)", &cfg.test_interval_ms);
    for m in &cfg.maps {
        let per = m.entry_count_per_thread();
        o.push('\n');
        l(&mut o, "Test Case", &m.test_case);
        l(&mut o, "Map", &m.map);
        match m.test_case {
            PbmTestCase::PutAll if ingestion => l(&mut o, "PutAll Batch Size", &m.batch_size),
            PbmTestCase::GetAll if !ingestion => l(&mut o, "GetAll Batch Size", &m.batch_size),
            _ => {}
        }
        l(&mut o, "Total Entry Count Per Test", &m.total_entry_count);
        l(&mut o, "Thread Count", &m.thread_count);
        l(&mut o, "Entry Count Per Thread", &per);
        l(
            &mut o,
            "Actual Total Entry Count Per Test",
            &(per * u64::from(m.thread_count)),
        );
        if ingestion {
            let bytes = m.payload_size as f64 * m.total_entry_count as f64;
            l(&mut o, "Payload Size (bytes)", &m.payload_size);
            l(&mut o, "**Total Volume (KiB)", &fmt3(bytes / 1024.0));
            l(
                &mut o,
                "**Total Volume (MiB)",
                &fmt3(bytes / 1024.0 / 1024.0),
            );
            l(
                &mut o,
                "**Total Volume (GiB)",
                &fmt3(bytes / 1024.0 / 1024.0 / 1024.0),
            );
        }
        l(&mut o, "Prefix", &cfg.prefix);
        if ingestion {
            o.push('\n');
        }
    }
    o.push('\n');
    o
}
