//! The runner's own cost per operation: what the harness adds to every measured operation
//! (one clock read, one histogram record, one interrupt-flag check, the loop).
//!
//! `runner_noop` runs a no-op operation through `Runner::run` with `Nx` iterations; its time
//! per iteration is the harness overhead. `bare_loop_noop` is the same no-op in a plain loop,
//! the floor. Run: `cargo bench --bench runner`.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use edgebench::runner::{BenchTime, Runner};

fn overhead(c: &mut Criterion) {
    let mut g = c.benchmark_group("harness");
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("runner_noop", |b| {
        b.iter_custom(|iters| {
            let mut runner = Runner::new(
                BenchTime::Iterations(iters.max(2)),
                Arc::new(AtomicBool::new(false)),
            );
            let start = Instant::now();
            runner
                .run(|i| black_box(Ok::<u64, ()>(i)).map(drop), |_| {})
                .unwrap();
            start.elapsed()
        })
    });
    g.bench_function("bare_loop_noop", |b| {
        b.iter(|| black_box(Ok::<u64, ()>(black_box(7))).map(drop))
    });
    g.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
