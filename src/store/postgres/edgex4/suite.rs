//! The checks both ports of EdgeX 4.0's schema pass ([`super`] on PostgreSQL, `sqlite4` on
//! SQLite): each takes an empty store and asserts exact results. The stores' own test files
//! run every check on a fresh database.

use serde_json::{json, Map, Value};

use crate::edgex::{new_uuid, Event, Reading, ReadingValue};
use crate::store::edgex::{Doomed, EventStore, Filter, Page};
use crate::store::{StoreError, UNLIMITED};

/// One check: takes an empty store and panics on the first wrong result.
pub(crate) type Check = fn(&mut dyn EventStore);

/// Every check, by name, for the stores' test files to run one by one.
pub(crate) const CHECKS: &[(&str, Check)] = &[
    ("mixed_values_round_trip", mixed_values_round_trip),
    ("counts_by_every_filter", counts_by_every_filter),
    ("pages_are_newest_first", pages_are_newest_first),
    ("time_ranges_are_inclusive", time_ranges_are_inclusive),
    ("delete_by_id", delete_by_id),
    ("delete_by_device", delete_by_device),
    ("delete_by_age", delete_by_age),
    (
        "duplicate_ids_are_stored_twice",
        duplicate_ids_are_stored_twice,
    ),
    ("scrub_empties_everything", scrub_empties_everything),
    ("size_grows_with_the_data", size_grows_with_the_data),
];

/// `unwrap` that shows the error with `Display`.
pub(crate) trait OrPanic<T> {
    fn or_panic(self) -> T;
}

impl<T, E: std::fmt::Display> OrPanic<T> for Result<T, E> {
    #[track_caller]
    fn or_panic(self) -> T {
        self.unwrap_or_else(|e| panic!("{e}"))
    }
}

fn tags(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A reading of `device`'s `resource` at `origin`.
pub(crate) fn reading(
    device: &str,
    resource: &str,
    value_type: &str,
    value: ReadingValue,
) -> Reading {
    Reading {
        id: new_uuid(),
        origin: 0,
        device_name: device.into(),
        resource_name: resource.into(),
        profile_name: "profile".into(),
        value_type: value_type.into(),
        units: String::new(),
        tags: None,
        value,
    }
}

fn simple(device: &str, resource: &str, value_type: &str, value: &str) -> Reading {
    reading(
        device,
        resource,
        value_type,
        ReadingValue::Simple(value.into()),
    )
}

/// An event of `device` at `origin` with `readings`, which take the event's origin.
pub(crate) fn event(device: &str, origin: i64, readings: Vec<Reading>) -> Event {
    Event {
        id: new_uuid(),
        device_name: device.into(),
        profile_name: "profile".into(),
        source_name: "source".into(),
        origin,
        readings: readings
            .into_iter()
            .map(|r| Reading { origin, ..r })
            .collect(),
        tags: None,
    }
}

/// The 2018 dataset's shape, small: 2 devices × 2 events × 5 Int64 readings named
/// name0..name4, one profile and source, no tags.
pub(crate) fn add_2018_dataset(store: &mut dyn EventStore) {
    let mut origin = 1_000;
    for device in ["device0", "device1"] {
        for _ in 0..2 {
            let readings = (0..5)
                .map(|i| simple(device, &format!("name{i}"), "Int64", &format!("{i}")))
                .collect();
            origin += 1;
            add(store, &event(device, origin, readings));
        }
    }
    assert_eq!(store.reading_count(Filter::resource("name3")).or_panic(), 4);
}

/// What the device_info query below returns after [`add_2018_dataset`]: per device, one
/// event-level row (source set, resource empty) and one reading-level row per name.
pub(crate) const DEVICE_INFO_COLUMNS: &str = "SELECT devicename, profilename, sourcename, \
     resourcename, valuetype, units, mediatype, tags, \
     CASE WHEN mark_deleted THEN 'true' ELSE 'false' END FROM {schema}device_info \
     ORDER BY devicename, resourcename";

/// The rows of [`DEVICE_INFO_COLUMNS`] after [`add_2018_dataset`]: 2 + 10.
pub(crate) fn device_infos_of_2018_dataset() -> Vec<Vec<String>> {
    let mut expected = Vec::new();
    for device in ["device0", "device1"] {
        let row = |source: &str, resource: &str, value_type: &str| {
            [
                device, "profile", source, resource, value_type, "", "", "null", "false",
            ]
            .map(String::from)
            .to_vec()
        };
        expected.push(row("source", "", ""));
        for i in 0..5 {
            expected.push(row("", &format!("name{i}"), "Int64"));
        }
    }
    expected
}

/// One reading of every kind of value, in an order no sort would produce.
fn mixed_readings(device: &str) -> Vec<Reading> {
    let mut temperature = simple(device, "temperature", "Float64", "1.5");
    temperature.units = "C".into();
    temperature.tags = tags(json!({"sensor": "t1", "calibrated": true}));
    vec![
        simple(device, "counter", "Int64", "42"),
        temperature,
        simple(device, "label", "String", "hello, world"),
        simple(device, "alarm", "Bool", "true"),
        reading(
            device,
            "image",
            "Binary",
            ReadingValue::Binary {
                data: vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255],
                media_type: "image/png".into(),
            },
        ),
        reading(
            device,
            "config",
            "Object",
            ReadingValue::Object(json!({"mode": "auto", "limits": [1, 2.5, null], "n": {"x": 1}})),
        ),
        simple(device, "big", "Uint64", "18446744073709551615"),
        simple(device, "precise", "Float64", "-0.50"),
    ]
}

/// A mixed event of `device` at `origin`, with event tags.
fn mixed_event(device: &str, origin: i64) -> Event {
    Event {
        tags: tags(json!({"site": "plant-1", "line": 4})),
        ..event(device, origin, mixed_readings(device))
    }
}

/// What `store` gives back for `sent`: the same, with empty reading ids where the store keeps
/// none.
fn as_stored(store: &dyn EventStore, sent: &Event) -> Event {
    let mut e = sent.clone();
    if !store.keeps_reading_ids() {
        for r in &mut e.readings {
            r.id.clear();
        }
    }
    e
}

fn add(store: &mut dyn EventStore, e: &Event) {
    store.add_event(e).or_panic();
}

fn ids(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.id.as_str()).collect()
}

fn mixed_values_round_trip(store: &mut dyn EventStore) {
    assert!(!store.checks_duplicate_ids());
    assert!(!store.keeps_reading_ids());
    let sent = mixed_event("dev-a", 1_700_000_000_000_000_000);
    // No tags at all (EdgeX's nil map) must come back as none, not as empty tags.
    let bare = event(
        "dev-a",
        1_700_000_000_000_000_001,
        vec![simple("dev-a", "x", "Int8", "-7")],
    );
    add(store, &sent);
    add(store, &bare);
    let got = store.event_by_id(&sent.id).or_panic();
    assert_eq!(got, as_stored(store, &sent));
    assert!(got.readings.iter().all(|r| r.id.is_empty()));
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
    assert_eq!(readings.len(), 9);
    // Newest first: the bare event's reading, then the mixed ones (ties in any order).
    assert_eq!(readings.remove(0), as_stored(store, &bare).readings[0]);
    for r in &got.readings {
        assert!(readings.contains(r), "{r:?} listed");
    }
    for missing in [new_uuid(), "not-a-uuid".to_string()] {
        match store.event_by_id(&missing) {
            Err(StoreError::NotFound { kind: "event", id }) => assert_eq!(id, missing),
            other => panic!("expected NotFound for {missing}, got {other:?}"),
        }
    }
}

/// Two devices, three events each at distinct origins, readings of two resources.
fn small_dataset(store: &mut dyn EventStore) -> Vec<Event> {
    let mut events = Vec::new();
    for j in 0..3i64 {
        for (k, device) in ["d0", "d1"].into_iter().enumerate() {
            let origin = 1000 + 10 * j + k as i64;
            let mut readings = vec![simple(device, "temperature", "Int64", &format!("{j}"))];
            // d0's events also report humidity: 2 readings each, d1's 1.
            if k == 0 {
                readings.push(simple(device, "humidity", "Float64", "0.25"));
            }
            let e = event(device, origin, readings);
            add(store, &e);
            events.push(e);
        }
    }
    events
}

fn counts_by_every_filter(store: &mut dyn EventStore) {
    small_dataset(store);
    // origins: d0 at 1000, 1010, 1020; d1 at 1001, 1011, 1021.
    let event_cases: [(Filter<'_>, u64); 7] = [
        (Filter::all(), 6),
        (Filter::device("d0"), 3),
        (Filter::device("nobody"), 0),
        (Filter::all().between(1001, 1011), 3),
        (Filter::device("d1").between(1001, 1011), 2),
        // Events have no resource: the filter's resource is ignored.
        (Filter::resource("humidity"), 6),
        (Filter::resource("humidity").between(1010, 1020), 3),
    ];
    for (filter, n) in event_cases {
        assert_eq!(store.event_count(filter).or_panic(), n, "events {filter:?}");
    }
    let both = |d, r| Filter {
        device: Some(d),
        resource: Some(r),
        range: None,
    };
    let reading_cases: [(Filter<'_>, u64); 9] = [
        (Filter::all(), 9),
        (Filter::device("d0"), 6),
        (Filter::resource("temperature"), 6),
        (both("d0", "humidity"), 3),
        (both("d1", "humidity"), 0),
        (Filter::all().between(1000, 1010), 5),
        (Filter::device("d1").between(1000, 1011), 2),
        (Filter::resource("humidity").between(1011, 1021), 1),
        (both("d0", "temperature").between(1000, 1010), 2),
    ];
    for (filter, n) in reading_cases {
        assert_eq!(
            store.reading_count(filter).or_panic(),
            n,
            "readings {filter:?}"
        );
    }
}

fn pages_are_newest_first(store: &mut dyn EventStore) {
    let events = small_dataset(store);
    let newest_first: Vec<&str> = ids(&events).into_iter().rev().collect();
    let all = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&all), newest_first);
    let page = |offset, limit| Page { offset, limit };
    let got = store.events(Filter::all(), page(1, 2)).or_panic();
    assert_eq!(ids(&got), newest_first[1..3]);
    let got = store.events(Filter::all(), page(4, UNLIMITED)).or_panic();
    assert_eq!(ids(&got), newest_first[4..]);
    assert!(store
        .events(Filter::all(), page(0, 0))
        .or_panic()
        .is_empty());
    assert!(store
        .events(Filter::all(), page(6, 10))
        .or_panic()
        .is_empty());
    let got = store.events(Filter::device("d1"), page(1, 5)).or_panic();
    assert_eq!(ids(&got), [events[3].id.as_str(), events[1].id.as_str()]);
    // Each listed event has its readings, in sent order.
    for e in &all {
        let sent = events.iter().find(|s| s.id == e.id).or_panic_none();
        assert_eq!(e, &as_stored(store, sent));
    }
    // Readings: newest first; ties (one event's readings) in any order.
    let origins = |rs: &[Reading]| rs.iter().map(|r| r.origin).collect::<Vec<_>>();
    let got = store.readings(Filter::all(), Page::ALL).or_panic();
    assert_eq!(
        origins(&got),
        [1021, 1020, 1020, 1011, 1010, 1010, 1001, 1000, 1000]
    );
    let got = store.readings(Filter::all(), page(3, 3)).or_panic();
    assert_eq!(origins(&got), [1011, 1010, 1010]);
    let got = store
        .readings(Filter::resource("humidity"), page(1, UNLIMITED))
        .or_panic();
    assert_eq!(origins(&got), [1010, 1000]);
    assert!(got
        .iter()
        .all(|r| r.resource_name == "humidity" && r.value == ReadingValue::Simple("0.25".into())));
    assert!(store
        .readings(Filter::all(), page(0, 0))
        .or_panic()
        .is_empty());
}

trait OrPanicNone<T> {
    fn or_panic_none(self) -> T;
}

impl<T> OrPanicNone<T> for Option<T> {
    #[track_caller]
    fn or_panic_none(self) -> T {
        self.unwrap_or_else(|| panic!("expected a value"))
    }
}

fn time_ranges_are_inclusive(store: &mut dyn EventStore) {
    let events = small_dataset(store);
    // Both ends are origins of stored events.
    let got = store
        .events(Filter::all().between(1001, 1011), Page::ALL)
        .or_panic();
    assert_eq!(ids(&got), [&events[3].id, &events[2].id, &events[1].id]);
    let got = store
        .events(Filter::all().between(1002, 1009), Page::ALL)
        .or_panic();
    assert!(got.is_empty());
    let got = store
        .events(Filter::all().between(1020, 1020), Page::ALL)
        .or_panic();
    assert_eq!(ids(&got), [&events[4].id]);
    let got = store
        .readings(Filter::device("d0").between(1010, 1020), Page::ALL)
        .or_panic();
    assert_eq!(got.len(), 4);
    assert!(got
        .iter()
        .all(|r| (1010..=1020).contains(&r.origin) && r.device_name == "d0"));
    assert_eq!(
        store
            .reading_count(Filter::all().between(1021, 1021))
            .or_panic(),
        1
    );
}

fn delete_by_id(store: &mut dyn EventStore) {
    let events = small_dataset(store);
    store
        .delete_event_by_id(&events[0].id.to_uppercase())
        .or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 5);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 7);
    assert_eq!(
        store
            .reading_count(Filter::all().between(1000, 1000))
            .or_panic(),
        0
    );
    for gone in [&events[0].id, &new_uuid()] {
        assert!(matches!(
            store.event_by_id(gone),
            Err(StoreError::NotFound { kind: "event", .. })
        ));
        assert!(matches!(
            store.delete_event_by_id(gone),
            Err(StoreError::NotFound { kind: "event", .. })
        ));
    }
    assert_eq!(
        store.event_by_id(&events[1].id).or_panic(),
        as_stored(store, &events[1])
    );
}

fn delete_by_device(store: &mut dyn EventStore) {
    small_dataset(store);
    store.delete_events(Doomed::Device("d0")).or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 3);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::device("d0")).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 3);
    // Deleting a device with nothing stored is no error.
    store.delete_events(Doomed::Device("nobody")).or_panic();
    // The device can report again: its device_info rows are made afresh (the cache forgot
    // the deleted ones).
    let again = event("d0", 2000, vec![simple("d0", "temperature", "Int64", "9")]);
    add(store, &again);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 1);
    assert_eq!(
        store.event_by_id(&again.id).or_panic(),
        as_stored(store, &again)
    );
}

fn delete_by_age(store: &mut dyn EventStore) {
    const HOUR: i64 = 3_600_000_000_000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .or_panic()
        .as_nanos() as i64;
    let old = event("d0", now - 2 * HOUR, vec![simple("d0", "r", "Int64", "1")]);
    let recent = event("d0", now - HOUR / 2, vec![simple("d0", "r", "Int64", "2")]);
    let future = event("d1", now + HOUR, vec![simple("d1", "r", "Int64", "3")]);
    for e in [&old, &recent, &future] {
        add(store, e);
    }
    store
        .delete_events(Doomed::OlderThan { age_ns: HOUR })
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
}

fn duplicate_ids_are_stored_twice(store: &mut dyn EventStore) {
    let e = mixed_event("dev-a", 5);
    add(store, &e);
    add(store, &e);
    assert_eq!(store.event_count(Filter::all()).or_panic(), 2);
    assert_eq!(
        store.reading_count(Filter::all()).or_panic(),
        2 * e.readings.len() as u64
    );
    // EventById wants exactly one row, as EdgeX's does.
    match store.event_by_id(&e.id) {
        Err(StoreError::Decode {
            kind: "event",
            id,
            reason,
        }) => {
            assert_eq!(id, e.id);
            assert!(reason.contains("stored 2 times"), "{reason}");
        }
        other => panic!("expected a Decode error for a twice-stored id, got {other:?}"),
    }
    // Each copy comes back from the list with the readings of both (they share the event id).
    let listed = store.events(Filter::all(), Page::ALL).or_panic();
    assert_eq!(ids(&listed), [&e.id, &e.id]);
    assert_eq!(listed[0].readings.len(), 2 * e.readings.len());
}

fn scrub_empties_everything(store: &mut dyn EventStore) {
    small_dataset(store);
    store.scrub().or_panic();
    assert_eq!(store.event_count(Filter::all()).or_panic(), 0);
    assert_eq!(store.reading_count(Filter::all()).or_panic(), 0);
    assert!(store.events(Filter::all(), Page::ALL).or_panic().is_empty());
    // The device_info rows went too, and the cache with them: a new event of a device seen
    // before is stored and visible.
    let e = mixed_event("d0", 7);
    add(store, &e);
    assert_eq!(store.event_count(Filter::device("d0")).or_panic(), 1);
    assert_eq!(store.event_by_id(&e.id).or_panic(), as_stored(store, &e));
}

/// The store reports a size, and 500 events of 5 readings make it larger.
fn size_grows_with_the_data(store: &mut dyn EventStore) {
    store.scrub().or_panic();
    let empty = store
        .size_bytes()
        .or_panic()
        .expect("the store reports its size");
    for i in 0..500 {
        let readings = (0..5)
            .map(|k| simple("device0", &format!("name{k}"), "Int64", "42"))
            .collect();
        store
            .add_event(&event("device0", 1_000 + i, readings))
            .or_panic();
    }
    let full = store
        .size_bytes()
        .or_panic()
        .expect("the store reports its size");
    assert!(full > empty, "{full} > {empty}");
}
