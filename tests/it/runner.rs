//! Runner tests against a scripted fake target: the operation advances a fake clock by a
//! scripted amount, so calibration, percentiles and `Nx` are asserted exactly.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
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
