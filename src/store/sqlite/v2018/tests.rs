//! Unit tests of the SQLite store: every statement's `EXPLAIN QUERY PLAN` (served by an
//! index, no temp b-tree sort), sharing one database between stores and threads, concurrent
//! writers, file and temp databases, and errors.

use super::*;
use crate::edgex::testing::OrPanic;
use crate::v2018::testing::reading;

/// Every plan row of `statement`.
fn plan(conn: &Connection, statement: &str) -> Vec<String> {
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {statement}"))
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
    // Every parameter NULL: the plan depends on the statement's shape, not on values.
    let nulls = vec![rusqlite::types::Null; stmt.parameter_count()];
    let rows = stmt
        .query_map(rusqlite::params_from_iter(nulls), |row| {
            row.get::<_, String>(3)
        })
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
    rows.map(|r| r.unwrap_or_else(|e| panic!("{statement}: {e}")))
        .collect()
}

/// A plan row that reads a whole table without an index, or sorts outside one.
/// `SCAN t USING [COVERING] INDEX i` walks an index in its order (the "all" lists and
/// counts); `SCAN json_each VIRTUAL TABLE` walks the bound list of ids, not a table.
fn is_unindexed(detail: &str) -> bool {
    let full_scan = detail.starts_with("SCAN ")
        && !detail.contains(" USING ")
        && !detail.contains(" VIRTUAL TABLE");
    full_scan || detail.contains("TEMP B-TREE")
}

#[test]
fn every_statement_is_served_by_an_index() {
    let db = SqliteDatabase::memory().or_panic();
    let store = db.open_store().or_panic();
    let mut unindexed = Vec::new();
    for (name, statement) in STATEMENTS {
        let rows = plan(&store.conn, statement);
        for detail in rows.iter().filter(|d| is_unindexed(d)) {
            unindexed.push(format!("{name}: {detail}"));
        }
    }
    assert_eq!(unindexed, Vec::<String>::new());
}

#[test]
fn plans_use_the_index_named_for_the_query() {
    let db = SqliteDatabase::memory().or_panic();
    let store = db.open_store().or_panic();
    let expect = [
        (EVENT_BY_ID, "SEARCH event USING INDEX event_id (id=?)"),
        (
            EVENTS_FOR_DEVICE,
            "SEARCH event USING INDEX event_device_created (device=?)",
        ),
        (
            EVENTS_BY_CREATED,
            "SEARCH event USING INDEX event_created (created>? AND created<?)",
        ),
        (
            EVENTS_PUSHED,
            "SEARCH event USING INDEX event_pushed (pushed>?)",
        ),
        (EVENTS, "SCAN event USING INDEX event_id"),
        (
            READINGS_OF_EVENT,
            "SEARCH reading USING INDEX reading_event (event_id=?)",
        ),
        (
            READINGS_BY_NAME,
            "SEARCH reading USING INDEX reading_name_created (name=?)",
        ),
        (
            READINGS_BY_DEVICE_AND_NAME,
            "SEARCH reading USING INDEX reading_device_name_created (device=? AND name=?)",
        ),
        (
            DELETE_READING,
            "SEARCH reading USING INDEX reading_id (id=?)",
        ),
    ];
    for (statement, want) in expect {
        assert_eq!(plan(&store.conn, statement), [want], "{statement}");
    }
}

#[test]
fn limits_clamp_to_i64() {
    assert_eq!(sql_limit(0), 0);
    assert_eq!(sql_limit(7), 7);
    assert_eq!(sql_limit(crate::store::UNLIMITED), i64::MAX);
}

#[test]
fn a_database_can_be_shared_by_worker_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SqliteDatabase>();
}

/// Two stores of one database see each other's writes, as concurrent workers must.
fn stores_share_writes(db: &SqliteDatabase) {
    let mut a = db.open_store().or_panic();
    let mut b = db.open_store().or_panic();
    let mut e = Event {
        device: "d".into(),
        readings: vec![reading("", "x", 0), reading("", "y", 0)],
        ..Event::default()
    };
    a.add_event(&mut e).or_panic();
    assert_eq!(b.event_by_id(&e.id).or_panic(), e);
    let mut r = reading("d", "z", 0);
    b.add_reading(&mut r).or_panic();
    assert_eq!(a.reading_count().or_panic(), 3);
    b.delete_event_by_id(&e.id).or_panic();
    assert_eq!(a.readings().or_panic(), vec![r]);
    assert_eq!(a.event_count().or_panic(), 0);
}

/// A file (WAL) and an in-memory database: the behaviours workers rely on hold on both.
fn both_kinds() -> [SqliteDatabase; 2] {
    [
        SqliteDatabase::temp().or_panic(),
        SqliteDatabase::memory().or_panic(),
    ]
}

#[test]
fn stores_of_one_database_share_writes() {
    for db in both_kinds() {
        stores_share_writes(&db);
    }
}

#[test]
fn size_is_the_pages_and_holds_what_was_written() {
    for db in both_kinds() {
        let mut store = db.open_store().or_panic();
        let before = store
            .size_bytes()
            .or_panic()
            .expect("SQLite knows its size");
        let page: i64 = store
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .or_panic();
        assert_eq!(before % page as u64, 0, "{before}");
        // 100 readings of 2,000 distinct digits each: at least 200,000 bytes to keep (a WAL
        // database's pages not yet checkpointed included).
        for i in 0..100u64 {
            let mut r = reading("d", &format!("n{i}"), 0);
            r.value = (0..2_000u64)
                .map(|k| char::from(b'0' + ((k * 7 + i * 13) % 10) as u8))
                .collect();
            store.add_reading(&mut r).or_panic();
        }
        let after = store
            .size_bytes()
            .or_panic()
            .expect("SQLite knows its size");
        assert!(
            after - before >= 200_000,
            "{} → {after}: {}",
            before,
            db.describe()
        );
    }
}

#[test]
fn memory_databases_are_private() {
    let one = SqliteDatabase::memory().or_panic();
    let two = SqliteDatabase::memory().or_panic();
    let mut r = reading("d", "n", 0);
    let mut a = one.open_store().or_panic();
    a.add_reading(&mut r).or_panic();
    let mut b = two.open_store().or_panic();
    assert_eq!(b.reading_count().or_panic(), 0);
    assert_eq!(one.describe(), ":memory:");
}

/// Workers writing at once wait for the write lock instead of failing.
fn concurrent_writers_all_succeed(db: &SqliteDatabase) {
    const WORKERS: usize = 4;
    const EVENTS: usize = 50;
    std::thread::scope(|s| {
        for w in 0..WORKERS {
            let mut store = db.open_store().or_panic();
            s.spawn(move || {
                for _ in 0..EVENTS {
                    let mut e = Event {
                        device: format!("w{w}"),
                        readings: vec![reading("", "a", 0), reading("", "b", 0)],
                        ..Event::default()
                    };
                    store.add_event(&mut e).or_panic();
                    store.events_for_device_limit(&e.device, 5).or_panic();
                    store
                        .update_event(&Event {
                            id: e.id.clone(),
                            pushed: 1,
                            ..Event::default()
                        })
                        .or_panic();
                }
            });
        }
    });
    let mut store = db.open_store().or_panic();
    assert_eq!(store.event_count().ok(), Some(WORKERS * EVENTS));
    assert_eq!(store.reading_count().ok(), Some(2 * WORKERS * EVENTS));
    assert_eq!(store.event_count_by_device("w0").ok(), Some(EVENTS));
    assert_eq!(
        store.events_pushed().map(|es| es.len()).ok(),
        Some(WORKERS * EVENTS)
    );
}

#[test]
fn concurrent_writers_wait_for_each_other() {
    for db in both_kinds() {
        concurrent_writers_all_succeed(&db);
    }
}

/// A list whose order is not id order still gets each event its own readings, in order.
#[test]
fn event_lists_pair_readings_with_their_events_in_any_order() {
    let db = SqliteDatabase::memory().or_panic();
    let mut store = db.open_store().or_panic();
    let events: Vec<Event> = (0..4)
        .map(|i| {
            let mut e = Event {
                device: "d".into(),
                created: 1000 - i, // later added, older: by-time order is reversed id order
                readings: (0..=i)
                    .map(|k| reading("", &format!("e{i}r{k}"), 0))
                    .collect(),
                ..Event::default()
            };
            store.add_event(&mut e).or_panic();
            e
        })
        .collect();
    let reversed: Vec<Event> = events.iter().rev().cloned().collect();
    assert_eq!(store.events_for_device("d").ok(), Some(reversed.clone()));
    assert_eq!(
        store.events_by_creation_time(0, 1000, 3).ok(),
        Some(reversed[..3].to_vec())
    );
    assert_eq!(store.events().ok(), Some(events));
}

#[test]
fn a_file_database_survives_reopening_and_names_its_path() {
    let dir = tempfile::tempdir().or_panic();
    let path = dir.path().join("kept.db");
    let mut r = reading("d", "n", 0);
    {
        let db = SqliteDatabase::file(&path).or_panic();
        assert_eq!(db.describe(), path.display().to_string());
        let mut store = db.open_store().or_panic();
        store.add_reading(&mut r).or_panic();
    }
    let db = SqliteDatabase::file(&path).or_panic();
    let mut store = db.open_store().or_panic();
    assert_eq!(store.readings().ok(), Some(vec![r]));
}

#[test]
fn a_temp_database_is_deleted_on_drop() {
    let db = SqliteDatabase::temp().or_panic();
    let path = PathBuf::from(db.describe());
    assert!(path.exists(), "{}", path.display());
    drop(db);
    assert!(!path.exists(), "{}", path.display());
    assert!(path.parent().is_some_and(|dir| !dir.exists()));
}

#[test]
fn errors_name_the_file_and_the_fix_on_one_line() {
    let dir = tempfile::tempdir().or_panic();
    let missing = dir.path().join("no/such/dir/x.db");
    let message = SqliteDatabase::file(&missing)
        .map(|_| ())
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        message,
        Some(format!(
            "sqlite: cannot open {}: unable to open database file \
             (does the directory exist and is it writable?)",
            missing.display()
        ))
    );

    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![b'x'; 4096]).or_panic();
    let message = SqliteDatabase::file(&garbage)
        .map(|_| ())
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        message,
        Some(format!(
            "sqlite: cannot open {}: file is not a database (is it an SQLite database?)",
            garbage.display()
        ))
    );
}

#[test]
fn a_corrupt_document_is_a_decode_error_naming_its_id() {
    let db = SqliteDatabase::memory().or_panic();
    let mut store = db.open_store().or_panic();
    let id = "5b4f0000000000000000000a";
    store
        .conn
        .execute(
            "INSERT INTO reading (doc) VALUES (?1)",
            [format!(r#"{{"id":"{id}","created":"soon"}}"#)],
        )
        .or_panic();
    match store.reading_by_id(id) {
        Err(StoreError::Decode { kind, id: got, .. }) => {
            assert_eq!((kind, got.as_str()), ("reading", id));
        }
        other => panic!("expected a Decode error, got {other:?}"),
    }
}
