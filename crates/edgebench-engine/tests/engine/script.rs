//! Lua scripting and functions, differentially against a real redis-server: EVAL's
//! conversions both ways, error texts, `redis.*` helpers, the sandbox, the script cache,
//! cjson / cmsgpack / bit, read-only scripts, FUNCTION and FCALL. Then what only the engine
//! can show: a script is atomic against other connections, a busy script answers BUSY,
//! SCRIPT KILL stops a read-only one and not one that wrote.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::diff::Diff;
use edgebench_engine::engine::{Engine, Reply};
use edgebench_engine::server::{self, Bind};

#[test]
fn lua_values_convert_to_replies_as_in_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EVAL", "return 1", "0"],
        &["EVAL", "return 3.99", "0"],
        &["EVAL", "return -3.99", "0"],
        &["EVAL", "return 'str'", "0"],
        &["EVAL", "return true", "0"],
        &["EVAL", "return false", "0"],
        &["EVAL", "return nil", "0"],
        &["EVAL", "return {1, 2, 3, nil, 4}", "0"],
        &["EVAL", "return {1, {2, {'three', false}}, true}", "0"],
        &["EVAL", "return {ok = 'fine'}", "0"],
        &["EVAL", "return {err = 'MY error'}", "0"],
        &["EVAL", "return {err = 'x'}", "0"],
        &["EVAL", "return redis.status_reply('A\\r\\nB')", "0"],
        &["EVAL", "return redis.error_reply('MY x')", "0"],
        &["EVAL", "return redis.error_reply('x')", "0"],
        &["EVAL", "return redis.error_reply(1)", "0"],
        &["EVAL", "return {a = 1}", "0"],
        &["EVAL", "return 1e30", "0"],
        &["EVAL", "return KEYS", "2", "k1", "k2", "a1", "a2"],
        &["EVAL", "return ARGV", "2", "k1", "k2", "a1", "a2"],
        &["EVAL", "return {#KEYS, #ARGV}", "0"],
        // pcall of a function with more results than a C function's stack guarantees (a
        // debug build's Lua API check once aborted the process here).
        &[
            "EVAL",
            "local t = {} for i = 1, 60 do t[i] = i end return {pcall(unpack, t)}",
            "0",
        ],
        &[
            "EVAL",
            "return {pcall(cmsgpack.unpack, ARGV[1])}",
            "0",
            &"\x01".repeat(50),
        ],
    ]);
}

#[test]
fn replies_convert_to_lua_values_as_in_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "s", "abc"],
        &["RPUSH", "l", "a", "b"],
        &["HSET", "h", "f", "v"],
        &["EVAL", "return redis.call('get', 's')", "0"],
        &["EVAL", "return type(redis.call('get', 'nokey'))", "0"],
        &["EVAL", "return redis.call('lrange', 'l', 0, -1)", "0"],
        &["EVAL", "return redis.call('set', 'x', 1)", "0"],
        &["EVAL", "return redis.call('set', 'x', 1.5)", "0"],
        &["EVAL", "return redis.call('get', 'x')", "0"],
        &["EVAL", "return redis.call('incr', 'n')", "0"],
        &["EVAL", "return type(redis.call('ping'))", "0"],
        &["EVAL", "return redis.call('ping')", "0"],
        &["EVAL", "return redis.call('hgetall', 'h')", "0"],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('hgetall', 'h')",
            "0",
        ],
        &[
            "EVAL",
            "redis.setresp(3); return type(redis.call('get', 'nokey'))",
            "0",
        ],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('hgetall', 'nokey')",
            "0",
        ],
        &["EVAL", "redis.setresp(3); return true", "0"],
        &["EVAL", "redis.setresp(3); return false", "0"],
        &["EVAL", "return redis.setresp(4)", "0"],
        &["EVAL", "return redis.call('zscore', 'nokey', 'm')", "0"],
        &["ZADD", "z", "1.5", "m"],
        &["EVAL", "return redis.call('zscore', 'z', 'm')", "0"],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('zscore', 'z', 'm')",
            "0",
        ],
        &["EVAL", "return redis.call('exists', KEYS[1])", "1", "s"],
    ]);
}

#[test]
fn script_errors_have_redis_texts() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "s", "abc"],
        &["EVAL", "return redis.call('incr', 's')", "0"],
        &["EVAL", "return redis.pcall('incr', 's')", "0"],
        &["EVAL", "return redis.call('nosuch', 's')", "0"],
        &["EVAL", "return redis.call('get')", "0"],
        &["EVAL", "return redis.call()", "0"],
        &["EVAL", "return redis.call(1)", "0"],
        &["EVAL", "return redis.call('set', {}, 1)", "0"],
        &["EVAL", "error('boom')", "0"],
        &["EVAL", "error({err = 'MY thing'})", "0"],
        &["EVAL", "local x = nil\nreturn x + 1", "0"],
        &["EVAL", "x = 1", "0"],
        &["EVAL", "return y", "0"],
        &["EVAL", "return os", "0"],
        &["EVAL", "return io", "0"],
        &["EVAL", "return loadfile", "0"],
        &["EVAL", "return dofile", "0"],
        &["EVAL", "redis.call = 1", "0"],
        &["EVAL", "string.x = 1", "0"],
        &["EVAL", "rawset(_G, 'x', 1)", "0"],
        &["EVAL", "return redis.call('multi')", "0"],
        &["EVAL", "return redis.call('subscribe', 'a')", "0"],
        &["EVAL", "return redis.call('blpop', 'l', 0)", "0"],
        &["EVAL", "return redis.call('eval', 'return 1', 0)", "0"],
        &[
            "EVAL",
            "return redis.call('xread', 'block', 0, 'streams', 'nos', '0')",
            "0",
        ],
        &[
            "EVAL",
            "return redis.call('xread', 'block', 'x', 'streams', 'nos', '0')",
            "0",
        ],
        &[
            "EVAL",
            "return redis.call('xread', 'count', 1, 'streams', 'block', '0')",
            "0",
        ],
        &[
            "EVAL",
            "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', 'nos', '0')",
            "0",
        ],
        &[
            "EVAL",
            "return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 'nos', '>')",
            "0",
        ],
        &[
            "EVAL",
            "return redis.call('XREADGROUP', 'GROUP', 'block', 'c', 'STREAMS', 'nos', '>')",
            "0",
        ],
        &["EVAL_RO", "return redis.call('set', 'a', 0)", "0"],
        &["EVAL_RO", "return redis.call('get', 's')", "0"],
        &["EVAL", "return 1", "-1"],
        &["EVAL", "return 1", "2", "a"],
        &["EVAL", "return 1", "x"],
        &["EVAL", "retur 1", "0"],
        &["EVAL"],
        &["EVAL", "return 1"],
        &["EVAL", "return {pcall(redis.call, 'incr', 's')}", "0"],
        &["EVAL", "return {pcall(error, 'x')}", "0"],
        &[
            "EVAL",
            "local ok, e = pcall(redis.call, 'incr', 's'); return e",
            "0",
        ],
        &["EVAL", "return redis.sha1hex()", "0"],
        &["EVAL", "redis.log(redis.LOG_WARNING)", "0"],
        &["EVAL", "redis.log('x', 'y')", "0"],
        &["EVAL", "redis.log(9, 'y')", "0"],
        &["EVAL", "return redis.log(redis.LOG_NOTICE, 'hello')", "0"],
        &["EVAL", "return redis.set_repl(redis.REPL_ALL)", "0"],
        &["EVAL", "return redis.replicate_commands()", "0"],
    ]);
}

#[test]
fn the_script_cache_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EVAL", "return redis.sha1hex('')", "0"],
        &["EVAL", "return redis.sha1hex('abc')", "0"],
        &["SCRIPT", "LOAD", "return 'cached'"],
        &["EVALSHA", "6d2a3a02e20d4c8e7d8e7fe1d3ad1b1d2c3b8cc8", "0"],
        &[
            "SCRIPT",
            "EXISTS",
            "6d2a3a02e20d4c8e7d8e7fe1d3ad1b1d2c3b8cc8",
            "abc",
        ],
        &["EVAL", "return 'cached'", "0"],
        &["SCRIPT", "FLUSH"],
        &[
            "EVALSHA_RO",
            "6d2a3a02e20d4c8e7d8e7fe1d3ad1b1d2c3b8cc8",
            "0",
        ],
        &["EVALSHA", "abc", "0"],
        &["SCRIPT", "FLUSH", "ASYNC"],
        &["SCRIPT", "FLUSH", "SYNC"],
        &["SCRIPT", "FLUSH", "x"],
        &["SCRIPT", "LOAD"],
        &["SCRIPT", "LOAD", "retur 1"],
        &["SCRIPT", "EXISTS"],
        &["SCRIPT", "KILL"],
        &["SCRIPT", "HELP"],
        &["SCRIPT", "foo"],
    ]);
}

#[test]
fn shebang_flags_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "EVAL",
            "#!lua flags=no-writes\nreturn redis.call('set', 'a', '1')",
            "0",
        ],
        &[
            "EVAL",
            "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'a')",
            "0",
        ],
        &["EVAL", "#!lua flags=bogus\nreturn 1", "0"],
        &["EVAL", "#!lua", "0"],
        &["EVAL", "#!js\nreturn 1", "0"],
        &["EVAL", "#!lua x=1\nreturn 1", "0"],
        &["EVAL", "#!lua\nreturn redis.call('set', 'a', '2')", "0"],
        &["EVAL_RO", "#!lua\nreturn 1", "0"],
        &["EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"],
        &["EVAL", "#!lua\nreturn error('x')", "0"],
    ]);
}

/// cjson's settings functions set what encode and decode do, and keep it from script to
/// script (Redis 7.0.15's "JSON smoke test"); cmsgpack reads a stream a value at a time.
#[test]
fn cjson_settings_and_cmsgpack_streams_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EVAL", "return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_invalid_numbers(), cjson.encode_sparse_array(), cjson.decode_invalid_numbers(), cjson.encode_keep_buffer(), cjson.encode_number_precision()}", "0"],
        &["EVAL", "return {cjson.encode_sparse_array()}", "0"],
        &["EVAL", "cjson.encode_max_depth(1) return {pcall(cjson.encode, {a = {1}})}", "0"],
        // The setting outlives the script that made it.
        &["EVAL", "return {cjson.encode_max_depth(), pcall(cjson.encode, {1})}", "0"],
        &["EVAL", "return {cjson.encode_max_depth(1000), cjson.encode({a = {1}})}", "0"],
        &["EVAL", "cjson.decode_max_depth(1) local r = {pcall(cjson.decode, '{\"obj\": {\"array\": [1,2,3,4]}}')} cjson.decode_max_depth(1000) return r", "0"],
        &["EVAL", "local a = cjson.encode_invalid_numbers('null') local b = cjson.encode({0/0, 1/0}) local c = cjson.encode_invalid_numbers(true) local e = cjson.encode({0/0, 1/0, -1/0}) cjson.encode_invalid_numbers(false) return {a, b, tostring(c), e, pcall(cjson.encode, {0/0})}", "0"],
        &["EVAL", "cjson.encode_number_precision(3) local r = cjson.encode({3.14159}) cjson.encode_number_precision(14) return r", "0"],
        &["EVAL", "cjson.encode_sparse_array(true) local r = cjson.encode({[1] = 1, [20] = 2}) cjson.encode_sparse_array(false) return r", "0"],
        &["EVAL", "cjson.encode_sparse_array(nil, 0) local r = cjson.encode({[1] = 1, [30] = 2}) cjson.encode_sparse_array(false, 2, 10) return {r, pcall(cjson.encode, {[1] = 1, [30] = 2})}", "0"],
        &["EVAL", "return cjson.encode_max_depth('7')", "0"],
        &["EVAL", "cjson.encode_max_depth(1000) return cjson.encode_max_depth(0)", "0"],
        &["EVAL", "return cjson.encode_max_depth(1, 2)", "0"],
        &["EVAL", "return cjson.encode_max_depth('x')", "0"],
        &["EVAL", "return cjson.encode_invalid_numbers('bogus')", "0"],
        &["EVAL", "return cjson.encode_sparse_array(true, -1)", "0"],
        // cmsgpack: one value, or a few, from an offset; -1 once the input is read.
        &["EVAL", "local p = cmsgpack.pack(1, 'a', {2}) return {cmsgpack.unpack_one(p)}", "0"],
        &["EVAL", "local p = cmsgpack.pack(1, 'a', {2}) return {cmsgpack.unpack_one(p, 1)}", "0"],
        &["EVAL", "local p = cmsgpack.pack(1, 'a', {2}) return {cmsgpack.unpack_limit(p, 2)}", "0"],
        &["EVAL", "local p = cmsgpack.pack(1, 'a', {2}) return {cmsgpack.unpack_limit(p, 5, 1)}", "0"],
        &["EVAL", "local p = cmsgpack.pack(1, 'a', {2}) return {cmsgpack.unpack_limit(p, 0)}", "0"],
        &["EVAL", "return {pcall(cmsgpack.unpack_one, cmsgpack.pack(1), -1)}", "0"],
        &["EVAL", "return {pcall(cmsgpack.unpack_one, cmsgpack.pack(1), 100)}", "0"],
        &["EVAL", "return cmsgpack.unpack_one()", "0"],
        &["EVAL", "return cmsgpack.unpack_limit(cmsgpack.pack(1))", "0"],
        &["EVAL", "return {cmsgpack.unpack(12)}", "0"],
    ]);
}

#[test]
fn cjson_cmsgpack_and_bit_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EVAL", "return cjson.encode({1, 2, {a = 1}})", "0"],
        &["EVAL", "return cjson.encode({a = {b = 1.5}})", "0"],
        &["EVAL", "return cjson.encode({})", "0"],
        &["EVAL", "return cjson.encode(0.1)", "0"],
        &["EVAL", "return cjson.encode(1e20)", "0"],
        &["EVAL", "return cjson.encode('a\"b/\\1\\n')", "0"],
        &["EVAL", "return cjson.encode({true, false, 'x'})", "0"],
        &["EVAL", "return cjson.encode(function() end)", "0"],
        &["EVAL", "return cjson.encode({[1] = 1, [100] = 2})", "0"],
        &[
            "EVAL",
            "return cjson.decode('[1,2,{\"a\":[true]}]')[3].a[1]",
            "0",
        ],
        &[
            "EVAL",
            "return cjson.decode('{\"a\":null}').a == cjson.null",
            "0",
        ],
        &["EVAL", "return cjson.decode('\"\\\\u00e9\\\\n\"')", "0"],
        &[
            "EVAL",
            "return cjson.encode(cjson.decode('{\"k\":[1,2.5,\"s\"]}'))",
            "0",
        ],
        &["EVAL", "return cjson.decode('[1,2')", "0"],
        &["EVAL", "return cmsgpack.pack({1, 2, 3})", "0"],
        &["EVAL", "return cmsgpack.pack({a = 1})", "0"],
        &[
            "EVAL",
            "return cmsgpack.pack(1, -1, 300, -300, 70000, 1.5, 'str', true, false)",
            "0",
        ],
        &["EVAL", "return cmsgpack.pack(string.rep('x', 40))", "0"],
        &["EVAL", "return cmsgpack.pack(2^40, -(2^40))", "0"],
        &[
            "EVAL",
            "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, 2, {3}}))}",
            "0",
        ],
        &[
            "EVAL",
            "local t = cmsgpack.unpack(cmsgpack.pack({x = 'y'})); return t.x",
            "0",
        ],
        &[
            "EVAL",
            "return {cmsgpack.unpack(cmsgpack.pack(1.5, -7, 2^33))}",
            "0",
        ],
        &["EVAL", "return bit.band(0xff, 0x0f)", "0"],
        &["EVAL", "return bit.bor(1, 2, 4)", "0"],
        &["EVAL", "return bit.bxor(5, 3)", "0"],
        &["EVAL", "return bit.bnot(0)", "0"],
        &["EVAL", "return bit.lshift(1, 33)", "0"],
        &["EVAL", "return bit.rshift(-1, 28)", "0"],
        &["EVAL", "return bit.arshift(-256, 4)", "0"],
        &["EVAL", "return bit.rol(0x12345678, 8)", "0"],
        &["EVAL", "return bit.ror(0x12345678, 8)", "0"],
        &["EVAL", "return bit.tohex(65535)", "0"],
        &["EVAL", "return bit.tohex(65535, -4)", "0"],
        &["EVAL", "return bit.tohex(-1, 2)", "0"],
        &["EVAL", "return bit.tobit(2^32 + 5)", "0"],
        &["EVAL", "return bit.band()", "0"],
    ]);
}

const LIB: &str = "#!lua name=mylib
redis.register_function('echo', function(keys, args) return args[1] end)
redis.register_function{function_name = 'ro', callback = function(keys, args) return redis.call('get', keys[1]) end, flags = {'no-writes'}, description = 'reads'}
redis.register_function('wr', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function('bad', function(keys, args) return redis.call('incr', 'nope', 'x') end)";

#[test]
fn functions_match_redis() {
    let mut d = Diff::new();
    let one = "#!lua name=one\nredis.register_function{function_name = 'f', callback = function() return 1 end, flags = {'no-writes'}, description = 'd'}";
    d.check(&[
        &["FUNCTION", "LOAD", LIB],
        &["FUNCTION", "LOAD", LIB],
        &["FCALL", "echo", "0", "hello"],
        &["FCALL", "ro", "1", "k"],
        &["FCALL_RO", "wr", "1", "k", "v"],
        &["FCALL", "wr", "1", "k", "v"],
        &["FCALL_RO", "ro", "1", "k"],
        &["FCALL", "bad", "0"],
        &["FCALL", "nosuch", "0"],
        &["FCALL", "echo", "-1"],
        &["FCALL", "echo", "3", "a"],
        &["FCALL", "echo", "x"],
        &["FUNCTION", "DELETE", "mylib"],
        &["FUNCTION", "DELETE", "mylib"],
        &["FCALL", "echo", "0", "hello"],
        &["FUNCTION", "LOAD", one],
        &["FUNCTION", "LIST"],
        &["FUNCTION", "LIST", "WITHCODE"],
        &["FUNCTION", "LIST", "LIBRARYNAME", "o*"],
        &["FUNCTION", "LIST", "LIBRARYNAME", "x*"],
        &["FUNCTION", "LIST", "LIBRARYNAME"],
        &["FUNCTION", "LIST", "foo"],
        &["FUNCTION", "LOAD", "REPLACE", "#!lua name=one\nredis.register_function('g', function() return 2 end)"],
        &["FCALL", "f", "0"],
        &["FCALL", "g", "0"],
        &["FUNCTION", "LOAD", "#!lua name=two\nredis.register_function('g', function() end)"],
        &["FUNCTION", "LOAD", "x", "#!lua name=two\nredis.register_function('h', function() end)"],
        &["FUNCTION", "LOAD", "no shebang"],
        &["FUNCTION", "LOAD", "#!lua name=x"],
        &["FUNCTION", "LOAD", "#!lua\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=a-b\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=x foo=bar\nreturn 1"],
        &["FUNCTION", "LOAD", "#!js name=x\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=x\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('a-b', function() end)"],
        &["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function{function_name = 'f2', callback = function() end, flags = {'bogus'}}"],
        &["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f2', function() end)\nredis.register_function('f2', function() end)"],
        &["FUNCTION", "LOAD", "#!lua name=x\nredis.call('ping')"],
        &["FUNCTION", "LOAD", "#!lua name=x\nsyntax error here"],
        &["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f2', function() end)\nzz = 3"],
        &["FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('z1', function() return KEYS end)"],
        &["FUNCTION", "LOAD", "#!lua name=inf\nwhile true do end"],
        &["FCALL", "z1", "0"],
        // Function names are found without case, and clash without case across libraries
        // (library names keep theirs).
        &["FCALL", "Z1", "0"],
        &["FCALL_RO", "G", "0"],
        &["FUNCTION", "LOAD", "#!lua name=zz\nredis.register_function('Z1', function() end)"],
        &["FUNCTION", "LOAD", "#!lua name=Z\nredis.register_function('z9', function() return 9 end)"],
        &["FCALL", "z9", "0"],
        &["FUNCTION", "DELETE", "Z"],
        &["FUNCTION", "STATS"],
        &["FUNCTION", "KILL"],
        &["FUNCTION", "RESTORE", "abc"],
        &["FUNCTION", "FLUSH", "x"],
        &["FUNCTION", "FLUSH"],
        &["FUNCTION", "LIST"],
        &["FUNCTION", "HELP"],
    ]);
}

// ---- what only the engine shows: atomicity, busy scripts, SCRIPT KILL ----

/// A served engine and a way to open connections to it.
struct Served {
    handle: server::ServerHandle,
    engine: Engine,
}

impl Served {
    fn start() -> Served {
        let engine = Engine::new();
        let handle =
            crate::support::served::spawn_in_background(Bind::TempUnixSocket, engine.clone())
                .unwrap_or_else(|e| panic!("cannot serve the engine: {e}"));
        Served { handle, engine }
    }

    fn connect(&self) -> redis::Connection {
        crate::support::connect(&self.handle.endpoint(), Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

fn text(r: redis::RedisResult<redis::Value>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or("")),
    }
}

fn send(con: &mut redis::Connection, args: &[&str]) -> String {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    text(cmd.query::<redis::Value>(con))
}

/// Sends `args` until the reply differs from `while_reply` (at most 10 s).
fn send_until_not(con: &mut redis::Connection, args: &[&str], while_reply: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = send(con, args);
        if reply != while_reply || Instant::now() > deadline {
            return reply;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

#[test]
fn a_script_is_atomic_against_other_connections() {
    let served = Served::start();
    let mut writer = served.connect();
    let mut reader = served.connect();
    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let script = std::thread::spawn(move || {
        for _ in 0..30 {
            let reply = send(
                &mut writer,
                &[
                    "EVAL",
                    "for i = 1, 500 do redis.call('incr', KEYS[1]); redis.call('incr', KEYS[2]) end return 1",
                    "2",
                    "a",
                    "b",
                ],
            );
            assert_eq!(reply, "int(1)");
        }
        stop.store(true, Ordering::Relaxed);
    });
    let mut reads = 0;
    while !done.load(Ordering::Relaxed) {
        let reply = send(&mut reader, &["MGET", "a", "b"]);
        let items = crate::support::diff::elements(&reply);
        assert_eq!(items.len(), 2, "{reply}");
        assert_eq!(items[0], items[1], "a half-done script was seen: {reply}");
        reads += 1;
    }
    script.join().expect("script thread");
    assert!(reads > 0);
    assert_eq!(send(&mut reader, &["GET", "b"]), "bulk-string('\"15000\"')");
}

#[test]
fn a_busy_script_answers_busy_and_script_kill_stops_it() {
    let served = Served::start();
    let mut caller = served.connect();
    let mut other = served.connect();
    assert_eq!(
        send(
            &mut other,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "ok"
    );
    assert_eq!(
        send(&mut other, &["SCRIPT", "KILL"]),
        "NOTBUSY No scripts in execution right now."
    );
    let body = "local i = 0\nwhile true do i = i + 1 end";
    let sha = served.engine.execute(
        &mut served.engine.client(),
        &[b"SCRIPT", b"LOAD", body.as_bytes()],
    );
    let Reply::Bulk(sha) = sha else {
        panic!("{sha:?}")
    };
    let sha = String::from_utf8(sha).expect("hex");
    // A transaction queued before the script starts.
    let mut in_multi = served.engine.client();
    assert_eq!(
        served.engine.execute(&mut in_multi, &[b"MULTI"]),
        Reply::ok()
    );
    assert_eq!(
        served.engine.execute(&mut in_multi, &[b"INCR", b"xx"]),
        Reply::queued()
    );
    let script = std::thread::spawn(move || {
        send(&mut caller, &["EVALSHA", &sha, "0"]).replace(&sha, "<sha>")
    });
    // Other clients wait while the script is young, then get BUSY.
    let busy = send_until_not(&mut other, &["PING"], "simple-string(\"PONG\")");
    assert_eq!(busy, BUSY_EVAL);
    assert_eq!(send(&mut other, &["GET", "k"]), BUSY_EVAL);
    assert_eq!(
        send(&mut other, &["FUNCTION", "KILL"]),
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    // In-process callers see the same state.
    let mut embedded = served.engine.client();
    assert_eq!(
        served.engine.execute(&mut embedded, &[b"PING"]),
        Reply::err(BUSY_EVAL)
    );
    // An EXEC that meets the busy script runs nothing and ends the transaction (Redis's
    // unit/multi, "EXEC and script timeout").
    assert_eq!(
        served.engine.execute(&mut in_multi, &[b"EXEC"]),
        Reply::Error(format!("EXECABORT Transaction discarded because of: {BUSY_EVAL}").into())
    );
    assert!(!in_multi.in_multi());
    assert_eq!(send(&mut other, &["SCRIPT", "KILL"]), "ok");
    assert_eq!(
        script.join().expect("script thread"),
        "ERR Script killed by user with SCRIPT KILL... script: <sha>, on @user_script:2."
    );
    assert_eq!(send(&mut other, &["PING"]), "simple-string(\"PONG\")");
    // The aborted transaction ran nothing.
    assert_eq!(send(&mut other, &["EXISTS", "xx"]), "int(0)");
    assert_eq!(
        send(&mut other, &["SCRIPT", "KILL"]),
        "NOTBUSY No scripts in execution right now."
    );
}

#[test]
fn pcall_cannot_swallow_script_kill() {
    let served = Served::start();
    let mut caller = served.connect();
    let mut other = served.connect();
    assert_eq!(
        send(
            &mut other,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "ok"
    );
    let script = std::thread::spawn(move || {
        send(
            &mut caller,
            &[
                "EVAL",
                "while true do pcall(function() while true do end end) end",
                "0",
            ],
        )
    });
    assert_eq!(
        send_until_not(&mut other, &["PING"], "simple-string(\"PONG\")"),
        BUSY_EVAL
    );
    assert_eq!(send(&mut other, &["SCRIPT", "KILL"]), "ok");
    let reply = script.join().expect("script thread");
    assert!(
        reply.starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{reply}"
    );
    assert_eq!(send(&mut other, &["PING"]), "simple-string(\"PONG\")");
}

#[test]
fn a_script_that_wrote_is_unkillable() {
    let served = Served::start();
    let mut caller = served.connect();
    let mut other = served.connect();
    assert_eq!(
        send(&mut other, &["CONFIG", "SET", "lua-time-limit", "100"]),
        "ok"
    );
    let script = std::thread::spawn(move || {
        send(
            &mut caller,
            &[
                "EVAL",
                "redis.call('set', 'x', '1')\nlocal s = tonumber(redis.call('time')[1])\nwhile tonumber(redis.call('time')[1]) - s < 2 do end\nreturn 'done'",
                "0",
            ],
        )
    });
    let busy = send_until_not(&mut other, &["PING"], "simple-string(\"PONG\")");
    assert_eq!(busy, BUSY_EVAL);
    assert_eq!(
        send(&mut other, &["SCRIPT", "KILL"]),
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
    );
    assert_eq!(
        script.join().expect("script thread"),
        "bulk-string('\"done\"')"
    );
    assert_eq!(send(&mut other, &["GET", "x"]), "bulk-string('\"1\"')");
}

#[test]
fn a_busy_function_is_killed_by_function_kill_only() {
    let served = Served::start();
    let mut caller = served.connect();
    let mut other = served.connect();
    assert_eq!(
        send(
            &mut other,
            &["CONFIG", "SET", "busy-reply-threshold", "100"]
        ),
        "ok"
    );
    let lib = "#!lua name=spin\nredis.register_function{function_name = 'spin', callback = function()\nwhile true do end end, flags = {'no-writes'}}";
    assert_eq!(
        send(&mut other, &["FUNCTION", "LOAD", lib]),
        "bulk-string('\"spin\"')"
    );
    let script = std::thread::spawn(move || send(&mut caller, &["FCALL", "spin", "0"]));
    let busy = send_until_not(&mut other, &["PING"], "simple-string(\"PONG\")");
    let busy_function =
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
    assert_eq!(busy, busy_function);
    assert_eq!(send(&mut other, &["SCRIPT", "KILL"]), busy_function);
    let stats = send(&mut other, &["FUNCTION", "STATS"]);
    assert!(
        stats.contains("bulk-string('\"name\"'), bulk-string('\"spin\"'), bulk-string('\"command\"'), array([bulk-string('\"FCALL\"'), bulk-string('\"spin\"'), bulk-string('\"0\"')])"),
        "{stats}"
    );
    assert_eq!(send(&mut other, &["FUNCTION", "KILL"]), "ok");
    assert_eq!(
        script.join().expect("script thread"),
        "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:3."
    );
}

#[test]
fn a_script_cannot_take_unbounded_memory() {
    let engine = Engine::new();
    let mut client = engine.client();
    let reply = engine.execute(
        &mut client,
        &[
            b"EVAL",
            b"local s = string.rep('x', 1024 * 1024) while true do s = s .. s end",
            b"0",
        ],
    );
    let Reply::Error(text) = reply else {
        panic!("{reply:?}")
    };
    assert!(text.contains("not enough memory"), "{text}");
    // The VM still runs scripts afterwards.
    assert_eq!(
        engine.execute(&mut client, &[b"EVAL", b"return 1", b"0"]),
        Reply::Int(1)
    );
}

#[test]
fn scripts_run_in_process_and_inside_transactions() {
    let engine = Engine::new();
    let mut client = engine.client();
    let run = |client: &mut edgebench_engine::Client, args: &[&str]| {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        engine.execute(client, &argv)
    };
    assert_eq!(
        run(
            &mut client,
            &[
                "EVAL",
                "return redis.call('incrby', KEYS[1], ARGV[1])",
                "1",
                "n",
                "5"
            ]
        ),
        Reply::Int(5)
    );
    assert_eq!(run(&mut client, &["MULTI"]), Reply::ok());
    assert_eq!(
        run(
            &mut client,
            &["EVAL", "return redis.call('incr', 'n')", "0"]
        ),
        Reply::queued()
    );
    assert_eq!(run(&mut client, &["INCR", "n"]), Reply::queued());
    assert_eq!(
        run(&mut client, &["EXEC"]),
        Reply::Array(vec![Reply::Int(6), Reply::Int(7)])
    );
    // A script whose code says SELECT holds every database and may switch; one that
    // builds the name at run time holds only its own, and is refused.
    assert_eq!(
        run(
            &mut client,
            &["EVAL", "return redis.pcall('select', 1)", "0"]
        ),
        Reply::ok()
    );
    assert_eq!(
        run(
            &mut client,
            &["EVAL", "return redis.pcall('SEL' .. 'ECT', 1)", "0"]
        ),
        Reply::err("ERR This Redis command is not allowed from script")
    );
}

#[test]
fn function_dump_payloads_restore_both_ways_with_redis() {
    let real = crate::support::redis_server::RedisServer::spawn();
    let mut redis = real.connect();
    let engine = Engine::new();
    let mut client = engine.client();
    // Long enough that redis-server compresses it (LZF) in its payload.
    let lib = format!(
        "#!lua name=dumped\n-- {}\nredis.register_function('dumped', function() return 'restored' end)",
        "padding ".repeat(20)
    );
    let loaded: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(&lib)
        .query(&mut redis)
        .expect("load");
    assert_eq!(loaded, "dumped");
    let theirs: Vec<u8> = redis::cmd("FUNCTION")
        .arg("DUMP")
        .query(&mut redis)
        .expect("dump");

    // redis-server's payload into the engine.
    let reply = engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &theirs]);
    assert_eq!(reply, Reply::ok());
    assert_eq!(
        engine.execute(&mut client, &[b"FCALL", b"dumped", b"0"]),
        Reply::bulk(b"restored")
    );
    assert_eq!(
        engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &theirs]),
        Reply::err("ERR Library dumped already exists")
    );
    assert_eq!(
        engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &theirs, b"REPLACE"]),
        Reply::ok()
    );

    // The engine's payload into redis-server.
    let Reply::Bulk(ours) = engine.execute(&mut client, &[b"FUNCTION", b"DUMP"]) else {
        panic!("FUNCTION DUMP is not a bulk string");
    };
    let flushed: String = redis::cmd("FUNCTION")
        .arg("FLUSH")
        .query(&mut redis)
        .expect("flush");
    assert_eq!(flushed, "OK");
    let restored: String = redis::cmd("FUNCTION")
        .arg("RESTORE")
        .arg(&ours)
        .query(&mut redis)
        .expect("redis-server accepts the engine's payload");
    assert_eq!(restored, "OK");
    let called: String = redis::cmd("FCALL")
        .arg("dumped")
        .arg(0)
        .query(&mut redis)
        .expect("fcall");
    assert_eq!(called, "restored");

    // A corrupt payload, a bad policy.
    let mut corrupt = ours.clone();
    corrupt[3] ^= 1;
    assert_eq!(
        engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &corrupt]),
        Reply::err("ERR DUMP payload version or checksum are wrong")
    );
    assert_eq!(
        engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &ours, b"BAD"]),
        Reply::err(
            "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
        )
    );
    assert_eq!(
        engine.execute(&mut client, &[b"FUNCTION", b"RESTORE", &ours, b"FLUSH"]),
        Reply::ok()
    );
}

#[test]
fn resp3_conversions_match_redis() {
    let mut d = Diff::new();
    // HELLO's own reply names the server; only the protocol switch matters here.
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1.5", "m"],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('hgetall', 'h')",
            "0",
        ],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('zscore', 'z', 'm')",
            "0",
        ],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('zscore', 'z', 'nosuch')",
            "0",
        ],
        &["EVAL", "redis.setresp(3); return {double = 3.5}", "0"],
        &["EVAL", "redis.setresp(3); return {map = {a = 1}}", "0"],
        &["EVAL", "redis.setresp(3); return {set = {a = true}}", "0"],
        &["EVAL", "redis.setresp(3); return true", "0"],
        &["EVAL", "redis.setresp(3); return false", "0"],
        &["EVAL", "return true", "0"],
        &["EVAL", "return false", "0"],
        &["EVAL", "return redis.call('hgetall', 'h')", "0"],
        &["EVAL", "return {double = 3.5}", "0"],
        &[
            "EVAL",
            "redis.setresp(3); local t = redis.call('hgetall', 'h'); return t.map.f",
            "0",
        ],
        &[
            "EVAL",
            "redis.setresp(3); return redis.call('zscore', 'z', 'm').double",
            "0",
        ],
        &["FUNCTION", "LOAD", "#!lua name=r3\nredis.register_function{function_name = 'r3', callback = function() return {map = {k = 'v'}} end, flags = {'no-writes', 'allow-stale'}}"],
        &["FCALL_RO", "r3", "0"],
        &["FUNCTION", "LIST", "WITHCODE"],
        &["FUNCTION", "STATS"],
        &["SCRIPT", "EXISTS", "a", "b"],
    ]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever bytes a client sends as a script, a library, a payload or a library's input,
    /// the engine answers (an error is fine) and keeps running scripts.
    #[test]
    fn arbitrary_input_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
        let engine = Engine::new();
        let mut client = engine.client();
        let mut shebang = b"#!lua name=x\n".to_vec();
        shebang.extend_from_slice(&bytes);
        let mut restore = bytes.clone();
        restore.extend_from_slice(&[10, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let requests: [&[&[u8]]; 6] = [
            &[b"EVAL", &bytes, b"0"],
            &[b"FUNCTION", b"LOAD", &bytes],
            &[b"FUNCTION", b"LOAD", &shebang],
            &[b"FUNCTION", b"RESTORE", &restore],
            &[b"EVAL", b"return {pcall(cmsgpack.unpack, ARGV[1])}", b"0", &bytes],
            &[b"EVAL", b"return {pcall(cjson.decode, ARGV[1])}", b"0", &bytes],
        ];
        for request in requests {
            let _ = engine.execute(&mut client, request);
        }
        proptest::prop_assert_eq!(
            engine.execute(&mut client, &[b"EVAL", b"return 7", b"0"]),
            Reply::Int(7)
        );
    }
}

/// SELECT inside a script switches the database for the rest of the script only (Redis
/// 7.0), with Redis's errors for a bad index; functions too.
#[test]
fn select_inside_a_script_changes_its_database_not_the_callers() {
    let mut d = Diff::new();
    d.check(&[
        &["SELECT", "10"],
        &["SET", "k", "in10"],
        &[
            "EVAL",
            "redis.call('select', 9) redis.call('set', KEYS[1], 'in9') return redis.call('get', KEYS[1])",
            "1",
            "k",
        ],
        &["GET", "k"],
        &["EVAL", "return redis.pcall('select', '9')", "0"],
        &["GET", "k"],
        &["EVAL", "return redis.pcall('select', 99)", "0"],
        &["EVAL", "return redis.pcall('select', 'x')", "0"],
        &["EVAL", "return redis.pcall('select', 1, 2)", "0"],
        &["SELECT", "9"],
        &["GET", "k"],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=sel\nredis.register_function('in3', function(keys, args) redis.call('SELECT', 3) return redis.call('INCR', keys[1]) end)",
        ],
        &["FCALL", "in3", "1", "counter"],
        &["FCALL", "in3", "1", "counter"],
        &["EXISTS", "counter"],
        &["SELECT", "3"],
        &["GET", "counter"],
        &["FUNCTION", "FLUSH"],
    ]);
}

/// `redis.call` with thousands of arguments (more than a Lua C call takes), as Redis's
/// "Script check unpack with massive arguments".
#[test]
fn redis_call_takes_thousands_of_arguments() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "EVAL",
            "local a = {} for i=1,7999 do a[i] = i end return redis.call('rpush', 'l', unpack(a))",
            "0",
        ],
        &["LLEN", "l"],
        &["LINDEX", "l", "7998"],
        &["EVAL", "return redis.call({'get', 'k'})", "0"],
        &[
            "EVAL",
            "return redis.pcall('cluster', 'reset', 'hard')",
            "0",
        ],
    ]);
}

/// Redis's Lua reads every chunk as source: precompiled bytecode (`string.dump`'s output)
/// is a syntax error at its first byte, from loadstring, load and EVAL alike.
#[test]
fn bytecode_does_not_load_as_in_redis() {
    let mut d = Diff::new();
    let dump = "string.dump(function() return 1 end)";
    let first = format!("return loadstring({dump})()");
    let pair = format!("local f, e = loadstring({dump}) return {{tostring(f), e}}");
    let named = format!("local f, e = loadstring({dump}, '=x') return {{tostring(f), e}}");
    let reader = format!(
        "local s, done = {dump}, false
         local f, e = load(function() if done then return nil end done = true return s end)
         return {{tostring(f), e}}"
    );
    d.check(&[
        &["EVAL", &first, "0"],
        &["EVAL", &pair, "0"],
        &["EVAL", &named, "0"],
        &["EVAL", &reader, "0"],
        &["EVAL", "return loadstring('return 7')()", "0"],
        &["EVAL", "return load(function() return nil end) ~= nil", "0"],
        &["EVAL", "\x1bLua", "0"],
    ]);
}

/// The globals and the libraries are read-only tables in Redis: setmetatable on them, or a
/// write to the globals' metatable, raises `Attempt to modify a readonly table`; the
/// libraries show no metatable.
#[test]
fn protected_tables_and_their_metatables_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EVAL", "setmetatable(_G, {})", "0"],
        &["EVAL", "local g = getmetatable(_G)\ng.__index = {}", "0"],
        &[
            "EVAL",
            "local g = getmetatable(_G) return {type(g), type(g.__index), type(g.__newindex)}",
            "0",
        ],
        &[
            "EVAL",
            "return {tostring(getmetatable(string)), tostring(getmetatable(redis)), tostring(getmetatable(getmetatable(_G)))}",
            "0",
        ],
        &["EVAL", "setmetatable(string, {})", "0"],
        &["EVAL", "setmetatable(redis, {})", "0"],
        &["EVAL", "setmetatable(getmetatable(_G), {})", "0"],
        &["EVAL", "rawset(getmetatable(_G), 'x', 1)", "0"],
        &["EVAL", "return pcall(setmetatable, _G, {})", "0"],
        &["EVAL", "setmetatable(1, {})", "0"],
        &["EVAL", "setmetatable({}, 1)", "0"],
        &["EVAL", "getmetatable()", "0"],
        &[
            "EVAL",
            "local t = setmetatable({}, {__metatable = 'x'}) return {getmetatable(t), pcall(setmetatable, t, {})}",
            "0",
        ],
        &[
            "EVAL",
            "local t = setmetatable({}, {__index = function() return 5 end}) return {t.a, type(getmetatable('s'))}",
            "0",
        ],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=meta\nredis.register_function('meta', function() setmetatable(_G, {}) end)",
        ],
        &["FCALL", "meta", "0"],
    ]);
}

/// INFO memory counts the cached scripts (SCRIPT FLUSH ASYNC empties the cache at once) and
/// the loaded functions, as redis-server does.
#[test]
fn info_counts_cached_scripts_and_functions() {
    let mut d = Diff::new();
    let count = |d: &mut Diff, field: &str| {
        let (real, ours) = d.both(&["INFO", "memory"]);
        let value = |text: &str| {
            let at = text.find(&format!("{field}:")).map(|i| i + field.len() + 1);
            at.map(|i| {
                text[i..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
        };
        let (real, ours) = (value(&real), value(&ours));
        assert_eq!(ours, real, "{field}: engine (left) vs redis-server (right)");
        ours.unwrap_or_default()
    };
    d.check(&[&["SCRIPT", "FLUSH"], &["FUNCTION", "FLUSH"]]);
    assert_eq!(count(&mut d, "number_of_cached_scripts"), "0");
    for n in 0..5 {
        d.check(&[&["SCRIPT", "LOAD", &format!("return {n}")]]);
    }
    d.check(&[
        &["EVAL", "return 'new'", "0"],
        &["EVAL", "return 'new'", "0"],
    ]);
    assert_eq!(count(&mut d, "number_of_cached_scripts"), "6");
    d.check(&[&["SCRIPT", "FLUSH", "ASYNC"]]);
    assert_eq!(count(&mut d, "number_of_cached_scripts"), "0");
    d.check(&[&[
        "FUNCTION",
        "LOAD",
        "#!lua name=two\nredis.register_function('a', function() return 1 end)\nredis.register_function('b', function() return 2 end)",
    ]]);
    assert_eq!(count(&mut d, "number_of_functions"), "2");
    assert_eq!(count(&mut d, "number_of_libraries"), "1");
}

/// SORT BY a constant leaves a set in its hash order, which differs between servers; from a
/// script Redis sorts it (ALPHA) so that the script's result is the same everywhere.
#[test]
fn sort_by_a_constant_is_ordered_inside_scripts() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "SADD", "myset", "a", "b", "c", "d", "e", "f", "g", "h", "i", "l", "m", "n", "o", "p",
            "q", "r", "s", "t", "u", "v", "z", "aa", "aaa", "azz",
        ],
        &[
            "EVAL",
            "return redis.call('sort', KEYS[1], 'by', '_')",
            "1",
            "myset",
        ],
        &[
            "EVAL",
            "return redis.call('sort', KEYS[1], 'by', '_', 'desc', 'limit', 1, 3)",
            "1",
            "myset",
        ],
        &[
            "EVAL",
            "return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')",
            "1",
            "myset",
        ],
        &[
            "EVAL",
            "return redis.call('sort_ro', KEYS[1], 'by', 'x')",
            "1",
            "myset",
        ],
        // Lists keep their own order, in scripts too.
        &["RPUSH", "l", "c", "a", "b"],
        &[
            "EVAL",
            "return redis.call('sort', KEYS[1], 'by', '_')",
            "1",
            "l",
        ],
        &[
            "EVAL",
            "return redis.call('sort', KEYS[1], 'by', '_', 'desc')",
            "1",
            "l",
        ],
    ]);
}
