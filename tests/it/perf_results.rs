//! Golden tests of PadoGrid's results files, `create_csv [-all]`, `clean_results` and
//! `create_group_config`. The fixtures were written from PadoGrid's layouts (reference §2.6,
//! §3.4, §3.5; the numbers are the bundle README's and the perf_test README's), and the
//! expected CSVs were produced by running PadoGrid's own `getValue`/`getTimeValue` shell
//! extraction over those fixture files.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use edgebench::perf::csv::{self, PerfApp, ResultsKind};
use edgebench::perf::group_config::{self, ProductWords};
use edgebench::perf::results::{GroupRun, JavaTime, OpLatency, PbmRun};
use edgebench::perf::PbmTest;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/perf")
        .join(rel)
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const EDT: i32 = -4 * 3600;

fn edt(ms: i64) -> JavaTime {
    JavaTime::at_offset_ms(ms, EDT, Some("EDT"))
}

fn lat(op: &str, count: u64, p50: u64, p99: u64, p999: u64, max: u64) -> OpLatency {
    OpLatency {
        op: op.into(),
        count,
        p50_ns: p50,
        p99_ns: p99,
        p999_ns: p999,
        max_ns: max,
    }
}

fn group_g1() -> GroupRun {
    GroupRun {
        product: "redis".into(),
        group: "g1".into(),
        concurrent_groups: vec!["g1".into(), "g2".into()],
        comment: "Map.put() test (1 KiB payload in map1)".into(),
        operations: "put1".into(),
        test_count: 1,
        test_interval_ms: 0,
        total_invocation_count_per_run: 100000,
        thread_count: 8,
        invocation_count_per_thread: 12500,
        db: false,
        file_time: edt(1_656_346_472_000),
        start: edt(1_656_346_472_000),
        stop: edt(1_656_346_474_000),
        actual_invocations: 100000,
        thread_ms: vec![2278, 2270, 2268, 2280, 2276, 2274, 2285, 2282],
        elapsed_ms: 2289,
        latencies: vec![lat("put1", 100000, 21_503, 80_127, 150_271, 2_004_991)],
    }
}

fn group_g2() -> GroupRun {
    let t = JavaTime::utc_ms(1_796_015_554_000);
    GroupRun {
        group: "g2".into(),
        comment: "Map.putAll() test: 1 KiB, map2".into(),
        operations: "putall1, sleep10".into(),
        test_count: 2,
        test_interval_ms: 10,
        total_invocation_count_per_run: 1001,
        thread_count: 2,
        invocation_count_per_thread: 500,
        db: true,
        file_time: t.clone(),
        start: t.clone(),
        stop: t,
        actual_invocations: 2000,
        thread_ms: vec![0, 0],
        elapsed_ms: 3,
        latencies: vec![],
        ..group_g1()
    }
}

fn ingestion() -> PbmRun {
    PbmRun {
        test: PbmTest::Ingestion,
        product: "redis".into(),
        test_case: "putall".into(),
        map: "profile".into(),
        batch_size: 100,
        test_count: 1,
        test_interval_ms: 0,
        total_entry_count: 10000,
        thread_count: 16,
        payload_size: 10240,
        prefix: "x".into(),
        entry_count_per_thread: 625,
        start: edt(1_655_860_111_000),
        stop: edt(1_655_860_111_000),
        count: 10000,
        missing: 0,
        thread_ms: vec![
            714, 758, 715, 756, 750, 721, 753, 666, 751, 750, 694, 702, 750, 757, 654, 750,
        ],
        latencies: vec![lat(
            "profile", 100, 70_123_007, 75_431_935, 75_431_935, 75_431_935,
        )],
    }
}

fn tx() -> PbmRun {
    PbmRun {
        test: PbmTest::Tx,
        product: "redis".into(),
        test_case: "tx".into(),
        map: "eligibility".into(),
        batch_size: 1000,
        test_count: 5,
        test_interval_ms: 0,
        total_entry_count: 10000,
        thread_count: 4,
        payload_size: 0,
        prefix: "x".into(),
        entry_count_per_thread: 2500,
        start: JavaTime::utc_ms(1_796_015_554_000),
        stop: JavaTime::utc_ms(1_796_015_561_000),
        count: 10000,
        missing: 3,
        thread_ms: vec![1500, 1499, 1501, 1490],
        latencies: vec![lat("tx", 10000, 140_031, 400_127, 1_000_447, 2_000_895)],
    }
}

#[test]
fn group_results_file_golden() {
    let run = group_g1();
    assert_eq!(run.file_name(), "group-g1-redis-220627-121432.txt");
    assert_eq!(run.render(), read(&fixture(&run.file_name())));
    let db = group_g2();
    assert_eq!(db.file_name(), "group-g2-redis-261130-051234.txt");
    assert_eq!(db.render(), read(&fixture(&db.file_name())));
}

#[test]
fn ingestion_results_file_golden() {
    let run = ingestion();
    assert_eq!(
        run.file_name(),
        "ingestion-profile-redis-220621-210831_x.txt"
    );
    assert_eq!(run.render(), read(&fixture(&run.file_name())));
    // put: no batch line.
    let put = PbmRun {
        test_case: "put".into(),
        ..ingestion()
    };
    assert!(!put.render().contains("PutAll Batch Size"));
}

#[test]
fn tx_results_file_golden() {
    let run = tx();
    assert_eq!(run.file_name(), "tx-eligibility-redis-261130-051234_x.txt");
    assert_eq!(run.render(), read(&fixture(&run.file_name())));
    let getall = PbmRun {
        test_case: "getall".into(),
        ..tx()
    };
    assert!(getall
        .render()
        .contains("\n           GetAll Batch Size: 1000\n"));
}

#[test]
fn edgebench_lines_never_match_a_create_csv_label() {
    let labels = csv::grep_labels();
    for text in [group_g1().render(), ingestion().render(), tx().render()] {
        let (_, ours) = text
            .split_once("edgebench percentiles")
            .expect("section present");
        for label in &labels {
            assert!(
                !ours.contains(label),
                "edgebench section contains {label:?}"
            );
        }
        // And each group label of PadoGrid's part matches exactly one line.
    }
    let g = group_g1().render();
    for label in [
        "Product",
        "Group:",
        "Comment",
        "Operations",
        "Thread Count",
        "Max Time",
        "M Latency",
        "E Latency",
    ] {
        assert_eq!(
            g.lines().filter(|l| l.contains(label)).count(),
            1,
            "{label}"
        );
    }
}

fn set_mtime(p: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(p).expect("open");
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .expect("mtime");
}

/// Two apps as in the fixture CSVs: a has ingestion, tx and g1; b has g1 (older) and g2.
fn two_apps(dir: &Path) -> (PerfApp, PerfApp) {
    let a = PerfApp {
        name: "perf_test_a".into(),
        results_dir: dir.join("perf_test_a/results"),
    };
    let b = PerfApp {
        name: "perf_test_b".into(),
        results_dir: dir.join("perf_test_b/results"),
    };
    fs::create_dir_all(&a.results_dir).expect("mkdir");
    fs::create_dir_all(&b.results_dir).expect("mkdir");
    fs::write(
        a.results_dir.join(group_g1().file_name()),
        group_g1().render(),
    )
    .expect("write");
    fs::write(
        a.results_dir.join(ingestion().file_name()),
        ingestion().render(),
    )
    .expect("write");
    fs::write(a.results_dir.join(tx().file_name()), tx().render()).expect("write");
    // Names sort g1 < g2 but mtimes decide: write g2 first, make it the newer one.
    fs::write(
        b.results_dir.join(group_g2().file_name()),
        group_g2().render(),
    )
    .expect("write");
    fs::write(
        b.results_dir.join(group_g1().file_name()),
        group_g1().render(),
    )
    .expect("write");
    set_mtime(&b.results_dir.join(group_g1().file_name()), 1_656_346_475);
    set_mtime(&b.results_dir.join(group_g2().file_name()), 1_796_015_555);
    // Not results files: ignored.
    fs::write(b.results_dir.join("summary-261130-051234.md"), "# x\n").expect("write");
    (a, b)
}

#[test]
fn create_csv_golden() {
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = two_apps(dir.path());
    let written = csv::create_csv(&a).expect("csv");
    assert_eq!(
        written,
        vec![
            a.results_dir.join("results-ingestion.csv"),
            a.results_dir.join("results-tx.csv"),
            a.results_dir.join("results-group.csv")
        ]
    );
    for kind in ResultsKind::ALL {
        assert_eq!(
            read(&a.results_dir.join(kind.csv_name())),
            read(&fixture(&format!("csv/perf_test_a/{}", kind.csv_name()))),
            "{}",
            kind.csv_name()
        );
    }
    assert_eq!(
        csv::create_csv(&b).expect("csv"),
        vec![b.results_dir.join("results-group.csv")]
    );
    assert_eq!(
        read(&b.results_dir.join("results-group.csv")),
        read(&fixture("csv/perf_test_b/results-group.csv"))
    );
}

#[test]
fn create_csv_all_golden() {
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = two_apps(dir.path());
    let empty = PerfApp {
        name: "perf_test_c".into(),
        results_dir: dir.path().join("perf_test_c/results"),
    };
    let written = csv::create_csv_all(&b, &[a.clone(), empty, b.clone()]).expect("csv");
    assert_eq!(written.len(), 3 + 1 + 3);
    for name in [
        "results-group-all.csv",
        "results-ingestion-all.csv",
        "results-tx-all.csv",
    ] {
        assert_eq!(
            read(&b.results_dir.join(name)),
            read(&fixture(&format!("csv/all/{name}"))),
            "{name}"
        );
    }
    assert!(
        !a.results_dir.join("results-group-all.csv").exists(),
        "-all files go to the invoking app only"
    );
}

#[test]
fn create_csv_without_results_says_so() {
    let dir = tempfile::tempdir().expect("tmp");
    let app = PerfApp {
        name: "p".into(),
        results_dir: dir.path().join("results"),
    };
    let e = csv::create_csv(&app).expect_err("no results");
    assert_eq!(
        e.to_string(),
        format!(
            "Result files not found in {}. Result files are generated when you run 'perf_test' scripts (edgebench perf test_group -run).",
            app.results_dir.display()
        )
    );
}

#[test]
fn clean_results_removes_files_only() {
    let dir = tempfile::tempdir().expect("tmp");
    let (a, _) = two_apps(dir.path());
    csv::create_csv(&a).expect("csv");
    fs::write(a.results_dir.join(".keep"), "").expect("write");
    fs::create_dir(a.results_dir.join("sub")).expect("mkdir");
    let removed = csv::clean_results(&a.results_dir).expect("clean");
    let names: Vec<String> = removed
        .iter()
        .map(|p| p.file_name().expect("n").to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec![
            "group-g1-redis-220627-121432.txt",
            "ingestion-profile-redis-220621-210831_x.txt",
            "results-group.csv",
            "results-ingestion.csv",
            "results-tx.csv",
            "tx-eligibility-redis-261130-051234_x.txt"
        ]
    );
    let mut left: Vec<String> = fs::read_dir(&a.results_dir)
        .expect("read")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec![".keep", "sub"]);
    assert!(csv::clean_results(&dir.path().join("missing"))
        .expect("ok")
        .is_empty());
}

#[test]
fn create_group_config_golden() {
    let etc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("etc");
    let template = read(&etc.join("group-template.properties"));
    // The fixture is the script's own output: header + `sed` over the template.
    assert_eq!(
        group_config::generate_group_config(&template, &ProductWords::redis()),
        read(&fixture("group-from-template-redis.properties"))
    );
    let dir = tempfile::tempdir().expect("tmp");
    fs::write(
        dir.path().join("group-template.properties"),
        "c=${DATA_STRUCTURE}/${PRODUCT}\n",
    )
    .expect("w");
    fs::write(dir.path().join("hazelcast-client.xml"), "").expect("w");
    let out = group_config::create_group_config(dir.path()).expect("gen");
    assert_eq!(
        read(&out),
        format!("{}c=IMap/Hazelcast\n", group_config::GENERATED_HEADER)
    );
    let e = group_config::create_group_config(&dir.path().join("nope")).expect_err("missing");
    assert!(e.to_string().contains("group-template.properties"));
}
