//! The ten EdgeX core-data benchmarks of the 2018 Redis PoC, over any [`CoreData`] store.
//!
//! Datasets and per-iteration work follow the final PoC harness (`redis_client@2e866b8`,
//! `../shared/reference/edgex-core-data.md` §2.2 and §7):
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
//! Before the read benchmarks the prepared dataset is checked (counts, and readings attached
//! to events), outside any timing, so a store that drops data cannot post a fast figure.

use std::fmt::Write as _;

use crate::model::{Event, Reading};
use crate::results::BenchResults;
use crate::runner::{Clock, Round, RunError, Runner};
use crate::store::{CoreData, StoreError};

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

const READ_READINGS: [&str; 4] = [
    "Readings",
    "ReadingCount",
    "ReadingById",
    "ReadingsByDevice",
];
const READ_EVENTS: [&str; 4] = ["Events", "EventCount", "EventById", "EventsForDevice"];

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

/// Runs the selected benchmarks against `store`, `count` times each. `selected(bench)` says
/// which run; `on` receives progress and each finished benchmark.
pub fn run<C: Clock>(
    store: &mut dyn CoreData,
    runner: &mut Runner<C>,
    selected: &dyn Fn(&str) -> bool,
    count: u32,
    on: &mut dyn FnMut(Progress<'_>),
) -> Result<(), WorkloadError> {
    if !BENCHMARKS.iter().any(|b| selected(b)) {
        return Ok(());
    }
    let scrub = |store: &mut dyn CoreData, bench: &'static str| {
        store
            .scrub_all_events()
            .map_err(|source| WorkloadError::Store { bench, source })
    };
    scrub(store, "scrub")?;

    // ---- readings phase ----
    if selected("AddReading") {
        let mut reading = Reading::default();
        let (mut name, mut device) = (String::new(), String::new());
        measure(
            runner,
            store,
            "AddReading",
            count,
            true,
            on,
            &mut |store, i| {
                numbered(&mut name, "test", i);
                numbered(&mut device, "device", i / PER_DEVICE);
                reading.name.clone_from(&name);
                reading.device.clone_from(&device);
                store.add_reading(&mut reading).map(drop)
            },
        )?;
    }
    if READ_READINGS.iter().any(|b| selected(b)) {
        on(Progress::Preparing("1,000 readings"));
        scrub(store, "prep readings")?;
        let ids = prep_readings(store)?;
        let devices = device_names();
        if selected("Readings") {
            measure(runner, store, "Readings", count, false, on, &mut |s, _| {
                s.readings().map(drop)
            })?;
        }
        if selected("ReadingCount") {
            measure(
                runner,
                store,
                "ReadingCount",
                count,
                false,
                on,
                &mut |s, _| s.reading_count().map(drop),
            )?;
        }
        if selected("ReadingById") {
            measure(
                runner,
                store,
                "ReadingById",
                count,
                false,
                on,
                &mut |s, i| s.reading_by_id(&ids[cycle(i)]).map(drop),
            )?;
        }
        if selected("ReadingsByDevice") {
            measure(
                runner,
                store,
                "ReadingsByDevice",
                count,
                false,
                on,
                &mut |s, i| {
                    s.readings_by_device(&devices[device_of(i)], PER_DEVICE as usize)
                        .map(drop)
                },
            )?;
        }
    }

    // ---- events phase ----
    if selected("AddEvent") {
        let mut device = String::new();
        measure(
            runner,
            store,
            "AddEvent",
            count,
            true,
            on,
            &mut |store, i| {
                numbered(&mut device, "device", i / PER_DEVICE);
                let mut e = new_event(&device);
                store.add_event(&mut e).map(drop)
            },
        )?;
    }
    if READ_EVENTS.iter().any(|b| selected(b)) {
        on(Progress::Preparing("1,000 events × 5 readings"));
        scrub(store, "prep events")?;
        let ids = prep_events(store)?;
        let devices = device_names();
        if selected("Events") {
            measure(runner, store, "Events", count, false, on, &mut |s, _| {
                s.events().map(drop)
            })?;
        }
        if selected("EventCount") {
            measure(
                runner,
                store,
                "EventCount",
                count,
                false,
                on,
                &mut |s, _| s.event_count().map(drop),
            )?;
        }
        if selected("EventById") {
            measure(runner, store, "EventById", count, false, on, &mut |s, i| {
                s.event_by_id(&ids[cycle(i)]).map(drop)
            })?;
        }
        if selected("EventsForDevice") {
            measure(
                runner,
                store,
                "EventsForDevice",
                count,
                false,
                on,
                &mut |s, i| s.events_for_device(&devices[device_of(i)]).map(drop),
            )?;
        }
    }
    scrub(store, "scrub")
}

/// Runs one benchmark `count` times and reports it.
#[allow(clippy::too_many_arguments)]
fn measure<C: Clock>(
    runner: &mut Runner<C>,
    store: &mut dyn CoreData,
    bench: &'static str,
    count: u32,
    scrub_each: bool,
    on: &mut dyn FnMut(Progress<'_>),
    op: &mut dyn FnMut(&mut dyn CoreData, u64) -> Result<(), StoreError>,
) -> Result<(), WorkloadError> {
    let mut result = BenchResults {
        name: bench.to_string(),
        runs: Vec::with_capacity(count as usize),
    };
    for repetition in 0..count {
        if scrub_each {
            store
                .scrub_all_events()
                .map_err(|source| WorkloadError::Store { bench, source })?;
        }
        let m = runner
            .run(
                |i| op(&mut *store, i),
                |round| {
                    on(Progress::Round {
                        bench,
                        repetition,
                        round,
                    })
                },
            )
            .map_err(|e| match e {
                RunError::Op(source) => WorkloadError::Store { bench, source },
                RunError::Interrupted => WorkloadError::Interrupted,
            })?;
        result.runs.push(m);
    }
    on(Progress::Finished(&result));
    Ok(())
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
    let first = store.reading_by_id(&ids[0]).map_err(err)?;
    expect(
        bench,
        "reading_by_id(first).name",
        first.name.as_str(),
        "test0",
    )?;
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
