//! Keyspace notifications (CONFIG `notify-keyspace-events`), on the wire and in process.
//!
//! On the wire, every script runs twice: on a private `redis-server` and on an engine behind
//! this crate's RESP server, each with a client PSUBSCRIBEd to `*`. Both must publish the
//! messages the test expects, in order: redis-server vouches for the expectation, the engine
//! must meet it. A step ends with a PUBLISH on a marker channel, which reaches the subscriber
//! after every message the step's commands published (one subscriber's messages keep their
//! order), so no step waits on a timer to know it has seen everything.
//!
//! In process, a publisher hook that records shows the messages are there when `execute`
//! returns (delivery is synchronous, as Redis's is), and a manual clock makes active expiry's
//! `expired` exact.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use edgebench_engine::engine::Engine;
use edgebench_engine::server::{Address, Bind, ServerHandle};
use redis::Value;

use crate::support::redis_server::RedisServer;
use crate::support::{connect, served};

/// The channel that closes a step (see the module doc).
const END: &str = "keyevents-test-end-of-step";
/// How long a subscriber waits for a message that must come; only a failing test waits.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(5);

/// One server under test: a connection that runs commands, and one subscribed to every
/// channel.
struct Watched {
    cmd: redis::Connection,
    sub: redis::Connection,
    name: &'static str,
    address: Address,
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b.clone(),
        Value::SimpleString(s) => s.clone().into_bytes(),
        other => format!("{other:?}").into_bytes(),
    }
}

impl Watched {
    fn new(address: &Address, name: &'static str) -> Watched {
        let timeout = Duration::from_secs(5);
        let cmd = connect(address, timeout).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut sub = connect(address, timeout).unwrap_or_else(|e| panic!("{name}: {e}"));
        sub.set_read_timeout(Some(MESSAGE_TIMEOUT))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        sub.send_packed_command(&redis::cmd("PSUBSCRIBE").arg("*").get_packed_command())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let confirmed = sub
            .recv_response()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            format!("{confirmed:?}"),
            format!(
                "{:?}",
                Value::Array(vec![
                    Value::BulkString(b"psubscribe".to_vec()),
                    Value::BulkString(b"*".to_vec()),
                    Value::Int(1)
                ])
            ),
            "{name}: PSUBSCRIBE *"
        );
        Watched {
            cmd,
            sub,
            name,
            address: address.clone(),
        }
    }

    /// Sends `args` on a connection of its own, waits until the server counts it blocked,
    /// runs `then`, and returns the blocked command's reply.
    fn blocked_until(&mut self, args: &[&str], then: &[&str]) -> Value {
        let name = self.name;
        let mut blocker = connect(&self.address, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        blocker
            .set_read_timeout(Some(MESSAGE_TIMEOUT))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        blocker
            .send_packed_command(&redis::cmd(args[0]).arg(&args[1..]).get_packed_command())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let deadline = std::time::Instant::now() + MESSAGE_TIMEOUT;
        loop {
            let info = match self.query(&[b"INFO", b"clients"]) {
                Ok(v) => String::from_utf8_lossy(&bytes(&v)).into_owned(),
                Err(e) => panic!("{name}: INFO: {e}"),
            };
            if info.contains("blocked_clients:1") {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{name}: {args:?} never blocked"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let then: Vec<&[u8]> = then.iter().map(|a| a.as_bytes()).collect();
        let _ = self.query(&then);
        blocker
            .recv_response()
            .unwrap_or_else(|e| panic!("{name}: {args:?} was not served: {e}"))
    }

    /// Sends one command and returns its reply (an error reply as `Err`, which scripts
    /// include on purpose: a refused write publishes nothing).
    fn query(&mut self, args: &[&[u8]]) -> redis::RedisResult<Value> {
        let mut cmd = redis::cmd(&String::from_utf8_lossy(args[0]));
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<Value>(&mut self.cmd)
    }

    /// Runs `script` (a `sleep <ms>` step pauses instead), then returns what was published
    /// meanwhile.
    fn run(&mut self, script: &[&[&str]]) -> Vec<String> {
        for args in script {
            if let ["sleep", ms] = args {
                let ms = ms.parse().unwrap_or(0);
                std::thread::sleep(Duration::from_millis(ms));
                continue;
            }
            let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            let _ = self.query(&argv);
        }
        self.messages()
    }

    /// Every message published since the last call, as `channel payload`, up to the marker
    /// this publishes.
    fn messages(&mut self) -> Vec<String> {
        let name = self.name;
        let _ = self
            .query(&[b"PUBLISH", END.as_bytes(), b"x"])
            .unwrap_or_else(|e| panic!("{name}: PUBLISH: {e}"));
        let mut seen = Vec::new();
        loop {
            let message = self.sub.recv_response().unwrap_or_else(|e| {
                panic!("{name}: the end marker never came ({e}); messages so far: {seen:?}")
            });
            let Value::Array(parts) = &message else {
                panic!("{name}: not a message: {message:?}");
            };
            let parts: Vec<Vec<u8>> = parts.iter().map(bytes).collect();
            assert_eq!(
                parts.first().map(Vec::as_slice),
                Some(&b"pmessage"[..]),
                "{name}: {message:?}"
            );
            let channel = String::from_utf8_lossy(&parts[2]).into_owned();
            if channel == END {
                return seen;
            }
            seen.push(format!("{channel} {}", String::from_utf8_lossy(&parts[3])));
        }
    }
}

/// A redis-server and a served engine, each watched.
struct Pair {
    real: Watched,
    ours: Watched,
    _redis: RedisServer,
    _served: ServerHandle,
}

impl Pair {
    /// Both servers, with `notify-keyspace-events` set to `flags` on each.
    fn new(flags: &str) -> Pair {
        let redis = RedisServer::spawn();
        let served = served::spawn_in_background(Bind::TempUnixSocket, Engine::new())
            .unwrap_or_else(|e| panic!("cannot serve the engine: {e}"));
        let mut pair = Pair {
            real: Watched::new(&redis.address(), "redis-server"),
            ours: Watched::new(&served.endpoint(), "engine"),
            _redis: redis,
            _served: served,
        };
        pair.both(&[&["CONFIG", "SET", "notify-keyspace-events", flags]]);
        pair
    }

    /// Runs `script` on both servers; (redis-server's messages, the engine's).
    fn both(&mut self, script: &[&[&str]]) -> (Vec<String>, Vec<String>) {
        (self.real.run(script), self.ours.run(script))
    }

    /// Runs `script` on both; each must publish exactly `expected`, written as keyevent
    /// messages `event key` (database 0) or `db:event key`.
    fn check(&mut self, script: &[&[&str]], expected: &[&str]) {
        let expected: Vec<String> = expected.iter().map(|e| keyevent(e)).collect();
        let (real, ours) = self.both(script);
        assert_eq!(real, expected, "redis-server (left) vs the expectation");
        assert_eq!(ours, expected, "engine (left) vs the expectation");
    }
}

/// `event key` or `db:event key` as the keyevent message it stands for.
fn keyevent(spec: &str) -> String {
    let (db, rest) = match spec.split_once(':') {
        Some((db, rest)) if db.bytes().all(|b| b.is_ascii_digit()) => (db, rest),
        _ => ("0", spec),
    };
    let (event, key) = rest.split_once(' ').unwrap_or((rest, ""));
    format!("__keyevent@{db}__:{event} {key}")
}

/// Keyevent messages of every class, and `new` (which `A` leaves out).
const ALL_KEYEVENTS: &str = "AEn";

#[test]
fn both_channels_carry_the_key_and_the_event_with_its_database() {
    let mut pair = Pair::new("KEA");
    let expected = [
        "__keyspace@0__:foo set",
        "__keyevent@0__:set foo",
        "__keyspace@3__:l lpush",
        "__keyevent@3__:lpush l",
    ];
    let script: &[&[&str]] = &[
        &["SET", "foo", "bar"],
        &["SELECT", "3"],
        &["LPUSH", "l", "a"],
    ];
    let (real, ours) = pair.both(script);
    assert_eq!(real, expected);
    assert_eq!(ours, expected);
}

#[test]
fn nothing_is_published_unless_a_class_and_a_channel_are_on() {
    let script: &[&[&str]] = &[
        &["SET", "k", "v"],
        &["LPUSH", "l", "a"],
        &["EXPIRE", "k", "100"],
        &["DEL", "k", "l"],
        &["SET", "gone", "v", "PX", "1"],
        &["sleep", "20"],
        &["GET", "gone"],
    ];
    // The default (""), classes without a channel, a channel without a class, and a class
    // that none of these commands belong to.
    for flags in ["", "A", "KE", "Kh"] {
        let mut pair = Pair::new(flags);
        pair.check(script, &[]);
    }
    // Masked: only the list class.
    let mut pair = Pair::new("El");
    pair.check(script, &["lpush l"]);
}

#[test]
fn flags_read_back_as_redis_shows_them() {
    let mut pair = Pair::new("");
    let config = |w: &mut Watched, flags: &str| -> (String, String) {
        let set = w.query(&[
            b"CONFIG",
            b"SET",
            b"notify-keyspace-events",
            flags.as_bytes(),
        ]);
        let set = match set {
            Ok(v) => format!("{v:?}"),
            Err(e) => format!("{:?} {:?}", e.code(), e.detail()),
        };
        let get = w.query(&[b"CONFIG", b"GET", b"notify-keyspace-events"]);
        (set, format!("{get:?}"))
    };
    for flags in [
        "gKE",
        "$lshzxeKE",
        "KA",
        "EA",
        "AnKEm",
        "EKmndtexzhsl$g",
        "KEgg",
        "",
        "Kw",
        "ka",
        "K E",
    ] {
        let real = config(&mut pair.real, flags);
        let ours = config(&mut pair.ours, flags);
        assert_eq!(
            ours, real,
            "{flags:?}: engine (left) vs redis-server (right)"
        );
    }
    // Redis's pubsub unit's expectations, and the error's text, spelled out.
    let get = |w: &mut Watched, flags: &str| {
        let _ = w.query(&[
            b"CONFIG",
            b"SET",
            b"notify-keyspace-events",
            flags.as_bytes(),
        ]);
        match w.query(&[b"CONFIG", b"GET", b"notify-keyspace-events"]) {
            Ok(Value::Array(kv)) => String::from_utf8_lossy(&bytes(&kv[1])).into_owned(),
            other => panic!("CONFIG GET: {other:?}"),
        }
    };
    for (given, shown) in [
        ("gKE", "gKE"),
        ("$lshzxeKE", "$lshzxeKE"),
        ("KA", "AK"),
        ("EA", "AE"),
        ("AnKE", "AKE"),
    ] {
        assert_eq!(get(&mut pair.ours, given), shown, "{given}");
    }
    let refused = pair
        .ours
        .query(&[b"CONFIG", b"SET", b"notify-keyspace-events", b"Kw"])
        .expect_err("an invalid flag is refused");
    assert_eq!(
        refused.detail(),
        Some(
            "CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - \
             Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        )
    );
    // `A` hides `n` when shown, but `n` stays on, as in Redis.
    let mut pair = Pair::new("AnE");
    pair.check(&[&["SET", "k", "v"]], &["new k", "set k"]);
}

#[test]
fn string_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["SET", "s1", "v"],
            &["SET", "s1", "v2", "EX", "100"],
            &["SET", "s1", "x", "NX", "GET"],
            &["SETNX", "s1", "x"],
            &["SETNX", "s2", "x"],
            &["SETEX", "s3", "100", "v"],
            &["PSETEX", "s3", "100000", "v"],
            &["GETSET", "s2", "y"],
            &["MSET", "m1", "a", "m2", "b"],
            &["MSETNX", "m1", "a", "m3", "c"],
            &["MSETNX", "m3", "c", "m4", "d"],
            &["APPEND", "s2", "z"],
            &["APPEND", "s4", "z"],
            &["SETRANGE", "s4", "3", "abc"],
            &["SETRANGE", "s5", "0", ""],
            &["INCR", "n"],
            &["INCRBY", "n", "5"],
            &["DECR", "n"],
            &["DECRBY", "n", "2"],
            &["INCR", "s1"],
            &["INCRBYFLOAT", "f", "1.5"],
            &["GETDEL", "s4"],
            &["GETDEL", "s4"],
            &["GETEX", "s2", "EX", "100"],
            &["GETEX", "s2", "PERSIST"],
            &["GETEX", "s2", "PERSIST"],
            &["GETEX", "s2"],
            &["GETEX", "s2", "PXAT", "1"],
        ],
        &[
            "new s1",
            "set s1",
            "set s1",
            "expire s1",
            "new s2",
            "set s2",
            "new s3",
            "set s3",
            "expire s3",
            "set s3",
            "expire s3",
            "set s2",
            "new m1",
            "set m1",
            "new m2",
            "set m2",
            "new m3",
            "set m3",
            "new m4",
            "set m4",
            "append s2",
            "new s4",
            "append s4",
            "setrange s4",
            "new n",
            "incrby n",
            "incrby n",
            "incrby n",
            "incrby n",
            "new f",
            "incrbyfloat f",
            "del s4",
            "expire s2",
            "persist s2",
            "del s2",
        ],
    );
}

#[test]
fn bit_and_hyperloglog_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["SETBIT", "b", "7", "1"],
            &["SETBIT", "b", "7", "1"],
            &["SETBIT", "b", "7", "0"],
            &["SETBIT", "b", "100", "0"],
            &["BITFIELD", "b", "SET", "u8", "0", "0"],
            &["BITFIELD", "b", "SET", "u8", "0", "255"],
            &["BITFIELD", "b", "GET", "u8", "0"],
            &[
                "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5",
            ],
            &["BITOP", "AND", "dest", "b", "nokey"],
            &["BITOP", "AND", "dest", "nokey", "nokey2"],
            &["BITOP", "AND", "dest", "nokey", "nokey2"],
            &["PFADD", "h", "a", "b"],
            &["PFADD", "h", "a"],
            &["PFCOUNT", "h"],
            &["PFMERGE", "h2", "h"],
            &["PFMERGE", "h2", "h"],
        ],
        &[
            "new b", "setbit b", "setbit b", "setbit b", "setbit b", "new bf", "new dest",
            "set dest", "del dest", "new h", "pfadd h", "new h2", "pfadd h2", "pfadd h2",
        ],
    );
}

#[test]
fn generic_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["SET", "k", "v"],
            &["EXPIRE", "k", "100"],
            &["EXPIRE", "k", "100", "NX"],
            &["PERSIST", "k"],
            &["PERSIST", "k"],
            &["PEXPIREAT", "k", "1"],
            &["EXPIRE", "k", "100"],
            &["SET", "k", "v"],
            &["SET", "k2", "v"],
            &["RENAME", "k", "k3"],
            &["RENAME", "k3", "k2"],
            &["RENAMENX", "k2", "k2"],
            &["COPY", "k2", "k4"],
            &["COPY", "k2", "k4"],
            &["COPY", "k2", "k4", "REPLACE"],
            &["COPY", "k2", "k5", "DB", "1"],
            &["MOVE", "k4", "2"],
            &["MOVE", "nokey", "1"],
            &["DEL", "k2", "k4", "nokey"],
            &["SET", "u", "v"],
            &["UNLINK", "u", "u"],
            &["RPUSH", "l", "3", "1", "2"],
            &["SORT", "l", "STORE", "ls"],
            &["SORT", "l"],
            &["SORT", "nokey", "STORE", "ls"],
            &["SORT", "nokey", "STORE", "ls"],
            &["FLUSHDB"],
        ],
        &[
            "new k",
            "set k",
            "expire k",
            "persist k",
            "del k",
            "new k",
            "set k",
            "new k2",
            "set k2",
            "new k3",
            "rename_from k",
            "rename_to k3",
            "new k2",
            "rename_from k3",
            "rename_to k2",
            "new k4",
            "copy_to k4",
            "new k4",
            "copy_to k4",
            "1:new k5",
            "1:copy_to k5",
            "2:new k4",
            "move_from k4",
            "2:move_to k4",
            "del k2",
            "new u",
            "set u",
            "del u",
            "new l",
            "rpush l",
            "new ls",
            "sortstore ls",
            "del ls",
        ],
    );
}

#[test]
fn restore_is_a_new_key_even_when_it_replaces_one() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    for w in [&mut pair.real, &mut pair.ours] {
        let _ = w.query(&[b"RPUSH", b"src", b"a", b"b"]);
        let dumped = match w.query(&[b"DUMP", b"src"]) {
            Ok(Value::BulkString(b)) => b,
            other => panic!("{}: DUMP: {other:?}", w.name),
        };
        let d: &[u8] = &dumped;
        // A new key; one already there (BUSYKEY); REPLACE; REPLACE with a TTL long past,
        // which only deletes; the same with nothing left to delete.
        let steps: [&[&[u8]]; 5] = [
            &[b"RESTORE", b"r", b"0", d],
            &[b"RESTORE", b"r", b"0", d],
            &[b"RESTORE", b"r", b"0", d, b"REPLACE"],
            &[b"RESTORE", b"r", b"1", d, b"REPLACE", b"ABSTTL"],
            &[b"RESTORE", b"r", b"1", d, b"REPLACE", b"ABSTTL"],
        ];
        for args in steps {
            let _ = w.query(args);
        }
        assert_eq!(
            w.messages(),
            [
                "new src",
                "rpush src",
                "new r",
                "restore r",
                "new r",
                "restore r",
                "del r",
            ]
            .map(keyevent),
            "{}",
            w.name
        );
    }
}

#[test]
fn list_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["LPUSH", "l", "a", "b"],
            &["RPUSH", "l", "c"],
            &["LPUSHX", "nol", "a"],
            &["RPUSHX", "l", "d"],
            &["LINSERT", "l", "BEFORE", "a", "x"],
            &["LINSERT", "l", "BEFORE", "zz", "x"],
            &["LSET", "l", "0", "y"],
            &["LREM", "l", "0", "nothere"],
            &["LREM", "l", "1", "x"],
            &["LTRIM", "l", "0", "-1"],
            &["LPOP", "l"],
            &["RPOP", "l", "2"],
            &["LPOP", "l", "0"],
            &["LMOVE", "l", "l2", "LEFT", "RIGHT"],
            &["RPUSH", "l2", "b"],
            &["RPOPLPUSH", "l2", "l2"],
            &["LMPOP", "2", "nol", "l2", "LEFT", "COUNT", "5"],
            &["SET", "str", "v"],
            &["LPUSH", "str", "a"],
            &["RPUSH", "l3", "a", "b"],
            &["BLPOP", "l3", "1"],
            &["BRPOP", "l3", "1"],
            &["RPUSH", "l4", "a"],
            &["LTRIM", "l4", "5", "6"],
        ],
        &[
            "new l",
            "lpush l",
            "rpush l",
            "rpush l",
            "linsert l",
            "lset l",
            "lrem l",
            "ltrim l",
            "lpop l",
            "rpop l",
            "new l2",
            "rpush l2",
            "lpop l",
            "del l",
            "rpush l2",
            "lpush l2",
            "rpop l2",
            "lpop l2",
            "del l2",
            "new str",
            "set str",
            "new l3",
            "rpush l3",
            "lpop l3",
            "rpop l3",
            "del l3",
            "new l4",
            "rpush l4",
            "ltrim l4",
            "del l4",
        ],
    );
}

#[test]
fn set_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["SADD", "s", "a", "b"],
            &["SADD", "s", "a"],
            &["SREM", "s", "x"],
            &["SREM", "s", "a"],
            &["SMOVE", "s", "s2", "b"],
            &["SADD", "s3", "x", "y"],
            &["SMOVE", "s3", "s2", "x"],
            &["SADD", "s3", "b"],
            &["SMOVE", "s3", "s2", "b"],
            &["SPOP", "s3"],
            &["SADD", "s4", "1", "2", "3"],
            &["SPOP", "s4", "2"],
            &["SPOP", "s4", "5"],
            &["SPOP", "s4", "0"],
            &["SINTERSTORE", "d", "s2", "s2"],
            &["SUNIONSTORE", "d", "s2"],
            &["SDIFFSTORE", "d", "s2", "s2"],
            &["SDIFFSTORE", "d", "s2", "s2"],
            &["SINTERSTORE", "d", "s2", "nokey"],
        ],
        &[
            "new s",
            "sadd s",
            "srem s",
            "srem s",
            "del s",
            "new s2",
            "sadd s2",
            "new s3",
            "sadd s3",
            "srem s3",
            "sadd s2",
            "sadd s3",
            "srem s3",
            "spop s3",
            "del s3",
            "new s4",
            "sadd s4",
            "spop s4",
            "spop s4",
            "del s4",
            "new d",
            "sinterstore d",
            "sunionstore d",
            "del d",
        ],
    );
}

#[test]
fn sorted_set_and_geo_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["ZADD", "z", "1", "a", "2", "b"],
            &["ZADD", "z", "1", "a"],
            &["ZADD", "z", "XX", "5", "c"],
            &["ZADD", "z", "INCR", "1", "a"],
            &["ZINCRBY", "z", "1", "a"],
            &["ZINCRBY", "z", "0", "a"],
            &["ZREM", "z", "x"],
            &["ZREM", "z", "a"],
            &["ZADD", "z", "3", "c", "4", "d"],
            &["ZREMRANGEBYSCORE", "z", "100", "200"],
            &["ZREMRANGEBYSCORE", "z", "3", "3"],
            &["ZREMRANGEBYRANK", "z", "0", "0"],
            &["ZADD", "z", "0", "x", "0", "y"],
            // A lex range over members of one score (over mixed scores it is undefined).
            &["ZADD", "zl", "0", "x", "0", "y"],
            &["ZREMRANGEBYLEX", "zl", "[x", "[x"],
            &["ZPOPMIN", "z"],
            &["ZPOPMAX", "z", "10"],
            &["ZPOPMIN", "z"],
            &["ZADD", "z2", "1", "a", "2", "b"],
            &["ZUNIONSTORE", "u", "1", "z2"],
            &["ZINTERSTORE", "u", "2", "z2", "nokey"],
            &["ZDIFFSTORE", "u", "1", "z2"],
            &["ZRANGESTORE", "r", "z2", "0", "0"],
            &["ZRANGESTORE", "r", "z2", "5", "6"],
            &["ZMPOP", "1", "z2", "MIN", "COUNT", "1"],
            &["BZPOPMAX", "z2", "1"],
            &["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
            &["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
            &[
                "GEOSEARCHSTORE",
                "gs",
                "g",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "200",
                "km",
            ],
            &["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"],
            &[
                "GEOSEARCHSTORE",
                "gs",
                "g",
                "FROMLONLAT",
                "0",
                "0",
                "BYRADIUS",
                "1",
                "km",
            ],
        ],
        &[
            "new z",
            "zadd z",
            "zincr z",
            "zincr z",
            "zrem z",
            "zadd z",
            "zremrangebyscore z",
            "zremrangebyrank z",
            "zadd z",
            "new zl",
            "zadd zl",
            "zremrangebylex zl",
            "zpopmin z",
            "zpopmax z",
            "del z",
            "new z2",
            "zadd z2",
            "new u",
            "zunionstore u",
            "del u",
            "new u",
            "zdiffstore u",
            "new r",
            "zrangestore r",
            "del r",
            "zpopmin z2",
            "zpopmax z2",
            "del z2",
            "new g",
            "zadd g",
            "new gs",
            "geosearchstore gs",
            "new gr",
            "georadiusstore gr",
            "del gs",
        ],
    );
}

#[test]
fn hash_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["HSET", "h", "a", "1", "b", "2"],
            &["HSET", "h", "a", "1"],
            &["HMSET", "h", "c", "3"],
            &["HSETNX", "h", "a", "9"],
            &["HSETNX", "h", "d", "4"],
            &["HINCRBY", "h", "a", "5"],
            &["HINCRBYFLOAT", "h", "a", "1.5"],
            &["HINCRBY", "h", "a", "1"],
            &["HDEL", "h", "nope"],
            &["HDEL", "h", "a", "b"],
            &["HDEL", "h", "c", "d"],
            &["HINCRBY", "h2", "n", "1"],
        ],
        &[
            "new h",
            "hset h",
            "hset h",
            "hset h",
            "hset h",
            "hincrby h",
            "hincrbyfloat h",
            "hdel h",
            "hdel h",
            "del h",
            "new h2",
            "hincrby h2",
        ],
    );
}

#[test]
fn stream_commands() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    pair.check(
        &[
            &["XADD", "x", "1-1", "f", "v"],
            &["XADD", "x", "MAXLEN", "1", "2-1", "f", "v"],
            &["XADD", "nox", "NOMKSTREAM", "*", "f", "v"],
            &["XTRIM", "x", "MAXLEN", "5"],
            &["XDEL", "x", "9-9"],
            &["XADD", "x", "3-1", "f", "v"],
            &["XDEL", "x", "2-1"],
            &["XGROUP", "CREATE", "x", "g", "0"],
            &["XGROUP", "CREATE", "x", "g", "0"],
            &["XGROUP", "CREATE", "x2", "g", "$", "MKSTREAM"],
            &["XGROUP", "CREATECONSUMER", "x", "g", "c1"],
            &["XGROUP", "CREATECONSUMER", "x", "g", "c1"],
            &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", ">"],
            &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", ">"],
            &["XACK", "x", "g", "9-9"],
            &["XCLAIM", "x", "g", "c3", "0", "3-1"],
            &["XAUTOCLAIM", "x", "g", "c4", "0", "0"],
            &["XAUTOCLAIM", "x", "g", "c4", "0", "0"],
            &["XGROUP", "SETID", "x", "g", "0"],
            &["XGROUP", "DELCONSUMER", "x", "g", "nobody"],
            &["XGROUP", "DELCONSUMER", "x", "g", "c1"],
            &["XGROUP", "DESTROY", "x", "g"],
            &["XGROUP", "DESTROY", "x", "g"],
            &["XSETID", "x", "10-0"],
            &["XTRIM", "x", "MAXLEN", "0"],
        ],
        &[
            "new x",
            "xadd x",
            "xadd x",
            "xtrim x",
            "xadd x",
            "xdel x",
            "xgroup-create x",
            "new x2",
            "xgroup-create x2",
            "xgroup-createconsumer x",
            "xgroup-createconsumer x",
            "xgroup-createconsumer x",
            "xgroup-createconsumer x",
            "xgroup-setid x",
            "xgroup-delconsumer x",
            "xgroup-destroy x",
            "xsetid x",
            "xtrim x",
        ],
    );
}

/// A blocked command served by another client's write announces its own events after the
/// write's, as if it ran right after it (Redis serves blocked clients after the command).
#[test]
fn a_blocked_command_served_by_a_write_is_announced_after_it() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    for w in [&mut pair.real, &mut pair.ours] {
        let served = w.blocked_until(
            &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "5"],
            &["RPUSH", "src", "a"],
        );
        assert_eq!(
            format!("{served:?}"),
            format!("{:?}", Value::BulkString(b"a".to_vec()))
        );
        let _ = w.blocked_until(&["BZPOPMIN", "z", "5"], &["ZADD", "z", "1", "m"]);
        assert_eq!(
            w.messages(),
            [
                "new src",
                "rpush src",
                "new dst",
                "rpush dst",
                "lpop src",
                "del src",
                "new z",
                "zadd z",
                "zpopmin z",
                "del z",
            ]
            .map(keyevent),
            "{}",
            w.name
        );
    }
}

#[test]
fn a_key_that_expires_is_announced_once() {
    let mut pair = Pair::new(ALL_KEYEVENTS);
    // Found expired by GET, or removed by active expiry before it: either way one message.
    pair.check(
        &[
            &["SET", "e", "v", "PX", "50"],
            &["sleep", "150"],
            &["GET", "e"],
            &["GET", "e"],
        ],
        &["new e", "set e", "expire e", "expired e"],
    );
}

// ---- in process ----

/// An engine whose notifications are recorded, as (channel, message) text.
fn recording(engine: &Engine) -> Arc<Mutex<Vec<String>>> {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    engine.set_publisher(Arc::new(move |channel: &[u8], message: &[u8]| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!(
                "{} {}",
                String::from_utf8_lossy(channel),
                String::from_utf8_lossy(message)
            ));
    }));
    seen
}

fn take(seen: &Mutex<Vec<String>>) -> Vec<String> {
    std::mem::take(&mut *seen.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The messages are handed over before `execute` returns: a server that sends the reply
/// after it has them queued (as `serve` does) delivers them first, as Redis does.
#[test]
fn delivery_is_synchronous_with_the_command() {
    let engine = Engine::new();
    let seen = recording(&engine);
    let mut client = engine.client();
    engine.execute(&mut client, &[b"SET", b"k", b"v"]);
    assert!(take(&seen).is_empty(), "off by default");
    assert!(!engine
        .execute(
            &mut client,
            &[b"CONFIG", b"SET", b"notify-keyspace-events", b"KEA"]
        )
        .is_error());
    assert_eq!(
        engine.config_get("notify-keyspace-events").as_deref(),
        Some("AKE")
    );
    engine.execute(&mut client, &[b"SET", b"k", b"v"]);
    assert_eq!(
        take(&seen),
        ["__keyspace@0__:k set", "__keyevent@0__:set k"]
    );
    engine.execute(&mut client, &[b"MULTI"]);
    engine.execute(&mut client, &[b"INCR", b"n"]);
    engine.execute(&mut client, &[b"DEL", b"k"]);
    assert!(take(&seen).is_empty(), "queued commands have not run");
    engine.execute(&mut client, &[b"EXEC"]);
    assert_eq!(
        take(&seen),
        [
            "__keyspace@0__:n incrby",
            "__keyevent@0__:incrby n",
            "__keyspace@0__:k del",
            "__keyevent@0__:del k",
        ]
    );
}

/// Active expiry announces `expired` in the key's database, with no command running.
#[test]
fn active_expiry_announces_expired() {
    let now = Arc::new(AtomicU64::new(1_000_000));
    let engine = Engine::with_clock(Arc::clone(&now));
    let seen = recording(&engine);
    let mut client = engine.client();
    assert!(engine.configure("notify-keyspace-events", "Ex").is_ok());
    engine.execute(&mut client, &[b"SELECT", b"5"]);
    engine.execute(&mut client, &[b"SET", b"a", b"v", b"PX", b"10"]);
    engine.execute(&mut client, &[b"SET", b"b", b"v", b"PX", b"1000"]);
    assert!(take(&seen).is_empty(), "x alone: no set, no expire");
    now.fetch_add(10, Ordering::Relaxed);
    assert_eq!(engine.expire_cycle(), 1);
    assert_eq!(take(&seen), ["__keyevent@5__:expired a"]);
    assert_eq!(engine.expire_cycle(), 0);
    assert!(take(&seen).is_empty());
}
