//! Unit tests without a server: the documents' shape and round trip, ids, and the queries a
//! filter makes. The conformance suite (`tests/it/edgex_conformance.rs`) runs the store on a
//! server, directly and behind the service.

use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, RawBsonRef};
use serde_json::json;

use super::documents::{EventIn, EventOut, ReadingIn, ReadingOut, StoredIds};
use super::store::query;
use super::{EVENTS, READINGS};
use crate::edgex::testing::{event, reading, tags, typed, T0};
use crate::edgex::{Event, Reading, ReadingValue};
use crate::store::edgex::Filter;
use crate::store::mongo::{decode, encode};
use crate::store::StoreError;

const EVENT_ID: &str = "563513B3-F020-46FA-AE44-0FDD1D129185";

/// A reading of device `d` at [`T0`] with the given id, resource named after its value type.
fn with_id(id: &str, value_type: &str, value: ReadingValue) -> Reading {
    let resource = value_type.to_lowercase();
    Reading {
        id: id.to_string(),
        ..typed(value_type, reading("d", &resource, T0, value))
    }
}

fn every_kind() -> Event {
    let readings = vec![
        with_id(
            "00000000-0000-4000-8000-000000000002",
            "Int64",
            ReadingValue::Simple("42".into()),
        ),
        with_id(
            "00000000-0000-4000-8000-000000000001",
            "Binary",
            ReadingValue::Binary {
                data: vec![0, 1, 255],
                media_type: "image/png".into(),
            },
        ),
        with_id(
            "00000000-0000-4000-8000-00000000000A",
            "Object",
            ReadingValue::Object(json!({"a": [1, -2, 3.5], "b": {"c": null}})),
        ),
        with_id(
            "00000000-0000-4000-8000-000000000003",
            "ObjectArray",
            ReadingValue::Object(json!([{"x": 1}, "y"])),
        ),
    ];
    Event {
        id: EVENT_ID.to_string(),
        tags: tags(json!({"Gateway": "G-1", "n": 25.5})),
        ..event("d", T0, readings)
    }
}

#[test]
fn an_event_round_trips_with_lowercase_ids_and_its_readings_in_order() {
    let e = every_kind();
    let ids = StoredIds::of(&e).unwrap_or_else(|err| panic!("{err}"));
    let raw = encode(EVENTS, &ids.event, &EventOut::of(&e, &ids)).unwrap_or_else(|x| panic!("{x}"));
    let got = decode::<EventIn>(EVENTS, &raw)
        .and_then(EventIn::into_event)
        .unwrap_or_else(|x| panic!("{x}"));
    let mut want = e.clone();
    want.id = want.id.to_lowercase();
    for r in &mut want.readings {
        r.id = r.id.to_lowercase();
    }
    assert_eq!(got, want);
}

#[test]
fn documents_use_edgex_names_and_native_bson_values() {
    let e = every_kind();
    let ids = StoredIds::of(&e).unwrap_or_else(|err| panic!("{err}"));
    let raw = encode(EVENTS, &ids.event, &EventOut::of(&e, &ids)).unwrap_or_else(|x| panic!("{x}"));
    let keys: Vec<&str> = raw
        .iter()
        .map(|f| f.map(|(k, _)| k).unwrap_or("?"))
        .collect();
    assert_eq!(
        keys,
        [
            "_id",
            "deviceName",
            "profileName",
            "sourceName",
            "origin",
            "tags",
            "readings"
        ]
    );
    assert_eq!(
        raw.get_str("_id").ok(),
        Some("563513b3-f020-46fa-ae44-0fdd1d129185")
    );
    assert_eq!(raw.get_i64("origin").ok(), Some(1_700_000_000_000_000_000));

    let binary = ReadingOut::of(&e.readings[1], &ids.readings[1], Some(&ids.event));
    let raw = encode(READINGS, &ids.readings[1], &binary).unwrap_or_else(|x| panic!("{x}"));
    assert_eq!(raw.get_str("event").ok(), Some(ids.event.as_str()));
    match raw.get("binaryValue") {
        Ok(Some(RawBsonRef::Binary(b))) => {
            assert_eq!(
                (b.subtype, b.bytes),
                (BinarySubtype::Generic, &[0u8, 1, 255][..])
            );
        }
        other => panic!("binaryValue is {other:?}"),
    }
    assert_eq!(raw.get_str("mediaType").ok(), Some("image/png"));
    assert!(raw.get("value").ok().flatten().is_none());

    let object = ReadingOut::of(&e.readings[2], &ids.readings[2], Some(&ids.event));
    let raw = encode(READINGS, &ids.readings[2], &object).unwrap_or_else(|x| panic!("{x}"));
    let value = raw
        .get_document("objectValue")
        .unwrap_or_else(|x| panic!("{x}"));
    assert_eq!(
        value.to_raw_document_buf().to_document().ok(),
        Some(doc! { "a": [1_i64, -2_i64, 3.5], "b": { "c": null } })
    );
    let back = decode::<ReadingIn>(READINGS, &raw)
        .and_then(ReadingIn::into_reading)
        .unwrap_or_else(|x| panic!("{x}"));
    assert_eq!(back.value, e.readings[2].value);
}

#[test]
fn ids_that_are_not_uuids_cannot_be_stored() {
    let mut e = every_kind();
    e.readings[3].id = "r-1".to_string();
    let message = StoredIds::of(&e).err().map(|x| x.to_string());
    assert_eq!(
        message.as_deref(),
        Some(
            "mongodb: reading id \"r-1\" of event 563513b3-f020-46fa-ae44-0fdd1d129185 is not a \
             UUID: EdgeX ids are UUIDs (this layout keys documents by them)"
        )
    );
    e.id = "42".to_string();
    let message = StoredIds::of(&e).err().map(|x| x.to_string());
    assert_eq!(
        message.as_deref(),
        Some(
            "mongodb: event id \"42\" is not a UUID: EdgeX ids are UUIDs (this layout keys \
             documents by them)"
        )
    );
}

#[test]
fn an_integer_bson_cannot_hold_is_a_one_line_error_naming_the_event() {
    let mut e = every_kind();
    e.readings[2].value = ReadingValue::Object(json!({"big": u64::MAX}));
    let ids = StoredIds::of(&e).unwrap_or_else(|err| panic!("{err}"));
    match encode(EVENTS, &ids.event, &EventOut::of(&e, &ids)) {
        Err(StoreError::Backend { message, .. }) => {
            assert!(
                message.starts_with(
                    "cannot encode event 563513b3-f020-46fa-ae44-0fdd1d129185 as BSON: "
                ) && !message.contains('\n'),
                "{message}"
            );
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
}

#[test]
fn a_reading_without_its_value_field_is_a_decode_error() {
    let raw = mongodb::bson::rawdoc! {
        "_id": "00000000-0000-4000-8000-000000000002", "deviceName": "d",
        "resourceName": "r", "profileName": "p", "origin": 1_i64, "valueType": "Binary",
        "value": "not bytes",
    };
    match decode::<ReadingIn>(READINGS, &raw).and_then(ReadingIn::into_reading) {
        Err(StoreError::Decode { kind, id, reason }) => {
            assert_eq!(
                (kind, id.as_str()),
                ("reading", "00000000-0000-4000-8000-000000000002")
            );
            assert_eq!(
                reason,
                "value type Binary but no value field for it (value, binaryValue or objectValue)"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn filters_make_the_queries_the_indexes_serve() {
    let both = Filter {
        device: Some("d"),
        resource: Some("temp"),
        range: Some((1, 2)),
    };
    assert_eq!(
        query(&both, true),
        doc! { "deviceName": "d", "resourceName": "temp", "origin": { "$gte": 1_i64, "$lte": 2_i64 } }
    );
    // Events have no resource.
    assert_eq!(
        query(&both, false),
        doc! { "deviceName": "d", "origin": { "$gte": 1_i64, "$lte": 2_i64 } }
    );
    assert_eq!(
        query(&Filter::all().between(7, 7), true),
        doc! { "origin": 7_i64 }
    );
    assert_eq!(query(&Filter::all(), true), doc! {});
}
