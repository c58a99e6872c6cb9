//! The benchtomd table: one row per benchmark, one column per target, µs per op.
//!
//! It reproduces the layout of the `benchtomd.awk` script that formatted the original EdgeX
//! Redis-vs-Mongo comparison, so old and new tables can be compared line by line: rows sorted
//! byte-wise (awk `asorti`), cells truncated to whole microseconds with `,` separators (awk
//! `%'d`). Two deliberate differences: columns keep the order the targets were given (awk sorts
//! them; [`super::benchtomd::parse_go_bench`] sorts them when reading Go text, so the awk order
//! comes back there), and values under 1 µs get two decimals, where awk would print a
//! misleading `0`. A cell is the median repetition, so `--count` runs give a stable figure.
//!
//! When some store reported its growth (the write benchmarks, [`store_table`]), a table of
//! store bytes per op follows, with the same columns.
//!
//! With `--baseline COLUMN` (recorded in the results' meta) a last table follows: each
//! cell is that column's median time divided by the baseline column's, so `2.50x` reads
//! "2.5 times as long as the baseline" and the baseline column is all `1.00x`.

use std::fmt::Write as _;
use std::io;

use super::{group_float, group_thousands, md_cell, Exporter};
use crate::results::{Measurement, RunResults, TargetResults};

/// The benchtomd table exporter (`results.md`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Exporter for Markdown {
    fn file_name(&self) -> &str {
        "results.md"
    }

    fn render(&self, results: &RunResults) -> io::Result<Vec<u8>> {
        let mut text = table(results);
        if let Some(growth) = store_table(results) {
            text.push('\n');
            text.push_str(&growth);
        }
        if let Some(ratios) = results
            .meta
            .baseline
            .as_deref()
            .and_then(|b| baseline_table(results, b))
        {
            text.push('\n');
            text.push_str(&ratios);
        }
        if let Some(connect) = connect_table(results) {
            text.push('\n');
            text.push_str(&connect);
        }
        Ok(text.into_bytes())
    }
}

/// The table as text, ending with a newline. With no benchmarks at all it is still the header
/// and divider, so a results file exists from the first write on.
pub fn table(results: &RunResults) -> String {
    let columns = columns(results);
    let mut out = grid(
        &columns,
        "(micro/op)",
        results.bench_names(),
        |t: &TargetResults, name: &str| {
            let bench = t.bench(name);
            match bench.and_then(|b| b.median()) {
                Some(m) => micros_cell(m),
                None if bench.is_some_and(|b| b.not_applicable.is_some()) => "—".to_string(),
                None => "n/a".to_string(),
            }
        },
    );
    out.push_str(&footnotes(&columns));
    out
}

/// The columns every table has: the targets that finished something. A target that finished
/// nothing (e.g. unreachable) would only be a column of n/a; its error is reported in
/// percentiles.md instead.
fn columns(results: &RunResults) -> Vec<&TargetResults> {
    results
        .targets
        .iter()
        .filter(|t| !t.benchmarks.is_empty())
        .collect()
}

/// A table of `rows` (benchmark names) by `columns`, each headed with its column name and
/// `unit`, each cell `cell(column, row)`; it ends with a newline.
fn grid(
    columns: &[&TargetResults],
    unit: &str,
    rows: impl IntoIterator<Item = String>,
    cell: impl Fn(&TargetResults, &str) -> String,
) -> String {
    let mut out = String::from("| Benchmark |");
    for t in columns {
        // Writing to a String cannot fail.
        let _ = write!(out, " {} {unit} |", md_cell(&t.column()));
    }
    out.push_str("\n|-|");
    for _ in columns {
        out.push_str("-|");
    }
    out.push('\n');
    for name in rows {
        let _ = write!(out, "| {} |", md_cell(&name));
        for t in columns {
            let _ = write!(out, " {} |", cell(t, &name));
        }
        out.push('\n');
    }
    out
}

/// One line per benchmark that some column could not run, with why: `— AddReading: …`.
/// Empty when every cell has a figure or `n/a`.
fn footnotes(columns: &[&TargetResults]) -> String {
    let mut notes: Vec<(String, String)> = Vec::new();
    for t in columns {
        for b in &t.benchmarks {
            if let Some(why) = &b.not_applicable {
                let note = (b.name.clone(), why.clone());
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    let mut out = String::new();
    if !notes.is_empty() {
        out.push('\n');
    }
    for (bench, why) in notes {
        let _ = writeln!(out, "— {}: {}", md_cell(&bench), md_cell(&why));
    }
    out
}

/// The connection-setup table: per column, the median time to open one store (connect,
/// TLS handshake, AUTH), timed apart from the benchmarks
/// ([`TargetResults::connect_ns`]). `None` when no column has the figure (results from
/// before it, Go text).
fn connect_table(results: &RunResults) -> Option<String> {
    let columns = columns(results);
    if columns.iter().all(|t| t.connect_ns.is_none()) {
        return None;
    }
    let mut out = grid(&columns, "(micro/op)", ["Connect".to_string()], |t, _| {
        t.connect_ns.map_or_else(String::new, |ns| {
            micros_cell(&Measurement {
                ns_per_op: ns as f64,
                ..Measurement::default()
            })
        })
    });
    out.push_str(
        "\n— Connect: opening one store (connect, TLS handshake, AUTH, the store's own \
         checks), timed apart from the benchmarks; the median of at least 5 opens.\n",
    );
    Some(out)
}

/// The store table: how much each column's store grew per op of the benchmarks that write
/// ([`Measurement::store_bytes_per_op`] of the median repetition, at the Go text's precision
/// and one decimal, so benchtomd over that text gives the same cells), so a reading
/// or an event's cost in memory or on disk sits under its time. Rows are the benchmarks with
/// a figure in some column; a cell is empty where the store cannot say. `None` when no
/// column has a figure (a run of reads only, or older results).
pub fn store_table(results: &RunResults) -> Option<String> {
    let columns = columns(results);
    let growth = |t: &TargetResults, name: &str| median(t, name)?.store_bytes_per_op;
    let rows: Vec<String> = results
        .bench_names()
        .into_iter()
        .filter(|name| columns.iter().any(|t| growth(t, name).is_some()))
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(grid(&columns, "(store B/op)", rows, |t, name| {
        growth(t, name)
            .map(|bytes| group_float(super::gobench::go_precision(bytes), 1))
            .unwrap_or_default()
    }))
}

/// The ratio table: the same rows and columns as [`table`], each cell the column's median
/// ns/op over the `baseline` column's (two decimals and `x`), `n/a` where either is missing.
/// `None` when the baseline column finished nothing (there is nothing to divide by).
pub fn baseline_table(results: &RunResults, baseline: &str) -> Option<String> {
    let base = results
        .targets
        .iter()
        .find(|t| t.column() == baseline && !t.benchmarks.is_empty())?;
    let unit = format!("(x {})", md_cell(baseline));
    Some(grid(
        &columns(results),
        &unit,
        results.bench_names(),
        |t, name| match (median(t, name), median(base, name)) {
            (Some(m), Some(b)) if b.ns_per_op > 0.0 => {
                format!("{}x", group_float(m.ns_per_op / b.ns_per_op, 2))
            }
            _ => "n/a".to_string(),
        },
    ))
}

/// The median repetition of `name` on `t`, if it ran.
fn median<'t>(t: &'t TargetResults, name: &str) -> Option<&'t Measurement> {
    t.bench(name).and_then(|b| b.median())
}

/// One cell: µs/op truncated like awk's `%'d`, or two decimals under 1 µs, from ns/op as the
/// Go text prints it, so that benchtomd over that text gives the same cell.
fn micros_cell(m: &Measurement) -> String {
    let ns = super::gobench::go_precision(m.ns_per_op);
    let micros = ns / 1000.0;
    if ns < 1000.0 {
        group_float(micros, 2)
    } else {
        // `as` saturates, so even an absurd value cannot panic here.
        group_thousands(micros.trunc() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(table(&fixture::run()), @r#"
            | Benchmark | RedisDB_TCP (micro/op) | MongoDB (micro/op) |
            |-|-|-|
            | AddReading | 76 | 146 |
            | EventCount | 0.21 | 94 |
            | Events | 100,022 | n/a |
            "#);
    }

    #[test]
    fn baseline_table_divides_by_the_baseline_column() {
        let results = fixture::run();
        insta::assert_snapshot!(baseline_table(&results, "RedisDB_TCP").expect("baseline ran"), @r#"
            | Benchmark | RedisDB_TCP (x RedisDB_TCP) | MongoDB (x RedisDB_TCP) |
            |-|-|-|
            | AddReading | 1.00x | 1.91x |
            | EventCount | 1.00x | 448.40x |
            | Events | 1.00x | n/a |
            "#);
        assert_eq!(baseline_table(&results, "NoSuchColumn"), None);
    }

    #[test]
    fn connect_table_has_each_column_s_connection_setup() {
        // MongoDB's run has no figure (it predates the field): an empty cell.
        insta::assert_snapshot!(connect_table(&fixture::run()).expect("timed"), @r#"
            | Benchmark | RedisDB_TCP (micro/op) | MongoDB (micro/op) |
            |-|-|-|
            | Connect | 1,234 |  |

            — Connect: opening one store (connect, TLS handshake, AUTH, the store's own checks), timed apart from the benchmarks; the median of at least 5 opens.
            "#);
    }

    #[test]
    fn store_table_has_the_benchmarks_that_grew_a_store() {
        // MongoDB's AddReading reported no size: an empty cell; the reads: no row.
        insta::assert_snapshot!(store_table(&fixture::run()).expect("a store grew"), @r#"
            | Benchmark | RedisDB_TCP (store B/op) | MongoDB (store B/op) |
            |-|-|-|
            | AddReading | 176.2 |  |
            "#);
        let mut results = fixture::run();
        for t in &mut results.targets {
            t.connect_ns = None;
            for b in &mut t.benchmarks {
                for m in &mut b.runs {
                    m.store_bytes_per_op = None;
                }
            }
        }
        assert_eq!(store_table(&results), None);
        assert_eq!(connect_table(&results), None);
        let plain = String::from_utf8(Markdown.render(&results).expect("render")).expect("utf8");
        assert_eq!(plain, table(&results));
    }

    #[test]
    fn results_md_has_the_ratio_table_only_with_a_baseline() {
        let mut results = fixture::run();
        let store = store_table(&results).expect("a store grew");
        let connect = connect_table(&results).expect("a column timed its connection");
        let plain = String::from_utf8(Markdown.render(&results).expect("render")).expect("utf8");
        assert_eq!(plain, format!("{}\n{store}\n{connect}", table(&results)));
        results.meta.baseline = Some("MongoDB".into());
        let both = String::from_utf8(Markdown.render(&results).expect("render")).expect("utf8");
        let ratios = baseline_table(&results, "MongoDB").expect("baseline ran");
        assert_eq!(
            both,
            format!("{}\n{store}\n{ratios}\n{connect}", table(&results))
        );
        assert!(
            ratios.contains("| AddReading | 0.52x | 1.00x |"),
            "{ratios}"
        );
    }

    #[test]
    fn cells_agree_with_benchtomd_over_the_go_text_at_rounding_edges() {
        // Values whose µs truncation flips when ns/op is rounded as Go prints it.
        for ns in [325_999.6, 999.96, 324.96, 9_999.95, 1_000_000_999.5, 0.0049] {
            let mut results = fixture::run();
            // benchtomd sorts its columns like awk; put them in that order to compare.
            results.targets.sort_by(|a, b| a.name.cmp(&b.name));
            for t in &mut results.targets {
                for b in &mut t.benchmarks {
                    for m in &mut b.runs {
                        m.ns_per_op = ns;
                        // The same edges for the store table's one decimal.
                        m.store_bytes_per_op = Some(ns);
                    }
                }
            }
            let from_go =
                super::super::benchtomd::parse_go_bench(&super::super::gobench::text(&results));
            assert_eq!(table(&results), table(&from_go), "{ns} ns/op");
            assert_eq!(store_table(&results), store_table(&from_go), "{ns} B/op");
        }
        let one = |ns| {
            micros_cell(&Measurement {
                ns_per_op: ns,
                ..fixture::run().targets[0].benchmarks[0].runs[0].clone()
            })
        };
        assert_eq!(one(325_999.6), "326");
        assert_eq!(one(325_999.4), "325");
    }

    #[test]
    fn empty_run_still_has_header_and_divider() {
        assert_eq!(table(&RunResults::default()), "| Benchmark |\n|-|\n");
    }

    #[test]
    fn target_without_benchmarks_is_not_a_column() {
        let mut results = fixture::run();
        results.targets.push(TargetResults {
            name: "RedisDB_UDS".into(),
            endpoint: "unix:///tmp/redis.sock".into(),
            error: Some("cannot connect to unix socket /tmp/redis.sock".into()),
            ..TargetResults::default()
        });
        assert_eq!(table(&results), table(&fixture::run()));
    }
}
