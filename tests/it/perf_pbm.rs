//! `test_ingestion` and `test_tx` against real targets (the in-process engine, the engine
//! served over TCP, a spawned redis-server): what ingestion leaves in the store, the
//! GroupSummary values and missing-data counts of `tx`, its atomicity under a concurrent
//! writer, the results files' shape and their CSVs, and the CLI's one-line errors.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use edgebench::perf::csv::{create_csv, PerfApp};
use edgebench::perf::data::PBM_BASE_DATE_MS;
use edgebench::perf::ingest::run_ingestion;
use edgebench::perf::tx::{group_summary_tx, run_tx, TxOutcome};
use edgebench::perf::{PbmTest, PbmTestConfig, Properties};
use edgebench::target::Connector;
use edgebench::target::Target;
use redis::{ConnectionLike, RedisResult, Value};

use crate::common;

/// The targets every test runs on. A missing redis-server fails the test.
const TARGETS: [&str; 3] = ["embedded", "embedded-tcp", "redis-tcp"];

struct Running {
    _target: Target,
    connect: Box<Connector>,
}

fn start(item: &str) -> Running {
    if item.starts_with("redis") {
        common::require_redis_server();
    }
    let target = common::start(item);
    let connect = target.connector().unwrap_or_else(|e| panic!("{e}"));
    Running {
        _target: target,
        connect,
    }
}

fn pbm(text: &str, test: PbmTest) -> PbmTestConfig {
    let props = Properties::parse(text, "pbm.properties").unwrap_or_else(|e| panic!("{e}"));
    PbmTestConfig::from_properties(&props, test, 2).unwrap_or_else(|e| panic!("{e}"))
}

fn query<T: redis::FromRedisValue>(con: &mut dyn ConnectionLike, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(con).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn ingest(cfg: &PbmTestConfig, connect: &Connector, dir: &Path) -> Vec<(String, u64)> {
    let mut status = Vec::new();
    run_ingestion(cfg, connect, "t", dir, &AtomicBool::new(false), &mut status)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|(r, _, _)| (r.map, r.count))
        .collect()
}

/// Eligibility: 2 threads × 20 entries, member sets of 5, putall batches of 7. PadoGrid
/// rounds each batch (7, 7, 6) up to whole member sets (2 sets each), so each thread writes
/// 6 groups = 30 entries; thread 2 starts at group 20/5+1 = 5, so groups 5 and 6 get members
/// from both threads. Profile: 2 threads × 6 keys in batches of 4.
const INGEST: &str = "memberSetSize=5\nmapNames=eligibility,profile\nprefix=x\n\
    eligibility.totalEntryCount=40\neligibility.threadCount=2\neligibility.batchSize=7\n\
    eligibility.payloadSize=16\neligibility.testCase=putall\n\
    profile.totalEntryCount=12\nprofile.threadCount=2\nprofile.batchSize=4\n\
    profile.payloadSize=32\nprofile.testCase=putall\n";

#[test]
fn ingestion_writes_exactly_the_expected_entries_co_located_by_group() {
    for item in TARGETS {
        for case in ["putall", "put"] {
            let r = start(item);
            let dir = tempfile::tempdir().unwrap();
            let cfg = pbm(
                &INGEST.replace("testCase=putall", &format!("testCase={case}")),
                PbmTest::Ingestion,
            );
            let counts = ingest(&cfg, &*r.connect, dir.path());
            let mut con = (r.connect)().unwrap();
            let con = con.as_mut();
            // put writes ceil(20/5) = 4 sets per thread: groups 1-4 and 5-8, none shared.
            let (want_count, want_sizes): (u64, Vec<i64>) = if case == "putall" {
                (60, vec![5, 5, 5, 5, 10, 10, 5, 5, 5, 5])
            } else {
                (40, vec![5; 8])
            };
            assert_eq!(
                counts,
                [
                    ("eligibility".to_string(), want_count),
                    ("profile".to_string(), 12)
                ],
                "{item} {case}"
            );
            let mut keys: Vec<String> = query(con, &["KEYS", "eligibility:*"]);
            keys.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
            let want_keys: Vec<String> = (1..=want_sizes.len())
                .map(|g| format!("eligibility:{{x{g}}}"))
                .collect();
            assert_eq!(keys, want_keys, "{item} {case}");
            for (g, want) in (1..).zip(&want_sizes) {
                let key = format!("eligibility:{{x{g}}}");
                assert_eq!(query::<i64>(con, &["HLEN", &key]), *want, "{item} {key}");
                // Co-location: every field of G's hash is a member of G.
                let fields: Vec<String> = query(con, &["HKEYS", &key]);
                for f in fields {
                    assert!(f.starts_with(&format!("x{g},x{g},")), "{key}: {f}");
                }
            }
            // The first member of group 1: identity field, serialized key + zero Blob.
            let field = format!("x1,x1,1,{0},{0}", PBM_BASE_DATE_MS);
            let value: Vec<u8> = query(con, &["HGET", "eligibility:{x1}", &field]);
            let mut want = format!("{field},1,1,1,1\n").into_bytes();
            want.extend([0u8; 16]);
            assert_eq!(value, want, "{item}");
            let profiles: Vec<String> = query(con, &["KEYS", "profile:*"]);
            assert_eq!(profiles.len(), 12, "{item}");
            let p: Vec<u8> = query(con, &["GET", "profile:{x12}"]);
            assert_eq!(p, [b"x12,x12,x12\n".as_slice(), &[0u8; 32]].concat());
        }
    }
}

/// tx config: eligibility `tx` on 2 threads × 10 transactions with member sets of 5:
/// thread 1 works on groups x1-x10, thread 2 on x3-x12 (PadoGrid's start group
/// (t-1)*10/5+1). Ingestion wrote eligibility groups x1-x4 (5 members each).
const TX: &str = "memberSetSize=5\nmapNames=eligibility\nprefix=x\n\
    eligibility.totalEntryCount=20\neligibility.threadCount=2\neligibility.testCase=tx\n";

fn ingest_for_tx(profiles: u64) -> String {
    format!(
        "memberSetSize=5\nmapNames=eligibility,profile\nprefix=x\n\
         eligibility.totalEntryCount=20\neligibility.threadCount=2\neligibility.batchSize=10\n\
         eligibility.payloadSize=100\n\
         profile.totalEntryCount={profiles}\nprofile.threadCount=1\nprofile.payloadSize=8\n"
    )
}

#[test]
fn tx_writes_the_summaries_the_data_implies_and_counts_missing_profiles() {
    for item in TARGETS {
        for (profiles, want_missing) in [(6u64, 10u64), (12, 0)] {
            let r = start(item);
            let dir = tempfile::tempdir().unwrap();
            ingest(
                &pbm(&ingest_for_tx(profiles), PbmTest::Ingestion),
                &*r.connect,
                dir.path(),
            );
            let mut status = Vec::new();
            let runs = run_tx(
                &pbm(TX, PbmTest::Tx),
                &*r.connect,
                "t",
                dir.path(),
                &AtomicBool::new(false),
                &mut status,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let (run, outcome, _) = &runs[0];
            // Missing: groups without a profile, counted per transaction (x7-x10 by thread
            // 1, x7-x12 by thread 2 when only x1-x6 have one).
            assert_eq!(
                (run.count, run.missing, outcome.retries),
                (20, want_missing, 0),
                "{item} profiles={profiles}"
            );
            let mut con = (r.connect)().unwrap();
            let con = con.as_mut();
            for g in 1..=12u64 {
                let key = format!("summary:{{x{g}}}");
                let fields: Vec<(String, String)> = query(con, &["HGETALL", &key]);
                let get = |f: &str| fields.iter().find(|(k, _)| k == f).map(|(_, v)| v.clone());
                if g > profiles {
                    assert!(fields.is_empty(), "{item} {key}: {fields:?}");
                    continue;
                }
                let members = if g <= 4 { 5 } else { 0 };
                assert_eq!(
                    get("memberCount"),
                    Some(members.to_string()),
                    "{item} {key}"
                );
                assert_eq!(
                    get("totalBlobSize"),
                    Some((members * 100).to_string()),
                    "{item} {key}"
                );
                assert_eq!(get("groupNumber"), Some(format!("x{g}")));
                assert_eq!(get("carrierNumber"), Some(format!("x{g}")));
            }
        }
    }
}

/// A connection that, the first time it is about to send `MULTI`, lets another client add a
/// member to group x1 first: a write between the transaction's reads and its EXEC.
struct InterferingConnection {
    inner: Box<dyn ConnectionLike + Send>,
    other: Box<dyn ConnectionLike + Send>,
    fired: bool,
}

impl InterferingConnection {
    fn before(&mut self, packed: &[u8]) {
        let multi = packed.windows(5).any(|w| w == b"MULTI");
        if multi && !self.fired {
            self.fired = true;
            let _: i64 = redis::cmd("HSET")
                .arg("eligibility:{x1}")
                .arg("x1,x1,999,0,0")
                .arg(b"x1,x1,999,0,0,0,0,0,0\n0123456789".as_slice())
                .query(self.other.as_mut())
                .unwrap();
        }
    }
}

impl ConnectionLike for InterferingConnection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.before(cmd);
        self.inner.req_packed_command(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.before(cmd);
        self.inner.req_packed_commands(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.inner.check_connection()
    }

    fn is_open(&self) -> bool {
        self.inner.is_open()
    }
}

fn fixed_clock() -> i64 {
    1_700_000_000_000
}

#[test]
fn a_concurrent_change_to_the_group_aborts_the_tx_and_it_runs_again_never_stale() {
    for item in TARGETS {
        let r = start(item);
        let dir = tempfile::tempdir().unwrap();
        ingest(
            &pbm(&ingest_for_tx(6), PbmTest::Ingestion),
            &*r.connect,
            dir.path(),
        );
        let mut con = InterferingConnection {
            inner: (r.connect)().unwrap(),
            other: (r.connect)().unwrap(),
            fired: false,
        };
        let outcome = group_summary_tx(&mut con, "x1", fixed_clock).unwrap();
        assert!(con.fired, "{item}");
        // The first EXEC aborted (x1 changed after WATCH); the second attempt saw the sixth
        // member (10 bytes of Blob) and wrote a summary of it.
        let TxOutcome::Written { summary, retries } = outcome else {
            panic!("{item}: {outcome:?}");
        };
        assert_eq!(
            (retries, summary.member_count, summary.total_blob_size),
            (1, 6, 510),
            "{item}"
        );
        let stored: Vec<String> = query(
            con.inner.as_mut(),
            &[
                "HMGET",
                "summary:{x1}",
                "memberCount",
                "totalBlobSize",
                "writtenTime",
            ],
        );
        assert_eq!(stored, ["6", "510", "1700000000000"], "{item}");
        // Without interference: one attempt; no profile: nothing written.
        let again = group_summary_tx(con.inner.as_mut(), "x2", fixed_clock).unwrap();
        assert!(
            matches!(again, TxOutcome::Written { retries: 0, ref summary } if summary.member_count == 5),
            "{item}: {again:?}"
        );
        assert_eq!(
            group_summary_tx(con.inner.as_mut(), "x7", fixed_clock).unwrap(),
            TxOutcome::MissingProfile
        );
        assert_eq!(
            query::<i64>(con.inner.as_mut(), &["EXISTS", "summary:{x7}"]),
            0
        );
    }
}

/// Replaces what changes from run to run (dates, times, rates, percentiles) with `<v>`.
fn shape(text: &str) -> String {
    let varying = [
        "Start Time",
        "Stop Time",
        "   Thread 1",
        "   Thread 2",
        "Max Time",
        "Throughput",
        "Latency per",
        "samples",
    ];
    text.lines()
        .map(|l| match l.find(": ") {
            Some(i) if varying.iter().any(|v| l.contains(v)) => format!("{}: <v>", &l[..i]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn results_files_have_padogrids_shape_and_create_csv_reads_them() {
    let r = start("embedded");
    let dir = tempfile::tempdir().unwrap();
    let mut status = Vec::new();
    let stop = AtomicBool::new(false);
    let ing = run_ingestion(
        &pbm(&ingest_for_tx(6), PbmTest::Ingestion),
        &*r.connect,
        "embedded",
        dir.path(),
        &stop,
        &mut status,
    )
    .unwrap();
    let text = std::fs::read_to_string(&ing[0].2).unwrap();
    let name = ing[0].2.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("ingestion-eligibility-embedded-") && name.ends_with("_x.txt"),
        "{name}"
    );
    assert_eq!(
        shape(&text),
        "******************************************
Data Ingestion Test
******************************************

                     Product: embedded
                   Test Case: putall
                         Map: eligibility
           PutAll Batch Size: 10
              Test Run Count: 1
    Test Run Interval (msec): 0
   Total Entry Count Per Run: 20
                Thread Count: 2
        Payload Size (bytes): 100
                      Prefix: x
      Entry Count per Thread: 10

Start Time: <v>

Actual Total Entry (Put) Count: 20

Time unit: msec
   Thread 1: <v>
   Thread 2: <v>

        Max Time (msec): <v>
   Throughput (msg/sec): <v>
  *Throughput (KiB/sec): <v>
  *Throughput (MiB/sec): <v>
 Latency per put (msec): <v>
   **Total Volume (KiB): 1.953
   **Total Volume (MiB): 0.002
   **Total Volume (GiB): 0
   Payload Size (bytes): 100

 * Throughput does not take the keys into account.
   The actual rate is higher.
** Total Volume do not take the keys into account.
   The actual volume is higher.

Stop Time: <v>

edgebench percentiles per call (usec, HDR histogram)
   eligibility putall: <v>
"
    );
    let tx = run_tx(
        &pbm(TX, PbmTest::Tx),
        &*r.connect,
        "embedded",
        dir.path(),
        &stop,
        &mut status,
    )
    .unwrap();
    let text = std::fs::read_to_string(&tx[0].2).unwrap();
    assert_eq!(
        shape(&text),
        "******************************************
Transaction Test
******************************************

                     Product: embedded
                   Test Case: tx
                         Map: eligibility
              Test Run Count: 1
    Test Run Interval (msec): 0
   Total Entry Count Per Run: 20
                Thread Count: 2
                      Prefix: x
      Entry Count per Thread: 10

Start Time: <v>

         Actual Total Number of Transactions: 20
Total Number of Transactions on Missing Data: 10

Missing Data represents the number of transaction operations that are performed on
non-existing co-located data. This may occur if there are not enough ClientProfile
objects ingested. To avoid this, increase the number of profile objects by setting
'profile.totalEntryCount' in the ingestion properties file and rerun the ingestion test.
This value must be greater than or equal to 'eligibility.totalEntryCount'.

Time unit: msec
   Thread 1: <v>
   Thread 2: <v>

                Max Time (msec): <v>
            Throughput (tx/sec): <v>
 Latency per transaction (msec): <v>

Stop Time: <v>

edgebench percentiles per transaction or call (usec, HDR histogram)
   eligibility tx: <v>
"
    );
    // create_csv reads both kinds; the columns are the files' values.
    let app = PerfApp {
        name: "perf_test_edgebench".into(),
        results_dir: dir.path().to_path_buf(),
    };
    let files = create_csv(&app).unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    let csv = std::fs::read_to_string(dir.path().join("results-ingestion.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(", ").collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let profile = rows
        .iter()
        .find(|r| r[4] == "profile")
        .expect("profile row");
    assert_eq!(
        (profile[2], profile[3], profile[8], profile[9], profile[15]),
        ("embedded", "putall", "6", "1", "6"),
        "{csv}"
    );
    let csv = std::fs::read_to_string(dir.path().join("results-tx.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(", ").collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!(
        (rows[1][3], rows[1][4], rows[1][13], rows[1][14]),
        ("tx", "eligibility", "20", "10"),
        "{csv}"
    );
}

#[test]
fn getall_and_get_read_every_key_including_the_last_partial_batch() {
    let r = start("embedded");
    let dir = tempfile::tempdir().unwrap();
    ingest(
        &pbm(&ingest_for_tx(6), PbmTest::Ingestion),
        &*r.connect,
        dir.path(),
    );
    for (case, batch) in [("getall", 4), ("get", 4)] {
        // 7 profile keys on one thread in batches of 4: PadoGrid would never read x5-x7;
        // we read all 7, and x7 has no profile.
        let cfg = pbm(
            &format!(
                "mapNames=profile,eligibility\nprofile.totalEntryCount=7\nprofile.threadCount=1\n\
                 profile.batchSize={batch}\nprofile.testCase={case}\nmemberSetSize=5\n\
                 eligibility.totalEntryCount=25\neligibility.threadCount=1\neligibility.batchSize=10\n"
            ),
            PbmTest::Tx,
        );
        let mut status = Vec::new();
        let runs = run_tx(
            &cfg,
            &*r.connect,
            "t",
            dir.path(),
            &AtomicBool::new(false),
            &mut status,
        )
        .unwrap();
        let got: Vec<(String, u64, u64)> = runs
            .iter()
            .map(|(r, _, _)| (r.map.clone(), r.count, r.missing))
            .collect();
        // Eligibility getall: 25 keys on one thread = groups x1-x5. Ingestion wrote x1-x4
        // on two threads, so x3-x4 have other effective dates (thread 2's): as in PadoGrid,
        // only keys built by the same thread layout are found: x1-x2 (10 keys).
        assert_eq!(
            got,
            [
                ("profile".to_string(), 7, 1),
                ("eligibility".to_string(), 25, 15)
            ],
            "{case}"
        );
        let status = String::from_utf8(status).unwrap();
        // The maps run at the same time, so another map's lines may come between these; the
        // eligibility thread's own lines come in its order.
        let eligibility: Vec<&str> = status
            .lines()
            .filter(|l| l.starts_with("[eligibility 1] getAll()"))
            .collect();
        assert_eq!(
            eligibility,
            [
                "[eligibility 1] getAll(): keySet does not match the returned map size: [keySet=10, map=0]",
                "[eligibility 1] getAll(): keySet does not match the returned map size: [keySet=5, map=0]"
            ],
            "{status}"
        );
        assert!(
            status.contains("Transaction Count (eligibility): 25\n"),
            "{status}"
        );
        assert!(
            status.contains("    Transaction Count (profile): 7\n"),
            "{status}"
        );
    }
}

fn edgebench(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = crate::common::edgebench()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_prints_runs_and_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let etc = dir.path().join("etc");
    std::fs::create_dir(&etc).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("etc");
    // Small copies of the shipped files (same keys, fewer entries and threads).
    for f in ["ingestion.properties", "tx.properties"] {
        let text = std::fs::read_to_string(shipped.join(f))
            .unwrap()
            .replace("totalEntryCount=10000", "totalEntryCount=100")
            .replace("threadCount=16", "threadCount=2");
        std::fs::write(etc.join(f), text).unwrap();
    }
    // Without -run: PadoGrid's configuration printout.
    let (code, stdout, _) = edgebench(
        dir.path(),
        &["perf", "test_ingestion", "--target", "embedded"],
    );
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("Data Ingestion Test Configuration\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("                PutAll Batch Size: 1000\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("             **Total Volume (KiB): 1000\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("To run the test, specify the option, '-run'.\n"),
        "{stdout}"
    );
    // test_tx -run on the in-process engine loads etc/ingestion.properties first, so every
    // group has its profile: no missing data.
    let (code, stdout, stderr) = edgebench(
        dir.path(),
        &["perf", "test_tx", "-run", "--target", "embedded"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("starts empty: loading etc/ingestion.properties first"),
        "{stdout}"
    );
    assert!(
        stdout.contains("eligibility tx: 0 on missing data"),
        "{stdout}"
    );
    assert!(stdout.ends_with("\nTransaction complete\n"), "{stdout}");
    // The target is the run's PadoGrid app: results/perf/perf_test_<target>/.
    let app = "results/perf/perf_test_redisdb_embedded";
    let results: Vec<String> = std::fs::read_dir(dir.path().join(app))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        results.iter().filter(|n| n.starts_with("tx-")).count(),
        2,
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .any(|n| n.starts_with("summary-tx-redisdb_embedded-")),
        "{results:?}"
    );
    assert!(
        !results.iter().any(|n| n.starts_with("ingestion-")),
        "{results:?}"
    );

    // An unknown map is dropped with a note, as PadoGrid drops it.
    std::fs::write(etc.join("odd.properties"), "mapNames=eligibility,claims\n").unwrap();
    let (code, stdout, _) = edgebench(
        dir.path(),
        &[
            "perf",
            "test_ingestion",
            "-prop",
            "etc/odd.properties",
            "--target",
            "embedded",
        ],
    );
    assert_eq!(code, Some(0));
    assert!(
        stdout.starts_with("warning: etc/odd.properties: mapNames names \"claims\", which is not a PBM map (eligibility, profile); dropped as PadoGrid does\n"),
        "{stdout}"
    );

    std::fs::write(etc.join("bad.properties"), "eligibility.threadCount=many\n").unwrap();
    for (args, want) in [
        (
            vec!["perf", "test_ingestion", "-prop", "etc/nope.properties"],
            "edgebench: cannot read properties file etc/nope.properties: No such file",
        ),
        (
            vec!["perf", "test_tx", "-prop", "etc/bad.properties"],
            "edgebench: etc/bad.properties:1: eligibility.threadCount=\"many\" is not",
        ),
        (
            vec!["perf", "test_tx", "-list"],
            "edgebench: -list and -delete are test_group flags",
        ),
    ] {
        let (code, _, stderr) = edgebench(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    }
}
