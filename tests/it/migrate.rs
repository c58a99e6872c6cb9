//! MIGRATE between `edgebench serve` and redis-server, both ways and engine to engine: the
//! key arrives with its value and TTL and leaves the source (unless COPY), REPLACE, the KEYS
//! form, NOKEY, and redis-server's errors for a key the target has, a wrong password and a
//! refused connection.

use crate::common::require_redis_server;
use crate::common::resp::{free_port, Raw, Server};

/// A private server on a free port, with `--requirepass` if given.
fn start(redis: bool, password: Option<&str>) -> Server {
    let port = free_port().unwrap();
    match password {
        Some(p) => Server::start(redis, port, None, &["--requirepass", p]),
        None => Server::start(redis, port, None, &[]),
    }
}

/// Moves keys from `from` to `to` (either server kind) and checks every case.
fn migrate_between(from_redis: bool, to_redis: bool) {
    let from = start(from_redis, None);
    let to = start(to_redis, None);
    let mut a = Raw::tcp(from.port);
    let mut b = Raw::tcp(to.port);
    let port = to.port.to_string();
    let label = format!("from redis={from_redis} to redis={to_redis}");
    assert_eq!(a.call(&["RPUSH", "list", "x", "y", "z"]), ":3", "{label}");
    assert_eq!(a.call(&["SET", "k", "v", "PX", "100000"]), "+OK", "{label}");
    assert_eq!(
        a.call(&["MIGRATE", "127.0.0.1", &port, "k", "3", "5000"]),
        "+OK",
        "{label}"
    );
    assert_eq!(a.call(&["EXISTS", "k"]), ":0", "{label}: moved away");
    assert_eq!(b.call(&["SELECT", "3"]), "+OK");
    assert_eq!(b.call(&["GET", "k"]), "v", "{label}");
    let ttl: i64 = b.call(&["PTTL", "k"])[1..].parse().unwrap();
    assert!((90_000..=100_000).contains(&ttl), "{label}: TTL {ttl}");
    // COPY leaves the source; a key the target has is refused without REPLACE.
    assert_eq!(
        a.call(&["MIGRATE", "127.0.0.1", &port, "list", "3", "5000", "COPY"]),
        "+OK",
        "{label}"
    );
    assert_eq!(a.call(&["LLEN", "list"]), ":3", "{label}");
    assert_eq!(
        a.call(&["MIGRATE", "127.0.0.1", &port, "list", "3", "5000", "COPY"]),
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.",
        "{label}"
    );
    assert_eq!(a.call(&["RPUSH", "list", "w"]), ":4");
    assert_eq!(
        a.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "list",
            "3",
            "5000",
            "REPLACE"
        ]),
        "+OK",
        "{label}"
    );
    assert_eq!(b.call(&["LINDEX", "list", "3"]), "w", "{label}");
    // The KEYS form moves the keys that exist; none left: NOKEY.
    assert_eq!(a.call(&["MSET", "m1", "1", "m2", "2"]), "+OK");
    assert_eq!(
        a.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "",
            "3",
            "5000",
            "KEYS",
            "m1",
            "nope",
            "m2"
        ]),
        "+OK",
        "{label}"
    );
    assert_eq!(b.call(&["MGET", "m1", "m2"]), "*2", "{label}");
    assert_eq!(a.call(&["EXISTS", "m1", "m2"]), ":0", "{label}");
    assert_eq!(
        a.call(&["MIGRATE", "127.0.0.1", &port, "", "3", "5000", "KEYS", "m1"]),
        "+NOKEY",
        "{label}"
    );
    assert_eq!(
        a.call(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "m1",
            "3",
            "5000",
            "KEYS",
            "m2"
        ]),
        "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
        "{label}"
    );
}

#[test]
fn migrate_moves_keys_between_serve_and_redis_server_both_ways() {
    require_redis_server();
    migrate_between(false, true);
    migrate_between(true, false);
    migrate_between(false, false);
}

#[test]
fn migrate_errors_match_redis_server() {
    require_redis_server();
    let locked = start(true, Some("secret"));
    let port = locked.port.to_string();
    let closed = free_port().unwrap().to_string();
    for redis in [true, false] {
        let from = start(redis, None);
        let mut a = Raw::tcp(from.port);
        assert_eq!(a.call(&["SET", "k", "v"]), "+OK");
        assert_eq!(
            a.call(&["MIGRATE", "127.0.0.1", &port, "k", "0", "5000", "AUTH", "wrong"]),
            "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.",
            "redis={redis}"
        );
        assert_eq!(
            a.call(&["MIGRATE", "127.0.0.1", &closed, "k", "0", "500"]),
            "-IOERR error or timeout writing to target instance",
            "redis={redis}"
        );
        assert_eq!(
            a.call(&[
                "MIGRATE",
                "127.0.0.1",
                &port,
                "k",
                "0",
                "5000",
                "AUTH",
                "secret"
            ]),
            "+OK",
            "redis={redis}"
        );
        assert_eq!(a.call(&["EXISTS", "k"]), ":0", "redis={redis}");
        let mut t = Raw::tcp(locked.port);
        assert_eq!(t.call(&["AUTH", "secret"]), "+OK");
        assert_eq!(t.call(&["GETDEL", "k"]), "v", "redis={redis}");
    }
}
