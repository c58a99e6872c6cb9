//! YCSB's bindings as stores: one suite ([`suite`]) of exact results on a fresh table, run
//! over every binding a backend has (PostgreSQL's `jdbc` and `postgrenosql`, SQLite's `jdbc`,
//! MongoDB's `mongodb`), each on a target started as a run starts it, in the 2018 layout;
//! and what a target answers for a binding it lacks.

use edgebench::store::backend::no_ycsb;
use edgebench::store::ycsb::{
    java_string_hash, Binding, Record, Records, Setup, YcsbError, YcsbOpener, YcsbStore,
};
use edgebench::target::{parse_targets, Layout, Target};

use super::common;

/// Records the suite loads.
const RECORDS: usize = 100;
/// Fields per record (YCSB's default `fieldcount`).
const FIELDS: usize = 10;

/// The order a binding scans in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanOrder {
    /// By key (the SQL and MongoDB bindings).
    Key,
    /// By Java's `String.hashCode()` of the key, ties by key (YCSB's Redis `_indices`).
    #[allow(dead_code)]
    JavaHash,
}

/// YCSB's setup of `binding`: `usertable`, `field0` … `field9`.
fn setup(binding: Binding) -> Setup {
    Setup {
        binding,
        table: "usertable".to_string(),
        fields: (0..FIELDS).map(|f| format!("field{f}")).collect(),
    }
}

/// Key `i`, zero-padded so key order is number order.
fn key(i: usize) -> String {
    format!("user{i:03}")
}

/// The value of field `f` of record `i` in version `v`: printable ASCII, with the characters
/// SQL and JSON quote.
fn value(i: usize, f: usize, v: usize) -> Vec<u8> {
    format!("v{v} r{i} f{f} '\"\\ ~{}", "x".repeat(i % 7)).into_bytes()
}

/// Every field of record `i` in version 0.
fn values(i: usize) -> Vec<(String, Vec<u8>)> {
    (0..FIELDS)
        .map(|f| (format!("field{f}"), value(i, f, 0)))
        .collect()
}

/// What a read of `fields` of record `i` gives, sorted by name (version 0).
fn expected(i: usize, fields: &[usize]) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = fields
        .iter()
        .map(|&f| (format!("field{f}"), value(i, f, 0)))
        .collect();
    all.sort();
    all
}

fn read(store: &mut dyn YcsbStore, key: &str, fields: Option<&[String]>) -> Record {
    let mut out = Record::default();
    store
        .read(key, fields, &mut out)
        .unwrap_or_else(|e| panic!("read {key}: {e}"));
    out
}

fn scan(
    store: &mut dyn YcsbStore,
    start: &str,
    count: usize,
    fields: Option<&[String]>,
) -> Vec<(String, Record)> {
    let mut out = Records::default();
    store
        .scan(start, count, fields, &mut out)
        .unwrap_or_else(|e| panic!("scan {start} {count}: {e}"));
    out.iter()
        .map(|(k, r)| (String::from_utf8_lossy(k).into_owned(), r.clone()))
        .collect()
}

/// The keys a scan from `start` of `count` gives over the stored `keys`, in `order`.
fn scanned(keys: &[String], start: &str, count: usize, order: ScanOrder) -> Vec<String> {
    let mut from: Vec<String> = match order {
        ScanOrder::Key => keys
            .iter()
            .filter(|k| k.as_str() >= start)
            .cloned()
            .collect(),
        ScanOrder::JavaHash => keys
            .iter()
            .filter(|k| java_string_hash(k) >= java_string_hash(start))
            .cloned()
            .collect(),
    };
    match order {
        ScanOrder::Key => from.sort(),
        ScanOrder::JavaHash => from.sort_by_key(|k| (java_string_hash(k), k.clone())),
    }
    from.truncate(count);
    from
}

/// The suite over stores of one binding, which scans in key order.
pub(crate) fn suite(opener: YcsbOpener) {
    suite_ordered(opener, ScanOrder::Key);
}

/// The suite: exact results of every call on a fresh table of `opener`'s binding, which scans
/// in `order`.
pub(crate) fn suite_ordered(opener: YcsbOpener, order: ScanOrder) {
    let mut a = opener().unwrap_or_else(|e| panic!("open: {e}"));
    let mut b = opener().unwrap_or_else(|e| panic!("open a second store: {e}"));
    let (a, b) = (&mut *a, &mut *b);
    a.clear().unwrap();
    assert_eq!(a.count().unwrap(), 0, "a fresh table is empty");

    // Load.
    for i in 0..RECORDS {
        a.insert(&key(i), &values(i))
            .unwrap_or_else(|e| panic!("insert {}: {e}", key(i)));
    }
    assert_eq!(a.count().unwrap(), RECORDS as u64);
    let mut keys: Vec<String> = (0..RECORDS).map(key).collect();

    // Reads: every field, some fields, a missing record.
    let all: Vec<usize> = (0..FIELDS).collect();
    assert_eq!(read(a, &key(7), None).to_sorted(), expected(7, &all));
    assert_eq!(read(a, &key(99), None).to_sorted(), expected(99, &all));
    let some = ["field3".to_string(), "field1".to_string()];
    let got = read(a, &key(42), Some(&some));
    assert_eq!(got.len(), 2, "only the asked fields: {got:?}");
    assert_eq!(got.to_sorted(), expected(42, &[1, 3]));
    let mut out = Record::default();
    out.push(b"stale", b"left from before");
    assert_eq!(
        a.read("user999", None, &mut out),
        Err(YcsbError::NotFound("user999".to_string()))
    );
    assert_eq!(
        a.read("user999", Some(&some), &mut out),
        Err(YcsbError::NotFound("user999".to_string()))
    );

    // An update of one field leaves the others.
    a.update(&key(7), &[("field4".to_string(), b"updated 4".to_vec())])
        .unwrap();
    let mut want = expected(7, &all);
    want[4].1 = b"updated 4".to_vec();
    assert_eq!(read(a, &key(7), None).to_sorted(), want);
    // ... and the other store sees it.
    assert_eq!(read(b, &key(7), None).to_sorted(), want);

    // Scans: from a stored key, from a key between two, with some fields, at the end.
    let start = key(10);
    let got = scan(a, &start, 5, None);
    let want_keys = scanned(&keys, &start, 5, order);
    assert_eq!(
        got.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        want_keys
    );
    for (k, record) in &got {
        let i: usize = k[4..].parse().unwrap();
        assert_eq!(record.to_sorted(), expected(i, &all), "record {k}");
    }
    let between = format!("{}5", key(20)); // after user020, before user021
    let got = scan(a, &between, 3, Some(&some[1..]));
    assert_eq!(
        got.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        scanned(&keys, &between, 3, order)
    );
    for (k, record) in &got {
        let i: usize = k[4..].parse().unwrap();
        assert_eq!(record.to_sorted(), expected(i, &[1]), "record {k}");
    }
    // Every key in scan order (Java hashes may be negative: no start key precedes them all).
    let mut ordered = keys.clone();
    match order {
        ScanOrder::Key => ordered.sort(),
        ScanOrder::JavaHash => ordered.sort_by_key(|k| (java_string_hash(k), k.clone())),
    }
    let near_end = ordered[RECORDS - 3].clone();
    let got = scan(a, &near_end, 10, None);
    assert_eq!(
        got.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        ordered[RECORDS - 3..].to_vec(),
        "fewer than asked at the end"
    );
    assert!(scan(a, &start, 0, None).is_empty(), "a scan of 0 records");

    // Delete.
    a.delete(&key(50)).unwrap();
    keys.retain(|k| *k != key(50));
    assert_eq!(
        b.read(&key(50), None, &mut out),
        Err(YcsbError::NotFound(key(50)))
    );
    assert_eq!(a.count().unwrap(), RECORDS as u64 - 1);
    let got = scan(a, &key(49), 2, None);
    assert_eq!(
        got.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        scanned(&keys, &key(49), 2, order),
        "a scan skips the deleted record"
    );

    // The other store's insert is seen by the first.
    let new = "user100";
    b.insert(new, &values(100)).unwrap();
    assert_eq!(read(a, new, None).to_sorted(), expected(100, &all));
    assert_eq!(a.count().unwrap(), RECORDS as u64);

    // Clear.
    b.clear().unwrap();
    assert_eq!(a.count().unwrap(), 0);
    assert_eq!(
        a.read(&key(1), None, &mut out),
        Err(YcsbError::NotFound(key(1)))
    );
    assert!(scan(a, "", 10, None).is_empty());
}

/// The target `item` names, started as a run starts it (the 2018 layout).
fn target(item: &str) -> Target {
    common::start(item)
}

fn opener(target: &Target, binding: Binding) -> YcsbOpener {
    target
        .ycsb_opener(&setup(binding))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An update or delete of a record that is not there is NotFound (YCSB's MongoDB binding's
/// `NOT_FOUND`).
fn missing_records_are_not_found(opener: &YcsbOpener) {
    let mut store = opener().unwrap();
    let change = [("field0".to_string(), b"x".to_vec())];
    assert_eq!(
        store.update("nobody", &change),
        Err(YcsbError::NotFound("nobody".to_string()))
    );
    assert_eq!(
        store.delete("nobody"),
        Err(YcsbError::NotFound("nobody".to_string()))
    );
}

#[test]
fn postgres_jdbc() {
    let target = target("pg-uds");
    let opener = opener(&target, Binding::Jdbc);
    suite(opener.clone());
    missing_records_are_not_found(&opener);
}

#[test]
fn postgres_postgrenosql() {
    let target = target("pg-tcp");
    let opener = opener(&target, Binding::PostgreNoSql);
    suite(opener.clone());
    missing_records_are_not_found(&opener);
}

#[test]
fn sqlite_jdbc_file() {
    let target = target("sqlite");
    let opener = opener(&target, Binding::Jdbc);
    suite(opener.clone());
    missing_records_are_not_found(&opener);
}

#[test]
fn sqlite_jdbc_memory() {
    let target = target("sqlite::memory:");
    suite(opener(&target, Binding::Jdbc));
}

#[test]
fn mongodb() {
    let target = target(&common::mongo::server_url());
    let opener = opener(&target, Binding::MongoDb);
    suite(opener.clone());
    missing_records_are_not_found(&opener);
}

#[test]
fn beside_edgex4s_layout_too() {
    let mongo = common::mongo::server_url();
    for item in ["pg-uds", "sqlite", mongo.as_str()] {
        let mut spec = parse_targets(&[item.to_string()]).unwrap_or_else(|e| panic!("{e}"));
        spec[0].layout = Layout::EdgeX4;
        let target = Target::start(&spec[0]).unwrap_or_else(|e| panic!("{item}: {e}"));
        let binding = spec[0].kind.ycsb_bindings()[0];
        suite(opener(&target, binding));
    }
}

#[test]
fn a_second_setup_keeps_the_table_and_another_bindings_is_refused() {
    let target = target("pg-uds");
    let first = opener(&target, Binding::Jdbc);
    first().unwrap().insert(&key(1), &values(1)).unwrap();
    // A reload sets up again: the table stays, with its records.
    let again = opener(&target, Binding::Jdbc);
    assert_eq!(again().unwrap().count().unwrap(), 1);
    // PostgreNoSQL's usertable is not JDBC's: one line, with the server's words.
    let e = target
        .ycsb_opener(&setup(Binding::PostgreNoSql))
        .err()
        .expect("postgrenosql on a jdbc usertable")
        .to_string();
    assert!(
        e.contains("laid out for another binding") && e.contains("ycsb_value"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn each_backend_lists_its_bindings() {
    let bindings = |item: &str| {
        let specs = parse_targets(&[item.to_string()]).unwrap_or_else(|e| panic!("{e}"));
        specs[0].kind.ycsb_bindings().to_vec()
    };
    assert_eq!(bindings("pg-tcp"), [Binding::Jdbc, Binding::PostgreNoSql]);
    assert_eq!(
        bindings("postgres://u@h:5432/db"),
        [Binding::Jdbc, Binding::PostgreNoSql]
    );
    assert_eq!(bindings("sqlite::memory:"), [Binding::Jdbc]);
    assert_eq!(bindings("mongodb://127.0.0.1:1"), [Binding::MongoDb]);
}

#[test]
fn a_binding_the_target_lacks_is_one_line_naming_it() {
    let mongo = target(&common::mongo::server_url());
    let sqlite = target("sqlite::memory:");
    for (target, binding) in [
        (&mongo, Binding::Jdbc),
        (&sqlite, Binding::PostgreNoSql),
        (&sqlite, Binding::MongoDb),
    ] {
        let e = target
            .ycsb_opener(&setup(binding))
            .err()
            .unwrap_or_else(|| panic!("{binding:?} on {}", target.name()))
            .to_string();
        assert_eq!(
            e,
            format!("target {}: {}", target.name(), no_ycsb(binding)),
            "{binding:?}"
        );
    }
}

#[test]
fn names_sql_cannot_take_unquoted_are_refused_at_setup() {
    let target = target("sqlite::memory:");
    let mut bad = setup(Binding::Jdbc);
    bad.fields[3] = "field 3".to_string();
    let e = target
        .ycsb_opener(&bad)
        .err()
        .expect("a field with a space")
        .to_string();
    assert!(
        e.contains("\"field 3\" is not a plain SQL identifier"),
        "{e}"
    );
}

/// YCSB's Redis binding on every Redis-protocol way in: the same suite, its scans in Java
/// hash order (`_indices` is scored by `String.hashCode()`).
#[test]
fn redis_binding_on_the_engine_and_redis_server() {
    common::require_redis_server();
    for item in ["embedded", "embedded-direct", "embedded-uds", "redis-uds"] {
        let t = target(item);
        suite_ordered(opener(&t, Binding::Redis), ScanOrder::JavaHash);
    }
}

#[test]
fn redis_binding_on_a_cluster() {
    let cluster = common::cluster::SharedCluster::take();
    let t = target(&cluster.item());
    suite_ordered(opener(&t, Binding::Redis), ScanOrder::JavaHash);
}
