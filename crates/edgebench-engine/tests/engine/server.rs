//! Connection and server commands: differentially against a real redis-server where the
//! replies are deterministic, and by format where they carry ids, times or addresses (HELLO,
//! CLIENT INFO/LIST, INFO, TIME). One command family's tests, so one file even past 800
//! lines, as the family is one file (`cmd/server/`) of the engine.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use edgebench_engine::engine::cmd::{self, server, KeySpec};
use edgebench_engine::engine::{Client, Engine, Reply};
use redis::Value;

use crate::support::diff::Diff;
use crate::support::parse_info;
use crate::support::redis_server::RedisServer;

fn run(engine: &Engine, client: &mut Client, args: &[&str]) -> Reply {
    let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    engine.execute(client, &argv)
}

fn text(reply: Reply) -> String {
    match reply {
        Reply::Bulk(b) => String::from_utf8(b).expect("utf-8"),
        Reply::Verbatim(s) => s,
        other => panic!("not a string reply: {other:?}"),
    }
}

// ---- differential ----

#[test]
fn ping_echo_select_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["PING"],
        &["ping", "hello world"],
        &["PING", ""],
        &["PING", "a", "b"],
        &["ECHO"],
        &["ECHO", "a", "b"],
        &["ECHO", ""],
        &["echo", "bytes \r\n and spaces"],
        &["SELECT"],
        &["SELECT", "0", "1"],
        &["SELECT", "16"],
        &["SELECT", "-1"],
        &["SELECT", "x"],
        &["SELECT", "01"],
        &["SELECT", "1.0"],
        &["SELECT", "99999999999999999999"],
        &["SELECT", "15"],
        &["SET", "k", "in-15"],
        &["SELECT", "0"],
        &["GET", "k"],
        &["SELECT", "15"],
        &["GET", "k"],
        &["TIME", "x"],
        &["NOSUCHCOMMAND"],
    ]);
}

#[test]
fn hello_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["HELLO", "4"],
        &["HELLO", "1"],
        &["HELLO", "0"],
        &["HELLO", "-2"],
        &["HELLO", "x"],
        &["HELLO", "3.0"],
        &["HELLO", "2", "foo"],
        &["HELLO", "2", "setname"],
        &["HELLO", "2", "SETNAME", "a", "b"],
        &["HELLO", "2", "auth", "a"],
        &["HELLO", "3", "AUTH", "nosuchuser", "pw"],
        &["HELLO", "2", "setname", "a b"],
        &["HELLO", "2", "setname", "bad\nname"],
        // Options apply as they are read: SETNAME before a bad option sticks.
        &["HELLO", "2", "SETNAME", "first", "oops"],
        &["CLIENT", "GETNAME"],
        &["HELLO", "2", "SETNAME", "second", "SETNAME", "a b"],
        &["CLIENT", "GETNAME"],
        &["HELLO", "2", "SETNAME", "third", "AUTH", "nosuchuser", "pw"],
        &["CLIENT", "GETNAME"],
    ]);
}

/// MEMORY STATS names the fields redis-server names (allocator internals left out), in its
/// order, with the engine's figures; DOCTOR answers in words; the arity errors and PURGE are
/// redis-server's.
#[test]
fn memory_stats_and_doctor_answer_as_redis_shapes_them() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "k", "v"],
        &["MEMORY", "PURGE"],
        &["MEMORY", "STATS", "x"],
        &["MEMORY", "DOCTOR", "x"],
        &["MEMORY", "MALLOC-STATS", "x"],
    ]);
    let (theirs, ours) = d.both(&["MEMORY", "STATS"]);
    let names = |text: &str| -> Vec<String> {
        crate::support::diff::elements(text)
            .into_iter()
            .step_by(2)
            .collect()
    };
    let (theirs, ours_names) = (names(&theirs), names(&ours));
    let mut rest = theirs.iter();
    for name in &ours_names {
        assert!(
            rest.any(|t| t == name),
            "{name} is not among redis-server's fields, in order: {theirs:?}"
        );
    }
    for required in [
        "peak.allocated",
        "total.allocated",
        "db.0",
        "keys.count",
        "dataset.bytes",
    ] {
        assert!(
            ours_names.iter().any(|n| n.contains(required)),
            "{required}: {ours_names:?}"
        );
    }
    let count = match d.engine.execute(&mut d.client, &[b"MEMORY", b"STATS"]) {
        Reply::Map(pairs) => pairs
            .into_iter()
            .find(|(k, _)| matches!(k, Reply::Bulk(b) if b == b"keys.count"))
            .map(|(_, v)| v),
        other => panic!("not a map: {other:?}"),
    };
    assert_eq!(count, Some(Reply::Int(1)));
    let doctor = text(d.engine.execute(&mut d.client, &[b"MEMORY", b"DOCTOR"]));
    assert!(doctor.ends_with('\n') && doctor.len() > 20, "{doctor:?}");
}

#[test]
fn auth_without_password_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["AUTH"],
        &["AUTH", "x"],
        &["AUTH", "nosuchuser", "pw"],
        &["AUTH", "a", "b", "c"],
        &["AUTH", "default", "anything"],
        &["AUTH", "DEFAULT", "anything"],
        &["CONFIG", "GET", "requirepass"],
    ]);
}

#[test]
fn auth_with_password_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CONFIG", "SET", "requirepass", "s3cret"],
        &["CONFIG", "GET", "requirepass"],
        // A client connected before the password was set stays authenticated.
        &["PING"],
        &["AUTH", "wrong"],
        &["PING"],
        &["AUTH", "s3cret"],
        &["AUTH", "default", "s3cret"],
        &["AUTH", "default", "wrong"],
        &["AUTH", "other", "s3cret"],
        &["HELLO", "2", "AUTH", "default", "wrong"],
        // RESET requires authentication again.
        &["RESET"],
        &["PING"],
        &["GET", "k"],
        &["GET"],
        &["NOSUCH", "x"],
        &["CLIENT", "SETNAME", "x"],
        &["SELECT", "1"],
        &["CONFIG", "SET", "requirepass", ""],
        &["HELLO"],
        &["HELLO", "3"],
        &["AUTH", "wrong"],
        &["PING"],
        &["AUTH", "s3cret"],
        &["PING"],
        &["CONFIG", "SET", "requirepass", ""],
        &["RESET"],
        &["PING"],
        &["AUTH", "s3cret"],
    ]);
}

#[test]
fn client_subcommands_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CLIENT"],
        &["CLIENT", "foo"],
        &["client", "NoSuch", "x"],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "GETNAME", "x"],
        &["CLIENT", "SETNAME"],
        &["CLIENT", "SETNAME", "a", "b"],
        &["CLIENT", "SETNAME", "my-conn"],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "SETNAME", "a b"],
        &["CLIENT", "SETNAME", "tab\there"],
        &["CLIENT", "SETNAME", "é"],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "SETNAME", ""],
        &["CLIENT", "GETNAME"],
        &["CLIENT", "ID", "x"],
        &["CLIENT", "INFO", "x"],
        &["CLIENT", "LIST", "TYPE", "foo"],
        &["CLIENT", "LIST", "TYPE", "master"],
        &["CLIENT", "LIST", "type", "REPLICA"],
        &["CLIENT", "LIST", "TYPE", "slave"],
        &["CLIENT", "LIST", "TYPE", "pubsub"],
        &["CLIENT", "LIST", "ID"],
        &["CLIENT", "LIST", "ID", "x"],
        &["CLIENT", "LIST", "ID", "999999", "x"],
        &["CLIENT", "LIST", "ID", "999999"],
        &["CLIENT", "LIST", "foo"],
        &["CLIENT", "LIST", "TYPE", "normal", "x"],
        &["CLIENT", "NO-EVICT", "on"],
        &["CLIENT", "NO-EVICT", "OFF"],
        &["CLIENT", "NO-EVICT", "maybe"],
        &["CLIENT", "NO-EVICT"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "HELP", "x"],
    ]);
}

/// Compares a flat key-value reply whose pairs come in hash order. (`Diff::check_unordered`
/// expects `Array([`, while redis-rs 1.x prints `array([`.)
fn check_pairs_unordered(d: &mut Diff, args: &[&str]) {
    let (real, ours) = d.both(args);
    let pairs = |s: &str| {
        let body = s
            .strip_prefix("array([")
            .and_then(|b| b.strip_suffix("])"))
            .unwrap_or_else(|| panic!("{args:?}: not an array: {s}"));
        let items: Vec<&str> = body.split(", ").collect();
        let mut pairs: Vec<String> = items.chunks(2).map(|p| p.join(" ")).collect();
        pairs.sort();
        pairs
    };
    assert_eq!(
        pairs(&ours),
        pairs(&real),
        "{args:?}: engine (left) vs redis-server (right)"
    );
}

#[test]
fn config_get_mirrors_a_default_server() {
    let mut d = Diff::new();
    for name in [
        "databases",
        "save",
        "appendonly",
        "appendfsync",
        "maxmemory",
        "maxmemory-policy",
        "maxmemory-samples",
        "port",
        "bind",
        "timeout",
        "tcp-keepalive",
        "maxclients",
        "proto-max-bulk-len",
        "requirepass",
        "hz",
        "protected-mode",
        "cluster-enabled",
        "daemonize",
        "io-threads",
        "loglevel",
        "nosuchparam",
        "MAXMEMORY",
        "Databases",
        "maxmemory-p?licy",
        "maxmemory-pol*",
        "databas[a-z]s",
        "nosuch*",
    ] {
        d.check(&[&["CONFIG", "GET", name]]);
    }
    d.check(&[
        &["CONFIG", "GET", "maxmemory", "MAXMEMORY"],
        &["CONFIG", "GET", "nosuch", "databases"],
        &["CONFIG", "GET"],
        &["CONFIG"],
    ]);
    // Several matches come back in Redis's hash order: compare them as sets of pairs.
    check_pairs_unordered(
        &mut d,
        &["CONFIG", "GET", "databases", "timeout", "maxclients"],
    );
    check_pairs_unordered(&mut d, &["CONFIG", "GET", "maxmemory", "maxmemory-pol*"]);
}

#[test]
fn config_set_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CONFIG", "SET", "maxmemory", "10mb"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "maxmemory", "1KB"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "maxmemory", "1k"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "maxmemory", ""],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "SET", "maxmemory", "-1"],
        &["CONFIG", "SET", "maxmemory", "12xb"],
        &["CONFIG", "SET", "MAXMEMORY", "x"],
        &["CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU"],
        &["CONFIG", "GET", "maxmemory-policy"],
        &["CONFIG", "SET", "maxmemory-policy", "foo"],
        &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
        &["CONFIG", "SET", "appendonly", "NO"],
        &["CONFIG", "GET", "appendonly"],
        &["CONFIG", "SET", "appendonly", "maybe"],
        &["CONFIG", "SET", "appendfsync", "X"],
        &["CONFIG", "SET", "loglevel", "x"],
        &["CONFIG", "SET", "protected-mode", "maybe"],
        &["CONFIG", "SET", "timeout", "x"],
        &["CONFIG", "SET", "timeout", "-1"],
        &["CONFIG", "SET", "timeout", "01"],
        &["CONFIG", "SET", "timeout", "+1"],
        &["CONFIG", "SET", "timeout", "99999999999"],
        &["CONFIG", "SET", "timeout", "300"],
        &["CONFIG", "GET", "timeout"],
        &["CONFIG", "SET", "timeout", "0"],
        &["CONFIG", "SET", "maxclients", "0"],
        &["CONFIG", "SET", "maxclients", "-1"],
        &["CONFIG", "SET", "maxclients", "4294967296"],
        &["CONFIG", "SET", "proto-max-bulk-len", "100"],
        &[
            "CONFIG",
            "SET",
            "proto-max-bulk-len",
            "99999999999999999999",
        ],
        &["CONFIG", "SET", "proto-max-bulk-len", "1mb"],
        &["CONFIG", "GET", "proto-max-bulk-len"],
        &["CONFIG", "SET", "proto-max-bulk-len", "536870912"],
        &["CONFIG", "SET", "maxmemory-samples", "0"],
        &["CONFIG", "SET", "hz", "1000"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "SET", "hz", "0"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "SET", "hz", "10"],
        &["CONFIG", "SET", "save", "1 2 3"],
        &["CONFIG", "SET", "save", "0 1"],
        &["CONFIG", "SET", "save", "1 -1"],
        &["CONFIG", "SET", "save", " 5  6 "],
        &["CONFIG", "SET", "save", "x"],
        &["CONFIG", "SET", "save", "3600 1"],
        &["CONFIG", "GET", "save"],
        &["CONFIG", "SET", "save", "1 "],
        &["CONFIG", "GET", "save"],
        &["CONFIG", "SET", "save", ""],
        &["CONFIG", "GET", "save"],
        // Immutable, unknown, duplicated, malformed.
        &["CONFIG", "SET", "databases", "3"],
        &["CONFIG", "SET", "cluster-enabled", "yes"],
        &["CONFIG", "SET", "io-threads", "2"],
        &["CONFIG", "SET", "daemonize", "yes"],
        &["CONFIG", "SET", "nosuch", "1"],
        &["CONFIG", "SET", "maxmemory", "1", "maxmemory", "2"],
        &["CONFIG", "SET", "maxmemory", "1", "timeout"],
        &["CONFIG", "SET", "save"],
        &["CONFIG", "SET"],
        // All or nothing: the first bad value fails the whole command.
        &["CONFIG", "SET", "hz", "5", "timeout", "x"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "SET", "timeout", "x", "nosuch", "1"],
        &["CONFIG", "SET", "databases", "1", "nosuch", "1"],
        &["CONFIG", "SET", "nosuch", "1", "databases", "1"],
        &["CONFIG", "SET", "hz", "5", "timeout", "7"],
        &["CONFIG", "GET", "hz"],
        &["CONFIG", "GET", "timeout"],
        &["CONFIG", "RESETSTAT"],
        &["CONFIG", "RESETSTAT", "x"],
        &["CONFIG", "REWRITE"],
        &["CONFIG", "HELP"],
        &["config", "help"],
        &["CONFIG", "foo"],
    ]);
}

#[test]
fn command_errors_and_getkeys_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["COMMAND", "foo"],
        &["COMMAND", "COUNT", "x"],
        &["COMMAND", "INFO", "nosuchcommand"],
        &["COMMAND", "DOCS", "nosuchcommand"],
        &["COMMAND", "LIST", "x"],
        &["COMMAND", "LIST", "FILTERBY", "x", "y"],
        &["COMMAND", "LIST", "FILTERBY", "MODULE", "nosuchmodule"],
        &["COMMAND", "GETKEYS"],
        &["COMMAND", "GETKEYS", "get"],
        &["COMMAND", "GETKEYS", "nosuch", "a"],
        &["COMMAND", "GETKEYS", "ping", "x"],
        &["COMMAND", "GETKEYS", "config", "get", "x"],
    ]);
    // Key extraction for the commands other families put in the table.
    let samples: &[&[&str]] = &[
        &["get", "a"],
        &["set", "a", "b"],
        &["mset", "a", "1", "b", "2"],
        &["mset", "a"],
        &["mget", "a", "b", "c"],
        &["del", "a", "b"],
        &["rename", "a", "b"],
        &["hset", "h", "f", "v"],
        &["zadd", "z", "1", "m"],
        &["lpush", "l", "x"],
        &["sinterstore", "d", "a", "b"],
        &["smove", "a", "b", "m"],
        &["lmove", "a", "b", "LEFT", "RIGHT"],
        &["xadd", "s", "*", "f", "v"],
        &["watch", "a", "b"],
        &["keys", "*"],
        &["dbsize", "x"],
    ];
    for sample in samples {
        if cmd::lookup(sample[0].as_bytes()).is_some() {
            let mut args = vec!["COMMAND", "GETKEYS"];
            args.extend_from_slice(sample);
            d.check(&[&args]);
        }
    }
}

#[test]
fn reset_and_quit_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CLIENT", "SETNAME", "before-reset"],
        &["SELECT", "3"],
        &["SET", "k", "v"],
        &["MULTI"],
        &["SET", "k", "w"],
        &["RESET"],
        &["EXEC"],
        &["GET", "k"],
        &["CLIENT", "GETNAME"],
        &["RESET", "x"],
        &["INFO", "nosuchsection"],
        &["QUIT", "extra", "args"],
    ]);
    assert!(d.client.closing, "QUIT sets closing");
    assert_eq!(d.client.db, 0);
    assert_eq!(d.client.name, None);
}

/// Every command of the engine's table has Redis 7.0's arity and legacy key positions
/// (first key, last key, step), as COMMAND INFO reports them on a real server.
#[test]
fn command_table_matches_redis_command_info() {
    let server = RedisServer::spawn();
    let mut redis = server.connect();
    let mut mismatches = Vec::new();
    let mut specs: Vec<_> = cmd::all_commands().collect();
    specs.sort_by_key(|s| s.name);
    for spec in specs {
        let info: Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg(spec.name)
            .query(&mut redis)
            .unwrap_or_else(|e| panic!("COMMAND INFO {}: {e}", spec.name));
        let Value::Array(entries) = info else {
            panic!("COMMAND INFO {}: {info:?}", spec.name)
        };
        let Some(Value::Array(fields)) = entries.into_iter().next() else {
            mismatches.push(format!("{}: unknown to redis-server 7.0", spec.name));
            continue;
        };
        let int = |i: usize| match fields.get(i) {
            Some(Value::Int(n)) => *n,
            other => panic!("{}: field {i} is {other:?}", spec.name),
        };
        let theirs = (int(1), int(3), int(4), int(5));
        let (first, last, step) = match spec.keys {
            KeySpec::Range { first, last, step } => (first as i64, last as i64, step as i64),
            KeySpec::None | KeySpec::All => (0, 0, 0),
            // Movable keys: Redis's legacy triple describes only part of them.
            KeySpec::Custom(_) | KeySpec::CustomOrAll(_) => (theirs.1, theirs.2, theirs.3),
        };
        let ours = (i64::from(spec.arity), first, last, step);
        // MOVE declares no keys on purpose: it locks its key in two databases itself.
        let known = spec.name == "move" && ours == (3, 0, 0, 0);
        if ours != theirs && !known {
            mismatches.push(format!(
                "{}: engine (arity, first, last, step) = {ours:?}, redis-server = {theirs:?}",
                spec.name
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

// ---- formats and engine-only behaviour ----

#[test]
fn hello_replies_with_the_server_map_and_switches_protocol() {
    let engine = Engine::new();
    let mut c = engine.client();
    let reply = run(&engine, &mut c, &["HELLO", "3", "SETNAME", "conn-1"]);
    let Reply::Map(pairs) = reply else {
        panic!("HELLO: {reply:?}")
    };
    let fields: Vec<(String, Reply)> = pairs.into_iter().map(|(k, v)| (text(k), v)).collect();
    let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["server", "version", "proto", "id", "mode", "role", "modules"]
    );
    assert_eq!(fields[0].1, Reply::bulk(b"redis"));
    assert_eq!(fields[1].1, Reply::bulk(server::VERSION.as_bytes()));
    assert_eq!(fields[2].1, Reply::Int(3));
    assert_eq!(fields[3].1, Reply::Int(c.id as i64));
    assert_eq!(fields[4].1, Reply::bulk(b"standalone"));
    assert_eq!(fields[5].1, Reply::bulk(b"master"));
    assert_eq!(fields[6].1, Reply::Array(vec![]));
    assert_eq!(c.resp, 3);
    assert_eq!(c.name.as_deref(), Some(&b"conn-1"[..]));

    // HELLO without a version keeps the protocol; HELLO 2 goes back.
    let Reply::Map(pairs) = run(&engine, &mut c, &["HELLO"]) else {
        panic!()
    };
    assert_eq!(pairs[2].1, Reply::Int(3));
    run(&engine, &mut c, &["HELLO", "2"]);
    assert_eq!(c.resp, 2);
    // An error changes nothing.
    let reply = run(&engine, &mut c, &["HELLO", "3", "SETNAME", "a b"]);
    assert_eq!(
        reply,
        Reply::err("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(c.resp, 2);
}

/// Parses a CLIENT INFO line into its fields, checking it is `key=value` pairs throughout.
fn client_fields(line: &str) -> Vec<(String, String)> {
    line.split(' ')
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("{kv:?} in {line:?}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn client_info_and_list_have_redis_fields() {
    let engine = Engine::new();
    let mut c = engine.client();
    c.addr = Some("127.0.0.1:50000".into());
    c.laddr = Some("127.0.0.1:6379".into());
    run(&engine, &mut c, &["CLIENT", "SETNAME", "worker-7"]);
    run(
        &engine,
        &mut c,
        &["CLIENT", "SETINFO", "LIB-NAME", "redis-rs"],
    );
    run(&engine, &mut c, &["CLIENT", "SETINFO", "lib-ver", "1.8.1"]);
    run(&engine, &mut c, &["SELECT", "4"]);
    let info = text(run(&engine, &mut c, &["CLIENT", "INFO"]));
    let line = info.strip_suffix('\n').expect("ends in a newline");
    let fields = client_fields(line);
    let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "addr",
            "laddr",
            "fd",
            "name",
            "age",
            "idle",
            "flags",
            "db",
            "sub",
            "psub",
            "ssub",
            "multi",
            "qbuf",
            "qbuf-free",
            "argv-mem",
            "multi-mem",
            "rbs",
            "rbp",
            "obl",
            "oll",
            "omem",
            "tot-mem",
            "events",
            "cmd",
            "user",
            "redir",
            "resp",
            "lib-name",
            "lib-ver"
        ]
    );
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("id"), Some(c.id.to_string().as_str()));
    assert_eq!(get("addr"), Some("127.0.0.1:50000"));
    assert_eq!(get("laddr"), Some("127.0.0.1:6379"));
    assert_eq!(get("name"), Some("worker-7"));
    assert_eq!(get("flags"), Some("N"));
    assert_eq!(get("db"), Some("4"));
    assert_eq!(get("multi"), Some("-1"));
    assert_eq!(get("cmd"), Some("client|info"));
    assert_eq!(get("user"), Some("default"));
    assert_eq!(get("resp"), Some("2"));
    assert_eq!(get("lib-name"), Some("redis-rs"));
    assert_eq!(get("lib-ver"), Some("1.8.1"));
    assert!(get("age").is_some_and(|a| a.parse::<u64>().is_ok()));

    // LIST: the same line (for this client), its own cmd; flags follow the client's state.
    run(&engine, &mut c, &["CLIENT", "NO-EVICT", "on"]);
    run(&engine, &mut c, &["CLIENT", "NO-TOUCH", "on"]);
    c.addr = Some("/tmp/edgebench.sock:0".into());
    let list = text(run(&engine, &mut c, &["CLIENT", "LIST"]));
    assert_eq!(list.lines().count(), 1);
    let fields = client_fields(list.trim_end());
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("cmd"), Some("client|list"));
    assert_eq!(get("flags"), Some("UeT"));
    let id = c.id.to_string();
    let by_id = text(run(
        &engine,
        &mut c,
        &["CLIENT", "LIST", "ID", "424242", &id],
    ));
    assert_eq!(by_id, list);
    assert_eq!(
        text(run(&engine, &mut c, &["CLIENT", "LIST", "TYPE", "normal"])),
        list
    );
    assert_eq!(
        run(&engine, &mut c, &["CLIENT", "ID"]),
        Reply::Int(c.id as i64)
    );
}

#[test]
fn client_setinfo_and_no_touch_follow_redis_7_2() {
    let engine = Engine::new();
    let mut c = engine.client();
    let mut check = |args: &[&str], want: Reply| assert_eq!(run(&engine, &mut c, args), want);
    check(&["CLIENT", "SETINFO", "lib-name", "x"], Reply::ok());
    check(&["CLIENT", "SETINFO", "LIB-VER", "1.0"], Reply::ok());
    check(
        &["CLIENT", "SETINFO", "lib-color", "x"],
        Reply::err("ERR Unrecognized option 'lib-color'"),
    );
    check(
        &["CLIENT", "SETINFO", "lib-name", "a b"],
        Reply::err("ERR lib-name cannot contain spaces, newlines or special characters."),
    );
    check(
        &["CLIENT", "SETINFO", "lib-name"],
        Reply::err("ERR wrong number of arguments for 'client|setinfo' command"),
    );
    check(&["CLIENT", "NO-TOUCH", "ON"], Reply::ok());
    check(&["CLIENT", "NO-TOUCH", "off"], Reply::ok());
    check(&["CLIENT", "NO-TOUCH", "x"], Reply::err("ERR syntax error"));
    check(
        &["CLIENT", "NO-TOUCH"],
        Reply::err("ERR wrong number of arguments for 'client|no-touch' command"),
    );
    check(&["CLIENT", "SETINFO", "lib-name", ""], Reply::ok());
    assert_eq!(c.lib_name, None);
    assert_eq!(c.lib_ver.as_deref(), Some(&b"1.0"[..]));
    assert!(!c.no_touch);
}

#[test]
fn a_password_set_on_the_engine_gates_new_clients() {
    let engine = Engine::new();
    let mut before = engine.client();
    engine.set_requirepass(Some("pw".into()));
    assert_eq!(engine.requirepass().as_deref(), Some("pw"));
    assert_eq!(engine.config_get("requirepass").as_deref(), Some("pw"));
    let mut c = engine.client();
    assert!(!c.authenticated);
    let noauth = Reply::err("NOAUTH Authentication required.");
    assert_eq!(run(&engine, &mut c, &["PING"]), noauth);
    assert_eq!(run(&engine, &mut c, &["CLIENT", "ID"]), noauth);
    // Name and arity are checked first, as in Redis.
    assert_eq!(
        run(&engine, &mut c, &["GET"]),
        Reply::err("ERR wrong number of arguments for 'get' command")
    );
    assert!(run(&engine, &mut c, &["NOSUCH"]).is_error());
    assert_eq!(
        run(&engine, &mut c, &["AUTH", "nope"]),
        Reply::err("WRONGPASS invalid username-password pair or user is disabled.")
    );
    assert_eq!(run(&engine, &mut c, &["AUTH", "pw"]), Reply::ok());
    assert_eq!(
        run(&engine, &mut c, &["PING"]),
        Reply::Status("PONG".into())
    );
    // HELLO AUTH authenticates too.
    let mut h = engine.client();
    assert!(run(&engine, &mut h, &["HELLO", "3"]).is_error());
    assert!(matches!(
        run(&engine, &mut h, &["HELLO", "3", "AUTH", "default", "pw"]),
        Reply::Map(_)
    ));
    assert_eq!(h.resp, 3);
    // A client that existed before the password keeps working.
    assert_eq!(
        run(&engine, &mut before, &["PING"]),
        Reply::Status("PONG".into())
    );
    engine.set_requirepass(None);
    let mut after = engine.client();
    assert!(after.authenticated);
    assert_eq!(
        run(&engine, &mut after, &["PING"]),
        Reply::Status("PONG".into())
    );
}

#[test]
fn noauth_inside_multi_aborts_the_transaction() {
    let engine = Engine::new();
    let mut c = engine.client();
    run(&engine, &mut c, &["MULTI"]);
    // A password set meanwhile does not touch an authenticated client...
    engine.set_requirepass(Some("pw".into()));
    assert_eq!(run(&engine, &mut c, &["PING"]), Reply::queued());
    // ...but RESET drops the transaction and the authentication.
    assert_eq!(
        run(&engine, &mut c, &["RESET"]),
        Reply::Status("RESET".into())
    );
    assert!(!c.authenticated && !c.in_multi());
}

#[test]
fn info_has_redis_sections_and_the_fields_tools_read() {
    let engine = Engine::new();
    let mut c = engine.client();
    run(&engine, &mut c, &["CONFIG", "SET", "maxmemory", "1mb"]);
    let sections = parse_info(&text(run(&engine, &mut c, &["INFO"])));
    let titles: Vec<&str> = sections.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Server",
            "Clients",
            "Memory",
            "Persistence",
            "Stats",
            "Replication",
            "CPU",
            "Modules",
            "Errorstats",
            "Cluster",
            "Keyspace"
        ]
    );
    let field = |section: &str, key: &str| -> String {
        sections
            .iter()
            .find(|(t, _)| t == section)
            .and_then(|(_, f)| f.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{section}/{key} missing"))
    };
    assert_eq!(field("Server", "redis_version"), server::VERSION);
    assert_eq!(field("Server", "redis_mode"), "standalone");
    assert_eq!(
        field("Server", "process_id"),
        std::process::id().to_string()
    );
    assert_eq!(field("Server", "run_id").len(), 40);
    for numeric in ["uptime_in_seconds", "uptime_in_days", "tcp_port", "hz"] {
        field("Server", numeric).parse::<u64>().expect(numeric);
    }
    assert_eq!(field("Clients", "connected_clients"), "1");
    assert_eq!(field("Clients", "maxclients"), "10000");
    assert!(field("Memory", "used_memory").parse::<u64>().is_ok());
    assert!(field("Memory", "used_memory_human").ends_with(['B', 'K', 'M', 'G']));
    assert_eq!(field("Memory", "maxmemory"), "1048576");
    assert_eq!(field("Memory", "maxmemory_human"), "1.00M");
    assert_eq!(field("Memory", "maxmemory_policy"), "noeviction");
    assert_eq!(field("Persistence", "loading"), "0");
    assert!(
        field("Stats", "total_commands_processed")
            .parse::<u64>()
            .expect("count")
            >= 2
    );
    assert_eq!(field("Replication", "role"), "master");
    field("CPU", "used_cpu_user").parse::<f64>().expect("cpu");
    assert_eq!(field("Cluster", "cluster_enabled"), "0");
}

#[test]
fn info_sections_keyspace_and_commandstats() {
    let now = Arc::new(AtomicU64::new(1_700_000_000_000));
    let engine = Engine::with_clock(now);
    let mut c = engine.client();
    let mut other = engine.client();
    // Keys through the typed API, so this test does not depend on other families.
    {
        let mut ks = engine.db(0).lock([&b"a"[..], b"b", b"c"], engine.now_ms());
        use edgebench_engine::engine::{Entry, Value as V};
        ks.insert(b"a", Entry::new(V::Str(b"1".to_vec())));
        ks.insert(b"b", Entry::new(V::Str(b"2".to_vec())));
        let mut ttl = Entry::new(V::Str(b"3".to_vec()));
        ttl.set_expires_at_ms(Some(engine.now_ms() + 60_000));
        ks.insert(b"c", ttl);
    }
    {
        let mut ks = engine.db(5).lock([&b"x"[..]], engine.now_ms());
        ks.insert(
            b"x",
            edgebench_engine::engine::Entry::new(edgebench_engine::engine::Value::Str(vec![])),
        );
    }
    let keyspace = text(run(&engine, &mut c, &["INFO", "keyspace"]));
    assert_eq!(
        keyspace,
        "# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\ndb5:keys=1,expires=0,avg_ttl=0\r\n"
    );
    // Several sections, any case, in Redis's order whatever the argument order.
    let text2 = text(run(
        &engine,
        &mut c,
        &["INFO", "KEYSPACE", "server", "nosuch"],
    ));
    let titles: Vec<String> = parse_info(&text2).into_iter().map(|(t, _)| t).collect();
    assert_eq!(titles, ["Server", "Keyspace"]);
    assert_eq!(text(run(&engine, &mut c, &["INFO", "nosuch"])), "");

    run(&engine, &mut other, &["PING"]);
    run(&engine, &mut other, &["PING"]);
    run(&engine, &mut other, &["ECHO", "x"]);
    let stats = parse_info(&text(run(&engine, &mut c, &["INFO", "commandstats"])));
    assert_eq!(stats[0].0, "Commandstats");
    let ping = stats[0]
        .1
        .iter()
        .find(|(k, _)| k == "cmdstat_ping")
        .map(|(_, v)| v.clone());
    assert_eq!(
        ping.as_deref(),
        Some("calls=2,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0")
    );
    assert!(stats[0].1.iter().any(|(k, _)| k == "cmdstat_echo"));
    assert!(stats[0].1.iter().any(|(k, _)| k == "cmdstat_info"));
    let all = parse_info(&text(run(&engine, &mut c, &["INFO", "all"])));
    assert!(all.iter().any(|(t, _)| t == "Commandstats"));
    assert!(all.iter().any(|(t, _)| t == "Keyspace"));

    // CONFIG RESETSTAT clears the counters.
    run(&engine, &mut c, &["CONFIG", "RESETSTAT"]);
    let stats = parse_info(&text(run(&engine, &mut c, &["INFO", "commandstats"])));
    assert!(!stats[0].1.iter().any(|(k, _)| k == "cmdstat_ping"));
}

#[test]
fn connected_clients_counts_live_clients() {
    let engine = Engine::new();
    assert_eq!(engine.connected_clients(), 0);
    let a = engine.client();
    let b = engine.client();
    assert_eq!(engine.connected_clients(), 2);
    drop(a);
    assert_eq!(engine.connected_clients(), 1);
    drop(b);
    assert_eq!(engine.connected_clients(), 0);
}

#[test]
fn command_reports_the_engine_table() {
    let engine = Engine::new();
    let mut c = engine.client();
    let count = cmd::all_commands().count() as i64;
    assert_eq!(
        run(&engine, &mut c, &["COMMAND", "COUNT"]),
        Reply::Int(count)
    );
    let Reply::Array(all) = run(&engine, &mut c, &["COMMAND"]) else {
        panic!()
    };
    assert_eq!(all.len() as i64, count);
    let Reply::Array(info) = run(
        &engine,
        &mut c,
        &["COMMAND", "INFO", "ping", "NOSUCH", "Echo"],
    ) else {
        panic!()
    };
    assert_eq!(info.len(), 3);
    assert_eq!(info[1], Reply::Nil);
    let Reply::Array(ping) = &info[0] else {
        panic!("{info:?}")
    };
    assert_eq!(ping.len(), 10);
    assert_eq!(ping[0], Reply::bulk(b"ping"));
    assert_eq!(ping[1], Reply::Int(-1));
    assert_eq!(&ping[3..6], &[Reply::Int(0), Reply::Int(0), Reply::Int(0)]);
    let Reply::Array(echo) = &info[2] else {
        panic!()
    };
    assert_eq!(echo[1], Reply::Int(2));

    // DOCS: a map of name to a map with summary, since and group.
    let Reply::Map(docs) = run(&engine, &mut c, &["COMMAND", "DOCS", "ping", "nosuch"]) else {
        panic!()
    };
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].0, Reply::bulk(b"ping"));
    let Reply::Map(fields) = &docs[0].1 else {
        panic!()
    };
    let keys: Vec<String> = fields.iter().map(|(k, _)| text(k.clone())).collect();
    assert_eq!(
        keys,
        ["summary", "since", "group", "complexity", "arguments"]
    );
    let Reply::Map(all_docs) = run(&engine, &mut c, &["COMMAND", "DOCS"]) else {
        panic!()
    };
    assert_eq!(all_docs.len() as i64, count);

    // LIST names subcommands too (`config|get`).
    let Reply::Array(names) = run(&engine, &mut c, &["COMMAND", "LIST"]) else {
        panic!()
    };
    assert!(names.len() as i64 > count);
    let Reply::Array(names) = run(
        &engine,
        &mut c,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "c*g"],
    ) else {
        panic!()
    };
    assert!(names.contains(&Reply::bulk(b"config")), "{names:?}");
    assert!(names.contains(&Reply::bulk(b"client|caching")), "{names:?}");
}

#[test]
fn time_follows_the_engine_clock() {
    let now = Arc::new(AtomicU64::new(1_700_000_000_123));
    let engine = Engine::with_clock(now);
    let mut c = engine.client();
    assert_eq!(
        run(&engine, &mut c, &["TIME"]),
        Reply::Array(vec![Reply::bulk(b"1700000000"), Reply::bulk(b"123000")])
    );
    let real = Engine::new();
    let mut c = real.client();
    let Reply::Array(parts) = run(&real, &mut c, &["TIME"]) else {
        panic!()
    };
    let secs: u64 = text(parts[0].clone()).parse().expect("seconds");
    let micros: u64 = text(parts[1].clone()).parse().expect("micros");
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    assert!(secs.abs_diff(wall) <= 2 && micros < 1_000_000);
}

#[test]
fn the_server_configures_its_own_parameters() {
    let engine = Engine::new();
    engine.configure("port", "6380").expect("port");
    engine.configure("bind", "0.0.0.0").expect("bind");
    engine.configure("maxclients", "50").expect("maxclients");
    engine
        .configure("proto-max-bulk-len", "2mb")
        .expect("proto-max-bulk-len");
    assert_eq!(engine.config_get("PORT").as_deref(), Some("6380"));
    assert_eq!(engine.maxclients(), 50);
    assert_eq!(engine.proto_max_bulk_len(), 2 * 1024 * 1024);
    assert!(engine.configure("port", "70000").is_err());
    assert!(engine.configure("nosuch", "1").is_err());
    // CONFIG SET cannot move the listeners.
    let mut c = engine.client();
    assert_eq!(
        run(&engine, &mut c, &["CONFIG", "SET", "port", "1"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable \
             config"
        )
    );
    let info = text(run(&engine, &mut c, &["INFO", "server"]));
    assert!(info.contains("\r\ntcp_port:6380\r\n"), "{info}");
}

#[test]
fn quit_marks_the_client_closing() {
    let engine = Engine::new();
    let mut c = engine.client();
    assert_eq!(run(&engine, &mut c, &["QUIT"]), Reply::ok());
    assert!(c.closing);
}

/// INFO locks every database to count keys. Inside an EXEC that locked its queue's shards up
/// front it would wait for a shard its own thread holds; EXEC must run a queue holding INFO
/// command by command, as it runs one that changes database (`tx::changes_db`).
#[test]
fn info_inside_exec_does_not_deadlock() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let engine = Engine::new();
        let mut c = engine.client();
        // The watched key's shard is locked by EXEC before INFO runs.
        run(&engine, &mut c, &["WATCH", "k"]);
        run(&engine, &mut c, &["MULTI"]);
        run(&engine, &mut c, &["ECHO", "x"]);
        run(&engine, &mut c, &["INFO", "keyspace"]);
        let _ = done.send(run(&engine, &mut c, &["EXEC"]));
    });
    let reply = finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("EXEC with INFO finished");
    assert!(
        matches!(reply, Reply::Array(ref r) if r.len() == 2),
        "{reply:?}"
    );
}

// ---- COMMAND from the metadata table ----

/// (redis-server's reply, the engine's reply) as `redis::Value`s, both in RESP `resp`.
fn values(
    redis: &mut redis::Connection,
    engine: &Engine,
    client: &mut Client,
    args: &[&str],
) -> (Value, Value) {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let error = |e: redis::RedisError| {
        Value::SimpleString(format!("error {:?} {:?}", e.code(), e.detail()))
    };
    let theirs: Value = cmd.query(redis).unwrap_or_else(error);
    let ours = run(engine, client, args).into_redis_value(client.resp);
    let ours = match ours {
        Value::ServerError(e) => error(redis::RedisError::from(e)),
        v => v,
    };
    (theirs, ours)
}

/// COMMAND INFO of every dispatched command and of every subcommand of a dispatched
/// container equals redis-server's, field for field, in RESP2 and RESP3.
#[test]
fn command_info_equals_redis_for_every_dispatched_command() {
    let server = RedisServer::spawn();
    let mut redis = server.connect();
    let engine = Engine::new();
    for resp in ["2", "3"] {
        let mut c = engine.client();
        let _: Value = redis::cmd("HELLO")
            .arg(resp)
            .query(&mut redis)
            .expect("HELLO");
        run(&engine, &mut c, &["HELLO", resp]);
        let mut names: Vec<String> = cmd::all_commands().map(|s| s.name.to_string()).collect();
        let Reply::Array(listed) = run(&engine, &mut c, &["COMMAND", "LIST"]) else {
            panic!("COMMAND LIST")
        };
        names.extend(listed.into_iter().map(text).filter(|n| n.contains('|')));
        assert!(names.iter().any(|n| n == "client|list"), "{names:?}");
        for name in &names {
            let (theirs, ours) = values(&mut redis, &engine, &mut c, &["COMMAND", "INFO", name]);
            assert_eq!(
                subcommands_sorted(ours),
                subcommands_sorted(theirs),
                "COMMAND INFO {name} (RESP{resp})"
            );
        }
    }
}

/// A COMMAND INFO reply with each record's subcommands sorted: Redis lists them in its hash
/// table's order, which changes from one server to the next.
fn subcommands_sorted(reply: Value) -> Value {
    let Value::Array(records) = reply else {
        return reply;
    };
    let records = records
        .into_iter()
        .map(|record| match record {
            Value::Array(mut fields) if fields.len() == 10 => {
                if let Value::Array(subs) | Value::Set(subs) = &mut fields[9] {
                    subs.sort_by_key(|s| format!("{s:?}"));
                }
                Value::Array(fields)
            }
            other => other,
        })
        .collect();
    Value::Array(records)
}

/// Replaces the texts the engine writes itself (summaries, complexity, history notes) so the
/// rest of a COMMAND DOCS record can be compared with redis-server's.
fn without_prose(v: Value) -> Value {
    match v {
        Value::Map(pairs) => Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| {
                    let key = match &k {
                        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                        _ => String::new(),
                    };
                    let v = match key.as_str() {
                        "summary" | "complexity" => Value::Nil,
                        "history" => match v {
                            Value::Set(entries) | Value::Array(entries) => Value::Array(
                                entries
                                    .into_iter()
                                    .map(|e| match e {
                                        Value::Array(mut e) => {
                                            e.truncate(1);
                                            Value::Array(e)
                                        }
                                        e => e,
                                    })
                                    .collect(),
                            ),
                            v => v,
                        },
                        // Redis lists subcommands in its hash table's order.
                        "subcommands" => match without_prose(v) {
                            Value::Map(mut subs) => {
                                subs.sort_by_key(|(k, _)| format!("{k:?}"));
                                Value::Map(subs)
                            }
                            v => v,
                        },
                        _ => without_prose(v),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_prose).collect()),
        v => v,
    }
}

/// COMMAND DOCS: Redis's structure and facts for every dispatched command (since, group,
/// arguments, flags, history versions), with summaries and complexity of the engine's own.
#[test]
fn command_docs_match_redis_apart_from_the_prose() {
    let server = RedisServer::spawn();
    let mut redis = server.connect();
    let engine = Engine::new();
    let mut c = engine.client();
    let _: Value = redis::cmd("HELLO")
        .arg("3")
        .query(&mut redis)
        .expect("HELLO");
    run(&engine, &mut c, &["HELLO", "3"]);
    for spec in cmd::all_commands() {
        let (theirs, ours) = values(&mut redis, &engine, &mut c, &["COMMAND", "DOCS", spec.name]);
        let ours_text = format!("{ours:?}");
        assert!(ours_text.contains("summary"), "{}: {ours_text}", spec.name);
        assert_eq!(
            without_prose(ours),
            without_prose(theirs),
            "COMMAND DOCS {}",
            spec.name
        );
    }
    let (theirs, ours) = values(
        &mut redis,
        &engine,
        &mut c,
        &["COMMAND", "DOCS", "client|list", "nosuch", "get|x", "GET"],
    );
    assert_eq!(without_prose(ours), without_prose(theirs));
}

/// COMMAND GETKEYS and GETKEYSANDFLAGS find the keys redis-server finds, for key specs of
/// every shape (index, keyword, range, keynum, limits) and the commands whose flags vary.
#[test]
fn command_getkeys_follows_the_key_specs() {
    let mut d = Diff::new();
    let samples: &[&[&str]] = &[
        &["get", "a"],
        &["set", "a", "b"],
        &["set", "a", "b", "GET"],
        &["set", "a", "b", "EX", "10"],
        &["mset", "a", "1", "b", "2"],
        &["msetnx", "a", "1", "b", "2"],
        &["mget", "a", "b", "c"],
        &["del", "a", "b"],
        &["copy", "a", "b", "DB", "1"],
        &["bitfield", "k", "GET", "u8", "0"],
        &["bitfield", "k", "SET", "u8", "0", "1"],
        &["bitfield", "k", "bogus"],
        &["bitfield_ro", "k", "GET", "u8", "0"],
        &["bitop", "AND", "d", "a", "b"],
        &["lmpop", "2", "a", "b", "LEFT"],
        &["lmpop", "0", "a", "LEFT"],
        &["lmpop", "5", "a", "LEFT"],
        &["lmpop", "x", "a", "LEFT"],
        &["blmpop", "0", "2", "a", "b", "LEFT"],
        &["zmpop", "1", "z", "MIN"],
        &["zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
        &["zunionstore", "d", "3", "a", "b"],
        &["zunion", "2", "a", "b"],
        &["zinter", "-1", "a"],
        &["zdiff", "1", "a", "WITHSCORES"],
        &["zrangestore", "d", "s", "0", "-1"],
        &["sintercard", "2", "a", "b", "LIMIT", "1"],
        &["xread", "COUNT", "1", "STREAMS", "a", "b", "0", "0"],
        &["xread", "STREAMS", "a", "b", "0"],
        &["xreadgroup", "GROUP", "g", "c", "STREAMS", "a", "0"],
        &["sort", "a", "STORE", "d"],
        &["sort_ro", "a", "BY", "x"],
        &["eval", "return 1", "2", "a", "b", "c"],
        &["eval", "return 1", "0"],
        &["eval", "return 1", "3", "a"],
        &["evalsha", "abc", "1", "a"],
        &["fcall", "f", "1", "a"],
        &["migrate", "h", "1", "k", "0", "5"],
        &[
            "migrate", "h", "1", "", "0", "5", "COPY", "AUTH", "p", "KEYS", "a", "b",
        ],
        &["georadius", "g", "0", "0", "1", "km", "STORE", "d"],
        &["georadius", "g", "0", "0", "1", "km", "STOREDIST", "d"],
        &[
            "geosearchstore",
            "d",
            "s",
            "FROMLONLAT",
            "0",
            "0",
            "BYRADIUS",
            "1",
            "km",
        ],
        &["memory", "usage", "k"],
        &["object", "encoding", "k"],
        &["xinfo", "stream", "s"],
        &["xgroup", "create", "s", "g", "$"],
        &["pfmerge", "d", "a", "b"],
        &["rename", "a", "b"],
        &["smove", "a", "b", "m"],
        &["lmove", "a", "b", "LEFT", "RIGHT"],
        &["blpop", "a", "b", "0"],
        &["xadd", "s", "*", "f", "v"],
        &["watch", "a", "b"],
        &["hset", "h", "f", "v"],
        &["keys", "*"],
        &["dbsize", "x"],
        &["client", "list"],
        &["client", "nosuch"],
        &["ping", "x"],
    ];
    for sample in samples {
        let top = cmd::lookup(sample[0].as_bytes()).is_some();
        for sub in ["GETKEYS", "GETKEYSANDFLAGS"] {
            let mut args = vec!["COMMAND", sub];
            args.extend_from_slice(sample);
            let (real, ours) = d.both(&args);
            if top {
                assert_eq!(ours, real, "{args:?}");
            } else {
                assert!(
                    ours.contains("Invalid command specified"),
                    "{args:?}: {ours}"
                );
            }
        }
    }
}

/// COMMAND LIST's filters, COUNT, HELP and the arity errors of the new subcommands.
#[test]
fn command_list_filters_and_errors_match_redis_for_the_engine_table() {
    let mut d = Diff::new();
    d.check(&[
        &["COMMAND", "HELP"],
        &["COMMAND", "HELP", "x"],
        &["COMMAND", "GETKEYSANDFLAGS", "get"],
        &["COMMAND", "GETKEYSANDFLAGS", "nosuch", "a"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN"],
        &["COMMAND", "LIST", "FILTERBY", "aclcat", "nosuchcategory"],
        &["COMMAND", "LIST", "FILTERBY", "MODULE", "x", "FILTERBY"],
        &["COMMAND", "INFO", "get|x", "client|", "a|b|c"],
    ]);
    // The filters keep what Redis keeps, among the commands the engine runs.
    let engine = Engine::new();
    let mut c = engine.client();
    let names = |r: Reply| -> Vec<String> {
        let Reply::Array(items) = r else {
            panic!("{r:?}")
        };
        let mut v: Vec<String> = items.into_iter().map(text).collect();
        v.sort();
        v
    };
    let clients = names(run(
        &engine,
        &mut c,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "CLIENT*"],
    ));
    assert!(clients.contains(&"client".to_string()));
    assert!(clients.contains(&"client|list".to_string()));
    assert!(clients.iter().all(|n| n.starts_with("client")));
    let strings = names(run(
        &engine,
        &mut c,
        &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "String"],
    ));
    assert!(strings.contains(&"get".to_string()));
    assert!(!strings.contains(&"hset".to_string()));
    let all = names(run(&engine, &mut c, &["COMMAND", "LIST"]));
    let top = all.iter().filter(|n| !n.contains('|')).count() as i64;
    assert_eq!(run(&engine, &mut c, &["COMMAND", "COUNT"]), Reply::Int(top));
}

// ---- CLIENT management, SLOWLOG, LATENCY, WAIT ----

#[test]
fn client_management_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CLIENT", "KILL"],
        &["CLIENT", "KILL", "1.2.3.4:5"],
        &["CLIENT", "KILL", "ADDR"],
        &["CLIENT", "KILL", "ID", "0"],
        &["CLIENT", "KILL", "ID", "-3"],
        &["CLIENT", "KILL", "ID", "x"],
        &["CLIENT", "KILL", "ID", "999999"],
        &["CLIENT", "KILL", "ID", "1", "x"],
        &["CLIENT", "KILL", "foo", "bar"],
        &["CLIENT", "KILL", "TYPE", "foo"],
        &["CLIENT", "KILL", "TYPE", "master"],
        &["CLIENT", "KILL", "USER", "nosuchuser"],
        &["CLIENT", "KILL", "USER", "default"],
        &["CLIENT", "KILL", "SKIPME", "maybe"],
        &["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"],
        &["CLIENT", "KILL", "ADDR", "1.2.3.4:5", "LADDR", "x"],
        &["CLIENT", "PAUSE"],
        &["CLIENT", "PAUSE", "x"],
        &["CLIENT", "PAUSE", "-1"],
        &["CLIENT", "PAUSE", "10", "foo"],
        &["CLIENT", "PAUSE", "x", "foo"],
        &["CLIENT", "PAUSE", "1", "WRITE", "x"],
        &["CLIENT", "PAUSE", "9223372036854775807", "WRITE"],
        &["CLIENT", "UNPAUSE"],
        &["CLIENT", "PAUSE", "0"],
        &["CLIENT", "PAUSE", "0", "write"],
        &["CLIENT", "UNPAUSE"],
        &["CLIENT", "UNPAUSE", "x"],
        &["CLIENT", "UNBLOCK"],
        &["CLIENT", "UNBLOCK", "x"],
        &["CLIENT", "UNBLOCK", "1", "foo"],
        &["CLIENT", "UNBLOCK", "x", "foo"],
        &["CLIENT", "UNBLOCK", "x", "error"],
        &["CLIENT", "UNBLOCK", "999999"],
        &["CLIENT", "UNBLOCK", "999999", "TIMEOUT"],
        &["CLIENT", "UNBLOCK", "1", "2", "3"],
        &["CLIENT", "REPLY"],
        &["CLIENT", "REPLY", "foo"],
        &["CLIENT", "REPLY", "ON"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKINGINFO", "x"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "CACHING"],
        &["CLIENT", "HELP"],
    ]);
}

#[test]
fn slowlog_latency_and_wait_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SLOWLOG"],
        &["SLOWLOG", "foo"],
        &["SLOWLOG", "HELP"],
        &["SLOWLOG", "help", "x"],
        &["SLOWLOG", "GET", "x"],
        &["SLOWLOG", "GET", "-2"],
        &["SLOWLOG", "GET", "1", "2"],
        &["SLOWLOG", "LEN", "x"],
        &["SLOWLOG", "RESET", "x"],
        &["SLOWLOG", "RESET"],
        &["SLOWLOG", "LEN"],
        &["SLOWLOG", "GET"],
        &["SLOWLOG", "GET", "-1"],
        &["CONFIG", "SET", "slowlog-log-slower-than", "-2"],
        &["CONFIG", "SET", "slowlog-max-len", "-1"],
        &["CONFIG", "SET", "latency-monitor-threshold", "-1"],
        &["CONFIG", "SET", "slowlog-log-slower-than", "x"],
        &["CONFIG", "GET", "slowlog-log-slower-than"],
        &["CONFIG", "GET", "slowlog-max-len"],
        &["CONFIG", "GET", "latency-monitor-threshold"],
        &["LATENCY"],
        &["LATENCY", "foo"],
        &["LATENCY", "HELP"],
        &["LATENCY", "LATEST"],
        &["LATENCY", "LATEST", "x"],
        &["LATENCY", "HISTORY"],
        &["LATENCY", "HISTORY", "command"],
        &["LATENCY", "RESET"],
        &["LATENCY", "RESET", "command", "fast-command"],
        &["WAIT"],
        &["WAIT", "0", "0"],
        &["WAIT", "x", "0"],
        &["WAIT", "0", "-1"],
        &["WAIT", "0", "x"],
        &["WAIT", "-1", "10"],
    ]);
}

/// With `slowlog-log-slower-than 0` every command is logged: the same entries as Redis (ids,
/// arguments with Redis's caps, client names), apart from times, durations and addresses.
#[test]
fn slowlog_with_threshold_zero_logs_what_redis_logs() {
    let server = RedisServer::spawn();
    let mut redis = server.connect();
    let engine = Engine::new();
    let mut c = engine.client();
    let long = "x".repeat(200);
    let mut many: Vec<&str> = vec!["RPUSH", "list"];
    many.extend(std::iter::repeat_n("e", 40));
    let script: Vec<Vec<&str>> = vec![
        vec!["CONFIG", "SET", "slowlog-log-slower-than", "0"],
        vec!["SLOWLOG", "RESET"],
        vec!["SET", "k", "v"],
        vec!["CLIENT", "SETNAME", "tester"],
        vec!["GET", "k"],
        vec!["SET", "big", &long],
        many,
        vec!["NOSUCHCOMMAND"],
        vec!["GET"],
        vec!["MULTI"],
        vec!["INCR", "n"],
        vec!["EXEC"],
        vec!["SLOWLOG", "LEN"],
    ];
    for args in &script {
        let (theirs, ours) = values(&mut redis, &engine, &mut c, args);
        assert_eq!(ours, theirs, "{args:?}");
    }
    let (theirs, ours) = values(&mut redis, &engine, &mut c, &["SLOWLOG", "GET", "-1"]);
    let facts = |v: Value| -> Vec<(Value, Value, Value)> {
        let Value::Array(entries) = v else {
            panic!("{v:?}")
        };
        entries
            .into_iter()
            .map(|e| {
                let Value::Array(f) = e else { panic!("{e:?}") };
                assert_eq!(f.len(), 6);
                assert!(matches!(f[1], Value::Int(t) if t > 1_600_000_000));
                assert!(matches!(f[2], Value::Int(us) if us >= 0));
                (f[0].clone(), f[3].clone(), f[5].clone())
            })
            .collect()
    };
    let (theirs, ours) = (facts(theirs), facts(ours));
    assert!(ours.len() >= 9, "{ours:?}");
    assert_eq!(ours, theirs);
    // The cap: the slow log keeps at most slowlog-max-len entries, newest first.
    for args in [
        &["CONFIG", "SET", "slowlog-max-len", "2"][..],
        &["PING"],
        &["SLOWLOG", "LEN"],
    ] {
        let (theirs, ours) = values(&mut redis, &engine, &mut c, args);
        assert_eq!(ours, theirs, "{args:?}");
    }
}

/// The latency monitor records commands slower than its threshold, in Redis's shape.
#[test]
fn latency_records_slow_commands_once_enabled() {
    let engine = Engine::new();
    let mut c = engine.client();
    assert_eq!(
        run(&engine, &mut c, &["LATENCY", "LATEST"]),
        Reply::Array(Vec::new())
    );
    run(
        &engine,
        &mut c,
        &["CONFIG", "SET", "latency-monitor-threshold", "1"],
    );
    // A command that certainly takes over 1 ms: a large SORT.
    let values: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
    let mut args = vec!["RPUSH", "l"];
    args.extend(values.iter().map(String::as_str));
    run(&engine, &mut c, &args);
    for _ in 0..20 {
        run(&engine, &mut c, &["SORT", "l"]);
    }
    let Reply::Array(latest) = run(&engine, &mut c, &["LATENCY", "LATEST"]) else {
        panic!()
    };
    assert!(!latest.is_empty(), "no event recorded");
    let Reply::Array(event) = &latest[0] else {
        panic!("{latest:?}")
    };
    assert_eq!(event.len(), 4);
    let name = text(event[0].clone());
    let Reply::Array(history) = run(&engine, &mut c, &["LATENCY", "HISTORY", &name]) else {
        panic!()
    };
    assert!(!history.is_empty());
    assert_eq!(
        run(&engine, &mut c, &["LATENCY", "RESET", &name, "nosuch"]),
        Reply::Int(1)
    );
}

/// CLIENT LIST shows every client of the engine, in-process ones too, with what each
/// published after its last command; KILL marks the named client.
#[test]
fn client_list_and_kill_see_every_engine_client() {
    let engine = Engine::new();
    let mut a = engine.client();
    let mut b = engine.client();
    run(&engine, &mut a, &["CLIENT", "SETNAME", "alpha"]);
    run(&engine, &mut a, &["SELECT", "5"]);
    run(&engine, &mut a, &["MULTI"]);
    run(&engine, &mut a, &["INCR", "x"]);
    let list = text(run(&engine, &mut b, &["CLIENT", "LIST"]));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    let fields = client_fields(lines[0]);
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("id"), Some(a.id.to_string().as_str()));
    assert_eq!(get("name"), Some("alpha"));
    assert_eq!(get("db"), Some("5"));
    assert_eq!(get("multi"), Some("1"));
    assert_eq!(get("flags"), Some("x"));
    assert_eq!(get("cmd"), Some("multi"));
    assert_eq!(get("fd"), Some("-1"));
    assert!(lines[1].contains("cmd=client|list"));
    let id = a.id.to_string();
    assert_eq!(
        run(&engine, &mut b, &["CLIENT", "KILL", "ID", &id]),
        Reply::Int(1)
    );
    assert!(a.shared.killed());
    assert_eq!(
        text(run(&engine, &mut b, &["CLIENT", "LIST"]))
            .lines()
            .count(),
        1
    );
    drop(a);
    let c = engine.client();
    let list = text(run(
        &engine,
        &mut b,
        &["CLIENT", "LIST", "ID", &c.id.to_string()],
    ));
    assert!(list.contains("cmd=NULL"), "{list}");
}

// ---- LATENCY HISTOGRAM ----

/// The commands LATENCY HISTOGRAM names, with their call counts and the cumulative count
/// of their last bucket (which must equal the calls).
fn histogram(engine: &Engine, client: &mut Client, args: &[&str]) -> Vec<(String, i64, i64)> {
    let Reply::Map(entries) = run(engine, client, args) else {
        panic!("LATENCY HISTOGRAM: not a map");
    };
    entries
        .into_iter()
        .map(|(name, h)| {
            let Reply::Bulk(name) = name else {
                panic!("name {name:?}")
            };
            let Reply::Map(fields) = h else {
                panic!("entry {h:?}")
            };
            let calls = match &fields[0] {
                (Reply::Bulk(k), Reply::Int(n)) if k == b"calls" => *n,
                other => panic!("calls: {other:?}"),
            };
            let last = match &fields[1] {
                (Reply::Bulk(k), Reply::Map(points)) if k == b"histogram_usec" => {
                    match points.last() {
                        Some((Reply::Int(_), Reply::Int(n))) => *n,
                        other => panic!("buckets: {other:?}"),
                    }
                }
                other => panic!("histogram_usec: {other:?}"),
            };
            (String::from_utf8(name).expect("utf-8"), calls, last)
        })
        .collect()
}

#[test]
fn latency_histogram_counts_each_command_and_subcommand_since_the_last_reset() {
    let engine = Engine::new();
    let mut c = engine.client();
    run(&engine, &mut c, &["CONFIG", "RESETSTAT"]);
    assert_eq!(
        histogram(&engine, &mut c, &["LATENCY", "HISTOGRAM"]),
        vec![("config|resetstat".to_string(), 1, 1)]
    );
    run(&engine, &mut c, &["CONFIG", "RESETSTAT"]);
    run(&engine, &mut c, &["SET", "a", "b"]);
    run(&engine, &mut c, &["SET", "c", "d"]);
    run(&engine, &mut c, &["GET", "a"]);
    run(&engine, &mut c, &["CLIENT", "ID"]);
    run(&engine, &mut c, &["CLIENT", "GETNAME"]);
    run(&engine, &mut c, &["CLIENT", "GETNAME"]);
    assert_eq!(
        histogram(
            &engine,
            &mut c,
            &["LATENCY", "HISTOGRAM", "set", "blabla", "zadd", "client"]
        ),
        vec![
            ("client|getname".to_string(), 2, 2),
            ("client|id".to_string(), 1, 1),
            ("set".to_string(), 2, 2),
        ]
    );
    assert_eq!(
        histogram(
            &engine,
            &mut c,
            &["LATENCY", "HISTOGRAM", "CLIENT|ID", "get"]
        ),
        vec![("client|id".to_string(), 1, 1), ("get".to_string(), 1, 1)]
    );
    // latency-tracking no: nothing more is counted.
    run(
        &engine,
        &mut c,
        &["CONFIG", "SET", "latency-tracking", "no"],
    );
    run(&engine, &mut c, &["GET", "a"]);
    assert_eq!(
        histogram(&engine, &mut c, &["LATENCY", "HISTOGRAM", "get"]),
        vec![("get".to_string(), 1, 1)]
    );
    assert!(text(run(&engine, &mut c, &["LATENCY", "DOCTOR"])).starts_with("No latency spikes"));
}
