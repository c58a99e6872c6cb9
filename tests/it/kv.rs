//! `edgebench kv` end to end through the binary, against private redis-servers and the
//! in-process engine: the seed's memtier command lines run unchanged, the populate step writes
//! exactly the key range, and bad input, a dead server and a server dying mid-run each end in
//! a clear line. (The rate-driven stall test is `kv_stall.rs`, the cluster ones
//! `kv_cluster.rs`; what remains here is one thing, the kv command line end to end.)

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use edgebench::target::Endpoint;

use crate::common;

fn edgebench() -> Command {
    crate::common::edgebench()
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
            &["kv", "--client-stats"][..],
            "edgebench: memtier option --client-stats is not supported",
        ),
        (
            &["kv", "--ratio", "1:x"][..],
            "edgebench: invalid --ratio \"1:x\"",
        ),
        (
            &["kv", "--cluster-mode", "--multi-key-get", "3"][..],
            "edgebench: --cluster-mode with --multi-key-get: cluster mode does not support it",
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
    // Wait until the run is really talking to the server (not a fixed sleep: on a loaded
    // machine the child may still be starting), then stop the server under it.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while calls(port, "set") + calls(port, "get") < 100 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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

/// The server's count of calls of `command` (INFO commandstats).
fn calls(port: u16, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut redis(port))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ms(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn open_loop_sends_at_the_rate_and_corrects_latency_for_coordinated_omission() {
    let (_server, host, port) = private_redis();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memtier.json");
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "-s",
        &host,
        "-p",
        &port.to_string(),
        "--rate",
        "2000",
        "--test-time",
        "3",
        "-c",
        "2",
        "-t",
        "1",
        "--ratio",
        "1:1",
        "--key-maximum",
        "100",
        &format!("--json-out-file={}", file.display()),
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // 2 connections × 1,000 requests/s × 3 s. A connection's schedule starts when it is
    // connected, so its set-up time (on a loaded machine, tens of ms) costs slots; a starved
    // client turns due requests into dropped ones, not into missing ones.
    let sent = calls(port, "set") + calls(port, "get");
    assert!(sent >= 4800, "{sent} requests\n{stderr}");
    assert!(
        stderr.contains("Open loop at 2000.0 requests/s"),
        "{stderr}"
    );

    // memtier's JSON, with the keys its consumers read.
    let doc = json(&file);
    assert_eq!(doc["run information"]["Seconds"], 3);
    assert_eq!(doc["configuration"]["rate"], 2000);
    let all = &doc["ALL STATS"];
    for row in ["Sets", "Gets", "Waits", "Totals"] {
        for key in [
            "Count",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Latency",
            "Min Latency",
            "Max Latency",
            "KB/sec",
            "Percentile Latencies",
            "Time-Serie",
        ] {
            assert!(!all[row][key].is_null(), "{row} has no {key}");
        }
    }
    let totals = &all["Totals"];
    // Everything recorded was sent: the engine's count and the server's agree.
    assert_eq!(totals["Count"].as_u64().unwrap(), sent);
    let series = totals["Time-Serie"].as_object().unwrap();
    assert!((3..=4).contains(&series.len()), "{} seconds", series.len());
    let per_second: u64 = series.values().map(|s| s["Count"].as_u64().unwrap()).sum();
    assert_eq!(per_second, sent);
    // Corrected latency (from the intended send) is never below the latency from the
    // actual send, at any percentile: each request's corrected latency is at least its own.
    assert!(ms(&totals["Corrected Average Latency"]) >= ms(&totals["Latency"]));
    // memtier's key names, cut to 6 characters as its snprintf cuts them.
    for p in ["p50.00", "p99.00", "p99.90"] {
        let corrected = ms(&totals["Corrected Percentile Latencies"][p]);
        let from_send = ms(&totals["Percentile Latencies"][p]);
        assert!(corrected >= from_send, "{p}: {corrected} < {from_send}");
    }
    let late = totals["Late Requests"].as_u64().unwrap();
    let dropped = totals["Dropped Requests"].as_u64().unwrap();
    assert!(late <= sent, "{late}");
    // Every slot of the schedule was either sent or counted as dropped: 6,000 slots, less
    // up to 150 ms of connection set-up per connection.
    assert!(
        (5700..=6002).contains(&(sent + dropped)),
        "{sent} sent, {dropped} dropped"
    );
    // The results directory gets the same document.
    let results = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(json(&results.join("results.json")), doc);
    let md = std::fs::read_to_string(results.join("results.md")).unwrap();
    assert!(md.contains("p99 from send (ms)"), "{md}");
}

#[test]
fn the_warm_up_is_sent_but_not_recorded() {
    let (_server, host, port) = private_redis();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.json");
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "-s",
        &host,
        "-p",
        &port.to_string(),
        "--rate",
        "1000",
        "--warmup",
        "500ms",
        "--test-time",
        "1",
        "-c",
        "1",
        "-t",
        "1",
        "--ratio",
        "1:0",
        "--key-maximum",
        "100",
        "--hide-histogram",
        &format!("--json-out-file={}", file.display()),
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let server = calls(port, "set");
    let all = &json(&file)["ALL STATS"];
    let recorded = all["Totals"]["Count"].as_u64().unwrap();
    let dropped = all["Totals"]["Dropped Requests"].as_u64().unwrap();
    // One request per ms: the measured half second [500 ms, 1 s) holds 500 slots, each
    // recorded or dropped, however long the connection took to set up (its schedule starts
    // when it is connected, so set-up only shortens the warm-up).
    assert!(
        (499..=501).contains(&(recorded + dropped)),
        "{recorded} recorded, {dropped} dropped"
    );
    // The warm-up's requests reached the server but are not in the figures.
    let warm = server - recorded;
    assert!(
        (300..=501).contains(&warm),
        "server {server}, recorded {recorded}"
    );
    // The measured time starts after the warm-up: from the run's start it would be ≥ 1 s.
    let duration = all["Runtime"]["Total duration"].as_u64().unwrap();
    assert!((450..1000).contains(&duration), "{duration} ms");
}

/// The Totals row of the section `title` of memtier's text.
fn section_totals(stdout: &str, title: &str) -> Vec<f64> {
    let start = stdout
        .find(&format!("{title}\n"))
        .unwrap_or_else(|| panic!("no {title} in:\n{stdout}"));
    row(&stdout[start..], "Totals")
}

#[test]
fn repeated_runs_print_best_worst_average_and_hdr_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "--target",
        "embedded",
        "-x",
        "3",
        "--print-all-runs",
        "-n",
        "2000",
        "-c",
        "1",
        "-t",
        "1",
        "--ratio",
        "1:1",
        "--key-maximum",
        "100",
        "--hide-histogram",
        "--hdr-file-prefix",
        "lat",
    ]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let runs: Vec<f64> = (1..=3)
        .map(|i| section_totals(&stdout, &format!("RUN #{i} RESULTS"))[0])
        .collect();
    let best = section_totals(&stdout, "BEST RUN RESULTS")[0];
    let worst = section_totals(&stdout, "WORST RUN RESULTS")[0];
    let average = section_totals(&stdout, "AGGREGATED AVERAGE RESULTS (3 runs)")[0];
    let max = runs.iter().copied().fold(f64::MIN, f64::max);
    let min = runs.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!((best, worst), (max, min), "{stdout}");
    assert!(best >= worst);
    assert!(worst <= average && average <= best, "{stdout}");
    let md = std::fs::read_to_string(
        std::fs::read_dir(dir.path().join("results"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("results.md"),
    )
    .unwrap();
    assert!(md.contains("## 3 runs: median and spread"), "{md}");

    // HDR files per run, named as memtier names them, each holding that run's 2,000
    // requests (1,000 per row).
    for run in 1..=3 {
        for (stem, count) in [
            (format!("lat_FULL_RUN_{run}"), 2000),
            (format!("lat_SET_command_run_{run}"), 1000),
            (format!("lat_GET_command_run_{run}"), 1000),
        ] {
            let txt = std::fs::read_to_string(dir.path().join(format!("{stem}.txt"))).unwrap();
            let last = txt
                .lines()
                .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
                .unwrap();
            let cols: Vec<&str> = last.split_whitespace().collect();
            assert_eq!(cols[1], "1.000000", "{txt}");
            assert_eq!(cols[2], count.to_string(), "{txt}");
            assert!(
                txt.contains(&format!("Total count    = {count:>12}]")),
                "{txt}"
            );
            let hgrm = std::fs::read(dir.path().join(format!("{stem}.hgrm"))).unwrap();
            let mut deserializer = hdrhistogram::serialization::Deserializer::new();
            let mut histograms = 0;
            for entry in hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&hgrm)
            {
                if let Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) = entry
                {
                    use base64::Engine as _;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(h.encoded_histogram())
                        .unwrap();
                    let h: hdrhistogram::Histogram<u64> =
                        deserializer.deserialize(&mut bytes.as_slice()).unwrap();
                    assert_eq!(h.len(), count);
                    histograms += 1;
                }
            }
            assert_eq!(histograms, 1, "{stem}.hgrm");
        }
    }
}

#[test]
fn mini_redis_runs_set_get_and_refuses_other_commands_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "--target",
        "mini-redis",
        "-n",
        "500",
        "-c",
        "2",
        "-t",
        "1",
        "--ratio",
        "1:1",
        "--key-maximum",
        "50",
        "--hide-histogram",
    ]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (sets, gets) = (row(&stdout, "Sets"), row(&stdout, "Gets"));
    assert!(sets[0] > 0.0 && gets[0] > 0.0, "{stdout}");
    // Every GET is a hit or a miss.
    assert!(
        (gets[1] + gets[2] - gets[0]).abs() < 0.01 * gets[0],
        "{stdout}"
    );
    assert!(!stdout.contains("ERR"), "{stdout}");

    for (args, want) in [
        (
            &["--expiry-range", "10-20"][..],
            "edgebench: --target mini-redis cannot run SETEX (sent because of --expiry-range)",
        ),
        (
            &["--command", "HSET __key__ f __data__"][..],
            "edgebench: --target mini-redis cannot run HSET",
        ),
        (
            &["--multi-key-get", "3"][..],
            "edgebench: --target mini-redis cannot run MGET",
        ),
        (
            &["-P", "resp3"][..],
            "edgebench: --target mini-redis cannot run HELLO",
        ),
    ] {
        let out = run(edgebench()
            .current_dir(dir.path())
            .args(["kv", "--target", "mini-redis", "-n", "10"])
            .args(args));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(want), "{stderr}");
    }
}

/// `total_connections_received` of the server (INFO stats), read on `con`.
fn connections_received(con: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("stats").query(con).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .map(|n| n.trim().parse().unwrap())
        .unwrap()
}

#[test]
fn reconnect_interval_reopens_each_connection_every_n_requests() {
    let (_server, host, port) = private_redis();
    let mut con = redis(port);
    let before = connections_received(&mut con);
    let out = run(edgebench()
        .current_dir(tempfile::tempdir().unwrap().path())
        .args([
            "kv",
            "-s",
            &host,
            "-p",
            &port.to_string(),
            "--reconnect-interval=10",
            "--pipeline=3",
            "-n",
            "100",
            "--ratio=1:0",
            "--key-maximum=100",
            "-c",
            "2",
            "-t",
            "2",
            "--hide-histogram",
        ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The probe, then 4 connections × 100 requests / 10 per connection (no reconnection
    // after the last request).
    assert_eq!(connections_received(&mut con) - before, 1 + 4 * 10);
    assert_eq!(calls(port, "set"), 400);
}

#[test]
fn multi_key_get_counts_a_hit_or_a_miss_per_key() {
    let (_server, host, port) = private_redis();
    let mut con = redis(port);
    // Keys 1-10, of which 3, 6 and 9 exist.
    for i in [3, 6, 9] {
        let _: () = redis::cmd("SET")
            .arg(format!("memtier-{i}"))
            .arg("x")
            .query(&mut con)
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mget.json");
    // Two MGETs of 10 keys each, walking 1-10 twice: 6 hits and 14 misses.
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "-s",
        &host,
        "-p",
        &port.to_string(),
        "--key-minimum=1",
        "--key-maximum=10",
        "--ratio=0:10",
        "--multi-key-get=10",
        "--key-pattern=S:S",
        "-n",
        "2",
        "-c",
        "1",
        "-t",
        "1",
        "--hide-histogram",
        &format!("--json-out-file={}", file.display()),
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(calls(port, "mget"), 2);
    let gets = &json(&file)["ALL STATS"]["Gets"];
    assert_eq!(gets["Count"].as_u64(), Some(2));
    // The JSON has rates: back to counts over the run's two requests.
    let count = |field: &str| (ms(&gets[field]) / ms(&gets["Ops/sec"]) * 2.0).round() as u64;
    assert_eq!(count("Hits/sec"), 6, "{gets}");
    assert_eq!(count("Misses/sec"), 14, "{gets}");
}

#[test]
fn a_password_is_sent_before_hello_as_memtier_does() {
    let (_server, host, port) = private_redis();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("s3cret")
        .query(&mut redis(port))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Redis refuses HELLO before AUTH, so HELLO first would fail every connection.
    for protocol in ["resp3", "resp2"] {
        let out = run(edgebench().current_dir(dir.path()).args([
            "kv",
            "-s",
            &host,
            "-p",
            &port.to_string(),
            "-a",
            "s3cret",
            "-P",
            protocol,
            "-n",
            "10",
            "-c",
            "1",
            "-t",
            "1",
            "--hide-histogram",
        ]));
        assert_eq!(
            out.status.code(),
            Some(0),
            "-P {protocol}: {}",
            text(&out.stderr)
        );
    }
    let mut authed = redis::Client::open(format!("redis://:s3cret@127.0.0.1:{port}"))
        .and_then(|c| c.get_connection())
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut authed)
        .unwrap();
    // Each run's one connection: AUTH, then HELLO 3 (first run) or HELLO 2 (second).
    assert!(info.contains("cmdstat_hello:calls=2,"), "{info}");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("")
        .query(&mut authed)
        .unwrap();
}

#[test]
fn error_replies_are_counted_as_memtier_counts_them_and_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "kv",
        "--target",
        "embedded",
        "--command",
        "SET __key__",
        "-n",
        "10",
        "-c",
        "1",
        "-t",
        "1",
        "--hide-histogram",
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("edgebench: warning: run 1: 10 of the SET replies were errors"),
        "{stderr}"
    );
}

#[test]
fn an_ipv6_uri_or_server_reaches_the_server_on_ipv6_loopback() {
    use edgebench::engine::Engine;
    use edgebench::server::{spawn_in_background, Address, Bind};
    let engine = Engine::new();
    let server = spawn_in_background(Bind::Tcp("[::1]:0".parse().unwrap()), engine.clone())
        .expect("serve the engine on [::1]");
    let Address::Tcp(addr) = server.endpoint() else {
        panic!("a TCP listener");
    };
    let port = addr.port().to_string();
    let uri = format!("redis://[::1]:{port}");
    for (args, prefix) in [
        (vec!["-u", uri.as_str()], "v6uri:"),
        (vec!["-s", "::1", "-p", port.as_str()], "v6flags:"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run(edgebench()
            .current_dir(dir.path())
            .arg("kv")
            .args(&args)
            .args(["-t", "1", "-c", "1", "-n", "50", "--ratio", "1:0"])
            .args(["--key-prefix", prefix, "--hide-histogram"]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("edgebench kv: server at redis://[::1]:{port}")),
            "{stderr}"
        );
        let keys = engine.execute(
            &mut engine.client(),
            &[b"KEYS", format!("{prefix}*").as_bytes()],
        );
        assert!(
            matches!(&keys, edgebench::engine::Reply::Array(k) if !k.is_empty()),
            "{args:?}: no {prefix} keys written: {keys:?}"
        );
    }
}
