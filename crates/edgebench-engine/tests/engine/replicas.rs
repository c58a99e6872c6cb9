//! `min-replicas-to-write` and `min-replicas-max-lag` against a real redis-server, which like
//! the engine has no replica: with both above 0, every write is refused with NOREPLICAS,
//! by the command's own flags at top level and while queuing in MULTI, by the flags a
//! script declared (`#!lua`, `redis.register_function`), and by the first write command a
//! script without flags calls.

use crate::support::diff::Diff;

const WRITER: &str = "#!lua name=replicas
redis.register_function('wr', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function{function_name = 'rd', callback = function(keys) return redis.call('get', keys[1]) end, flags = {'no-writes'}}";

#[test]
fn the_settings_and_their_old_names_read_and_set_as_in_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["CONFIG", "GET", "min-replicas-to-write"],
        &["CONFIG", "GET", "min-replicas-max-lag"],
        &["CONFIG", "SET", "min-slaves-to-write", "2"],
        &["CONFIG", "GET", "min-replicas-to-write"],
        &["CONFIG", "SET", "min-replicas-max-lag", "-1"],
        &["CONFIG", "SET", "min-replicas-max-lag", "x"],
        &["CONFIG", "SET", "min-slaves-max-lag", "7"],
        &["CONFIG", "GET", "min-replicas-max-lag"],
        &["CONFIG", "SET", "min-replicas-to-write", "0"],
    ]);
}

#[test]
fn writes_are_refused_at_top_level_and_in_multi() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "x", "v"],
        &["CONFIG", "SET", "min-replicas-to-write", "1"],
        &["SET", "x", "2"],
        &["INCR", "n"],
        &["GET", "x"],
        &["PING"],
        // A subcommand goes by its own flags: CONFIG SET is no write.
        &["CONFIG", "SET", "timeout", "0"],
        &["MULTI"],
        &["GET", "x"],
        &["SET", "x", "1"],
        &["EXEC"],
        &["MULTI"],
        &["GET", "x"],
        &["EXEC"],
        // With no lag allowed set, the check is off.
        &["CONFIG", "SET", "min-replicas-max-lag", "0"],
        &["SET", "x", "3"],
        &["CONFIG", "SET", "min-replicas-max-lag", "10"],
        &["DEL", "x"],
        &["CONFIG", "SET", "min-replicas-to-write", "0"],
        &["SET", "x", "4"],
        &["GET", "x"],
    ]);
}

#[test]
fn scripts_are_refused_by_their_flags_or_their_first_write() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "x", "v"],
        &["FUNCTION", "LOAD", WRITER],
        &["CONFIG", "SET", "min-replicas-to-write", "1"],
        // Declared writers are refused before they run, readers run.
        &["EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", "1", "x"],
        &["EVAL_RO", "#!lua\nreturn 1", "0"],
        &[
            "EVAL",
            "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
            "1",
            "x",
        ],
        &["FCALL", "wr", "1", "x", "1"],
        &["FCALL", "rd", "1", "x"],
        // A script without flags runs, and its first write is refused.
        &["EVAL", "return redis.call('get', KEYS[1])", "1", "x"],
        &["EVAL", "return redis.call('set', KEYS[1], 1)", "1", "x"],
        &["EVAL", "return redis.pcall('set', KEYS[1], 1)", "1", "x"],
        &[
            "EVAL",
            "local r = redis.pcall('set', KEYS[1], 1) return {r['err'], redis.call('get', KEYS[1])}",
            "1",
            "x",
        ],
        // EVALSHA of a cached script goes by the flags it declared.
        &["SCRIPT", "LOAD", "#!lua\nreturn 1"],
        &["EVALSHA", "cb70127618f0b0be70c53cf6bfcfa54a29d9b0c0", "0"],
        // Queued, a writing script is refused like any write.
        &["MULTI"],
        &["EVAL", "#!lua\nreturn 1", "0"],
        &["EXEC"],
        &["CONFIG", "SET", "min-replicas-to-write", "0"],
        &["FCALL", "wr", "1", "x", "1"],
        &["GET", "x"],
    ]);
}
