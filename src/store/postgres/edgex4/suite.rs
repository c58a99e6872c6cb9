//! What both ports of EdgeX 4.0's schema ([`super`] on PostgreSQL, `sqlite4` on SQLite) have
//! and other layouts do not, for the stores' own test files: the device_info rows of the 2018
//! dataset, and an event id stored twice. Their answers to every other call are the
//! conformance suite's (`tests/it/edgex_conformance.rs`), which runs on both ports directly
//! and behind the service.

use crate::edgex::testing::{event_of, every_value_kind, OrPanic};
use crate::store::edgex::{EventStore, Filter, Page};
use crate::store::StoreError;

/// EdgeX 4.0 checks no event ids and keeps no reading ids; binary payloads it keeps.
pub(crate) fn has_edgex4_behaviour(store: &dyn EventStore) {
    assert!(!store.checks_duplicate_ids());
    assert!(!store.keeps_reading_ids());
    assert!(store.keeps_binary_values());
}

/// The 2018 dataset's shape, small: 2 devices × 2 events × 5 Int64 readings named
/// name0..name4, one profile and source, no tags.
pub(crate) fn add_2018_dataset(store: &mut dyn EventStore) {
    let names = ["name0", "name1", "name2", "name3", "name4"];
    let mut origin = 1_000;
    for device in ["device0", "device1"] {
        for _ in 0..2 {
            origin += 1;
            store
                .add_event(&event_of(device, origin, &names))
                .or_panic();
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

/// An event added twice is stored twice (EdgeX 4.0 has no key on `event.id`): both copies
/// count, the by-id call refuses the ambiguity as EdgeX's does, and the list returns both,
/// each with the readings of both (they share the event id). Takes an empty store.
pub(crate) fn duplicate_ids_are_stored_twice(store: &mut dyn EventStore) {
    let e = every_value_kind("dev-a", 5);
    store.add_event(&e).or_panic();
    store.add_event(&e).or_panic();
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
    let listed = store.events(Filter::all(), Page::ALL).or_panic();
    let ids: Vec<&str> = listed.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, [&e.id, &e.id]);
    assert_eq!(listed[0].readings.len(), 2 * e.readings.len());
}
