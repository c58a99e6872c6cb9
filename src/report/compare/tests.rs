//! Verdicts on fixtures whose answer is known, and the markdown table pinned.

use super::*;

/// Go text of one benchmark line per value, as `go test -count` prints repetitions.
fn go_text(benchmarks: &[(&str, &[f64])]) -> String {
    let mut text = String::from("goos: linux\ngoarch: amd64\n");
    for (name, values) in benchmarks {
        for v in *values {
            text.push_str(&format!("Benchmark{name}\t1000\t{v} ns/op\n"));
        }
    }
    text.push_str("PASS\n");
    text
}

fn compared(old: &[(&str, &[f64])], new: &[(&str, &[f64])]) -> Comparison {
    compare(
        &Samples::from_go_text("old.txt", &go_text(old)),
        &Samples::from_go_text("new.txt", &go_text(new)),
    )
    .unwrap()
}

const SLOW: &[f64] = &[1000.0, 1010.0, 990.0, 1005.0, 995.0];
const FAST: &[f64] = &[800.0, 810.0, 790.0, 805.0, 795.0];

#[test]
fn identical_samples_are_not_significant() {
    let c = compared(&[("T/A-2", SLOW)], &[("T/A-2", SLOW)]);
    let row = &c.rows[0];
    assert_eq!((row.target.as_str(), row.benchmark.as_str()), ("T", "A-2"));
    // U1 = U2 = 12.5: p is 1 by benchstat's rule, and the change is 0.
    assert_eq!(row.p_value, Some(1.0));
    assert!(!row.significant);
    assert_eq!(row.delta_pct, Some(0.0));
    assert_eq!(row.notes, Vec::<String>::new());
    assert!(c
        .markdown()
        .contains("| A-2 | 1.000µ ± 1% | 1.000µ ± 1% | ~ (p=1.000 n=5) |"));
}

#[test]
fn five_against_five_fully_separated_is_significant_with_the_exact_p() {
    let c = compared(&[("T/A-2", SLOW)], &[("T/A-2", FAST)]);
    let row = &c.rows[0];
    // The exact p of 5 vs 5 with no overlap: 2/C(10,5) = 2/252.
    assert_eq!(row.p_value, Some(2.0 / 252.0));
    assert!(row.significant);
    // 800/1000 − 1 in f64 is −0.19999999999999996.
    assert!((row.delta_pct.unwrap() + 20.0).abs() < 1e-12);
    let old = row.old.as_ref().unwrap();
    assert_eq!((old.median_ns, old.n), (1000.0, 5));
    assert_eq!(old.spread_pct, 1.0);
    // The row shares the scale of its smallest value, as benchstat's: 1000.0n, not 1.000µ.
    assert!(c
        .markdown()
        .contains("| A-2 | 1000.0n ± 1% | 800.0n ± 1% | -20.00% (p=0.008 n=5) |"));
}

#[test]
fn all_values_equal_is_p_one_with_benchstats_note() {
    let c = compared(&[("T/A", &[5.0; 5])], &[("T/A", &[5.0; 5])]);
    let row = &c.rows[0];
    assert_eq!(row.p_value, Some(1.0));
    assert!(!row.significant);
    assert_eq!(row.notes, ["all samples are equal"]);
}

#[test]
fn too_few_samples_get_benchstats_note() {
    // 3 vs 3 fully separated: the best p three repetitions can give is 2/C(6,3) = 0.1.
    let c = compared(
        &[("T/A", &[10.0, 11.0, 12.0])],
        &[("T/A", &[20.0, 21.0, 22.0])],
    );
    let row = &c.rows[0];
    assert_eq!(row.p_value, Some(0.1));
    assert!(!row.significant);
    assert_eq!(
        row.notes,
        ["need >= 4 samples to detect a difference at alpha level 0.05"]
    );
    // One side with 4 is enough for benchstat to say nothing (it warns only when both are short).
    let c = compared(
        &[("T/A", &[10.0, 11.0, 12.0, 13.0])],
        &[("T/A", &[10.5, 11.5, 12.5])],
    );
    assert_eq!(c.rows[0].notes, Vec::<String>::new());
    assert_eq!(samples_needed(0.05), 4);
    assert_eq!(samples_needed(0.01), 5);
}

#[test]
fn targets_are_compared_apart_and_one_sided_benchmarks_listed() {
    let c = compared(
        &[("Y/A", SLOW), ("X/A", SLOW), ("Y/OnlyOld", SLOW)],
        &[("X/A", FAST), ("Y/A", SLOW), ("Z/New", FAST)],
    );
    let keys: Vec<(&str, &str, bool, bool)> = c
        .rows
        .iter()
        .map(|r| {
            (
                r.target.as_str(),
                r.benchmark.as_str(),
                r.old.is_some(),
                r.new.is_some(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("Y", "A", true, true),
            ("Y", "OnlyOld", true, false),
            ("X", "A", true, true),
            ("Z", "New", false, true),
        ]
    );
    assert!(!c.rows[0].significant);
    assert!(c.rows[2].significant);
    assert_eq!(c.rows[1].p_value, None);
    assert_eq!(c.rows[1].delta_pct, None);
    // Only Y has two rows, so only Y has a geomean; its sets differ.
    assert_eq!(c.geomeans.len(), 1);
    let g = &c.geomeans[0];
    assert_eq!(g.target, "Y");
    // exp(ln 1000) is 999.9999999999998 in f64.
    assert!((g.old_ns.unwrap() - 1000.0).abs() < 1e-9);
    assert!((g.new_ns.unwrap() - 1000.0).abs() < 1e-9);
    assert_eq!(g.delta_pct, Some(0.0));
    assert_eq!(
        g.notes,
        ["benchmark set differs from baseline; geomeans may not be comparable"]
    );
}

#[test]
fn nothing_in_common_is_an_error_naming_both() {
    let err = compare(
        &Samples::from_go_text("a.txt", &go_text(&[("T/A", SLOW)])),
        &Samples::from_go_text("b.txt", &go_text(&[("T/B", SLOW)])),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.txt and b.txt have no benchmark in common: compare two runs of the same benchmarks \
         on the same targets (the names, -N suffix included, must match)"
    );
}

#[test]
fn markdown_table() {
    let c = compared(
        &[
            ("RedisDB_TCP/AddReading-4", SLOW),
            ("RedisDB_TCP/Events-4", &[2.0e6, 2.1e6, 1.9e6]),
            (
                "RedisDB_TCP/EventCount-4",
                &[210.4, 211.0, 209.9, 210.0, 210.8],
            ),
            (
                "MongoDB/AddReading-4",
                &[146033.0, 147000.0, 145500.0, 146100.0, 146900.0],
            ),
            ("Plain-8", &[7.5, 7.6]),
        ],
        &[
            ("RedisDB_TCP/AddReading-4", FAST),
            ("RedisDB_TCP/Events-4", &[2.0e6, 2.2e6, 1.8e6]),
            (
                "RedisDB_TCP/EventCount-4",
                &[210.4, 211.0, 209.9, 210.0, 210.8],
            ),
            (
                "MongoDB/AddReading-4",
                &[146033.0, 147000.0, 145500.0, 146100.0],
            ),
            ("Plain-8", &[7.5, 7.6]),
        ],
    );
    insta::assert_snapshot!(c.markdown(), @r"
    | RedisDB_TCP | old.txt sec/op | new.txt sec/op | vs base |
    |:--|--:|--:|:--|
    | AddReading-4 | 1000.0n ± 1% | 800.0n ± 1% | -20.00% (p=0.008 n=5) |
    | Events-4 | 2.000m ± 5% | 2.000m ± 10% | ~ (p=1.000 n=3) ¹ |
    | EventCount-4 | 210.4n ± 0% | 210.4n ± 0% | ~ (p=1.000 n=5) |
    | geomean | 7.494µ | 6.956µ | -7.17% |

    ¹ need >= 4 samples to detect a difference at alpha level 0.05

    | MongoDB | old.txt sec/op | new.txt sec/op | vs base |
    |:--|--:|--:|:--|
    | AddReading-4 | 146.1µ ± 1% | 146.1µ ± 1% | ~ (p=0.857 n=5+4) |

    | Benchmark | old.txt sec/op | new.txt sec/op | vs base |
    |:--|--:|--:|:--|
    | Plain-8 | 7.550n ± 1% | 7.550n ± 1% | ~ (p=1.000 n=2) ¹ |

    ¹ need >= 4 samples to detect a difference at alpha level 0.05
    ");
}
