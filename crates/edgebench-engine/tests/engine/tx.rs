//! Transactions, differentially against a real redis-server.

use crate::support::diff::Diff;

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
        // A refused EXEC (wrong arity) ends the transaction with EXECABORT: nothing runs,
        // and the connection is out of MULTI.
        &["MULTI"],
        &["SET", "a", "1"],
        &["EXEC", "now"],
        &["PING"],
        &["GET", "a"],
        &["EXEC"],
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

/// Every way a watch ends gives its key's version counter back: a run that watches many
/// distinct keys leaves nothing behind in the keyspace.
#[test]
fn watches_are_given_back_however_they_end() {
    use edgebench_engine::engine::{Engine, Reply};
    let engine = Engine::new();
    let watched_keys = |engine: &Engine| {
        (0..2)
            .map(|db| engine.db(db).lock_all(engine.now_ms()).watched_keys())
            .sum::<usize>()
    };
    let run = |client: &mut edgebench_engine::engine::Client, args: &[&str]| {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        engine.execute(client, &args)
    };
    let mut a = engine.client();
    let mut b = engine.client();
    // Two clients on one key: the counter stays until the second lets go.
    assert_eq!(run(&mut a, &["WATCH", "k1", "k2"]), Reply::ok());
    assert_eq!(run(&mut b, &["WATCH", "k1"]), Reply::ok());
    assert_eq!(watched_keys(&engine), 2);
    assert_eq!(run(&mut b, &["UNWATCH"]), Reply::ok());
    assert_eq!(watched_keys(&engine), 2, "a still watches k1");
    // EXEC ends a's watches, and b's write between WATCH and EXEC still aborts it.
    assert_eq!(run(&mut b, &["WATCH", "k3"]), Reply::ok());
    assert_eq!(run(&mut a, &["MULTI"]), Reply::ok());
    assert_eq!(run(&mut a, &["SET", "k1", "x"]), Reply::queued());
    assert_eq!(run(&mut b, &["SET", "k2", "y"]), Reply::ok());
    assert_eq!(run(&mut a, &["EXEC"]), Reply::NilArray);
    assert_eq!(watched_keys(&engine), 1, "only b's k3 is left");
    // DISCARD, RESET, a watch in another database, and a dropped client.
    assert_eq!(run(&mut a, &["WATCH", "k4"]), Reply::ok());
    assert_eq!(run(&mut a, &["MULTI"]), Reply::ok());
    assert_eq!(run(&mut a, &["DISCARD"]), Reply::ok());
    assert_eq!(run(&mut a, &["SELECT", "1"]), Reply::ok());
    assert_eq!(run(&mut a, &["WATCH", "k5"]), Reply::ok());
    assert_eq!(run(&mut a, &["RESET"]), Reply::Status("RESET".into()));
    assert_eq!(watched_keys(&engine), 1);
    drop(b);
    assert_eq!(watched_keys(&engine), 0);
    // Many distinct keys, watched and executed: nothing accumulates.
    for i in 0..1000 {
        let key = format!("tx:{i}");
        assert_eq!(run(&mut a, &["WATCH", &key]), Reply::ok());
        assert_eq!(run(&mut a, &["MULTI"]), Reply::ok());
        assert_eq!(run(&mut a, &["INCR", &key]), Reply::queued());
        assert_eq!(run(&mut a, &["EXEC"]), Reply::Array(vec![Reply::Int(1)]));
    }
    assert_eq!(watched_keys(&engine), 0);
}

#[test]
fn save_and_shutdown_are_refused_inside_multi_and_flushall_spares_watches_of_missing_keys() {
    let mut d = Diff::new();
    d.check(&[
        // `no-multi` commands doom the transaction (not run at EXEC: SHUTDOWN would stop
        // the server).
        &["MULTI"],
        &["SET", "a", "1"],
        &["SAVE"],
        &["EXEC"],
        &["MULTI"],
        &["SHUTDOWN"],
        &["EXEC"],
        &["GET", "a"],
        // A WATCH of a key that does not exist is not touched by FLUSHALL or FLUSHDB.
        &["DEL", "x"],
        &["WATCH", "x"],
        &["FLUSHALL"],
        &["MULTI"],
        &["PING"],
        &["EXEC"],
        &["SET", "y", "1"],
        &["WATCH", "x", "y"],
        &["FLUSHDB"],
        &["MULTI"],
        &["PING"],
        &["EXEC"],
    ]);
}
