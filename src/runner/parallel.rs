//! The parallel round: Go's `b.RunParallel` under `go test -cpu P`.
//!
//! One scoped thread per worker (a worker is whatever the operation needs of its own, e.g. a
//! store on its own connection, opened by the caller before any timing). The round's `n`
//! iterations are handed out from one shared counter in batches of [`grain`], so every index
//! `0..n` runs exactly once, on whichever thread takes it, and a slow worker does not hold
//! the round up by more than one batch. Each thread times its own operations into its own
//! preallocated histogram; the histograms are merged after the round.
//!
//! What is measured, as in Go: the round's wall time, from opening the start gate to the end
//! of the last operation of any thread (ns/op = that over `n`), and the allocations of the
//! whole process between the two (B/op and allocs/op = the total of every thread over `n`).
//! Threads are spawned before the start gate opens and joined after the end is read, so
//! neither their start-up time nor the allocations of spawning them count.
//!
//! The first operation error, on any thread, stops every thread at its next operation and is
//! the round's error; so is the interrupt flag.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use hdrhistogram::Histogram;

use super::{alloc, Clock, Round, RoundResult, RunError, Runner};

/// Go's batch size for `RunParallel`: as many iterations as took about 100 µs in the previous
/// round, at least 1 and at most 10,000 (`testing.(*B).RunParallel`, Go 1.21+; Go reasons that
/// 100 µs amortises the shared counter and still balances the load, and that an iteration
/// takes at least 10 ns). The first round, with no previous one, takes 1.
pub(super) fn grain(previous: Option<Round>) -> u64 {
    let grain = match previous {
        Some(r) if r.n > 0 && r.elapsed_ns > 0 => {
            (100_000u128 * u128::from(r.n) / u128::from(r.elapsed_ns)) as u64
        }
        _ => 0,
    };
    grain.clamp(1, 10_000)
}

/// Where the workers wait until every thread is spawned and the round's clock has started.
/// Closed on drop if it was never opened, so a panic while spawning cannot leave threads
/// waiting forever (the scope joins them before the panic goes on).
struct StartGate {
    state: Mutex<Gate>,
    changed: Condvar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Waiting,
    Open,
    Closed,
}

impl StartGate {
    fn new() -> Self {
        StartGate {
            state: Mutex::new(Gate::Waiting),
            changed: Condvar::new(),
        }
    }

    fn set(&self, to: Gate) {
        // A poisoned lock only means another thread panicked holding it; the state is a
        // plain enum and still valid.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if *state == Gate::Waiting {
            *state = to;
        }
        self.changed.notify_all();
    }

    /// Blocks until the gate opens (true) or closes (false).
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while *state == Gate::Waiting {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        *state == Gate::Open
    }
}

/// Closes the gate if it is still waiting when dropped (a panic while spawning).
struct CloseOnDrop<'a>(&'a StartGate);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.set(Gate::Closed);
    }
}

/// What the threads of one round share.
struct Shared<'a, C> {
    clock: &'a C,
    n: u64,
    grain: u64,
    /// The next iteration index nobody has taken yet.
    next: AtomicU64,
    /// Raised by the first thread that fails, so the others stop.
    stop: AtomicBool,
    interrupted: &'a AtomicBool,
    gate: StartGate,
}

/// How one thread's part of the round ended: the clock after its last operation.
type WorkerResult<E> = Result<u64, RunError<E>>;

impl<C: Clock + Sync> Runner<C> {
    /// One timed round of `n` operations shared among `workers`, one thread each.
    pub(super) fn parallel_round<W: Send, E: Send>(
        &mut self,
        n: u64,
        previous: Option<Round>,
        workers: &mut [W],
        op: &(dyn Fn(&mut W, u64) -> Result<(), E> + Sync),
    ) -> RoundResult<E> {
        // One histogram per worker, kept across rounds and benchmarks so that no round
        // allocates one.
        while self.worker_histograms.len() < workers.len() {
            self.worker_histograms.push(super::latency_histogram());
        }
        let histograms = &mut self.worker_histograms[..workers.len()];
        for h in histograms.iter_mut() {
            h.reset();
        }
        let shared = Shared {
            clock: &self.clock,
            n,
            grain: grain(previous),
            next: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            interrupted: &self.interrupted,
            gate: StartGate::new(),
        };
        let (start, before, ends) = std::thread::scope(|scope| {
            let close = CloseOnDrop(&shared.gate);
            let shared = &shared;
            let threads: Vec<_> = workers
                .iter_mut()
                .zip(histograms.iter_mut())
                .map(|(worker, histogram)| {
                    scope.spawn(move || {
                        if !shared.gate.wait() {
                            return Ok(0);
                        }
                        work(shared, worker, histogram, op)
                    })
                })
                .collect();
            let before = alloc::snapshot();
            let start = shared.clock.now_ns();
            shared.gate.set(Gate::Open);
            drop(close);
            let ends: Vec<WorkerResult<E>> = threads
                .into_iter()
                .map(|t| match t.join() {
                    Ok(end) => end,
                    // Let the operation's panic go on, as it would in a sequential round.
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect();
            (start, before, ends)
        });
        let used = alloc::snapshot().since(before);
        let mut end = start;
        let mut interrupted = false;
        for result in ends {
            match result {
                Ok(at) => end = end.max(at),
                Err(RunError::Interrupted) => interrupted = true,
                Err(e) => return Err(e),
            }
        }
        if interrupted {
            return Err(RunError::Interrupted);
        }
        self.histogram.reset();
        for h in self.worker_histograms.iter().take(workers.len()) {
            // Same bounds on both sides: adding cannot fail.
            let _ = self.histogram.add(h);
        }
        Ok((
            Round {
                n,
                elapsed_ns: end - start,
            },
            used,
        ))
    }
}

/// One thread's loop: take a batch of indices, run them, until none are left or the round
/// stops. Returns the clock after its last operation.
fn work<C: Clock, W, E>(
    shared: &Shared<'_, C>,
    worker: &mut W,
    histogram: &mut Histogram<u64>,
    op: &(dyn Fn(&mut W, u64) -> Result<(), E> + Sync),
) -> WorkerResult<E> {
    let mut prev = shared.clock.now_ns();
    loop {
        let first = shared.next.fetch_add(shared.grain, Ordering::Relaxed);
        if first >= shared.n {
            return Ok(prev);
        }
        for i in first..(first + shared.grain).min(shared.n) {
            if shared.stop.load(Ordering::Relaxed) {
                return Ok(prev);
            }
            if let Err(e) = op(worker, i) {
                shared.stop.store(true, Ordering::Relaxed);
                return Err(RunError::Op(e));
            }
            let now = shared.clock.now_ns();
            histogram.saturating_record(now - prev);
            prev = now;
            if shared.interrupted.load(Ordering::Relaxed) {
                shared.stop.store(true, Ordering::Relaxed);
                return Err(RunError::Interrupted);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grain_follows_go() {
        assert_eq!(grain(None), 1);
        // 100 ops in 1 ms: 10 µs each, so 10 take 100 µs.
        assert_eq!(
            grain(Some(Round {
                n: 100,
                elapsed_ns: 1_000_000
            })),
            10
        );
        // Slower than 100 µs an op: 1.
        assert_eq!(
            grain(Some(Round {
                n: 1,
                elapsed_ns: 1_000_000
            })),
            1
        );
        // Faster than 10 ns an op, or no time at all: capped at 10,000.
        assert_eq!(
            grain(Some(Round {
                n: 1_000_000,
                elapsed_ns: 1_000_000
            })),
            10_000
        );
        assert_eq!(
            grain(Some(Round {
                n: 5,
                elapsed_ns: 0
            })),
            1
        );
    }
}
