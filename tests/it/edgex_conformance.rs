//! The EdgeX 3/4 conformance suite, the one every [`EventStore`] passes: the EdgeX 3.1 Redis
//! layout on every Redis-protocol target (redis-server over TCP and a Unix socket, with a
//! replica and WAIT, Redis Cluster, the engine in process and served over TCP and a socket),
//! the EdgeX 4.0 schema on PostgreSQL (TCP, socket) and SQLite (file, memory), EdgeX 4.0's
//! records as MongoDB documents, and each kind of store behind edgebench's core-data service
//! over TCP and over a Unix socket. They give the same answers to the same calls, as
//! `edgebench::store::edgex` documents them.
//!
//! Each check starts from an empty store and asserts exact results. Where EdgeX's own layouts
//! differ on purpose (EdgeX 4.0 keeps no reading ids and stores a repeated event id twice;
//! EdgeX 3.1 blanks binary payloads), the check asks the store which behaviour it has and
//! asserts that one exactly. What only one layout has (its keys, rows, documents, commands)
//! is checked beside the layout: `store::redis::edgex3::tests`, `store::postgres::edgex4::
//! tests`, `store::sqlite::edgex4::tests`, [`crate::mongo4_queries`], [`crate::cluster_edgex`].
//!
//! Adding a backend is one `edgex_suite!` line; adding a check is one function and one name in
//! `edgex_conformance_tests!`.

use edgebench::edgex::testing::{at, event, event_of, every_value_kind, reading, simple, typed};
use edgebench::edgex::testing::{OrPanic, US};
use edgebench::edgex::{new_uuid, now_ns, Event, Reading, ReadingValue};
use edgebench::store::edgex::{
    DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter, UNLIMITED,
};
use edgebench::store::StoreError;

use crate::common::{self, EdgexBackend};

/// One `#[test]` per check.
macro_rules! edgex_conformance_tests {
    ($($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                let mut backend: EdgexBackend = open();
                super::$check(&mut backend);
            }
        )*
    };
}

/// `edgex_suite!(backend_name, || open_an_empty_backend())`.
macro_rules! edgex_suite {
    ($backend:ident, $open:expr) => {
        mod $backend {
            use super::*;

            fn open() -> EdgexBackend {
                ($open)()
            }

            edgex_conformance_tests! {
                every_value_kind_round_trips,
                ids_are_case_insensitive_and_unknown_ids_are_not_found,
                counts_follow_every_filter,
                event_lists_are_newest_first_and_paged,
                reading_lists_follow_filters_pages_and_ranges,
                time_ranges_are_inclusive_at_both_ends,
                repeated_event_ids_are_refused_or_stored_twice,
                deleting_an_event_deletes_its_readings,
                deleting_by_device_leaves_other_devices,
                deleting_by_age_removes_only_older_events,
                scrub_empties_the_store,
                readings_come_back_in_the_order_sent,
                size_grows_with_the_data,
                a_batch_stores_what_add_event_stores,
                an_empty_batch_stores_nothing,
                a_batch_with_a_refused_event_is_stored_whole_or_up_to_it,
                source_counts_and_lists_hold_one_device_and_source,
                deleting_by_source_leaves_other_sources_and_devices,
            }
        }
    };
}

edgex_suite!(redis3_tcp, || common::edgex(
    "redis-tcp",
    "edgex3",
    "direct"
));
edgex_suite!(redis3_uds, || common::edgex(
    "redis-uds",
    "edgex3",
    "direct"
));
edgex_suite!(redis3_tcp_replica_wait, || common::edgex(
    "redis-tcp?replicas=1&wait=1",
    "edgex3",
    "direct"
));
edgex_suite!(redis3_cluster, || common::edgex(
    "redis-cluster",
    "edgex3",
    "direct"
));
edgex_suite!(redis3_embedded, || common::edgex(
    "embedded", "edgex3", "direct"
));
edgex_suite!(redis3_embedded_tcp, || common::edgex(
    "embedded-tcp",
    "edgex3",
    "direct"
));
edgex_suite!(redis3_embedded_uds, || common::edgex(
    "embedded-uds",
    "edgex3",
    "direct"
));
edgex_suite!(sqlite4_file, || common::edgex("sqlite", "edgex4", "direct"));
edgex_suite!(sqlite4_memory, || common::edgex(
    "sqlite::memory:",
    "edgex4",
    "direct"
));
edgex_suite!(pg4_tcp, || common::edgex("pg-tcp", "edgex4", "direct"));
edgex_suite!(pg4_uds, || common::edgex("pg-uds", "edgex4", "direct"));
edgex_suite!(mongo4, || common::mongo::edgex4("direct"));
edgex_suite!(service_tcp_redis_uds, || common::edgex(
    "redis-uds",
    "edgex3",
    "http-tcp"
));
edgex_suite!(service_uds_redis_tcp, || common::edgex(
    "redis-tcp",
    "edgex3",
    "http-uds"
));
edgex_suite!(service_uds_embedded, || common::edgex(
    "embedded", "edgex3", "http-uds"
));
edgex_suite!(service_tcp_embedded_uds, || common::edgex(
    "embedded-uds",
    "edgex3",
    "http-tcp"
));
edgex_suite!(service_tcp_sqlite, || common::edgex(
    "sqlite", "edgex4", "http-tcp"
));
edgex_suite!(service_uds_sqlite_memory, || common::edgex(
    "sqlite::memory:",
    "edgex4",
    "http-uds"
));
edgex_suite!(service_tcp_pg_uds, || common::edgex(
    "pg-uds", "edgex4", "http-tcp"
));
edgex_suite!(service_uds_pg_tcp, || common::edgex(
    "pg-tcp", "edgex4", "http-uds"
));
edgex_suite!(service_tcp_mongo4, || common::mongo::edgex4("http-tcp"));
edgex_suite!(service_uds_mongo4, || common::mongo::edgex4("http-uds"));

// ---- the data ----

fn add(store: &mut dyn EventStore, e: &Event) {
    store
        .add_event(e)
        .unwrap_or_else(|err| panic!("add_event {}: {err}", e.id));
}

fn ids(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.id.as_str()).collect()
}

/// The ids of `events[n]` for each `n` of `ns`.
fn ids_of<'a>(events: &'a [Event], ns: &[usize]) -> Vec<&'a str> {
    ns.iter().map(|&n| events[n].id.as_str()).collect()
}

/// What a store gives back for `sent`: the same, except what the layout does not keep.
fn as_stored(store: &dyn EventStore, sent: &Event) -> Event {
    let mut want = sent.clone();
    for r in &mut want.readings {
        *r = reading_as_stored(store, r);
    }
    want
}

fn reading_as_stored(store: &dyn EventStore, sent: &Reading) -> Reading {
    let mut want = sent.clone();
    if !store.keeps_reading_ids() {
        want.id.clear();
    }
    if !store.keeps_binary_values() {
        if let ReadingValue::Binary { data, .. } = &mut want.value {
            data.clear();
        }
    }
    want
}

/// The conformance data set: six events, `n` = 0..6, of device `d0` (even `n`) or `d1` (odd),
/// at [`at`]`(10 n)`. Each has a `temp` reading (Int64 `n`) at its origin; `d0`'s also have a
/// `hum` reading (Float64 0.25) 1 µs earlier, so no two readings share an origin. 6 events, 9
/// readings: newest first t5 t4 h4 t3 t2 h2 t1 t0 h0 (at 50 40 39 30 20 19 10 0 -1 µs).
///
/// The hum readings are older than their event, not newer: EdgeX 4.0 deletes an event's
/// readings up to the event's origin only (`origin <= $1 AND event_id = $2`) and returns an
/// event's readings newest first, so the order sent is also the order it returns.
fn six_events(store: &mut dyn EventStore) -> Vec<Event> {
    (0..6)
        .map(|n| {
            let device = format!("d{}", n % 2);
            let origin = at(10 * n);
            let mut readings = vec![reading(&device, "temp", origin, simple(&n.to_string()))];
            if n % 2 == 0 {
                let hum = reading(&device, "hum", origin - US, simple("0.25"));
                readings.push(typed("Float64", hum));
            }
            let e = event(&device, origin, readings);
            add(store, &e);
            e
        })
        .collect()
}

/// A reading of [`six_events`]: `t(n)` is event `n`'s temp, `h(n)` its hum.
#[derive(Clone, Copy)]
enum R {
    T(usize),
    H(usize),
}
use R::{H, T};

/// The readings `picks` names, as `store` gives them back.
fn readings_of(store: &dyn EventStore, events: &[Event], picks: &[R]) -> Vec<Reading> {
    picks
        .iter()
        .map(|pick| match *pick {
            T(n) => &events[n].readings[0],
            H(n) => &events[n].readings[1],
        })
        .map(|r| reading_as_stored(store, r))
        .collect()
}

fn page(offset: usize, limit: usize) -> Page {
    Page { offset, limit }
}

fn both<'a>(device: &'a str, resource: &'a str) -> Filter<'a> {
    Filter {
        device: Some(device),
        resource: Some(resource),
        range: None,
    }
}

/// `check`s what a direct store answers; a service refuses the call (EdgeX's API has no route
/// for events by device and time range).
#[track_caller]
fn unless_service<T: std::fmt::Debug>(
    service: bool,
    got: Result<T, StoreError>,
    check: impl FnOnce(T),
) {
    match (service, got) {
        (false, Ok(got)) => check(got),
        (true, Err(_)) => {}
        (service, other) => panic!("service {service}: {other:?}"),
    }
}

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>, wanted: &str) {
    match result {
        Err(StoreError::NotFound { kind: "event", id }) => assert_eq!(id, wanted),
        other => panic!("expected NotFound for event {wanted}, got {other:?}"),
    }
}

// ---- the checks ----

fn every_value_kind_round_trips(backend: &mut EdgexBackend) {
    let store = backend.store();
    let sent = every_value_kind("dev-a", at(7));
    // No tags at all (EdgeX's nil map) must come back as none, not as empty tags.
    let bare = event(
        "dev-a",
        at(8),
        vec![typed("Int8", reading("dev-a", "x", at(8), simple("-7")))],
    );
    add(store, &sent);
    add(store, &bare);
    let got = store.event_by_id(&sent.id).or_panic();
    assert_eq!(got, as_stored(store, &sent));
    // Ids are UUIDs in any case.
    let upper = store.event_by_id(&sent.id.to_uppercase()).or_panic();
    assert_eq!(upper, got);
    assert_eq!(
        store.event_by_id(&bare.id).or_panic(),
        as_stored(store, &bare)
    );
    // The lists return the same events and readings as the by-id call.
    let listed = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(listed, vec![as_stored(store, &bare), got.clone()]);
    let mut readings = store
        .readings(Filter::device("dev-a"), Page::ALL)
        .or_panic();
    assert_eq!(readings.len(), sent.readings.len() + 1);
    // Newest first: the bare event's reading, then the mixed ones (ties in any order).
    assert_eq!(readings.remove(0), as_stored(store, &bare).readings[0]);
    for r in &got.readings {
        assert!(readings.contains(r), "{r:?} listed");
    }
}

fn ids_are_case_insensitive_and_unknown_ids_are_not_found(backend: &mut EdgexBackend) {
    let service = backend.is_service();
    let store = backend.store();
    let e = event_of("d", at(1), &["temp"]);
    add(store, &e);
    let got = store.event_by_id(&e.id.to_uppercase()).or_panic();
    assert_eq!(got, as_stored(store, &e));
    let unknown = new_uuid();
    assert_not_found(store.event_by_id(&unknown), &unknown);
    assert_not_found(store.delete_event_by_id(&unknown), &unknown);
    // An id that is not a UUID names no event. A service refuses it as a bad request, as
    // EdgeX's does, before any store sees it.
    let malformed = "not-a-uuid";
    if service {
        assert!(store.event_by_id(malformed).is_err());
    } else {
        assert_not_found(store.event_by_id(malformed), malformed);
    }
    assert_eq!(store.event_count(Filter::all()).or_panic(), 1);
}

fn counts_follow_every_filter(backend: &mut EdgexBackend) {
    let (service, secantus) = (backend.is_service(), backend.is_on_secantus());
    // Where SecantusDB leaves out the record at a range's start (see `is_on_secantus`).
    let start = |n: u64| if secantus { n - 1 } else { n };
    let store = backend.store();
    six_events(store);
    let d1_range = Filter::device("d1").between(at(0), at(30));
    unless_service(service, store.event_count(d1_range), |n| assert_eq!(n, 2));
    let event_cases: [(Filter<'_>, u64); 8] = [
        (Filter::all(), 6),
        (Filter::device("d0"), 3),
        (Filter::device("d1"), 3),
        (Filter::device("nobody"), 0),
        (Filter::all().between(at(10), at(30)), 3),
        // Events have no resource: the filter's resource is ignored.
        (Filter::resource("hum"), 6),
        (Filter::resource("hum").between(at(20), at(40)), 3),
        (Filter::all().between(at(51), at(90)), 0),
    ];
    for (filter, n) in event_cases {
        assert_eq!(store.event_count(filter).or_panic(), n, "events {filter:?}");
    }
    let reading_cases: [(Filter<'_>, u64); 16] = [
        (Filter::all(), 9),
        (Filter::device("d0"), 6),
        (Filter::device("d1"), 3),
        (Filter::device("nobody"), 0),
        (Filter::resource("temp"), 6),
        (Filter::resource("hum"), 3),
        (both("d0", "hum"), 3),
        (both("d1", "hum"), 0),
        (both("d1", "temp"), 3),
        (Filter::all().between(at(0), at(20)), 4),
        (Filter::all().between(at(19), at(20)), 2),
        (Filter::device("d1").between(at(0), at(30)), 2),
        (Filter::resource("hum").between(at(19), at(39)), start(2)),
        (both("d0", "temp").between(at(0), at(20)), start(2)),
        (both("d1", "temp").between(at(10), at(30)), start(2)),
        (Filter::all().between(at(50), at(90)), 1),
    ];
    for (filter, n) in reading_cases {
        assert_eq!(
            store.reading_count(filter).or_panic(),
            n,
            "readings {filter:?}"
        );
    }
}

fn event_lists_are_newest_first_and_paged(backend: &mut EdgexBackend) {
    let service = backend.is_service();
    let store = backend.store();
    let sent = six_events(store);
    let d1_range = Filter::device("d1").between(at(0), at(30));
    unless_service(service, store.events(d1_range, Page::ALL), |got| {
        assert_eq!(ids(&got), ids_of(&sent, &[3, 1]));
    });
    let list = |s: &mut dyn EventStore, f: Filter<'_>, p: Page| {
        let got = s.events(f, p).or_panic();
        ids(&got).into_iter().map(String::from).collect::<Vec<_>>()
    };
    let all = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&all), ids_of(&sent, &[5, 4, 3, 2, 1, 0]));
    // Each listed event has its readings, in sent order.
    for (got, n) in all.iter().zip([5, 4, 3, 2, 1, 0]) {
        assert_eq!(got, &as_stored(store, &sent[n]));
    }
    let all = Filter::all();
    let cases: [(Filter<'_>, Page, &[usize]); 12] = [
        (all, Page::first(2), &[5, 4]),
        (all, page(1, 2), &[4, 3]),
        (all, page(4, UNLIMITED), &[1, 0]),
        (all, page(6, 2), &[]),
        (all, page(7, 2), &[]),
        (all, page(0, 0), &[]),
        (Filter::device("d1"), Page::ALL, &[5, 3, 1]),
        (Filter::device("d0"), Page::ALL, &[4, 2, 0]),
        (Filter::device("d1"), page(1, 5), &[3, 1]),
        (Filter::device("nobody"), Page::ALL, &[]),
        (all.between(at(10), at(40)), page(1, 2), &[3, 2]),
        (all.between(at(10), at(30)), page(3, 1), &[]),
    ];
    for (filter, p, want) in cases {
        assert_eq!(
            list(store, filter, p),
            ids_of(&sent, want),
            "{filter:?} {p:?}"
        );
    }
}

fn reading_lists_follow_filters_pages_and_ranges(backend: &mut EdgexBackend) {
    let secantus = backend.is_on_secantus();
    // Where SecantusDB leaves out the record at a range's start (see `is_on_secantus`).
    let start = |picks: &'static [R]| {
        if secantus {
            &picks[..picks.len() - 1]
        } else {
            picks
        }
    };
    let store = backend.store();
    let sent = six_events(store);
    let newest_first = [T(5), T(4), H(4), T(3), T(2), H(2), T(1), T(0), H(0)];
    let all = Filter::all();
    let cases: [(Filter<'_>, Page, &[R]); 13] = [
        (all, Page::ALL, &newest_first),
        (all, Page::first(3), &[T(5), T(4), H(4)]),
        (all, page(3, 3), &[T(3), T(2), H(2)]),
        (all, page(9, 1), &[]),
        (all, page(0, 0), &[]),
        (Filter::resource("temp"), page(1, 2), &[T(4), T(3)]),
        (Filter::resource("hum"), page(1, UNLIMITED), &[H(2), H(0)]),
        (both("d0", "hum"), Page::ALL, &[H(4), H(2), H(0)]),
        (both("d1", "temp"), page(1, UNLIMITED), &[T(3), T(1)]),
        (
            Filter::resource("hum").between(at(19), at(39)),
            Page::ALL,
            start(&[H(4), H(2)]),
        ),
        // t2, h2 and t0; h0 is 1 µs before the start.
        (
            Filter::device("d0").between(at(0), at(20)),
            page(1, 2),
            start(&[H(2), T(0)]),
        ),
        (
            Filter::device("d1").between(at(10), at(30)),
            Page::ALL,
            start(&[T(3), T(1)]),
        ),
        (Filter::device("nobody"), Page::ALL, &[]),
    ];
    for (filter, p, want) in cases {
        assert_eq!(
            store.readings(filter, p).or_panic(),
            readings_of(store, &sent, want),
            "{filter:?} {p:?}"
        );
    }
}

fn time_ranges_are_inclusive_at_both_ends(backend: &mut EdgexBackend) {
    let secantus = backend.is_on_secantus();
    let store = backend.store();
    let sent = six_events(store);
    let events = |s: &mut dyn EventStore, f: Filter<'_>| {
        let got = s.events(f, Page::ALL).or_panic();
        ids(&got).into_iter().map(String::from).collect::<Vec<_>>()
    };
    // Both ends are origins of stored events.
    let range = Filter::all().between(at(10), at(30));
    assert_eq!(events(store, range), ids_of(&sent, &[3, 2, 1]));
    let between = Filter::all().between(at(11), at(19));
    assert_eq!(events(store, between), ids_of(&sent, &[]));
    let one = Filter::all().between(at(20), at(20));
    assert_eq!(events(store, one), ids_of(&sent, &[2]));
    let later = Filter::all().between(at(60), at(90));
    assert_eq!(events(store, later), ids_of(&sent, &[]));
    let d0 = Filter::device("d0").between(at(20), at(40));
    // SecantusDB leaves out t2, at the start (see `is_on_secantus`).
    let want: &[R] = if secantus {
        &[T(4), H(4)]
    } else {
        &[T(4), H(4), T(2)]
    };
    assert_eq!(
        store.readings(d0, Page::ALL).or_panic(),
        readings_of(store, &sent, want)
    );
    let temp = Filter::resource("temp").between(at(40), at(40));
    assert_eq!(store.readings(temp, Page::ALL).or_panic().len(), 1);
    let last = Filter::all().between(at(50), at(50));
    assert_eq!(store.reading_count(last).or_panic(), 1);
}

fn repeated_event_ids_are_refused_or_stored_twice(backend: &mut EdgexBackend) {
    let store = backend.store();
    let e = event_of("d", at(1), &["temp"]);
    add(store, &e);
    let again = store.add_event(&e);
    if store.checks_duplicate_ids() {
        match again {
            Err(StoreError::Duplicate { kind: "event", id }) => assert_eq!(id, e.id),
            other => panic!("expected Duplicate, got {other:?}"),
        }
        assert_eq!(store.event_count(Filter::all()).or_panic(), 1);
        assert_eq!(store.reading_count(Filter::all()).or_panic(), 1);
        assert_eq!(store.event_by_id(&e.id).or_panic(), as_stored(store, &e));
    } else {
        again.unwrap_or_else(|err| panic!("a layout without the check stores it again: {err}"));
        assert_eq!(store.event_count(Filter::all()).or_panic(), 2);
        assert_eq!(store.reading_count(Filter::all()).or_panic(), 2);
    }
}

fn deleting_an_event_deletes_its_readings(backend: &mut EdgexBackend) {
    let store = backend.store();
    let sent = six_events(store);
    // By its id in another case.
    store
        .delete_event_by_id(&sent[2].id.to_uppercase())
        .or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 5);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 2);
    let range = Filter::all().between(at(0), at(50));
    assert_eq!(store.event_count(range).or_panic(), 5);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 7);
    assert_eq!(store.reading_count(Filter::resource("temp")).or_panic(), 5);
    let its_origins = Filter::all().between(at(19), at(20));
    assert_eq!(store.reading_count(its_origins).or_panic(), 0);
    assert_not_found(store.event_by_id(&sent[2].id), &sent[2].id);
    assert_not_found(store.delete_event_by_id(&sent[2].id), &sent[2].id);
    assert_eq!(
        store.event_by_id(&sent[1].id).or_panic(),
        as_stored(store, &sent[1])
    );
}

fn deleting_by_device_leaves_other_devices(backend: &mut EdgexBackend) {
    let store = backend.store();
    let sent = six_events(store);
    store.delete_events(Doomed::Device("d0")).or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 3);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::device("d0")).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::device("d1")).or_panic(), 3);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 3);
    let left = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&left), ids_of(&sent, &[5, 3, 1]));
    // Deleting a device with nothing stored is no error.
    store.delete_events(Doomed::Device("nobody")).or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 3);
    // The device can report again (EdgeX 4.0 makes its device_info rows afresh).
    let again = event_of("d0", at(60), &["temp"]);
    add(store, &again);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 1);
    assert_eq!(
        store.event_by_id(&again.id).or_panic(),
        as_stored(store, &again)
    );
}

fn deleting_by_age_removes_only_older_events(backend: &mut EdgexBackend) {
    let store = backend.store();
    let now = now_ns();
    let minute = 60_000_000_000;
    let old = event_of("d0", now - 10 * minute, &["temp", "hum"]);
    let recent = event_of("d1", now - minute, &["temp"]);
    let future = event_of("d0", now + 60 * minute, &["hum"]);
    for e in [&old, &recent, &future] {
        add(store, e);
    }
    store
        .delete_events(Doomed::OlderThan { age_ns: 5 * minute })
        .or_panic();
    let left = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&left), [&future.id, &recent.id]);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 2);
    // Age 0: everything not from the future.
    store
        .delete_events(Doomed::OlderThan { age_ns: 0 })
        .or_panic();
    let left = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&left), [&future.id]);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 1);
    assert_eq!(store.reading_count(Filter::device("d1")).or_panic(), 0);
}

/// Events of three (device, source) pairs, two readings each, 1 µs apart within a pair:
/// `d1`/`s1` at `at(1..=3)`, `d1`/`s2` at `at(4..=5)`, `d2`/`s1` at `at(6..=7)`. A store that
/// ignored the source would see five events of `d1`; one that ignored the device, five of
/// `s1`. Returns them in that order.
fn three_pairs(store: &mut dyn EventStore) -> Vec<Event> {
    [("d1", "s1"), ("d1", "s1"), ("d1", "s1"), ("d1", "s2")]
        .into_iter()
        .chain([("d1", "s2"), ("d2", "s1"), ("d2", "s1")])
        .zip(1..)
        .map(|((device, source), i)| {
            let mut e = event_of(device, at(i), &["temp", "hum"]);
            e.source_name = source.to_string();
            add(store, &e);
            e
        })
        .collect()
}

fn source_counts_and_lists_hold_one_device_and_source(backend: &mut EdgexBackend) {
    let store = backend.store();
    let sent = three_pairs(store);
    let pair = |d, s| SourceFilter::new(d, s);
    let count =
        |store: &mut dyn EventStore, f, limit| store.source_event_count(f, limit).or_panic();
    assert_eq!(count(store, pair("d1", "s1"), UNLIMITED), 3);
    assert_eq!(count(store, pair("d1", "s2"), UNLIMITED), 2);
    assert_eq!(count(store, pair("d2", "s1"), UNLIMITED), 2);
    assert_eq!(count(store, pair("d2", "s2"), UNLIMITED), 0);
    // Counting stops at the limit (EdgeX's MaxCap check).
    assert_eq!(count(store, pair("d1", "s1"), 2), 2);
    assert_eq!(count(store, pair("d1", "s1"), 0), 0);
    // A range narrows it (bounds off the events' own origins: SecantusDB leaves out a
    // document at a `$gte` bound).
    let range = pair("d1", "s1").between(at(1) + 1, at(3) + 1);
    assert_eq!(count(store, range, UNLIMITED), 2);
    // Lists: newest first, with their readings, paged.
    let listed = store.source_events(pair("d1", "s1"), Page::ALL).or_panic();
    assert_eq!(ids(&listed), ids_of(&sent, &[2, 1, 0]));
    assert_eq!(listed[0], as_stored(store, &sent[2]));
    let second = Page {
        offset: 1,
        limit: 1,
    };
    let page = store.source_events(pair("d1", "s1"), second).or_panic();
    assert_eq!(ids(&page), ids_of(&sent, &[1]));
    let page = store.source_events(pair("d1", "s2"), Page::ALL).or_panic();
    assert_eq!(ids(&page), ids_of(&sent, &[4, 3]));
    let page = store.source_events(range, Page::ALL).or_panic();
    assert_eq!(ids(&page), ids_of(&sent, &[2, 1]));
    let past = Page {
        offset: 3,
        limit: 1,
    };
    assert!(store
        .source_events(pair("d1", "s1"), past)
        .or_panic()
        .is_empty());
    // The pairs, each once, sorted.
    assert_eq!(
        store.device_sources().or_panic(),
        [
            DeviceSource::new("d1", "s1"),
            DeviceSource::new("d1", "s2"),
            DeviceSource::new("d2", "s1"),
        ]
    );
}

fn deleting_by_source_leaves_other_sources_and_devices(backend: &mut EdgexBackend) {
    let service = backend.is_service();
    let store = backend.store();
    let sent = three_pairs(store);
    let up_to_second = Doomed::Source {
        device: "d1",
        source: "s1",
        up_to_ns: at(2),
    };
    if service {
        // EdgeX's REST API has no such route; nothing is deleted.
        let refused = store.delete_events(up_to_second);
        assert!(
            matches!(&refused, Err(StoreError::Unsupported(why)) if why.contains("no route")),
            "{refused:?}"
        );
        assert_eq!(store.event_count(Filter::all()).or_panic(), 7);
        return;
    }
    // Up to an origin, inclusive: the pair's two oldest go, with their readings.
    store.delete_events(up_to_second).or_panic();
    let pair = |d, s| SourceFilter::new(d, s);
    let left = store.source_events(pair("d1", "s1"), Page::ALL).or_panic();
    assert_eq!(ids(&left), ids_of(&sent, &[2]));
    assert_eq!(store.event_count(Filter::all()).or_panic(), 5);
    assert_eq!(store.reading_count(Filter::device("d1")).or_panic(), 6);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 10);
    // All of a pair (EdgeX 4.0's DeleteEventsByDeviceNameAndSourceName).
    delete_pair(store, "d1", "s2");
    let left = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&left), ids_of(&sent, &[6, 5, 2]));
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 6);
    assert_eq!(
        store.device_sources().or_panic(),
        [DeviceSource::new("d1", "s1"), DeviceSource::new("d2", "s1")]
    );
    // Nothing of the pair is no error; the pair can report again (EdgeX 4.0 makes its
    // device_info rows afresh).
    delete_pair(store, "d1", "s2");
    let mut again = event_of("d1", at(60), &["temp"]);
    again.source_name = "s2".to_string();
    add(store, &again);
    assert_eq!(
        store
            .source_event_count(pair("d1", "s2"), UNLIMITED)
            .or_panic(),
        1
    );
    assert_eq!(
        store.event_by_id(&again.id).or_panic(),
        as_stored(store, &again)
    );
}

/// EdgeX 4.0's DeleteEventsByDeviceNameAndSourceName: all of `device`'s events from `source`.
fn delete_pair(store: &mut dyn EventStore, device: &str, source: &str) {
    store
        .delete_events(Doomed::Source {
            device,
            source,
            up_to_ns: i64::MAX,
        })
        .or_panic();
}

fn scrub_empties_the_store(backend: &mut EdgexBackend) {
    let store = backend.store();
    six_events(store);
    // From the future too: a scrub is not an age-based delete.
    add(
        store,
        &event_of("d", now_ns() + 3_600_000_000_000, &["temp"]),
    );
    store.scrub().or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 0);
    assert_eq!(store.events(Filter::all(), Page::ALL).or_panic(), []);
    assert_eq!(store.readings(Filter::all(), Page::ALL).or_panic(), []);
    // And it takes new data afterwards, of a device seen before too (EdgeX 4.0's
    // device_info rows went, and the cache with them).
    let e = every_value_kind("d0", at(7));
    add(store, &e);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 1);
    assert_eq!(store.event_by_id(&e.id).or_panic(), as_stored(store, &e));
    six_events(store);
    assert_eq!(store.event_count(Filter::all()).or_panic(), 7);
}

fn readings_come_back_in_the_order_sent(backend: &mut EdgexBackend) {
    let store = backend.store();
    let names = ["name3", "name0", "name4", "name1", "name2"];
    let e = event_of("d", at(1), &names);
    add(store, &e);
    let got = store.event_by_id(&e.id).or_panic();
    let got: Vec<&str> = got
        .readings
        .iter()
        .map(|r| r.resource_name.as_str())
        .collect();
    assert_eq!(got, names);
    let listed = store.events(Filter::all(), Page::ALL).or_panic();
    let listed: Vec<&str> = listed[0]
        .readings
        .iter()
        .map(|r| r.resource_name.as_str())
        .collect();
    assert_eq!(listed, names);
}

/// A store reports its size (a service, its store's), and 500 events of 5 readings make it
/// larger.
fn size_grows_with_the_data(backend: &mut EdgexBackend) {
    let secantus = backend.is_on_secantus();
    let store = backend.store();
    let empty = store
        .size_bytes()
        .or_panic()
        .expect("the store reports its size");
    let names = ["name0", "name1", "name2", "name3", "name4"];
    for i in 0..500 {
        add(store, &event_of("device0", at(i), &names));
    }
    let full = store
        .size_bytes()
        .or_panic()
        .expect("the store reports its size");
    if secantus {
        // SecantusDB reports every collection's size as 0 (see `is_on_secantus`).
        assert_eq!((empty, full), (0, 0));
    } else {
        assert!(full > empty, "{full} > {empty}");
    }
}

// ---- batches (`add_events`) ----

/// `n` events of devices b0, b1, b2 (by `i % 3`) at [`at`]`(10 i)`, in four shapes by
/// `i % 4` (so every device gets every shape): every kind of value (a Binary and an Object
/// reading among them, tags on the event and on readings); three Int64 readings; one
/// Float64 reading with units, 1 µs before its event; a Binary reading of another media type
/// and a Bool one.
fn batch_of(n: usize) -> Vec<Event> {
    (0..n)
        .map(|i| {
            let device = format!("b{}", i % 3);
            let origin = at(10 * i as i64);
            match i % 4 {
                0 => every_value_kind(&device, origin),
                1 => event_of(&device, origin, &["temp", "hum", "co2"]),
                2 => {
                    let temp = reading(&device, "temp", origin - US, simple("21.5"));
                    let temp = Reading {
                        units: "C".to_string(),
                        ..typed("Float64", temp)
                    };
                    event(&device, origin, vec![temp])
                }
                _ => {
                    let blob = ReadingValue::Binary {
                        data: vec![0, 1, 2, 3, i as u8],
                        media_type: "application/octet-stream".to_string(),
                    };
                    let readings = vec![
                        reading(&device, "blob", origin, blob),
                        typed("Bool", reading(&device, "alarm", origin, simple("false"))),
                    ];
                    event(&device, origin, readings)
                }
            }
        })
        .collect()
}

/// `e` with fresh ids: the same records, written again.
fn with_new_ids(e: &Event) -> Event {
    let mut twin = e.clone();
    twin.id = new_uuid();
    for r in &mut twin.readings {
        r.id = new_uuid();
    }
    twin
}

fn reading_total(events: &[Event]) -> u64 {
    events.iter().map(|e| e.readings.len() as u64).sum()
}

/// 25 events added as one batch are stored exactly, and as `add_event` stores the same
/// events (added one by one with other ids): each comes back by id the same, and every count
/// and index sees both sets alike.
fn a_batch_stores_what_add_event_stores(backend: &mut EdgexBackend) {
    let store = backend.store();
    let batch = batch_of(25);
    let readings = reading_total(&batch);
    assert_eq!(readings, 7 * 8 + 6 * 3 + 6 + 6 * 2);
    store
        .add_events(&batch)
        .unwrap_or_else(|err| panic!("add_events: {err}"));
    assert_eq!(store.event_count(Filter::all()).or_panic(), 25);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), readings);
    let twins: Vec<Event> = batch.iter().map(with_new_ids).collect();
    for twin in &twins {
        add(store, twin);
    }
    assert_eq!(store.event_count(Filter::all()).or_panic(), 50);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 2 * readings);
    for (i, (sent, twin)) in batch.iter().zip(&twins).enumerate() {
        let got = store.event_by_id(&sent.id).or_panic();
        assert_eq!(got, as_stored(store, sent), "event {i} of the batch");
        // The twin as add_event stored it, with the batch's ids: the same record.
        let mut alike = store.event_by_id(&twin.id).or_panic();
        alike.id.clone_from(&got.id);
        for (r, batched) in alike.readings.iter_mut().zip(&got.readings) {
            r.id.clone_from(&batched.id);
        }
        assert_eq!(alike, got, "event {i}: add_events and add_event differ");
    }
    // Every index holds both sets alike: each count is twice the batch's.
    for device in ["b0", "b1", "b2"] {
        let of_device: Vec<Event> = batch
            .iter()
            .filter(|e| e.device_name == device)
            .cloned()
            .collect();
        let filter = Filter::device(device);
        let events = of_device.len() as u64;
        assert_eq!(store.event_count(filter).or_panic(), 2 * events, "{device}");
        let readings = reading_total(&of_device);
        assert_eq!(
            store.reading_count(filter).or_panic(),
            2 * readings,
            "{device}"
        );
    }
    for (resource, n) in [("image", 7), ("blob", 6), ("temp", 12), ("hum", 6)] {
        let filter = Filter::resource(resource);
        assert_eq!(store.reading_count(filter).or_panic(), 2 * n, "{resource}");
    }
    let range = Filter::all().between(at(100), at(190));
    assert_eq!(store.event_count(range).or_panic(), 2 * 10);
    // Newest first, each origin twice: the batch's event and its twin, in either order.
    let listed = store.events(Filter::device("b1"), Page::ALL).or_panic();
    let mut want: Vec<&str> = batch
        .iter()
        .zip(&twins)
        .filter(|(e, _)| e.device_name == "b1")
        .rev()
        .flat_map(|(e, twin)| [e.id.as_str(), twin.id.as_str()])
        .collect();
    let mut got = ids(&listed);
    for pair in want.chunks_mut(2).chain(got.chunks_mut(2)) {
        pair.sort_unstable();
    }
    assert_eq!(got, want);
}

/// An empty batch is no error and stores nothing, on an empty store and on a full one.
fn an_empty_batch_stores_nothing(backend: &mut EdgexBackend) {
    let store = backend.store();
    store.add_events(&[]).or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 0);
    assert_eq!(store.events(Filter::all(), Page::ALL).or_panic(), []);
    let e = event_of("d", at(1), &["temp", "hum"]);
    add(store, &e);
    store.add_events(&[]).or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 1);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 2);
    assert_eq!(store.event_by_id(&e.id).or_panic(), as_stored(store, &e));
}

/// A batch with one event the store refuses (an id already stored where the layout checks
/// ids, else an id that is not a UUID) fails, and stores none of the batch where the store
/// says batches are whole ([`EventStore::adds_batches_whole`]), else exactly the events
/// before the refused one (the default loop). An id repeated within a batch is refused the
/// same way where ids are checked, and stored twice where they are not.
fn a_batch_with_a_refused_event_is_stored_whole_or_up_to_it(backend: &mut EdgexBackend) {
    let store = backend.store();
    let (checks, whole) = (store.checks_duplicate_ids(), store.adds_batches_whole());
    let stored = event_of("d", at(1), &["temp"]);
    add(store, &stored);
    const REFUSED: usize = 12;
    let mut batch = batch_of(25);
    if checks {
        batch[REFUSED] = stored.clone();
    } else {
        batch[REFUSED].id = "not-a-uuid".to_string();
    }
    match (checks, store.add_events(&batch)) {
        (true, Err(StoreError::Duplicate { kind: "event", id })) => assert_eq!(id, stored.id),
        (false, Err(_)) => {}
        (_, other) => panic!("checks ids {checks}: expected the batch refused, got {other:?}"),
    }
    let kept = if whole { 0 } else { REFUSED };
    assert_eq!(
        store.event_count(Filter::all()).or_panic(),
        1 + kept as u64,
        "batches whole: {whole}"
    );
    assert_eq!(
        store.reading_count(Filter::all()).or_panic(),
        1 + reading_total(&batch[..kept])
    );
    assert_eq!(
        store.event_by_id(&stored.id).or_panic(),
        as_stored(store, &stored)
    );
    for (i, e) in batch.iter().enumerate().filter(|&(i, _)| i != REFUSED) {
        match store.event_by_id(&e.id) {
            Ok(got) if i < kept => assert_eq!(got, as_stored(store, e), "event {i}"),
            Err(StoreError::NotFound { .. }) if i >= kept => {}
            other => panic!("event {i} of the batch (batches whole: {whole}): {other:?}"),
        }
    }

    // The same id twice in one batch.
    let before = store.event_count(Filter::all()).or_panic();
    let first = event_of("d", at(2), &["temp"]);
    let repeated = [first.clone(), event_of("d", at(3), &["hum"]), first.clone()];
    let added = match (checks, store.add_events(&repeated)) {
        (true, Err(StoreError::Duplicate { kind: "event", id })) => {
            assert_eq!(id, first.id);
            if whole {
                0
            } else {
                2
            }
        }
        (false, Ok(())) => 3,
        (_, other) => panic!("checks ids {checks}: an id twice in a batch gave {other:?}"),
    };
    assert_eq!(store.event_count(Filter::all()).or_panic(), before + added);
}
