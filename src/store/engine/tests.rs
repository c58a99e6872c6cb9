//! What the conformance suite cannot see: the keys and bytes this store leaves in the
//! keyspace (the Redis store's layout), and that concurrent writers keep the indexes
//! right. The results themselves are checked by `tests/it/conformance.rs`.

use std::collections::BTreeSet;

use serde::Serialize;

use super::*;
use crate::store::redis::records2018::encode;
use crate::store::StoreError;

fn keys(engine: &Engine) -> BTreeSet<String> {
    let mut locked = engine.db(0).lock_all(engine.now_ms());
    locked
        .keys()
        .iter()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect()
}

fn with_scores(engine: &Engine, key: &str) -> Vec<(String, f64)> {
    let mut locked = engine.db(0).lock([key.as_bytes()], engine.now_ms());
    let z = locked.get_zset(key.as_bytes()).expect("a zset");
    z.map_or(Vec::new(), |z| {
        z.iter()
            .map(|(m, s)| (String::from_utf8_lossy(m).into_owned(), s))
            .collect()
    })
}

fn stored(engine: &Engine, key: &str) -> Vec<u8> {
    let mut locked = engine.db(0).lock([key.as_bytes()], engine.now_ms());
    let blob = locked.get_str(key.as_bytes()).expect("a string");
    blob.expect("the record").clone()
}

fn blob<T: Serialize>(record: &T) -> Vec<u8> {
    encode(&mut Vec::new(), "test", "", record)
        .expect("encode")
        .to_vec()
}

#[test]
fn writes_the_redis_store_layout_and_bytes() {
    let engine = Engine::new();
    let mut store = EngineStore::new(engine.clone(), 0);
    let mut e = Event {
        device: "dev".into(),
        created: 1000,
        pushed: 7,
        readings: ["n0", "n1"]
            .iter()
            .map(|n| Reading {
                name: n.to_string(),
                ..Reading::default()
            })
            .collect(),
        ..Event::default()
    };
    store.add_event(&mut e).expect("add_event");
    let (r0, r1) = (e.readings[0].id.as_str(), e.readings[1].id.as_str());
    let links = format!("event:readings:{}", e.id);
    let want: BTreeSet<String> = [
        e.id.as_str(),
        r0,
        r1,
        "event",
        "event:created",
        "event:pushed",
        "event:device:dev",
        &links,
        "reading",
        "reading:created",
        "reading:device:dev",
        "reading:name:n0",
        "reading:name:n1",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    assert_eq!(keys(&engine), want);

    let (id, r0s, r1s) = (e.id.clone(), r0.to_string(), r1.to_string());
    assert_eq!(
        with_scores(&engine, &links),
        [(r0s.clone(), 0.0), (r1s.clone(), 1.0)]
    );
    assert_eq!(with_scores(&engine, "event"), [(id.clone(), 0.0)]);
    assert_eq!(
        with_scores(&engine, "event:created"),
        [(id.clone(), 1000.0)]
    );
    assert_eq!(with_scores(&engine, "event:pushed"), [(id.clone(), 7.0)]);
    assert_eq!(
        with_scores(&engine, "reading:device:dev"),
        [(r0s, 1000.0), (r1s.clone(), 1000.0)]
    );
    assert_eq!(with_scores(&engine, "reading:name:n1"), [(r1s, 1000.0)]);
    // The very bytes the Redis store SETs.
    assert_eq!(stored(&engine, &e.id), blob(&RedisEvent::of(&e)));
    assert_eq!(stored(&engine, r1), blob(&RedisReading::of(&e.readings[1])));
}

#[test]
fn scrub_removes_every_record_and_index_and_nothing_else() {
    let engine = Engine::new();
    let mut store = EngineStore::new(engine.clone(), 0);
    for i in 0..500 {
        let mut r = Reading {
            device: format!("device{}", i / 100),
            name: format!("test{i}"),
            ..Reading::default()
        };
        store.add_reading(&mut r).expect("add_reading");
    }
    let mut e = Event {
        device: "d".into(),
        readings: vec![Reading::default(); 5],
        ..Event::default()
    };
    store.add_event(&mut e).expect("add_event");
    // A dangling link stays behind in event:readings:<id>.
    store
        .delete_reading_by_id(&e.readings[0].id)
        .expect("delete_reading_by_id");
    {
        let mut locked = engine.db(0).lock([&b"other"[..]], engine.now_ms());
        locked.insert(b"other", Entry::new(Value::Str(b"kept".to_vec())));
    }
    assert!(keys(&engine).len() > 500);
    store.scrub_all_events().expect("scrub");
    assert_eq!(keys(&engine), BTreeSet::from(["other".to_string()]));
}

#[test]
fn concurrent_updates_and_deletes_keep_every_record_in_exactly_its_indexes() {
    // Each writer moves the same readings between devices and names, and deletes some;
    // a write that read the record without locking its old index keys would leave it in
    // two device (or name) indexes, or in one after its record is gone.
    const WRITERS: usize = 4;
    const READINGS: usize = 8;
    let engine = Engine::new();
    let mut store = EngineStore::new(engine.clone(), 0);
    let ids: Vec<String> = (0..READINGS)
        .map(|_| {
            let mut r = Reading {
                device: "d0".into(),
                name: "n0".into(),
                created: 5,
                ..Reading::default()
            };
            store.add_reading(&mut r).expect("add_reading")
        })
        .collect();
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let (engine, ids) = (engine.clone(), &ids);
            scope.spawn(move || {
                let mut store = EngineStore::new(engine, 0);
                for i in 0..400 {
                    let id = &ids[(i * 7 + w) % READINGS];
                    let update = Reading {
                        id: id.clone(),
                        device: format!("d{}", (i + w) % 3),
                        name: format!("n{}", (i * w) % 3),
                        ..Reading::default()
                    };
                    match store.update_reading(&update) {
                        Ok(()) | Err(StoreError::NotFound { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                    if i == 300 + w {
                        match store.delete_reading_by_id(id) {
                            Ok(()) | Err(StoreError::NotFound { .. }) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });

    let live: Vec<Reading> = store.readings().expect("readings");
    assert!(live.len() < READINGS, "some readings were deleted");
    assert_eq!(store.reading_count().expect("count"), live.len());
    let mut by_device = 0;
    let mut by_name = 0;
    for k in 0..3 {
        for r in store
            .readings_by_device(&format!("d{k}"), UNLIMITED)
            .expect("by device")
        {
            assert_eq!(r.device, format!("d{k}"));
            by_device += 1;
        }
        for r in store
            .readings_by_name(&format!("n{k}"), UNLIMITED)
            .expect("by name")
        {
            assert_eq!(r.name, format!("n{k}"));
            by_name += 1;
        }
    }
    // Index members whose record is gone would not show above: count members directly.
    let members = |prefix: &str| -> usize {
        (0..3)
            .map(|k| with_scores(&engine, &format!("{prefix}{k}")).len())
            .sum()
    };
    assert_eq!(by_device, live.len());
    assert_eq!(by_name, live.len());
    assert_eq!(members("reading:device:d"), live.len());
    assert_eq!(members("reading:name:n"), live.len());
    assert_eq!(with_scores(&engine, "reading:created").len(), live.len());
}
