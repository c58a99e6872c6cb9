//! `edgebench fleet` as a user runs it: the table on stdout, the three results files, a second
//! target through the core-data service, one-line errors for bad flags, and an unreachable
//! target reported while the others still run.

fn run(args: &[&str]) -> (i32, String, String) {
    let out = crate::common::edgebench()
        .arg("fleet")
        .args(args)
        .output()
        .expect("edgebench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_small_fleet_on_the_engine_directly_and_through_the_service_is_stored_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let (code, stdout, stderr) = run(&[
        "--target",
        "embedded",
        "--via",
        "direct,http-uds",
        "--devices",
        "5",
        "--events-per-second",
        "40",
        "--readings-per-event",
        "2",
        "--readers",
        "1",
        "--read-rate",
        "20",
        "--duration",
        "1s",
        "--warmup",
        "500ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| RedisDB_Embedded_EdgeX3 | 40 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| RedisDB_Embedded+HTTP_UDS | 40 |"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    let targets = json["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for t in targets {
        let s = &t["summary"];
        // 1.5 s at 40 events/s: 60 due, every one sent (the engine keeps up easily) and stored.
        assert_eq!(s["offered"], 60, "{t}");
        assert_eq!(
            s["sent"].as_u64().unwrap() + s["unsent"].as_u64().unwrap(),
            60
        );
        assert_eq!(s["stored"], s["sent"], "{t}");
        assert_eq!(s["missing"], 0);
        // The measured second: the 40 events due after the warmup, when all were sent.
        if s["unsent"] == 0 {
            assert_eq!(s["measured"], 40);
            assert_eq!(s["per_second"][0]["events"], 40);
        }
        assert!(!s["corrected"]["histogram"].as_str().unwrap().is_empty());
        // One reader at 20 reads/s for 1.5 s: 30 due.
        let r = &s["reads"];
        assert_eq!(
            r["reads"].as_u64().unwrap() + r["unsent"].as_u64().unwrap(),
            30,
            "{t}"
        );
        assert_eq!(r["failed"], 0, "{t}");
    }
    // The store's size, each second and at the end, directly and behind the service (where
    // it is measured on a direct connection to the store).
    for t in targets {
        assert!(t["summary"]["store_bytes"].as_u64().unwrap() > 0, "{t}");
    }
    let sizes = std::fs::read_to_string(out.join("store-size.csv")).unwrap();
    assert!(
        sizes.starts_with("target,second,bytes\nRedisDB_Embedded_EdgeX3,1,"),
        "{sizes}"
    );
    let csv = std::fs::read_to_string(out.join("per-second.csv")).unwrap();
    assert!(
        csv.starts_with("target,kind,second,events,p50_ms,p99_ms\n"),
        "{csv}"
    );
    assert!(csv.contains("\nRedisDB_Embedded+HTTP_UDS,read,0,"), "{csv}");
    assert!(std::fs::read_to_string(out.join("fleet.md"))
        .unwrap()
        .contains("RedisDB_Embedded+HTTP_UDS"));
}

#[test]
fn an_unreachable_target_is_one_line_and_the_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let (code, stdout, stderr) = run(&[
        "--target",
        "redis://127.0.0.1:1,embedded",
        "--events-per-second",
        "10",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    let failed: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("edgebench fleet: RedisDB_TCP_EdgeX3: ") && !l.contains("devices")
        })
        .collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(failed[0].contains("127.0.0.1:1"), "{stderr}");
    assert!(stdout.contains("| RedisDB_TCP_EdgeX3 | | |"), "{stdout}");
    // No readers, no retention: their five cells are dashes; the store's size is there.
    let embedded = stdout
        .lines()
        .find(|l| l.starts_with("| RedisDB_Embedded_EdgeX3 |"))
        .unwrap();
    assert!(embedded.contains("| — | — | — | — | — | "), "{embedded}");
    assert!(embedded.ends_with("| kept up |"), "{embedded}");
    assert!(
        stdout.contains("| RedisDB_Embedded_EdgeX3 | 10 |"),
        "{stdout}"
    );
}

#[test]
fn retention_purges_alongside_the_writers() {
    purges_alongside_the_writers(&["--max-cap", "40", "--min-cap", "20", "--retain", "1h"]);
}

#[test]
fn edgex4_retention_purges_each_device_and_source_alongside_the_writers() {
    purges_alongside_the_writers(&[
        "--retention",
        "edgex4",
        "--devices",
        "4",
        "--max-cap",
        "10",
        "--min-cap",
        "3",
        "--retain",
        "0s",
    ]);
}

/// A one-second fleet on the default target with `retention` (the policy's flags), 100 events a
/// second of two readings and a purge every 200 ms: at least three purges, none failed, and,
/// since retention deletes on purpose, no "missing" figure and fewer stored than sent.
fn purges_alongside_the_writers(retention: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let mut args = retention.to_vec();
    args.extend([
        "--events-per-second",
        "100",
        "--readings-per-event",
        "2",
        "--purge-interval",
        "200ms",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    let s = &json["targets"][0]["summary"];
    assert!(s["purges"]["purges"].as_u64().unwrap() >= 3, "{s}");
    assert_eq!(s["purges"]["failed"], 0, "{s}");
    // Retention deletes on purpose: no "missing" figure, and fewer stored than sent.
    assert!(s.get("missing").is_none(), "{s}");
    assert!(
        s["stored"].as_u64().unwrap() < s["sent"].as_u64().unwrap(),
        "{s}"
    );
    assert!(
        stdout.contains("| RedisDB_Embedded_EdgeX3 | 100 |"),
        "{stdout}"
    );
}

/// EdgeX 4.0's retention on the engine (EdgeX 3.1's Redis layout), SQLite and PostgreSQL,
/// MaxCap 10 and MinCap 3 (count-based): the fleet runs with it; one more purge once the
/// writers have stopped leaves every device and source under MaxCap and at least MinCap;
/// topped up to MaxCap − 1 a pair is left alone, and at MaxCap it keeps exactly its MinCap
/// newest.
#[test]
fn after_edgex4_retention_each_device_and_source_holds_exactly_min_cap() {
    use edgebench::edgex::now_ns;
    use edgebench::fleet::workload::retention::{self, PerSource};
    use edgebench::fleet::workload::{FleetSpec, Retention};
    use edgebench::store::edgex::retention::EventRetention;
    use edgebench::store::edgex::{EventStore, Filter, Page, UNLIMITED};
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    for item in ["embedded", "sqlite", "pg-uds"] {
        let mut target = edgebench::target::parse_targets(&[item.to_string()])
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0);
        target.layout = target.edgex_layout().expect("an EdgeX layout");
        let target = edgebench::target::Target::start(&target).unwrap_or_else(|e| panic!("{e}"));
        let open = target
            .event_store_opener()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut spec = FleetSpec {
            devices: 4,
            events_per_second: 200.0,
            readings_per_event: 2,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            ..FleetSpec::default()
        };
        let policy = EventRetention {
            max_cap: 10,
            min_cap: 3,
            duration: Duration::ZERO,
        };
        spec.retention = Retention {
            retain: None,
            caps: None,
            per_source: Some(PerSource::for_fleet(&spec, policy)),
            interval: Duration::from_millis(200),
        };
        let stop = AtomicBool::new(false);
        let report = edgebench::fleet::workload::run(&spec, &*open, &stop, &|_| {})
            .unwrap_or_else(|e| panic!("{item}: {e}"));
        let purges = report.purges.expect("purged");
        assert!(purges.purges >= 3, "{item}: {purges:?}");
        assert_eq!(purges.failed, 0, "{item}: {:?}", purges.first_error);
        let mut store = open().unwrap_or_else(|e| panic!("{e}"));
        let store: &mut dyn EventStore = store.as_mut();
        let purge = |store: &mut dyn EventStore| {
            retention::purge(store, &spec.retention).unwrap_or_else(|e| panic!("{item}: {e}"))
        };
        let count = |store: &mut dyn EventStore, pair: &edgebench::store::edgex::DeviceSource| {
            store
                .source_event_count(pair.filter(), UNLIMITED)
                .unwrap_or_else(|e| panic!("{item}: {e}"))
        };
        purge(store);
        // The fleet's pairs, and only they: device-0000 … device-0003, source "fleet".
        let pairs = store.device_sources().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            &pairs,
            &spec.retention.per_source.as_ref().unwrap().pairs,
            "{item}"
        );
        // Event j is device j % 4's; newer than anything the fleet wrote.
        let mut j = 0;
        let mut add = |store: &mut dyn EventStore, device: u64| {
            let origin = now_ns() + 3_600_000_000_000 + j as i64 * 1_000;
            let event = spec.event(j * 4 + device, origin);
            j += 1;
            store
                .add_event(&event)
                .unwrap_or_else(|e| panic!("{item}: {e}"));
        };
        for (d, pair) in pairs.iter().enumerate() {
            let held = count(store, pair);
            assert!((3..10).contains(&held), "{item}: {pair:?} holds {held}");
            for _ in held..9 {
                add(store, d as u64);
            }
        }
        // 9 of each: under MaxCap, nothing goes.
        purge(store);
        for pair in &pairs {
            assert_eq!(count(store, pair), 9, "{item}: {pair:?}");
        }
        // 10 of each: each keeps exactly its 3 newest, with their readings.
        for d in 0..pairs.len() {
            add(store, d as u64);
        }
        purge(store);
        for pair in &pairs {
            let left = store
                .source_events(pair.filter(), Page::ALL)
                .unwrap_or_else(|e| panic!("{e}"));
            let newest = store
                .events(Filter::device(&pair.device), Page::first(3))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(left.len(), 3, "{item}: {pair:?}");
            assert_eq!(left, newest, "{item}: {pair:?}");
        }
        assert_eq!(store.event_count(Filter::all()).unwrap(), 12, "{item}");
        assert_eq!(store.reading_count(Filter::all()).unwrap(), 24, "{item}");
    }
}

#[test]
fn find_max_ramps_and_bisects_and_reports_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let (code, stdout, stderr) = run(&[
        "--find-max",
        "--slo",
        "50ms",
        "--events-per-second",
        "100",
        "--readings-per-event",
        "1",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| Target | max events/s kept up (p99 write < 50 ms) |"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    let f = &json["targets"][0]["find_max"];
    let probes = f["probes"].as_array().unwrap();
    assert!(!probes.is_empty() && probes.len() <= 32, "{f}");
    assert_eq!(probes[0]["rate"], 100.0);
    // The answer is a rate at which a run kept up, and the summary is such a run's.
    if let Some(max) = f["max_rate"].as_f64() {
        assert!(
            probes
                .iter()
                .any(|p| p["kept_up"] == true && p["rate"] == max),
            "{f}"
        );
        assert_eq!(json["targets"][0]["summary"]["offered_per_sec"], max);
    }
    // Every run is on stderr.
    let lines = stderr.lines().filter(|l| l.contains(" events/s: ")).count();
    assert_eq!(lines, probes.len(), "{stderr}");
}

#[test]
fn the_shipped_fleet_file_runs_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/etc/fleet.toml");
    let (code, stdout, stderr) = run(&[
        "--config",
        file,
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--slo",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    // From the file: 24 devices at 2 events/s each, 4 Float64 readings, 2 readers.
    let f = &json["fleet"];
    assert_eq!(f["devices"], 24);
    assert_eq!(f["events_per_second"], 48.0);
    assert_eq!(f["readings_per_event"], 4);
    assert_eq!(f["value_type"], "Float64");
    // From the flags, over the file's 60s, 5s and 10ms.
    assert_eq!(
        (f["measured_s"].as_f64(), f["warmup_s"].as_f64()),
        (Some(1.0), Some(0.0))
    );
    assert_eq!(f["slo_ms"], 1000.0);
    assert!(
        stdout.contains("| RedisDB_Embedded_EdgeX3 | 48 |"),
        "{stdout}"
    );
}

#[test]
fn bad_fleet_files_are_one_line_naming_the_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "devices = 24\ndevicez = 3\n",
            "line 2: unknown key \"devicez\": use one of target, via, devices,",
        ),
        (
            "# a comment\n[retention]\nretain = \"soon\"\n",
            "line 3 retain = \"soon\": expected a duration such as 10s, 500ms or 1m30s",
        ),
        (
            "[retention]\nretention = \"edgex4\"\nmax-cap = -3\nmin-cap = 1\n",
            "line 3 max-cap = \"-3\": with --retention edgex4, give -1 (none) or a number of events",
        ),
        (
            "devices = 0\n",
            "edgebench: --devices 0 is out of range: give 1 to 1000000",
        ),
        (
            "devices = [1, 2]\n",
            "line 1: devices must be a list of strings",
        ),
        ("devices = \n", "line 1: "),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("f{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let (code, stdout, stderr) = run(&["--config", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{text}: {stderr}");
        assert_eq!(stdout, "");
        assert_eq!(stderr.lines().count(), 1, "{text}: {stderr}");
        assert!(stderr.contains(want), "{text}: {stderr}");
    }
    let (code, _, stderr) = run(&["--config", "/nonexistent/fleet.toml"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("edgebench: --config /nonexistent/fleet.toml: cannot read it"),
        "{stderr}"
    );
}

#[test]
fn bad_fleet_flags_are_one_line_naming_the_flag() {
    let cases: [(&[&str], &str); 14] = [
        (
            &["--devices", "0"],
            "edgebench: --devices 0 is out of range: give 1 to 1000000",
        ),
        (
            &["--devices", "ten"],
            "edgebench: --devices \"ten\": expected a whole number",
        ),
        (
            &["--events-per-second=-5"],
            "edgebench: --events-per-second \"-5\": expected a number of events per second above 0",
        ),
        (
            &["--events-per-second", "1e14", "--duration", "1h"],
            "edgebench: --events-per-second 100000000000000 over duration 3602s is 360200000000000000 events: give a lower rate or a shorter duration (at most 1e12 events)",
        ),
        (
            &["--writers", "100000"],
            "edgebench: --writers 100000 is out of range: give 1 to 1024",
        ),
        (
            &["--max-cap", "10", "--min-cap", "10"],
            "edgebench: --max-cap 10 with min-cap 10: give 0 < min-cap < max-cap <= 1e12 (readings)",
        ),
        (
            &["--retention", "edgex5"],
            "edgebench: --retention \"edgex5\": give edgex3 (3.1's reading watermark and age delete) or edgex4 (4.0's retention per device and source)",
        ),
        (
            &["--retention", "edgex4", "--max-cap", "5", "--min-cap", "5"],
            "edgebench: --max-cap 5 with min-cap 5 under --retention edgex4: give min-cap below max-cap (events of one device and source), or max-cap -1 for no threshold",
        ),
        (
            &["--retention", "edgex4", "--max-cap=-2", "--min-cap", "1"],
            "edgebench: --max-cap \"-2\": with --retention edgex4, give -1 (none) or a number of events from 0 to 1000000000000",
        ),
        (
            &["--retention", "edgex4", "--via", "http-uds"],
            "edgebench: --retention edgex4 with RedisDB_Embedded+HTTP_UDS: EdgeX's REST API cannot delete by device and source (core-data runs that retention itself); use --via direct, or give the core-data service --retention-interval and --retention edgex4",
        ),
        (
            &["--find-max"],
            "edgebench: --find-max needs --slo (e.g. --slo 10ms): the SLO decides which rates kept up",
        ),
        (
            &["--purge-interval", "0s"],
            "edgebench: --purge-interval 0s is not an interval: give one above 0, e.g. 30s",
        ),
        (
            &["--duration", "soon"],
            "edgebench: --duration \"soon\": expected a duration such as 10s, 500ms or 1m30s",
        ),
        (
            &["--target", "mini-redis"],
            "edgebench: --target \"MiniRedis\": a fleet writes EdgeX events, which need a store with an EdgeX layout (Redis targets, the engine, SQLite, PostgreSQL, MongoDB) or a core-data service (http://, http+unix://)",
        ),
    ];
    for (args, want) in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "");
        assert_eq!(stderr.trim_end(), want, "{args:?}");
    }
}

#[test]
fn ctrl_c_keeps_what_was_measured_and_skips_the_targets_not_started() {
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let mut child = crate::common::edgebench()
        .args([
            "fleet",
            "--target",
            "embedded,sqlite",
            "--devices",
            "4",
            "--events-per-second",
            "100",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // stderr is not a terminal: each second's status is a line. Interrupt once the second
    // one is out, with the first target well under way.
    let (rx, reader) = crate::common::watch_lines(child.stderr.take().unwrap(), |line| {
        line.contains("[2/60s]")
    });
    let stdout = child.stdout.take().unwrap();
    let table = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("two status lines");
    // SAFETY: plain kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().unwrap();
    let (seen, table) = (reader.join().unwrap(), table.join().unwrap());
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(
        seen.contains("RedisDB_Embedded_EdgeX3: interrupted: the figures cover what ran"),
        "{seen}"
    );
    assert!(
        !seen.contains("SQLite"),
        "the second target never starts: {seen}"
    );
    assert!(table.contains("| RedisDB_Embedded_EdgeX3 |"), "{table}");
    // The files hold the interrupted target, its counts whole: every event sent is stored,
    // and what was due but not sent is the backlog, not a loss.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    let targets = json["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{json}");
    let s = &targets[0]["summary"];
    assert!(
        s["verdict"].as_str().unwrap().starts_with("interrupted"),
        "{s}"
    );
    let sent = s["sent"].as_u64().unwrap();
    assert!(sent >= 200, "two seconds at 100 events/s: {s}");
    assert_eq!(s["stored"].as_u64(), Some(sent), "{s}");
    assert_eq!(s["missing"], 0, "{s}");
    for file in ["fleet.md", "per-second.csv", "store-size.csv"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(text.contains("RedisDB_Embedded_EdgeX3"), "{file}: {text}");
    }
}
