//! `edgebench perf test_group`'s own cost per invocation, against the embedded engine in
//! process: what the group runner adds around the store's work (two clock reads, one HDR
//! record, the progress counter, the stop-flag check, the loop).
//!
//! - `runner_engine_put`: `run_group_test` with one thread and one `put` operation
//!   (`HSET map1 k<i> <16 zero bytes>`) on the in-process engine, `iters` invocations.
//! - `bare_engine_put`: the same commands, built the same way, sent in a plain loop.
//! - `runner_noop_connection`: the runner over a connection that answers without work: the
//!   runner plus building the command, with no store at all.
//!
//! Harness cost per invocation = `runner_engine_put − bare_engine_put`. The runner's fixed
//! cost per run (spawning its thread, writing the results file) is spread over `iters`.
//! Run: `cargo bench --bench perf_harness`.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use edgebench::engine::{Engine, EngineConnection};
use edgebench::perf::run::run_group_test;
use edgebench::perf::{GroupTestConfig, Properties};
use edgebench::target::Connector;
use redis::{ConnectionLike, RedisResult, Value};

fn config(invocations: u64) -> GroupTestConfig {
    let text = format!(
        "groupNames=g1\ng1.threadCount=1\ng1.totalInvocationCount={invocations}\n\
         g1.operations=put1\nput1.map=map1\nput1.testCase=put\nput1.payloadSize=16\n"
    );
    let props = Properties::parse(&text, "bench.properties").expect("valid properties");
    GroupTestConfig::from_properties(&props, 1).expect("valid config")
}

/// Answers every command with `1` and does nothing else.
struct NoopConnection;

impl ConnectionLike for NoopConnection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        black_box(cmd);
        Ok(Value::Int(1))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        _: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        black_box(cmd);
        Ok(vec![Value::Int(1); count])
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

fn timed_run(connect: &Connector, iters: u64) -> Duration {
    let cfg = config(iters.max(1));
    let dir = tempfile::tempdir().expect("temp dir");
    let stop = AtomicBool::new(false);
    let mut status = std::io::sink();
    let start = Instant::now();
    run_group_test(&cfg, connect, "bench", dir.path(), &stop, &mut status).expect("run");
    start.elapsed()
}

fn harness(c: &mut Criterion) {
    let mut g = c.benchmark_group("perf_group");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("runner_engine_put", |b| {
        b.iter_custom(|iters| {
            let engine = Engine::new();
            let connect: Box<Connector> = Box::new(move || {
                Ok(Box::new(EngineConnection::new(engine.clone()))
                    as Box<dyn ConnectionLike + Send>)
            });
            timed_run(&*connect, iters)
        })
    });
    g.bench_function("bare_engine_put", |b| {
        b.iter_custom(|iters| {
            let mut con = EngineConnection::new(Engine::new());
            let payload = [0u8; 16];
            let start = Instant::now();
            for i in 1..=iters {
                let mut cmd = redis::cmd("HSET");
                cmd.arg("map1").arg(format!("k{i}")).arg(&payload[..]);
                black_box(cmd.query::<Value>(&mut con).expect("HSET"));
            }
            start.elapsed()
        })
    });
    g.bench_function("runner_noop_connection", |b| {
        b.iter_custom(|iters| {
            let connect: Box<Connector> =
                Box::new(|| Ok(Box::new(NoopConnection) as Box<dyn ConnectionLike + Send>));
            timed_run(&*connect, iters)
        })
    });
    g.finish();
}

criterion_group!(benches, harness);
criterion_main!(benches);
