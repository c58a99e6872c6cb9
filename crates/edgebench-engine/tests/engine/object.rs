//! OBJECT, MEMORY, TOUCH, SWAPDB and the encoding thresholds of CONFIG, differentially
//! against a real redis-server: OBJECT ENCODING across every threshold (defaults and
//! CONFIG SET ones), one-way conversions, and the string encodings.

use crate::support::diff::Diff;

fn enc(d: &mut Diff, key: &str) {
    d.check(&[&["OBJECT", "ENCODING", key]]);
}

#[test]
fn object_subcommands_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "s", "5"],
        &["SET", "big", "10000"],
        &["SET", "neg", "-1"],
        &["OBJECT", "REFCOUNT", "s"],
        &["OBJECT", "REFCOUNT", "big"],
        &["OBJECT", "REFCOUNT", "neg"],
        &["OBJECT", "REFCOUNT", "missing"],
        &["OBJECT", "ENCODING", "missing"],
        &["SET", "word", "hello"],
        &["OBJECT", "IDLETIME", "word"],
        &["OBJECT", "IDLETIME", "missing"],
        &["OBJECT", "FREQ", "s"],
        &["OBJECT", "FREQ", "missing"],
        &["OBJECT", "HELP"],
        &["OBJECT", "help", "x"],
        &["OBJECT", "foo", "s"],
        &["OBJECT", "ENCODING"],
        &["OBJECT", "ENCODING", "s", "x"],
        &["OBJECT"],
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
        &["SET", "fresh", "hello"],
        &["OBJECT", "FREQ", "fresh"],
        &["OBJECT", "FREQ", "s"],
        &["OBJECT", "IDLETIME", "s"],
        &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    ]);
}

#[test]
fn memory_usage_and_help() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "s", "hello"],
        &["MEMORY", "HELP"],
        &["MEMORY", "USAGE", "missing"],
        &["MEMORY", "USAGE", "s", "SAMPLES"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "-1"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "s", "FOO", "1"],
        &["MEMORY", "USAGE"],
        &["MEMORY", "HELP", "x"],
        &["MEMORY", "FOO"],
    ]);
    // The figure is the engine's own: a positive integer that grows with the value.
    let small = d.both(&["MEMORY", "USAGE", "s", "SAMPLES", "0"]).1;
    let _ = d.both(&["SET", "s", &"x".repeat(1000)]);
    let large = d.both(&["MEMORY", "USAGE", "s"]).1;
    let n = |s: &str| -> i64 {
        s.trim_start_matches("int(")
            .trim_end_matches(')')
            .parse()
            .unwrap()
    };
    assert!(n(&small) > 5, "{small}");
    assert!(n(&large) > n(&small) + 900, "{small} {large}");
    for kind in [
        &["RPUSH", "l", "a", "b"][..],
        &["HSET", "h", "f", "v"],
        &["SADD", "st", "m"],
        &["ZADD", "z", "1", "m"],
        &["XADD", "x", "1-1", "f", "v"],
    ] {
        let _ = d.both(kind);
        let r = d.both(&["MEMORY", "USAGE", kind[1]]).1;
        assert!(n(&r) > 0, "{kind:?}: {r}");
    }
}

#[test]
fn touch_counts_existing_keys() {
    let mut d = Diff::new();
    d.check(&[
        &["TOUCH"],
        &["TOUCH", "a"],
        &["SET", "a", "1"],
        &["RPUSH", "l", "x"],
        &["TOUCH", "a", "l", "a", "missing"],
    ]);
}

#[test]
fn swapdb_swaps_and_checks_indices() {
    let mut d = Diff::in_process_only();
    d.check(&[
        &["SET", "a", "in0"],
        &["SELECT", "1"],
        &["SET", "b", "in1"],
        &["PEXPIRE", "b", "100000"],
        &["SWAPDB", "0", "1"],
        &["GET", "a"],
        &["GET", "b"],
        &["SELECT", "0"],
        &["GET", "a"],
        &["GET", "b"],
        &["TTL", "b"],
        &["SWAPDB", "0", "0"],
        &["SWAPDB", "0", "16"],
        &["SWAPDB", "-1", "0"],
        &["SWAPDB", "a", "0"],
        &["SWAPDB", "0", "b"],
        &["SWAPDB", "99999999999", "0"],
        &["SWAPDB", "0"],
        &["DBSIZE"],
    ]);
}

/// A client blocked in db 0 on a key that only exists in db 1 is served by SWAPDB.
#[test]
fn swapdb_wakes_blocked_clients() {
    use std::time::Duration;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let engine = edgebench_engine::engine::Engine::new();
        let handle = crate::support::served::spawn_in_background(
            edgebench_engine::server::Bind::TempUnixSocket,
            engine.clone(),
        )
        .unwrap();
        let endpoint = handle.endpoint();
        let waiter = std::thread::spawn(move || {
            let mut con = crate::support::connect(&endpoint, Duration::from_secs(5)).unwrap();
            redis::cmd("BLPOP")
                .arg("q")
                .arg(5)
                .query::<Vec<String>>(&mut con)
        });
        let mut client = engine.client();
        client.db = 1;
        assert_eq!(
            engine.execute(&mut client, &[b"RPUSH", b"q", b"job"]),
            edgebench_engine::engine::Reply::Int(1)
        );
        // Let the waiter block before the swap.
        while engine.blocked_clients() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let started = std::time::Instant::now();
        engine.execute(&mut client, &[b"SWAPDB", b"0", b"1"]);
        let got = waiter.join().unwrap().unwrap();
        assert_eq!(got, vec!["q".to_string(), "job".to_string()]);
        assert!(started.elapsed() < Duration::from_secs(4));
    });
}

#[test]
fn string_encodings() {
    let mut d = Diff::new();
    let long = "x".repeat(45);
    let exact = "y".repeat(44);
    d.check(&[
        &["SET", "i", "12345"],
        &["SET", "lead", "012"],
        &["SET", "e", "hello"],
        &["SET", "r", &long],
        &["SET", "r44", &exact],
        &["SET", "huge", "123456789012345678901"],
        &["APPEND", "new", "7"],
        &["APPEND", "e2", "ab"],
        &["APPEND", "e2", "c"],
        &["SETRANGE", "sr", "0", "ab"],
        &["SET", "sr2", "abc"],
        &["SETRANGE", "sr2", "1", ""],
        &["INCRBYFLOAT", "f", "1.5"],
        &["INCRBYFLOAT", "f2", "2"],
        &["SET", "n", "5"],
        &["APPEND", "n", "0"],
        &["INCR", "n"],
        &["INCR", "fresh"],
    ]);
    for k in [
        "i", "lead", "e", "r", "r44", "huge", "new", "e2", "sr", "sr2", "f", "f2", "n", "fresh",
    ] {
        enc(&mut d, k);
        d.check(&[&["OBJECT", "REFCOUNT", k]]);
    }
}

#[test]
fn hash_encoding_across_thresholds() {
    let mut d = Diff::new();
    let v65 = "v".repeat(65);
    let v64 = "v".repeat(64);
    d.check(&[
        &["HSET", "h", "f", &v64],
        &["OBJECT", "ENCODING", "h"],
        &["HSET", "h", "f", &v65],
        &["OBJECT", "ENCODING", "h"],
        // One-way: back to a short value, still a hash table.
        &["HSET", "h", "f", "short"],
        &["OBJECT", "ENCODING", "h"],
        &["HSET", "k", &v65, "1"],
        &["OBJECT", "ENCODING", "k"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "3"],
        &["HSET", "c", "a", "1", "b", "2", "c", "3"],
        &["OBJECT", "ENCODING", "c"],
        &["HSET", "c", "d", "4"],
        &["OBJECT", "ENCODING", "c"],
        &["HDEL", "c", "a", "b"],
        &["OBJECT", "ENCODING", "c"],
        &["CONFIG", "SET", "hash-max-ziplist-entries", "512"],
        &["CONFIG", "GET", "hash-max-listpack-entries"],
        &["OBJECT", "ENCODING", "c"],
        &["HSET", "c2", "a", "1"],
        &["OBJECT", "ENCODING", "c2"],
        &["CONFIG", "SET", "hash-max-listpack-value", "2"],
        &["HSET", "c3", "abc", "1"],
        &["OBJECT", "ENCODING", "c3"],
        &["CONFIG", "SET", "hash-max-listpack-value", "64"],
        // Lowering a limit converts nothing until the next write that adds.
        &["HSET", "pinned", "a", "1", "b", "2", "c", "3"],
        &["SADD", "pinset", "1", "2", "3"],
        &[
            "CONFIG",
            "SET",
            "hash-max-listpack-entries",
            "2",
            "set-max-intset-entries",
            "2",
        ],
        &["OBJECT", "ENCODING", "pinned"],
        &["OBJECT", "ENCODING", "pinset"],
        &["HSET", "pinned", "d", "4"],
        &["SADD", "pinset", "4"],
        &["OBJECT", "ENCODING", "pinned"],
        &["OBJECT", "ENCODING", "pinset"],
        &["CONFIG", "SET", "set-max-intset-entries", "512"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "0"],
        &["HSET", "zero", "a", "1"],
        &["OBJECT", "ENCODING", "zero"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "512"],
    ]);
    let mut args: Vec<String> = vec!["HSET".into(), "many".into()];
    for i in 0..513 {
        args.push(format!("f{i}"));
        args.push("v".into());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let _ = d.both(&refs[..refs.len() - 2]);
    enc(&mut d, "many");
    let _ = d.both(&refs);
    enc(&mut d, "many");
}

#[test]
fn set_and_zset_encodings() {
    let mut d = Diff::new();
    let m65 = "m".repeat(65);
    d.check(&[
        &["SADD", "ints", "1", "2", "-3"],
        &["OBJECT", "ENCODING", "ints"],
        &["SADD", "ints", "x"],
        &["OBJECT", "ENCODING", "ints"],
        &["SREM", "ints", "x"],
        &["OBJECT", "ENCODING", "ints"],
        &["SADD", "strs", "a"],
        &["OBJECT", "ENCODING", "strs"],
        &["SADD", "lz", "01"],
        &["OBJECT", "ENCODING", "lz"],
        &["CONFIG", "SET", "set-max-intset-entries", "2"],
        &["SADD", "few", "1", "2"],
        &["OBJECT", "ENCODING", "few"],
        &["SADD", "few", "3"],
        &["OBJECT", "ENCODING", "few"],
        &["SUNIONSTORE", "u", "few"],
        &["OBJECT", "ENCODING", "u"],
        &["SREM", "u", "1"],
        &["SINTERSTORE", "u2", "u"],
        &["OBJECT", "ENCODING", "u2"],
        &["CONFIG", "SET", "set-max-intset-entries", "512"],
        &["ZADD", "z", "1", "a"],
        &["OBJECT", "ENCODING", "z"],
        &["ZADD", "z", "2", &m65],
        &["OBJECT", "ENCODING", "z"],
        &["ZREM", "z", &m65],
        &["OBJECT", "ENCODING", "z"],
        &["CONFIG", "SET", "zset-max-ziplist-entries", "2"],
        &["ZADD", "z2", "1", "a", "2", "b"],
        &["OBJECT", "ENCODING", "z2"],
        &["ZADD", "z2", "3", "c"],
        &["OBJECT", "ENCODING", "z2"],
        &["COPY", "z2", "z3"],
        &["OBJECT", "ENCODING", "z3"],
        &["ZREM", "z2", "a", "b"],
        &["COPY", "z2", "z4"],
        &["OBJECT", "ENCODING", "z4"],
        &["OBJECT", "ENCODING", "z2"],
        &["CONFIG", "SET", "zset-max-listpack-entries", "128"],
        &["CONFIG", "SET", "zset-max-listpack-value", "3"],
        &["ZADD", "z5", "1", "abcd"],
        &["OBJECT", "ENCODING", "z5"],
        &["CONFIG", "SET", "zset-max-listpack-value", "64"],
        &["RPUSH", "l", "a"],
        &["OBJECT", "ENCODING", "l"],
        &["XADD", "x", "1-1", "f", "v"],
        &["OBJECT", "ENCODING", "x"],
    ]);
    let mut args: Vec<String> = vec!["ZADD".into(), "big".into()];
    for i in 0..129 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let _ = d.both(&refs[..refs.len() - 2]);
    enc(&mut d, "big");
    let _ = d.both(&refs);
    enc(&mut d, "big");
    let _ = d.both(&["ZREM", "big", "m0", "m1"]);
    enc(&mut d, "big");
    let mut sadd: Vec<String> = vec!["SADD".into(), "bigset".into()];
    sadd.extend((0..513).map(|i| i.to_string()));
    let refs: Vec<&str> = sadd.iter().map(String::as_str).collect();
    let _ = d.both(&refs[..refs.len() - 1]);
    enc(&mut d, "bigset");
    let _ = d.both(&refs);
    enc(&mut d, "bigset");
}

#[test]
fn encoding_parameters_validate_like_redis() {
    let mut d = Diff::new();
    let names = [
        "hash-max-listpack-entries",
        "hash-max-ziplist-entries",
        "hash-max-listpack-value",
        "hash-max-ziplist-value",
        "zset-max-listpack-entries",
        "zset-max-ziplist-entries",
        "zset-max-listpack-value",
        "zset-max-ziplist-value",
        "list-max-listpack-size",
        "list-max-ziplist-size",
        "set-max-intset-entries",
        "list-compress-depth",
        "stream-node-max-bytes",
        "stream-node-max-entries",
    ];
    for name in names {
        d.check(&[&["CONFIG", "GET", name]]);
        for value in ["-1", "abc", "1kb", "7", "-2147483649", "2147483648", "0"] {
            d.check(&[&["CONFIG", "SET", name, value], &["CONFIG", "GET", name]]);
        }
    }
    d.check(&[
        &[
            "CONFIG",
            "SET",
            "hash-max-ziplist-entries",
            "5",
            "hash-max-listpack-entries",
            "6",
        ],
        &["CONFIG", "GET", "hash-max-ziplist-entries"],
        &[
            "CONFIG",
            "SET",
            "hash-max-ziplist-entries",
            "5",
            "hash-max-ziplist-entries",
            "6",
        ],
    ]);
}

/// A threshold change inside MULTI walks every shard: EXEC must not hold any then.
#[test]
fn threshold_change_inside_multi_does_not_deadlock() {
    let mut d = Diff::new();
    d.check(&[
        &["HSET", "h", "a", "1", "b", "2"],
        &["MULTI"],
        &["HSET", "h", "c", "3"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "2"],
        &["OBJECT", "ENCODING", "h"],
        &["HSET", "h2", "a", "1"],
        &["EXEC"],
        &["OBJECT", "ENCODING", "h2"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "512"],
        &["OBJECT", "ENCODING", "h"],
    ]);
}

/// IDLETIME on a manual clock: seconds since the last command that read or wrote the key;
/// OBJECT, TTL, TYPE and EXISTS do not count; TOUCH and RESTORE ... IDLETIME do.
#[test]
fn idletime_follows_accesses() {
    use edgebench_engine::engine::{Engine, Reply};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let clock = Arc::new(AtomicU64::new(1_000_000_000_000));
    let engine = Engine::with_clock(clock.clone());
    let mut c = engine.client();
    let run = |c: &mut edgebench_engine::engine::Client, args: &[&str]| {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        engine.execute(c, &argv)
    };
    let advance = |ms: u64| clock.fetch_add(ms, Ordering::Relaxed);
    run(&mut c, &["SET", "k", "v"]);
    run(&mut c, &["RPUSH", "l", "a"]);
    advance(5_400);
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "k"]), Reply::Int(5));
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "k"]), Reply::Int(5));
    // TTL, TYPE and EXISTS look without touching, as in Redis.
    run(&mut c, &["TTL", "k"]);
    run(&mut c, &["TYPE", "k"]);
    run(&mut c, &["EXISTS", "k"]);
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "k"]), Reply::Int(5));
    run(&mut c, &["GET", "k"]);
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "k"]), Reply::Int(0));
    advance(3_000);
    assert_eq!(run(&mut c, &["TOUCH", "l", "missing"]), Reply::Int(1));
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "l"]), Reply::Int(0));
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "k"]), Reply::Int(3));
    run(&mut c, &["RPUSH", "l", "b"]);
    advance(60_000);
    assert_eq!(run(&mut c, &["OBJECT", "IDLETIME", "l"]), Reply::Int(60));
    let Reply::Bulk(payload) = run(&mut c, &["DUMP", "k"]) else {
        panic!("DUMP k")
    };
    let restore: [&[u8]; 6] = [b"RESTORE", b"r", b"0", &payload, b"IDLETIME", b"1000"];
    assert_eq!(engine.execute(&mut c, &restore), Reply::ok());
    let idle: [&[u8]; 3] = [b"OBJECT", b"IDLETIME", b"r"];
    assert_eq!(engine.execute(&mut c, &idle), Reply::Int(1000));
}

/// SWAPDB aborts the transactions watching keys that exist on either side, only those.
#[test]
fn swapdb_touches_watched_keys_that_exist() {
    let mut d = Diff::in_process_only();
    d.check(&[
        &["SET", "here", "1"],
        &["WATCH", "nowhere"],
        &["SWAPDB", "0", "1"],
        &["MULTI"],
        &["PING"],
        &["EXEC"],
        &["WATCH", "here"],
        &["SWAPDB", "0", "1"],
        &["MULTI"],
        &["PING"],
        &["EXEC"],
    ]);
}

/// Encodings after the commands that make or reshape values in other ways.
#[test]
fn encodings_after_other_writers() {
    let mut d = Diff::new();
    let long = "L".repeat(70);
    d.check(&[
        &["SADD", "a", "1", "2", "x"],
        &["SADD", "b", "2", "3"],
        &["SINTERSTORE", "i", "a", "b"],
        &["SUNIONSTORE", "u", "a", "b"],
        &["SDIFFSTORE", "df", "a", "b"],
        &["SMOVE", "a", "new", "x"],
        &["SMOVE", "a", "new2", "1"],
        &["SREM", "a", "2"],
        &["COPY", "u", "ucopy"],
        &["RENAME", "b", "bren"],
        &["HSET", "h", "f", "1"],
        &["HINCRBYFLOAT", "h", "f", "0.1"],
        &["HINCRBY", "h", &long, "1"],
        &["HSETNX", "h2", "f", &long],
        &["ZADD", "z", "1", "a"],
        &["ZINCRBY", "z", "1", &long],
        &["ZADD", "zn", "INCR", "1", "m"],
        &["ZPOPMIN", "z"],
        &["SET", "s", "1"],
        &["GETSET", "s", "abc"],
        &["SETNX", "s2", "12"],
        &["MSET", "m1", "7", "m2", &long],
        &["DECRBY", "m1", "3"],
        &["GETEX", "m2", "PERSIST"],
        &["SET", "kt", "99", "KEEPTTL"],
        &["SET", "kt", "word", "KEEPTTL"],
        &["SETBIT", "bits", "7", "1"],
        &["SET", "bits2", "1"],
        &["SETBIT", "bits2", "0", "0"],
        &["BITOP", "OR", "bitop", "bits", "bits2"],
        &["SET", "bf", "5"],
        &["BITFIELD", "bf", "GET", "u4", "0"],
    ]);
    for k in [
        "a", "i", "u", "df", "new", "new2", "ucopy", "bren", "h", "h2", "z", "zn", "s", "s2", "m1",
        "m2", "kt",
    ] {
        enc(&mut d, k);
    }
}
