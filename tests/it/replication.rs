//! Replicas and `--wait` end to end: coredata and perf run to completion against a primary
//! with a replica, WAIT really reaches the primary (its `INFO commandstats`), the replica holds
//! what was written, and targets that cannot honour `--wait` or take options are refused with
//! one line.

use std::process::Command;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use edgebench::target::spawn::{Listen, RedisServer, ServerOptions};
use edgebench::target::{connect, Endpoint};
use edgebench::workload::coredata::BENCHMARKS;

use crate::common;

/// A primary with one replica, spawned for the test (stopped when it drops).
fn primary_with_replica() -> (RedisServer, String) {
    common::require_redis_server();
    let options = ServerOptions {
        replicas: 1,
        ..ServerOptions::default()
    };
    let server = RedisServer::spawn_with(Listen::Tcp, &options).unwrap_or_else(|e| panic!("{e}"));
    let Endpoint::Tcp { host, port } = server.endpoint() else {
        panic!("a TCP primary");
    };
    (server, format!("redis://{host}:{port}"))
}

fn query<T: redis::FromRedisValue>(endpoint: &Endpoint, args: &[&str]) -> T {
    let mut conn = connect(endpoint, Duration::from_secs(5)).unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(&mut conn)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// `calls=` of `cmdstat_NAME` in the server's `INFO commandstats` (0 when never called).
fn calls(endpoint: &Endpoint, name: &str) -> u64 {
    let info: String = query(endpoint, &["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{name}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

fn edgebench(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(cargo_bin("edgebench"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn coredata_with_wait_runs_every_benchmark_and_sends_wait_to_the_primary() {
    let (primary, url) = primary_with_replica();
    let dir = tempfile::tempdir().unwrap();
    let target = format!("prim={url}");
    let (code, stdout, stderr) = edgebench(
        dir.path(),
        &[
            "coredata",
            "--target",
            &target,
            "--wait",
            "1",
            "--benchtime",
            "5x",
            "--out",
            "run",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/results.json")).unwrap(),
    )
    .unwrap();
    let targets = json["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{stdout}");
    let mut ran: Vec<&str> = targets[0]["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    ran.sort();
    let mut all = BENCHMARKS.to_vec();
    all.sort();
    assert_eq!(ran, all);
    let endpoint = primary.endpoint();
    // Every write transaction carried one WAIT.
    let transactions = calls(&endpoint, "exec");
    assert!(transactions > 0);
    assert!(calls(&endpoint, "wait") >= transactions);
}

#[test]
fn perf_with_wait_sends_one_wait_per_write_and_the_replica_holds_every_entry() {
    let (primary, url) = primary_with_replica();
    let dir = tempfile::tempdir().unwrap();
    let prop = dir.path().join("g.properties");
    std::fs::write(
        &prop,
        "groupNames=g1\ng1.threadCount=2\ng1.totalInvocationCount=100\ng1.operations=put1\n\
         put1.map=map1\nput1.testCase=put\nput1.payloadSize=10\n",
    )
    .unwrap();
    let (code, _, stderr) = edgebench(
        dir.path(),
        &[
            "perf",
            "test_group",
            "-run",
            "-prop",
            prop.to_str().unwrap(),
            "--target",
            &url,
            "--wait",
            "1",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let endpoint = primary.endpoint();
    assert_eq!(calls(&endpoint, "wait"), calls(&endpoint, "hset"));
    assert!(calls(&endpoint, "wait") >= 100);
    // WAIT returned only after the replica acknowledged: it holds every entry now.
    let replica = primary.replicas()[0].endpoint();
    assert_eq!(query::<i64>(&replica, &["HLEN", "map1"]), 100);
}

#[test]
fn wait_without_enough_replicas_and_misplaced_options_are_one_line() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let one_line = |args: &[&str], code: i32, expected: &str| {
        let (got, _, stderr) = edgebench(dir.path(), args);
        assert_eq!(got, code, "{args:?}: {stderr}");
        assert!(
            stderr.lines().any(|l| l.ends_with(expected)),
            "{args:?}: {stderr}"
        );
    };
    one_line(
        &[
            "coredata",
            "--target",
            "redis-tcp",
            "--wait",
            "1",
            "--bench",
            "EventCount",
        ],
        1,
        "target RedisDB_TCP: --wait 1 needs 1 replicas, this server has 0 (WAIT would block \
         for ever): use redis-tcp?replicas=1, or drop --wait",
    );
    one_line(
        &[
            "coredata",
            "--target",
            "redis-tcp?replicas=1",
            "--wait",
            "2",
            "--bench",
            "EventCount",
        ],
        1,
        "target RedisDB_TCP: --wait 2 needs 2 replicas, this server has 1 (WAIT would block \
         for ever): use redis-tcp?replicas=2, or --wait 1",
    );
    one_line(
        &[
            "coredata",
            "--target",
            "embedded",
            "--wait",
            "1",
            "--bench",
            "EventCount",
        ],
        1,
        "target RedisDB_Embedded: --wait 1 needs replicas, and the in-process engine has none \
         (replication and persistence are out of scope for it): leave it out of this run, or \
         drop --wait",
    );
    one_line(
        &["coredata", "--target", "redis-tcp", "--wait", "0"],
        2,
        "--wait \"0\": expected a number of replicas from 1 to 100",
    );
    one_line(
        &["coredata", "--target", "embedded?appendonly=yes"],
        2,
        "bad target option in \"embedded?appendonly=yes\": the in-process engine has no \
         persistence or replicas (out of scope for it): use redis-tcp?… or redis-uds?… for \
         these options",
    );
    one_line(
        &["kv", "--target", "redis-tcp?replicas=1&wait=1", "-n", "10"],
        2,
        "--target \"redis-tcp?replicas=1&wait=1\": kv does not send WAIT (?wait=): remove \
         wait= (replicas=, appendonly=, appendfsync= and save= work), or use coredata or perf \
         --wait",
    );
}

/// kv sends no WAIT, but runs on a replicated, fsync-always server like on any other.
#[test]
fn kv_runs_on_a_replicated_target_with_an_append_only_file() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.json");
    let (code, _, stderr) = edgebench(
        dir.path(),
        &[
            "kv",
            "--target",
            "redis-uds?replicas=1&appendonly=yes&appendfsync=always",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "200",
            "--ratio",
            "1:0",
            "--hide-histogram",
            &format!("--json-out-file={}", file.display()),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["ALL STATS"]["Sets"]["Count"].as_u64(), Some(200));
    assert_eq!(doc["ALL STATS"]["Gets"]["Count"].as_u64(), Some(0));
}
