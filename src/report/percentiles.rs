//! The percentiles table: what one operation costs, not just the mean, per target and benchmark.
//!
//! One row per (target, benchmark), targets in the order given and benchmarks in run order, all
//! figures taken from the median repetition ([`BenchResults::median`]) so a row is one real
//! round, never a mix of rounds. `spread` is [`BenchResults::spread`], benchstat v1's "± x%".
//! `store B/op` is the store's growth per op in that round (the write benchmarks'), empty
//! where it was not measured or the store cannot say.
//! Targets that failed are listed under the table with their error, because the benchtomd table
//! only shows what is missing, not why. Last, each target's connection setup, timed apart from
//! the benchmarks ([`crate::results::TargetResults::connect_ns`]): what a TLS handshake or an
//! AUTH costs once per connection.

use std::fmt::Write as _;
use std::io;

use super::{group_float, group_thousands, md_cell, micros_2dp, Exporter};
use crate::results::{BenchResults, RunResults};

/// The percentiles table exporter (`percentiles.md`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Percentiles;

impl Exporter for Percentiles {
    fn file_name(&self) -> &str {
        "percentiles.md"
    }

    fn render(&self, results: &RunResults) -> io::Result<Vec<u8>> {
        Ok(table(results).into_bytes())
    }
}

const HEADER: &str = "| Target | Benchmark | N | ns/op | ops/s | p50 (µs) | p90 (µs) | p99 (µs) \
                      | p99.9 (µs) | max (µs) | B/op | allocs/op | store B/op | runs | spread |\n\
                      |-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|\n";

/// The table as text, then one `- target: error` line per failed target.
pub fn table(results: &RunResults) -> String {
    let mut out = String::from(HEADER);
    for t in &results.targets {
        for b in &t.benchmarks {
            if let Some(row) = row(b) {
                // Writing to a String cannot fail.
                let _ = writeln!(
                    out,
                    "| {} | {} | {row} |",
                    md_cell(&t.column()),
                    md_cell(&b.name)
                );
            }
        }
    }
    let failed: Vec<_> = results
        .targets
        .iter()
        .filter_map(|t| t.error.as_deref().map(|e| (t.column(), e)))
        .collect();
    if !failed.is_empty() {
        // A blank line so no markdown renderer takes the list for more table rows.
        out.push('\n');
        for (name, error) in failed {
            let _ = writeln!(out, "- {}: {}", md_cell(&name), md_cell(error));
        }
    }
    let connects: Vec<_> = results
        .targets
        .iter()
        .filter_map(|t| t.connect_ns.map(|ns| (t.column(), ns)))
        .collect();
    if !connects.is_empty() {
        out.push_str(
            "\nConnection setup, timed apart from the benchmarks (opening one store: connect, \
             TLS handshake, AUTH, the store's own checks; the median of at least 5 opens):\n\n\
             | Target | connect (µs) |\n|-|-|\n",
        );
        for (name, ns) in connects {
            let _ = writeln!(out, "| {} | {} |", md_cell(&name), micros_2dp(ns));
        }
    }
    out
}

/// The cells after Target and Benchmark, or None for a benchmark without repetitions.
fn row(b: &BenchResults) -> Option<String> {
    let m = b.median()?;
    Some(
        [
            group_thousands(m.n),
            // Two decimals: in-process operations can take well under 1 ns.
            group_float(m.ns_per_op, 2),
            group_float(m.ops_per_sec(), 0),
            micros_2dp(m.p50_ns),
            micros_2dp(m.p90_ns),
            micros_2dp(m.p99_ns),
            micros_2dp(m.p999_ns),
            micros_2dp(m.max_ns),
            group_thousands(m.bytes_per_op),
            group_thousands(m.allocs_per_op),
            m.store_bytes_per_op
                .map(|x| group_float(x, 1))
                .unwrap_or_default(),
            b.runs.len().to_string(),
            format!("±{:.1}%", b.spread() * 100.0),
        ]
        .join(" | "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(table(&fixture::run()), @r#"
            | Target | Benchmark | N | ns/op | ops/s | p50 (µs) | p90 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | B/op | allocs/op | store B/op | runs | spread |
            |-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|
            | RedisDB_TCP | AddReading | 20,000 | 76,292.00 | 13,108 | 71.00 | 88.10 | 120.30 | 250.10 | 1,005.00 | 1,019 | 42 | 176.2 | 3 | ±8.1% |
            | RedisDB_TCP | Events | 20 | 100,022,091.00 | 10 | 99,800.00 | 101,200.00 | 104,857.60 | 104,857.60 | 105,000.12 | 1,796,015 | 28,010 |  | 1 | ±0.0% |
            | RedisDB_TCP | EventCount | 5,000,000 | 210.40 | 4,752,852 | 0.21 | 0.23 | 0.42 | 1.01 | 30.02 | 0 | 0 |  | 1 | ±0.0% |
            | MongoDB | AddReading | 10,000 | 146,033.00 | 6,848 | 140.00 | 160.00 | 210.00 | 400.00 | 2,000.00 | 3,632 | 70 |  | 1 | ±0.0% |
            | MongoDB | EventCount | 20,000 | 94,343.00 | 10,600 | 90.00 | 99.00 | 150.00 | 300.00 | 600.00 | 1,832 | 43 |  | 1 | ±0.0% |

            - MongoDB: connection reset by peer during Events

            Connection setup, timed apart from the benchmarks (opening one store: connect, TLS handshake, AUTH, the store's own checks; the median of at least 5 opens):

            | Target | connect (µs) |
            |-|-|
            | RedisDB_TCP | 1,234.50 |
            "#);
    }

    #[test]
    fn empty_run_is_header_only() {
        assert_eq!(table(&RunResults::default()), HEADER);
    }
}
