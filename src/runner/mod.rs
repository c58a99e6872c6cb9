//! The runner: `go test -bench` semantics, with every operation's latency in an HDR histogram.
//!
//! [`Runner::run`] calls an operation `op(i)` for `i in 0..N` in rounds, exactly as Go's
//! `testing.B` does (Go 1.21+ `launch`): a first round with N = 1, then N predicted from the
//! previous round to fill `--benchtime`, times 1.2, at most 100× the previous N, at least one
//! more, at most 1e9; until a round lasts `--benchtime`. With `Nx` the second round runs
//! exactly N. As in Go, `i` restarts at 0 each round and the reported figures are those of
//! the last round: ns/op = round time / N, B/op and allocs/op integer-divided by N.
//!
//! The timing loop reads the clock once per operation (the end of one operation is the start
//! of the next), records the difference into a preallocated histogram and checks the
//! interrupt flag. It allocates nothing, so B/op and allocs/op are the operation's own; the
//! histogram's record and the flag check (a few ns) fall into the next operation's latency.
//! `benches/runner.rs` measures the whole per-operation overhead with a no-op operation.
//!
//! [`Runner::run_parallel`] is Go's `b.RunParallel`: the same rounds, each round's N
//! operations shared among one thread per worker (`parallel`), calibrated on the round's wall
//! time.
//!
//! The clock is a type parameter so tests drive the runner with a scripted fake clock and
//! assert calibration and percentiles exactly.

pub mod alloc;
pub mod barrier;
pub mod benchtime;
mod parallel;
pub mod stats;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

pub use benchtime::{parse_duration, BenchTime, DurationError};

use crate::results::Measurement;

/// Largest latency the histogram holds: one hour, in ns. Longer operations saturate at it.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// HDR precision: 3 significant digits (0.1% worst-case error), the usual HdrHistogram setting.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Go's cap on N.
const MAX_N: u64 = 1_000_000_000;

/// A monotonic clock in nanoseconds.
pub trait Clock {
    /// Nanoseconds since an arbitrary fixed origin; never decreases.
    fn now_ns(&self) -> u64;
}

/// The real clock: `Instant` (CLOCK_MONOTONIC through the vDSO on Linux).
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}

/// Why a benchmark did not produce a measurement.
#[derive(Debug)]
pub enum RunError<E> {
    /// The operation failed; the error is the operation's own.
    Op(E),
    /// The interrupt flag was raised (Ctrl-C).
    Interrupted,
}

/// One round as it finished, for progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// N of the round.
    pub n: u64,
    /// How long the round took, ns.
    pub elapsed_ns: u64,
}

/// A finished round and what it allocated, or why it stopped.
type RoundResult<E> = Result<(Round, alloc::AllocSnapshot), RunError<E>>;

/// Runs benchmarks; reuse one runner for many benchmarks (it owns the histogram buffer).
pub struct Runner<C: Clock = MonotonicClock> {
    clock: C,
    benchtime: BenchTime,
    histogram: Histogram<u64>,
    /// One per thread of a parallel round, grown to the most threads used.
    worker_histograms: Vec<Histogram<u64>>,
    interrupted: Arc<AtomicBool>,
}

impl Runner<MonotonicClock> {
    /// A runner on the real clock.
    pub fn new(benchtime: BenchTime, interrupted: Arc<AtomicBool>) -> Self {
        Runner::with_clock(MonotonicClock::default(), benchtime, interrupted)
    }
}

impl<C: Clock> Runner<C> {
    /// A runner on the given clock.
    pub fn with_clock(clock: C, benchtime: BenchTime, interrupted: Arc<AtomicBool>) -> Self {
        Runner {
            clock,
            benchtime,
            histogram: latency_histogram(),
            worker_histograms: Vec::new(),
            interrupted,
        }
    }

    /// The configured benchtime.
    pub fn benchtime(&self) -> BenchTime {
        self.benchtime
    }

    /// Runs `op` in Go-style rounds and measures the last one. `on_round` is called after
    /// each round (outside any timing).
    pub fn run<E>(
        &mut self,
        mut op: impl FnMut(u64) -> Result<(), E>,
        mut on_round: impl FnMut(Round),
    ) -> Result<Measurement, RunError<E>> {
        self.run_on(&mut (), |(), i| op(i), |(), round| on_round(round))
    }

    /// [`Runner::run`] with a worker that both `op(worker, i)` and `on_round(worker, round)`
    /// reach, so that between rounds, outside any timing, the caller can ask the worker
    /// something (a store its size, as a Go benchmark does with its timer stopped).
    pub fn run_on<W: ?Sized, E>(
        &mut self,
        worker: &mut W,
        mut op: impl FnMut(&mut W, u64) -> Result<(), E>,
        on_round: impl FnMut(&mut W, Round),
    ) -> Result<Measurement, RunError<E>> {
        self.calibrate(
            worker,
            |runner, w, n, _| runner.round(n, &mut |i| op(w, i)),
            on_round,
        )
    }

    /// Go's `b.RunParallel`: each round's `n` iterations are shared among one thread per
    /// worker (module `parallel`); `op(worker, i)` runs iteration `i` on that thread's worker,
    /// e.g. its own connection. Rounds are calibrated as in [`Runner::run`], on the round's
    /// wall time, so ns/op is wall time over all operations; the histogram holds every
    /// operation's own latency. The first error of any worker stops them all. `on_round`
    /// gets the workers between rounds, as [`Runner::run_on`]'s does.
    pub fn run_parallel<W: Send, E: Send>(
        &mut self,
        workers: &mut [W],
        op: &(dyn Fn(&mut W, u64) -> Result<(), E> + Sync),
        on_round: impl FnMut(&mut [W], Round),
    ) -> Result<Measurement, RunError<E>>
    where
        C: Sync,
    {
        self.calibrate(
            workers,
            |runner, workers, n, previous| runner.parallel_round(n, previous, workers, op),
            on_round,
        )
    }

    /// The rounds of Go's `launch`: `round(runner, state, n, previous)` runs one timed round
    /// of `n` operations (`previous` is the round before, for `parallel::grain`), and
    /// `on_round(state, round)` follows each. Both get `state`, one after the other.
    fn calibrate<S: ?Sized, E>(
        &mut self,
        state: &mut S,
        mut round: impl FnMut(&mut Self, &mut S, u64, Option<Round>) -> RoundResult<E>,
        mut on_round: impl FnMut(&mut S, Round),
    ) -> Result<Measurement, RunError<E>> {
        let mut last = round(self, state, 1, None)?;
        on_round(state, last.0);
        match self.benchtime {
            BenchTime::Iterations(n) => {
                if n > 1 {
                    last = round(self, state, n, Some(last.0))?;
                    on_round(state, last.0);
                }
            }
            BenchTime::Duration(d) => {
                let goal_ns = d.as_nanos().min(u128::from(u64::MAX)) as u64;
                let mut n: u64 = 1;
                while last.0.elapsed_ns < goal_ns && n < MAX_N {
                    n = next_n(goal_ns, last.0.n, last.0.elapsed_ns, n);
                    last = round(self, state, n, Some(last.0))?;
                    on_round(state, last.0);
                }
            }
        }
        let (last, allocs) = last;
        Ok(self.measurement(last, allocs))
    }

    /// One timed round of `n` operations.
    fn round<E>(&mut self, n: u64, op: &mut impl FnMut(u64) -> Result<(), E>) -> RoundResult<E> {
        self.histogram.reset();
        let before = alloc::snapshot();
        let start = self.clock.now_ns();
        let mut prev = start;
        for i in 0..n {
            op(i).map_err(RunError::Op)?;
            let now = self.clock.now_ns();
            self.histogram.saturating_record(now - prev);
            prev = now;
            if self.interrupted.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
        }
        Ok((
            Round {
                n,
                elapsed_ns: prev - start,
            },
            alloc::snapshot().since(before),
        ))
    }

    fn measurement(&self, round: Round, used: alloc::AllocSnapshot) -> Measurement {
        let h = &self.histogram;
        let mut serialized = Vec::new();
        // Serializing into a Vec cannot fail for a histogram with valid bounds; an empty
        // string only loses the exportable histogram, never the figures.
        let histogram = match V2DeflateSerializer::new().serialize(h, &mut serialized) {
            Ok(_) => base64::engine::general_purpose::STANDARD.encode(&serialized),
            Err(_) => String::new(),
        };
        Measurement {
            n: round.n,
            ns_per_op: round.elapsed_ns as f64 / round.n as f64,
            bytes_per_op: used.bytes / round.n,
            allocs_per_op: used.allocs / round.n,
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            histogram,
            store_bytes_per_op: None,
        }
    }
}

/// An empty histogram of single-operation latencies, 1 ns to an hour (about 256 KiB).
fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// Go's prediction of the next N (`testing.(*B).launch`, Go 1.21+).
fn next_n(goal_ns: u64, prev_n: u64, prev_ns: u64, last: u64) -> u64 {
    let prev_ns = prev_ns.max(1);
    let mut n = (u128::from(goal_ns) * u128::from(prev_n) / u128::from(prev_ns))
        .min(u128::from(u64::MAX)) as u64;
    // Run more iterations than we think we'll need (1.2x).
    n = n.saturating_add(n / 5);
    // Don't grow too fast in case we had timing errors previously.
    n = n.min(last.saturating_mul(100));
    // Be sure to run at least one more than last time.
    n = n.max(last + 1);
    n.min(MAX_N)
}

/// A duration as ns, saturating.
pub fn duration_ns(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_n_follows_go() {
        // 1 op took 1 µs, goal 1 ms: predict 1000, ×1.2 = 1200, capped at 100 × 1.
        assert_eq!(next_n(1_000_000, 1, 1_000, 1), 100);
        // 100 ops took 100 µs: predict 1000 × 1.2 = 1200 (< 100 × 100).
        assert_eq!(next_n(1_000_000, 100, 100_000, 100), 1200);
        // A round that took longer than the goal still grows by one.
        assert_eq!(next_n(1_000, 10, 1_000_000, 10), 11);
        // Zero elapsed is treated as 1 ns: growth is then capped at 100×, and N at 1e9.
        assert_eq!(next_n(1_000_000_000, 1_000_000, 0, 1_000_000), 100_000_000);
        assert_eq!(next_n(1_000_000_000, 100_000_000, 0, 100_000_000), MAX_N);
    }
}
