//! What only EdgeX 3.1's Redis layout has (its answers are the conformance suite's,
//! `tests/it/edgex_conformance.rs`, on every Redis target): the keys each call writes and
//! removes, the stored JSON, and the index entries, on redis-server (spawned here, over a Unix
//! socket and over TCP) and on the embedded engine through its redis-rs connection. Each check
//! gets a store and a second, raw connection to the same data, for assertions on keys and
//! stored bytes. [`wire`] checks the commands each call sends.

mod wire;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use redis::ConnectionLike;
use serde_json::json;

use super::*;
use crate::edgex::testing::{self, simple, tags, T0, US};
use crate::edgex::ReadingValue;
use crate::engine::{Engine, EngineConnection};
use crate::store::redis::spawn::{Listen, RedisServer};
use crate::transport::StoreConnection;

const MS: i64 = 1_000_000;

/// Runs `$check(backend, &mut store, &mut raw)` on every backend, each starting empty.
macro_rules! on_every_backend {
    ($check:path) => {{
        for listen in [Listen::Unix, Listen::Tcp] {
            let server = RedisServer::spawn(listen).unwrap_or_else(|e| panic!("{e}"));
            let connect = || {
                crate::transport::connect(&server.endpoint(), Duration::from_secs(5))
                    .unwrap_or_else(|e| panic!("{}: {e}", server.endpoint()))
            };
            let backend = format!("redis-server over {listen:?}");
            $check(&backend, &mut Redis3Store::new(connect()), &mut connect());
        }
        let engine = Engine::new();
        $check(
            "engine",
            &mut Redis3Store::new(EngineConnection::new(engine.clone())),
            &mut EngineConnection::new(engine),
        );
    }};
}

fn id(kind: u32, n: usize) -> String {
    format!("{kind:08x}-0000-4000-8000-{n:012x}")
}

fn event_id(n: usize) -> String {
    id(0xe, n)
}

fn reading_id(event: usize, position: usize) -> String {
    id(0xa, event * 10 + position)
}

/// Event `n` of `device` with one Int64 reading per name in `resources`, the j-th at origin +
/// j µs with value "{n}{j}", and ids the tests can name keys by ([`event_id`], [`reading_id`]).
fn numbered(n: usize, device: &str, origin: i64, resources: &[&str]) -> Event {
    let readings = resources
        .iter()
        .enumerate()
        .map(|(j, r)| Reading {
            id: reading_id(n, j),
            ..testing::reading(
                device,
                r,
                origin + j as i64 * US,
                simple(&format!("{n}{j}")),
            )
        })
        .collect();
    Event {
        id: event_id(n),
        ..testing::event(device, origin, readings)
    }
}

/// Event 1: five readings, simple, binary and object, tags on the event and one reading.
fn mixed_event() -> Event {
    let mut e = numbered(1, "dev", T0, &["int", "float", "image", "object", "switch"]);
    e.tags = tags(json!({"zone": "b", "floor": 2}));
    e.readings[1].value_type = "Float64".into();
    e.readings[1].value = ReadingValue::Simple("1.5e+01".into());
    e.readings[1].units = "degC".into();
    e.readings[2].value_type = "Binary".into();
    e.readings[2].value = ReadingValue::Binary {
        data: vec![0xff, 0xd8, 0xff],
        media_type: "image/jpeg".into(),
    };
    e.readings[3].value_type = "Object".into();
    e.readings[3].value = ReadingValue::Object(json!({"b": [1, {"y": 2, "x": 1}], "a": null}));
    e.readings[4].value_type = "Bool".into();
    e.readings[4].value = ReadingValue::Simple("true".into());
    e.readings[4].tags = tags(json!({"k": "v"}));
    e
}

/// Six events, devices d0 (even n) and d1 (odd n), origin T0 + n ms, readings r0 and r1.
fn six_events() -> Vec<Event> {
    (0..6)
        .map(|n| numbered(n, &format!("d{}", n % 2), T0 + n as i64 * MS, &["r0", "r1"]))
        .collect()
}

fn add_all<C: StoreConnection>(store: &mut Redis3Store<C>, events: &[Event]) {
    for e in events {
        store
            .add_event(e)
            .unwrap_or_else(|err| panic!("add {}: {err}", e.id));
    }
}

fn event_ids(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| e.id.clone()).collect()
}

fn ids(ns: &[usize]) -> Vec<String> {
    ns.iter().map(|&n| event_id(n)).collect()
}

fn keys_of(raw: &mut impl ConnectionLike) -> BTreeSet<String> {
    redis::cmd("KEYS").arg("*").query(raw).expect("KEYS *")
}

fn get(raw: &mut impl ConnectionLike, key: &str) -> String {
    let json: Option<String> = redis::cmd("GET").arg(key).query(raw).expect("GET");
    json.unwrap_or_else(|| panic!("{key} is not stored"))
}

fn score(raw: &mut impl ConnectionLike, index: &str, member: &str) -> f64 {
    let score: Option<f64> = redis::cmd("ZSCORE")
        .arg(index)
        .arg(member)
        .query(raw)
        .expect("ZSCORE");
    score.unwrap_or_else(|| panic!("{member} is not in {index}"))
}

fn page(offset: usize, limit: usize) -> Page {
    Page { offset, limit }
}

/// What the conformance suite asks a store: this layout checks event ids, keeps reading ids,
/// and blanks binary payloads.
#[test]
fn the_layout_checks_ids_keeps_reading_ids_and_blanks_binary_values() {
    let store = Redis3Store::new(EngineConnection::new(Engine::new()));
    assert!(store.checks_duplicate_ids());
    assert!(store.keeps_reading_ids());
    assert!(!store.keeps_binary_values());
}

#[test]
fn readings_come_back_in_the_order_sent_as_sent_and_binary_blanked() {
    on_every_backend!(reads_back);
}

/// EdgeX 3.1 keeps an event's readings in the order sent whatever their origins (EdgeX 4.0
/// returns them newest first), each value's text as sent (`1.5e+01`), and blanks binary
/// payloads.
fn reads_back<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    _: &mut impl ConnectionLike,
) {
    let sent = mixed_event();
    store.add_event(&sent).expect("add");
    let mut expected = sent.clone();
    expected.readings[2].value = ReadingValue::Binary {
        data: Vec::new(),
        media_type: "image/jpeg".into(),
    };
    assert_eq!(
        store.event_by_id(&sent.id).expect("by id"),
        expected,
        "{backend}"
    );
    assert_eq!(
        store.events(Filter::all(), Page::ALL).expect("all"),
        [expected],
        "{backend}"
    );
}

#[test]
fn deletes_remove_events_readings_and_every_index_entry() {
    on_every_backend!(deletes);
}

fn deletes<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    let events = six_events();
    add_all(store, &events);
    let before_2 = keys_of(raw);
    store
        .delete_event_by_id(&event_id(2).to_uppercase())
        .expect("delete 2");
    let gone: BTreeSet<String> = before_2.difference(&keys_of(raw)).cloned().collect();
    let expected: BTreeSet<String> = [
        keys::event(&event_id(2)),
        keys::event_readings(&event_id(2)),
        keys::reading(&reading_id(2, 0)),
        keys::reading(&reading_id(2, 1)),
    ]
    .into();
    assert_eq!(gone, expected, "{backend}");
    assert_eq!(
        store.event_count(Filter::device("d0")).expect("count"),
        2,
        "{backend}"
    );
    assert_eq!(
        store.reading_count(Filter::resource("r0")).expect("count"),
        5,
        "{backend}"
    );
    assert_eq!(
        store.reading_count(Filter::all()).expect("count"),
        10,
        "{backend}"
    );
    assert_eq!(
        store
            .event_count(Filter::all().between(T0, T0 + 5 * MS))
            .expect("count"),
        5,
        "{backend}"
    );
    let again = store.delete_event_by_id(&event_id(2));
    assert!(
        matches!(again, Err(StoreError::NotFound { kind: "event", .. })),
        "{backend}: {again:?}"
    );

    store
        .delete_events(Doomed::Device("d1"))
        .expect("delete d1");
    assert_eq!(
        event_ids(&store.events(Filter::all(), Page::ALL).expect("events")),
        ids(&[4, 0]),
        "{backend}"
    );
    assert_eq!(
        store.reading_count(Filter::all()).expect("count"),
        4,
        "{backend}"
    );
    assert_eq!(
        store.reading_count(Filter::device("d1")).expect("count"),
        0,
        "{backend}"
    );

    // Only events 0 and 4 are left: their keys are exactly what adding them alone writes.
    let left = keys_of(raw);
    store.scrub().expect("scrub");
    add_all(store, &[events[0].clone(), events[4].clone()]);
    assert_eq!(keys_of(raw), left, "{backend}");
}

#[test]
fn bulk_deletes_run_in_batches_of_a_thousand() {
    on_every_backend!(deletes_in_batches);
}

fn deletes_in_batches<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    // 201 events × 5 readings: 1005 readings, two batches of each kind.
    let resources = ["a", "b", "c", "d", "e"];
    let many: Vec<Event> = (0..201)
        .map(|n| numbered(n, "big", T0 + n as i64 * MS, &resources))
        .collect();
    add_all(store, &many);
    let small = numbered(900, "small", T0, &["a"]);
    add_all(store, std::slice::from_ref(&small));
    store
        .delete_events(Doomed::Device("big"))
        .expect("delete big");
    assert_eq!(
        store.reading_count(Filter::all()).expect("count"),
        1,
        "{backend}"
    );
    assert_eq!(
        store.event_count(Filter::all()).expect("count"),
        1,
        "{backend}"
    );
    let left = keys_of(raw);
    store.scrub().expect("scrub");
    add_all(store, &[small]);
    assert_eq!(keys_of(raw), left, "{backend}");
    let indexed: u64 = redis::cmd("ZCARD")
        .arg(keys::READINGS_BY_ORIGIN)
        .query(raw)
        .expect("ZCARD");
    assert_eq!(indexed, 1, "{backend}");
}

#[test]
fn scrub_removes_the_layout_and_nothing_else() {
    on_every_backend!(scrubs);
}

fn scrubs<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    add_all(store, &six_events());
    redis::cmd("SET")
        .arg("other")
        .arg("x")
        .exec(raw)
        .expect("SET other");
    redis::cmd("SET")
        .arg("cd|stray")
        .arg("x")
        .exec(raw)
        .expect("SET cd|stray");
    store.scrub().expect("scrub");
    assert_eq!(
        keys_of(raw),
        BTreeSet::from(["other".to_owned()]),
        "{backend}"
    );
    assert_eq!(
        store.event_count(Filter::all()).expect("count"),
        0,
        "{backend}"
    );
    assert_eq!(
        store.events(Filter::all(), Page::ALL).expect("events"),
        [],
        "{backend}"
    );
}

#[test]
fn two_devices_two_events_five_readings_write_exactly_the_keys_of_b2() {
    on_every_backend!(key_set);
}

fn key_set<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    let names = ["name0", "name1", "name2", "name3", "name4"];
    let events: Vec<Event> = (0..4)
        .map(|n| numbered(n, &format!("device{}", n % 2), T0 + n as i64 * MS, &names))
        .collect();
    add_all(store, &events);

    let mut expected: BTreeSet<String> = ["cd|evt", "cd|evt:origin", "cd|rd", "cd|rd:origin"]
        .map(String::from)
        .into();
    for e in &events {
        expected.insert(format!("cd|evt:{}", e.id));
        expected.insert(format!("cd|evt:readings:{}", e.id));
        expected.extend(e.readings.iter().map(|r| format!("cd|rd:{}", r.id)));
    }
    for device in ["device0", "device1"] {
        expected.insert(format!("cd|evt:device:name:{device}"));
        expected.insert(format!("cd|rd:deviceName:{device}"));
        for name in names {
            expected.insert(format!("cd|rd:deviceName:resourceName:{device}:{name}"));
        }
    }
    expected.extend(names.map(|name| format!("cd|rd:resourceName:{name}")));
    assert_eq!(expected.len(), 51);
    assert_eq!(keys_of(raw), expected, "{backend}");

    for key in &expected {
        let kind: String = redis::cmd("TYPE").arg(key).query(raw).expect("TYPE");
        let record = key.matches(':').count() == 1 && !key.ends_with(":origin");
        assert_eq!(
            kind,
            if record { "string" } else { "zset" },
            "{backend} {key}"
        );
    }
    let e = &events[3];
    let positions: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(keys::event_readings(&e.id))
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(raw)
        .expect("ZRANGE");
    let sent: Vec<(String, f64)> = (0..5)
        .map(|j| (keys::reading(&reading_id(3, j)), j as f64))
        .collect();
    assert_eq!(positions, sent, "{backend}");
    let event_key = keys::event(&e.id);
    for index in ["cd|evt", "cd|evt:origin", "cd|evt:device:name:device1"] {
        assert_eq!(
            score(raw, index, &event_key),
            e.origin as f64,
            "{backend} {index}"
        );
    }
    let r = &e.readings[4];
    let reading_key = keys::reading(&r.id);
    assert_eq!(score(raw, "cd|rd", &reading_key), 0.0, "{backend}");
    for index in [
        "cd|rd:origin",
        "cd|rd:deviceName:device1",
        "cd|rd:resourceName:name4",
        "cd|rd:deviceName:resourceName:device1:name4",
    ] {
        assert_eq!(
            score(raw, index, &reading_key),
            r.origin as f64,
            "{backend} {index}"
        );
    }
}

/// Every key with its content: a string's bytes, a sorted set's members with their scores.
fn contents(raw: &mut impl ConnectionLike) -> BTreeMap<String, String> {
    keys_of(raw)
        .into_iter()
        .map(|key| {
            let kind: String = redis::cmd("TYPE").arg(&key).query(raw).expect("TYPE");
            let content = match kind.as_str() {
                "string" => get(raw, &key),
                _ => {
                    let members: Vec<(String, String)> = redis::cmd("ZRANGE")
                        .arg(&key)
                        .arg(0)
                        .arg(-1)
                        .arg("WITHSCORES")
                        .query(raw)
                        .expect("ZRANGE");
                    format!("{kind} {members:?}")
                }
            };
            (key, content)
        })
        .collect()
}

#[test]
fn a_batch_writes_the_records_add_event_writes_or_none() {
    on_every_backend!(batch_records);
}

/// `add_events` leaves every key, value and score `add_event`s of the same events leave;
/// a batch with a stored id, or with an id twice, writes nothing.
fn batch_records<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    let mut mixed = mixed_event();
    mixed.id = event_id(9);
    for (j, r) in mixed.readings.iter_mut().enumerate() {
        r.id = reading_id(9, j);
    }
    let mut events = six_events();
    events.push(mixed);
    store.add_events(&events).expect("add_events");
    let batched = contents(raw);
    // Four shared indexes; per event its record and positions; the readings' records; two
    // indexes per device (d0, d1, dev); one per resource (r0, r1 and the mixed event's five);
    // one per device and resource.
    let keys = 4 + 7 * 2 + (6 * 2 + 5) + 3 * 2 + (2 + 5) + (2 * 2 + 5);
    assert_eq!(batched.len(), keys, "{backend}");
    store.scrub().expect("scrub");
    add_all(store, &events);
    assert_eq!(contents(raw), batched, "{backend}");

    let fresh = numbered(20, "d2", T0, &["r0"]);
    for refused in [
        [fresh.clone(), events[3].clone()],
        [fresh.clone(), fresh.clone()],
    ] {
        match store.add_events(&refused) {
            Err(StoreError::Duplicate { kind: "event", id }) => assert_eq!(id, refused[1].id),
            other => panic!("{backend}: expected Duplicate, got {other:?}"),
        }
        assert_eq!(contents(raw), batched, "{backend}");
    }
    store.add_events(&[]).expect("an empty batch");
    assert_eq!(contents(raw), batched, "{backend}");
}

#[test]
fn stored_json_has_go_field_names_in_declaration_order() {
    on_every_backend!(stored_json);
}

fn stored_json<C: StoreConnection>(
    backend: &str,
    store: &mut Redis3Store<C>,
    raw: &mut impl ConnectionLike,
) {
    let e = mixed_event();
    store.add_event(&e).expect("add");
    let mut plain = numbered(2, "dev", T0 + MS, &["int"]);
    plain.readings[0].units = "°C".into();
    store.add_event(&plain).expect("add");

    let event_json = format!(
        r#"{{"Id":"{}","DeviceName":"dev","ProfileName":"profile","SourceName":"source","Origin":1700000000000000000,"Readings":null,"Tags":{{"floor":2,"zone":"b"}}}}"#,
        e.id
    );
    assert_eq!(get(raw, &keys::event(&e.id)), event_json, "{backend}");
    let plain_json = get(raw, &keys::event(&plain.id));
    assert!(
        plain_json.ends_with(r#","Origin":1700000000001000000,"Readings":null,"Tags":null}"#),
        "{backend}: {plain_json}"
    );

    let base = |j: usize, value_type: &str, units: &str, tags: &str| {
        format!(
            r#"{{"Id":"{}","Origin":{},"DeviceName":"dev","ResourceName":"{}","ProfileName":"profile","ValueType":"{value_type}","Units":"{units}","Tags":{tags},"#,
            e.readings[j].id, e.readings[j].origin, e.readings[j].resource_name
        )
    };
    let expected = [
        base(0, "Int64", "", "null") + r#""Value":"10"}"#,
        base(1, "Float64", "degC", "null") + r#""Value":"1.5e+01"}"#,
        base(2, "Binary", "", "null") + r#""BinaryValue":"","MediaType":"image/jpeg"}"#,
        base(3, "Object", "", "null") + r#""ObjectValue":{"a":null,"b":[1,{"x":1,"y":2}]}}"#,
        base(4, "Bool", "", r#"{"k":"v"}"#) + r#""Value":"true"}"#,
    ];
    for (r, json) in e.readings.iter().zip(expected) {
        assert_eq!(
            get(raw, &keys::reading(&r.id)),
            json,
            "{backend} {}",
            r.resource_name
        );
    }
    let units = get(raw, &keys::reading(&plain.readings[0].id));
    assert!(
        units.contains(r#""Units":"°C","Tags":null,"Value":"20"}"#),
        "{backend}: {units}"
    );
}
