//! The embedded engine's own costs, each measured in-process:
//! - `engine/<CMD>`: one command through `Engine::execute` (argument slices in, `Reply` out;
//!   no RESP, no socket): GET, SET, HSET, ZADD, ZRANGE 0 99 on a 1,000-member sorted set;
//! - `connection/<CMD>`: the same through `EngineConnection` as redis-rs code calls it
//!   (`redis::cmd(..).query(&mut con)`), i.e. what the `RedisDB_Embedded` column pays on top.
//!
//! Run: `cargo bench --bench engine`. RESP parse/encode benches live with the codec.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use edgebench::engine::{Engine, EngineConnection, Reply};

fn engine_commands(c: &mut Criterion) {
    let engine = Engine::new();
    let mut client = engine.client();
    let mut run = |args: &[&[u8]]| engine.execute(&mut client, args);
    assert_eq!(run(&[b"SET", b"k", b"value-of-100-bytes"]), Reply::ok());
    for i in 0..1000u32 {
        let member = format!("m{i:04}");
        let score = i.to_string();
        run(&[b"ZADD", b"z", score.as_bytes(), member.as_bytes()]);
    }
    let mut g = c.benchmark_group("engine");
    g.bench_function("GET", |b| b.iter(|| black_box(run(&[b"GET", b"k"]))));
    g.bench_function("SET", |b| {
        b.iter(|| black_box(run(&[b"SET", b"k2", b"value-of-100-bytes"])))
    });
    g.bench_function("HSET", |b| {
        b.iter(|| black_box(run(&[b"HSET", b"h", b"field", b"value"])))
    });
    g.bench_function("ZADD", |b| {
        b.iter(|| black_box(run(&[b"ZADD", b"z2", b"1.5", b"member"])))
    });
    g.bench_function("ZRANGE_0_99", |b| {
        b.iter(|| black_box(run(&[b"ZRANGE", b"z", b"0", b"99"])))
    });
    g.finish();
}

fn connection_commands(c: &mut Criterion) {
    let engine = Engine::new();
    let mut con = EngineConnection::new(engine);
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    let mut g = c.benchmark_group("connection");
    g.bench_function("GET", |b| {
        b.iter(|| {
            let v: Option<Vec<u8>> = redis::cmd("GET").arg("k").query(&mut con).unwrap();
            black_box(v)
        })
    });
    g.bench_function("ZCARD", |b| {
        b.iter(|| {
            let n: usize = redis::cmd("ZCARD").arg("z").query(&mut con).unwrap();
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, engine_commands, connection_commands);
criterion_main!(benches);
