//! The fleet against real stores (the in-process engine in EdgeX 3.1's layout), and against
//! wrappers that slow it down or lose events on purpose.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::edgex;
use crate::edgex::Event;
use crate::engine::{Engine, EngineConnection};
use crate::store::edgex::{Doomed, Page};
use crate::store::redis::edgex3::Redis3Store;

/// A store that sleeps before each write, or answers every `drop_every`th write without
/// storing it.
struct Faulty {
    inner: Redis3Store<EngineConnection>,
    sleep: Duration,
    drop_every: u64,
    writes: Arc<AtomicU64>,
}

impl EventStore for Faulty {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        std::thread::sleep(self.sleep);
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.drop_every > 0 && n.is_multiple_of(self.drop_every) {
            return Ok(());
        }
        self.inner.add_event(event)
    }
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        self.inner.event_by_id(id)
    }
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.inner.delete_event_by_id(id)
    }
    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.inner.event_count(filter)
    }
    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        self.inner.events(filter, page)
    }
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        self.inner.delete_events(doomed)
    }
    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.inner.reading_count(filter)
    }
    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        self.inner.readings(filter, page)
    }
    fn scrub(&mut self) -> StoreResult<()> {
        self.inner.scrub()
    }
}

fn opener(
    engine: &Engine,
    sleep: Duration,
    drop_every: u64,
) -> impl Fn() -> StoreResult<Box<dyn EventStore>> + Sync {
    let engine = engine.clone();
    let writes = Arc::new(AtomicU64::new(0));
    move || {
        Ok(Box::new(Faulty {
            inner: Redis3Store::new(EngineConnection::new(engine.clone())),
            sleep,
            drop_every,
            writes: Arc::clone(&writes),
        }) as Box<dyn EventStore>)
    }
}

fn spec(rate: f64, seconds: u64) -> FleetSpec {
    FleetSpec {
        devices: 10,
        events_per_second: rate,
        readings_per_event: 3,
        duration: Duration::from_secs(seconds),
        warmup: Duration::ZERO,
        // Generous: these tests run beside others on a loaded machine; the exact late counts
        // are `schedule`'s tests.
        late_after: Duration::from_millis(50),
        ..FleetSpec::default()
    }
}

#[test]
fn a_fleet_the_store_keeps_up_with_is_all_stored() {
    let engine = Engine::new();
    let s = spec(50.0, 1);
    let r = run(
        &s,
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    assert_eq!(r.offered, 50);
    assert_eq!(
        (r.writes.sent, r.writes.unsent, r.writes.failed),
        (50, 0, 0)
    );
    assert_eq!((r.stored, r.missing), (50, Some(0)));
    // Ten devices, five events each, three readings per event.
    let mut store = Redis3Store::new(EngineConnection::new(engine));
    assert_eq!(
        store
            .event_count(Filter::device("device-0003"))
            .expect("counts"),
        5
    );
    assert_eq!(store.reading_count(Filter::all()).expect("counts"), 150);
}

#[test]
fn a_slowed_store_grows_corrected_latency_and_leaves_a_backlog() {
    // 200 events/s for 1 s against a store that takes 10 ms a write (100 events/s at best).
    let engine = Engine::new();
    let s = spec(200.0, 1);
    let r = run(
        &s,
        &opener(&engine, Duration::from_millis(10), 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    let w = &r.writes;
    assert!(w.unsent > 0, "a backlog is left: {w:?}");
    assert_eq!(w.sent + w.unsent, r.offered);
    assert_eq!((r.stored, r.missing), (w.sent, Some(0)));
    // Uncorrected latency is the store's 10 ms; corrected grows with the backlog: the last
    // events sent were due long before (at least ~0.4 s at half the offered rate).
    assert!(w.uncorrected.value_at_quantile(0.5) < 100_000_000, "{w:?}");
    assert!(w.corrected.max() > 300_000_000, "{w:?}");
    assert!(matches!(r.verdict, Verdict::FellBehind(_)));
}

#[test]
fn events_answered_but_not_stored_are_counted_missing() {
    let engine = Engine::new();
    let s = spec(40.0, 1);
    let r = run(
        &s,
        &opener(&engine, Duration::ZERO, 4),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    assert_eq!((r.writes.sent, r.stored, r.missing), (40, 30, Some(10)));
    assert_eq!(
        r.verdict,
        Verdict::FellBehind("10 events answered as written are not stored".to_string())
    );
}

#[test]
fn writers_split_the_fleet_and_store_every_event() {
    let engine = Engine::new();
    let s = FleetSpec {
        writers: 3,
        ..spec(60.0, 1)
    };
    let r = run(
        &s,
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    assert_eq!((r.writes.sent, r.stored, r.missing), (60, 60, Some(0)));
}

#[test]
fn readers_run_alongside_the_writers_open_or_closed_loop() {
    let engine = Engine::new();
    let open_loop = FleetSpec {
        readers: 2,
        read_rate: Some(20.0),
        ..spec(40.0, 1)
    };
    let r = run(
        &open_loop,
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    let reads = r.reads.expect("readers ran");
    // Two readers at 20 reads/s for 1 s: 40 due.
    assert_eq!(reads.sent + reads.unsent, 40);
    assert_eq!(reads.failed, 0, "{:?}", reads.first_error);
    assert_eq!((r.writes.sent, r.stored), (40, 40));

    let closed_loop = FleetSpec {
        readers: 1,
        ..spec(40.0, 1)
    };
    let r = run(
        &closed_loop,
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    let reads = r.reads.expect("readers ran");
    assert!(reads.sent > 0);
    assert_eq!((reads.failed, reads.unsent), (0, 0));
    assert_eq!(reads.measured, reads.corrected.len());
}

/// `n` events of `per` readings, one second apart in origin, the newest a minute ago.
fn add_spaced_events(store: &mut dyn EventStore, n: i64, per: u64) {
    let s = FleetSpec {
        readings_per_event: per,
        ..FleetSpec::default()
    };
    let newest = edgex::now_ns() - 60_000_000_000;
    for i in 0..n {
        let origin = newest - (n - 1 - i) * 1_000_000_000;
        store.add_event(&s.event(i as u64, origin)).expect("adds");
    }
}

#[test]
fn the_watermark_leaves_exactly_the_readings_newer_than_its_event() {
    let engine = Engine::new();
    let mut store = Redis3Store::new(EngineConnection::new(engine));
    // 20 events of 5 readings: 100 readings.
    add_spaced_events(&mut store, 20, 5);
    // Under the high mark nothing happens.
    assert_eq!(
        retention::purge_to_watermark(&mut store, 101, 32).expect("purges"),
        None
    );
    assert_eq!(store.reading_count(Filter::all()).expect("counts"), 100);
    // At 100 >= 50: the reading at offset 32 (newest first) is the 3rd of the 7th newest
    // event (offsets 30..=34); that event and every older one go, the 6 newest stay.
    let origin = retention::purge_to_watermark(&mut store, 50, 32).expect("purges");
    assert!(origin.is_some());
    assert_eq!(store.event_count(Filter::all()).expect("counts"), 6);
    assert_eq!(store.reading_count(Filter::all()).expect("counts"), 30);
    let oldest_left = store
        .events(Filter::all(), Page::first(6))
        .expect("lists")
        .iter()
        .map(|e| e.origin)
        .min();
    assert!(oldest_left > origin, "{oldest_left:?} > {origin:?}");
}

#[test]
fn age_retention_deletes_only_older_events() {
    let engine = Engine::new();
    let mut store = Redis3Store::new(EngineConnection::new(engine));
    // Origins 60..=79 s ago.
    add_spaced_events(&mut store, 20, 2);
    let r = Retention {
        retain: Some(Duration::from_secs(70)),
        caps: None,
        per_source: None,
        interval: Duration::from_secs(1),
    };
    retention::purge(&mut store, &r).expect("purges");
    // Kept: the events 60..=69 s old (10); the one exactly 70 s old is older by the time the
    // store looks.
    assert_eq!(store.event_count(Filter::all()).expect("counts"), 10);
}

#[test]
fn a_fleet_with_a_watermark_purges_while_it_writes() {
    let engine = Engine::new();
    let s = FleetSpec {
        readings_per_event: 2,
        retention: Retention {
            retain: None,
            caps: Some((40, 20)),
            per_source: None,
            interval: Duration::from_millis(200),
        },
        ..spec(100.0, 1)
    };
    let r = run(
        &s,
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    let p = r.purges.expect("purged");
    assert!(p.purges >= 3, "{p:?}");
    assert_eq!(p.failed, 0, "{:?}", p.first_error);
    assert_eq!(r.missing, None);
    // Whatever the last purge left (at most 20 readings, 10 events), plus what came after it:
    // far fewer than the 100 events written.
    assert!(r.stored < r.writes.sent, "{} < {}", r.stored, r.writes.sent);
}

#[test]
fn the_backlog_is_dated_from_the_second_it_stopped_shrinking() {
    // 1,000 events/s, 1 ms late allowed: a backlog of 2 events is on time.
    let s = FleetSpec {
        late_after: Duration::from_millis(1),
        ..spec(1000.0, 5)
    };
    assert_eq!(backlog_from(&s, &[0, 1, 5, 10, 20]), Some(3));
    assert_eq!(backlog_from(&s, &[0, 10, 0]), None);
    assert_eq!(backlog_from(&s, &[5, 6]), Some(1));
    assert_eq!(backlog_from(&s, &[]), None);
}

#[test]
fn writers_report_their_cpu() {
    let engine = Engine::new();
    let r = run(
        &spec(50.0, 1),
        &opener(&engine, Duration::ZERO, 0),
        &AtomicBool::new(false),
        &|_| {},
    )
    .expect("runs");
    // Building 50 events and writing them to the in-process engine takes some CPU, and far
    // less than the second the run lasted.
    assert!(
        r.writes.cpu_ns > 0 && r.writes.cpu_ns < 1_000_000_000,
        "{}",
        r.writes.cpu_ns
    );
    assert!(
        r.writes.generator_ns > 0,
        "the writer measured its own work: {}",
        r.writes.generator_ns
    );
}

#[test]
fn a_stopped_run_says_so_and_keeps_its_counts() {
    let engine = Engine::new();
    let stop = AtomicBool::new(true);
    let r = run(
        &spec(50.0, 1),
        &opener(&engine, Duration::ZERO, 0),
        &stop,
        &|_| {},
    )
    .expect("runs");
    assert_eq!(r.verdict, Verdict::Interrupted);
    // Stopped before the first send: everything due is unsent, nothing stored.
    assert_eq!((r.writes.sent, r.writes.unsent, r.stored), (0, 50, 0));
}

#[test]
fn every_bound_is_checked_with_the_setting_named() {
    let bad = |f: fn(&mut FleetSpec), key: &str| {
        let mut s = FleetSpec::default();
        f(&mut s);
        let e = s.check().expect_err("refused");
        assert!(e.starts_with(key), "{e}");
    };
    bad(|s| s.devices = 0, "devices");
    bad(|s| s.devices = MAX_DEVICES + 1, "devices");
    bad(|s| s.readings_per_event = 0, "readings-per-event");
    bad(|s| s.writers = 5000, "writers");
    bad(|s| s.events_per_second = f64::NAN, "events-per-second");
    bad(|s| s.events_per_second = 1e15, "events-per-second");
    bad(|s| s.value_type = "Int65".into(), "value-type");
    bad(
        |s| {
            s.value_type = "Binary".into();
            s.value_size = MAX_VALUE_SIZE + 1;
        },
        "value-size",
    );
    bad(|s| s.resources = vec![String::new()], "resources");
    bad(|s| s.warmup = s.duration, "warmup");
    bad(|s| s.readers = MAX_READERS + 1, "readers");
    bad(|s| s.read_rate = Some(0.0), "read-rate");
    bad(|s| s.retention.caps = Some((10, 10)), "max-cap");
    bad(|s| s.duration = Duration::from_secs(3 * 3600), "duration");
    bad(
        |s| {
            s.writers = 1000;
            s.duration = Duration::from_secs(60);
        },
        "writers",
    );
    bad(|s| s.retention.interval = Duration::ZERO, "purge-interval");
    assert_eq!(FleetSpec::default().check(), Ok(()));
}

#[test]
fn events_carry_the_value_type_asked_for() {
    let s = FleetSpec {
        value_type: "Binary".into(),
        value_size: 7,
        ..FleetSpec::default()
    };
    let e = s.event(123, 1_700_000_000_000_000_000);
    assert_eq!(e.device_name, "device-0023");
    assert_eq!(e.readings.len(), 5);
    assert_eq!(e.readings[1].resource_name, "pressure");
    match &e.readings[0].value {
        ReadingValue::Binary { data, .. } => assert_eq!(data.len(), 7),
        other => panic!("{other:?}"),
    }
    let o = FleetSpec {
        value_type: "Object".into(),
        ..FleetSpec::default()
    };
    assert!(matches!(
        o.event(1, 1).readings[0].value,
        ReadingValue::Object(_)
    ));
    let f = FleetSpec {
        value_type: "Float64".into(),
        ..FleetSpec::default()
    };
    assert_eq!(
        f.event(1, 1).readings[0].value,
        ReadingValue::Simple("0.01".into())
    );
}

#[test]
fn a_refilled_event_is_the_event_built_afresh_with_new_ids() {
    for value_type in [
        "Int64",
        "Float64",
        "Bool",
        "String",
        "Binary",
        "Object",
        "Int8Array",
    ] {
        let s = FleetSpec {
            value_type: value_type.into(),
            value_size: 5,
            devices: 7,
            ..FleetSpec::default()
        };
        // One buffer, refilled: first event 3, then event 10 (another device, other values).
        let mut e = s.blank_event();
        s.refill(&mut e, 3, 42);
        let first_ids: Vec<String> = std::iter::once(e.id.clone())
            .chain(e.readings.iter().map(|r| r.id.clone()))
            .collect();
        s.refill(&mut e, 10, 99);
        let mut fresh = s.event(10, 99);
        // Every field is the fresh event's but the ids, which are new ones.
        let ids: Vec<String> = std::iter::once(e.id.clone())
            .chain(e.readings.iter().map(|r| r.id.clone()))
            .collect();
        for id in &ids {
            assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
            assert_eq!(id, &id.to_lowercase());
            assert!(!first_ids.contains(id), "{value_type}: {id} reused");
        }
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), 6, "{value_type}: {ids:?}");
        fresh.id.clone_from(&e.id);
        for (f, r) in fresh.readings.iter_mut().zip(&e.readings) {
            f.id.clone_from(&r.id);
        }
        assert_eq!(e, fresh, "{value_type}");
        assert_eq!(e.device_name, "device-0003");
    }
}

#[test]
fn the_bus_backlog_grew_from_the_first_second_of_its_last_rise() {
    let s = |v: &[(u64, u64)]| v.iter().map(|&(p, d)| (p, Some(d))).collect::<Vec<_>>();
    // Backlogs 0, 0, 5, 10, 20: rising in seconds 3, 4 and 5.
    assert_eq!(
        super::bus_backlog_from(&s(&[(10, 10), (20, 20), (30, 25), (40, 30), (50, 30)])),
        Some(3)
    );
    // Rising once at the end is not a trend; flat or shrinking is none.
    assert_eq!(
        super::bus_backlog_from(&s(&[(10, 10), (20, 20), (30, 25)])),
        None
    );
    assert_eq!(
        super::bus_backlog_from(&s(&[(10, 5), (20, 15), (30, 25)])),
        None
    );
    assert_eq!(super::bus_backlog_from(&[]), None);
    // A second whose count is unknown breaks the run.
    let mut gap = s(&[(10, 10), (20, 15), (30, 15), (40, 15), (50, 15)]);
    gap[1].1 = None;
    assert_eq!(super::bus_backlog_from(&gap), Some(4));
}
