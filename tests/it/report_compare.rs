//! `edgebench report compare OLD NEW` as a user runs it: two Go text fixtures whose verdicts
//! are known, two real coredata runs on the in-process engine, and one line per bad input.

use std::path::{Path, PathBuf};

use edgebench::coredata::workload::BENCHMARKS;

/// Runs `edgebench report compare OLD NEW` and returns (exit code, stdout, stderr).
fn compare(old: &Path, new: &Path) -> (i32, String, String) {
    let out = crate::common::edgebench()
        .args(["report", "compare"])
        .arg(old)
        .arg(new)
        .output()
        .expect("edgebench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

/// The one line of a usage error: exit status 2, nothing on stdout.
fn one_line_error(old: &Path, new: &Path) -> String {
    let (code, stdout, stderr) = compare(old, new);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn go_text_fixtures_give_benchstats_verdicts() {
    let (old, new) = (fixture("old.txt"), fixture("new.txt"));
    let (code, stdout, stderr) = compare(&old, &new);
    assert_eq!(code, 0, "{stderr}");
    // AddReading: 5 vs 5 fully separated, p = 2/252; EventCount: the same values on both
    // sides; Events: 3 vs 3 separated, whose best p is 0.1; MongoDB AddReading: overlapping;
    // EventCount and ReadingCount: on one side each. Checked by hand in Python: scipy
    // 1.17.1's mannwhitneyu(method='exact') gives 0.6904761904761905 for MongoDB AddReading;
    // the geomeans are exp(mean(ln x)) of the medians (117095.5, 104973.8 ns; ratio −10.352%;
    // MongoDB 118044.3, 113723.7 ns, and −0.609% from AddReading, the one pair).
    let expected = format!(
        "\
| RedisDB_TCP | {old} sec/op | {new} sec/op | vs base |
|:--|--:|--:|:--|
| AddReading-4 | 76.29µ ± 2% | 61.02µ ± 2% | -20.02% (p=0.008 n=5) |
| EventCount-4 | 210.4n ± 0% | 210.4n ± 0% | ~ (p=1.000 n=5) |
| Events-4 | 100.02m ± 1% | 90.10m ± 0% | ~ (p=0.100 n=3) ¹ |
| geomean | 117.1µ | 105.0µ | -10.35% |

¹ need >= 4 samples to detect a difference at alpha level 0.05

| MongoDB | {old} sec/op | {new} sec/op | vs base |
|:--|--:|--:|:--|
| AddReading-4 | 147.7µ ± 2% | 146.8µ ± 2% | ~ (p=0.690 n=5) |
| EventCount-4 | 94.34µ ± 1% | — |  |
| ReadingCount-4 | — | 88.10µ ± 0% |  |
| geomean | 118.0µ | 113.7µ | -0.61% ¹ |

¹ benchmark set differs from baseline; geomeans may not be comparable
",
        old = old.display(),
        new = new.display()
    );
    assert_eq!(stdout, expected);
}

#[test]
fn two_coredata_runs_on_the_engine_are_compared_benchmark_by_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<PathBuf> = ["before", "after"]
        .iter()
        .map(|name| {
            let out = dir.path().join(name);
            let status = crate::common::edgebench()
                .args([
                    "coredata",
                    "--target",
                    "embedded",
                    "--benchtime",
                    "20x",
                    "--count",
                    "5",
                    "--format",
                    "go",
                    "--out",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
            out
        })
        .collect();

    let (code, stdout, stderr) = compare(&runs[0], &runs[1]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "| RedisDB_Embedded | {} sec/op | {} sec/op | vs base |",
            runs[0].display(),
            runs[1].display()
        )
    );
    // A row per benchmark, in run order, each with 5 repetitions a side, then the geomean.
    let rows: Vec<Vec<&str>> = lines[2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    let mut expected: Vec<String> = BENCHMARKS
        .iter()
        .map(|b| {
            let procs = names[0].rsplit_once('-').map_or("", |(_, p)| p);
            if procs.is_empty() {
                b.to_string()
            } else {
                format!("{b}-{procs}")
            }
        })
        .collect();
    expected.push("geomean".into());
    assert_eq!(names, expected);
    for row in &rows[..rows.len() - 1] {
        assert!(row[3].ends_with("n=5)"), "{row:?}");
        assert!(
            row[3].starts_with('~') || row[3].contains("% (p="),
            "{row:?}"
        );
    }

    // A run against itself: every sample identical, so nothing is significant, no change.
    let (code, same, _) = compare(&runs[0], &runs[0]);
    assert_eq!(code, 0);
    for line in same.lines().skip(2).filter(|l| l.starts_with('|')) {
        if line.starts_with("| geomean ") {
            assert!(line.ends_with(" | +0.00% |"), "{line}");
        } else {
            assert!(line.ends_with(" | ~ (p=1.000 n=5) |"), "{line}");
        }
    }
    // The directory is read through its bench.txt: the same table but for the header.
    let (_, from_text, _) = compare(&runs[0].join("bench.txt"), &runs[1]);
    assert_eq!(
        from_text.lines().skip(1).collect::<Vec<_>>(),
        stdout.lines().skip(1).collect::<Vec<_>>()
    );
}

#[test]
fn bad_inputs_are_one_line_naming_the_path_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixture("old.txt");

    let missing = dir.path().join("nope");
    let line = one_line_error(&missing, &good);
    assert!(
        line.starts_with(&format!("edgebench: cannot read {}: ", missing.display())),
        "{line}"
    );
    assert!(
        line.ends_with(
            " (give a results directory written by edgebench coredata --out DIR, or a go test \
             -bench text)"
        ),
        "{line}"
    );

    let empty_dir = dir.path().join("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    assert_eq!(
        one_line_error(&good, &empty_dir),
        format!(
            "edgebench: {} has no bench.txt: give a results directory written by edgebench \
             coredata --out DIR, or a go test -bench text",
            empty_dir.display()
        )
    );

    let prose = dir.path().join("notes.txt");
    std::fs::write(&prose, "goos: linux\nBenchmarking is fun\nPASS\n").unwrap();
    assert_eq!(
        one_line_error(&prose, &good),
        format!(
            "edgebench: no Go benchmark lines (BenchmarkName-P  N  T ns/op) in {}: give the \
             output of go test -bench, or an edgebench coredata results directory",
            prose.display()
        )
    );

    let other = dir.path().join("other.txt");
    std::fs::write(&other, "BenchmarkX/Y-4\t10\t100 ns/op\n").unwrap();
    assert_eq!(
        one_line_error(&good, &other),
        format!(
            "edgebench: {} and {} have no benchmark in common: compare two runs of the same \
             benchmarks on the same targets (the names, -N suffix included, must match)",
            good.display(),
            other.display()
        )
    );
}
