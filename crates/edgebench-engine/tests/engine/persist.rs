//! Persistence against the real thing: RDB files and append-only directories written by the
//! engine load into a real `redis-server` 7.0 (and pass `redis-check-rdb` /
//! `redis-check-aof`), and redis-server's load into the engine, to the same keyspace: every
//! key of every database with its type, encoding, contents and deadline, streams with their
//! consumer groups, and the function libraries. Then the files' faults: a cut tail, a
//! transaction without its EXEC, garbage, damaged snapshots, each refused with one line
//! naming the file (and leaving the engine empty) or loaded as redis-server loads it;
//! replay semantics (nothing expires while a file is replayed); and persistence while the
//! engine runs: BGSAVE, BGREWRITEAOF, CONFIG SET appendonly, the `save` schedule and the
//! automatic rewrite, SHUTDOWN, INFO persistence asked meanwhile.
//!
//! Every test works in its own temporary directories under /tmp; redis-server runs on them
//! through [`RedisServer::spawn_with`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use edgebench_engine::engine::persist::{Loaded, PersistError};
use edgebench_engine::engine::{Client, Engine};
use redis::{ConnectionLike, Value};
use tempfile::TempDir;

use crate::dump::{build_all, Pair};
use crate::support::redis_server::RedisServer;

/// How long a background save or rewrite gets to finish.
const JOB_TIMEOUT: Duration = Duration::from_secs(8);

/// A deadline far ahead (2100-01-01), the same on both sides of a comparison.
const FAR_MS: &str = "4102444800000";

/// A function library with one writing function.
const LIBRARY: &str = "#!lua name=persistlib\n\
    redis.register_function('setincr', function(keys, args)\n\
      redis.call('SET', keys[1], args[1])\n\
      return redis.call('INCR', keys[2])\n\
    end)";

// ---- the two sides ----

/// Something that answers commands: redis-server or the engine.
trait Side {
    fn q(&mut self, args: &[&[u8]]) -> Value;

    /// A command given as one line of space-separated words.
    fn line(&mut self, line: &str) -> Value {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        self.q(&args)
    }

    /// A command that must succeed (a broken test step, not a finding, otherwise).
    fn ok(&mut self, args: &[&[u8]]) -> Value {
        let v = self.q(args);
        assert!(!is_error(&v), "{:?}: {v:?}", lossy_args(args));
        v
    }

    fn ok_line(&mut self, line: &str) -> Value {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        self.ok(&args)
    }
}

impl Side for redis::Connection {
    fn q(&mut self, args: &[&[u8]]) -> Value {
        let mut cmd = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for a in &args[1..] {
            cmd.arg(*a);
        }
        self.req_packed_command(&cmd.get_packed_command())
            .unwrap_or_else(|e| Value::SimpleString(format!("ERR {e:?}")))
    }
}

/// The engine in-process, with one client.
struct Local {
    engine: Engine,
    client: Client,
}

impl Local {
    fn new(engine: Engine) -> Local {
        let client = engine.client();
        Local { engine, client }
    }
}

impl Side for Local {
    fn q(&mut self, args: &[&[u8]]) -> Value {
        self.engine
            .execute(&mut self.client, args)
            .into_redis_value(2)
    }
}

fn is_error(v: &Value) -> bool {
    match v {
        Value::ServerError(_) => true,
        Value::SimpleString(s) => s.starts_with("ERR"),
        _ => false,
    }
}

fn lossy_args(args: &[&[u8]]) -> Vec<String> {
    args.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        other => format!("{other:?}"),
    }
}

fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) | Value::Set(items) => items,
        Value::Nil => Vec::new(),
        other => panic!("not an array: {other:?}"),
    }
}

/// A field of INFO `section`.
fn info(side: &mut dyn Side, section: &str, field: &str) -> String {
    let all = text(&side.q(&[b"INFO", section.as_bytes()]));
    all.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}: {all}"))
        .trim()
        .to_string()
}

/// Waits until INFO persistence `field` reads `want`.
fn wait_info(side: &mut dyn Side, field: &str, want: &str) {
    let deadline = Instant::now() + JOB_TIMEOUT;
    loop {
        if info(side, "persistence", field) == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{field} still not {want} after {JOB_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- the keyspace, comparable ----

/// Every key of every database, as `"db/key" → view`, and the function libraries.
fn keyspace(side: &mut dyn Side) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for db in 0..16 {
        side.ok(&[b"SELECT", db.to_string().as_bytes()]);
        let mut keys: Vec<Vec<u8>> = items(side.ok(&[b"KEYS", b"*"]))
            .into_iter()
            .map(|k| match k {
                Value::BulkString(k) => k,
                other => panic!("KEYS gave {other:?}"),
            })
            .collect();
        keys.sort();
        for key in keys {
            let name = format!("{db}/{}", String::from_utf8_lossy(&key));
            out.insert(name, view(side, &key));
        }
    }
    side.ok(&[b"SELECT", b"0"]);
    let mut libraries: Vec<String> = items(side.ok(&[b"FUNCTION", b"LIST", b"WITHCODE"]))
        .iter()
        .map(|l| format!("{l:?}"))
        .collect();
    libraries.sort();
    out.insert("functions".into(), libraries.join("\n"));
    out
}

/// One key: type, encoding, absolute deadline and contents (sorted where Redis's order is a
/// hash order; a stream with its groups, consumers and pending entries, without the idle
/// times that follow each process's clock).
fn view(side: &mut dyn Side, key: &[u8]) -> String {
    let kind = text(&side.q(&[b"TYPE", key]));
    let encoding = text(&side.q(&[b"OBJECT", b"ENCODING", key]));
    let deadline = text(&side.q(&[b"PEXPIRETIME", key]));
    let body = match kind.as_str() {
        "string" => format!("{:?}", side.q(&[b"GET", key])),
        "list" => format!("{:?}", side.q(&[b"LRANGE", key, b"0", b"-1"])),
        "set" => sorted(items(side.q(&[b"SMEMBERS", key]))),
        "hash" => {
            let flat = items(side.q(&[b"HGETALL", key]));
            sorted(flat.chunks(2).map(|p| Value::Array(p.to_vec())).collect())
        }
        "zset" => format!(
            "{:?}",
            side.q(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])
        ),
        "stream" => stream_view(side, key),
        other => panic!("unexpected type {other}"),
    };
    format!("{kind} {encoding} deadline={deadline} {body}")
}

fn stream_view(side: &mut dyn Side, key: &[u8]) -> String {
    let mut out = format!("{:?}\n", side.q(&[b"XRANGE", key, b"-", b"+"]));
    // The radix tree's shape follows how each side cut its nodes, not what it holds.
    let stream = without_fields(
        items(side.q(&[b"XINFO", b"STREAM", key])),
        &["radix-tree-keys", "radix-tree-nodes"],
    );
    out.push_str(&format!("{stream:?}\n"));
    let groups = items(side.q(&[b"XINFO", b"GROUPS", key]));
    out.push_str(&format!("{groups:?}\n"));
    for group in groups {
        let fields = items(group);
        let name = fields
            .iter()
            .position(|f| text(f) == "name")
            .map(|i| text(&fields[i + 1]))
            .expect("a group's name");
        let g = name.as_bytes();
        out.push_str(&format!("{:?}\n", side.q(&[b"XPENDING", key, g])));
        for entry in items(side.q(&[b"XPENDING", key, g, b"-", b"+", b"1000"])) {
            // id, consumer, idle ms, deliveries: the idle time goes.
            let mut e = items(entry);
            e.remove(2);
            out.push_str(&format!("{e:?}\n"));
        }
        for consumer in items(side.q(&[b"XINFO", b"CONSUMERS", key, g])) {
            let c = without_fields(items(consumer), &["idle", "inactive"]);
            out.push_str(&format!("{c:?}\n"));
        }
    }
    out
}

/// A flat field-value array without the named fields.
fn without_fields(flat: Vec<Value>, drop: &[&str]) -> Vec<Value> {
    flat.chunks(2)
        .filter(|p| !drop.contains(&text(&p[0]).as_str()))
        .flat_map(|p| p.to_vec())
        .collect()
}

fn sorted(items: Vec<Value>) -> String {
    let mut parts: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    parts.sort();
    parts.join(",")
}

/// A keyspace without the difference between a raw and an embedded string, which a
/// snapshot does not keep (a string loads embedded if it is short, in Redis as here).
fn loose(keyspace: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    keyspace
        .iter()
        .map(|(k, v)| {
            let v = v.replacen("string raw ", "string bytes ", 1).replacen(
                "string embstr ",
                "string bytes ",
                1,
            );
            (k.clone(), v)
        })
        .collect()
}

/// Asserts two keyspaces are equal, naming the first key that differs.
fn assert_same(got: &BTreeMap<String, String>, want: &BTreeMap<String, String>, what: &str) {
    let keys = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(got), keys(want), "{what}: the keys differ");
    for (k, v) in want {
        assert_eq!(&got[k], v, "{what}: {k} differs");
    }
}

// ---- files and processes ----

fn tmp() -> TempDir {
    tempfile::Builder::new()
        .prefix("edgebench-persist-")
        .tempdir_in("/tmp")
        .expect("a temporary directory in /tmp")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// An engine whose files live in `dir`, the append-only file on if `aof`, after
/// [`Engine::load_from_disk`].
fn engine_in(dir: &Path, aof: bool, truncated_ok: bool) -> (Local, Result<Loaded, PersistError>) {
    let engine = Engine::new();
    engine.configure("dir", path_str(dir)).unwrap();
    engine
        .configure("appendonly", if aof { "yes" } else { "no" })
        .unwrap();
    engine
        .configure(
            "aof-load-truncated",
            if truncated_ok { "yes" } else { "no" },
        )
        .unwrap();
    let loaded = engine.load_from_disk();
    (Local::new(engine), loaded)
}

/// A loaded engine on `dir`, which must load.
fn loaded_engine(dir: &Path, aof: bool) -> (Local, Loaded) {
    let (local, loaded) = engine_in(dir, aof, true);
    let loaded = loaded.unwrap_or_else(|e| panic!("load from {}: {e}", dir.display()));
    (local, loaded)
}

/// redis-server on a copy of `dir` (so it cannot touch the engine's files), with the
/// append-only file on if `aof`.
fn redis_on_copy(dir: &Path, aof: bool) -> (RedisServer, TempDir) {
    let copy = tmp();
    copy_dir(dir, copy.path());
    let server = RedisServer::spawn_with(&[
        "--dir",
        path_str(copy.path()),
        "--appendonly",
        if aof { "yes" } else { "no" },
    ]);
    (server, copy)
}

/// The keyspace redis-server loads from a copy of `dir` (see [`redis_on_copy`]).
fn redis_keyspace(dir: &Path, aof: bool) -> BTreeMap<String, String> {
    let (server, _copy) = redis_on_copy(dir, aof);
    keyspace(&mut server.connect())
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs a redis-check-* tool; its exit status and output.
fn check_tool(tool: &str, file: &Path) -> (bool, String) {
    let out = Command::new(tool)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e} (install redis-tools)"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn assert_checks(tool: &str, file: &Path) {
    let (ok, out) = check_tool(tool, file);
    assert!(ok, "{tool} {}: {out}", file.display());
}

fn aof_dir(dir: &Path) -> PathBuf {
    dir.join("appendonlydir")
}

fn manifest(dir: &Path) -> PathBuf {
    aof_dir(dir).join("appendonly.aof.manifest")
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// How many keys the engine holds in every database.
fn key_count(side: &mut dyn Side) -> i64 {
    let mut n = 0;
    for db in 0..16 {
        side.ok(&[b"SELECT", db.to_string().as_bytes()]);
        match side.q(&[b"DBSIZE"]) {
            Value::Int(k) => n += k,
            other => panic!("DBSIZE: {other:?}"),
        }
    }
    side.ok(&[b"SELECT", b"0"]);
    n
}

/// Asserts a refused load: one line naming `file` (and saying `what`), and an engine left
/// with no key and no function.
fn assert_refused(
    (mut local, loaded): (Local, Result<Loaded, PersistError>),
    file: &Path,
    what: &str,
) -> String {
    let e = match loaded {
        Err(e) => e.to_string(),
        Ok(l) => panic!("{what}: loaded {l:?}, expected a refusal"),
    };
    assert!(!e.contains('\n'), "{what}: one line: {e}");
    assert!(
        e.contains(path_str(file)),
        "{what}: names {}: {e}",
        file.display()
    );
    assert_eq!(key_count(&mut local), 0, "{what}: no key is left loaded");
    assert_eq!(
        local.ok_line("FUNCTION LIST"),
        Value::Array(vec![]),
        "{what}: no function is left loaded"
    );
    e
}

// ---- RDB ----

/// Keys with deadlines, in other databases, a stream with groups, a function library: the
/// rest of what a snapshot holds, on both sides of a pair.
fn build_extras(p: &mut Pair) {
    p.both(&["SET", "ttl:string", "v", "PXAT", FAR_MS]);
    p.both(&["HSET", "ttl:hash", "f", "v"]);
    p.both(&["PEXPIREAT", "ttl:hash", FAR_MS]);
    p.both(&["RPUSH", "ttl:list", "a", "b"]);
    p.both(&["PEXPIREAT", "ttl:list", "4102444800123"]);
    p.both(&["XGROUP", "CREATE", "stream", "readers", "0"]);
    p.both(&[
        "XREADGROUP",
        "GROUP",
        "readers",
        "alice",
        "COUNT",
        "2",
        "STREAMS",
        "stream",
        ">",
    ]);
    p.both(&["XGROUP", "CREATECONSUMER", "stream", "readers", "bob"]);
    p.both(&["XGROUP", "CREATE", "bigstream", "late", "$"]);
    p.both(&["SELECT", "3"]);
    p.both(&["SET", "three", "3"]);
    p.both(&["ZADD", "three:z", "1", "a"]);
    p.both(&["SELECT", "15"]);
    p.both(&["SADD", "fifteen", "x"]);
    p.both(&["SELECT", "0"]);
    p.both(&["FUNCTION", "LOAD", LIBRARY]);
}

#[test]
fn rdb_files_move_both_ways_for_every_type() {
    let mut p = Pair::new();
    build_all(&mut p);
    build_extras(&mut p);
    let mut engine = Local {
        engine: p.engine.clone(),
        client: p.engine.client(),
    };
    let want = keyspace(&mut p.redis);
    assert_same(&keyspace(&mut engine), &want, "built alike");

    // The engine's file: redis-check-rdb passes it, redis-server loads every key alike.
    let dir = tmp();
    engine
        .engine
        .configure("dir", path_str(dir.path()))
        .unwrap();
    assert_eq!(engine.ok_line("SAVE"), Value::Okay);
    let rdb = dir.path().join("dump.rdb");
    assert_checks("redis-check-rdb", &rdb);
    assert_same(
        &redis_keyspace(dir.path(), false),
        &want,
        "redis-server loading the engine's dump.rdb",
    );

    // redis-server's file: the engine loads every key alike.
    assert_eq!(p.redis.line("SAVE"), Value::Okay);
    let (mut fresh, loaded) = loaded_engine(p.server.data_dir(), false);
    let keys = want.len() as u64 - 1; // the functions' entry
    assert_eq!(
        loaded,
        Loaded::Rdb {
            path: p.server.data_dir().join("dump.rdb"),
            keys
        }
    );
    assert_same(
        &keyspace(&mut fresh),
        &want,
        "the engine loading redis-server's dump.rdb",
    );
    // And its own file back.
    let (mut again, _) = loaded_engine(dir.path(), false);
    assert_same(&keyspace(&mut again), &want, "the engine loading its own");
}

#[test]
fn bgsave_lastsave_and_info_persistence() {
    let dir = tmp();
    let (mut e, loaded) = loaded_engine(dir.path(), false);
    assert_eq!(loaded, Loaded::Nothing);
    let started = text(&e.ok_line("LASTSAVE"));
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "0");
    assert_eq!(info(&mut e, "persistence", "rdb_last_bgsave_status"), "ok");
    e.ok_line("SET a 1");
    e.ok_line("SET b 2");
    e.ok_line("INCR a");
    e.ok_line("GET a");
    // A write that changes nothing is no change.
    e.ok_line("SET c 3 XX");
    assert_eq!(
        info(&mut e, "persistence", "rdb_changes_since_last_save"),
        "3"
    );
    let before = now_ms() / 1000;
    assert_eq!(
        e.ok_line("BGSAVE"),
        Value::SimpleString("Background saving started".into())
    );
    wait_info(&mut e, "rdb_bgsave_in_progress", "0");
    assert_eq!(info(&mut e, "persistence", "rdb_last_bgsave_status"), "ok");
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "1");
    assert_eq!(
        info(&mut e, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    assert_eq!(info(&mut e, "stats", "total_forks"), "1");
    let lastsave: u64 = text(&e.ok_line("LASTSAVE")).parse().unwrap();
    assert!(
        lastsave >= before && lastsave >= started.parse().unwrap(),
        "LASTSAVE {lastsave} is the save's start ({before})"
    );
    assert_eq!(
        info(&mut e, "persistence", "rdb_last_save_time"),
        lastsave.to_string()
    );
    let rdb = dir.path().join("dump.rdb");
    assert_checks("redis-check-rdb", &rdb);
    let want = keyspace(&mut e);
    let (mut fresh, _) = loaded_engine(dir.path(), false);
    assert_same(&keyspace(&mut fresh), &want, "the BGSAVE file");
    assert_same(
        &redis_keyspace(dir.path(), false),
        &want,
        "redis on BGSAVE's",
    );

    e.ok_line("DEL a");
    assert_eq!(
        info(&mut e, "persistence", "rdb_changes_since_last_save"),
        "1"
    );
    assert_eq!(e.ok_line("SAVE"), Value::Okay);
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "2");
    assert_eq!(
        info(&mut e, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    let (mut fresh, _) = loaded_engine(dir.path(), false);
    assert_eq!(fresh.line("EXISTS a"), Value::Int(0));
    assert_eq!(fresh.line("GET b"), Value::BulkString(b"2".to_vec()));
}

#[test]
fn a_save_to_an_unwritable_dir_fails_and_says_where() {
    let mut e = Local::new(Engine::new());
    // /proc takes no new file, even from root.
    e.engine.configure("dir", "/proc").unwrap();
    e.ok_line("SET k v");
    match e.line("SAVE") {
        Value::ServerError(err) => {
            assert!(format!("{err:?}").contains("/proc/dump.rdb"), "{err:?}");
        }
        other => panic!("SAVE into /proc: {other:?}"),
    }
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "0");
    assert_eq!(
        info(&mut e, "persistence", "rdb_changes_since_last_save"),
        "1"
    );
    // A background save there fails in its child, and INFO says so.
    e.ok_line("BGSAVE");
    wait_info(&mut e, "rdb_bgsave_in_progress", "0");
    assert_eq!(info(&mut e, "persistence", "rdb_last_bgsave_status"), "err");
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "0");
}

/// An engine's snapshot of a few keys and a library, the file's bytes.
fn small_snapshot() -> Vec<u8> {
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), false);
    e.ok_line("SET short hello");
    e.ok_line("RPUSH list a b c");
    e.ok_line("SELECT 2");
    e.ok_line("HSET h f v");
    e.ok_line("SELECT 0");
    e.ok(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    e.ok_line("SAVE");
    fs::read(dir.path().join("dump.rdb")).unwrap()
}

#[test]
fn a_damaged_rdb_file_is_refused_and_nothing_is_loaded() {
    let good = small_snapshot();
    let hello = good
        .windows(5)
        .position(|w| w == b"hello")
        .expect("the value in the file");
    let mut flipped = good.clone();
    flipped[hello] ^= 0x20;
    let mut version_11 = good.clone();
    version_11[..9].copy_from_slice(b"REDIS0011");
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("a flipped byte", flipped, "checksum"),
        ("cut in half", good[..good.len() / 2].to_vec(), "cut short"),
        (
            "cut before its checksum",
            good[..good.len() - 4].to_vec(),
            "cut short",
        ),
        (
            "not an RDB file",
            b"hello, not a snapshot".to_vec(),
            "not an RDB file",
        ),
        ("version 11", version_11, "RDB version 11"),
    ];
    for (what, bytes, says) in cases {
        let dir = tmp();
        let rdb = dir.path().join("dump.rdb");
        fs::write(&rdb, &bytes).unwrap();
        let (ok, _) = check_tool("redis-check-rdb", &rdb);
        assert!(!ok, "{what}: redis-check-rdb refuses it too");
        let e = assert_refused(engine_in(dir.path(), false, true), &rdb, what);
        assert!(e.contains(says), "{what}: says {says}: {e}");
    }
}

// ---- the append-only file ----

/// A mix of writes, each with its effect on the file: relative times, chance and the clock
/// made absolute (SET EX, EXPIRE, SPOP, XADD *, INCRBYFLOAT, ...), scripts and transactions,
/// function calls, other databases, keys that expire and are written again.
fn run_mix(s: &mut dyn Side) {
    for line in [
        "SET plain hello",
        "APPEND plain _world",
        "SET withex v EX 1000",
        "SETEX setex 1000 v",
        "PSETEX psetex 1000000 v",
        "SET keepttl a",
        "EXPIRE keepttl 2000",
        "SET keepttl b KEEPTTL",
        "SET nx x NX",
        "SET nx y NX",
        "GETEX nx EX 3000",
        "SET getdel v",
        "GETDEL getdel",
        "INCR counter",
        "INCRBY counter 41",
        "INCRBYFLOAT float 1.5",
        "INCRBYFLOAT float 0.1",
        "EXPIRE float 5000",
        "INCRBYFLOAT float 3",
        "HSET h a 1 b 2",
        "HINCRBYFLOAT h f 2.5",
        "HINCRBYFLOAT h f 0.25",
        "HINCRBY h a 10",
        "HDEL h b",
        "SADD s a b c d e f g h i j",
        "SPOP s",
        "SPOP s 3",
        "SRANDMEMBER s 2",
        "SADD ints 1 2 3",
        "SMOVE s ints a",
        "SADD popall x y",
        "SPOP popall 5",
        "RPUSH l a b c d e",
        "LPOP l",
        "RPOPLPUSH l l2",
        "LMOVE l l2 LEFT RIGHT",
        "LSET l 0 first",
        "LINSERT l BEFORE first zero",
        "ZADD z 1 a 2 b 3 c 4 d",
        "ZINCRBY z 5 a",
        "ZPOPMIN z",
        "ZREM z c",
        "ZADD zint 1 x",
        "ZUNIONSTORE zu 2 z zint WEIGHTS 2 3",
        "SET r1 v",
        "EXPIRE r1 5000",
        "RENAME r1 r2",
        "SET gone x",
        "DEL gone",
        "SET c1 v",
        "PEXPIREAT c1 4102444800555",
        "COPY c1 c2",
        "COPY c1 c3 DB 4",
        "SET mv m",
        "MOVE mv 6",
        "PERSIST withex",
        "SET bits 0",
        "SETBIT bits 100 1",
    ] {
        s.ok_line(line);
    }
    // A collection past its compact limits.
    let members: Vec<String> = (0..200)
        .flat_map(|i| [i.to_string(), format!("m{i}")])
        .collect();
    let mut zadd: Vec<&[u8]> = vec![b"ZADD", b"bigz"];
    zadd.extend(members.iter().map(|m| m.as_bytes()));
    s.ok(&zadd);
    s.ok(&[b"HSET", b"bigh", b"long", "x".repeat(100).as_bytes()]);
    // Streams: generated IDs, a group, deliveries and acknowledgements.
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(text(&s.ok(&[
            b"XADD",
            b"st",
            b"*",
            b"n",
            i.to_string().as_bytes(),
        ])));
    }
    s.ok_line("XADD st MAXLEN 10 * n 5");
    s.ok_line("XADD st 9999999999999-1 n 6");
    s.ok_line("XGROUP CREATE st g 0");
    s.ok_line("XGROUP CREATE st g2 $ ENTRIESREAD 7");
    s.ok_line("XREADGROUP GROUP g alice COUNT 3 STREAMS st >");
    s.ok_line("XREADGROUP GROUP g bob COUNT 1 STREAMS st >");
    s.ok(&[b"XACK", b"st", b"g", ids[0].as_bytes(), ids[3].as_bytes()]);
    s.ok(&[b"XCLAIM", b"st", b"g", b"carol", b"0", ids[1].as_bytes()]);
    s.ok(&[b"XDEL", b"st", ids[2].as_bytes()]);
    s.ok_line("XGROUP CREATECONSUMER st g dave");
    s.ok_line("XTRIM st MAXLEN 5");
    // A script of several writes, some of them made absolute or definite.
    s.ok(&[
        b"EVAL",
        b"redis.call('SET', KEYS[1], ARGV[1]) \
          redis.call('RPUSH', KEYS[2], ARGV[1], ARGV[1]) \
          redis.call('EXPIRE', KEYS[1], 3000) \
          redis.call('SADD', KEYS[3], 'x', 'y', 'z') \
          redis.call('SPOP', KEYS[3]) \
          redis.call('XADD', KEYS[4], '*', 'f', 'v') \
          return redis.call('INCRBYFLOAT', KEYS[5], '2.5')",
        b"5",
        b"es",
        b"el",
        b"ess",
        b"est",
        b"ef",
        b"v",
    ]);
    s.ok(&[
        b"EVAL",
        b"return redis.call('SET', KEYS[1], 'one')",
        b"1",
        b"eone",
    ]);
    s.ok(&[b"EVAL", b"return redis.call('GET', KEYS[1])", b"1", b"eone"]);
    // A transaction, across two databases.
    for line in [
        "MULTI",
        "SET tx1 a",
        "INCR tx2",
        "EXPIRE tx1 4000",
        "SPOP s",
        "SELECT 5",
        "SET tx5 b",
        "EXEC",
        "SELECT 0",
        "MULTI",
        "GET tx1",
        "EXEC",
    ] {
        s.ok_line(line);
    }
    // A transaction with a command that fails as it runs: the others took effect.
    for line in ["MULTI", "SET txa 1", "LPUSH txa x", "SET txb 2", "EXEC"] {
        s.ok_line(line);
    }
    // A transaction WATCH aborted: nothing took effect.
    s.ok_line("WATCH txa");
    s.ok_line("SET txa 3");
    for line in ["MULTI", "SET txc 1", "EXEC"] {
        s.ok_line(line);
    }
    // A script that fails after writing: its writes stand.
    assert!(is_error(&s.q(&[
        b"EVAL",
        b"redis.call('SET', KEYS[1], 'a') redis.call('RPUSH', KEYS[2], 'b') return redis.call('INCR', KEYS[1])",
        b"2",
        b"efail",
        b"efail:l",
    ])));
    // Blocking commands that did not block.
    for line in [
        "RPUSH bl a b c",
        "BLPOP bl 0",
        "BLMOVE bl bl2 RIGHT LEFT 0",
        "ZADD bz 1 a 2 b",
        "BZPOPMAX bz 0",
    ] {
        s.ok_line(line);
    }
    // Functions.
    s.ok(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    s.ok_line("FCALL setincr 2 fk fc val");
    s.ok_line("FCALL setincr 2 fk fc val2");
    // Other databases: a flushed one, swapped ones.
    for line in [
        "SELECT 2",
        "SET two x",
        "HSET two:h a b",
        "FLUSHDB",
        "SET after:flush y",
        "SELECT 7",
        "SET seven 7",
        "SELECT 8",
        "SET eight 8",
        "RPUSH eight:l a",
        "SELECT 0",
        "SWAPDB 7 8",
        "SELECT 9",
        "SET nine 9",
        "SELECT 0",
    ] {
        s.ok_line(line);
    }
    // Keys that expire (found so by a read, or by a write) and are written again.
    s.ok_line("SET lazy v PX 30");
    s.ok_line("SET lazy2 v PX 30");
    s.ok_line("HSET lazy3 f v");
    s.ok_line("PEXPIRE lazy3 30");
    std::thread::sleep(Duration::from_millis(80));
    s.ok_line("RPUSH lazy a b");
    assert_eq!(s.line("EXISTS lazy2"), Value::Int(0));
    s.ok_line("HSET lazy3 g w");
    // RESTORE with a TTL.
    let dump = s.ok_line("DUMP h");
    let Value::BulkString(payload) = dump else {
        panic!("DUMP h: {dump:?}")
    };
    s.ok(&[b"RESTORE", b"hcopy", b"100000000", &payload]);
}

#[test]
fn the_append_only_file_replays_to_the_same_keyspace_here_and_in_redis() {
    let dir = tmp();
    let (mut e, loaded) = loaded_engine(dir.path(), true);
    assert_eq!(loaded, Loaded::Nothing);
    assert_eq!(
        fs::read_to_string(manifest(dir.path())).unwrap(),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    run_mix(&mut e);
    let want = keyspace(&mut e);
    drop(e);
    assert_checks("redis-check-aof", &manifest(dir.path()));

    let (mut again, loaded) = loaded_engine(dir.path(), true);
    match loaded {
        Loaded::Aof {
            base_keys,
            commands,
            truncated,
            ..
        } => {
            assert_eq!((base_keys, truncated), (0, 0));
            assert!(commands > 100, "{commands} commands replayed");
        }
        other => panic!("{other:?}"),
    }
    assert_same(
        &keyspace(&mut again),
        &want,
        "the engine replaying its file",
    );
    drop(again);

    assert_same(
        &redis_keyspace(dir.path(), true),
        &want,
        "redis-server replaying the engine's file",
    );
}

#[test]
fn the_engine_replays_redis_servers_append_only_file() {
    let dir = tmp();
    let server = RedisServer::spawn_with(&["--dir", path_str(dir.path()), "--appendonly", "yes"]);
    let mut redis = server.connect();
    redis.ok_line("SET before:rewrite 1");
    redis.ok_line("HSET before:h a 1");
    redis.ok_line("BGREWRITEAOF");
    wait_info(&mut redis, "aof_rewrite_scheduled", "0");
    wait_info(&mut redis, "aof_rewrite_in_progress", "0");
    // The rewrite's base holds those; the mix goes to the incremental file after it.
    run_mix(&mut redis);
    let live = keyspace(&mut redis);
    drop(redis);
    drop(server);
    assert_checks("redis-check-aof", &manifest(dir.path()));
    // The reference is what redis-server makes of its own directory: redis-server 7.0
    // writes XREADGROUP's deliveries as XCLAIMs that do not carry the group's read
    // counter, so a replay has `entries-read` unknown where the live server knew it.
    let want = redis_keyspace(dir.path(), true);
    let mut lost = want.clone();
    lost.retain(|k, v| live.get(k) != Some(v));
    assert_eq!(
        lost.keys().collect::<Vec<_>>(),
        ["0/st"],
        "only the stream's group counter is lost in redis-server's own replay"
    );
    let (mut e, loaded) = loaded_engine(dir.path(), true);
    assert!(
        matches!(
            loaded,
            Loaded::Aof {
                base_keys: 2,
                truncated: 0,
                ..
            }
        ),
        "{loaded:?}"
    );
    assert_same(
        &keyspace(&mut e),
        &want,
        "the engine replaying redis's file",
    );
}

#[test]
fn bgrewriteaof_makes_a_new_base_and_keeps_every_write() {
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), true);
    run_mix(&mut e);
    assert_eq!(
        e.ok_line("BGREWRITEAOF"),
        Value::SimpleString("Background append only file rewriting started".into())
    );
    // Writes while the child writes the base go to the new incremental file.
    e.ok_line("SET during x");
    e.ok_line("INCR counter");
    e.ok_line("RPUSH l during");
    wait_info(&mut e, "aof_rewrite_in_progress", "0");
    assert_eq!(
        info(&mut e, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
    assert_eq!(
        fs::read_to_string(manifest(dir.path())).unwrap(),
        "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
    );
    assert_eq!(
        listing(&aof_dir(dir.path())),
        [
            "appendonly.aof.2.base.rdb",
            "appendonly.aof.2.incr.aof",
            "appendonly.aof.manifest"
        ]
    );
    e.ok_line("SET after x");
    e.ok_line("SELECT 3");
    e.ok_line("SET after3 y");
    e.ok_line("SELECT 0");
    let before = keyspace(&mut e);
    drop(e);
    assert_checks("redis-check-aof", &manifest(dir.path()));
    // What redis-server makes of the directory is the reference, to the encoding.
    let want = redis_keyspace(dir.path(), true);
    let (mut again, loaded) = loaded_engine(dir.path(), true);
    assert!(
        matches!(loaded, Loaded::Aof { truncated: 0, .. }),
        "{loaded:?}"
    );
    assert_same(&keyspace(&mut again), &want, "replayed after a rewrite");
    assert_same(
        &loose(&want),
        &loose(&before),
        "what was written, through a rewrite",
    );
    // A second rewrite, from the reloaded engine.
    again.ok_line("BGREWRITEAOF");
    again.ok_line("SET late z");
    wait_info(&mut again, "aof_rewrite_in_progress", "0");
    assert_eq!(
        fs::read_to_string(manifest(dir.path())).unwrap(),
        "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
    );
    let want = keyspace(&mut again);
    drop(again);
    let (mut third, _) = loaded_engine(dir.path(), true);
    assert_same(&keyspace(&mut third), &want, "replayed after two rewrites");
}

// ---- faults in the append-only file ----

/// An engine's append-only directory holding `lines`; the incremental file's path and its
/// length after each command.
fn aof_with(dir: &Path, lines: &[&str]) -> (PathBuf, Vec<u64>) {
    let (mut e, _) = loaded_engine(dir, true);
    let incr = aof_dir(dir).join("appendonly.aof.1.incr.aof");
    let mut lengths = Vec::new();
    for line in lines {
        e.ok_line(line);
        lengths.push(fs::metadata(&incr).unwrap().len());
    }
    (incr, lengths)
}

fn append(path: &Path, bytes: &[u8]) {
    let mut data = fs::read(path).unwrap();
    data.extend_from_slice(bytes);
    fs::write(path, data).unwrap();
}

fn copy_of(dir: &Path) -> TempDir {
    let copy = tmp();
    copy_dir(dir, copy.path());
    copy
}

#[test]
fn a_cut_tail_loads_up_to_its_last_whole_command_or_is_refused() {
    let dir = tmp();
    let (incr, lengths) = aof_with(dir.path(), &["SET a 1", "RPUSH l x y", "SET c 3"]);
    let whole = lengths[1];
    let cut_at = lengths[2] - 3;
    let file = fs::read(&incr).unwrap();
    fs::write(&incr, &file[..cut_at as usize]).unwrap();
    let strict = copy_of(dir.path());

    let (mut e, loaded) = loaded_engine(dir.path(), true);
    assert_eq!(
        loaded,
        Loaded::Aof {
            dir: aof_dir(dir.path()),
            base_keys: 0,
            commands: 3, // SELECT, SET, RPUSH
            truncated: cut_at - whole,
        }
    );
    assert_eq!(
        fs::metadata(&incr).unwrap().len(),
        whole,
        "cut to the last whole command"
    );
    assert_eq!(e.line("GET a"), Value::BulkString(b"1".to_vec()));
    assert_eq!(e.line("LLEN l"), Value::Int(2));
    assert_eq!(e.line("EXISTS c"), Value::Int(0));
    // What comes next follows the last whole command.
    e.ok_line("SET d 4");
    drop(e);
    assert_checks("redis-check-aof", &manifest(dir.path()));
    let (mut e, _) = loaded_engine(dir.path(), true);
    assert_eq!(e.line("GET d"), Value::BulkString(b"4".to_vec()));

    let strict_incr = aof_dir(strict.path()).join("appendonly.aof.1.incr.aof");
    let err = assert_refused(
        engine_in(strict.path(), true, false),
        &strict_incr,
        "aof-load-truncated no",
    );
    assert!(err.contains(&format!("byte {whole}")), "{err}");
    assert_eq!(
        fs::metadata(&strict_incr).unwrap().len(),
        cut_at,
        "a refused file is left as it was"
    );
}

#[test]
fn a_transaction_without_its_exec_is_dropped_as_redis_drops_it() {
    let dir = tmp();
    let (incr, lengths) = aof_with(dir.path(), &["SET a 1"]);
    let mut open_tx = Vec::new();
    for args in [&["MULTI"][..], &["SET", "tx", "1"], &["INCR", "a"]] {
        edgebench_engine::engine::feed::encode(args, &mut open_tx);
    }
    append(&incr, &open_tx);
    let for_redis = copy_of(dir.path());
    let strict = copy_of(dir.path());
    let (mut e, loaded) = loaded_engine(dir.path(), true);
    assert!(
        matches!(loaded, Loaded::Aof { truncated, .. } if truncated == open_tx.len() as u64),
        "{loaded:?}"
    );
    assert_eq!(fs::metadata(&incr).unwrap().len(), lengths[0]);
    assert_eq!(e.line("GET a"), Value::BulkString(b"1".to_vec()));
    assert_eq!(e.line("EXISTS tx"), Value::Int(0));
    let want = keyspace(&mut e);
    let server =
        RedisServer::spawn_with(&["--dir", path_str(for_redis.path()), "--appendonly", "yes"]);
    assert_same(
        &keyspace(&mut server.connect()),
        &want,
        "redis-server on it",
    );

    // With aof-load-truncated no, redis-server refuses it, and so does the engine.
    let strict_incr = aof_dir(strict.path()).join("appendonly.aof.1.incr.aof");
    let err = assert_refused(
        engine_in(strict.path(), true, false),
        &strict_incr,
        "an open transaction, aof-load-truncated no",
    );
    assert!(
        err.contains(&format!("without its EXEC at byte {}", lengths[0])),
        "{err}"
    );
}

#[test]
fn garbage_inside_a_file_is_refused_with_its_offset() {
    let dir = tmp();
    let (incr, lengths) = aof_with(dir.path(), &["SET a 1", "SET b 2"]);
    let file = fs::read(&incr).unwrap();
    let at = lengths[0] as usize;
    let mut bad = file[..at].to_vec();
    bad.extend_from_slice(b"garbage\r\n");
    bad.extend_from_slice(&file[at..]);
    fs::write(&incr, &bad).unwrap();
    let err = assert_refused(engine_in(dir.path(), true, true), &incr, "garbage");
    assert!(err.contains(&format!("byte {at}")), "{err}");
    assert_eq!(fs::read(&incr).unwrap(), bad, "left as it was");
    let (ok, _) = check_tool("redis-check-aof", &manifest(dir.path()));
    assert!(!ok, "redis-check-aof refuses it too");

    // Damage in the base file of a directory is refused the same way.
    let dir = tmp();
    let (_, _) = aof_with(dir.path(), &["SET a 1"]);
    let (mut e, _) = loaded_engine(dir.path(), true);
    e.ok_line("BGREWRITEAOF");
    wait_info(&mut e, "aof_rewrite_in_progress", "0");
    e.ok_line("SET after 1");
    drop(e);
    let base = aof_dir(dir.path()).join("appendonly.aof.2.base.rdb");
    let mut bytes = fs::read(&base).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xff;
    fs::write(&base, &bytes).unwrap();
    let err = assert_refused(engine_in(dir.path(), true, true), &base, "a damaged base");
    assert!(err.contains("checksum"), "{err}");
}

// ---- replay semantics ----

/// A file whose deadlines passed before it is replayed replays as it was written: nothing
/// expires during the load (so later commands of the file write the keys they wrote), keys
/// of the base past their deadline included; after the load, they expire. The engine and
/// redis-server load the same directory to the same keyspace.
#[test]
fn nothing_expires_while_a_file_is_replayed() {
    let past = now_ms() - 86_400_000;
    let dir = tmp();
    let aof = aof_dir(dir.path());
    fs::create_dir(&aof).unwrap();
    // The base: a snapshot taken a day ago, with deadlines that passed since.
    let clock = Arc::new(AtomicU64::new(past - 10_000));
    let mut old = Local::new(Engine::with_clock(clock));
    old.engine.configure("dir", path_str(&aof)).unwrap();
    old.engine
        .configure("dbfilename", "appendonly.aof.1.base.rdb")
        .unwrap();
    old.ok_line("SET base:k v PX 1000");
    old.ok_line("HSET base:h f v");
    old.ok_line("PEXPIRE base:h 1000");
    old.ok_line("SET base:gone v PX 1000");
    old.ok_line("SAVE");
    let at = past.to_string();
    let mut incr = Vec::new();
    for args in [
        vec!["SELECT", "0"],
        vec!["APPEND", "base:k", "x"],
        vec!["PERSIST", "base:k"],
        vec!["HSET", "base:h", "g", "w"],
        vec!["PERSIST", "base:h"],
        vec!["SET", "p", "v", "PXAT", &at],
        vec!["APPEND", "p", "x"],
        vec!["PERSIST", "p"],
        vec!["SET", "q", "1"],
        vec!["PEXPIREAT", "q", &at],
        vec!["INCR", "q"],
        vec!["PERSIST", "q"],
        vec!["RPUSH", "l", "a"],
        vec!["PEXPIREAT", "l", &at],
        vec!["RPUSH", "l", "b"],
        vec!["RENAME", "l", "l2"],
        vec!["PERSIST", "l2"],
        vec!["SET", "gone", "v", "PXAT", &at],
    ] {
        edgebench_engine::engine::feed::encode(&args, &mut incr);
    }
    fs::write(aof.join("appendonly.aof.1.incr.aof"), &incr).unwrap();
    fs::write(
        aof.join("appendonly.aof.manifest"),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
    )
    .unwrap();
    let for_redis = copy_of(dir.path());

    let (mut e, loaded) = loaded_engine(dir.path(), true);
    assert!(
        matches!(loaded, Loaded::Aof { base_keys: 3, .. }),
        "{loaded:?}"
    );
    assert_eq!(e.line("GET base:k"), Value::BulkString(b"vx".to_vec()));
    assert_eq!(e.line("HLEN base:h"), Value::Int(2));
    assert_eq!(e.line("GET p"), Value::BulkString(b"vx".to_vec()));
    assert_eq!(e.line("GET q"), Value::BulkString(b"2".to_vec()));
    assert_eq!(
        e.line("LRANGE l2 0 -1"),
        Value::Array(vec![
            Value::BulkString(b"a".to_vec()),
            Value::BulkString(b"b".to_vec()),
        ])
    );
    for gone in ["base:gone", "gone"] {
        assert_eq!(e.line(&format!("EXISTS {gone}")), Value::Int(0), "{gone}");
    }
    let want = keyspace(&mut e);
    let server =
        RedisServer::spawn_with(&["--dir", path_str(for_redis.path()), "--appendonly", "yes"]);
    assert_same(
        &keyspace(&mut server.connect()),
        &want,
        "redis-server on it",
    );
}

// ---- persistence while running ----

#[test]
fn appendonly_turned_on_and_off_while_running() {
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), false);
    e.ok_line("SET before on");
    e.ok_line("SELECT 4");
    e.ok_line("RPUSH l a b");
    e.ok_line("SELECT 0");
    e.ok(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    assert_eq!(e.ok_line("CONFIG SET appendonly yes"), Value::Okay);
    assert_eq!(info(&mut e, "persistence", "aof_enabled"), "1");
    assert_eq!(
        fs::read_to_string(manifest(dir.path())).unwrap(),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    // The base holds what was there; what follows goes to the incremental file.
    e.ok_line("SET after on");
    e.ok_line("FCALL setincr 2 fk fc v");
    let want = keyspace(&mut e);
    assert_eq!(e.ok_line("CONFIG SET appendonly no"), Value::Okay);
    assert_eq!(info(&mut e, "persistence", "aof_enabled"), "0");
    let incr = aof_dir(dir.path()).join("appendonly.aof.1.incr.aof");
    let length = fs::metadata(&incr).unwrap().len();
    e.ok_line("SET after off");
    assert_eq!(
        fs::metadata(&incr).unwrap().len(),
        length,
        "nothing fed when off"
    );
    drop(e);
    assert_checks("redis-check-aof", &manifest(dir.path()));
    let (mut again, loaded) = loaded_engine(dir.path(), true);
    assert!(
        matches!(loaded, Loaded::Aof { base_keys: 2, .. }),
        "{loaded:?}"
    );
    assert_same(&keyspace(&mut again), &want, "turned on while running");
    assert_same(
        &redis_keyspace(dir.path(), true),
        &want,
        "redis-server on it",
    );
}

/// An engine without the background thread (a manual clock) forks on the caller's thread
/// and sees its child end when asked.
#[test]
fn a_background_save_ends_on_an_engine_without_its_thread() {
    let dir = tmp();
    let clock = Arc::new(AtomicU64::new(now_ms()));
    let mut e = Local::new(Engine::with_clock(clock));
    e.engine.configure("dir", path_str(dir.path())).unwrap();
    e.ok_line("SET k v");
    assert_eq!(
        e.ok_line("BGSAVE"),
        Value::SimpleString("Background saving started".into())
    );
    wait_info(&mut e, "rdb_bgsave_in_progress", "0");
    assert_eq!(info(&mut e, "persistence", "rdb_last_bgsave_status"), "ok");
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "1");
    let (mut fresh, _) = loaded_engine(dir.path(), false);
    assert_eq!(fresh.line("GET k"), Value::BulkString(b"v".to_vec()));
}

/// INFO persistence, asked from several threads while background saves start and end,
/// never waits on the persistence locks in the other order than the saves take them.
#[test]
fn info_and_background_saves_do_not_deadlock() {
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), true);
    e.ok_line("SET k v");
    let engine = e.engine.clone();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let askers: Vec<_> = (0..2)
            .map(|_| {
                let mut side = Local::new(engine.clone());
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        side.ok_line("INFO persistence");
                        side.ok_line("SET k v");
                    }
                })
            })
            .collect();
        let mut side = Local::new(engine);
        for i in 0..20 {
            let job = if i % 2 == 0 { "BGSAVE" } else { "BGREWRITEAOF" };
            side.ok_line(job);
            wait_info(&mut side, "rdb_bgsave_in_progress", "0");
            wait_info(&mut side, "aof_rewrite_in_progress", "0");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for a in askers {
            a.join().unwrap();
        }
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(Duration::from_secs(8))
        .expect("20 background jobs with INFO asked meanwhile end within 8 s");
    assert_eq!(info(&mut e, "persistence", "rdb_saves"), "10");
    assert_eq!(
        info(&mut e, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
}

#[test]
fn the_save_schedule_and_the_automatic_rewrite_run_by_themselves() {
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), true);
    e.ok(&[b"CONFIG", b"SET", b"save", b"1 1"]);
    e.ok_line("CONFIG SET auto-aof-rewrite-percentage 100");
    e.ok_line("CONFIG SET auto-aof-rewrite-min-size 4096");
    let base_size: u64 = info(&mut e, "persistence", "aof_base_size")
        .parse()
        .unwrap();
    let value = "v".repeat(100);
    let mut i = 0;
    while fs::metadata(aof_dir(dir.path()).join("appendonly.aof.1.incr.aof"))
        .map(|m| m.len())
        .unwrap_or(u64::MAX)
        < 4096 + 2 * base_size
    {
        e.ok(&[b"SET", format!("k{i}").as_bytes(), value.as_bytes()]);
        i += 1;
    }
    // A change and a second since the start: the schedule saves; the file outgrew its
    // base and the minimum: it is rewritten.
    wait_info(&mut e, "rdb_saves", "1");
    let deadline = Instant::now() + JOB_TIMEOUT;
    while !fs::read_to_string(manifest(dir.path()))
        .unwrap()
        .contains("seq 2 type b")
    {
        assert!(Instant::now() < deadline, "no automatic rewrite");
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_info(&mut e, "aof_rewrite_in_progress", "0");
    let want = keyspace(&mut e);
    drop(e);
    let (mut rdb, _) = loaded_engine(dir.path(), false);
    assert_same(&keyspace(&mut rdb), &want, "the scheduled save");
    let (mut aof, _) = loaded_engine(dir.path(), true);
    assert_same(&keyspace(&mut aof), &want, "after the automatic rewrite");
}

#[test]
fn shutdown_saves_as_asked() {
    for (args, saved) in [
        ("SHUTDOWN SAVE", true),
        ("SHUTDOWN NOSAVE", false),
        // No save points configured: nothing to save.
        ("SHUTDOWN", false),
    ] {
        let dir = tmp();
        let (mut e, _) = loaded_engine(dir.path(), false);
        e.ok_line("SET k v");
        assert_eq!(e.ok_line(args), Value::Okay, "{args}");
        assert_eq!(dir.path().join("dump.rdb").exists(), saved, "{args}");
    }
    let dir = tmp();
    let (mut e, _) = loaded_engine(dir.path(), false);
    e.ok(&[b"CONFIG", b"SET", b"save", b"3600 1"]);
    e.ok_line("SET k v");
    assert_eq!(e.ok_line("SHUTDOWN"), Value::Okay);
    let (mut fresh, _) = loaded_engine(dir.path(), false);
    assert_eq!(fresh.line("GET k"), Value::BulkString(b"v".to_vec()));
}

/// A Redis 6 append-only file (one file in `dir`, no directory): redis-server 7.0
/// converts it; the engine refuses to start empty beside it.
#[test]
fn a_redis_6_append_only_file_is_not_silently_ignored() {
    let dir = tmp();
    let mut single = Vec::new();
    edgebench_engine::engine::feed::encode(&["SELECT", "0"], &mut single);
    edgebench_engine::engine::feed::encode(&["SET", "k", "v"], &mut single);
    let file = dir.path().join("appendonly.aof");
    fs::write(&file, &single).unwrap();
    let err = assert_refused(engine_in(dir.path(), true, true), &file, "Redis 6 layout");
    assert!(err.contains("single-file layout"), "{err}");
    assert!(!aof_dir(dir.path()).exists(), "no directory made beside it");
}

/// A script that SELECTs is fed as its writes, each in its database, between MULTI and
/// EXEC: the reload (and redis-server on the same directory) has them where they were made.
#[test]
fn a_script_that_selects_replays_into_the_databases_it_wrote() {
    let dir = tmp();
    {
        let (mut e, _) = loaded_engine(dir.path(), true);
        e.ok_line("SET k in0");
        let script = "redis.call('SET', 'k', 'in5') redis.call('SELECT', 7) \
                      redis.call('SET', 'k', 'in7') return 1";
        assert_eq!(e.q(&[b"EVAL", script.as_bytes(), b"0"]), Value::Int(1));
        e.ok_line("SET after 1");
    }
    let (mut again, _) = loaded_engine(dir.path(), true);
    let (server, _copy) = redis_on_copy(dir.path(), true);
    let mut redis = server.connect();
    for side in [&mut again as &mut dyn Side, &mut redis as &mut dyn Side] {
        let mut got = Vec::new();
        for db in ["0", "7"] {
            side.q(&[b"SELECT", db.as_bytes()]);
            got.push(text(&side.q(&[b"GET", b"k"])));
        }
        side.q(&[b"SELECT", b"0"]);
        got.push(text(&side.q(&[b"GET", b"after"])));
        assert_eq!(got, ["in5", "in7", "1"]);
    }
}
