//! Key and expiry commands, differentially against a real redis-server (replies compared
//! exactly, errors included; hash-ordered replies compared as sets), plus SCAN's guarantee
//! under concurrent change, exact TTLs on a manual clock, and the typed API.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::support::diff::Diff;
use edgebench_engine::engine::cmd::keys::{glob_match, ExpireIf, Ttl};
use edgebench_engine::engine::keyspace::{BytesSet, FieldMap};
use edgebench_engine::engine::{Client, Engine, Entry, Reply, Value};
use proptest::prelude::*;

/// A value of `kind` at `key` on both sides (through the typed API when the engine's own
/// command for it is not there), for TYPE and WRONGTYPE cases.
fn make(d: &mut Diff, kind: &str, key: &str) {
    let cmd: &[&str] = match kind {
        "list" => &["RPUSH", key, "x"],
        "hash" => &["HSET", key, "f", "v"],
        "set" => &["SADD", key, "m"],
        "zset" => &["ZADD", key, "1", "m"],
        "stream" => &["XADD", key, "1-1", "f", "v"],
        _ => &["SET", key, "v"],
    };
    let _ = d.both(cmd);
    let now = d.engine.now_ms();
    let mut ks = d.engine.db(d.client.db).lock([key.as_bytes()], now);
    if ks.get(key.as_bytes()).map(|e| e.value.type_name()) == Some(kind) {
        return;
    }
    let value = match kind {
        "list" => Value::List(Box::new(VecDeque::from([b"x".to_vec()]))),
        "hash" => Value::Hash(Box::new(FieldMap::from_iter([(
            b"f"[..].into(),
            b"v".to_vec(),
        )]))),
        "set" => Value::Set(Box::new(BytesSet::from_iter([b"m"[..].into()]))),
        "zset" => {
            let mut z = edgebench_engine::engine::types::ZSet::default();
            z.insert(b"m", 1.0);
            Value::ZSet(Box::new(z))
        }
        "stream" => {
            let mut s = edgebench_engine::engine::types::Stream::default();
            let id = edgebench_engine::engine::types::stream::StreamId { ms: 1, seq: 1 };
            s.entries.insert(id, vec![(b"f".to_vec(), b"v".to_vec())]);
            s.last_id = id;
            Value::Stream(Box::new(s))
        }
        _ => Value::Str(b"v".to_vec()),
    };
    ks.insert(key.as_bytes(), Entry::new(value));
}

/// SELECT on both sides (sets the engine client's db directly when the engine has no
/// SELECT of its own yet).
fn select(d: &mut Diff, db: usize) {
    let _ = d.both(&["SELECT", &db.to_string()]);
    d.client.db = db;
}

/// The bulk strings of a normalised reply, in order (keys here never contain `')`).
fn bulk_items(reply: &str) -> Vec<String> {
    reply
        .split("bulk-string('")
        .skip(1)
        .map(|s| s.split("')").next().unwrap_or("").to_string())
        .collect()
}

/// Compares a reply whose array order is a hash order.
fn check_unordered(d: &mut Diff, args: &[&str]) {
    let (real, ours) = d.both(args);
    let (mut r, mut o) = (bulk_items(&real), bulk_items(&ours));
    r.sort();
    o.sort();
    assert_eq!(o, r, "{args:?}: engine {ours} vs redis-server {real}");
    if r.is_empty() {
        assert_eq!(ours, real, "{args:?}");
    }
}

fn unquote(s: &str) -> String {
    s.trim_matches('"').to_string()
}

/// Runs a full SCAN iteration (with `options`) on each side with its own cursors and
/// compares the union of the keys returned.
fn check_scan_union(d: &mut Diff, options: &[&str]) {
    let mut real = BTreeSet::new();
    let mut cursor = "0".to_string();
    for _ in 0..10_000 {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend_from_slice(options);
        let (reply, _) = d.both(&args);
        let items = bulk_items(&reply);
        assert!(!items.is_empty(), "{args:?}: {reply}");
        real.extend(items[1..].iter().map(|s| unquote(s)));
        cursor = unquote(&items[0]);
        if cursor == "0" {
            break;
        }
    }
    let mut ours = BTreeSet::new();
    let mut cursor = "0".to_string();
    for _ in 0..10_000 {
        let mut args: Vec<&[u8]> = vec![b"SCAN", cursor.as_bytes()];
        args.extend(options.iter().map(|o| o.as_bytes()));
        let reply = d.engine.execute(&mut d.client, &args);
        let Reply::Array(parts) = reply else {
            panic!("{options:?}: {reply:?}")
        };
        let [Reply::Bulk(next), Reply::Array(keys)] = &parts[..] else {
            panic!("{options:?}: {parts:?}")
        };
        for k in keys {
            let Reply::Bulk(k) = k else { panic!("{k:?}") };
            ours.insert(String::from_utf8_lossy(k).into_owned());
        }
        cursor = String::from_utf8_lossy(next).into_owned();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(ours, real, "SCAN {options:?}");
}

#[test]
fn del_unlink_exists_type() {
    let mut d = Diff::new();
    for kind in ["list", "hash", "set", "zset", "stream"] {
        make(&mut d, kind, kind);
    }
    d.check(&[
        &["MSET", "a", "1", "b", "2", "c", "3"],
        &["EXISTS", "a"],
        &["EXISTS", "a", "a", "b", "missing"],
        &["EXISTS", "list", "hash", "set", "zset", "stream"],
        &["TYPE", "a"],
        &["TYPE", "list"],
        &["TYPE", "hash"],
        &["TYPE", "set"],
        &["TYPE", "zset"],
        &["TYPE", "stream"],
        &["TYPE", "missing"],
        &["DEL", "a", "a", "missing"],
        &["EXISTS", "a"],
        &["UNLINK", "b", "c", "list"],
        &["UNLINK", "b"],
        &["DEL", "hash", "set", "zset", "stream"],
        &["DBSIZE"],
        &["DEL"],
        &["UNLINK"],
        &["EXISTS"],
        &["TYPE"],
        &["TYPE", "a", "b"],
    ]);
}

#[test]
fn keys_with_glob_patterns() {
    // Random picks or hash order that agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[&[
        "MSET", "hello", "1", "hallo", "1", "hxllo", "1", "hllo", "1", "heeeello", "1", "h*llo",
        "1", "h?llo", "1", "a[b", "1", "x\\y", "1", "", "1", "-", "1", "]", "1", "user:1", "1",
        "user:2", "1", "user:10", "1",
    ]]);
    for pattern in [
        "*",
        "**",
        "",
        "h?llo",
        "h*llo",
        "h[ae]llo",
        "h[^e]llo",
        "h[a-b]llo",
        "h[b-a]llo",
        "h\\*llo",
        "h\\?llo",
        "a[[]b",
        "a\\[b",
        "x\\\\y",
        "x\\y",
        "[",
        "[a",
        "a[b",
        "[]]",
        "[\\]]",
        "[-]",
        "[a-]",
        "user:?",
        "user:*",
        "user:[0-9]",
        "user:[0-9]*",
        "*:1*",
        "*l*o",
        "nomatch*",
        "\\",
        "h\\",
    ] {
        check_unordered(&mut d, &["KEYS", pattern]);
    }
    d.check(&[&["KEYS"], &["KEYS", "a", "b"]]);
}

#[test]
fn scan_returns_every_key_with_each_option() {
    let mut d = Diff::new();
    let mut mset = vec!["MSET".to_string()];
    for i in 0..300 {
        mset.push(format!("key:{i}"));
        mset.push(i.to_string());
    }
    let mset: Vec<&str> = mset.iter().map(String::as_str).collect();
    d.check(&[&mset]);
    for i in 0..20 {
        make(&mut d, "list", &format!("list:{i}"));
        make(&mut d, "hash", &format!("hash:{i}"));
    }
    check_scan_union(&mut d, &[]);
    check_scan_union(&mut d, &["COUNT", "1"]);
    check_scan_union(&mut d, &["COUNT", "7"]);
    check_scan_union(&mut d, &["COUNT", "1000"]);
    check_scan_union(&mut d, &["MATCH", "key:1*"]);
    check_scan_union(&mut d, &["MATCH", "*", "COUNT", "3"]);
    check_scan_union(&mut d, &["MATCH", "nothing*"]);
    check_scan_union(&mut d, &["TYPE", "list"]);
    check_scan_union(&mut d, &["TYPE", "HASH", "COUNT", "5"]);
    check_scan_union(&mut d, &["TYPE", "string", "MATCH", "key:2?"]);
    check_scan_union(&mut d, &["TYPE", "nosuchtype"]);
    check_scan_union(&mut d, &["COUNT", "2", "COUNT", "50"]);
    d.check(&[
        &["SCAN"],
        &["SCAN", "abc"],
        &["SCAN", " 1"],
        &["SCAN", "18446744073709551616"],
        &["SCAN", "0", "COUNT"],
        &["SCAN", "0", "COUNT", "0"],
        &["SCAN", "0", "COUNT", "-1"],
        &["SCAN", "0", "COUNT", "abc"],
        &["SCAN", "0", "MATCH"],
        &["SCAN", "0", "TYPE"],
        &["SCAN", "0", "FOO", "bar"],
        &["SCAN", "abc", "COUNT", "0"],
        &["SCAN", "0", "COUNT", "0", "FOO"],
        &["SCAN", "0", "FOO", "COUNT", "0"],
    ]);
    // An empty database: one call, cursor 0, nothing.
    d.check(&[&["FLUSHDB"], &["SCAN", "0"], &["SCAN", "0", "COUNT", "1"]]);
}

#[test]
fn rename_and_renamenx() {
    let mut d = Diff::new();
    make(&mut d, "list", "l");
    d.check(&[
        &["RENAME", "missing", "x"],
        &["RENAMENX", "missing", "x"],
        &["RENAME", "missing", "missing"],
        &["SET", "a", "1"],
        &["RENAME", "a", "a"],
        &["RENAMENX", "a", "a"],
        &["RENAME", "a", "b"],
        &["EXISTS", "a"],
        &["GET", "b"],
        &["SET", "c", "3"],
        &["RENAMENX", "b", "c"],
        &["GET", "b"],
        &["RENAMENX", "b", "d"],
        &["GET", "d"],
        &["RENAME", "d", "c"],
        &["GET", "c"],
        &["RENAME", "l", "l2"],
        &["TYPE", "l2"],
        &["RENAME", "c", "l2"],
        &["TYPE", "l2"],
        &["SETEX", "t", "100", "v"],
        &["RENAME", "t", "t2"],
        &["TTL", "t2"],
        &["RENAME", "a"],
        &["RENAMENX", "a", "b", "c"],
    ]);
}

#[test]
fn expire_family_and_ttls() {
    let mut d = Diff::new();
    d.check(&[
        &["EXPIRE", "missing", "100"],
        &["TTL", "missing"],
        &["PTTL", "missing"],
        &["EXPIRETIME", "missing"],
        &["PEXPIRETIME", "missing"],
        &["PERSIST", "missing"],
        &["SET", "k", "v"],
        &["TTL", "k"],
        &["PTTL", "k"],
        &["EXPIRETIME", "k"],
        &["PEXPIRETIME", "k"],
        &["PERSIST", "k"],
        &["EXPIRE", "k", "100"],
        &["TTL", "k"],
        &["EXPIRE", "k", "100", "NX"],
        &["EXPIRE", "k", "200", "XX"],
        &["TTL", "k"],
        &["EXPIRE", "k", "100", "GT"],
        &["EXPIRE", "k", "300", "GT"],
        &["TTL", "k"],
        &["EXPIRE", "k", "400", "LT"],
        &["EXPIRE", "k", "150", "LT"],
        &["TTL", "k"],
        &["EXPIRE", "k", "500", "XX", "GT"],
        &["TTL", "k"],
        &["EXPIRE", "k", "100", "LT", "XX"],
        &["TTL", "k"],
        &["PERSIST", "k"],
        &["TTL", "k"],
        &["PERSIST", "k"],
        &["EXPIRE", "k", "100", "XX"],
        &["EXPIRE", "k", "100", "GT"],
        &["EXPIRE", "k", "100", "LT"],
        &["TTL", "k"],
        &["PERSIST", "k"],
        &["EXPIRE", "k", "100", "NX"],
        &["TTL", "k"],
        &["EXPIRE", "k", "100", "NX", "XX"],
        &["EXPIRE", "k", "100", "NX", "GT"],
        &["EXPIRE", "k", "100", "LT", "NX"],
        &["EXPIRE", "k", "100", "GT", "LT"],
        &["EXPIRE", "k", "100", "nx", "gt", "lt"],
        &["EXPIRE", "k", "100", "FOO"],
        &["EXPIRE", "k", "abc", "FOO"],
        &["EXPIRE", "k", "abc", "NX", "XX"],
        &["EXPIRE", "k", "abc"],
        &["EXPIRE", "k", "1.5"],
        &["EXPIRE", "k", "9223372036854775"],
        &["EXPIRE", "k", "9223372036854776"],
        &["EXPIRE", "k", "-9223372036854776"],
        &["PEXPIRE", "k", "9223372036854775807"],
        &["EXPIREAT", "k", "9223372036854776"],
        &["PEXPIREAT", "k", "9223372036854775807"],
        &["PEXPIRETIME", "k"],
        &["EXPIREAT", "k", "99999999999"],
        &["EXPIRETIME", "k"],
        &["PEXPIRETIME", "k"],
        &["PEXPIREAT", "k", "99999999999500"],
        &["EXPIRETIME", "k"],
        &["PEXPIREAT", "k", "99999999999499"],
        &["EXPIRETIME", "k"],
        &["PEXPIRE", "k", "100000"],
        &["TTL", "k"],
        &["PEXPIRE", "k", "200000", "GT"],
        &["PEXPIRE", "k", "100000", "GT"],
        &["EXPIRE", "k"],
        &["TTL"],
        &["PTTL", "k", "x"],
        &["PERSIST"],
    ]);
    // Times in the past delete the key, whatever the unit.
    d.check(&[
        &["SET", "a", "1"],
        &["EXPIRE", "a", "0"],
        &["EXISTS", "a"],
        &["SET", "a", "1"],
        &["EXPIRE", "a", "-10"],
        &["EXISTS", "a"],
        &["SET", "a", "1"],
        &["PEXPIRE", "a", "-1"],
        &["EXISTS", "a"],
        &["SET", "a", "1"],
        &["EXPIREAT", "a", "1"],
        &["GET", "a"],
        &["SET", "a", "1"],
        &["PEXPIREAT", "a", "0"],
        &["GET", "a"],
        &["SET", "a", "1"],
        &["EXPIREAT", "a", "-9223372036854775"],
        &["GET", "a"],
        &["SET", "a", "1"],
        &["EXPIRE", "a", "-1", "NX"],
        &["EXISTS", "a"],
        &["SET", "a", "1"],
        &["EXPIRE", "a", "-1", "GT"],
        &["EXISTS", "a"],
        &["EXPIRE", "a", "-1", "LT"],
        &["EXISTS", "a"],
        &["SET", "a", "1", "EX", "100"],
        &["EXPIRE", "a", "-1", "XX", "LT"],
        &["EXISTS", "a"],
    ]);
    // Every type takes a TTL.
    make(&mut d, "list", "l");
    d.check(&[&["EXPIRE", "l", "100"], &["TTL", "l"], &["PERSIST", "l"]]);
}

#[test]
fn dbsize_flushdb_flushall() {
    let mut d = Diff::new();
    d.check(&[
        &["DBSIZE"],
        &["MSET", "a", "1", "b", "2"],
        &["DBSIZE"],
        &["FLUSHDB", "FOO"],
        &["FLUSHDB", "ASYNC", "SYNC"],
        &["DBSIZE"],
        &["FLUSHDB"],
        &["DBSIZE"],
        &["MSET", "a", "1", "b", "2"],
        &["FLUSHDB", "async"],
        &["DBSIZE"],
        &["SET", "a", "1"],
        &["FLUSHDB", "SYNC"],
        &["DBSIZE"],
        &["DBSIZE", "x"],
    ]);
    d.check(&[&["SET", "zero", "1"]]);
    select(&mut d, 3);
    d.check(&[
        &["SET", "three", "3"],
        &["DBSIZE"],
        &["FLUSHALL", "FOO"],
        &["DBSIZE"],
    ]);
    d.check(&[&["FLUSHALL"], &["DBSIZE"]]);
    select(&mut d, 0);
    d.check(&[
        &["DBSIZE"],
        &["SET", "a", "1"],
        &["FLUSHALL", "ASYNC"],
        &["DBSIZE"],
        &["SET", "a", "1"],
        &["FLUSHALL", "sync"],
        &["DBSIZE"],
        &["FLUSHALL", "SYNC", "ASYNC"],
    ]);
}

#[test]
fn randomkey() {
    // Random picks or hash order that agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[
        &["RANDOMKEY"],
        &["SET", "only", "1"],
        &["RANDOMKEY"],
        &["RANDOMKEY", "x"],
    ]);
    d.check(&[&["MSET", "a", "1", "b", "2", "c", "3"]]);
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let (_, ours) = d.both(&["RANDOMKEY"]);
        let key = unquote(&bulk_items(&ours)[0]);
        assert!(["only", "a", "b", "c"].contains(&key.as_str()), "{key}");
        seen.insert(key);
    }
    assert_eq!(seen.len(), 4, "RANDOMKEY never picked some keys: {seen:?}");
}

#[test]
fn copy_within_and_across_databases() {
    let mut d = Diff::new();
    make(&mut d, "list", "l");
    make(&mut d, "zset", "z");
    d.check(&[
        &["COPY", "missing", "x"],
        &["SET", "a", "1"],
        &["COPY", "a", "a"],
        &["COPY", "a", "b"],
        &["GET", "b"],
        &["COPY", "a", "b"],
        &["SET", "a", "2"],
        &["COPY", "a", "b", "REPLACE"],
        &["GET", "b"],
        &["COPY", "l", "l2"],
        &["TYPE", "l2"],
        &["COPY", "z", "z2"],
        &["TYPE", "z2"],
        &["COPY", "a", "l2", "replace"],
        &["TYPE", "l2"],
        &["SETEX", "t", "100", "v"],
        &["COPY", "t", "t2"],
        &["TTL", "t2"],
        &["COPY", "a", "b", "FOO"],
        &["COPY", "a", "b", "DB"],
        &["COPY", "a", "b", "DB", "abc"],
        &["COPY", "a", "b", "DB", "16"],
        &["COPY", "a", "b", "DB", "-1"],
        &["COPY", "a", "b", "DB", "99999999999"],
        &["COPY", "a", "b", "DB", "1", "REPLACE", "DB"],
        &["COPY", "a", "a", "DB", "0"],
        &["COPY", "a", "a", "DB", "1"],
        &["COPY", "a", "c", "DB", "1"],
        &["COPY", "a", "c", "DB", "1"],
        &["COPY", "t", "t3", "DB", "2"],
        &["COPY", "missing", "x", "DB", "1"],
        &["COPY", "a", "b", "DB", "0"],
        &["COPY", "a", "b", "DB", "0", "REPLACE"],
        &["COPY", "a"],
    ]);
    select(&mut d, 1);
    d.check(&[
        &["GET", "a"],
        &["GET", "c"],
        &["COPY", "c", "a", "DB", "0", "REPLACE"],
    ]);
    select(&mut d, 2);
    d.check(&[&["TTL", "t3"], &["GET", "t3"]]);
    select(&mut d, 0);
    d.check(&[&["GET", "a"]]);
}

#[test]
fn move_between_databases() {
    let mut d = Diff::new();
    d.check(&[
        &["MOVE", "missing", "1"],
        &["SET", "a", "1"],
        &["MOVE", "a", "0"],
        &["MOVE", "a", "16"],
        &["MOVE", "a", "-1"],
        &["MOVE", "a", "abc"],
        &["MOVE", "a", "99999999999"],
        &["SETEX", "a", "100", "v"],
        &["MOVE", "a", "1"],
        &["EXISTS", "a"],
        &["SET", "a", "again"],
        &["MOVE", "a", "1"],
        &["GET", "a"],
        &["MOVE", "a"],
    ]);
    select(&mut d, 1);
    d.check(&[
        &["GET", "a"],
        &["TTL", "a"],
        &["MOVE", "a", "0"],
        &["GET", "a"],
    ]);
    select(&mut d, 0);
    d.check(&[&["GET", "a"]]);
}

#[test]
fn wrong_arity_and_multi() {
    let mut d = Diff::new();
    d.check(&[
        &["RENAME"],
        &["EXPIRE", "k"],
        &["PEXPIREAT", "k"],
        &["EXPIRETIME"],
        &["PEXPIRETIME", "a", "b"],
        &["RANDOMKEY", "x"],
        &["COPY"],
        &["MOVE", "k"],
        &["MULTI"],
        &["SET", "a", "1"],
        &["EXPIRE", "a", "100"],
        &["TTL", "a"],
        &["RENAME", "a", "b"],
        &["EXISTS", "a", "b"],
        &["KEYS", "*"],
        &["DBSIZE"],
        &["COPY", "b", "c", "DB", "1"],
        &["FLUSHALL"],
        &["EXEC"],
    ]);
}

fn run(engine: &Engine, client: &mut Client, args: &[&str]) -> Reply {
    let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    engine.execute(client, &argv)
}

#[test]
fn ttls_are_exact_and_active_expiry_removes_untouched_keys() {
    let clock = Arc::new(AtomicU64::new(5_000_000));
    let engine = Engine::with_clock(clock.clone());
    let mut c = engine.client();
    run(&engine, &mut c, &["SET", "k", "v"]);
    assert_eq!(
        run(&engine, &mut c, &["PEXPIRE", "k", "2500"]),
        Reply::Int(1)
    );
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(2500));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(3)); // 2.5 s rounds up
    assert_eq!(
        run(&engine, &mut c, &["PEXPIRETIME", "k"]),
        Reply::Int(5_002_500)
    );
    assert_eq!(
        run(&engine, &mut c, &["EXPIRETIME", "k"]),
        Reply::Int(5_003)
    );
    clock.store(5_001_001, Ordering::Relaxed);
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(1499));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(1));
    // GT/LT compare absolute times.
    assert_eq!(
        run(&engine, &mut c, &["PEXPIREAT", "k", "5002500", "GT"]),
        Reply::Int(0)
    );
    assert_eq!(
        run(&engine, &mut c, &["PEXPIREAT", "k", "5002501", "GT"]),
        Reply::Int(1)
    );
    assert_eq!(
        run(&engine, &mut c, &["PEXPIREAT", "k", "5002501", "LT"]),
        Reply::Int(0)
    );
    assert_eq!(
        run(&engine, &mut c, &["EXPIREAT", "k", "5002", "LT"]),
        Reply::Int(1)
    );
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(999));
    clock.store(5_002_000, Ordering::Relaxed);
    assert_eq!(run(&engine, &mut c, &["EXISTS", "k"]), Reply::Int(0));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(-2));

    // A key whose time is exactly now is gone (Redis: expired when when <= now).
    run(&engine, &mut c, &["SET", "now", "v"]);
    assert_eq!(
        run(&engine, &mut c, &["PEXPIREAT", "now", "5002000"]),
        Reply::Int(1)
    );
    assert_eq!(run(&engine, &mut c, &["DBSIZE"]), Reply::Int(0));

    // Active expiry, in several databases, of keys nobody reads; PERSIST saves one.
    for db in [0usize, 5, 15] {
        c.db = db;
        run(&engine, &mut c, &["MSET", "x", "1", "y", "2", "z", "3"]);
        run(&engine, &mut c, &["EXPIRE", "x", "10"]);
        run(&engine, &mut c, &["PEXPIRE", "y", "10000"]);
        run(&engine, &mut c, &["PERSIST", "y"]);
        run(&engine, &mut c, &["EXPIRE", "z", "20"]);
    }
    assert_eq!(engine.expire_cycle(), 0);
    clock.store(5_012_000, Ordering::Relaxed);
    assert_eq!(engine.expire_cycle(), 3);
    clock.store(5_022_000, Ordering::Relaxed);
    assert_eq!(engine.expire_cycle(), 3);
    for db in [0usize, 5, 15] {
        let mut ks = engine.db(db).lock_all(5_022_000);
        assert_eq!(ks.keys(), vec![Box::from(&b"y"[..])], "db {db}");
    }

    // RENAME, COPY and MOVE carry the TTL.
    c.db = 0;
    run(&engine, &mut c, &["SET", "r", "v", "PX", "7000"]);
    run(&engine, &mut c, &["RENAME", "r", "r2"]);
    assert_eq!(run(&engine, &mut c, &["PTTL", "r2"]), Reply::Int(7000));
    run(&engine, &mut c, &["COPY", "r2", "r3", "DB", "4"]);
    run(&engine, &mut c, &["MOVE", "r2", "9"]);
    c.db = 4;
    assert_eq!(run(&engine, &mut c, &["PTTL", "r3"]), Reply::Int(7000));
    c.db = 9;
    assert_eq!(run(&engine, &mut c, &["PTTL", "r2"]), Reply::Int(7000));
    clock.store(5_029_000, Ordering::Relaxed);
    assert_eq!(engine.expire_cycle(), 2);
}

#[test]
fn flushall_clears_every_database() {
    let engine = Engine::with_clock(Arc::new(AtomicU64::new(1)));
    let mut c = engine.client();
    for db in 0..16 {
        c.db = db;
        run(&engine, &mut c, &["SET", "k", "v"]);
    }
    c.db = 7;
    assert_eq!(run(&engine, &mut c, &["FLUSHALL"]), Reply::ok());
    for db in 0..16 {
        c.db = db;
        assert_eq!(run(&engine, &mut c, &["DBSIZE"]), Reply::Int(0), "db {db}");
    }
}

#[test]
fn typed_key_api() {
    let engine = Engine::with_clock(Arc::new(AtomicU64::new(1_000)));
    let db = engine.db(0);
    let keys: [&[u8]; 4] = [b"a", b"b", b"c", b"d"];
    let mut ks = db.lock(keys, 1_000);
    for k in keys {
        ks.set(k, b"v".to_vec());
    }
    assert_eq!(ks.exists_count(&[&b"a"[..], b"a", b"d"]), 3);
    assert_eq!(ks.type_of(b"a"), "string");
    assert!(ks.expire_at(b"a", 5_000, ExpireIf::default()));
    assert!(!ks.expire_at(
        b"a",
        6_000,
        ExpireIf {
            nx: true,
            ..ExpireIf::default()
        }
    ));
    assert!(ks.expire_at(
        b"a",
        6_000,
        ExpireIf {
            xx: true,
            gt: true,
            ..ExpireIf::default()
        }
    ));
    assert_eq!(ks.ttl(b"a"), Ttl::At(6_000));
    assert!(ks.persist(b"a"));
    assert_eq!(ks.ttl(b"a"), Ttl::Persistent);
    assert!(ks.expire_at(b"b", 999, ExpireIf::default()));
    assert_eq!(ks.ttl(b"b"), Ttl::Missing);
    assert_eq!(ks.rename(b"c", b"b", true), Ok(true));
    assert_eq!(ks.rename(b"a", b"b", true), Ok(false));
    assert_eq!(ks.copy(b"a", b"c", false), Ok(true));
    assert_eq!(ks.del(&[&b"a"[..], b"a", b"c"]), 2);
    drop(ks);
    let mut all = db.lock_all(1_000);
    let (mut cursor, mut seen) = (0, Vec::new());
    loop {
        let (next, keys) = all.scan(cursor, 1, None, None);
        seen.extend(keys);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    seen.sort();
    assert_eq!(seen, vec![Box::from(&b"b"[..]), Box::from(&b"d"[..])]);
    assert_eq!(all.keys_matching(b"[a-c]").len(), 1);
    assert!(all.random_key().is_some());
    assert!(glob_match(b"user:*", b"user:42"));
}

/// One SCAN call: the next cursor and the keys.
fn scan_page(engine: &Engine, c: &mut Client, cursor: &str, count: usize) -> (String, Vec<String>) {
    let reply = run(engine, c, &["SCAN", cursor, "COUNT", &count.to_string()]);
    let Reply::Array(parts) = reply else {
        panic!("{reply:?}")
    };
    let [Reply::Bulk(next), Reply::Array(keys)] = &parts[..] else {
        panic!("{parts:?}")
    };
    let keys = keys
        .iter()
        .map(|k| match k {
            Reply::Bulk(k) => String::from_utf8_lossy(k).into_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    (String::from_utf8_lossy(next).into_owned(), keys)
}

proptest! {
    /// SCAN's guarantee under change: a key present from the first call to the last is
    /// returned (exactly once), whatever is added or removed between calls.
    #[test]
    fn scan_returns_every_key_present_throughout(
        initial in proptest::collection::btree_set(0u16..400, 0..120),
        steps in proptest::collection::vec(
            (1usize..8, proptest::collection::vec((any::<bool>(), 0u16..400), 0..6)),
            1..80,
        ),
    ) {
        let engine = Engine::with_clock(Arc::new(AtomicU64::new(1)));
        let mut c = engine.client();
        let key = |n: u16| format!("k{n}");
        for n in &initial {
            run(&engine, &mut c, &["SET", &key(*n), "v"]);
        }
        let mut present_throughout: BTreeSet<u16> = initial.clone();
        let mut returned: Vec<String> = Vec::new();
        let mut cursor = "0".to_string();
        for (count, changes) in &steps {
            let (next, keys) = scan_page(&engine, &mut c, &cursor, *count);
            returned.extend(keys);
            cursor = next;
            if cursor == "0" {
                break;
            }
            for (add, n) in changes {
                if *add {
                    run(&engine, &mut c, &["SET", &key(*n), "v"]);
                } else {
                    run(&engine, &mut c, &["DEL", &key(*n)]);
                    present_throughout.remove(n);
                }
            }
        }
        while cursor != "0" {
            let (next, keys) = scan_page(&engine, &mut c, &cursor, 5);
            returned.extend(keys);
            cursor = next;
        }
        let unique: HashSet<&String> = returned.iter().collect();
        prop_assert_eq!(unique.len(), returned.len(), "a key was returned twice");
        for n in &present_throughout {
            prop_assert!(returned.contains(&key(*n)), "{} never returned", key(*n));
        }
    }
}
