//! Is the fleet's load generator the bottleneck? One open-loop writer thread, as `edgebench
//! fleet` runs it (the real pacer, events built as the fleet builds them, every latency
//! recorded), for `SECONDS` at each rate, against:
//!
//! - `generator`: a sink that takes each event and drops it: what the writer itself costs
//!   (pacing, building the event, measuring), the ceiling of any target;
//! - `engine`: EdgeX 3.1's Redis layout on the in-process engine (`--target embedded`).
//!
//! Each line: offered rate, events sent, late sends (more than 1 ms after their intended
//! time) and their share, unsent (backlog at the end), the writer thread's CPU per event
//! (pacing's spin included), the generator's own wall time per event (building and
//! measuring: `generator µs/event` in the fleet's table) and the store call's. Run: `cargo bench --bench fleet_writer`
//! (`FLEET_RATES=50000,200000 FLEET_SECONDS=3` to choose).

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use edgebench::engine::{Engine, EngineConnection};
use edgebench::fleet::workload::schedule::{self, RealPacer};
use edgebench::fleet::workload::FleetSpec;
use edgebench::runner::alloc::CountingAlloc;
use edgebench::store::edgex::EventStore;
use edgebench::store::redis::edgex3::Redis3Store;

/// The binary's allocator, so the engine's figures are the fleet's.
#[global_allocator]
static ALLOC: CountingAlloc<mimalloc::MiMalloc> = CountingAlloc::new(mimalloc::MiMalloc);

fn main() {
    let rates: Vec<f64> = std::env::var("FLEET_RATES")
        .unwrap_or_else(|_| "50000,200000,500000".into())
        .split(',')
        .map(|r| r.trim().parse().expect("FLEET_RATES: numbers"))
        .collect();
    let seconds: u64 = std::env::var("FLEET_SECONDS")
        .ok()
        .map(|s| s.parse().expect("FLEET_SECONDS: a number"))
        .unwrap_or(2);
    let sinks: Vec<String> = std::env::var("FLEET_SINKS")
        .unwrap_or_else(|_| "generator,engine".into())
        .split(',')
        .map(str::to_owned)
        .collect();
    // Ignore cargo bench's own arguments (--bench).
    println!(
        "sink         rate/s      sent     late    late%   unsent  cpu µs/ev  gen µs/ev  store µs/ev"
    );
    for sink in &sinks {
        for &rate in &rates {
            run(sink, rate, seconds);
        }
    }
}

fn run(sink: &str, rate: f64, seconds: u64) {
    let spec = FleetSpec {
        devices: 100,
        events_per_second: rate,
        readings_per_event: 5,
        duration: Duration::from_secs(seconds),
        warmup: Duration::ZERO,
        ..FleetSpec::default()
    };
    let schedule = spec.schedule();
    let mut store: Option<Box<dyn EventStore>> = match sink {
        "generator" => None,
        "engine" => Some(Box::new(Redis3Store::new(EngineConnection::new(
            Engine::new(),
        )))),
        other => panic!("FLEET_SINKS: generator or engine, not {other}"),
    };
    let stop = AtomicBool::new(false);
    let origin = Instant::now();
    let mut pacer = RealPacer::new(origin);
    let mut in_store = Duration::ZERO;
    let cpu = schedule::thread_cpu_ns();
    let report = schedule::write_open_loop(
        &schedule,
        schedule::Share::ALL,
        &mut pacer,
        &stop,
        spec.blank_event(),
        |j, event| spec.refill(event, j, j as i64 + 1),
        |event| match store.as_mut() {
            Some(s) => {
                let t = Instant::now();
                let r = s.add_event(event);
                in_store += t.elapsed();
                r
            }
            None => {
                black_box(event);
                Ok(())
            }
        },
    );
    let cpu_ns = schedule::thread_cpu_ns() - cpu;
    let per = |ns: f64| ns / report.sent.max(1) as f64 / 1000.0;
    println!(
        "{sink:<9} {rate:>10.0} {:>9} {:>8} {:>7.3}% {:>8} {:>10.2} {:>10.2} {:>12.2}",
        report.sent,
        report.late,
        100.0 * report.late as f64 / report.measured.max(1) as f64,
        report.unsent,
        per(cpu_ns as f64),
        per(report.generator_ns as f64),
        per(in_store.as_nanos() as f64),
    );
}
