//! PadoGrid's three perf tools on a spawned Redis Cluster: `test_group` (put, getall),
//! `test_ingestion` and `test_tx` (WATCH/MULTI/EXEC on hash-tagged keys), each finishing with
//! the figures PadoGrid prints and nothing on missing data or failed transactions. (The
//! cluster's routing itself is `cluster_targets`' and `target::cluster`'s tests.)

use std::path::Path;

use crate::common;

const GROUP: &str = "\
testCount=1
testIntervalInMsec=0
printStatusIntervalInSec=10
groupNames=g01&g02
g01.name=Put Test
g01.threadCount=2
g01.operations=put1
g01.totalInvocationCount=300
g02.name=GetAll Test
g02.threadCount=2
g02.operations=getall1
g02.totalInvocationCount=100
put1.map=map1
put1.testCase=put
put1.payloadSize=100
put1.totalEntryCount=100
getall1.map=map1
getall1.testCase=getall
getall1.batchSize=10
getall1.totalEntryCount=100
";

/// `test_ingestion` and `test_tx` sizes, small: 2 threads, 200 entries per map.
fn pbm(test_case: [&str; 2], test_count: u32) -> String {
    format!(
        "testCount={test_count}\ntestIntervalInMsec=0\nmemberSetSize=5\n\
         mapNames=eligibility,profile\nprintStatusIntervalInSec=10\nprefix=x\n\
         eligibility.totalEntryCount=200\neligibility.payloadSize=256\n\
         eligibility.batchSize=50\neligibility.threadCount=2\n\
         eligibility.testCase={}\nprofile.totalEntryCount=200\nprofile.payloadSize=512\n\
         profile.batchSize=20\nprofile.threadCount=2\nprofile.testCase={}\n",
        test_case[0], test_case[1]
    )
}

fn perf(dir: &Path, args: &[&str]) -> String {
    let out = crate::common::edgebench()
        .current_dir(dir)
        .arg("perf")
        .args(args)
        .args(["--target", "redis-cluster", "--cluster-replicas", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "perf {args:?}: {stderr}\n{stdout}"
    );
    stdout.into_owned()
}

#[test]
fn perf_test_group_ingestion_and_tx_run_on_a_spawned_cluster() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let etc = dir.path().join("etc");
    std::fs::create_dir(&etc).unwrap();
    std::fs::write(etc.join("group.properties"), GROUP).unwrap();
    std::fs::write(
        etc.join("ingestion.properties"),
        pbm(["putall", "putall"], 1),
    )
    .unwrap();
    std::fs::write(etc.join("tx.properties"), pbm(["tx", "getall"], 2)).unwrap();

    let out = perf(dir.path(), &["test_group", "-run"]);
    assert!(out.contains("| g01 | 2 | 300 |"), "{out}");
    assert!(out.contains("| g02 | 2 | 100 |"), "{out}");

    let out = perf(dir.path(), &["test_ingestion", "-run"]);
    assert!(out.contains("\nData ingestion complete\n"), "{out}");

    // Each run spawns a fresh cluster: test_tx loads etc/ingestion.properties first, so
    // every transaction finds its profile.
    let out = perf(dir.path(), &["test_tx", "-run"]);
    assert!(
        out.contains(
            "eligibility tx: 0 on missing data, 0 transactions retried after a concurrent \
             change (WATCH)"
        ),
        "{out}"
    );
    assert!(out.contains("profile getall: 0 on missing data"), "{out}");
    assert!(out.ends_with("\nTransaction complete\n"), "{out}");
}
