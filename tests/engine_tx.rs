//! Transactions, differentially against a real redis-server.

mod common;

use common::diff::Diff;

#[test]
fn multi_exec_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EXEC"],
        &["DISCARD"],
        &["MULTI"],
        &["MULTI"],
        &["NOSUCHCOMMAND", "a", "b"],
        &["EXEC"],
        &["MULTI"],
        &["WATCH", "k"],
        &["DISCARD"],
        &["UNWATCH"],
    ]);
}

#[test]
fn a_write_failing_with_wrongtype_does_not_abort_a_watch() {
    let mut d = Diff::new();
    d.check(&[
        &["HSET", "h", "f", "v"],
        &["WATCH", "h"],
        &["LPUSH", "h", "x"],
        &["SADD", "h", "x"],
        &["ZADD", "h", "1", "x"],
        &["MULTI"],
        &["PING"],
        &["EXEC"],
    ]);
}

#[test]
fn a_write_to_a_watched_key_aborts_exec_and_runtime_errors_stay_in_the_array() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "k", "1"],
        &["WATCH", "k"],
        &["SET", "k", "2"],
        &["MULTI"],
        &["INCR", "k"],
        &["EXEC"],
        &["MULTI"],
        &["SET", "s", "text"],
        &["INCR", "s"],
        &["GET", "s"],
        &["EXEC"],
    ]);
}
