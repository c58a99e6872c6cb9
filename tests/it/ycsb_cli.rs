//! `edgebench ycsb` as a user runs it: YCSB's export on stdout and per column, the results
//! files, the steps × targets table, YCSB's schedule under `-target`, the suite with a layout
//! that cannot scan, status lines, one-line errors with exit 2, and a target that dies
//! mid-run keeping what was measured.

use std::path::Path;
use std::time::Duration;

use crate::common::{edgebench, require_redis_server};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = edgebench()
        .arg("ycsb")
        .args(args)
        .output()
        .expect("edgebench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The value of `[metric], measurement, value` in a YCSB export.
fn metric(text: &str, metric: &str, measurement: &str) -> Option<String> {
    let prefix = format!("[{metric}], {measurement}, ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(str::to_string)
}

fn count(text: &str, m: &str, what: &str) -> u64 {
    metric(text, m, what).map_or(0, |v| v.parse().unwrap())
}

fn json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap()
}

#[test]
fn load_and_run_on_the_engines_ways_in_give_ycsbs_export_and_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, stdout, stderr) = run(&[
        "load",
        "run",
        "-P",
        "etc/ycsb/workloada",
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=700",
        "-threads",
        "2",
        "--target",
        "embedded,embedded-direct,embedded-uds",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    for column in ["RedisDB_Embedded", "Embedded_Direct", "Embedded_UDS"] {
        assert!(
            stdout.contains(&format!(
                "# {column} (redis): run workloada\n[OVERALL], RunTime(ms), "
            )),
            "{stdout}"
        );
        let load = std::fs::read_to_string(out.join(column).join("load-workloada.txt")).unwrap();
        assert_eq!(count(&load, "INSERT", "Operations"), 300, "{load}");
        assert_eq!(count(&load, "INSERT", "Return=OK"), 300, "{load}");
        // Two threads: each closes its client once.
        assert_eq!(count(&load, "CLEANUP", "Operations"), 2, "{load}");
        let text = std::fs::read_to_string(out.join(column).join("run-workloada.txt")).unwrap();
        let (reads, updates) = (
            count(&text, "READ", "Return=OK"),
            count(&text, "UPDATE", "Return=OK"),
        );
        // Every key read was loaded: nothing failed, and the 50/50 mix is roughly kept.
        assert_eq!(reads + updates, 700, "{text}");
        assert!(reads > 250 && updates > 250, "{text}");
        assert_eq!(metric(&text, "READ-FAILED", "Operations"), None, "{text}");
        for p in ["50th", "95th", "99th"] {
            assert!(
                metric(&text, "READ", &format!("{p}PercentileLatency(us)")).is_some(),
                "{text}"
            );
        }
    }
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        md.starts_with(
            "| step | RedisDB_Embedded | Embedded_Direct | Embedded_UDS |\n|-|-:|-:|-:|\n| load workloada |"
        ),
        "{md}"
    );
    assert!(md.contains("| run workloada |"), "{md}");
    let doc = json(&out);
    assert_eq!(doc["kind"], "ycsb");
    assert_eq!(doc["targets"][1]["steps"][1]["operations"], 700);
    let ops = doc["targets"][1]["steps"][1]["ops"].as_array().unwrap();
    assert!(ops
        .iter()
        .all(|o| !o["latency"]["histogram"].as_str().unwrap().is_empty()));
    assert!(std::fs::read_to_string(out.join("percentiles.md"))
        .unwrap()
        .contains("| run workloada | Embedded_UDS | READ |"));
}

#[test]
fn a_throttled_run_keeps_ycsbs_schedule_and_reports_intended_latency() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    // 400 operations at 2,000 ops/s over 2 threads: each thread's last operation is intended
    // 199 ticks of 1 ms after its start, so the run cannot take less than 199 ms.
    let (code, stdout, stderr) = run(&[
        "load",
        "run",
        "-P",
        "workloads/workloadc",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=400",
        "-p",
        "measurement.interval=both",
        "-threads",
        "2",
        "-target",
        "2000",
        "--target",
        "embedded-direct",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(out.join("Embedded_Direct/run-workloadc.txt")).unwrap();
    let runtime: u64 = metric(&text, "OVERALL", "RunTime(ms)")
        .unwrap()
        .parse()
        .unwrap();
    assert!(runtime >= 199, "{text}");
    assert_eq!(count(&text, "Intended-READ", "Operations"), 400, "{text}");
    assert_eq!(count(&text, "READ", "Return=OK"), 400, "{text}");
    assert!(stdout.contains("[Intended-READ], 99thPercentileLatency(us), "));
    let doc = json(&out);
    let lag = &doc["targets"][0]["steps"][1]["schedule_lag"];
    assert_eq!(lag["count"], 400, "{lag}");
    let share = doc["targets"][0]["steps"][1]["schedule_within_1ms"]
        .as_f64()
        .unwrap();
    assert!((0.0..=1.0).contains(&share), "{share}");
    let pct = std::fs::read_to_string(out.join("percentiles.md")).unwrap();
    assert!(
        pct.contains("| run workloadc | Embedded_Direct | 2,000 | 400 |"),
        "{pct}"
    );
}

#[test]
fn the_suite_runs_ycsbs_sequence_and_skips_e_where_the_layout_cannot_scan() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, _stdout, stderr) = run(&[
        "suite",
        "-p",
        "recordcount=200",
        "-p",
        "operationcount=300",
        "--target",
        "embedded-direct",
        "--ycsb-redis-layout",
        "ycsb,go-ycsb",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "Embedded_Direct_GoYCSB: run workloade skipped: go-ycsb's Redis layout has no scan"
        ),
        "{stderr}"
    );
    let doc = json(&out);
    let steps: Vec<&str> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "load workloada",
            "run workloada",
            "run workloadb",
            "run workloadc",
            "run workloadf",
            "run workloadd",
            "load workloade",
            "run workloade"
        ]
    );
    let e = std::fs::read_to_string(out.join("Embedded_Direct/run-workloade.txt")).unwrap();
    // E: 95% scans, 5% inserts, every one OK on YCSB's layout (the _indices sorted set).
    let (scans, inserts) = (
        count(&e, "SCAN", "Return=OK"),
        count(&e, "INSERT", "Return=OK"),
    );
    assert_eq!(scans + inserts, 300, "{e}");
    assert!(scans > 250, "{e}");
    let f = std::fs::read_to_string(out.join("Embedded_Direct/run-workloadf.txt")).unwrap();
    // F: every read-modify-write is also a READ and an UPDATE; YCSB times the pair and
    // counts no status of its own for it.
    let rmw = count(&f, "READ-MODIFY-WRITE", "Operations");
    assert_eq!(metric(&f, "READ-MODIFY-WRITE", "Return=OK"), None, "{f}");
    assert!(rmw > 100, "{f}");
    assert_eq!(count(&f, "READ", "Return=OK"), 300, "{f}");
    assert_eq!(count(&f, "UPDATE", "Return=OK"), rmw, "{f}");
    // D inserts: its keys were acknowledged before `latest` read them, so no read missed.
    let d = std::fs::read_to_string(out.join("Embedded_Direct_GoYCSB/run-workloadd.txt")).unwrap();
    assert_eq!(
        count(&d, "READ", "Return=OK") + count(&d, "INSERT", "Return=OK"),
        300,
        "{d}"
    );
    assert!(!out
        .join("Embedded_Direct_GoYCSB/run-workloade.txt")
        .exists());
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let e_row = md
        .lines()
        .find(|l| l.starts_with("| run workloade |"))
        .unwrap();
    assert!(e_row.ends_with("| — |"), "{md}");
}

#[test]
fn status_lines_come_every_status_interval() {
    let (code, _stdout, stderr) = run(&[
        "load",
        "run",
        "-P",
        "workloads/workloadb",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=2",
        "-p",
        "status.interval=1",
        "-target",
        "500",
        "-s",
        "-l",
        "mine",
        "--target",
        "embedded-direct",
        "--out",
        tempfile::tempdir()
            .unwrap()
            .path()
            .join("r")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let status: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" sec: ") && l.contains(" mine "))
        .collect();
    assert!(!status.is_empty(), "{stderr}");
    assert!(
        status
            .iter()
            .any(|l| l.contains("current ops/sec;") && l.contains("[READ: Count=")),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_one_line_naming_the_property_with_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "-P", "workloads/workloada", "-p", "readproportoin=1"],
            "edgebench: unknown property readproportoin (-p): did you mean readproportion?",
        ),
        (
            &["run", "-P", "workloads/workloada", "-p", "readproportion=0.9"],
            "edgebench: readproportion + updateproportion + insertproportion + scanproportion + \
             readmodifywriteproportion = 1.4: the proportions must add up to more than 0 and at \
             most 1",
        ),
        (
            &["run", "-P", "workloads/workloada", "-target", "0"],
            "edgebench: target=0 (-target): give the operations per second to aim for, above 0",
        ),
        (
            &["load", "-P", "workloads/workloada", "-p", "workload=site.ycsb.workloads.RestWorkload"],
            "edgebench: workload=site.ycsb.workloads.RestWorkload (-p): edgebench runs YCSB's core \
             workload only",
        ),
        (
            &["load", "-P", "workloads/workloada", "-p", "recordcount=100000000000", "--target", "embedded"],
            "edgebench: recordcount=100000000000 (-p or -P): 100000000000 records of about",
        ),
        (
            &["load", "-P", "/nonexistent/workloadz"],
            "edgebench: -P /nonexistent/workloadz: cannot read it",
        ),
        (&["bogus"], "edgebench: unknown flag or step \"bogus\""),
        (
            &["run", "-P", "workloads/workloadc", "--target", "embedded"],
            "edgebench: no target holds records to run on: load them first",
        ),
    ];
    for (args, want) in cases {
        let (code, _stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        let last = stderr.lines().last().unwrap_or("");
        assert!(last.starts_with(want), "{args:?}: {stderr}");
    }
}

#[test]
fn a_target_that_dies_mid_run_keeps_what_was_measured_and_says_why() {
    require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let child = edgebench()
        .args([
            "ycsb",
            "load",
            "run",
            "-P",
            "workloads/workloadc",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=0",
            "-p",
            "maxexecutiontime=60",
            "--target",
            "redis-uds",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // Wait for its run to start (the load's export is on disk), then kill its redis-server.
    let load = out.join("RedisDB_UDS/load-workloadc.txt");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !load.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the load never finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let servers = crate::cli::children_named(pid, "redis-server");
    assert_eq!(servers.len(), 1);
    sigkill(servers[0]);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Its clients stopped after 1,000 failures in a row, long before maxexecutiontime.
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("RedisDB_UDS: run workloadc: client 0: 1,000 operations in a row failed"),
        "{stderr}"
    );
    let doc = json(&out);
    let step = &doc["targets"][0]["steps"][1];
    assert!(step["operations"].as_u64().unwrap() > 1000, "{step}");
    assert!(
        step["ops"][0]["returns"]["OK"].as_u64().unwrap() > 0,
        "{step}"
    );
    assert!(
        step["ops"][0]["returns"]["ERROR"].as_u64().unwrap() >= 1000,
        "{step}"
    );
    let text = std::fs::read_to_string(out.join("RedisDB_UDS/run-workloadc.txt")).unwrap();
    assert!(count(&text, "READ", "Return=ERROR") >= 1000, "{text}");
    assert!(
        metric(&text, "READ-FAILED", "Operations").is_some(),
        "{text}"
    );
}

/// SIGKILL by pid, through `kill(1)`.
fn sigkill(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn postgresql_as_both_of_ycsbs_bindings_and_sqlite_scan_workload_e() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, stdout, stderr) = run(&[
        "load",
        "run",
        "-P",
        "workloads/workloade",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=100",
        "-p",
        "maxscanlength=10",
        "-db",
        "jdbc,postgrenosql",
        "--target",
        "pg-uds,sqlite",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    for column in ["PostgreSQL_UDS", "PostgreSQL_UDS_NoSQL", "SQLite_Embedded"] {
        let text = std::fs::read_to_string(out.join(column).join("run-workloade.txt")).unwrap();
        let (scans, inserts) = (
            count(&text, "SCAN", "Return=OK"),
            count(&text, "INSERT", "Return=OK"),
        );
        assert_eq!(scans + inserts, 100, "{column}: {text}");
        assert!(stdout.contains(&format!("# {column} (")), "{stdout}");
    }
}
