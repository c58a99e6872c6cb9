//! What only the SQLite port has (its answers are the conformance suite's,
//! `tests/it/edgex_conformance.rs`): a repeated event id stored twice ([`suite`]) on every kind
//! of database, the ported schema (EdgeX 4.0.2's columns and index names), the device_info rows of the
//! 2018 dataset, the shared cache, and values kept as sent.

use rusqlite::Connection;

use super::*;
use crate::edgex::testing::{event, reading, simple, typed, OrPanic};
use crate::edgex::ReadingValue;
use crate::store::edgex::{Doomed, EventStore, Filter};
use crate::store::postgres::edgex4::suite;

fn strings(conn: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    let rows = stmt
        .query_map([], |row| {
            (0..n)
                .map(|i| {
                    let v: rusqlite::types::Value = row.get(i)?;
                    Ok(match v {
                        rusqlite::types::Value::Null => "NULL".to_string(),
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Real(r) => r.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        rusqlite::types::Value::Blob(b) => format!("{b:?}"),
                    })
                })
                .collect::<rusqlite::Result<Vec<String>>>()
        })
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.map(|r| r.unwrap_or_else(|e| panic!("{sql}: {e}")))
        .collect()
}

#[test]
fn checks_no_event_ids_and_keeps_no_reading_ids() {
    for database in [Sqlite4Database::memory(), Sqlite4Database::temp()] {
        let database = database.or_panic();
        let mut store = database.open_store().or_panic();
        suite::has_edgex4_behaviour(&store);
        suite::duplicate_ids_are_stored_twice(&mut store);
    }
}

#[test]
fn schema_has_edgex_402_columns_and_index_names() {
    let database = Sqlite4Database::memory().or_panic();
    let store = database.open_store().or_panic();
    let conn = store.connection();
    let columns = strings(
        conn,
        "SELECT m.name, p.name, p.type, p.\"notnull\", COALESCE(p.dflt_value, 'NULL'), p.pk \
         FROM sqlite_master AS m, pragma_table_info(m.name) AS p \
         WHERE m.type = 'table' AND m.name IN ('device_info', 'event', 'reading') \
         ORDER BY m.name, p.cid",
    );
    let col = |t: &str, c: &str, ty: &str, notnull: &str, default: &str, pk: &str| {
        [t, c, ty, notnull, default, pk].map(String::from).to_vec()
    };
    assert_eq!(
        columns,
        vec![
            col("device_info", "id", "INTEGER", "0", "NULL", "1"),
            col("device_info", "devicename", "TEXT", "0", "NULL", "0"),
            col("device_info", "profilename", "TEXT", "0", "NULL", "0"),
            col("device_info", "sourcename", "TEXT", "0", "NULL", "0"),
            col("device_info", "tags", "TEXT", "0", "NULL", "0"),
            col("device_info", "resourcename", "TEXT", "0", "NULL", "0"),
            col("device_info", "valuetype", "TEXT", "0", "''", "0"),
            col("device_info", "units", "TEXT", "0", "''", "0"),
            col("device_info", "mediatype", "TEXT", "0", "''", "0"),
            col("device_info", "mark_deleted", "BOOLEAN", "0", "false", "0"),
            col("event", "id", "TEXT", "0", "NULL", "0"),
            col("event", "origin", "INTEGER", "0", "NULL", "0"),
            col("event", "device_info_id", "INTEGER", "1", "NULL", "0"),
            col("reading", "event_id", "TEXT", "0", "NULL", "0"),
            col("reading", "device_info_id", "INTEGER", "1", "NULL", "0"),
            col("reading", "origin", "INTEGER", "0", "NULL", "0"),
            col("reading", "value", "TEXT", "0", "NULL", "0"),
            col("reading", "binaryvalue", "BLOB", "0", "NULL", "0"),
            col("reading", "objectvalue", "TEXT", "0", "NULL", "0"),
            col("reading", "numeric_value", "TEXT", "0", "NULL", "0"),
        ]
    );
    let indexes = strings(
        conn,
        "SELECT m.tbl_name, m.name, group_concat(i.name || CASE i.\"desc\" WHEN 1 THEN ' DESC' \
         ELSE '' END, ', ') FROM sqlite_master AS m, pragma_index_xinfo(m.name) AS i \
         WHERE m.type = 'index' AND i.key = 1 GROUP BY m.name ORDER BY m.name",
    );
    let index = |t: &str, name: &str, on: &str| [t, name, on].map(String::from).to_vec();
    assert_eq!(
        indexes,
        vec![
            index(
                "device_info",
                "idx_device_info_device_resource",
                "mark_deleted, devicename, resourcename"
            ),
            index("event", "idx_event_device_info_id", "device_info_id"),
            index("event", "idx_event_origin", "origin"),
            index("reading", "idx_reading_device_info_id", "device_info_id"),
            index(
                "reading",
                "idx_reading_device_info_origin",
                "device_info_id, origin DESC"
            ),
            index("reading", "idx_reading_event_id", "event_id"),
            index("reading", "idx_reading_origin", "origin"),
        ]
    );
}

#[test]
fn the_2018_dataset_makes_two_event_rows_and_ten_reading_rows_of_device_info() {
    let database = Sqlite4Database::memory().or_panic();
    let mut store = database.open_store().or_panic();
    suite::add_2018_dataset(&mut store);
    let query = suite::DEVICE_INFO_COLUMNS.replace("{schema}", "");
    assert_eq!(
        strings(store.connection(), &query),
        suite::device_infos_of_2018_dataset()
    );
    let counts = strings(
        store.connection(),
        "SELECT (SELECT count(*) FROM event), (SELECT count(*) FROM reading), \
         (SELECT count(DISTINCT device_info_id) FROM reading)",
    );
    assert_eq!(counts, vec![vec!["4", "20", "10"]]);
}

#[test]
fn numeric_values_are_stored_as_text_as_sent() {
    let database = Sqlite4Database::memory().or_panic();
    let mut store = database.open_store().or_panic();
    let values = ["1.50", "1.5e+01", "18446744073709551615", "-0", "42"];
    let readings = values
        .iter()
        .map(|v| typed("Float64", reading("d", "r", 1, simple(v))))
        .collect();
    let e = event("d", 1, readings);
    store.add_event(&e).or_panic();
    let stored = strings(
        store.connection(),
        "SELECT typeof(numeric_value), numeric_value, typeof(value) FROM reading ORDER BY rowid",
    );
    let expected: Vec<Vec<String>> = values
        .iter()
        .map(|v| vec!["text".to_string(), v.to_string(), "null".to_string()])
        .collect();
    assert_eq!(stored, expected);
    let got = store.event_by_id(&e.id).or_panic();
    let got: Vec<ReadingValue> = got.readings.into_iter().map(|r| r.value).collect();
    let sent: Vec<ReadingValue> = e.readings.into_iter().map(|r| r.value).collect();
    assert_eq!(got, sent);
}

#[test]
fn stores_share_the_cache_and_a_reopened_file_fills_it_from_the_table() {
    let dir = tempfile::tempdir().or_panic();
    let path = dir.path().join("edgex4.db");
    let reading = |origin: i64, v: &str| reading("d", "r", origin, simple(v));
    {
        let database = Sqlite4Database::file(&path).or_panic();
        let (mut a, mut b) = (
            database.open_store().or_panic(),
            database.open_store().or_panic(),
        );
        a.add_event(&event("d", 1, vec![reading(1, "1")]))
            .or_panic();
        // `b` deletes the device; `a` must not reuse the deleted rows' ids.
        b.delete_events(Doomed::Device("d")).or_panic();
        a.add_event(&event("d", 2, vec![reading(2, "2")]))
            .or_panic();
        assert_eq!(b.event_count(Filter::device("d")).ok(), Some(1));
        assert_eq!(b.reading_count(Filter::resource("r")).ok(), Some(1));
    }
    // A new database value on the same file starts with the table's rows in its cache, and
    // adding the same device makes no new rows.
    let database = Sqlite4Database::file(&path).or_panic();
    let mut store = database.open_store().or_panic();
    assert_eq!(store.cached_device_infos(), 2);
    store
        .add_event(&event("d", 3, vec![reading(3, "3")]))
        .or_panic();
    let n = strings(store.connection(), "SELECT count(*) FROM device_info");
    assert_eq!(n, vec![vec!["2"]]);
    assert_eq!(store.event_count(Filter::all()).ok(), Some(2));
}
