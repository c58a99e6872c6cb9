//! Runner tests against a scripted fake target: the operation advances a fake clock by a
//! scripted amount, so calibration, percentiles and `Nx` are asserted exactly.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use edgebench::runner::{BenchTime, Clock, Round, RunError, Runner};

/// A clock that only moves when the scripted target says so.
#[derive(Clone, Default)]
struct FakeClock(Rc<Cell<u64>>);

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        self.0.get()
    }
}

impl FakeClock {
    fn advance(&self, ns: u64) {
        self.0.set(self.0.get() + ns);
    }
}

fn runner(benchtime: BenchTime) -> (Runner<FakeClock>, FakeClock, Arc<AtomicBool>) {
    let clock = FakeClock::default();
    let flag = Arc::new(AtomicBool::new(false));
    let r = Runner::with_clock(clock.clone(), benchtime, flag.clone());
    (r, clock, flag)
}

#[test]
fn calibration_grows_n_like_go_until_a_round_fills_benchtime() {
    let (mut r, clock, _) = runner(BenchTime::Duration(Duration::from_millis(1)));
    let mut rounds = Vec::new();
    let m = r
        .run(
            |_| {
                clock.advance(1_000);
                Ok::<(), ()>(())
            },
            |round| rounds.push(round),
        )
        .unwrap();
    // N=1 (1 µs) → min(1000×1.2, 100×1) = 100 → 100 µs → 1000×1.2 = 1200 → 1.2 ms ≥ 1 ms.
    assert_eq!(
        rounds,
        vec![
            Round {
                n: 1,
                elapsed_ns: 1_000
            },
            Round {
                n: 100,
                elapsed_ns: 100_000
            },
            Round {
                n: 1200,
                elapsed_ns: 1_200_000
            },
        ]
    );
    assert_eq!(m.n, 1200);
    assert_eq!(m.ns_per_op, 1000.0);
    assert_eq!(m.ops_per_sec(), 1_000_000.0);
}

#[test]
fn a_first_round_longer_than_benchtime_is_the_only_round() {
    let (mut r, clock, _) = runner(BenchTime::Duration(Duration::from_millis(1)));
    let mut rounds = Vec::new();
    let m = r
        .run(
            |_| {
                clock.advance(5_000_000);
                Ok::<(), ()>(())
            },
            |round| rounds.push(round.n),
        )
        .unwrap();
    assert_eq!(rounds, vec![1]);
    assert_eq!(m.n, 1);
    assert_eq!(m.ns_per_op, 5_000_000.0);
}

#[test]
fn nx_runs_n_equals_one_then_exactly_n_with_i_restarting_at_zero() {
    let (mut r, clock, _) = runner(BenchTime::Iterations(100));
    let mut seen = Vec::new();
    let mut rounds = Vec::new();
    let m = r
        .run(
            |i| {
                seen.push(i);
                clock.advance(10);
                Ok::<(), ()>(())
            },
            |round| rounds.push(round.n),
        )
        .unwrap();
    assert_eq!(rounds, vec![1, 100]);
    assert_eq!(m.n, 100);
    let expected: Vec<u64> = std::iter::once(0).chain(0..100).collect();
    assert_eq!(seen, expected);
}

#[test]
fn one_x_is_a_single_round_of_one() {
    let (mut r, clock, _) = runner(BenchTime::Iterations(1));
    let mut rounds = Vec::new();
    r.run(
        |_| {
            clock.advance(10);
            Ok::<(), ()>(())
        },
        |round| rounds.push(round.n),
    )
    .unwrap();
    assert_eq!(rounds, vec![1]);
}

#[test]
fn run_on_hands_the_worker_to_on_round_between_rounds() {
    // The worker counts the operations it ran; after each round `on_round` sees the count so
    // far, so the last two readings bracket the measured round (what store growth needs).
    let (mut r, clock, _) = runner(BenchTime::Iterations(250));
    let mut ops: u64 = 0;
    let mut seen = Vec::new();
    let m = r
        .run_on(
            &mut ops,
            |ops, _| {
                *ops += 1;
                clock.advance(10);
                Ok::<(), ()>(())
            },
            |ops, round| seen.push((round.n, *ops)),
        )
        .unwrap();
    assert_eq!(seen, [(1, 1), (250, 251)]);
    assert_eq!((m.n, m.store_bytes_per_op), (250, None));
}

#[test]
fn percentiles_come_from_the_last_round_only() {
    // Round 1: one op of 1 s (must not leak into the histogram). Round 2: op i takes
    // (i+1) µs, so the 1000 latencies are 1..=1000 µs.
    let (mut r, clock, _) = runner(BenchTime::Iterations(1000));
    let round = Cell::new(0);
    let m = r
        .run(
            |i| {
                clock.advance(if round.get() == 0 {
                    1_000_000_000
                } else {
                    (i + 1) * 1_000
                });
                Ok::<(), ()>(())
            },
            |_| round.set(round.get() + 1),
        )
        .unwrap();
    assert_eq!(m.n, 1000);
    assert_eq!(m.ns_per_op, 500_500.0);
    // HDR with 3 significant digits reports the highest value equivalent to the sample:
    // 500 µs lies in the bucket of resolution 256 ns starting at 1953×256 = 499,968 ns;
    // 900 µs, 990 µs, 999 µs and 1 ms in buckets of 512 ns.
    assert_eq!(m.p50_ns, 499_968 + 255);
    assert_eq!(m.p90_ns, 1757 * 512 + 511);
    assert_eq!(m.p99_ns, 1933 * 512 + 511);
    assert_eq!(m.p999_ns, 1951 * 512 + 511);
    assert_eq!(m.max_ns, 1953 * 512 + 511);
    assert!(!m.histogram.is_empty());
}

#[test]
fn an_operation_error_stops_the_benchmark() {
    let (mut r, clock, _) = runner(BenchTime::Iterations(10));
    let calls = Cell::new(0);
    let res = r.run(
        |i| {
            calls.set(calls.get() + 1);
            clock.advance(1);
            if i == 3 {
                Err("boom")
            } else {
                Ok(())
            }
        },
        |_| {},
    );
    assert!(matches!(res, Err(RunError::Op("boom"))));
    // Round 1 (i = 0), then i = 0..=3 of round 2: nothing after the failing call.
    assert_eq!(calls.get(), 5);
}

#[test]
fn the_interrupt_flag_stops_the_round() {
    let (mut r, clock, flag) = runner(BenchTime::Iterations(1_000_000));
    let mut calls = 0u64;
    let res = r.run(
        |_| {
            calls += 1;
            clock.advance(1);
            if calls == 5 {
                flag.store(true, Ordering::Relaxed);
            }
            Ok::<(), ()>(())
        },
        |_| {},
    );
    assert!(matches!(res, Err(RunError::Interrupted)));
    assert_eq!(calls, 5);
}

// ---- parallel rounds (Go's b.RunParallel) ----

/// A fake clock the workers of a parallel round share: it moves only when an operation
/// advances it, so a round's wall time is exactly the sum of its operations' advances.
#[derive(Clone, Default)]
struct SharedClock(Arc<AtomicU64>);

impl Clock for SharedClock {
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl SharedClock {
    fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::SeqCst);
    }
}

fn shared_runner(benchtime: BenchTime) -> (Runner<SharedClock>, SharedClock, Arc<AtomicBool>) {
    let clock = SharedClock::default();
    let flag = Arc::new(AtomicBool::new(false));
    let r = Runner::with_clock(clock.clone(), benchtime, flag.clone());
    (r, clock, flag)
}

/// The operations the round's histogram holds.
fn histogram_count(m: &edgebench::results::Measurement) -> u64 {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&m.histogram)
        .unwrap();
    let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap();
    h.len()
}

#[test]
fn a_parallel_round_runs_every_index_exactly_once_across_the_workers() {
    for workers in [1, 2, 4, 7] {
        let (mut r, clock, _) = shared_runner(BenchTime::Iterations(1000));
        // Each worker keeps the indices it ran (per round: a new round starts at index 0).
        let mut ran: Vec<Vec<u64>> = vec![Vec::new(); workers];
        let mut rounds = Vec::new();
        let m = r
            .run_parallel(
                &mut ran,
                &|mine: &mut Vec<u64>, i| {
                    clock.advance(10);
                    mine.push(i);
                    Ok::<(), ()>(())
                },
                |_, round| rounds.push(round),
            )
            .unwrap();
        let mut all: Vec<u64> = ran.concat();
        all.sort_unstable();
        let want: Vec<u64> = std::iter::once(0).chain(0..1000).collect();
        assert_eq!(
            all, want,
            "{workers} workers: round 1 (i = 0), then 0..1000"
        );
        // Wall time is the sum of the advances, as in the sequential test's rounds.
        assert_eq!(
            rounds,
            [
                Round {
                    n: 1,
                    elapsed_ns: 10
                },
                Round {
                    n: 1000,
                    elapsed_ns: 10_000
                }
            ]
        );
        assert_eq!((m.n, m.ns_per_op), (1000, 10.0));
        assert_eq!(histogram_count(&m), 1000, "{workers} workers");
    }
}

#[test]
fn parallel_calibration_is_the_sequential_one_on_wall_time() {
    // The sequential calibration test's operation (1 µs each, goal 1 ms), on 3 workers: the
    // same rounds, because wall time over all operations is what calibrates.
    let (mut r, clock, _) = shared_runner(BenchTime::Duration(Duration::from_millis(1)));
    let mut rounds = Vec::new();
    let m = r
        .run_parallel(
            &mut [(), (), ()],
            &|_: &mut (), _| {
                clock.advance(1_000);
                Ok::<(), ()>(())
            },
            |_, round| rounds.push(round),
        )
        .unwrap();
    let ns: Vec<(u64, u64)> = rounds.iter().map(|r| (r.n, r.elapsed_ns)).collect();
    assert_eq!(ns, [(1, 1_000), (100, 100_000), (1200, 1_200_000)]);
    assert_eq!((m.n, m.ns_per_op), (1200, 1000.0));
    assert_eq!(histogram_count(&m), 1200);
}

#[test]
fn a_parallel_operation_error_stops_every_worker_and_is_the_result() {
    let (mut r, _, _) = shared_runner(BenchTime::Iterations(100_000));
    let calls = AtomicU64::new(0);
    let res = r.run_parallel(
        &mut [(), (), (), ()],
        &|_: &mut (), i| {
            calls.fetch_add(1, Ordering::SeqCst);
            if i == 50 {
                Err("boom")
            } else {
                Ok(())
            }
        },
        |_, _| {},
    );
    assert!(matches!(res, Err(RunError::Op("boom"))));
    // The first round (1 call) and then far fewer than the 100,000 of the second: each
    // worker stops at its next operation. Go's grain after a 0 ns round is 1.
    assert!(calls.load(Ordering::SeqCst) < 1000, "{calls:?}");
}

#[test]
fn the_interrupt_flag_stops_a_parallel_round() {
    let (mut r, _, flag) = shared_runner(BenchTime::Iterations(1_000_000));
    let calls = AtomicU64::new(0);
    let res = r.run_parallel(
        &mut [(), ()],
        &|_: &mut (), _| {
            if calls.fetch_add(1, Ordering::SeqCst) + 1 == 5 {
                flag.store(true, Ordering::Relaxed);
            }
            Ok::<(), ()>(())
        },
        |_, _| {},
    );
    assert!(matches!(res, Err(RunError::Interrupted)));
    // The worker that raised the flag stops at once, the other once it sees the flag after
    // an operation: a handful more at most, not the million asked for.
    assert!(calls.load(Ordering::SeqCst) < 100, "{calls:?}");
}
