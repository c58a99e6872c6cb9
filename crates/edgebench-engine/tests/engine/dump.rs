//! DUMP and RESTORE against a real redis-server: payloads DUMPed by redis-server RESTORE
//! into the engine and the engine's into redis-server, for every type and encoding
//! (integers, LZF-compressed strings, listpacks, intsets, hash tables, skip lists, quicklists
//! of several nodes, streams); DUMP bytes equal Redis's where its encoding is deterministic;
//! corrupt payloads (flipped bytes, truncation, wrong version, bad bodies) get Redis's
//! errors and never panic; RESTORE's options and errors, differentially.

use edgebench_engine::engine::cmd::dump::crc64::crc64;
use edgebench_engine::engine::{Client, Engine, Reply};
use redis::{ConnectionLike, Value};

use crate::support::diff::Diff;
use crate::support::redis_server::RedisServer;

/// A redis-server and an engine given the same commands (the persistence tests reuse it).
pub(crate) struct Pair {
    pub(crate) server: RedisServer,
    pub(crate) redis: redis::Connection,
    pub(crate) engine: Engine,
    pub(crate) client: Client,
}

impl Pair {
    pub(crate) fn new() -> Pair {
        let server = RedisServer::spawn();
        let redis = server.connect();
        let engine = Engine::new();
        let client = engine.client();
        Pair {
            server,
            redis,
            engine,
            client,
        }
    }

    fn redis(&mut self, args: &[&[u8]]) -> Value {
        let mut cmd = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for a in &args[1..] {
            cmd.arg(*a);
        }
        self.redis
            .req_packed_command(&cmd.get_packed_command())
            .unwrap_or_else(|e| Value::SimpleString(format!("ERR {e:?}")))
    }

    fn engine(&mut self, args: &[&[u8]]) -> Reply {
        self.engine.execute(&mut self.client, args)
    }

    pub(crate) fn both(&mut self, args: &[&str]) {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.redis(&argv);
        self.engine(&argv);
    }

    fn redis_dump(&mut self, key: &str) -> Vec<u8> {
        match self.redis(&[b"DUMP", key.as_bytes()]) {
            Value::BulkString(b) => b,
            other => panic!("redis DUMP {key}: {other:?}"),
        }
    }

    fn engine_dump(&mut self, key: &str) -> Vec<u8> {
        match self.engine(&[b"DUMP", key.as_bytes()]) {
            Reply::Bulk(b) => b,
            other => panic!("engine DUMP {key}: {other:?}"),
        }
    }

    /// A comparable view of `key`'s value: its type, encoding and contents (sorted where
    /// the order is a hash order), from either side.
    fn view_redis(&mut self, key: &str) -> String {
        let k = key.as_bytes();
        let t = self.redis(&[b"TYPE", k]);
        let e = self.redis(&[b"OBJECT", b"ENCODING", k]);
        let body = match &t {
            Value::SimpleString(s) if s == "string" => norm(self.redis(&[b"GET", k])),
            Value::SimpleString(s) if s == "list" => norm(self.redis(&[b"LRANGE", k, b"0", b"-1"])),
            Value::SimpleString(s) if s == "set" => sorted(self.redis(&[b"SMEMBERS", k])),
            Value::SimpleString(s) if s == "hash" => sorted(self.redis(&[b"HGETALL", k])),
            Value::SimpleString(s) if s == "zset" => {
                norm(self.redis(&[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]))
            }
            _ => norm(self.redis(&[b"XRANGE", k, b"-", b"+"])),
        };
        format!("{t:?} {e:?} {body}")
    }

    fn view_engine(&mut self, key: &str) -> String {
        let to_value = |r: Reply| r.into_redis_value(2);
        let k = key.as_bytes();
        let t = to_value(self.engine(&[b"TYPE", k]));
        let e = to_value(self.engine(&[b"OBJECT", b"ENCODING", k]));
        let body = match &t {
            Value::SimpleString(s) if s == "string" => norm(to_value(self.engine(&[b"GET", k]))),
            Value::SimpleString(s) if s == "list" => {
                norm(to_value(self.engine(&[b"LRANGE", k, b"0", b"-1"])))
            }
            Value::SimpleString(s) if s == "set" => {
                sorted(to_value(self.engine(&[b"SMEMBERS", k])))
            }
            Value::SimpleString(s) if s == "hash" => {
                sorted(to_value(self.engine(&[b"HGETALL", k])))
            }
            Value::SimpleString(s) if s == "zset" => norm(to_value(self.engine(&[
                b"ZRANGE",
                k,
                b"0",
                b"-1",
                b"WITHSCORES",
            ]))),
            _ => norm(to_value(self.engine(&[b"XRANGE", k, b"-", b"+"]))),
        };
        format!("{t:?} {e:?} {body}")
    }
}

fn norm(v: Value) -> String {
    format!("{v:?}")
}

/// A flat reply's elements sorted (pairs of a hash kept together).
fn sorted(v: Value) -> String {
    match v {
        Value::Array(items) => {
            let mut parts: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
            parts.sort();
            parts.join(",")
        }
        other => format!("{other:?}"),
    }
}

fn many(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Builds every type and encoding on both sides: (key, whether Redis's DUMP bytes are
/// deterministic enough to equal the engine's).
pub(crate) fn build_all(p: &mut Pair) -> Vec<(&'static str, bool)> {
    let long = "x".repeat(300);
    let words = "the quick brown fox jumps over the lazy dog ".repeat(20);
    p.both(&["SET", "int8", "-12"]);
    p.both(&["SET", "int16", "3000"]);
    p.both(&["SET", "int32", "-2000000000"]);
    p.both(&["SET", "int64", "9223372036854775807"]);
    p.both(&["SET", "short", "hello"]);
    p.both(&["SET", "twenty", "abcdefghijklmnopqrst"]);
    p.both(&["SET", "incompressible", "q8Zr1mK2xW7pL0vB9nT4cY6aD3sF5gH"]);
    p.both(&["SET", "empty", ""]);
    p.both(&["SET", "lzf", &long]);
    p.both(&["SET", "words", &words]);
    p.both(&["RPUSH", "list", "a", "1", "-5000", "70000", "hello world"]);
    let mut big_list = vec!["RPUSH".to_string(), "biglist".into()];
    big_list.extend(many(&"v".repeat(40), 600));
    let refs: Vec<&str> = big_list.iter().map(String::as_str).collect();
    p.both(&refs);
    p.both(&["SADD", "intset", "5", "-3", "100000", "1"]);
    p.both(&["SADD", "intset64", "5", "9000000000"]);
    p.both(&["SADD", "strset", "a", "b", "1"]);
    p.both(&["HSET", "hash1", "field", "value"]);
    p.both(&["HSET", "hash", "a", "1", "b", "two", "c", "3000"]);
    p.both(&["HSET", "bighash", "f", &long, "g", "1"]);
    p.both(&[
        "ZADD", "zset", "1", "a", "2.5", "b", "-3", "c", "1e300", "d",
    ]);
    let mut big_z = vec!["ZADD".to_string(), "bigzset".into()];
    for (i, m) in many("member", 200).into_iter().enumerate() {
        big_z.push(format!("{}.25", i));
        big_z.push(m);
    }
    let refs: Vec<&str> = big_z.iter().map(String::as_str).collect();
    p.both(&refs);
    p.both(&["XADD", "stream", "1-1", "f", "v", "g", "12"]);
    p.both(&["XADD", "stream", "2-0", "f", "w", "g", "13"]);
    p.both(&["XADD", "stream", "3-5", "other", "x"]);
    for i in 1..=150 {
        let id = format!("{}-{}", 1000 + i / 7, i % 7);
        p.both(&[
            "XADD",
            "bigstream",
            &id,
            "temp",
            &i.to_string(),
            "unit",
            "C",
        ]);
        p.both(&["XADD", "holes", &id, "v", &i.to_string()]);
    }
    p.both(&["XDEL", "holes", "1001-0", "1010-3"]);
    vec![
        ("int8", true),
        ("int16", true),
        ("int32", true),
        ("int64", true),
        ("short", true),
        ("twenty", true),
        ("incompressible", true),
        ("empty", true),
        ("lzf", true),
        ("words", true),
        ("list", true),
        ("biglist", true),
        ("intset", true),
        ("intset64", true),
        ("strset", false),
        ("hash1", true),
        ("hash", false),
        ("bighash", false),
        ("zset", true),
        ("bigzset", true),
        ("stream", true),
        ("bigstream", true),
        // Deleted entries stay flagged in Redis's nodes; the engine writes live ones only.
        ("holes", false),
    ]
}

#[test]
fn payloads_move_both_ways_for_every_type() {
    let mut p = Pair::new();
    for (key, deterministic) in build_all(&mut p) {
        let from_redis = p.redis_dump(key);
        let from_engine = p.engine_dump(key);
        if deterministic {
            assert_eq!(
                from_engine, from_redis,
                "DUMP {key}: engine vs redis-server"
            );
        }
        let copy = format!("{key}:from-redis");
        assert_eq!(
            p.engine(&[b"RESTORE", copy.as_bytes(), b"0", &from_redis]),
            Reply::ok(),
            "engine RESTORE of redis's {key}"
        );
        let want = p.view_redis(key);
        assert_eq!(p.view_engine(&copy), want, "{key} restored into the engine");
        let copy = format!("{key}:from-engine");
        assert_eq!(
            p.redis(&[b"RESTORE", copy.as_bytes(), b"0", &from_engine]),
            Value::Okay,
            "redis RESTORE of the engine's {key}"
        );
        assert_eq!(
            p.view_redis(&copy),
            want,
            "{key} restored into redis-server"
        );
        // And back: the engine's payload restores into the engine too.
        let again = format!("{key}:again");
        assert_eq!(
            p.engine(&[b"RESTORE", again.as_bytes(), b"0", &from_engine]),
            Reply::ok()
        );
        assert_eq!(p.view_engine(&again), want, "{key} engine round trip");
    }
}

/// A payload with a valid footer around `body`, at `version`.
fn framed(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn same_reply(p: &mut Pair, payload: &[u8], what: &str) {
    let real = p.redis(&[b"RESTORE", b"target", b"0", payload, b"REPLACE"]);
    let ours = p.engine(&[b"RESTORE", b"target", b"0", payload, b"REPLACE"]);
    let ours = ours.into_redis_value(2);
    assert_eq!(format!("{ours:?}"), format!("{real:?}"), "{what}");
}

#[test]
fn corrupt_payloads_get_redis_errors() {
    let mut p = Pair::new();
    p.redis(&[b"CONFIG", b"SET", b"sanitize-dump-payload", b"yes"]);
    build_all(&mut p);
    for key in [
        "short", "lzf", "list", "intset", "hash", "zset", "bigzset", "stream",
    ] {
        let good = p.redis_dump(key);
        // Every flipped byte breaks the checksum.
        for i in 0..good.len().min(64) {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            same_reply(&mut p, &bad, &format!("{key}: byte {i} flipped"));
        }
        for cut in [0, 1, 5, 9, 10, good.len() - 1] {
            same_reply(&mut p, &good[..cut], &format!("{key}: cut to {cut}"));
        }
        let body = &good[..good.len() - 10];
        same_reply(&mut p, &framed(body, 11), &format!("{key}: version 11"));
        same_reply(&mut p, &framed(body, 9), &format!("{key}: version 9"));
        // Truncated bodies with a valid footer: Bad data format.
        for cut in [1, body.len() / 2, body.len() - 1] {
            if cut == 0 || cut >= body.len() {
                continue;
            }
            same_reply(
                &mut p,
                &framed(&body[..cut], 10),
                &format!("{key}: body cut {cut}"),
            );
        }
        // Every byte of the body flipped, with a valid footer: the engine refuses or
        // restores, and never panics.
        for i in 0..body.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = body.to_vec();
                bad[i] ^= flip;
                let payload = framed(&bad, 10);
                let r = p.engine(&[b"RESTORE", b"fuzz", b"0", &payload, b"REPLACE"]);
                assert!(
                    r == Reply::ok() || r == Reply::err("ERR Bad data format"),
                    "{key} byte {i} ^ {flip}: {r:?}"
                );
            }
        }
    }
    for (body, what) in [
        (&[0x63u8][..], "unknown type"),
        (&[0x00, 0x7f], "string longer than the payload"),
        (
            &[0x00, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            "64-bit length",
        ),
        (
            &[
                0x00, 0xc3, 0x05, 0x80, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5,
            ],
            "lzf huge",
        ),
        (&[0x02, 0x80, 0x7f, 0xff, 0xff, 0xff], "set of 2 billion"),
        (&[0x02, 0x00], "empty set"),
        (
            &[0x12, 0x01, 0x02, 0x03, 1, 2, 3],
            "quicklist with a bad listpack",
        ),
        (&[0x0b, 0x04, 2, 0, 0, 0], "short intset"),
    ] {
        same_reply(&mut p, &framed(body, 10), what);
    }
}

/// A quicklist with a plain node (Redis writes one for an element over its packed
/// threshold) restores on both sides alike.
#[test]
fn plain_quicklist_nodes_restore() {
    let mut p = Pair::new();
    let packed = [0x0d, 0, 0, 0, 2, 0, 0x81, b'a', 2, 0x81, b'b', 2, 0xff];
    let mut body = vec![18, 2, 1, 3, b'b', b'i', b'g', 2, packed.len() as u8];
    body.extend_from_slice(&packed);
    let payload = framed(&body, 10);
    let real = p.redis(&[b"RESTORE", b"l", b"0", &payload]);
    assert_eq!(real, Value::Okay);
    assert_eq!(p.engine(&[b"RESTORE", b"l", b"0", &payload]), Reply::ok());
    assert_eq!(p.view_engine("l"), p.view_redis("l"));
}

#[test]
fn restore_options_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "k", "v"],
        &["RESTORE", "k", "0", "x"],
        &["RESTORE", "k", "0", "x", "REPLACE"],
        &["RESTORE", "new", "-1", "x"],
        &["RESTORE", "new", "abc", "x"],
        &["RESTORE", "new", "0", "x", "IDLETIME", "-1"],
        &["RESTORE", "new", "0", "x", "IDLETIME", "x"],
        &["RESTORE", "new", "0", "x", "FREQ", "256"],
        &["RESTORE", "new", "0", "x", "FREQ", "1", "IDLETIME", "1"],
        &["RESTORE", "new", "0", "x", "IDLETIME"],
        &["RESTORE", "new", "0", "x", "BOGUS"],
        &["RESTORE", "new", "0"],
        &["DUMP", "missing"],
        &["DUMP"],
        &["DUMP", "a", "b"],
    ]);
}

#[test]
fn restore_ttl_replace_and_busykey() {
    let mut p = Pair::new();
    p.both(&["SET", "src", "value"]);
    let payload = p.redis_dump("src");
    let run = |p: &mut Pair, args: &[&[u8]]| {
        let real = p.redis(args);
        let ours = p.engine(args).into_redis_value(2);
        assert_eq!(format!("{ours:?}"), format!("{real:?}"), "{args:?}");
    };
    run(&mut p, &[b"RESTORE", b"src", b"0", &payload]);
    run(&mut p, &[b"RESTORE", b"a", b"100000", &payload]);
    run(&mut p, &[b"TTL", b"a"]);
    run(&mut p, &[b"RESTORE", b"a", b"0", &payload, b"REPLACE"]);
    run(&mut p, &[b"TTL", b"a"]);
    run(&mut p, &[b"RESTORE", b"b", b"1", &payload, b"ABSTTL"]);
    run(&mut p, &[b"EXISTS", b"b"]);
    run(
        &mut p,
        &[b"RESTORE", b"a", b"1", &payload, b"ABSTTL", b"REPLACE"],
    );
    run(&mut p, &[b"EXISTS", b"a"]);
    run(
        &mut p,
        &[
            b"RESTORE",
            b"c",
            b"0",
            &payload,
            b"IDLETIME",
            b"10",
            b"REPLACE",
        ],
    );
    run(&mut p, &[b"RESTORE", b"d", b"0", &payload, b"FREQ", b"10"]);
    run(&mut p, &[b"GET", b"d"]);
    run(
        &mut p,
        &[b"RESTORE", b"e", b"99999999999999", &payload, b"ABSTTL"],
    );
    run(&mut p, &[b"PEXPIRETIME", b"e"]);
    // IDLETIME sets the last access back: both report it (a second may tick between).
    let args: [&[u8]; 6] = [b"RESTORE", b"idle", b"0", &payload, b"IDLETIME", b"1000"];
    assert_eq!(p.redis(&args), Value::Okay);
    assert_eq!(p.engine(&args), Reply::ok());
    let q: [&[u8]; 3] = [b"OBJECT", b"IDLETIME", b"idle"];
    let real = p.redis(&q);
    let ours = p.engine(&q);
    assert!(matches!(real, Value::Int(1000 | 1001)), "{real:?}");
    assert!(matches!(ours, Reply::Int(1000 | 1001)), "{ours:?}");
}

/// Streams with consumer groups (PEL, consumers, entries read) move both ways.
#[test]
fn stream_groups_move_both_ways() {
    let mut p = Pair::new();
    for i in 1..=6 {
        p.both(&["XADD", "s", &format!("{i}-0"), "f", &i.to_string()]);
    }
    p.both(&["XDEL", "s", "2-0"]);
    p.both(&["XGROUP", "CREATE", "s", "g1", "0"]);
    p.both(&["XGROUP", "CREATE", "s", "g2", "$"]);
    p.both(&["XGROUP", "CREATECONSUMER", "s", "g2", "idle"]);
    p.both(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ]);
    p.both(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "1",
        "STREAMS",
        "s",
        ">",
    ]);
    p.both(&["XACK", "s", "g1", "1-0"]);
    let views = |p: &mut Pair, key: &str, engine: bool| -> String {
        let k = key.as_bytes();
        let cmds: [&[&[u8]]; 6] = [
            &[b"XINFO", b"GROUPS", k],
            &[b"XPENDING", k, b"g1"],
            &[b"XPENDING", k, b"g1", b"-", b"+", b"10", b"alice"],
            &[b"XPENDING", k, b"g2"],
            &[b"XRANGE", k, b"-", b"+"],
            &[b"XLEN", k],
        ];
        let mut out = String::new();
        for c in cmds {
            let v = if engine {
                p.engine(c).into_redis_value(2)
            } else {
                p.redis(c)
            };
            out.push_str(&format!("{v:?}\n"));
        }
        out
    };
    let want = views(&mut p, "s", false);
    let from_redis = p.redis_dump("s");
    assert_eq!(
        p.engine(&[b"RESTORE", b"copy", b"0", &from_redis]),
        Reply::ok()
    );
    let ours = views(&mut p, "copy", true);
    // XPENDING's extended form (line 2) carries idle times, which follow each server's clock.
    let strip = |s: &str| {
        s.lines()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, l)| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip(&ours),
        strip(&want),
        "engine RESTORE of redis's stream"
    );
    let from_engine = p.engine_dump("copy");
    assert_eq!(
        p.redis(&[b"RESTORE", b"back", b"0", &from_engine]),
        Value::Okay
    );
    let theirs = views(&mut p, "back", false);
    assert_eq!(
        strip(&theirs),
        strip(&want),
        "redis RESTORE of the engine's stream"
    );
    // The engine's payload equals Redis's but for the deleted entry Redis keeps flagged
    // in its node; delivery and seen times are the same values, copied.
    let again = p.redis_dump("back");
    assert_eq!(p.engine(&[b"RESTORE", b"again", b"0", &again]), Reply::ok());
    assert_eq!(p.engine_dump("again"), from_engine, "stable through both");
    // Every byte of the grouped payload's body flipped (footer fixed): refused or restored,
    // never a panic.
    let body = &from_redis[..from_redis.len() - 10];
    for i in 0..body.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = body.to_vec();
            bad[i] ^= flip;
            let r = p.engine(&[b"RESTORE", b"fuzz", b"0", &framed(&bad, 10), b"REPLACE"]);
            assert!(
                r == Reply::ok() || r == Reply::err("ERR Bad data format"),
                "byte {i} ^ {flip}: {r:?}"
            );
        }
    }
}

/// Rewrites redis-server 7.0's DUMP of a stream (RDB type 19) as Redis 5.0–6.2 wrote it
/// (type 15, RDB version 9): without the first id, the largest deleted id, the entries ever
/// added and each group's read counter.
fn as_type_15(dump: &[u8]) -> Vec<u8> {
    use edgebench_engine::engine::cmd::dump::rdb::{write_len, write_string, Reader};
    let body = &dump[..dump.len() - 10];
    assert_eq!(body[0], 19, "a type 19 stream");
    let mut r = Reader::new(&body[1..]);
    let mut out = vec![15u8];
    let len = |r: &mut Reader<'_>| r.length().unwrap();
    let copy_len = |r: &mut Reader<'_>, out: &mut Vec<u8>| write_len(r.length().unwrap(), out);
    let copy_string =
        |r: &mut Reader<'_>, out: &mut Vec<u8>| write_string(&r.string().unwrap(), out);
    let nodes = len(&mut r);
    write_len(nodes, &mut out);
    for _ in 0..nodes {
        copy_string(&mut r, &mut out); // master id
        copy_string(&mut r, &mut out); // listpack
    }
    for _ in 0..3 {
        copy_len(&mut r, &mut out); // length, last id
    }
    for _ in 0..5 {
        len(&mut r); // first id, largest deleted id, entries added: not in type 15
    }
    let groups = len(&mut r);
    write_len(groups, &mut out);
    for _ in 0..groups {
        copy_string(&mut r, &mut out); // name
        copy_len(&mut r, &mut out); // last delivered id
        copy_len(&mut r, &mut out);
        len(&mut r); // entries read: not in type 15
        let pel = len(&mut r);
        write_len(pel, &mut out);
        for _ in 0..pel {
            out.extend_from_slice(r.raw(24).unwrap()); // id, delivery time
            copy_len(&mut r, &mut out); // delivery count
        }
        let consumers = len(&mut r);
        write_len(consumers, &mut out);
        for _ in 0..consumers {
            copy_string(&mut r, &mut out); // name
            out.extend_from_slice(r.raw(8).unwrap()); // seen time
            let owned = len(&mut r);
            write_len(owned, &mut out);
            for _ in 0..owned {
                out.extend_from_slice(r.raw(16).unwrap());
            }
        }
    }
    assert_eq!(r.remaining(), 0, "the whole body was read");
    framed(&out, 9)
}

/// A stream dumped by Redis 5.0–6.2 (type 15) restores as redis-server 7.0 restores it:
/// entries added = the length, no deletion known, each group's read counter estimated (and
/// unknown where the stream has holes before it).
#[test]
fn a_type_15_stream_restores_as_redis_7_restores_it() {
    let mut p = Pair::new();
    for (i, v) in ["north", "east", "south", "west", "up", "down", "in"]
        .iter()
        .enumerate()
    {
        p.redis(&[
            b"XADD",
            b"s",
            format!("{}-1", i + 10).as_bytes(),
            b"dir",
            v.as_bytes(),
        ]);
    }
    for line in [
        "XDEL s 12-1",
        "XGROUP CREATE s early 0",
        "XGROUP CREATE s late 0",
        "XGROUP CREATE s idle $",
        "XREADGROUP GROUP early ann COUNT 2 STREAMS s >",
        "XREADGROUP GROUP early ben NOACK COUNT 1 STREAMS s >",
        "XREADGROUP GROUP late cy COUNT 5 STREAMS s >",
        "XDEL s 11-1",
    ] {
        let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        p.redis(&argv);
    }
    let legacy = as_type_15(&p.redis_dump("s"));
    assert_eq!(
        p.redis(&[b"RESTORE", b"old", b"0", &legacy]),
        Value::Okay,
        "redis-server 7.0 takes the type 15 payload"
    );
    assert_eq!(p.engine(&[b"RESTORE", b"old", b"0", &legacy]), Reply::ok());
    for cmd in [
        &[&b"XINFO"[..], b"STREAM", b"old", b"FULL"][..],
        &[b"XINFO", b"GROUPS", b"old"],
        &[b"XRANGE", b"old", b"-", b"+"],
    ] {
        let ours = p.engine(cmd).into_redis_value(2);
        let real = p.redis(cmd);
        assert_eq!(format!("{ours:?}"), format!("{real:?}"), "{cmd:?}");
    }
}
