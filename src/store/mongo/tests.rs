//! Unit tests of the MongoDB store: limits, ids, errors and documents, then against a
//! MongoDB-wire server the tests start themselves.

use mongodb::bson::doc;

use super::documents::{decode, encode, EventIn, EventOut, ReadingIn, ReadingOut};
use super::store::decode_embedded_event;
use std::time::Duration;

use mongodb::bson::oid::ObjectId as Oid;

use super::base::*;
use super::*;
use crate::store::{StoreError, UNLIMITED};
use crate::v2018::{Event, ObjectId, Reading};

#[test]
fn limits_map_to_mongo_limits() {
    assert_eq!(mongo_limit(1), Some(1));
    assert_eq!(mongo_limit(500), Some(500));
    assert_eq!(mongo_limit(UNLIMITED), None);
    assert_eq!(mongo_limit(usize::MAX - 1), None, "beyond i64: no limit");
}

#[test]
fn ids_are_checked_and_case_folded() {
    let id = object_id("5B4F0000000000000000000A").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(id.to_hex(), "5b4f0000000000000000000a");
    assert!(matches!(object_id("5b4f"), Err(StoreError::InvalidId(i)) if i == "5b4f"));
    // ObjectId byte order is hex order: sorting by `_id` is sorting by hex id.
    let a = ObjectId::new();
    let b = ObjectId::new();
    let (oa, ob) = (Oid::from_bytes(a.bytes()), Oid::from_bytes(b.bytes()));
    assert_eq!(oa.cmp(&ob), a.to_hex_string().cmp(&b.to_hex_string()));
    assert_eq!(oa.to_hex(), a.to_hex_string());
}

/// Needs no server: nothing listens on port 1.
#[test]
fn an_unreachable_server_fails_fast_with_the_url_and_the_fix() {
    let url = "mongodb://u:s3cr3t@127.0.0.1:1/?serverSelectionTimeoutMS=300";
    let started = std::time::Instant::now();
    let message = match MongoDatabase::create(url, MongoLayout::Embedded, Fidelity::Modern) {
        Err(StoreError::Backend { backend, message }) => {
            assert_eq!(backend, "mongodb");
            message
        }
        Err(e) => panic!("expected a backend error, got {e}"),
        Ok(db) => panic!("connected to {}", db.describe()),
    };
    assert!(started.elapsed() < Duration::from_secs(5), "{message}");
    assert!(!message.contains('\n'), "{message}");
    assert!(!message.contains("s3cr3t"), "{message}");
    assert!(
        message.starts_with(
            "cannot reach MongoDB at mongodb://u:***@127.0.0.1:1/?serverSelectionTimeoutMS=300: "
        ),
        "{message}"
    );
    assert!(message.ends_with("mongo=mongodb://HOST:PORT)"), "{message}");

    match MongoDatabase::create("http://x", MongoLayout::Embedded, Fidelity::Modern) {
        Err(StoreError::Backend { message, .. }) => assert!(
            message.starts_with("invalid MongoDB URL http://x: ")
                && message.ends_with("(expected mongodb://HOST:PORT)"),
            "{message}"
        ),
        Err(e) => panic!("expected a backend error, got {e}"),
        Ok(db) => panic!("connected to {}", db.describe()),
    }
}

#[test]
fn layouts_parse_their_names() {
    for layout in [MongoLayout::Embedded, MongoLayout::Referenced] {
        assert_eq!(layout.name().parse::<MongoLayout>(), Ok(layout));
    }
    let e = "nested".parse::<MongoLayout>().err().unwrap_or_default();
    assert!(
        e.contains("\"nested\"") && e.contains("embedded or referenced"),
        "{e}"
    );
}

/// What add writes is what a read gives back, every field, for both layouts.
#[test]
fn documents_round_trip_through_bson() {
    let r = Reading {
        id: ObjectId::new().to_hex_string(),
        pushed: 1,
        created: 2,
        origin: 3,
        modified: 4,
        device: "d ü".into(),
        name: "n".into(),
        value: "v \"q\"".into(),
    };
    let rid = object_id(&r.id).unwrap_or_else(|e| panic!("{e}"));
    let e = Event {
        id: ObjectId::new().to_hex_string(),
        pushed: 5,
        device: "d".into(),
        created: 6,
        modified: 7,
        origin: 8,
        event: "s".into(),
        readings: vec![r.clone()],
    };
    let eid = object_id(&e.id).unwrap_or_else(|e| panic!("{e}"));

    let raw = encode(READINGS, &rid, &ReadingOut::of(&r, rid, Some(eid)))
        .unwrap_or_else(|e| panic!("{e}"));
    let back: ReadingIn = decode(READINGS, &raw).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.event_id, Some(eid));
    assert_eq!(back.into_reading(), r);
    let raw =
        encode(READINGS, &rid, &ReadingOut::of(&r, rid, None)).unwrap_or_else(|e| panic!("{e}"));
    assert!(raw.get("event_id").ok().flatten().is_none());

    let embedded = vec![ReadingOut::of(&r, rid, None)];
    let raw =
        encode(EVENTS, &eid, &EventOut::of(&e, eid, embedded)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        decode_embedded_event(&raw).unwrap_or_else(|e| panic!("{e}")),
        e
    );

    let raw =
        encode(EVENTS, &eid, &EventOut::of(&e, eid, vec![rid])).unwrap_or_else(|e| panic!("{e}"));
    let (head, ids) = decode::<EventIn<Oid>>(EVENTS, &raw)
        .unwrap_or_else(|e| panic!("{e}"))
        .split();
    assert_eq!(ids, vec![rid]);
    assert_eq!(
        head,
        Event {
            readings: Vec::new(),
            ..e
        }
    );
}

#[test]
fn undecodable_documents_name_their_id() {
    let id = Oid::from_bytes([1; 12]);
    let raw = encode(READINGS, &id, &doc! { "_id": id, "pushed": "not a number" })
        .unwrap_or_else(|e| panic!("{e}"));
    match decode::<ReadingIn>(READINGS, &raw) {
        Err(StoreError::Decode { kind, id: got, .. }) => {
            assert_eq!((kind, got.as_str()), (READINGS, "010101010101010101010101"));
        }
        Err(e) => panic!("expected Decode, got {e}"),
        Ok(_) => panic!("expected Decode, got a reading"),
    }
}
