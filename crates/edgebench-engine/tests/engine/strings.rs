//! The string commands, differentially against a real redis-server (replies compared
//! exactly, errors included), plus the typed API and exact TTLs on a manual clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::support::diff::Diff;
use edgebench_engine::engine::cmd::strings::cfloat::LongDouble;
use edgebench_engine::engine::cmd::strings::{GetExTtl, SetCondition, SetOutcome, SetTtl};
use edgebench_engine::engine::{CmdError, Engine, Entry, Reply, Value};

/// A one-element list at `key` on both sides, for WRONGTYPE cases (through the typed API
/// when the engine's list commands are not there).
fn make_list(d: &mut Diff, key: &str) {
    let _ = d.both(&["RPUSH", key, "x"]);
    let now = d.engine.now_ms();
    let mut ks = d.engine.db(d.client.db).lock([key.as_bytes()], now);
    if ks.get_list(key.as_bytes()).ok().flatten().is_none() {
        let list = std::collections::VecDeque::from([b"x".to_vec()]);
        ks.insert(key.as_bytes(), Entry::new(Value::List(Box::new(list))));
    }
}

#[test]
fn get_set_and_their_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["GET", "missing"],
        &["SET", "k", "v"],
        &["GET", "k"],
        &["SET", "k", ""],
        &["GET", "k"],
        &["SET", "k"],
        &["GET"],
        &["GET", "a", "b"],
        &["SET", "k", "v", "NX"],
        &["SET", "k2", "v", "nx"],
        &["GET", "k2"],
        &["SET", "k3", "v", "XX"],
        &["GET", "k3"],
        &["SET", "k", "new", "XX"],
        &["GET", "k"],
        &["SET", "k", "v", "NX", "XX"],
        &["SET", "k", "v", "XX", "NX"],
        &["SET", "k", "v", "NX", "NX"],
        &["SET", "k", "v", "KEEPTTL", "EX", "10"],
        &["SET", "k", "v", "EX", "10", "KEEPTTL"],
        &["SET", "k", "v", "EX", "10", "PX", "100"],
        &["SET", "k", "v", "PX", "100", "EXAT", "100"],
        &["SET", "k", "v", "EXAT", "100", "PXAT", "100"],
        &["SET", "k", "v", "EX"],
        &["SET", "k", "v", "EX", "abc"],
        &["SET", "k", "v", "EX", "0"],
        &["SET", "k", "v", "EX", "-1"],
        &["SET", "k", "v", "PX", "0"],
        &["SET", "k", "v", "EXAT", "0"],
        &["SET", "k", "v", "PXAT", "-5"],
        &["SET", "k", "v", "EX", "9223372036854775"],
        &["SET", "k", "v", "EX", "9223372036854776"],
        &["SET", "k", "v", "PX", "9223372036854775807"],
        &["SET", "k", "v", "EX", "1.5"],
        &["SET", "k", "v", "PERSIST"],
        &["SET", "k", "v", "FOO"],
        &["SET", "k", "v", "EX", "100", "EX", "200"],
        &["TTL", "k"],
        &["SET", "k", "v2", "KEEPTTL"],
        &["TTL", "k"],
        &["GET", "k"],
        &["SET", "k", "v3"],
        &["TTL", "k"],
        &["SET", "k", "v", "px", "100000", "NX"],
        &["SET", "k", "v", "EXAT", "99999999999", "XX"],
        &["EXPIRETIME", "k"],
        &["SET", "k", "v", "PXAT", "99999999999999"],
        &["PEXPIRETIME", "k"],
        &["SET", "k", "v", "EXAT", "1"],
        &["GET", "k"],
        &["EXISTS", "k"],
    ]);
}

#[test]
fn set_get_option() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SET", "k", "v1", "GET"],
        &["SET", "k", "v2", "GET"],
        &["SET", "k", "v3", "NX", "GET"],
        &["GET", "k"],
        &["SET", "nokey", "v", "XX", "GET"],
        &["EXISTS", "nokey"],
        &["SET", "k", "v4", "XX", "GET", "EX", "100"],
        &["TTL", "k"],
        &["SET", "k", "v5", "GET", "KEEPTTL"],
        &["TTL", "k"],
        &["SET", "k", "v", "GET", "GET"],
        &["SET", "list", "v", "GET"],
        &["TYPE", "list"],
        &["SET", "list", "v", "GET", "EX", "0"],
        &["SET", "list", "v", "GET", "EX", "x"],
        &["SET", "list", "v"],
        &["TYPE", "list"],
        &["GET", "list"],
    ]);
}

#[test]
fn setnx_setex_psetex() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["SETNX", "k", "a"],
        &["SETNX", "k", "b"],
        &["GET", "k"],
        &["SETNX", "k"],
        &["SETEX", "k", "100", "v"],
        &["GET", "k"],
        &["TTL", "k"],
        &["SETEX", "k", "0", "v"],
        &["SETEX", "k", "-10", "v"],
        &["SETEX", "k", "abc", "v"],
        &["SETEX", "k", "9223372036854775807", "v"],
        &["SETEX", "k", "100"],
        &["PSETEX", "k", "100000", "w"],
        &["GET", "k"],
        &["TTL", "k"],
        &["PSETEX", "k", "0", "w"],
        &["PSETEX", "k", "1.5", "w"],
        &["PSETEX", "k", "9223372036854775807", "w"],
        &["SETEX", "k", "100", "v", "extra"],
        &["SETNX", "l", "v"],
        &["SETEX", "l", "100", "v"],
        &["TYPE", "l"],
    ]);
}

#[test]
fn mget_mset_msetnx() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["MSET", "a", "1", "b", "2", "c", "3"],
        &["MGET", "a", "b", "c", "missing", "a"],
        &["MSET", "a"],
        &["MSET", "a", "1", "b"],
        &["MSET"],
        &["MGET"],
        &["MSET", "a", "x", "a", "y"],
        &["GET", "a"],
        &["MGET", "a", "l", "b"],
        &["MSET", "l", "now-a-string"],
        &["GET", "l"],
        &["MSETNX", "a", "1", "new", "2"],
        &["EXISTS", "new"],
        &["MSETNX", "n1", "1", "n2", "2"],
        &["MGET", "n1", "n2"],
        &["MSETNX", "d", "1", "d", "2"],
        &["GET", "d"],
        &["MSETNX", "x", "1", "y"],
        &["MSETNX"],
        &["SET", "t", "v", "EX", "100"],
        &["MSET", "t", "w"],
        &["TTL", "t"],
    ]);
}

#[test]
fn getset_getdel_getex() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["GETSET", "k", "a"],
        &["GETSET", "k", "b"],
        &["GET", "k"],
        &["SETEX", "k", "100", "c"],
        &["GETSET", "k", "d"],
        &["TTL", "k"],
        &["GETSET", "l", "v"],
        &["GETDEL", "k"],
        &["GETDEL", "k"],
        &["EXISTS", "k"],
        &["GETDEL", "l"],
        &["GETDEL"],
        &["SET", "k", "v"],
        &["GETEX", "k"],
        &["GETEX", "missing"],
        &["GETEX", "missing", "EX", "-1"],
        &["GETEX", "missing", "FOO"],
        &["GETEX", "k", "EX", "100"],
        &["TTL", "k"],
        &["GETEX", "k", "PERSIST"],
        &["TTL", "k"],
        &["GETEX", "k", "PX", "100000"],
        &["TTL", "k"],
        &["GETEX", "k", "EXAT", "99999999999"],
        &["EXPIRETIME", "k"],
        &["GETEX", "k", "PXAT", "99999999999999"],
        &["PEXPIRETIME", "k"],
        &["GETEX", "k", "EX", "0"],
        &["GETEX", "k", "EX", "-1"],
        &["GETEX", "k", "EX", "abc"],
        &["GETEX", "k", "EX"],
        &["GETEX", "k", "PERSIST", "EX", "10"],
        &["GETEX", "k", "EX", "10", "PERSIST"],
        &["GETEX", "k", "EX", "10", "PX", "10"],
        &["GETEX", "k", "KEEPTTL"],
        &["GETEX", "k", "NX"],
        &["GETEX", "k", "GET"],
        &["GETEX", "k", "EX", "10", "EX", "20"],
        &["TTL", "k"],
        &["GETEX", "l", "EX", "10"],
        &["GETEX", "l", "EX", "-1"],
        &["GETEX", "k", "EXAT", "1"],
        &["EXISTS", "k"],
        &["SET", "k", "v"],
        &["GETEX", "k", "PXAT", "1"],
        &["GET", "k"],
    ]);
}

#[test]
fn append_strlen_getrange_setrange() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["APPEND", "k", "Hello"],
        &["APPEND", "k", " World"],
        &["GET", "k"],
        &["APPEND", "k", ""],
        &["STRLEN", "k"],
        &["STRLEN", "missing"],
        &["APPEND", "l", "x"],
        &["STRLEN", "l"],
        &["GETRANGE", "k", "0", "4"],
        &["GETRANGE", "k", "-5", "-1"],
        &["GETRANGE", "k", "0", "-1"],
        &["GETRANGE", "k", "0", "100"],
        &["GETRANGE", "k", "-100", "2"],
        &["GETRANGE", "k", "5", "2"],
        &["GETRANGE", "k", "-1", "-5"],
        &["GETRANGE", "k", "-1", "-1"],
        &["GETRANGE", "k", "100", "200"],
        &[
            "GETRANGE",
            "k",
            "-9223372036854775808",
            "9223372036854775807",
        ],
        &[
            "GETRANGE",
            "k",
            "9223372036854775807",
            "-9223372036854775808",
        ],
        &["GETRANGE", "missing", "0", "-1"],
        &["GETRANGE", "k", "a", "1"],
        &["GETRANGE", "k", "0", "b"],
        &["GETRANGE", "l", "0", "1"],
        &["GETRANGE", "l", "x", "1"],
        &["SET", "empty", ""],
        &["GETRANGE", "empty", "0", "-1"],
        &["GETRANGE", "empty", "-1", "0"],
        &["SET", "n", "12345"],
        &["GETRANGE", "n", "1", "2"],
        &["SETRANGE", "k", "6", "Redis"],
        &["GET", "k"],
        &["SETRANGE", "k", "20", "!"],
        &["GET", "k"],
        &["SETRANGE", "new", "3", "abc"],
        &["GET", "new"],
        &["SETRANGE", "none", "5", ""],
        &["EXISTS", "none"],
        &["SETRANGE", "k", "100", ""],
        &["SETRANGE", "k", "-1", "x"],
        &["SETRANGE", "k", "abc", "x"],
        &["SETRANGE", "k", "536870911", "xx"],
        &["SETRANGE", "k", "536870912", "x"],
        &["SETRANGE", "k", "9223372036854775807", "x"],
        &["SETRANGE", "l", "0", "x"],
        &["SETRANGE", "l", "0", ""],
        &["SETRANGE", "l", "-1", ""],
        &["SETRANGE", "k"],
        &["SETEX", "t", "100", "abc"],
        &["APPEND", "t", "def"],
        &["SETRANGE", "t", "0", "X"],
        &["TTL", "t"],
        &["GET", "t"],
    ]);
}

#[test]
fn incr_decr_family() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["INCR", "n"],
        &["INCR", "n"],
        &["DECR", "n"],
        &["DECR", "m"],
        &["INCRBY", "n", "10"],
        &["INCRBY", "n", "-20"],
        &["DECRBY", "n", "5"],
        &["DECRBY", "n", "-5"],
        &["INCRBY", "n", "abc"],
        &["INCRBY", "n", "1.5"],
        &["INCRBY", "n", "+1"],
        &["INCRBY", "n", " 1"],
        &["INCRBY", "n", "9223372036854775808"],
        &["DECRBY", "n", "-9223372036854775808"],
        &["SET", "big", "9223372036854775806"],
        &["INCR", "big"],
        &["INCR", "big"],
        &["GET", "big"],
        &["SET", "small", "-9223372036854775807"],
        &["DECR", "small"],
        &["DECR", "small"],
        &["DECRBY", "small", "9223372036854775807"],
        &["INCRBY", "small", "-1"],
        &["SET", "s", "abc"],
        &["INCR", "s"],
        &["SET", "s", "007"],
        &["INCR", "s"],
        &["SET", "s", " 7"],
        &["INCR", "s"],
        &["SET", "s", "7 "],
        &["INCR", "s"],
        &["SET", "s", "-0"],
        &["INCR", "s"],
        &["SET", "s", "+7"],
        &["INCR", "s"],
        &["SET", "s", "1e3"],
        &["INCR", "s"],
        &["SET", "s", ""],
        &["INCR", "s"],
        &["SET", "s", "99999999999999999999"],
        &["INCR", "s"],
        &["INCR", "l"],
        &["INCRBY", "l", "abc"],
        &["DECRBY", "l", "1"],
        &["INCR"],
        &["INCRBY", "n"],
        &["SETEX", "t", "100", "5"],
        &["INCR", "t"],
        &["INCRBY", "t", "10"],
        &["TTL", "t"],
        &["GET", "t"],
        &["SET", "z", "0"],
        &["DECRBY", "z", "9223372036854775807"],
        &["DECR", "z"],
        &["DECR", "z"],
    ]);
}

#[test]
fn incrbyfloat_in_long_double() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["INCRBYFLOAT", "f", "0.1"],
        &["INCRBYFLOAT", "f", "0.2"],
        &["INCRBYFLOAT", "f", "10.5"],
        &["INCRBYFLOAT", "f", "-10.8"],
        &["INCRBYFLOAT", "f", "1e30"],
        &["INCRBYFLOAT", "f", "-1e30"],
        &["SET", "f", "10.50"],
        &["INCRBYFLOAT", "f", "0.1"],
        &["INCRBYFLOAT", "f", "5.0e3"],
        &["INCRBYFLOAT", "f", "2.0e2"],
        &["INCRBYFLOAT", "f", "-5200.6"],
        &["INCRBYFLOAT", "g", "3.814697265625e-6"],
        &["INCRBYFLOAT", "h", "1e-20"],
        &["INCRBYFLOAT", "h", "-1e-20"],
        &["INCRBYFLOAT", "h2", "-1e-20"],
        &["INCRBYFLOAT", "i", "1.5e17"],
        &["INCRBYFLOAT", "j", "12345678901234567890.123"],
        &["INCRBYFLOAT", "j", "0.5"],
        &["INCRBYFLOAT", "k", "0x10"],
        &["INCRBYFLOAT", "k", "0x1p-2"],
        &["INCRBYFLOAT", "k", "-0X1.8P1"],
        &["INCRBYFLOAT", "k", "1e4000"],
        &["GET", "k"],
        &["INCRBYFLOAT", "k", "1e4933"],
        &["INCRBYFLOAT", "k", "1e-4950"],
        &["INCRBYFLOAT", "k", "1e-4952"],
        &["INCRBYFLOAT", "k", "inf"],
        &["INCRBYFLOAT", "k", "-inf"],
        &["INCRBYFLOAT", "k", "nan"],
        &["INCRBYFLOAT", "k", "abc"],
        &["INCRBYFLOAT", "k", ""],
        &["INCRBYFLOAT", "k", " 1"],
        &["INCRBYFLOAT", "k", "1 "],
        &["INCRBYFLOAT", "k", "1e"],
        &["INCRBYFLOAT", "k", ".5"],
        &["INCRBYFLOAT", "k", "5."],
        &["INCRBYFLOAT", "k", "+1"],
        &["SET", "s", "abc"],
        &["INCRBYFLOAT", "s", "1"],
        &["INCRBYFLOAT", "s", "abc"],
        &["SET", "s", "1e5"],
        &["INCRBYFLOAT", "s", "1"],
        &["SET", "s", "inf"],
        &["INCRBYFLOAT", "s", "1"],
        &["INCRBYFLOAT", "s", "-inf"],
        &["SET", "s", " 1"],
        &["INCRBYFLOAT", "s", "1"],
        &["INCRBYFLOAT", "l", "abc"],
        &["INCRBYFLOAT", "l"],
        &["SETEX", "t", "100", "1.5"],
        &["INCRBYFLOAT", "t", "1"],
        &["TTL", "t"],
        &["SET", "n", "5"],
        &["INCRBYFLOAT", "n", "-5"],
        &["INCR", "n"],
        &["INCRBYFLOAT", "n", "1.0"],
        &["INCR", "n"],
    ]);
}

#[test]
fn incrbyfloat_matches_redis_on_many_sums() {
    let mut d = Diff::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..600 {
        let r = next();
        let mantissa = (r % 2_000_000) as i64 - 1_000_000;
        let exp = (r >> 32) % 41;
        let incr = match round % 5 {
            0 => format!("{mantissa}e-{exp}"),
            1 => format!("{}.{}", mantissa / 1000, (r >> 20) % 1000),
            2 => format!("{mantissa}e{}", exp % 25),
            3 => format!(
                "{}.{:019}e{}",
                r % 10,
                next() % 10_000_000_000_000_000_000,
                exp as i64 - 20
            ),
            _ => format!("-0x{:x}p-{}", r >> 40, exp),
        };
        let key = format!("k{}", round % 7);
        d.check(&[&["INCRBYFLOAT", &key, &incr]]);
    }
}

#[test]
fn wrong_arity_everywhere() {
    let mut d = Diff::new();
    d.check(&[
        &["SETNX", "k"],
        &["SETEX", "k", "1"],
        &["PSETEX", "k", "1"],
        &["GETSET", "k"],
        &["GETDEL", "k", "x"],
        &["GETEX"],
        &["APPEND", "k"],
        &["STRLEN"],
        &["INCR", "k", "1"],
        &["DECR"],
        &["DECRBY", "k"],
        &["INCRBYFLOAT", "k"],
        &["GETRANGE", "k", "0"],
        &["SETRANGE", "k", "0"],
        &["MGET"],
        &["MSETNX", "k"],
    ]);
}

#[test]
fn strings_inside_multi() {
    let mut d = Diff::new();
    make_list(&mut d, "l");
    d.check(&[
        &["MULTI"],
        &["SET", "a", "1"],
        &["INCR", "a"],
        &["INCR", "l"],
        &["MGET", "a", "l"],
        &["EXEC"],
    ]);
}

fn engine_at(start_ms: u64) -> (Engine, Arc<AtomicU64>) {
    let clock = Arc::new(AtomicU64::new(start_ms));
    (Engine::with_clock(clock.clone()), clock)
}

fn run(engine: &Engine, client: &mut edgebench_engine::engine::Client, args: &[&str]) -> Reply {
    let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    engine.execute(client, &argv)
}

#[test]
fn string_expiry_is_exact_on_a_manual_clock() {
    let (engine, clock) = engine_at(1_000_000);
    let mut c = engine.client();
    assert_eq!(
        run(&engine, &mut c, &["SET", "k", "v", "PX", "1500"]),
        Reply::ok()
    );
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(1500));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(2)); // 1.5 s rounds up
    clock.store(1_000_499, Ordering::Relaxed);
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(1001));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(1));
    clock.store(1_001_499, Ordering::Relaxed);
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(1));
    assert_eq!(run(&engine, &mut c, &["TTL", "k"]), Reply::Int(0));
    clock.store(1_001_500, Ordering::Relaxed);
    assert_eq!(run(&engine, &mut c, &["GET", "k"]), Reply::Nil);
    assert_eq!(run(&engine, &mut c, &["PTTL", "k"]), Reply::Int(-2));

    // SETEX, then INCR keeps the TTL, SET clears it, KEEPTTL keeps it.
    run(&engine, &mut c, &["SETEX", "n", "10", "1"]);
    assert_eq!(run(&engine, &mut c, &["INCR", "n"]), Reply::Int(2));
    assert_eq!(run(&engine, &mut c, &["PTTL", "n"]), Reply::Int(10_000));
    assert_eq!(
        run(&engine, &mut c, &["SET", "n", "x", "KEEPTTL"]),
        Reply::ok()
    );
    assert_eq!(run(&engine, &mut c, &["PTTL", "n"]), Reply::Int(10_000));
    run(&engine, &mut c, &["SET", "n", "y"]);
    assert_eq!(run(&engine, &mut c, &["PTTL", "n"]), Reply::Int(-1));

    // EXAT/PXAT are absolute; GETEX PXAT in the past deletes after replying.
    let now = 1_001_500u64;
    let at = (now + 5_000).to_string();
    run(&engine, &mut c, &["SET", "a", "v", "PXAT", &at]);
    assert_eq!(run(&engine, &mut c, &["PTTL", "a"]), Reply::Int(5_000));
    assert_eq!(
        run(&engine, &mut c, &["PEXPIRETIME", "a"]),
        Reply::Int(now as i64 + 5_000)
    );
    let past = (now - 1).to_string();
    assert_eq!(
        run(&engine, &mut c, &["GETEX", "a", "PXAT", &past]),
        Reply::bulk(b"v")
    );
    assert_eq!(run(&engine, &mut c, &["EXISTS", "a"]), Reply::Int(0));

    // Nobody touches "lazy": the active cycle removes it once its time has come.
    run(&engine, &mut c, &["PSETEX", "lazy", "100", "v"]);
    assert_eq!(engine.expire_cycle(), 0);
    clock.store(now + 100, Ordering::Relaxed);
    assert_eq!(engine.expire_cycle(), 1);
    let mut ks = engine.db(0).lock_all(now + 100);
    assert!(ks.keys().iter().all(|k| &k[..] != b"lazy"));
}

#[test]
fn typed_string_api() {
    let (engine, _clock) = engine_at(10_000);
    let db = engine.db(0);
    let mut ks = db.lock([&b"k"[..], b"n", b"f", b"r", b"missing"], 10_000);
    ks.set(b"k", b"v".to_vec());
    assert_eq!(ks.get_str(b"k").unwrap().map(|v| &v[..]), Some(&b"v"[..]));
    assert_eq!(
        ks.set_with(
            b"k",
            b"w".to_vec(),
            SetCondition::IfMissing,
            SetTtl::Clear,
            true
        ),
        Ok(SetOutcome {
            written: false,
            old: Some(b"v".to_vec())
        })
    );
    assert_eq!(
        ks.set_with(
            b"k",
            b"w".to_vec(),
            SetCondition::IfExists,
            SetTtl::At(20_000),
            false
        ),
        Ok(SetOutcome {
            written: true,
            old: None
        })
    );
    assert_eq!(ks.get(b"k").and_then(|e| e.expires_at_ms()), Some(20_000));
    assert_eq!(ks.getex(b"k", GetExTtl::Persist), Ok(Some(b"w".to_vec())));
    assert_eq!(ks.get(b"k").and_then(|e| e.expires_at_ms()), None);
    assert_eq!(ks.append(b"k", b"xyz"), Ok(4));
    assert_eq!(ks.strlen(b"k"), Ok(4));
    assert_eq!(ks.getrange(b"k", 1, -2), Ok(b"xy".to_vec()));
    assert_eq!(ks.setrange(b"k", 6, b"!"), Ok(7));
    assert_eq!(
        ks.get_str(b"k").unwrap().cloned(),
        Some(b"wxyz\0\0!".to_vec())
    );
    assert_eq!(ks.incr_by(b"n", 41), Ok(41));
    assert_eq!(ks.incr_by(b"n", i64::MAX), Err(CmdError::Overflow));
    assert_eq!(ks.incr_by(b"k", 1), Err(CmdError::NotInteger));
    let tenth = LongDouble::parse(b"0.1").unwrap();
    assert_eq!(ks.incr_by_float(b"f", tenth), Ok(b"0.1".to_vec()));
    assert_eq!(
        ks.incr_by_float(b"f", LongDouble::parse(b"0.2").unwrap()),
        Ok(b"0.3".to_vec())
    );
    assert_eq!(
        ks.incr_by_float(b"f", LongDouble::from_f64(0.5)),
        Ok(b"0.8".to_vec())
    );
    assert_eq!(ks.getset(b"n", b"1".to_vec()), Ok(Some(b"41".to_vec())));
    assert_eq!(ks.getdel(b"n"), Ok(Some(b"1".to_vec())));
    assert_eq!(ks.getdel(b"n"), Ok(None));
    assert!(ks.msetnx(&[(&b"r"[..], &b"1"[..])]));
    assert!(!ks.msetnx(&[(&b"r"[..], &b"2"[..])]));
    assert_eq!(
        ks.mget(&[&b"r"[..], b"missing"]),
        vec![Some(b"1".to_vec()), None]
    );
}
