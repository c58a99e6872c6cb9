//! The EdgeX 3/4 conformance suite: every [`EventStore`] (the EdgeX 3.1 Redis layout on every
//! Redis-protocol target, Redis Cluster included, the EdgeX 4.0 schema on PostgreSQL and SQLite, EdgeX 4.0's records
//! as MongoDB documents, and each of them behind edgebench's core-data service over TCP and
//! over a Unix socket) gives the same answers to the same calls, as `edgebench::store::edgex`
//! documents them.
//!
//! Each check starts from an empty store and asserts exact results. Where EdgeX's own layouts
//! differ on purpose (EdgeX 4.0 keeps no reading ids and stores a repeated event id twice;
//! EdgeX 3.1 blanks binary payloads), the check asks the store which behaviour it has and
//! asserts that one exactly.

use edgebench::edgex::{self, Event, Reading, ReadingValue};
use edgebench::store::edgex::{Doomed, EventStore, Filter, Page};
use edgebench::store::StoreError;
use serde_json::json;

use crate::common::{self, EdgexBackend};

/// One `#[test]` per check.
macro_rules! edgex_conformance_tests {
    ($($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                let mut backend: EdgexBackend = (open)();
                super::$check(backend.store());
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

// ---- building events ----

/// 1.7e18 ns: a 2023 origin.
const T0: i64 = 1_700_000_000_000_000_000;

/// The `i`th origin of a check: `i` µs after [`T0`]. Not `i` ns: EdgeX 3.1 keeps origins as
/// sorted-set scores, doubles, which near 1.7e18 resolve 256 ns.
fn at(i: i64) -> i64 {
    T0 + i * 1_000
}

pub(crate) fn reading(device: &str, resource: &str, origin: i64, value: ReadingValue) -> Reading {
    let value_type = match &value {
        ReadingValue::Simple(_) => "Int64",
        ReadingValue::Binary { .. } => "Binary",
        ReadingValue::Object(_) => "Object",
    };
    Reading {
        id: edgex::new_uuid(),
        origin,
        device_name: device.to_string(),
        resource_name: resource.to_string(),
        profile_name: "profile".to_string(),
        value_type: value_type.to_string(),
        units: String::new(),
        tags: None,
        value,
    }
}

pub(crate) fn simple(value: &str) -> ReadingValue {
    ReadingValue::Simple(value.to_string())
}

/// An event of `device` at `origin` with one Int64 reading per resource name.
fn event(device: &str, origin: i64, resources: &[&str]) -> Event {
    Event {
        id: edgex::new_uuid(),
        device_name: device.to_string(),
        profile_name: "profile".to_string(),
        source_name: "source".to_string(),
        origin,
        readings: resources
            .iter()
            .enumerate()
            .map(|(i, r)| reading(device, r, origin, simple(&i.to_string())))
            .collect(),
        tags: None,
    }
}

fn add(store: &mut dyn EventStore, e: &Event) {
    store
        .add_event(e)
        .unwrap_or_else(|err| panic!("add_event: {err}"));
}

fn origins(events: &[Event]) -> Vec<i64> {
    events.iter().map(|e| e.origin).collect()
}

/// What a store gives back for `sent`: the same, except what the layout does not keep.
fn as_stored(store: &dyn EventStore, sent: &Event) -> Event {
    let mut want = sent.clone();
    for r in &mut want.readings {
        if !store.keeps_reading_ids() {
            r.id.clear();
        }
        if !store.keeps_binary_values() {
            if let ReadingValue::Binary { data, .. } = &mut r.value {
                data.clear();
            }
        }
    }
    want
}

/// Five events of `device0`/`device1` at T0+1..T0+5, readings `temp` and `hum` each.
fn five_events(store: &mut dyn EventStore) -> Vec<Event> {
    (1..=5)
        .map(|i| {
            let e = event(&format!("device{}", i % 2), at(i), &["temp", "hum"]);
            add(store, &e);
            e
        })
        .collect()
}

// ---- the checks ----

fn every_value_kind_round_trips(store: &mut dyn EventStore) {
    let origin = at(7);
    let mut e = event("d", origin, &[]);
    e.tags = Some(
        json!({"Gateway": "HoustonStore-000123", "Latitude": {"degrees": 25.0}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let typed = |value_type: &str, value: ReadingValue| {
        let mut r = reading("d", value_type, origin, value);
        r.value_type = value_type.to_string();
        r
    };
    e.readings = vec![
        typed("Int64", simple("42")),
        typed("Float64", simple("1.5")),
        typed("String", simple("hello, world")),
        typed("Bool", simple("true")),
        typed(
            "Binary",
            ReadingValue::Binary {
                data: vec![0, 1, 2, 255],
                media_type: "image/png".to_string(),
            },
        ),
        typed(
            "Object",
            ReadingValue::Object(json!({"Attr1": "yyz", "Attr2": -45})),
        ),
    ];
    e.readings[1].units = "C".to_string();
    e.readings[2].tags = Some(json!({"k": "v"}).as_object().cloned().unwrap_or_default());
    add(store, &e);
    let got = store
        .event_by_id(&e.id)
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(got, as_stored(store, &e));
}

fn ids_are_case_insensitive_and_unknown_ids_are_not_found(store: &mut dyn EventStore) {
    let e = event("d", at(1), &["temp"]);
    add(store, &e);
    let got = store.event_by_id(&e.id.to_uppercase()).map(|g| g.id);
    assert_eq!(got.ok(), Some(e.id.clone()));
    let unknown = edgex::new_uuid();
    match store.event_by_id(&unknown) {
        Err(StoreError::NotFound { kind: "event", id }) => assert_eq!(id, unknown),
        other => panic!("expected NotFound for {unknown}, got {other:?}"),
    }
    match store.delete_event_by_id(&unknown) {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound deleting {unknown}, got {other:?}"),
    }
}

fn counts_follow_every_filter(store: &mut dyn EventStore) {
    five_events(store);
    let count = |s: &mut dyn EventStore, f: Filter<'_>| s.reading_count(f).unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 5);
    assert_eq!(store.event_count(Filter::device("device1")).unwrap(), 3);
    assert_eq!(store.event_count(Filter::device("nobody")).unwrap(), 0);
    assert_eq!(
        store
            .event_count(Filter::all().between(at(2), at(4)))
            .unwrap(),
        3
    );
    assert_eq!(count(store, Filter::all()), 10);
    assert_eq!(count(store, Filter::device("device0")), 4);
    assert_eq!(count(store, Filter::resource("temp")), 5);
    let both = Filter {
        device: Some("device1"),
        resource: Some("hum"),
        range: None,
    };
    assert_eq!(count(store, both), 3);
    assert_eq!(count(store, both.between(at(2), at(5))), 2);
    assert_eq!(count(store, Filter::all().between(at(5), at(9))), 2);
}

fn event_lists_are_newest_first_and_paged(store: &mut dyn EventStore) {
    let sent = five_events(store);
    let all = store.events(Filter::all(), Page::ALL).unwrap();
    assert_eq!(origins(&all), [at(5), at(4), at(3), at(2), at(1)]);
    assert_eq!(all[0], as_stored(store, &sent[4]));
    let page = Page {
        offset: 1,
        limit: 2,
    };
    assert_eq!(
        origins(&store.events(Filter::all(), page).unwrap()),
        [at(4), at(3)]
    );
    let device = store.events(Filter::device("device1"), Page::ALL).unwrap();
    assert_eq!(origins(&device), [at(5), at(3), at(1)]);
    let past = Page {
        offset: 5,
        limit: 2,
    };
    assert_eq!(store.events(Filter::all(), past).unwrap(), []);
    assert_eq!(store.events(Filter::all(), Page::first(0)).unwrap(), []);
}

fn reading_lists_follow_filters_pages_and_ranges(store: &mut dyn EventStore) {
    five_events(store);
    let list = |s: &mut dyn EventStore, f: Filter<'_>, p: Page| {
        s.readings(f, p)
            .unwrap()
            .iter()
            .map(|r| (r.origin, r.resource_name.clone()))
            .collect::<Vec<_>>()
    };
    let all = list(store, Filter::all(), Page::ALL);
    assert_eq!(all.len(), 10);
    let newest_first: Vec<i64> = all.iter().map(|(o, _)| *o).collect();
    assert_eq!(newest_first, [5, 5, 4, 4, 3, 3, 2, 2, 1, 1].map(at));
    let temp = list(
        store,
        Filter::resource("temp"),
        Page {
            offset: 1,
            limit: 2,
        },
    );
    assert_eq!(temp, [(at(4), "temp".into()), (at(3), "temp".into())]);
    let both = Filter {
        device: Some("device0"),
        resource: Some("hum"),
        range: None,
    };
    assert_eq!(
        list(store, both, Page::ALL),
        [(at(4), "hum".into()), (at(2), "hum".into())]
    );
    let ranged = list(
        store,
        Filter::device("device1").between(at(2), at(3)),
        Page::ALL,
    );
    assert_eq!(
        ranged.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        [at(3), at(3)]
    );
    assert_eq!(list(store, Filter::device("nobody"), Page::ALL), []);
}

fn time_ranges_are_inclusive_at_both_ends(store: &mut dyn EventStore) {
    five_events(store);
    let range = Filter::all().between(at(2), at(4));
    let events = store.events(range, Page::ALL).unwrap();
    assert_eq!(origins(&events), [at(4), at(3), at(2)]);
    let readings = store.readings(Filter::resource("temp").between(at(4), at(4)), Page::ALL);
    assert_eq!(readings.unwrap().len(), 1);
    assert_eq!(
        store
            .events(Filter::all().between(at(6), at(9)), Page::ALL)
            .unwrap(),
        []
    );
}

fn repeated_event_ids_are_refused_or_stored_twice(store: &mut dyn EventStore) {
    let e = event("d", at(1), &["temp"]);
    add(store, &e);
    let again = store.add_event(&e);
    if store.checks_duplicate_ids() {
        match again {
            Err(StoreError::Duplicate { kind: "event", id }) => assert_eq!(id, e.id),
            other => panic!("expected Duplicate, got {other:?}"),
        }
        assert_eq!(store.event_count(Filter::all()).unwrap(), 1);
        assert_eq!(store.reading_count(Filter::all()).unwrap(), 1);
    } else {
        again.unwrap_or_else(|err| panic!("a layout without the check stores it again: {err}"));
        assert_eq!(store.event_count(Filter::all()).unwrap(), 2);
    }
}

fn deleting_an_event_deletes_its_readings(store: &mut dyn EventStore) {
    let sent = five_events(store);
    store.delete_event_by_id(&sent[2].id).unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 4);
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 8);
    assert_eq!(
        store
            .reading_count(Filter::all().between(at(3), at(3)))
            .unwrap(),
        0
    );
    assert!(matches!(
        store.event_by_id(&sent[2].id),
        Err(StoreError::NotFound { .. })
    ));
}

fn deleting_by_device_leaves_other_devices(store: &mut dyn EventStore) {
    five_events(store);
    store.delete_events(Doomed::Device("device1")).unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 2);
    assert_eq!(store.event_count(Filter::device("device1")).unwrap(), 0);
    assert_eq!(store.reading_count(Filter::device("device1")).unwrap(), 0);
    assert_eq!(store.reading_count(Filter::device("device0")).unwrap(), 4);
    let left = store.events(Filter::all(), Page::ALL).unwrap();
    assert_eq!(origins(&left), [at(4), at(2)]);
}

fn deleting_by_age_removes_only_older_events(store: &mut dyn EventStore) {
    let now = now_ns();
    let minute = 60_000_000_000;
    let old = event("d", now - 10 * minute, &["temp", "hum"]);
    let recent = event("d", now - minute, &["temp"]);
    add(store, &old);
    add(store, &recent);
    store
        .delete_events(Doomed::OlderThan { age_ns: 5 * minute })
        .unwrap();
    let left = store.events(Filter::all(), Page::ALL).unwrap();
    assert_eq!(origins(&left), [recent.origin]);
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 1);
}

fn scrub_empties_the_store(store: &mut dyn EventStore) {
    five_events(store);
    // From the future too: a scrub is not an age-based delete.
    add(store, &event("d", now_ns() + 3_600_000_000_000, &["temp"]));
    store.scrub().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 0);
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 0);
    assert_eq!(store.events(Filter::all(), Page::ALL).unwrap(), []);
    // And it takes new data afterwards.
    five_events(store);
    assert_eq!(store.event_count(Filter::all()).unwrap(), 5);
}

fn readings_come_back_in_the_order_sent(store: &mut dyn EventStore) {
    let names = ["name3", "name0", "name4", "name1", "name2"];
    let e = event("d", at(1), &names);
    add(store, &e);
    let got = store.event_by_id(&e.id).unwrap();
    let got: Vec<&str> = got
        .readings
        .iter()
        .map(|r| r.resource_name.as_str())
        .collect();
    assert_eq!(got, names);
    let listed = store.events(Filter::all(), Page::ALL).unwrap();
    let listed: Vec<&str> = listed[0]
        .readings
        .iter()
        .map(|r| r.resource_name.as_str())
        .collect();
    assert_eq!(listed, names);
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// What the EdgeX 4.0 document layout on MongoDB sends: one `find` per event list or event
/// (readings embedded, no per-event query), and an index scan for every filtered `find`.
mod mongo4_queries {
    use std::sync::{Arc, Mutex};

    use edgebench::store::edgex::{EventStore, Filter, Page};
    use edgebench::store::mongo::edgex4::Mongo4Database;
    use mongodb::bson::Document;
    use mongodb::event::command::CommandEvent;
    use mongodb::event::EventHandler;
    use mongodb::options::ClientOptions;

    use super::{at, event};
    use crate::common::mongo::{is_index_scan, plan_of, server_url};

    type Sent = Arc<Mutex<Vec<(String, Document)>>>;

    /// A private database whose client records the commands it sends (name and body).
    fn recorded() -> (Mongo4Database, Sent) {
        let mut options = ClientOptions::parse(server_url())
            .run()
            .unwrap_or_else(|e| panic!("{e}"));
        let sent = Sent::default();
        let log = Arc::clone(&sent);
        options.command_event_handler = Some(EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                log.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((started.command_name, started.command));
            }
        }));
        let db = Mongo4Database::create_with_options(options).unwrap_or_else(|e| panic!("{e}"));
        (db, sent)
    }

    fn taken(sent: &Sent) -> Vec<(String, Document)> {
        std::mem::take(&mut *sent.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn names(sent: &[(String, Document)]) -> Vec<&str> {
        sent.iter().map(|(name, _)| name.as_str()).collect()
    }

    #[test]
    fn events_and_their_readings_are_one_find_and_adds_two_inserts() {
        let (db, sent) = recorded();
        let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
        let events: Vec<_> = (1..=4)
            .map(|i| event("d", at(i), &["a", "b", "c"]))
            .collect();
        taken(&sent);
        for e in &events {
            store.add_event(e).unwrap_or_else(|err| panic!("{err}"));
        }
        assert_eq!(
            names(&taken(&sent)),
            ["insert"; 8],
            "event, then its readings"
        );

        let listed = store.events(Filter::all(), Page::ALL).unwrap();
        assert_eq!(listed.len(), 4);
        assert_eq!(listed[0].readings.len(), 3);
        assert_eq!(names(&taken(&sent)), ["find"]);
        store.event_by_id(&events[1].id).unwrap();
        assert_eq!(names(&taken(&sent)), ["find"]);
        store.events(Filter::device("d"), Page::first(2)).unwrap();
        assert_eq!(names(&taken(&sent)), ["find"]);
        store.delete_event_by_id(&events[1].id).unwrap();
        assert_eq!(
            names(&taken(&sent)),
            ["delete", "delete"],
            "readings, then event"
        );
        assert_eq!(store.reading_count(Filter::all()).unwrap(), 9);
    }

    /// Every list and by-id call with a filter runs as an index scan. (The unfiltered lists
    /// are left out: `mongod` walks `{origin: -1, _id: -1}` for their sort, while SecantusDB,
    /// the CI server, may scan and sort; its plan says nothing about ours.)
    #[test]
    fn every_filtered_find_is_served_by_an_index() {
        let (db, sent) = recorded();
        let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
        let e = event("d", at(1), &["temp", "hum"]);
        store.add_event(&e).unwrap_or_else(|err| panic!("{err}"));
        taken(&sent);
        let both = Filter {
            device: Some("d"),
            resource: Some("temp"),
            range: None,
        };
        let page = Page::first(5);
        store.event_by_id(&e.id).unwrap();
        store.events(Filter::device("d"), page).unwrap();
        store
            .events(Filter::all().between(at(0), at(2)), page)
            .unwrap();
        store
            .events(Filter::device("d").between(at(0), at(2)), page)
            .unwrap();
        store.readings(Filter::device("d"), page).unwrap();
        store.readings(Filter::resource("temp"), page).unwrap();
        store.readings(both, page).unwrap();
        store.readings(both.between(at(0), at(2)), page).unwrap();
        store
            .readings(Filter::all().between(at(0), at(2)), page)
            .unwrap();
        let finds: Vec<Document> = taken(&sent)
            .into_iter()
            .filter(|(name, _)| name == "find")
            .map(|(_, find)| find)
            .collect();
        assert_eq!(finds.len(), 9);
        for find in &finds {
            let stages = plan_of(db.client(), db.name(), find);
            assert!(is_index_scan(&stages), "{find} runs as {stages:?}");
        }
    }
}
