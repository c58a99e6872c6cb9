//! The IMDG benchmark bundle's workflow through the CLI, against two targets: each target is
//! a PadoGrid app (`results/perf/perf_test_<target>/`); `create_group_config`, `clean_results
//! -all`, several `test_group -run` per target and `create_csv -all` give one
//! `results-group-all.csv` with a row per group, run and target, and a markdown comparison.

use std::collections::BTreeMap;
use std::path::Path;

/// The bundle's template, cut to two groups and small counts so the test stays short.
const TEMPLATE: &str = "\
testCount=1
testIntervalInMsec=0
printStatusIntervalInSec=10
groupNames=g01&g02
g01.name=Put Test
g01.threadCount=2
g01.operations=put1
g01.comment=${DATA_STRUCTURE}.put() test
g01.totalInvocationCount=200
g02.name=GetAll Test
g02.threadCount=2
g02.operations=getall1
g02.comment=${DATA_STRUCTURE}.getAll() test
g02.totalInvocationCount=200
put1.map=map1
put1.testCase=put
put1.payloadSize=100
put1.totalEntryCount=100
getall1.map=map1
getall1.testCase=getall
getall1.batchSize=10
getall1.totalEntryCount=100
";

const TARGETS: [(&str, &str); 2] = [
    ("embedded", "perf_test_redisdb_embedded"),
    ("embedded-tcp", "perf_test_embedded_tcp"),
];
const RUNS: usize = 2;

fn perf(dir: &Path, args: &[&str]) -> String {
    let out = crate::common::edgebench()
        .current_dir(dir)
        .arg("perf")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "perf {args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap())
                .filter(|e| e.file_type().unwrap().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_bundle_workflow_compares_two_targets() {
    let dir = tempfile::tempdir().unwrap();
    let etc = dir.path().join("etc");
    std::fs::create_dir(&etc).unwrap();
    std::fs::write(etc.join("group-template.properties"), TEMPLATE).unwrap();
    perf(dir.path(), &["create_group_config"]);
    let generated = std::fs::read_to_string(etc.join("group.properties")).unwrap();
    assert!(
        generated.contains("g01.comment=RMap.put() test"),
        "{generated}"
    );

    // A stale file from an earlier run, which clean_results -all must remove.
    let root = dir.path().join("results/perf");
    let stale = root.join(TARGETS[0].1);
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("group-g01-old.txt"), "stale").unwrap();
    let cleaned = perf(dir.path(), &["clean_results", "-all"]);
    assert!(cleaned.ends_with("clean_results complete.\n"), "{cleaned}");
    assert!(files(&stale).is_empty());

    for (target, app) in TARGETS {
        for _ in 0..RUNS {
            let out = perf(dir.path(), &["test_group", "-run", "--target", target]);
            assert!(out.contains("| g01 | 2 | 200 |"), "{out}");
            assert!(out.contains("| g02 | 2 | 200 |"), "{out}");
        }
        let results = files(&root.join(app));
        let group_files = results.iter().filter(|f| f.starts_with("group-")).count();
        assert_eq!(group_files, 2 * RUNS, "{app}: {results:?}");
    }

    let out = perf(dir.path(), &["create_csv", "-all"]);
    assert!(out.contains("results-group-all.csv"), "{out}");
    let csv = std::fs::read_to_string(root.join("results-group-all.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("perf_test, File, Product, Group,"));
    // One row per group, run and target, column 1 naming the target's app.
    let mut rows: BTreeMap<(String, String), usize> = BTreeMap::new();
    for line in lines {
        let cols: Vec<&str> = line.split(", ").collect();
        *rows
            .entry((cols[0].to_string(), cols[3].to_string()))
            .or_default() += 1;
    }
    let want: BTreeMap<(String, String), usize> = TARGETS
        .iter()
        .flat_map(|(_, app)| ["g01", "g02"].map(|g| ((app.to_string(), g.to_string()), RUNS)))
        .collect();
    assert_eq!(rows, want);

    // The comparison: a row per group and app, with the number of runs, and the first app
    // of each group as the 1.00x baseline.
    let md = std::fs::read_to_string(root.join("results-group-all.md")).unwrap();
    for g in ["g01", "g02"] {
        let first = format!("| {g} | {} | {RUNS} |", TARGETS[1].1);
        let second = format!("| {g} | {} | {RUNS} |", TARGETS[0].1);
        let line = md.lines().find(|l| l.starts_with(&first)).unwrap();
        assert!(line.ends_with("| 1.00x |"), "{md}");
        assert!(md.lines().any(|l| l.starts_with(&second)), "{md}");
    }
    assert!(out.contains(&md), "{out}");

    perf(dir.path(), &["clean_results", "-all"]);
    for (_, app) in TARGETS {
        assert!(files(&root.join(app)).is_empty());
    }
    assert!(files(&root).is_empty());
}
