//! `edgebench kv` end to end through the binary, against private redis-servers and the
//! in-process engine: the seed's memtier command lines run unchanged, the populate step writes
//! exactly the key range, and bad input, a dead server and a server dying mid-run each end in
//! a clear line.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use edgebench::target::Endpoint;

fn edgebench() -> Command {
    Command::new(cargo_bin("edgebench"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `-s HOST -p PORT` of a private redis-server, and the server.
fn private_redis() -> (edgebench::target::Target, String, u16) {
    common::require_redis_server();
    let target = common::start("redis-tcp");
    let Some(Endpoint::Tcp { host, port }) = target.redis_endpoint() else {
        panic!("redis-tcp has a TCP endpoint");
    };
    (target, host, port)
}

fn redis(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .and_then(|c| c.get_connection())
        .expect("connect to the private redis-server")
}

/// The row `name` of an ALL STATS table: its numbers (`---` as NaN).
fn row(stdout: &str, name: &str) -> Vec<f64> {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row in:\n{stdout}"));
    line.split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap_or(f64::NAN))
        .collect()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run edgebench")
}

#[test]
fn the_seeds_populate_step_writes_exactly_the_key_range() {
    let (_server, host, port) = private_redis();
    let out = run(edgebench()
        .current_dir(tempfile::tempdir().unwrap().path())
        .args([
            "kv",
            "-s",
            &host,
            "-p",
            &port.to_string(),
            "--key-pattern=P:P",
            "--ratio=1:0",
            "-n",
            "allkeys",
            "-d",
            "500",
            "--key-minimum=1",
            "--key-maximum=1000",
            "-c",
            "4",
            "-t",
            "2",
            "--hide-histogram",
        ]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("ALL STATS\n"), "{stdout}");
    assert!(row(&stdout, "Sets")[0] > 0.0);
    assert_eq!(row(&stdout, "Gets")[0], 0.0);

    let mut con = redis(port);
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    keys.sort();
    let mut want: Vec<String> = (1..=1000).map(|i| format!("memtier-{i}")).collect();
    want.sort();
    assert_eq!(keys, want);
    for key in ["memtier-1", "memtier-500", "memtier-1000"] {
        let len: usize = redis::cmd("STRLEN").arg(key).query(&mut con).unwrap();
        assert_eq!(len, 500, "{key}");
    }
    // Every key exactly once: 1,000 SETs in all.
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut con)
        .unwrap();
    assert!(info.contains("cmdstat_set:calls=1000,"), "{info}");
}

#[test]
fn the_seeds_gaussian_step_runs_and_writes_its_out_file() {
    let (_server, host, port) = private_redis();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gauss.txt");
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "-s",
        &host,
        "-p",
        &port.to_string(),
        "--key-minimum=1",
        "--key-maximum=1000",
        "--key-pattern=G:G",
        "--key-stddev=100",
        "--ratio=1:1",
        "--pipeline=11",
        "-c",
        "20",
        "-t",
        "1",
        "--distinct-client-seed",
        "--randomize",
        "--test-time=1",
        "--run-count=1",
        &format!("--out-file={}", file.display()),
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "with -o the table goes to the file");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("ALL STATS\n"), "{written}");
    let totals = row(&written, "Totals");
    let (sets, gets) = (row(&written, "Sets")[0], row(&written, "Gets")[0]);
    assert!(sets > 0.0 && gets > 0.0);
    // --ratio 1:1: sets and gets alternate, so their counts differ by at most one per
    // connection (20 over a 1 s run).
    assert!((sets - gets).abs() <= 20.0, "{sets} {gets}");
    assert!((totals[0] - (sets + gets)).abs() < 0.02, "{written}");
    // Pipelined 11 deep on 20 connections: the server saw the SETs and GETs.
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut redis(port))
        .unwrap();
    assert!(
        info.contains("cmdstat_set:") && info.contains("cmdstat_get:"),
        "{info}"
    );
}

#[test]
fn the_in_process_engine_takes_the_same_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "--target",
        "embedded",
        "-t",
        "1",
        "-c",
        "2",
        "--pipeline",
        "16",
        "-n",
        "5000",
        "--ratio",
        "1:1",
        "--key-maximum",
        "100",
        "--hide-histogram",
    ]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let gets = row(&stdout, "Gets");
    // Gets follow sets over 100 keys: hits and misses add up to all gets.
    assert!(
        (gets[1] + gets[2] - gets[0]).abs() < 0.05 * gets[0],
        "{stdout}"
    );
    let md = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("results.md");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.starts_with("| Type | Ops/sec | Hits/sec | Misses/sec |"),
        "{md}"
    );
    assert!(md.contains("| Totals |"), "{md}");
}

#[test]
fn unsupported_memtier_flags_and_bad_values_are_one_line() {
    for (args, want) in [
        (
            &["kv", "--tls"][..],
            "edgebench: memtier option --tls is not supported",
        ),
        (
            &["kv", "--ratio", "1:x"][..],
            "edgebench: invalid --ratio \"1:x\"",
        ),
        (
            &["kv", "-x", "3"][..],
            "edgebench: -x/--run-count above 1 is not implemented yet",
        ),
    ] {
        let out = run(edgebench().args(args));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(want), "{stderr}");
    }
}

#[test]
fn an_unreachable_server_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "-s",
        "127.0.0.1",
        "-p",
        "1",
        "-n",
        "10",
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("cannot connect"))
        .collect();
    assert_eq!(
        errors,
        ["edgebench: cannot connect to redis://127.0.0.1:1: Connection refused (os error 111)"],
        "{stderr}"
    );
}

#[test]
fn a_server_that_dies_mid_run_ends_the_run_with_what_it_measured() {
    let (server, host, port) = private_redis();
    let dir = tempfile::tempdir().unwrap();
    let child = edgebench()
        .current_dir(dir.path())
        .args([
            "kv",
            "-s",
            &host,
            "-p",
            &port.to_string(),
            "--test-time=30",
            "-c",
            "4",
            "-t",
            "1",
            "--hide-histogram",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(server); // stops the redis-server
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the run ended promptly"
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        row(&stdout, "Totals")[0] > 0.0,
        "it reports what it measured: {stdout}"
    );
    assert!(
        stderr.contains("the run ended early: connection to redis://"),
        "it says why: {stderr}"
    );
}
