//! Lists, differentially against a real redis-server, plus the typed API.

use crate::support::diff::Diff;
use edgebench_engine::engine::cmd::list::{parse_timeout_secs, ListEnd, LposOptions};
use edgebench_engine::engine::{CmdError, Engine};

#[test]
fn pushes_and_pops() {
    let mut d = Diff::new();
    d.check(&[
        &["LPUSH", "l", "a", "b", "c"],
        &["RPUSH", "l", "x", "y"],
        &["LRANGE", "l", "0", "-1"],
        &["LPUSHX", "nolist", "a"],
        &["RPUSHX", "nolist", "a"],
        &["EXISTS", "nolist"],
        &["LPUSHX", "l", "h1", "h2"],
        &["RPUSHX", "l", "t1"],
        &["LRANGE", "l", "0", "-1"],
        &["LPOP", "l"],
        &["RPOP", "l"],
        &["LPOP", "l", "2"],
        &["RPOP", "l", "2"],
        &["LPOP", "l", "0"],
        &["RPOP", "l", "0"],
        &["LRANGE", "l", "0", "-1"],
        &["LPOP", "l", "100"],
        &["EXISTS", "l"],
        // Missing key: nil without a count, nil array with one (Redis 7.0).
        &["LPOP", "l"],
        &["RPOP", "l"],
        &["LPOP", "l", "3"],
        &["RPOP", "l", "0"],
        &["RPUSH", "r", "1", "2", "3"],
        &["RPOP", "r", "5"],
        &["EXISTS", "r"],
        // Count errors: parsed before the key is looked up.
        &["LPOP", "nokey", "-1"],
        &["LPOP", "nokey", "abc"],
        &["RPOP", "nokey", "1.5"],
        &["LPOP", "nokey", "1", "2"],
        &["RPOP", "nokey", "1", "2"],
        &["LPUSH", "l"],
        &["RPUSHX", "l"],
        &["LPOP"],
    ]);
}

#[test]
fn wrong_types() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "s", "v"],
        &["LPUSH", "s", "a"],
        &["RPUSH", "s", "a"],
        &["LPUSHX", "s", "a"],
        &["RPUSHX", "s", "a"],
        &["LPOP", "s"],
        &["RPOP", "s", "2"],
        &["LPOP", "s", "0"],
        &["LPOP", "s", "-1"],
        &["LRANGE", "s", "0", "-1"],
        &["LRANGE", "s", "x", "-1"],
        &["LLEN", "s"],
        &["LINDEX", "s", "0"],
        &["LINDEX", "s", "x"],
        &["LSET", "s", "0", "v"],
        &["LSET", "s", "x", "v"],
        &["LREM", "s", "0", "v"],
        &["LTRIM", "s", "0", "1"],
        &["LINSERT", "s", "BEFORE", "a", "b"],
        &["LINSERT", "s", "middle", "a", "b"],
        &["LPOS", "s", "a"],
        &["LPOS", "s", "a", "RANK", "0"],
        &["LMOVE", "s", "d", "LEFT", "RIGHT"],
        &["RPUSH", "l", "a"],
        &["LMOVE", "l", "s", "LEFT", "RIGHT"],
        &["RPOPLPUSH", "l", "s"],
        &["LRANGE", "l", "0", "-1"],
        &["RPOPLPUSH", "s", "l"],
        &["BLPOP", "s", "0"],
        &["BRPOP", "nokey", "s", "l", "0"],
        &["BLMOVE", "s", "l", "LEFT", "LEFT", "0"],
        &["BLMOVE", "l", "s", "LEFT", "LEFT", "0"],
        &["GET", "s"],
        &["LRANGE", "l", "0", "-1"],
    ]);
}

#[test]
fn ranges_and_indexes() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "l", "a", "b", "c", "d", "e"],
        &["LLEN", "l"],
        &["LLEN", "nokey"],
        &["LRANGE", "l", "0", "-1"],
        &["LRANGE", "l", "1", "3"],
        &["LRANGE", "l", "-3", "-2"],
        &["LRANGE", "l", "-100", "100"],
        &["LRANGE", "l", "3", "1"],
        &["LRANGE", "l", "5", "10"],
        &["LRANGE", "l", "-1", "-1"],
        &["LRANGE", "l", "0", "-6"],
        &["LRANGE", "l", "-9223372036854775808", "9223372036854775807"],
        &["LRANGE", "l", "9223372036854775807", "-9223372036854775808"],
        &["LRANGE", "l", "0", "9223372036854775808"],
        &["LRANGE", "l", "a", "1"],
        &["LRANGE", "l", "1", "b"],
        &["LRANGE", "nokey", "0", "-1"],
        &["LRANGE", "nokey", "x", "-1"],
        &["LINDEX", "l", "0"],
        &["LINDEX", "l", "4"],
        &["LINDEX", "l", "5"],
        &["LINDEX", "l", "-1"],
        &["LINDEX", "l", "-5"],
        &["LINDEX", "l", "-6"],
        &["LINDEX", "l", "-9223372036854775808"],
        &["LINDEX", "l", "9223372036854775807"],
        &["LINDEX", "l", "x"],
        &["LINDEX", "nokey", "0"],
        &["LINDEX", "nokey", "x"],
        &["LSET", "l", "0", "A"],
        &["LSET", "l", "-1", "E"],
        &["LSET", "l", "5", "x"],
        &["LSET", "l", "-6", "x"],
        &["LSET", "l", "-9223372036854775808", "x"],
        &["LSET", "l", "x", "x"],
        &["LSET", "nokey", "0", "x"],
        &["LSET", "nokey", "x", "x"],
        &["LRANGE", "l", "0", "-1"],
        &["LINDEX", "l"],
        &["LSET", "l", "0"],
    ]);
}

#[test]
fn lrem_ltrim_linsert() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"],
        &["LREM", "l", "1", "a"],
        &["LRANGE", "l", "0", "-1"],
        &["LREM", "l", "-2", "a"],
        &["LRANGE", "l", "0", "-1"],
        &["LREM", "l", "0", "b"],
        &["LRANGE", "l", "0", "-1"],
        &["LREM", "l", "5", "zzz"],
        &["LREM", "l", "-9223372036854775808", "a"],
        &["LRANGE", "l", "0", "-1"],
        &["LREM", "l", "0", "c"],
        &["EXISTS", "l"],
        &["LREM", "l", "0", "c"],
        &["LREM", "l", "x", "c"],
        &["LREM", "l", "1"],
        &["RPUSH", "t", "0", "1", "2", "3", "4", "5"],
        &["LTRIM", "t", "1", "-2"],
        &["LRANGE", "t", "0", "-1"],
        &["LTRIM", "t", "-100", "100"],
        &["LRANGE", "t", "0", "-1"],
        &["LTRIM", "t", "1", "1"],
        &["LRANGE", "t", "0", "-1"],
        &["LTRIM", "t", "x", "1"],
        &["LTRIM", "t", "0", "x"],
        &["LTRIM", "t", "2", "1"],
        &["EXISTS", "t"],
        &["LTRIM", "t", "0", "-1"],
        &["RPUSH", "t", "a", "b"],
        &["LTRIM", "t", "5", "10"],
        &["EXISTS", "t"],
        &["RPUSH", "t", "a", "b"],
        &["LTRIM", "t", "0", "-3"],
        &["EXISTS", "t"],
        &["RPUSH", "i", "a", "b", "c", "b"],
        &["LINSERT", "i", "BEFORE", "b", "X"],
        &["LINSERT", "i", "after", "b", "Y"],
        &["LINSERT", "i", "AFTER", "c", "Z"],
        &["LINSERT", "i", "before", "nope", "W"],
        &["LINSERT", "i", "sideways", "b", "W"],
        &["LINSERT", "nokey", "BEFORE", "b", "W"],
        &["LINSERT", "nokey", "sideways", "b", "W"],
        &["EXISTS", "nokey"],
        &["LRANGE", "i", "0", "-1"],
        &["LINSERT", "i", "BEFORE", "b"],
    ]);
}

#[test]
fn lpos_options_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"],
        &["LPOS", "l", "c"],
        &["LPOS", "l", "zz"],
        &["LPOS", "l", "c", "RANK", "2"],
        &["LPOS", "l", "c", "RANK", "-1"],
        &["LPOS", "l", "c", "RANK", "-3"],
        &["LPOS", "l", "c", "RANK", "4"],
        &["LPOS", "l", "c", "RANK", "-9223372036854775808"],
        &[
            "LPOS",
            "l",
            "c",
            "RANK",
            "-9223372036854775808",
            "COUNT",
            "2",
        ],
        &[
            "LPOS",
            "l",
            "c",
            "RANK",
            "-9223372036854775808",
            "COUNT",
            "0",
        ],
        &[
            "LPOS",
            "l",
            "c",
            "RANK",
            "9223372036854775807",
            "COUNT",
            "0",
        ],
        &["LPOS", "l", "c", "COUNT", "2"],
        &["LPOS", "l", "c", "COUNT", "0"],
        &["LPOS", "l", "c", "COUNT", "0", "RANK", "2"],
        &["LPOS", "l", "c", "COUNT", "0", "RANK", "-2"],
        &["LPOS", "l", "c", "COUNT", "1", "RANK", "-1"],
        &["LPOS", "l", "zz", "COUNT", "2"],
        &["LPOS", "l", "c", "MAXLEN", "3"],
        &["LPOS", "l", "c", "MAXLEN", "2"],
        &["LPOS", "l", "c", "MAXLEN", "1", "RANK", "-1"],
        &["LPOS", "l", "c", "MAXLEN", "7", "COUNT", "0"],
        &["LPOS", "l", "c", "MAXLEN", "0", "COUNT", "0", "RANK", "-1"],
        &["LPOS", "l", "c", "rank", "1", "rank", "2"],
        &["LPOS", "nokey", "c"],
        &["LPOS", "nokey", "c", "COUNT", "0"],
        &["LPOS", "nokey", "c", "RANK", "0"],
        &["LPOS", "l", "c", "RANK", "0"],
        &["LPOS", "l", "c", "RANK", "x"],
        &["LPOS", "l", "c", "COUNT", "-1"],
        &["LPOS", "l", "c", "COUNT", "x"],
        &["LPOS", "l", "c", "MAXLEN", "-1"],
        &["LPOS", "l", "c", "MAXLEN", "x"],
        &["LPOS", "l", "c", "RANK"],
        &["LPOS", "l", "c", "FOO", "1"],
        &["LPOS", "l", "c", "COUNT", "-1", "RANK", "0"],
        &["LPOS", "l", "c", "RANK", "0", "COUNT", "-1"],
        &["LPOS", "l"],
    ]);
}

#[test]
fn lmove_and_rpoplpush() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "src", "a", "b", "c"],
        &["LMOVE", "src", "dst", "LEFT", "RIGHT"],
        &["LMOVE", "src", "dst", "right", "left"],
        &["LMOVE", "src", "dst", "LEFT", "LEFT"],
        &["LMOVE", "src", "dst", "RIGHT", "RIGHT"],
        &["EXISTS", "src"],
        &["LRANGE", "dst", "0", "-1"],
        &["LMOVE", "dst", "dst", "LEFT", "RIGHT"],
        &["LRANGE", "dst", "0", "-1"],
        &["LMOVE", "dst", "dst", "RIGHT", "LEFT"],
        &["LMOVE", "dst", "dst", "LEFT", "LEFT"],
        &["LRANGE", "dst", "0", "-1"],
        &["LMOVE", "nokey", "dst", "LEFT", "RIGHT"],
        &["LMOVE", "nokey", "dst", "UP", "RIGHT"],
        &["LMOVE", "dst", "x", "LEFT", "DOWN"],
        &["LMOVE", "dst", "x", "UP", "DOWN"],
        &["RPOPLPUSH", "dst", "other"],
        &["RPOPLPUSH", "dst", "other"],
        &["RPOPLPUSH", "dst", "other"],
        &["EXISTS", "dst"],
        &["RPOPLPUSH", "dst", "other"],
        &["LRANGE", "other", "0", "-1"],
        &["RPOPLPUSH", "other", "other"],
        &["LRANGE", "other", "0", "-1"],
        &["RPUSH", "one", "x"],
        &["RPOPLPUSH", "one", "one"],
        &["LRANGE", "one", "0", "-1"],
        &["LMOVE", "one", "one", "LEFT", "RIGHT"],
        &["LRANGE", "one", "0", "-1"],
        &["LMOVE", "one", "two", "LEFT", "RIGHT"],
        &["EXISTS", "one"],
        &["LRANGE", "two", "0", "-1"],
        &["LMOVE", "two", "one", "LEFT"],
        &["RPOPLPUSH", "two"],
    ]);
}

#[test]
fn lmpop_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "l1", "a", "b", "c", "d"],
        &["RPUSH", "l2", "x"],
        &["SET", "str", "v"],
        &["LMPOP", "1", "l1", "LEFT"],
        &["LMPOP", "1", "l1", "right", "COUNT", "2"],
        &["LMPOP", "2", "nokey", "l2", "LEFT", "COUNT", "10"],
        &["EXISTS", "l2"],
        &["LMPOP", "2", "nokey", "l2", "LEFT"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT", "9223372036854775807"],
        &["RPUSH", "l1", "a", "b"],
        // The first existing key decides, even of the wrong type.
        &["LMPOP", "2", "str", "l1", "LEFT"],
        &["LMPOP", "2", "l1", "str", "RIGHT"],
        // Arguments, in Redis's order.
        &["LMPOP", "0", "l1", "LEFT"],
        &["LMPOP", "-1", "l1", "LEFT"],
        &["LMPOP", "x", "l1", "LEFT"],
        &["LMPOP", "2", "l1", "LEFT"],
        &["LMPOP", "9223372036854775807", "l1", "LEFT"],
        &["LMPOP", "1", "l1", "MIN"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT", "0"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT", "-1"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT", "x"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT"],
        &["LMPOP", "1", "l1", "LEFT", "COUNT", "1", "COUNT", "1"],
        &["LMPOP", "1", "l1", "LEFT", "junk"],
        &["LMPOP", "1", "l1"],
        &["LMPOP", "1"],
        // BLMPOP with data there, or nothing (the timeout reply at once, in-process).
        &["BLMPOP", "0", "1", "l1", "RIGHT", "COUNT", "5"],
        &["BLMPOP", "0.01", "2", "nokey", "l1", "LEFT"],
        &["BLMPOP", "-1", "1", "l1", "LEFT"],
        &["BLMPOP", "x", "1", "l1", "LEFT"],
        &["BLMPOP", "x", "0", "l1", "LEFT"],
        &["BLMPOP", "x", "1", "l1", "UP"],
        &["BLMPOP", "0", "1", "str", "LEFT"],
        &["BLMPOP", "0", "1", "l1"],
        &["BLMPOP", "0", "1"],
    ]);
}

#[test]
fn brpoplpush_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "src", "a", "b", "c"],
        &["SET", "str", "v"],
        &["BRPOPLPUSH", "src", "dst", "0"],
        &["BRPOPLPUSH", "src", "src", "0"],
        &["LRANGE", "src", "0", "-1"],
        &["LRANGE", "dst", "0", "-1"],
        &["BRPOPLPUSH", "nokey", "dst", "0.01"],
        // The timeout first, then the source's type, then the destination's.
        &["BRPOPLPUSH", "src", "dst", "-1"],
        &["BRPOPLPUSH", "str", "dst", "x"],
        &["BRPOPLPUSH", "str", "dst", "0"],
        &["BRPOPLPUSH", "src", "str", "0"],
        &["BRPOPLPUSH", "nokey", "str", "0.01"],
        &["LRANGE", "src", "0", "-1"],
        &["BRPOPLPUSH", "src", "dst"],
        &["MULTI"],
        // Inside MULTI even a timeout of 0 replies at once.
        &["BRPOPLPUSH", "nokey", "dst", "0"],
        &["BLMPOP", "0", "1", "nokey", "LEFT"],
        &["EXEC"],
    ]);
}

#[test]
fn blocking_commands_when_an_element_is_there() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "b", "1", "2", "3"],
        &["RPUSH", "c", "x"],
        &["BLPOP", "nokey", "b", "c", "0"],
        &["BRPOP", "nokey", "b", "c", "1"],
        &["BLPOP", "b", "0.5"],
        &["EXISTS", "b"],
        &["BRPOP", "b", "c", "0"],
        &["EXISTS", "c"],
        &["RPUSH", "src", "a", "b"],
        &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"],
        &["BLMOVE", "src", "dst", "RIGHT", "LEFT", "1.5"],
        &["EXISTS", "src"],
        &["LRANGE", "dst", "0", "-1"],
        &["BLMOVE", "dst", "dst", "LEFT", "RIGHT", "0"],
        &["LRANGE", "dst", "0", "-1"],
        // Timeout errors, with and without an element available.
        &["BLPOP", "dst", "-1"],
        &["BLPOP", "dst", "abc"],
        &["BLPOP", "dst", "inf"],
        &["BLPOP", "dst", "1e300"],
        &["BLPOP", "dst", " 1"],
        &["BLPOP", "dst", "nan"],
        &["BRPOP", "nokey", "-0.5"],
        &["BLMOVE", "dst", "x", "LEFT", "RIGHT", "-1"],
        &["BLMOVE", "dst", "x", "UP", "RIGHT", "-1"],
        &["BLMOVE", "dst", "x", "LEFT", "DOWN", "abc"],
        &["BLMOVE", "nokey", "x", "LEFT", "RIGHT", "abc"],
        &["BLPOP", "dst", "0x10"],
        &["BRPOP", "dst", "-0.0001"],
        &["BLPOP", "k"],
        &["BLMOVE", "a", "b", "LEFT", "RIGHT"],
        &["LRANGE", "dst", "0", "-1"],
    ]);
}

#[test]
fn blocking_commands_time_out_at_once_inside_multi() {
    // Redis never blocks inside MULTI: it replies as on timeout, which is what the engine
    // replies until the server adds the waiting.
    let mut d = Diff::new();
    d.check(&[
        &["MULTI"],
        &["BLPOP", "nokey", "0"],
        &["BRPOP", "nokey", "other", "1"],
        &["BLMOVE", "nokey", "dst", "LEFT", "RIGHT", "0"],
        &["RPUSH", "l", "v"],
        &["BLPOP", "nokey", "l", "0"],
        &["BLPOP", "l", "0"],
        &["EXEC"],
    ]);
}

#[test]
fn typed_api() {
    let engine = Engine::new();
    let db = engine.db(0);
    let mut ks = db.lock([&b"l"[..], b"m"], engine.now_ms());
    assert_eq!(ks.rpush(b"l", &[b"a", b"b", b"c", b"b"]), Ok(4));
    assert_eq!(ks.lpush(b"l", &[b"z"]), Ok(5));
    // Only the locked keys' shards may be touched: "l" and "m".
    assert_eq!(ks.list_push(b"m", ListEnd::Left, [&b"x"[..]], true), Ok(0));
    assert!(!ks.exists(b"m"));
    assert_eq!(ks.llen(b"l"), Ok(5));
    assert_eq!(
        ks.lrange(b"l", 0, -1).unwrap(),
        vec![
            b"z".to_vec(),
            b"a".to_vec(),
            b"b".to_vec(),
            b"c".to_vec(),
            b"b".to_vec()
        ]
    );
    assert_eq!(ks.lindex(b"l", -1), Ok(Some(b"b".to_vec())));
    assert_eq!(
        ks.lpos(
            b"l",
            b"b",
            LposOptions {
                rank: -1,
                count: Some(0),
                maxlen: 0
            }
        ),
        Ok(vec![4, 2])
    );
    assert_eq!(ks.lpos(b"l", b"b", LposOptions::default()), Ok(vec![2]));
    assert_eq!(ks.lrem(b"l", -1, b"b"), Ok(1));
    assert_eq!(ks.lset(b"l", 9, b"x"), Err(CmdError::IndexOutOfRange));
    assert_eq!(ks.lset(b"m", 0, b"x"), Err(CmdError::NoSuchKey));
    assert_eq!(ks.lset(b"l", -1, b"c"), Ok(()));
    assert_eq!(ks.ltrim(b"l", 0, -1), Ok(()));
    assert_eq!(ks.linsert(b"l", true, b"c", b"C"), Ok(5));
    assert_eq!(ks.linsert(b"l", true, b"nope", b"C"), Ok(-1));
    assert_eq!(
        ks.lmove(b"l", b"m", ListEnd::Right, ListEnd::Left),
        Ok(Some(b"c".to_vec()))
    );
    assert_eq!(ks.lpop(b"l"), Ok(Some(b"z".to_vec())));
    assert_eq!(ks.rpop(b"l"), Ok(Some(b"C".to_vec())));
    assert_eq!(
        ks.list_pop(b"l", ListEnd::Left, 10),
        Ok(Some(vec![b"a".to_vec(), b"b".to_vec()]))
    );
    assert!(!ks.exists(b"l"));
    assert_eq!(ks.list_pop(b"l", ListEnd::Left, 10), Ok(None));
    assert_eq!(
        ks.list_pop_first(&[b"l", b"m"], ListEnd::Left),
        Ok(Some((1, b"c".to_vec())))
    );
    assert_eq!(ks.list_pop_first(&[b"l", b"m"], ListEnd::Left), Ok(None));
    assert_eq!(parse_timeout_secs(b"2.5"), Ok(2500));
}
