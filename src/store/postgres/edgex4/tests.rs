//! What only the PostgreSQL port has, against the machine's server, each on a private
//! database (its answers are the conformance suite's, `tests/it/edgex_conformance.rs`): a
//! repeated event id stored twice ([`super::suite`]), the schema exactly as EdgeX 4.0.2 leaves
//! it, the device_info rows of the 2018 dataset, the shared device_info cache, and the binary
//! `numeric` codec against the server's own parser.

use postgres::Client;

use super::suite;
use super::wire::Numeric;
use super::*;
use crate::edgex::testing::{event, reading, simple};
use crate::store::edgex::{Doomed, EventStore, Filter};
use crate::store::postgres::{config_from_env, PgTransport};

/// A private database on the server the PG* variables name (the socket by default).
fn private_database() -> Pg4Database {
    Pg4Database::create(&config_from_env(PgTransport::Uds)).unwrap_or_else(|e| {
        panic!("{e}; this test needs a PostgreSQL server and fails rather than skip without one")
    })
}

fn store(database: &Pg4Database) -> Pg4Store {
    database.open_store().unwrap_or_else(|e| panic!("{e}"))
}

fn client(database: &Pg4Database) -> Client {
    database
        .config()
        .connect()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn strings(client: &mut Client, sql: &str) -> Vec<Vec<String>> {
    client
        .query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .map(|row| {
            (0..row.len())
                .map(|i| {
                    row.get::<_, Option<String>>(i)
                        .unwrap_or_else(|| "NULL".into())
                })
                .collect()
        })
        .collect()
}

#[test]
fn checks_no_event_ids_and_keeps_no_reading_ids() {
    let database = private_database();
    let mut store = store(&database);
    suite::has_edgex4_behaviour(&store);
    suite::duplicate_ids_are_stored_twice(&mut store);
}

#[test]
fn schema_is_edgex_402_exactly() {
    let database = private_database();
    let mut c = client(&database);
    let columns = strings(
        &mut c,
        "SELECT table_name::text, column_name::text, data_type::text, \
         is_nullable::text, column_default::text FROM information_schema.columns \
         WHERE table_schema = 'core_data' ORDER BY table_name, ordinal_position",
    );
    let row = |t: &str, c: &str, ty: &str, null: &str, default: &str| {
        [t, c, ty, null, default].map(String::from).to_vec()
    };
    let serial = |t: &str, c: &str| format!("nextval('core_data.{t}_{c}_seq'::regclass)");
    let expected = vec![
        row(
            "device_info",
            "id",
            "integer",
            "NO",
            &serial("device_info", "id"),
        ),
        row("device_info", "devicename", "text", "YES", "NULL"),
        row("device_info", "profilename", "text", "YES", "NULL"),
        row("device_info", "sourcename", "text", "YES", "NULL"),
        row("device_info", "tags", "jsonb", "YES", "NULL"),
        row("device_info", "resourcename", "text", "YES", "NULL"),
        row("device_info", "valuetype", "text", "YES", "''::text"),
        row("device_info", "units", "text", "YES", "''::text"),
        row("device_info", "mediatype", "text", "YES", "''::text"),
        row("device_info", "mark_deleted", "boolean", "YES", "false"),
        row("event", "id", "uuid", "YES", "NULL"),
        row("event", "origin", "bigint", "YES", "NULL"),
        row(
            "event",
            "device_info_id",
            "integer",
            "NO",
            &serial("event", "device_info_id"),
        ),
        row("reading", "event_id", "uuid", "YES", "NULL"),
        row(
            "reading",
            "device_info_id",
            "integer",
            "NO",
            &serial("reading", "device_info_id"),
        ),
        row("reading", "origin", "bigint", "YES", "NULL"),
        row("reading", "value", "text", "YES", "NULL"),
        row("reading", "binaryvalue", "bytea", "YES", "NULL"),
        row("reading", "objectvalue", "jsonb", "YES", "NULL"),
        row("reading", "numeric_value", "numeric", "YES", "NULL"),
    ];
    assert_eq!(columns, expected);
    let indexes = strings(
        &mut c,
        "SELECT tablename::text, indexname::text, \
         regexp_replace(indexdef, '^.* USING btree ', '') FROM pg_indexes \
         WHERE schemaname = 'core_data' ORDER BY indexname",
    );
    let index = |t: &str, name: &str, on: &str| [t, name, on].map(String::from).to_vec();
    assert_eq!(
        indexes,
        vec![
            index("device_info", "device_info_pkey", "(id)"),
            index(
                "device_info",
                "idx_device_info_device_resource",
                "(mark_deleted, devicename, resourcename)"
            ),
            index("event", "idx_event_device_info_id", "(device_info_id)"),
            index("event", "idx_event_origin", "(origin)"),
            index("reading", "idx_reading_device_info_id", "(device_info_id)"),
            index(
                "reading",
                "idx_reading_device_info_origin",
                "(device_info_id, origin DESC)"
            ),
            index("reading", "idx_reading_event_id", "(event_id)"),
            index("reading", "idx_reading_origin", "(origin)"),
        ]
    );
    // The only constraint is device_info's key: no key, unique or foreign key on event or
    // reading.
    let constraints = strings(
        &mut c,
        "SELECT conrelid::regclass::text, contype::text FROM pg_constraint \
         WHERE connamespace = 'core_data'::regnamespace ORDER BY 1",
    );
    assert_eq!(constraints, vec![vec!["core_data.device_info", "p"]]);
}

#[test]
fn the_2018_dataset_makes_two_event_rows_and_ten_reading_rows_of_device_info() {
    let database = private_database();
    suite::add_2018_dataset(&mut store(&database));
    let mut c = client(&database);
    let query = suite::DEVICE_INFO_COLUMNS
        .replace("{schema}", "core_data.")
        .replace("tags,", "tags::text,");
    assert_eq!(
        strings(&mut c, &query),
        suite::device_infos_of_2018_dataset()
    );
    let counts = strings(
        &mut c,
        "SELECT (SELECT count(*) FROM core_data.event)::text, \
         (SELECT count(*) FROM core_data.reading)::text, \
         (SELECT count(DISTINCT device_info_id) FROM core_data.reading)::text",
    );
    assert_eq!(counts, vec![vec!["4", "20", "10"]]);
}

#[test]
fn stores_of_one_database_share_the_device_info_cache() {
    let database = private_database();
    let (mut a, mut b) = (store(&database), store(&database));
    let e = event("d", 1, vec![reading("d", "r", 1, simple("1"))]);
    a.add_event(&e).unwrap_or_else(|e| panic!("{e}"));
    // `b` deletes the device: its rows go, and `a` must not reuse their ids.
    b.delete_events(Doomed::Device("d"))
        .unwrap_or_else(|e| panic!("{e}"));
    let again = event("d", 2, vec![reading("d", "r", 2, simple("2"))]);
    a.add_event(&again).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.event_count(Filter::device("d")).ok(), Some(1));
    assert_eq!(b.reading_count(Filter::resource("r")).ok(), Some(1));
    // A store of its own fills its cache from the table (EdgeX's startup fill): adding the
    // same device again makes no new device_info rows.
    let own = Pg4Store::new(client(&database)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(own.cached_device_infos(), 2);
    let mut own = own;
    let third = event("d", 3, vec![reading("d", "r", 3, simple("3"))]);
    own.add_event(&third).unwrap_or_else(|e| panic!("{e}"));
    let mut c = client(&database);
    let n = strings(&mut c, "SELECT count(*)::text FROM core_data.device_info");
    assert_eq!(n, vec![vec!["2"]]);
}

#[test]
fn numeric_values_encode_and_decode_as_the_server_does() {
    let database = private_database();
    let mut c = client(&database);
    let texts = [
        "0",
        "42",
        "-42",
        "1.5",
        "1.50",
        "-0.50",
        "1.5e+01",
        "2.5E-3",
        "0.00012",
        "123456789.000000001",
        "18446744073709551615",
        "-9223372036854775808",
        "3.4028234663852886e+38",
        "4.9e-324",
        "1e4",
        "10000",
        "99999.9999",
        "NaN",
        "Infinity",
        "-Infinity",
    ];
    for text in texts {
        // What the server makes of the text, as text and in binary (decoded by us).
        let row = c
            .query_one(
                "SELECT $1::text::numeric::text, $1::text::numeric",
                &[&text],
            )
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let server: String = row.get(0);
        let decoded: Numeric = row.get(1);
        assert_eq!(decoded.0, server, "decoding {text}");
        // What the server makes of our binary encoding.
        let row = c
            .query_one("SELECT $1::numeric::text", &[&Numeric(text)])
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(row.get::<_, String>(0), server, "encoding {text}");
    }
}

#[test]
fn a_value_that_is_not_a_number_fails_naming_the_event() {
    let database = private_database();
    let mut store = store(&database);
    let e = event("d", 1, vec![reading("d", "r", 1, simple("forty"))]);
    let message = store
        .add_event(&e)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains(&format!("copy readings of event {}", e.id))
            && message.contains("\"forty\" is not a decimal number"),
        "{message}"
    );
    // The transaction rolled back: no event without its readings.
    assert_eq!(store.event_count(Filter::all()).ok(), Some(0));
}

/// A batch is one transaction: when the COPY of its readings fails, the event rows its
/// `INSERT` already wrote go with it, and the connection takes the next batch.
#[test]
fn a_batch_whose_copy_fails_leaves_no_row() {
    let database = private_database();
    let mut store = store(&database);
    let good = event("d", 1, vec![reading("d", "r", 1, simple("1"))]);
    let bad = event(
        "d",
        2,
        vec![
            reading("d", "r", 2, simple("2")),
            reading("d", "r", 2, simple("forty")),
        ],
    );
    let message = store
        .add_events(&[good.clone(), bad])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains("copy readings of 2 events")
            && message.contains("\"forty\" is not a decimal number"),
        "{message}"
    );
    let mut c = client(&database);
    for table in ["event", "reading"] {
        let n = strings(
            &mut c,
            &format!("SELECT count(*)::text FROM core_data.{table}"),
        );
        assert_eq!(n, vec![vec!["0"]], "{table}");
    }
    store
        .add_events(std::slice::from_ref(&good))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.event_count(Filter::all()).ok(), Some(1));
    assert_eq!(store.reading_count(Filter::all()).ok(), Some(1));
}
