//! One load or run of a workload on one target: YCSB's `Client` and `ClientThread`. Each
//! client thread opens its own store, does its share of the operations (the count split as
//! YCSB splits it: `operationcount / threads`, one more for the first `operationcount %
//! threads`), throttled to its share of `-target` on YCSB's schedule (operation `i` of a
//! thread is intended to start at `thread start + i × tick`; it is measured from there as
//! well as from its actual start), and closes its store (`CLEANUP`). With `-s`, a status
//! line every `status.interval` seconds on stderr, as YCSB's `StatusThread` prints it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::config::Workload;
use super::measure::{Measurements, Op, Status};
use super::workload::{ClientWorkload, Clock, Shared};
use crate::store::ycsb::{YcsbOpener, YcsbStore};

/// Whether the phase loads records or runs transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `load` (YCSB's `-load`): insert the records.
    Load,
    /// `run` (YCSB's `-t`): the workload's operations.
    Run,
}

/// How a phase is run, besides its workload.
#[derive(Debug, Clone)]
pub struct PhaseOptions {
    /// `-s`: print status lines.
    pub status: bool,
    /// `-l`: the label status lines start with.
    pub label: String,
}

/// What a phase measured.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    /// Every thread's measurements, merged.
    pub measurements: Measurements,
    /// From the first thread's start to the last thread's end (YCSB's `RunTime(ms)`).
    pub runtime: Duration,
    /// Why it ended early (every client failed to connect, Ctrl-C), if it did.
    pub stopped: Option<String>,
}

impl PhaseResult {
    /// Operations per second over the runtime (YCSB's `Throughput(ops/sec)`).
    pub fn throughput(&self) -> f64 {
        let secs = self.runtime.as_secs_f64();
        if secs > 0.0 {
            self.measurements.operations() as f64 / secs
        } else {
            0.0
        }
    }
}

/// A thread's counter of finished operations, alone on its cache line.
#[repr(align(64))]
#[derive(Default)]
struct Done(AtomicU64);

/// Runs `phase` of `w` on stores from `opener`. `stop` (Ctrl-C) ends it early; what was
/// measured is kept.
pub fn run_phase(
    opener: &YcsbOpener,
    w: &Arc<Workload>,
    phase: Phase,
    options: &PhaseOptions,
    stop: &AtomicBool,
    status_out: &mut (dyn Write + Send),
) -> PhaseResult {
    let threads = w.threads;
    let total = match phase {
        Phase::Load => w.insertcount,
        Phase::Run => w.operationcount,
    };
    let unbounded = phase == Phase::Run && total == 0;
    let shared = Shared::new(w);
    let clock = Clock(Instant::now());
    let done: Vec<Done> = (0..threads).map(|_| Done::default()).collect();
    let epoch = AtomicU64::new(0);
    let interval_sum = Mutex::new(Measurements::default());
    let finished = AtomicU64::new(0);
    let deadline = (w.maxexecutiontime > 0).then(|| Duration::from_secs(w.maxexecutiontime));
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let per_thread_target = w.target / threads as f64;
    let tick_ns = (per_thread_target > 0.0).then(|| 1e9 / per_thread_target);

    let mut results: Vec<Measurements> = Vec::with_capacity(threads as usize);
    let mut end_ns = 0u64;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for t in 0..threads {
            let mine = total / threads + u64::from(t < total % threads);
            let (shared, clock, done, epoch, interval_sum) =
                (&shared, &clock, &done[t as usize], &epoch, &interval_sum);
            let (failures, finished) = (&failures, &finished);
            let w = Arc::clone(w);
            handles.push(scope.spawn(move || {
                let mut total_m = Measurements::default();
                let mut store: Box<dyn YcsbStore> = match opener() {
                    Ok(s) => s,
                    Err(e) => {
                        lock(failures).push(format!("client {t}: cannot open a store: {e}"));
                        finished.fetch_add(1, Ordering::Relaxed);
                        return (total_m, clock.now());
                    }
                };
                let mut client = ClientWorkload::new(Arc::clone(&w), shared, t);
                let mut m = Measurements::default();
                let mut seen_epoch = 0;
                let start = clock.now();
                let mut i = 0u64;
                let mut failed_in_a_row = 0u32;
                while unbounded || i < mine {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Some(d) = deadline {
                        if clock.now() >= d.as_nanos() as u64 {
                            break;
                        }
                    }
                    let intended = tick_ns.map(|tick| {
                        let at = start + (i as f64 * tick) as u64;
                        let now = wait_until(clock, at);
                        m.record_lag(now.saturating_sub(at));
                        at
                    });
                    let status = match phase {
                        Phase::Load => client.load_one(
                            store.as_mut(),
                            &mut m,
                            clock,
                            intended,
                            &shared.keysequence,
                        ),
                        Phase::Run => client.transaction(store.as_mut(), &mut m, clock, intended),
                    };
                    // A store that fails every call (its server died) ends the thread
                    // rather than spinning through its share in errors.
                    if status == Status::Error {
                        failed_in_a_row += 1;
                        if failed_in_a_row >= 1000 {
                            lock(failures).push(format!(
                                "client {t}: 1,000 operations in a row failed; it stopped"
                            ));
                            break;
                        }
                    } else {
                        failed_in_a_row = 0;
                    }
                    m.done();
                    i += 1;
                    done.0.store(i, Ordering::Relaxed);
                    let now_epoch = epoch.load(Ordering::Relaxed);
                    if now_epoch != seen_epoch {
                        seen_epoch = now_epoch;
                        lock(interval_sum).add(&m);
                        total_m.add(&m);
                        m.reset();
                    }
                }
                let cleanup = clock.now();
                drop(store);
                let end = clock.now();
                m.record(Op::Cleanup, Status::Ok, cleanup, cleanup, end);
                total_m.add(&m);
                finished.fetch_add(1, Ordering::Relaxed);
                (total_m, end)
            }));
        }
        if options.status {
            status_loop(
                w,
                options,
                &clock,
                &done,
                &epoch,
                &interval_sum,
                &finished,
                total,
                status_out,
            );
        }
        for h in handles {
            match h.join() {
                Ok((m, end)) => {
                    end_ns = end_ns.max(end);
                    results.push(m);
                }
                Err(_) => lock(&failures).push("a client thread panicked".to_string()),
            }
        }
    });
    let mut measurements = Measurements::default();
    for m in &results {
        measurements.add(m);
    }
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let stopped = if stop.load(Ordering::Relaxed) {
        Some("interrupted".to_string())
    } else if !failures.is_empty() {
        Some(failures.join("; "))
    } else {
        None
    };
    PhaseResult {
        measurements,
        runtime: Duration::from_nanos(end_ns),
        stopped,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits until `at` (ns on `clock`): sleeps while more than 200 µs remain, then yields, so
/// a thread starts within microseconds of its intended start without burning a core on
/// long waits. Returns the time it woke.
fn wait_until(clock: &Clock, at: u64) -> u64 {
    loop {
        let now = clock.now();
        if now >= at {
            return now;
        }
        let left = at - now;
        if left > 200_000 {
            std::thread::sleep(Duration::from_nanos(left - 150_000));
        } else {
            std::thread::yield_now();
        }
    }
}

/// YCSB's `StatusThread`: every `status.interval` seconds until every thread finished.
#[allow(clippy::too_many_arguments)]
fn status_loop(
    w: &Workload,
    options: &PhaseOptions,
    clock: &Clock,
    done: &[Done],
    epoch: &AtomicU64,
    interval_sum: &Mutex<Measurements>,
    finished: &AtomicU64,
    total: u64,
    out: &mut (dyn Write + Send),
) {
    let every = Duration::from_secs(w.status_interval);
    let mut last = (0u64, Duration::ZERO);
    let mut next = every;
    while finished.load(Ordering::Relaxed) < done.len() as u64 {
        let now = clock.0.elapsed();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += every;
        // Ask the threads for their interval's measurements, give them a moment.
        epoch.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
        let ops: u64 = done.iter().map(|d| d.0.load(Ordering::Relaxed)).sum();
        let elapsed = clock.0.elapsed();
        let interval = std::mem::take(&mut *lock(interval_sum));
        let _ = writeln!(
            out,
            "{}",
            status_line(&options.label, elapsed, ops, last, total, &interval)
        );
        last = (ops, elapsed);
    }
}

/// One status line: `2026-12-07 20:40:00:123 10 sec: 1000 operations; 99.9 current ops/sec;
/// est completion in 1 minute [READ: Count=…, Max=…, Min=…, Avg=…, 90=…, 99=…, 99.9=…,
/// 99.99=…]`, latencies in µs.
pub fn status_line(
    label: &str,
    elapsed: Duration,
    ops: u64,
    last: (u64, Duration),
    total: u64,
    interval: &Measurements,
) -> String {
    let stamp = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S:%3f");
    let span = (elapsed - last.1).as_secs_f64();
    let current = if span > 0.0 {
        (ops - last.0) as f64 / span
    } else {
        0.0
    };
    let mut line = format!(
        "{stamp} {}{} sec: {ops} operations; {} current ops/sec; ",
        if label.is_empty() {
            String::new()
        } else {
            format!("{label} ")
        },
        elapsed.as_secs(),
        two_places(current)
    );
    if total > 0 && ops > 0 && ops < total {
        let left = elapsed.as_secs_f64() * (total - ops) as f64 / ops as f64;
        line.push_str(&format!("est completion in {} ", remaining(left as u64)));
    }
    for (op, m) in interval.measured() {
        for (name, h) in [
            (op.name().to_string(), &m.ok),
            (format!("{}-FAILED", op.name()), &m.failed),
        ] {
            if h.is_empty() {
                continue;
            }
            let us = |v: u64| v / 1000;
            line.push_str(&format!(
                "[{name}: Count={}, Max={}, Min={}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}] ",
                h.len(),
                us(h.max()),
                us(h.min()),
                two_places(h.mean() / 1000.0),
                us(h.value_at_quantile(0.90)),
                us(h.value_at_quantile(0.99)),
                us(h.value_at_quantile(0.999)),
                us(h.value_at_quantile(0.9999)),
            ));
        }
    }
    line.trim_end().to_string()
}

/// Java's `DecimalFormat("#.##")`: at most two decimals, no trailing zeros.
fn two_places(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// YCSB's `RemainingFormatter`: the largest two units that are not zero.
fn remaining(secs: u64) -> String {
    let units = [
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ];
    let mut parts = Vec::new();
    let mut left = secs;
    for (name, size) in units {
        let n = left / size;
        left %= size;
        if n > 0 || (parts.is_empty() && size == 1) {
            parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
        }
        if parts.len() == 2 {
            break;
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_read_as_ycsbs() {
        let mut m = Measurements::default();
        m.record(Op::Read, Status::Ok, 0, 0, 2_000);
        m.record(Op::Read, Status::Ok, 0, 0, 4_000);
        let line = status_line(
            "",
            Duration::from_secs(10),
            1500,
            (500, Duration::from_secs(5)),
            3000,
            &m,
        );
        let rest = line.split_once(' ').unwrap().1.split_once(' ').unwrap().1;
        assert_eq!(
            rest,
            "10 sec: 1500 operations; 200 current ops/sec; est completion in 10 seconds \
             [READ: Count=2, Max=4, Min=2, Avg=3, 90=4, 99=4, 99.9=4, 99.99=4]"
        );
        assert_eq!(two_places(12.345), "12.35");
        assert_eq!(two_places(7.0), "7");
        assert_eq!(remaining(3_725), "1 hour 2 minutes");
        assert_eq!(remaining(0), "0 seconds");
    }
}
