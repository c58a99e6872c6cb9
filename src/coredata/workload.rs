//! The ten EdgeX core-data benchmarks of the 2018 Redis PoC, over any [`CoreData`] store.
//!
//! Datasets and per-iteration work follow the final PoC harness (`redis_client@2e866b8`,
//! RedisLabs/edgex-go, branch `redis_client` at 2e866b8, `core/data/clients/redis-client_test.go`, and the branch `benchmark` at 54aa9d8, `bench.txt`):
//!
//! - readings phase: scrub; `AddReading` adds `Reading{name: "test"+i, device:
//!   "device"+(i/100)}`; scrub; prep 1,000 readings the same way (10 devices × 100); then
//!   `Readings` (all 1,000), `ReadingCount`, `ReadingById(ids[i%1000])` and
//!   `ReadingsByDevice("device"+((i%1000)/100), 100)`;
//! - events phase: scrub; `AddEvent` adds an event of device "device"+(i/100) with 5 readings
//!   named name0..name4; scrub; prep 1,000 such events (5,000 readings); then `Events` (all
//!   1,000 with their readings), `EventCount`, `EventById(ids[i%1000])` and
//!   `EventsForDevice("device"+((i%1000)/100))` (100 events, no limit).
//!
//! As in Go, the Add* benchmarks are not scrubbed between calibration rounds (the store
//! accumulates, and `i` restarts at 0 each round); edgebench scrubs before each `--count`
//! repetition of an Add* benchmark, so every repetition starts from the same empty store.
//! Around every round of an Add* benchmark the store is sized ([`CoreData::size_bytes`], outside
//! any timing, as a Go benchmark would with its timer stopped), and the measured round's
//! growth divided by its N is the benchmark's store bytes per op: what keeping a reading or
//! an event costs the store. Read benchmarks do not grow the store and are not sized.
//! Before the read benchmarks the prepared dataset is checked (counts, and readings attached
//! to events), and each read benchmark's call is made once and the records it returns are
//! counted, all outside any timing, so a store that drops data cannot post a fast figure.
//!
//! With several clients ([`run_clients`], `--parallel`) each benchmark runs as Go's
//! `b.RunParallel`: the clients share each round's iterations ([`Runner::run_parallel`]),
//! each on its own connection. `i` is still the round's global iteration index, so the Add*
//! benchmarks add exactly the records a single client adds (`test`+i of `device`+(i/100)),
//! whichever client adds each; scrubs and datasets are made through the first client, and
//! the pre-timing check of each read benchmark is made through every client, so a client
//! that does not see the shared data fails before it is timed. With one client the
//! sequential [`Runner::run`] runs, exactly as without `--parallel`.

use std::fmt::Write as _;

use crate::results::BenchResults;
use crate::runner::{Clock, Round, RunError, Runner};
use crate::store::{CoreData, StoreError};
use crate::v2018::{Event, Reading};

/// The benchmarks, in the order the 2018 harness ran them.
pub const BENCHMARKS: [&str; 10] = [
    "AddReading",
    "Readings",
    "ReadingCount",
    "ReadingById",
    "ReadingsByDevice",
    "AddEvent",
    "Events",
    "EventCount",
    "EventById",
    "EventsForDevice",
];

/// Records in each prepared dataset.
pub const DATASET_SIZE: usize = 1000;
/// Records per device in a dataset (so 10 devices).
const PER_DEVICE: u64 = 100;
/// Readings attached to each event.
pub const READINGS_PER_EVENT: usize = 5;
/// The reading names of an event, as in the 2018 harness.
const EVENT_READING_NAMES: [&str; READINGS_PER_EVENT] =
    ["name0", "name1", "name2", "name3", "name4"];

/// What the workload reports while it runs.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A dataset is being prepared (not timed).
    Preparing(&'static str),
    /// A calibration round of a benchmark finished.
    Round {
        /// The benchmark.
        bench: &'static str,
        /// Which repetition (0-based) of `--count`.
        repetition: u32,
        /// The round.
        round: Round,
    },
    /// A benchmark finished all its repetitions.
    Finished(&'a BenchResults),
}

/// Why the workload stopped early. Benchmarks that finished were already reported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// A store call failed.
    #[error("{bench}: {source}")]
    Store {
        /// The benchmark (or preparation step) that was running.
        bench: &'static str,
        /// The store's error.
        source: StoreError,
    },
    /// The prepared dataset is not what was written: the store lost or changed data.
    #[error("{bench}: the store returned wrong data: {message}")]
    WrongData {
        /// The benchmark about to run.
        bench: &'static str,
        /// What was expected and what came back.
        message: String,
    },
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

/// A read benchmark over a prepared dataset.
struct ReadBench {
    name: &'static str,
    /// The [`CoreData`] method it times (for [`CoreData::no_equivalent`]).
    call: &'static str,
    /// Records one call returns on the dataset (an event with its readings counts 1 + 5).
    /// Checked once before timing, so a store that drops data cannot post a fast figure.
    records: usize,
    /// One iteration; returns the number of records it got back.
    op: fn(&mut dyn CoreData, &Dataset, u64) -> Result<usize, StoreError>,
}

/// The ids of a prepared dataset, and its device names.
struct Dataset {
    ids: Vec<String>,
    devices: Vec<String>,
}

const READING_READS: [ReadBench; 4] = [
    ReadBench {
        name: "Readings",
        call: "readings",
        records: DATASET_SIZE,
        op: |s, _, _| s.readings().map(|v| v.len()),
    },
    ReadBench {
        name: "ReadingCount",
        call: "reading_count",
        records: DATASET_SIZE,
        op: |s, _, _| s.reading_count(),
    },
    ReadBench {
        name: "ReadingById",
        call: "reading_by_id",
        records: 1,
        op: |s, d, i| s.reading_by_id(&d.ids[cycle(i)]).map(|_| 1),
    },
    ReadBench {
        name: "ReadingsByDevice",
        call: "readings_by_device",
        records: PER_DEVICE as usize,
        op: |s, d, i| {
            s.readings_by_device(&d.devices[device_of(i)], PER_DEVICE as usize)
                .map(|v| v.len())
        },
    },
];

const EVENT_READS: [ReadBench; 4] = [
    ReadBench {
        name: "Events",
        call: "events",
        records: DATASET_SIZE * (1 + READINGS_PER_EVENT),
        op: |s, _, _| s.events().map(|v| with_readings(&v)),
    },
    ReadBench {
        name: "EventCount",
        call: "event_count",
        records: DATASET_SIZE,
        op: |s, _, _| s.event_count(),
    },
    ReadBench {
        name: "EventById",
        call: "event_by_id",
        records: 1 + READINGS_PER_EVENT,
        op: |s, d, i| {
            s.event_by_id(&d.ids[cycle(i)])
                .map(|e| 1 + e.readings.len())
        },
    },
    ReadBench {
        name: "EventsForDevice",
        call: "events_for_device",
        records: PER_DEVICE as usize * (1 + READINGS_PER_EVENT),
        op: |s, d, i| {
            s.events_for_device(&d.devices[device_of(i)])
                .map(|v| with_readings(&v))
        },
    },
];

/// Events plus their readings.
fn with_readings(events: &[Event]) -> usize {
    events.iter().map(|e| 1 + e.readings.len()).sum()
}

/// Runs the selected benchmarks against `store`, `count` times each. `selected(bench)` says
/// which run; `on` receives progress and each finished benchmark.
pub fn run<C: Clock + Sync>(
    store: &mut dyn CoreData,
    runner: &mut Runner<C>,
    selected: &dyn Fn(&str) -> bool,
    count: u32,
    on: &mut dyn FnMut(Progress<'_>),
) -> Result<(), WorkloadError> {
    run_clients(&mut [store], runner, selected, count, on)
}

/// [`run`] with one client per store in `stores` (each on its own connection to the same
/// data), sharing every round's iterations as Go's `b.RunParallel` does; with one store it
/// is [`run`].
///
/// # Panics
/// When `stores` is empty.
pub fn run_clients<C: Clock + Sync>(
    stores: &mut [&mut dyn CoreData],
    runner: &mut Runner<C>,
    selected: &dyn Fn(&str) -> bool,
    count: u32,
    on: &mut dyn FnMut(Progress<'_>),
) -> Result<(), WorkloadError> {
    assert!(!stores.is_empty(), "run_clients needs at least one store");
    if !BENCHMARKS.iter().any(|b| selected(b)) {
        return Ok(());
    }
    let mut clients: Vec<Client<'_>> = stores
        .iter_mut()
        .map(|store| Client {
            store: &mut **store,
            reading: Reading::default(),
            device: String::new(),
        })
        .collect();
    // No scrub up front: every benchmark scrubs before it starts (Add*) or prepares.
    let mut session = Session { runner, count, on };

    // ---- readings phase ----
    if selected("AddReading") && !session.lacks(&clients, "AddReading", "add_reading") {
        session.measure(&mut clients, "AddReading", true, &|c, i| {
            // A fresh reading each time, as Go passes it by value: no id, no created.
            let reading = &mut c.reading;
            reading.id.clear();
            reading.created = 0;
            numbered(&mut reading.name, "test", i);
            numbered(&mut reading.device, "device", i / PER_DEVICE);
            c.store.add_reading(reading).map(drop)
        })?;
    }
    session.reads(
        &mut clients,
        selected,
        &READING_READS,
        "1,000 readings",
        prep_readings,
    )?;

    // ---- events phase ----
    if selected("AddEvent") && !session.lacks(&clients, "AddEvent", "add_event") {
        session.measure(&mut clients, "AddEvent", true, &|c, i| {
            numbered(&mut c.device, "device", i / PER_DEVICE);
            let mut e = new_event(&c.device);
            c.store.add_event(&mut e).map(drop)
        })?;
    }
    session.reads(
        &mut clients,
        selected,
        &EVENT_READS,
        "1,000 events × 5 readings",
        prep_events,
    )?;
    scrub(clients[0].store, "scrub")
}

/// One client: its store (its own connection) and the buffers its Add* iterations reuse.
struct Client<'a> {
    store: &'a mut dyn CoreData,
    reading: Reading,
    device: String,
}

/// One iteration of a benchmark on one client.
type Op<'a> = dyn Fn(&mut Client<'_>, u64) -> Result<(), StoreError> + Sync + 'a;

fn scrub(store: &mut dyn CoreData, bench: &'static str) -> Result<(), WorkloadError> {
    store
        .scrub_all_events()
        .map_err(|source| WorkloadError::Store { bench, source })
}

/// What every benchmark of one target shares: the runner, `--count`, the progress sink.
struct Session<'a, C: Clock + Sync> {
    runner: &'a mut Runner<C>,
    count: u32,
    on: &'a mut dyn FnMut(Progress<'_>),
}

impl<C: Clock + Sync> Session<'_, C> {
    /// Prepares a dataset (scrub, then `prep`, through the first client) and runs the
    /// selected read benchmarks on it; nothing when none is selected.
    fn reads(
        &mut self,
        clients: &mut [Client<'_>],
        selected: &dyn Fn(&str) -> bool,
        benches: &[ReadBench],
        what: &'static str,
        prep: fn(&mut dyn CoreData) -> Result<Vec<String>, WorkloadError>,
    ) -> Result<(), WorkloadError> {
        if !benches.iter().any(|b| selected(b.name)) {
            return Ok(());
        }
        (self.on)(Progress::Preparing(what));
        scrub(clients[0].store, "prep")?;
        let data = Dataset {
            ids: prep(clients[0].store)?,
            devices: device_names(),
        };
        for b in benches.iter().filter(|b| selected(b.name)) {
            if self.lacks(clients, b.name, b.call) {
                continue;
            }
            for c in clients.iter_mut() {
                let got = (b.op)(c.store, &data, 0).map_err(|source| WorkloadError::Store {
                    bench: b.name,
                    source,
                })?;
                expect(b.name, "records returned by one call", got, b.records)?;
            }
            self.measure(clients, b.name, false, &|c, i| {
                (b.op)(c.store, &data, i).map(drop)
            })?;
        }
        Ok(())
    }

    /// Whether `store` has no equivalent of `call`; if so, reports `bench` as not applicable
    /// (an empty result with the reason, shown as `—`).
    fn lacks(&mut self, clients: &[Client<'_>], bench: &'static str, call: &str) -> bool {
        let Some(why) = clients[0].store.no_equivalent(call) else {
            return false;
        };
        let result = BenchResults {
            name: bench.to_string(),
            runs: Vec::new(),
            not_applicable: Some(why.to_string()),
        };
        (self.on)(Progress::Finished(&result));
        true
    }

    /// Runs one benchmark `count` times and reports it. `writes` marks the Add* benchmarks:
    /// the store is emptied before every repetition, and sized around every round for the
    /// measured round's growth per op. One client runs the sequential [`Runner::run_on`];
    /// more share each round ([`Runner::run_parallel`]).
    fn measure(
        &mut self,
        clients: &mut [Client<'_>],
        bench: &'static str,
        writes: bool,
        op: &Op<'_>,
    ) -> Result<(), WorkloadError> {
        let mut result = BenchResults {
            name: bench.to_string(),
            runs: Vec::with_capacity(self.count as usize),
            not_applicable: None,
        };
        for repetition in 0..self.count {
            if writes {
                scrub(clients[0].store, bench)?;
            }
            // The writes' store growth: sized before the first round and after every round,
            // so the last two sizes bracket the measured round.
            let mut sizes = writes.then(|| StoreSizes::new(clients[0].store));
            let on = &mut *self.on;
            let mut on_round = |clients: &mut [Client<'_>], round| {
                if let Some(sizes) = &mut sizes {
                    sizes.after_round(clients[0].store);
                }
                on(Progress::Round {
                    bench,
                    repetition,
                    round,
                })
            };
            let mut m = match clients {
                [client] => self.runner.run_on(client, op, |client, round| {
                    on_round(std::slice::from_mut(client), round)
                }),
                _ => self.runner.run_parallel(clients, op, on_round),
            }
            .map_err(|e| match e {
                RunError::Op(source) => WorkloadError::Store { bench, source },
                RunError::Interrupted => WorkloadError::Interrupted,
            })?;
            m.store_bytes_per_op = sizes.and_then(|s| s.growth_per_op(m.n));
            result.runs.push(m);
        }
        (self.on)(Progress::Finished(&result));
        Ok(())
    }
}

/// The store's size ([`CoreData::size_bytes`]) before and after the latest round. A store
/// that cannot say, or fails to, gives no figure; the benchmark's own figures still stand.
struct StoreSizes {
    before: Option<u64>,
    after: Option<u64>,
}

impl StoreSizes {
    /// Sized before the first round.
    fn new(store: &mut dyn CoreData) -> Self {
        StoreSizes {
            before: None,
            after: store.size_bytes().ok().flatten(),
        }
    }

    /// Sized after a round: what was "after" the previous one is "before" this one.
    fn after_round(&mut self, store: &mut dyn CoreData) {
        self.before = self.after;
        self.after = store.size_bytes().ok().flatten();
    }

    /// Growth over the latest round, per op, in bytes; `None` unless both sizes are known.
    fn growth_per_op(&self, n: u64) -> Option<f64> {
        let (before, after) = (self.before?, self.after?);
        (n > 0).then(|| (after as f64 - before as f64) / n as f64)
    }
}

/// Adds the 1,000-reading dataset and checks it; returns the ids in insertion order.
fn prep_readings(store: &mut dyn CoreData) -> Result<Vec<String>, WorkloadError> {
    let bench = "prep readings";
    let err = |source| WorkloadError::Store { bench, source };
    let mut ids = Vec::with_capacity(DATASET_SIZE);
    for i in 0..DATASET_SIZE as u64 {
        let mut r = Reading {
            name: format!("test{i}"),
            device: format!("device{}", i / PER_DEVICE),
            ..Reading::default()
        };
        ids.push(store.add_reading(&mut r).map_err(err)?);
    }
    let count = store.reading_count().map_err(err)?;
    expect(bench, "reading_count()", count, DATASET_SIZE)?;
    // A store without reading ids (EdgeX's layouts) is checked by the count alone.
    if store.no_equivalent("reading_by_id").is_none() {
        let first = store.reading_by_id(&ids[0]).map_err(err)?;
        expect(
            bench,
            "reading_by_id(first).name",
            first.name.as_str(),
            "test0",
        )?;
    }
    Ok(ids)
}

/// Adds the 1,000-event dataset (5 readings each) and checks it; returns the event ids.
fn prep_events(store: &mut dyn CoreData) -> Result<Vec<String>, WorkloadError> {
    let bench = "prep events";
    let err = |source| WorkloadError::Store { bench, source };
    let mut ids = Vec::with_capacity(DATASET_SIZE);
    for i in 0..DATASET_SIZE as u64 {
        let mut e = new_event(&format!("device{}", i / PER_DEVICE));
        ids.push(store.add_event(&mut e).map_err(err)?);
    }
    expect(
        bench,
        "event_count()",
        store.event_count().map_err(err)?,
        DATASET_SIZE,
    )?;
    expect(
        bench,
        "reading_count()",
        store.reading_count().map_err(err)?,
        DATASET_SIZE * READINGS_PER_EVENT,
    )?;
    let first = store.event_by_id(&ids[0]).map_err(err)?;
    let names: Vec<&str> = first.readings.iter().map(|r| r.name.as_str()).collect();
    expect(
        bench,
        "event_by_id(first) reading names",
        names,
        EVENT_READING_NAMES.to_vec(),
    )?;
    Ok(ids)
}

fn expect<T: PartialEq + std::fmt::Debug>(
    bench: &'static str,
    what: &str,
    got: T,
    want: T,
) -> Result<(), WorkloadError> {
    if got == want {
        Ok(())
    } else {
        Err(WorkloadError::WrongData {
            bench,
            message: format!("{what} is {got:?}, expected {want:?}"),
        })
    }
}

/// An event of `device` with the 2018 harness's five readings.
fn new_event(device: &str) -> Event {
    Event {
        device: device.to_string(),
        readings: EVENT_READING_NAMES
            .iter()
            .map(|name| Reading {
                device: device.to_string(),
                name: (*name).to_string(),
                ..Reading::default()
            })
            .collect(),
        ..Event::default()
    }
}

/// "device0" … "device9".
fn device_names() -> Vec<String> {
    (0..DATASET_SIZE as u64 / PER_DEVICE)
        .map(|d| format!("device{d}"))
        .collect()
}

/// Writes `prefix` followed by `n` into `buf`, reusing its capacity.
fn numbered(buf: &mut String, prefix: &str, n: u64) {
    buf.clear();
    buf.push_str(prefix);
    // Writing into a String cannot fail.
    let _ = write!(buf, "{n}");
}

/// The dataset index of iteration `i`.
fn cycle(i: u64) -> usize {
    (i % DATASET_SIZE as u64) as usize
}

/// The device index of iteration `i` over a dataset: `(i % 1000) / 100`.
fn device_of(i: u64) -> usize {
    cycle(i) / PER_DEVICE as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarks_run_in_the_2018_harness_order() {
        // The seed gist is Go output of the 2018 harness: its benchmarks, in its order.
        let gist = include_str!("../../tests/fixtures/seed-gist-bench.txt");
        let r = crate::report::benchtomd::parse_go_bench(gist);
        for target in &r.targets {
            let names: Vec<&str> = target.benchmarks.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names, BENCHMARKS, "{}", target.name);
        }
    }
}
