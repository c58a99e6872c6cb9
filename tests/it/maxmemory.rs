//! `maxmemory` on `edgebench serve` and redis-server side by side, byte for byte: over the
//! limit, a key goes by the policy before the next command runs (and a client tracking it
//! is told before that command's reply, as Redis's own tracking test checks), and under
//! `noeviction` commands that may grow memory get Redis's OOM error while reads still run.
//! Only the served engine evicts: it measures the heap through edgebench's allocator.

use crate::common::require_redis_server;
use crate::common::resp::{Raw, Server};

fn scenario(redis: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("s.sock");
    let _server = Server::start(redis, 0, Some(&sock), &[]);
    let mut c = Raw::unix(&sock);
    c.send(&["HELLO", "3"]);
    c.read_through("modules\r\n*0\r\n");
    // What a fresh redis-server allocates on first use (the expires table, the tracking
    // table) is allocated before the heap is measured.
    c.check(&["SETEX", "warm", "10000", "x"], "+OK\r\n");
    c.check(&["PERSIST", "warm"], ":1\r\n");
    c.check(&["CLIENT", "TRACKING", "on"], "+OK\r\n");
    c.check(&["GET", "warm"], "$1\r\nx\r\n");
    let limit = used_memory(&mut c) + 100 * 1024;
    c.check(
        &["CONFIG", "SET", "maxmemory", &limit.to_string()],
        "+OK\r\n",
    );
    c.check(
        &["CONFIG", "SET", "maxmemory-policy", "volatile-random"],
        "+OK\r\n",
    );
    c.check(&["SETEX", "volatile-key", "10000", "x"], "+OK\r\n");
    c.check(&["SET", "kept", "y"], "+OK\r\n");
    c.check(&["GET", "volatile-key"], "$1\r\nx\r\n");
    // About 200 kB: over the limit after this command. The volatile key goes before the
    // next command runs (redis-server may count a buffer of its own and go one command
    // sooner); its invalidation comes before that command's reply, never inside one.
    c.send(&["SETBIT", "big-key", "1600000", "0"]);
    c.send(&["GETBIT", "big-key", "0"]);
    let push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$12\r\nvolatile-key\r\n";
    let got = c.read_n(push.len() + 8);
    let at_getbit = format!(":0\r\n{push}:0\r\n");
    let at_setbit = format!("{push}:0\r\n:0\r\n");
    assert!(
        got == at_getbit || (redis && got == at_setbit),
        "redis={redis}: {got:?}"
    );
    c.check(&["EXISTS", "volatile-key", "kept"], ":1\r\n");
    // Nothing left that volatile-random may take, and noeviction takes nothing: writes
    // that may grow memory are refused, reads and deletions run.
    for policy in ["volatile-random", "noeviction"] {
        c.check(&["CONFIG", "SET", "maxmemory-policy", policy], "+OK\r\n");
        c.check(
            &["SET", "more", "z"],
            "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
        );
        c.check(&["GET", "kept"], "$1\r\ny\r\n");
    }
    c.check(&["CONFIG", "SET", "maxmemory", "0"], "+OK\r\n");
    c.check(&["SET", "more", "z"], "+OK\r\n");
    assert!(
        c.info("stats").contains("evicted_keys:1\r\n"),
        "redis={redis}: one key evicted"
    );
}

/// INFO's `used_memory`.
fn used_memory(c: &mut Raw) -> u64 {
    let text = c.info("memory");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap_or_else(|| panic!("no used_memory in {text}"));
    line.trim().parse().unwrap()
}

#[test]
fn over_maxmemory_keys_go_by_policy_before_the_command_and_noeviction_refuses_writes() {
    require_redis_server();
    scenario(true);
    scenario(false);
}

/// Over `maxmemory` (1 byte: always over), scripts are refused by the flags they declared
/// (a `#!lua` script without `no-writes` or `allow-oom` may grow memory), a script without
/// flags is refused its first command that may grow memory, and inside MULTI every command
/// but EXEC and DISCARD is refused (queuing takes memory too).
fn scripts_and_transactions(redis: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("s.sock");
    let _server = Server::start(redis, 0, Some(&sock), &[]);
    let mut c = Raw::unix(&sock);
    let oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
    c.check(&["SET", "x", "v"], "+OK\r\n");
    c.check(&["CONFIG", "SET", "maxmemory", "1"], "+OK\r\n");
    c.check(&["EVAL", "#!lua\nreturn 1", "0"], oom);
    let read = "#!lua flags=no-writes\nreturn redis.call('get', 'x')";
    c.check(&["EVAL", read, "0"], "$1\r\nv\r\n");
    let write = "#!lua flags=allow-oom\nreturn redis.call('set', 'x', 'w')";
    c.check(&["EVAL", write, "0"], "+OK\r\n");
    c.check(
        &["EVAL", "return redis.call('get', 'x')", "0"],
        "$1\r\nw\r\n",
    );
    let first = "local t = redis.pcall('set', 'x', 'y') return t['err']";
    c.check(
        &["EVAL", first, "0"],
        "$55\r\nOOM command not allowed when used memory > 'maxmemory'.\r\n",
    );
    c.check(&["MULTI"], "+OK\r\n");
    c.check(&["GET", "x"], oom);
    c.check(
        &["EXEC"],
        "-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    c.check(&["MULTI"], "+OK\r\n");
    c.check(&["DISCARD"], "+OK\r\n");
    c.check(&["CONFIG", "SET", "maxmemory", "0"], "+OK\r\n");
    c.check(&["EVAL", first, "0"], "$-1\r\n");
}

#[test]
fn over_maxmemory_scripts_and_transactions_are_refused_as_by_redis() {
    require_redis_server();
    scripts_and_transactions(true);
    scripts_and_transactions(false);
}
