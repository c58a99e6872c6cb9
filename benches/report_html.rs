//! What writing `report.html` adds to a default `edgebench coredata` run (issue 14: under
//! 100 ms in all).
//!
//! A default run on a machine with redis-server and PostgreSQL has 11 columns (four engine
//! ways, SQLite, Redis over TCP and a socket, PostgreSQL over TCP and a socket in two layouts)
//! and 10 benchmarks, `--count 1`, and rewrites its files after each of the 110 benchmarks, so
//! the page is written 110 times, growing from one bar to 110. The results here have that
//! shape, each measurement with a full HDR histogram of 100,000 latencies spread over two
//! decades (about what a 1 s round keeps), so decoding costs what it does in a run.
//!
//! `page/final` writes the complete page once, from nothing drawn; `page/final_again` writes
//! it again (every chart and curve already drawn in the process); `page/whole_run` writes it
//! 110 times, growing, from nothing drawn, as the run does: what the run pays. With
//! `EDGEBENCH_RESULTS=DIR/results.json` the steps are a real run's. Run:
//! `cargo bench --bench report_html`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use edgebench::report::html;
use edgebench::results::{BenchResults, Measurement, RunMeta, RunResults, TargetResults};
use edgebench::runner::stats::{encoded, latency_histogram};

const TARGETS: [&str; 11] = [
    "Embedded_Direct",
    "RedisDB_Embedded",
    "Embedded_TCP",
    "Embedded_UDS",
    "RedisDB_TCP",
    "RedisDB_UDS",
    "SQLite_Embedded",
    "PostgreSQL_TCP",
    "PostgreSQL_UDS",
    "PostgreSQL_TCP_EdgeX4",
    "PostgreSQL_UDS_EdgeX4",
];

const BENCHMARKS: [&str; 10] = [
    "AddEvent",
    "AddReading",
    "EventById",
    "EventCount",
    "Events",
    "EventsForDevice",
    "ReadingById",
    "ReadingCount",
    "Readings",
    "ReadingsByDevice",
];

/// One measurement around `median_ns`: 100,000 latencies from median/3 to 30× the median
/// (a deterministic spread, no RNG: the same bytes every run).
fn measurement(median_ns: f64) -> Measurement {
    let mut h = latency_histogram();
    for i in 0..100_000u64 {
        let f = (i as f64 / 100_000.0 * 2.0 - 0.5).exp2().powi(3) / 3.0;
        h.record((median_ns * f).max(1.0) as u64).unwrap();
    }
    Measurement {
        n: 100_000,
        ns_per_op: median_ns,
        p50_ns: h.value_at_quantile(0.5),
        p90_ns: h.value_at_quantile(0.9),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
        histogram: encoded(&h),
        ..Measurement::default()
    }
}

/// The results after the first `done` benchmarks of a default run, in run order.
fn results(done: usize) -> RunResults {
    let mut results = RunResults {
        meta: RunMeta {
            workload: "coredata".into(),
            version: "0.1.0".into(),
            started: "2026-12-02T00:00:00Z".into(),
            benchtime: "1s".into(),
            count: 1,
            procs: 2,
            ..RunMeta::default()
        },
        targets: Vec::new(),
    };
    for (k, (t, b)) in TARGETS
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            BENCHMARKS
                .iter()
                .enumerate()
                .map(move |(bi, b)| ((ti, t), (bi, b)))
        })
        .take(done)
        .enumerate()
    {
        let ((ti, t), (bi, b)) = (t, b);
        if bi == 0 {
            results.targets.push(TargetResults::new(t, 1));
        }
        let median = 200.0 * 3f64.powi(bi as i32) * (1.0 + ti as f64 * 0.7) + k as f64;
        results.targets[ti].benchmarks.push(BenchResults {
            name: b.to_string(),
            runs: vec![measurement(median)],
            not_applicable: None,
        });
    }
    results
}

/// The results after each finished benchmark of the run in `results.json`, in run order.
fn steps_of(path: &std::path::Path) -> Vec<RunResults> {
    let run: RunResults = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut steps = Vec::new();
    let mut partial = RunResults {
        meta: run.meta.clone(),
        targets: Vec::new(),
    };
    for t in &run.targets {
        partial.targets.push(TargetResults {
            benchmarks: Vec::new(),
            ..t.clone()
        });
        for b in &t.benchmarks {
            partial
                .targets
                .last_mut()
                .unwrap()
                .benchmarks
                .push(b.clone());
            steps.push(partial.clone());
        }
    }
    steps
}

fn pages(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // EDGEBENCH_RESULTS=DIR/results.json: a real run's results instead of the made-up ones.
    let steps: Vec<RunResults> = match std::env::var_os("EDGEBENCH_RESULTS") {
        Some(path) => steps_of(path.as_ref()),
        None => (1..=TARGETS.len() * BENCHMARKS.len())
            .map(results)
            .collect(),
    };
    let all = steps.len();
    let mut g = c.benchmark_group("page");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    // Each iteration starts from nothing drawn, as a new process does.
    g.bench_function("final", |b| {
        b.iter(|| {
            html::forget_drawn();
            edgebench::coredata::html::write(dir.path(), black_box(&steps[all - 1])).unwrap()
        })
    });
    g.bench_function("final_again", |b| {
        b.iter(|| edgebench::coredata::html::write(dir.path(), black_box(&steps[all - 1])).unwrap())
    });
    g.bench_function("whole_run", |b| {
        b.iter(|| {
            html::forget_drawn();
            for r in &steps {
                edgebench::coredata::html::write(dir.path(), black_box(r)).unwrap();
            }
        })
    });
    g.finish();
}

criterion_group!(benches, pages);
criterion_main!(benches);
