//! Hashes, differentially against a real redis-server, plus what a spawned server cannot
//! check: random picks (only lengths and membership are deterministic), HSCAN over a large
//! hash, the typed API and RESP3 reply shapes.

use std::collections::BTreeSet;

use crate::support::diff::{elements, Diff};
use edgebench_engine::engine::{Engine, Reply};

/// A reply with its arrays sorted, recursively: equal for two replies that differ only in
/// the order Redis leaves undefined. With `pairs`, an even-length array is sorted as
/// (field, value) pairs, so values stay with their fields.
fn canonical(reply: &str, pairs: bool) -> String {
    if !reply.starts_with("array([") {
        return reply.to_string();
    }
    let items: Vec<String> = elements(reply)
        .iter()
        .map(|e| canonical(e, pairs))
        .collect();
    let mut groups: Vec<String> = if pairs && items.len().is_multiple_of(2) {
        items.chunks(2).map(|p| p.join(" => ")).collect()
    } else {
        items
    };
    groups.sort();
    format!("array([{}])", groups.join(", "))
}

/// Like `Diff::check`, for replies whose element order is undefined: flat field/value
/// pairs (HGETALL, HSCAN, HRANDFIELD ... WITHVALUES) stay paired, other arrays (HKEYS,
/// HVALS, HRANDFIELD) are compared as multisets.
fn check_unordered(d: &mut Diff, script: &[&[&str]]) {
    for args in script {
        let pairs =
            !matches!(args[0], "HKEYS" | "HVALS") && (args[0] != "HRANDFIELD" || args.len() == 4);
        let (real, ours) = d.both(args);
        assert_eq!(
            canonical(&ours, pairs),
            canonical(&real, pairs),
            "{args:?}: engine (left) vs redis-server (right)"
        );
    }
}

fn bulk(s: &str) -> String {
    format!("bulk-string('\"{s}\"')")
}

/// For a random pick: both replies have `len` elements (pairs with `values`), each field
/// one of `fields` with its value, distinct when `distinct`.
fn check_pick(d: &mut Diff, args: &[&str], len: usize, hash: &[(&str, &str)], distinct: bool) {
    let values = args.iter().any(|a| a.eq_ignore_ascii_case("withvalues"));
    let (real, ours) = d.both(args);
    for (who, reply) in [("redis-server", &real), ("engine", &ours)] {
        let items = elements(reply);
        let picks: Vec<String> = if values {
            assert_eq!(items.len() % 2, 0, "{args:?} from {who}: {reply}");
            items
                .chunks(2)
                .map(|p| format!("{} => {}", p[0], p[1]))
                .collect()
        } else {
            items
        };
        assert_eq!(picks.len(), len, "{args:?} from {who}: {reply}");
        let allowed: Vec<String> = hash
            .iter()
            .map(|(f, v)| {
                if values {
                    format!("{} => {}", bulk(f), bulk(v))
                } else {
                    bulk(f)
                }
            })
            .collect();
        for p in &picks {
            assert!(allowed.contains(p), "{args:?} from {who}: unexpected {p}");
        }
        if distinct {
            let unique: BTreeSet<&String> = picks.iter().collect();
            assert_eq!(unique.len(), len, "{args:?} from {who}: repeats in {reply}");
        }
    }
}

#[test]
fn field_commands_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["HSET", "h", "f1", "v1"],
        &["HSET", "h", "f1", "v2", "f2", "v2", "f3", ""],
        &["HSET", "h", "f4"],
        &["HSET", "h", "f4", "v4", "f5"],
        &["HMSET", "h", "f5", "v5"],
        &["HMSET", "h", "f6"],
        &["HMSET", "h", "a", "b", "c"],
        &["HGET", "h", "f1"],
        &["HGET", "h", "f3"],
        &["HGET", "h", "nope"],
        &["HGET", "nokey", "f"],
        &["HMGET", "h", "f1", "nope", "f2", "f1"],
        &["HMGET", "nokey", "a", "b"],
        &["HSETNX", "h", "f1", "x"],
        &["HSETNX", "h", "new", "x"],
        &["HSETNX", "h2", "f", "v"],
        &["HGET", "h", "f1"],
        &["HLEN", "h"],
        &["HLEN", "nokey"],
        &["HEXISTS", "h", "f1"],
        &["HEXISTS", "h", "nope"],
        &["HEXISTS", "nokey", "f"],
        &["HSTRLEN", "h", "f1"],
        &["HSTRLEN", "h", "f3"],
        &["HSTRLEN", "h", "nope"],
        &["HSTRLEN", "nokey", "f"],
        &["HDEL", "h", "nope"],
        &["HDEL", "h", "f1", "f1", "f2", "nope"],
        &["HDEL", "nokey", "f"],
        &["HLEN", "h"],
        &["HDEL", "h", "f3", "f5", "new"],
        &["HLEN", "h"],
        // The emptied hash is gone: the key takes another type.
        &["SADD", "h", "m"],
        // Every command on the wrong type.
        &["HSET", "h", "f", "v"],
        &["HMSET", "h", "f", "v"],
        &["HSETNX", "h", "f", "v"],
        &["HGET", "h", "f"],
        &["HMGET", "h", "f"],
        &["HGETALL", "h"],
        &["HDEL", "h", "f"],
        &["HLEN", "h"],
        &["HEXISTS", "h", "f"],
        &["HKEYS", "h"],
        &["HVALS", "h"],
        &["HSTRLEN", "h", "f"],
        &["HINCRBY", "h", "f", "1"],
        &["HINCRBYFLOAT", "h", "f", "1"],
        &["HRANDFIELD", "h"],
        &["HSCAN", "h", "0"],
        // Arity.
        &["HSET", "h", "f"],
        &["HSETNX", "h", "f"],
        &["HGET", "h"],
        &["HMGET", "h"],
        &["HGETALL"],
        &["HGETALL", "a", "b"],
        &["HDEL", "h"],
        &["HLEN"],
        &["HEXISTS", "h"],
        &["HKEYS"],
        &["HVALS", "a", "b"],
        &["HINCRBY", "h", "f"],
        &["HINCRBYFLOAT", "h", "f", "1", "2"],
        &["HSTRLEN", "h"],
        &["HRANDFIELD"],
        &["HSCAN", "h"],
        &["HGETALL", "nokey"],
        &["HKEYS", "nokey"],
        &["HVALS", "nokey"],
    ]);
    d.check(&[&[
        "HSET", "g", "a", "1", "b", "2", "c", "3", "empty", "", "sp ace", "x y",
    ]]);
    check_unordered(
        &mut d,
        &[&["HGETALL", "g"], &["HKEYS", "g"], &["HVALS", "g"]],
    );
}

/// A small hash answers in the order its fields were first set, as redis-server's listpack
/// does: an overwrite keeps its place, a deletion closes the gap, a new field goes last;
/// also under raised encoding limits with long values (Redis's "Hash ziplist of various
/// encodings" test).
#[test]
fn a_small_hash_keeps_its_fields_in_insertion_order() {
    let long = "x".repeat(8191);
    let mut d = Diff::new();
    d.check(&[
        &["HSET", "h", "c", "1", "a", "2", "b", "3"],
        &["HGETALL", "h"],
        &["HSET", "h", "a", "20", "d", "4"],
        &["HDEL", "h", "c"],
        &["HSET", "h", "c", "5"],
        &["HKEYS", "h"],
        &["HVALS", "h"],
        &["HGETALL", "h"],
        &["HSCAN", "h", "0"],
        &["CONFIG", "SET", "hash-max-listpack-value", "1000000"],
        &[
            "HSET", "z", "n8", "127", "n16", "32767", "s", &long, "n0", "0",
        ],
        &["HKEYS", "z"],
        &["OBJECT", "ENCODING", "z"],
        &["CONFIG", "SET", "hash-max-listpack-value", "64"],
    ]);
}

#[test]
fn hincrby_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["HINCRBY", "h", "n", "5"],
        &["HINCRBY", "h", "n", "-10"],
        &["HINCRBY", "h", "n", "0"],
        &["HINCRBY", "h", "n", "x"],
        &["HINCRBY", "h", "n", "1.5"],
        &["HINCRBY", "h", "n", ""],
        &["HINCRBY", "h", "n", "+1"],
        &["HINCRBY", "h", "n", "01"],
        &["HINCRBY", "h", "n", "9223372036854775808"],
        &["HINCRBY", "h", "n", "9223372036854775807"],
        &["HINCRBY", "h", "n", "10"],
        &["HINCRBY", "h", "m", "-9223372036854775808"],
        &["HINCRBY", "h", "m", "-1"],
        &["HGET", "h", "n"],
        &[
            "HSET", "h", "s", "abc", "sp", " 1", "lead", "01", "neg0", "-0", "f", "1.5",
        ],
        &["HINCRBY", "h", "s", "1"],
        &["HINCRBY", "h", "sp", "1"],
        &["HINCRBY", "h", "lead", "1"],
        &["HINCRBY", "h", "neg0", "1"],
        &["HINCRBY", "h", "f", "1"],
        // The increment is parsed before the key's type is checked.
        &["SADD", "set", "m"],
        &["HINCRBY", "set", "f", "x"],
        &["HINCRBY", "set", "f", "1"],
        &["HINCRBY", "new", "f", "0"],
        &["HGET", "new", "f"],
    ]);
}

#[test]
fn hincrbyfloat_matches_redis_long_double() {
    let mut d = Diff::new();
    d.check(&[
        &["HINCRBYFLOAT", "h", "a", "0.1"],
        &["HINCRBYFLOAT", "h", "a", "0.2"],
        &["HINCRBYFLOAT", "h", "b", "12345.1"],
        &["HINCRBYFLOAT", "h", "b", "0"],
        &["HINCRBYFLOAT", "h", "c", "5.0e3"],
        &["HINCRBYFLOAT", "h", "c", "-5000.0"],
        &["HINCRBYFLOAT", "h", "d", "-0.00000000000000000001"],
        &["HINCRBYFLOAT", "h", "e", "1.23456789012345678901234"],
        &["HINCRBYFLOAT", "h", "e", "0x1.8p3"],
        &["HINCRBYFLOAT", "h", "f", "0x10"],
        &["HINCRBYFLOAT", "h", "g", "1e400"],
        &["HINCRBYFLOAT", "h", "g", "-1e400"],
        &["HINCRBYFLOAT", "h", "i", "1e-4940"],
        // Ties at the 17th decimal round to even, as glibc's printf does.
        &["HINCRBYFLOAT", "h", "t1", "0.000003814697265625"],
        &["HINCRBYFLOAT", "h", "t2", "0.000011444091796875"],
        &["HINCRBYFLOAT", "h", "j", "123456789.123456789123456789"],
        &["HINCRBYFLOAT", "h", "j", "-0.1e-10"],
        &["HINCRBYFLOAT", "h", "k", "+.5"],
        &["HINCRBYFLOAT", "h", "k", "1."],
        &["HINCRBYFLOAT", "h", "k", "-2E1"],
        &["HINCRBYFLOAT", "h", "big", "1.18973149535723176502e+4932"],
        &["HINCRBYFLOAT", "h", "big", "1.18973149535723176502e+4932"],
        &["HINCRBYFLOAT", "h", "x", "1.18973149535723176509e+4932"],
        // Increments that are not finite numbers.
        &["HINCRBYFLOAT", "h", "x", "inf"],
        &["HINCRBYFLOAT", "h", "x", "-Infinity"],
        &["HINCRBYFLOAT", "h", "x", "nan"],
        &["HINCRBYFLOAT", "h", "x", "abc"],
        &["HINCRBYFLOAT", "h", "x", ""],
        &["HINCRBYFLOAT", "h", "x", " 1"],
        &["HINCRBYFLOAT", "h", "x", "1 "],
        &["HINCRBYFLOAT", "h", "x", "1e"],
        &["HINCRBYFLOAT", "h", "x", "1e5000"],
        &["HINCRBYFLOAT", "h", "x", "1e-5000"],
        &["HINCRBYFLOAT", "h", "x", "0x"],
        &["HEXISTS", "h", "x"],
        // Stored values that are not numbers.
        &[
            "HSET", "h", "s", "abc", "sp", " 1", "inf", "inf", "int", "10",
        ],
        &["HINCRBYFLOAT", "h", "s", "1"],
        &["HINCRBYFLOAT", "h", "sp", "1"],
        &["HINCRBYFLOAT", "h", "inf", "1"],
        &["HINCRBYFLOAT", "h", "int", "1.5"],
        &["HINCRBY", "h", "a", "1"],
        // The increment is parsed before the key's type is checked.
        &["SADD", "set", "m"],
        &["HINCRBYFLOAT", "set", "f", "x"],
        &["HINCRBYFLOAT", "set", "f", "inf"],
        &["HINCRBYFLOAT", "set", "f", "1"],
    ]);
    check_unordered(&mut d, &[&["HGETALL", "h"]]);
}

#[test]
fn hrandfield_matches_redis() {
    // Random picks or hash order that agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[
        &["SADD", "set", "m"],
        &["HRANDFIELD", "nokey"],
        &["HRANDFIELD", "nokey", "5"],
        &["HRANDFIELD", "nokey", "-5"],
        &["HRANDFIELD", "nokey", "5", "WITHVALUES"],
        &["HRANDFIELD", "nokey", "0"],
        // Argument errors come before the key is looked up.
        &["HRANDFIELD", "nokey", "x"],
        &["HRANDFIELD", "nokey", "1", "x"],
        &["HRANDFIELD", "nokey", "1", "withvalue"],
        &["HRANDFIELD", "nokey", "1", "WITHVALUES", "x"],
        &["HRANDFIELD", "nokey", "x", "WITHVALUES"],
        &["HRANDFIELD", "nokey", "-9223372036854775808"],
        &["HRANDFIELD", "nokey", "4611686018427387904", "WITHVALUES"],
        &["HRANDFIELD", "nokey", "-4611686018427387904", "WITHVALUES"],
        &["HRANDFIELD", "set"],
        &["HRANDFIELD", "set", "0"],
        &["HRANDFIELD", "set", "-1", "WITHVALUES"],
        // One field: every pick is deterministic.
        &["HSET", "one", "f", "v"],
        &["HRANDFIELD", "one"],
        &["HRANDFIELD", "one", "1"],
        &["HRANDFIELD", "one", "3"],
        &["HRANDFIELD", "one", "-3"],
        &["HRANDFIELD", "one", "0"],
        &["HRANDFIELD", "one", "0", "WITHVALUES"],
        &["HRANDFIELD", "one", "2", "withvalues"],
        &["HRANDFIELD", "one", "-2", "WITHVALUES"],
        &["HRANDFIELD", "one", "4611686018427387903", "WITHVALUES"],
        &["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"],
    ]);
    check_unordered(
        &mut d,
        &[
            &["HRANDFIELD", "h", "4"],
            &["HRANDFIELD", "h", "100"],
            &["HRANDFIELD", "h", "100", "WITHVALUES"],
        ],
    );
    let hash = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")];
    check_pick(&mut d, &["HRANDFIELD", "h", "2"], 2, &hash, true);
    check_pick(
        &mut d,
        &["HRANDFIELD", "h", "3", "WITHVALUES"],
        3,
        &hash,
        true,
    );
    check_pick(&mut d, &["HRANDFIELD", "h", "-9"], 9, &hash, false);
    check_pick(
        &mut d,
        &["HRANDFIELD", "h", "-9", "WITHVALUES"],
        9,
        &hash,
        false,
    );
    let (real, ours) = d.both(&["HRANDFIELD", "h"]);
    let fields: Vec<String> = hash.iter().map(|(f, _)| bulk(f)).collect();
    assert!(
        fields.contains(&real) && fields.contains(&ours),
        "{real} {ours}"
    );
}

#[test]
fn hscan_matches_redis_on_small_hashes() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "set", "m"],
        &[
            "HSET", "h", "apple", "1", "apricot", "2", "banana", "3", "a[b]", "4", "a*", "5",
        ],
        &["HSCAN", "nokey", "0"],
        // A missing key ends the scan before its options are read.
        &["HSCAN", "nokey", "0", "COUNT", "0"],
        &["HSCAN", "nokey", "x"],
        &["HSCAN", "set", "0"],
        &["HSCAN", "set", "x"],
        &["HSCAN", "h", "x"],
        &["HSCAN", "h", " 1"],
        &["HSCAN", "h", "0x1"],
        &["HSCAN", "h", "18446744073709551616"],
        &["HSCAN", "h", "0", "COUNT", "0"],
        &["HSCAN", "h", "0", "COUNT", "-3"],
        &["HSCAN", "h", "0", "COUNT", "1.5"],
        &["HSCAN", "h", "0", "COUNT"],
        &["HSCAN", "h", "0", "MATCH"],
        &["HSCAN", "h", "0", "TYPE", "hash"],
        &["HSCAN", "h", "0", "NOVALUES"],
        &["HSCAN", "h", "0", "MATCH", "a*", "COUNT", "0"],
        &["HSCAN", "h", "-1", "COUNT", "0"],
    ]);
    check_unordered(
        &mut d,
        &[
            // A small hash comes whole, with cursor 0, whatever the cursor and COUNT.
            &["HSCAN", "h", "0"],
            &["HSCAN", "h", "0", "COUNT", "1"],
            &["HSCAN", "h", "42"],
            &["HSCAN", "h", "-1"],
            &["HSCAN", "h", ""],
            &["HSCAN", "h", "0", "MATCH", "ap*"],
            &["HSCAN", "h", "0", "MATCH", "*an*", "COUNT", "2"],
            &["HSCAN", "h", "0", "MATCH", "?????"],
            &["HSCAN", "h", "0", "MATCH", "[^ab]*"],
            &["HSCAN", "h", "0", "MATCH", "a\\[b\\]"],
            &["HSCAN", "h", "0", "MATCH", "a\\*"],
            &["HSCAN", "h", "0", "MATCH", "*"],
            &["HSCAN", "h", "0", "MATCH", "1"],
            &["HSCAN", "h", "0", "MATCH", "a*", "MATCH", "b*"],
        ],
    );
}

/// The (field, value) pairs a full HSCAN returns, following cursors on the engine alone.
fn full_hscan(engine: &Engine, key: &[u8], count: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut client = engine.client();
    let (mut cursor, mut calls, mut seen) = (b"0".to_vec(), 0, Vec::new());
    loop {
        let args: [&[u8]; 5] = [b"HSCAN", key, &cursor, b"COUNT", count];
        let Reply::Array(parts) = engine.execute(&mut client, &args) else {
            panic!("HSCAN reply is not an array");
        };
        let [Reply::Bulk(next), Reply::Array(page)] = &parts[..] else {
            panic!("HSCAN reply is not [cursor, page]: {parts:?}");
        };
        assert_eq!(page.len() % 2, 0, "fields come with their values");
        for pair in page.chunks(2) {
            let [Reply::Bulk(f), Reply::Bulk(v)] = pair else {
                panic!("pair {pair:?}")
            };
            seen.push((f.clone(), v.clone()));
        }
        calls += 1;
        cursor = next.clone();
        if cursor == b"0" {
            return seen;
        }
        assert!(calls < 10_000, "HSCAN does not terminate");
    }
}

#[test]
fn hscan_walks_a_large_hash_with_its_cursor() {
    let engine = Engine::new();
    let mut client = engine.client();
    let mut want: Vec<(Vec<u8>, Vec<u8>)> = (0..500)
        .map(|i| (format!("f{i}").into_bytes(), format!("v{i}").into_bytes()))
        .collect();
    let mut args: Vec<&[u8]> = vec![b"HSET", b"big"];
    for (f, v) in &want {
        args.push(f);
        args.push(v);
    }
    assert_eq!(engine.execute(&mut client, &args), Reply::Int(500));
    let mut seen = full_hscan(&engine, b"big", b"10");
    seen.sort();
    want.sort();
    assert_eq!(seen, want, "one full scan returns every pair exactly once");

    // A long value makes even a small hash a hash table in Redis: paged, not whole.
    let long = vec![b'x'; 100];
    engine.execute(
        &mut client,
        &[b"HSET", b"wide", b"a", &long, b"b", b"1", b"c", b"2"],
    );
    let reply = engine.execute(&mut client, &[b"HSCAN", b"wide", b"0", b"COUNT", b"1"]);
    let Reply::Array(parts) = reply else {
        panic!("not an array")
    };
    assert_ne!(parts[0], Reply::bulk(b"0"), "a one-element page of three");
    assert_eq!(full_hscan(&engine, b"wide", b"1").len(), 3);
}

#[test]
fn typed_api_matches_the_commands() {
    let engine = Engine::new();
    let db = engine.db(0);
    {
        let mut ks = db.lock([&b"h"[..]], engine.now_ms());
        assert_eq!(ks.hset(b"h", &[(b"a", b"1"), (b"b", b"2")]), Ok(2));
        assert_eq!(ks.hset(b"h", &[(b"a", b"9")]), Ok(0));
        assert_eq!(ks.hget(b"h", b"a"), Ok(Some(&b"9"[..])));
        assert_eq!(ks.hsetnx(b"h", b"a", b"x"), Ok(false));
        assert_eq!(
            ks.hmget(b"h", &[b"b", b"zz"]),
            Ok(vec![Some(b"2".to_vec()), None])
        );
        assert_eq!(ks.hincrby(b"h", b"b", 40), Ok(42));
        assert_eq!(ks.hincrbyfloat(b"h", b"f", 0.5), Ok(b"0.5".to_vec()));
        assert_eq!(ks.hincrbyfloat(b"h", b"f", 0.25), Ok(b"0.75".to_vec()));
        assert!(ks.hincrbyfloat(b"h", b"f", f64::NAN).is_err());
        assert_eq!(ks.hlen(b"h"), Ok(3));
        assert_eq!(ks.hstrlen(b"h", b"f"), Ok(4));
        assert_eq!(ks.hexists(b"h", b"f"), Ok(true));
        let mut all = ks.hgetall(b"h").unwrap();
        all.sort();
        assert_eq!(
            all,
            vec![
                (b"a".to_vec(), b"9".to_vec()),
                (b"b".to_vec(), b"42".to_vec()),
                (b"f".to_vec(), b"0.75".to_vec()),
            ]
        );
        assert_eq!(ks.hrandfield_count(b"h", -5).map(|v| v.len()), Ok(5));
        assert_eq!(ks.hrandfield_count(b"h", 2).map(|v| v.len()), Ok(2));
        assert_eq!(ks.hdel(b"h", &[b"a", b"b", b"f", b"zz"]), Ok(3));
        assert_eq!(ks.get_hash(b"h").map(|h| h.is_none()), Ok(true));
    }
    // RESP3: HGETALL is a map, HRANDFIELD WITHVALUES an array of pairs.
    let mut client = engine.client();
    engine.execute(&mut client, &[b"HSET", b"h", b"a", b"1", b"b", b"2"]);
    client.resp = 3;
    assert!(matches!(
        engine.execute(&mut client, &[b"HGETALL", b"h"]),
        Reply::Map(m) if m.len() == 2
    ));
    let Reply::Array(pairs) =
        engine.execute(&mut client, &[b"HRANDFIELD", b"h", b"-3", b"WITHVALUES"])
    else {
        panic!("HRANDFIELD is not an array")
    };
    assert_eq!(pairs.len(), 3);
    assert!(pairs
        .iter()
        .all(|p| matches!(p, Reply::Array(fv) if fv.len() == 2)));
}

#[test]
fn writes_that_change_nothing_keep_a_watch() {
    let mut d = Diff::new();
    d.check(&[
        &["HSET", "h", "f", "v"],
        &["WATCH", "h"],
        &["HDEL", "h", "nope"],
        &["HSETNX", "h", "f", "other"],
        &["MULTI"],
        &["HLEN", "h"],
        &["EXEC"],
        &["WATCH", "h"],
        &["HSET", "h", "f", "v"],
        &["MULTI"],
        &["HLEN", "h"],
        &["EXEC"],
    ]);
}
