//! Sets, differentially against a real redis-server, plus what a spawned server cannot
//! check: random picks (only lengths and membership are deterministic), SSCAN over a large
//! set, and a property test of SADD/SREM/SPOP/SMOVE against a `BTreeSet` model.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::diff::{elements, Diff};
use edgebench_engine::engine::{Engine, Reply};
use proptest::prelude::*;

/// A reply with every array sorted, recursively: equal for two replies that differ only in
/// the order Redis leaves undefined.
fn canonical(reply: &str) -> String {
    if !reply.starts_with("array([") {
        return reply.to_string();
    }
    let mut items: Vec<String> = elements(reply).iter().map(|e| canonical(e)).collect();
    items.sort();
    format!("array([{}])", items.join(", "))
}

/// Like `Diff::check`, for replies whose element order is undefined.
fn check_unordered(d: &mut Diff, script: &[&[&str]]) {
    for args in script {
        let (real, ours) = d.both(args);
        assert_eq!(
            canonical(&ours),
            canonical(&real),
            "{args:?}: engine (left) vs redis-server (right)"
        );
    }
}

/// For a random pick: both replies have `len` elements, each one of `allowed`, distinct
/// when `distinct` (ZRANDMEMBER's tests use it too).
pub(crate) fn check_pick(
    d: &mut Diff,
    args: &[&str],
    len: usize,
    allowed: &[&str],
    distinct: bool,
) {
    let (real, ours) = d.both(args);
    for (who, reply) in [("redis-server", &real), ("engine", &ours)] {
        let items = elements(reply);
        assert_eq!(items.len(), len, "{args:?} from {who}: {reply}");
        for item in &items {
            assert!(
                allowed
                    .iter()
                    .any(|a| *item == format!("bulk-string('\"{a}\"')")),
                "{args:?} from {who}: unexpected {item}"
            );
        }
        if distinct {
            let unique: BTreeSet<&String> = items.iter().collect();
            assert_eq!(unique.len(), len, "{args:?} from {who}: repeats in {reply}");
        }
    }
}

#[test]
fn membership_commands_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "s", "a", "b", "a"],
        &["SADD", "s", "a"],
        &["SADD", "s", "c", "d"],
        &["SCARD", "s"],
        &["SCARD", "nokey"],
        &["SISMEMBER", "s", "a"],
        &["SISMEMBER", "s", "zz"],
        &["SISMEMBER", "nokey", "a"],
        &["SMISMEMBER", "s", "a", "zz", "d", "a"],
        &["SMISMEMBER", "nokey", "a", "b"],
        &["SREM", "s", "zz"],
        &["SREM", "s", "a", "zz", "a"],
        &["SREM", "nokey", "a"],
        &["SREM", "s", "b", "c", "d"],
        &["SCARD", "s"],
        // The emptied set is gone: the key takes another type.
        &["HSET", "s", "f", "v"],
        &["SADD", "s", "x"],
        &["SREM", "s", "x"],
        &["SCARD", "s"],
        &["SISMEMBER", "s", "x"],
        &["SMISMEMBER", "s", "x"],
        &["SMEMBERS", "s"],
        &["SMEMBERS", "nokey"],
        // Arity.
        &["SADD", "s"],
        &["SREM", "s"],
        &["SCARD"],
        &["SCARD", "a", "b"],
        &["SISMEMBER", "s"],
        &["SISMEMBER", "s", "a", "b"],
        &["SMISMEMBER", "s"],
        &["SMEMBERS"],
        &["SMEMBERS", "a", "b"],
    ]);
    d.check(&[&["SADD", "m", "1", "2", "x", "", "long member with spaces"]]);
    check_unordered(&mut d, &[&["SMEMBERS", "m"]]);
}

#[test]
fn set_algebra_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "a", "1", "2", "3", "x"],
        &["SADD", "b", "2", "3", "y"],
        &["SADD", "c", "3", "z"],
        &["HSET", "h", "f", "v"],
    ]);
    check_unordered(
        &mut d,
        &[
            &["SINTER", "a", "b"],
            &["SINTER", "a", "b", "c"],
            &["SINTER", "a"],
            &["SINTER", "a", "a"],
            &["SINTER", "a", "nokey"],
            &["SINTER", "nokey", "a"],
            &["SUNION", "a", "b", "c"],
            &["SUNION", "a", "nokey"],
            &["SUNION", "nokey"],
            &["SDIFF", "a", "b"],
            &["SDIFF", "a", "b", "c"],
            &["SDIFF", "a", "nokey"],
            &["SDIFF", "nokey", "a"],
            &["SDIFF", "a", "a"],
            &["SDIFF", "b", "a", "c"],
        ],
    );
    d.check(&[
        // WRONGTYPE anywhere wins, even after a missing key.
        &["SINTER", "a", "h"],
        &["SINTER", "nokey", "h"],
        &["SINTER", "h", "nokey"],
        &["SUNION", "nokey", "h"],
        &["SDIFF", "nokey", "h"],
        &["SDIFF", "a", "h"],
        &["SINTER"],
        &["SUNION"],
        &["SDIFF"],
        // Stores: the count, then the stored set.
        &["SINTERSTORE", "d", "a", "b"],
        &["SCARD", "d"],
        &["SUNIONSTORE", "d", "a", "b", "c"],
        &["SCARD", "d"],
        &["SDIFFSTORE", "d", "a", "b"],
        &["SCARD", "d"],
        &["SISMEMBER", "d", "x"],
        // An empty result deletes the destination.
        &["SINTERSTORE", "d", "a", "nokey"],
        &["HSET", "d", "f", "v"],
        // The destination is overwritten whatever its type...
        &["SINTERSTORE", "d", "a", "b"],
        &["SCARD", "d"],
        &["SDIFFSTORE", "d", "a", "a"],
        &["SCARD", "d"],
        &["SUNIONSTORE", "d", "nokey"],
        &["SCARD", "d"],
        // ...but a wrong-typed source leaves it alone.
        &["SUNIONSTORE", "d", "a"],
        &["SINTERSTORE", "d", "a", "h"],
        &["SUNIONSTORE", "d", "h"],
        &["SDIFFSTORE", "d", "nokey", "h"],
        &["SCARD", "d"],
        // A destination that is also a source.
        &["SINTERSTORE", "a", "a", "b"],
        &["SCARD", "a"],
        &["SUNIONSTORE", "h", "h2", "c"],
        &["SCARD", "h"],
        &["SINTERSTORE", "d"],
        &["SUNIONSTORE", "d"],
        &["SDIFFSTORE", "d"],
    ]);
    check_unordered(&mut d, &[&["SMEMBERS", "a"], &["SMEMBERS", "d"]]);
}

#[test]
fn sintercard_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "a", "1", "2", "3", "x"],
        &["SADD", "b", "2", "3", "y"],
        &["SADD", "c", "3", "z"],
        &["HSET", "h", "f", "v"],
        &["SINTERCARD", "2", "a", "b"],
        &["SINTERCARD", "3", "a", "b", "c"],
        &["SINTERCARD", "1", "a"],
        &["SINTERCARD", "2", "a", "a"],
        &["SINTERCARD", "2", "a", "nokey"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "0"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "1"],
        &["SINTERCARD", "2", "a", "b", "limit", "5"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "0"],
        // numkeys: at least 1 (one message for a non-integer too), no more than given.
        &["SINTERCARD", "0", "a"],
        &["SINTERCARD", "-1", "a"],
        &["SINTERCARD", "x", "a"],
        &["SINTERCARD", "3", "a", "b"],
        &["SINTERCARD", "9223372036854775807", "a"],
        // Options are read before the keys' types.
        &["SINTERCARD", "2", "a", "h"],
        &["SINTERCARD", "2", "nokey", "h"],
        &["SINTERCARD", "2", "a", "h", "LIMIT", "-1"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "-1"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "x"],
        &["SINTERCARD", "2", "a", "b", "LIMIT"],
        &["SINTERCARD", "2", "a", "b", "WITHSCORES"],
        &["SINTERCARD", "1"],
        &["SINTERCARD"],
    ]);
}

#[test]
fn smove_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "a", "1", "2", "3"],
        &["SADD", "b", "3"],
        &["HSET", "h", "f", "v"],
        &["SMOVE", "a", "b", "1"],
        &["SMOVE", "a", "b", "nope"],
        &["SMOVE", "a", "b", "3"],
        &["SCARD", "a"],
        &["SCARD", "b"],
        &["SMOVE", "nokey", "b", "1"],
        // A missing source answers 0 before the destination's type is looked at.
        &["SMOVE", "nokey", "h", "1"],
        &["SMOVE", "a", "h", "2"],
        &["SMOVE", "a", "h", "nope"],
        &["SMOVE", "h", "a", "f"],
        &["SMOVE", "a", "a", "2"],
        &["SMOVE", "a", "a", "nope"],
        &["SMOVE", "a", "new", "2"],
        // The source emptied: deleted.
        &["SCARD", "a"],
        &["HSET", "a", "f", "v"],
        &["SISMEMBER", "new", "2"],
        &["SMOVE", "a", "b"],
        &["SMOVE", "a", "b", "c", "d"],
    ]);
}

#[test]
fn spop_and_srandmember_match_redis() {
    // Random picks or hash order that agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[
        &["HSET", "h", "f", "v"],
        &["SPOP", "nokey"],
        &["SPOP", "nokey", "3"],
        &["SPOP", "nokey", "0"],
        &["SRANDMEMBER", "nokey"],
        &["SRANDMEMBER", "nokey", "5"],
        &["SRANDMEMBER", "nokey", "-5"],
        &["SRANDMEMBER", "nokey", "0"],
        // Errors: the count is parsed before the key is looked up.
        &["SPOP", "nokey", "-1"],
        &["SPOP", "nokey", "x"],
        &["SPOP", "h", "-1"],
        &["SPOP", "nokey", "1", "2"],
        &["SPOP", "h"],
        &["SPOP", "h", "0"],
        &["SPOP", "h", "2"],
        &["SRANDMEMBER", "nokey", "x"],
        &["SRANDMEMBER", "nokey", "-9223372036854775808"],
        &["SRANDMEMBER", "nokey", "9223372036854775808"],
        &["SRANDMEMBER", "nokey", "1", "2"],
        &["SRANDMEMBER", "h"],
        &["SRANDMEMBER", "h", "0"],
        &["SRANDMEMBER", "h", "-1"],
        &["SPOP"],
        &["SRANDMEMBER"],
        // One member: every pick is deterministic.
        &["SADD", "one", "m"],
        &["SRANDMEMBER", "one"],
        &["SRANDMEMBER", "one", "1"],
        &["SRANDMEMBER", "one", "5"],
        &["SRANDMEMBER", "one", "-3"],
        &["SRANDMEMBER", "one", "0"],
        &["SPOP", "one", "0"],
        &["SPOP", "one"],
        &["SCARD", "one"],
        &["SPOP", "one"],
        &["SADD", "one", "m"],
        &["SPOP", "one", "1"],
        &["HSET", "one", "f", "v"],
        // A count at least the size takes everything.
        &["SADD", "t", "1", "2", "3"],
    ]);
    check_unordered(
        &mut d,
        &[
            &["SRANDMEMBER", "t", "3"],
            &["SRANDMEMBER", "t", "100"],
            &["SPOP", "t", "3"],
        ],
    );
    d.check(&[&["SCARD", "t"], &["HSET", "t", "f", "v"]]);

    let members = ["a", "b", "c", "d", "e"];
    let mut sadd = vec!["SADD", "r"];
    sadd.extend(members);
    d.check(&[&sadd]);
    check_pick(&mut d, &["SRANDMEMBER", "r", "2"], 2, &members, true);
    check_pick(&mut d, &["SRANDMEMBER", "r", "4"], 4, &members, true);
    check_pick(&mut d, &["SRANDMEMBER", "r", "-12"], 12, &members, false);
    check_pick(&mut d, &["SPOP", "r", "2"], 2, &members, true);
    d.check(&[&["SCARD", "r"]]);
    let (real, ours) = d.both(&["SPOP", "r"]);
    assert!(real.starts_with("bulk-string") && ours.starts_with("bulk-string"));
    d.check(&[&["SCARD", "r"]]);
}

#[test]
fn sscan_matches_redis_on_small_sets() {
    // Random picks or hash order that agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[
        &["HSET", "h", "f", "v"],
        &["SADD", "ints", "1", "2", "3", "10", "-5"],
        &[
            "SADD", "words", "apple", "apricot", "banana", "cherry", "a[b]", "a*",
        ],
        &["SSCAN", "nokey", "0"],
        // A missing key ends the scan before its options are read.
        &["SSCAN", "nokey", "0", "COUNT", "0"],
        &["SSCAN", "nokey", "x"],
        &["SSCAN", "h", "0"],
        &["SSCAN", "h", "x"],
        &["SSCAN", "ints", "x"],
        &["SSCAN", "ints", " 1"],
        &["SSCAN", "ints", "1 "],
        &["SSCAN", "ints", "18446744073709551616"],
        &["SSCAN", "ints", "0", "COUNT", "0"],
        &["SSCAN", "ints", "0", "COUNT", "-1"],
        &["SSCAN", "ints", "0", "COUNT", "x"],
        &["SSCAN", "ints", "0", "COUNT"],
        &["SSCAN", "ints", "0", "MATCH"],
        &["SSCAN", "ints", "0", "TYPE", "set"],
        &["SSCAN", "ints", "0", "FOO", "bar"],
        &["SSCAN", "ints", "0", "MATCH", "*", "COUNT", "0"],
        &["SSCAN"],
        &["SSCAN", "ints"],
    ]);
    check_unordered(
        &mut d,
        &[
            // An intset comes whole whatever the cursor and COUNT.
            &["SSCAN", "ints", "0"],
            &["SSCAN", "ints", "0", "COUNT", "1"],
            &["SSCAN", "ints", "7"],
            &["SSCAN", "ints", "-1"],
            &["SSCAN", "ints", ""],
            &["SSCAN", "ints", "+0"],
            &["SSCAN", "ints", "0", "MATCH", "1*"],
            &["SSCAN", "ints", "0", "MATCH", "-*", "COUNT", "100"],
            &["SSCAN", "ints", "0", "COUNT", "2", "MATCH", "[0-2]"],
            // A small hash-table set: fewer members than COUNT come in one call.
            &["SSCAN", "words", "0"],
            &["SSCAN", "words", "0", "MATCH", "ap*"],
            &["SSCAN", "words", "0", "MATCH", "*an*"],
            &["SSCAN", "words", "0", "MATCH", "?????"],
            &["SSCAN", "words", "0", "MATCH", "[ab]*"],
            &["SSCAN", "words", "0", "MATCH", "[^ab]*"],
            &["SSCAN", "words", "0", "MATCH", "a\\[b\\]"],
            &["SSCAN", "words", "0", "MATCH", "a\\*"],
            &["SSCAN", "words", "0", "MATCH", "[a-b]*"],
            &["SSCAN", "words", "0", "MATCH", "nothing"],
            &["SSCAN", "words", "0", "MATCH", "a*", "MATCH", "b*"],
        ],
    );
}

/// The members a full SSCAN returns, following cursors on the engine alone.
fn full_sscan(engine: &Engine, key: &str, count: usize, during: impl Fn(usize)) -> Vec<String> {
    let mut client = engine.client();
    let (mut cursor, mut calls, mut seen) = ("0".to_string(), 0, Vec::new());
    loop {
        let count = count.to_string();
        let args: [&[u8]; 5] = [
            b"SSCAN",
            key.as_bytes(),
            cursor.as_bytes(),
            b"COUNT",
            count.as_bytes(),
        ];
        let Reply::Array(parts) = engine.execute(&mut client, &args) else {
            panic!("SSCAN reply is not an array");
        };
        let [Reply::Bulk(next), Reply::Array(page)] = &parts[..] else {
            panic!("SSCAN reply is not [cursor, page]: {parts:?}");
        };
        for m in page {
            let Reply::Bulk(m) = m else {
                panic!("member {m:?}")
            };
            seen.push(String::from_utf8(m.clone()).unwrap());
        }
        calls += 1;
        during(calls);
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            return seen;
        }
        assert!(calls < 10_000, "SSCAN does not terminate");
    }
}

#[test]
fn sscan_walks_a_large_set_with_its_cursor() {
    let engine = Engine::new();
    let mut client = engine.client();
    let members: Vec<String> = (0..1000).map(|i| format!("member:{i}")).collect();
    let mut args: Vec<&[u8]> = vec![b"SADD", b"big"];
    args.extend(members.iter().map(|m| m.as_bytes()));
    assert_eq!(engine.execute(&mut client, &args), Reply::Int(1000));

    let mut seen = full_sscan(&engine, "big", 10, |_| {});
    seen.sort();
    let mut want = members.clone();
    want.sort();
    assert_eq!(
        seen, want,
        "one full scan returns every member exactly once"
    );

    // Members removed or added during the scan do not hide the others.
    let removed: BTreeSet<String> = members.iter().step_by(3).cloned().collect();
    let seen: BTreeSet<String> = full_sscan(&engine, "big", 25, |call| {
        if call == 5 {
            let mut client = engine.client();
            for m in &removed {
                engine.execute(&mut client, &[b"SREM", b"big", m.as_bytes()]);
            }
            for i in 0..200 {
                let m = format!("late:{i}");
                engine.execute(&mut client, &[b"SADD", b"big", m.as_bytes()]);
            }
        }
    })
    .into_iter()
    .collect();
    for m in members.iter().filter(|m| !removed.contains(*m)) {
        assert!(
            seen.contains(m),
            "{m} was present throughout but not returned"
        );
    }

    // MATCH filters a page after it is chosen, so pages may be empty mid-scan.
    let mut client = engine.client();
    let reply = engine.execute(
        &mut client,
        &[
            b"SSCAN",
            b"big",
            b"0",
            b"MATCH",
            b"member:1?",
            b"COUNT",
            b"2000",
        ],
    );
    let Reply::Array(parts) = reply else {
        panic!("not an array")
    };
    assert_eq!(parts[0], Reply::bulk(b"0"));
    let Reply::Array(page) = &parts[1] else {
        panic!("no page")
    };
    // member:10..member:19, less those removed (every third from 0).
    let want = (10..20).filter(|i| i % 3 != 0).count();
    assert_eq!(page.len(), want);
}

#[test]
fn typed_api_matches_the_commands() {
    let engine = Engine::new();
    let db = engine.db(0);
    let now = engine.now_ms();
    {
        let mut ks = db.lock([&b"a"[..], b"b", b"dst"], now);
        assert_eq!(ks.sadd(b"a", &[b"1", b"2", b"3"]), Ok(3));
        assert_eq!(ks.sadd(b"b", &[b"3", b"4"]), Ok(2));
        assert_eq!(ks.scard(b"a"), Ok(3));
        assert_eq!(ks.sismember(b"a", b"2"), Ok(true));
        assert_eq!(ks.smismember(b"a", &[b"1", b"9"]), Ok(vec![true, false]));
        assert_eq!(ks.sinter(&[b"a", b"b"]), Ok(vec![b"3".to_vec()]));
        assert_eq!(ks.sunionstore(b"dst", &[b"a", b"b"]), Ok(4));
        let mut diff = ks.sdiff(&[b"a", b"b"]).unwrap();
        diff.sort();
        assert_eq!(diff, vec![b"1".to_vec(), b"2".to_vec()]);
        assert_eq!(ks.smove(b"a", b"b", b"1"), Ok(true));
        assert_eq!(ks.srem(b"a", &[b"2", b"3"]), Ok(2));
        assert_eq!(ks.get_set(b"a").map(|s| s.is_none()), Ok(true));
        let popped = ks.spop_count(b"b", 10).unwrap();
        assert_eq!(popped.len(), 3);
        assert_eq!(ks.scard(b"b"), Ok(0));
        assert_eq!(ks.srandmember_count(b"dst", -7).map(|v| v.len()), Ok(7));
        assert!(ks
            .srandmember_count(b"dst", -(1 << 40))
            .unwrap_err()
            .to_string()
            .starts_with("ERR value is out of range"));
    }
    // RESP3 replies: sets for the set-valued commands, arrays for SRANDMEMBER.
    let mut client = engine.client();
    client.resp = 3;
    assert!(matches!(
        engine.execute(&mut client, &[b"SMEMBERS", b"dst"]),
        Reply::Set(v) if v.len() == 4
    ));
    assert!(matches!(
        engine.execute(&mut client, &[b"SPOP", b"nokey", b"2"]),
        Reply::Set(v) if v.is_empty()
    ));
    assert!(matches!(
        engine.execute(&mut client, &[b"SRANDMEMBER", b"dst", b"2"]),
        Reply::Array(v) if v.len() == 2
    ));
    assert!(matches!(
        engine.execute(&mut client, &[b"SINTER", b"dst", b"nokey"]),
        Reply::Set(v) if v.is_empty()
    ));
}

/// One step of the property test.
#[derive(Debug, Clone)]
enum Op {
    Add(usize, Vec<u8>),
    Rem(usize, Vec<u8>),
    Pop(usize, Option<usize>),
    Move(usize, usize, u8),
}

const KEYS: [&str; 3] = ["p", "q", "r"];

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS.len();
    let members = prop::collection::vec(0u8..8, 1..4);
    prop_oneof![
        (key.clone(), members.clone()).prop_map(|(k, m)| Op::Add(k, m)),
        (key.clone(), members).prop_map(|(k, m)| Op::Rem(k, m)),
        (key.clone(), prop::option::of(0usize..5)).prop_map(|(k, c)| Op::Pop(k, c)),
        (key.clone(), key, 0u8..8).prop_map(|(s, d, m)| Op::Move(s, d, m)),
    ]
}

fn member(m: u8) -> String {
    format!("m{m}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// SADD/SREM/SPOP/SMOVE sequences agree with a model of `BTreeSet`s: every reply, and
    /// after every step each key's members (and its absence when empty).
    #[test]
    fn set_commands_follow_a_btreeset_model(ops in prop::collection::vec(op(), 1..40)) {
        let engine = Engine::new();
        let mut client = engine.client();
        let mut model: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let mut run = |args: Vec<String>| {
            let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            engine.execute(&mut client, &argv)
        };
        for op in ops {
            match op {
                Op::Add(k, ms) => {
                    let key = KEYS[k];
                    let set = model.entry(key).or_default();
                    let added = ms.iter().filter(|m| set.insert(member(**m))).count();
                    let mut args = vec!["SADD".to_string(), key.to_string()];
                    args.extend(ms.iter().map(|m| member(*m)));
                    prop_assert_eq!(run(args), Reply::Int(added as i64));
                }
                Op::Rem(k, ms) => {
                    let key = KEYS[k];
                    let set = model.entry(key).or_default();
                    let removed = ms.iter().filter(|m| set.remove(&member(**m))).count();
                    let mut args = vec!["SREM".to_string(), key.to_string()];
                    args.extend(ms.iter().map(|m| member(*m)));
                    prop_assert_eq!(run(args), Reply::Int(removed as i64));
                }
                Op::Pop(k, None) => {
                    let key = KEYS[k];
                    let set = model.entry(key).or_default();
                    match run(vec!["SPOP".into(), key.into()]) {
                        Reply::Nil => prop_assert!(set.is_empty()),
                        Reply::Bulk(m) => {
                            let m = String::from_utf8(m).unwrap();
                            prop_assert!(set.remove(&m), "popped {} not in {:?}", m, set);
                        }
                        other => prop_assert!(false, "SPOP replied {:?}", other),
                    }
                }
                Op::Pop(k, Some(count)) => {
                    let key = KEYS[k];
                    let set = model.entry(key).or_default();
                    let before = set.len();
                    let reply = run(vec!["SPOP".into(), key.into(), count.to_string()]);
                    let Reply::Set(popped) = reply else {
                        prop_assert!(false, "SPOP count replied {:?}", reply);
                        unreachable!()
                    };
                    prop_assert_eq!(popped.len(), count.min(before));
                    for m in popped {
                        let Reply::Bulk(m) = m else { unreachable!() };
                        let m = String::from_utf8(m).unwrap();
                        prop_assert!(set.remove(&m), "popped {} twice or never there", m);
                    }
                }
                Op::Move(s, d, m) => {
                    let (src, dst, m) = (KEYS[s], KEYS[d], member(m));
                    let present = model.get(src).is_some_and(|set| set.contains(&m));
                    if present && src != dst {
                        model.entry(src).or_default().remove(&m);
                        model.entry(dst).or_default().insert(m.clone());
                    }
                    let reply = run(vec!["SMOVE".into(), src.into(), dst.into(), m]);
                    prop_assert_eq!(reply, Reply::Int(present.into()));
                }
            }
            for key in KEYS {
                let want = model.get(key).cloned().unwrap_or_default();
                let Reply::Set(got) = run(vec!["SMEMBERS".into(), key.into()]) else {
                    unreachable!()
                };
                let got: BTreeSet<String> = got
                    .into_iter()
                    .map(|m| match m {
                        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
                        other => panic!("{other:?}"),
                    })
                    .collect();
                prop_assert_eq!(&got, &want, "members of {}", key);
                let stored = engine
                    .db(0)
                    .lock([key.as_bytes()], engine.now_ms())
                    .get_set(key.as_bytes())
                    .map(|s| s.is_some());
                prop_assert_eq!(stored, Ok(!want.is_empty()), "{} kept while empty", key);
            }
        }
    }
}

#[test]
fn writes_that_change_nothing_keep_a_watch() {
    let mut d = Diff::new();
    d.check(&[
        &["SADD", "s", "a"],
        &["SADD", "t", "z"],
        &["WATCH", "s", "t"],
        &["SADD", "s", "a"],
        &["SREM", "s", "nope"],
        &["SMOVE", "s", "t", "nope"],
        &["SMOVE", "s", "s", "a"],
        &["SPOP", "s", "0"],
        &["MULTI"],
        &["SCARD", "s"],
        &["EXEC"],
        &["WATCH", "s"],
        &["SADD", "s", "b"],
        &["MULTI"],
        &["SCARD", "s"],
        &["EXEC"],
        &["WATCH", "t"],
        &["SMOVE", "s", "t", "b"],
        &["MULTI"],
        &["SCARD", "t"],
        &["EXEC"],
        // SMOVE of a member the destination already holds: it leaves the source, and the
        // destination is untouched (unit/type/set, "SMOVE only notify dstset when the
        // addition is successful").
        &["SADD", "u", "a", "b"],
        &["SADD", "v", "a"],
        &["WATCH", "v"],
        &["SMOVE", "u", "v", "a"],
        &["MULTI"],
        &["SCARD", "v"],
        &["EXEC"],
        &["SISMEMBER", "u", "a"],
        &["WATCH", "u"],
        &["SMOVE", "u", "v", "b"],
        &["MULTI"],
        &["SCARD", "u"],
        &["EXEC"],
    ]);
}
