//! Reading `go test -bench` output back into the results model: a drop-in for `benchtomd.awk`.
//!
//! The original EdgeX Redis-vs-Mongo comparison was formatted by piping `go test -bench` text
//! through a small awk script. [`parse_go_bench`] reads the same text (noise lines included),
//! so that [`super::markdown::table`] over its result gives the script's table, and old Go runs
//! can be put next to edgebench runs. Like the script, it takes targets from the part of the
//! name before the first `/` and sorts them byte-wise (awk `asorti`).

use std::collections::BTreeMap;

use crate::results::{BenchResults, Measurement, RunResults, TargetResults};

/// Parses Go benchmark text (`go test -bench` output, or edgebench's own `bench.txt`).
///
/// For each line starting with `Benchmark`, split on whitespace: field 1 is
/// `Benchmark{target}/{bench}-{procs}`, field 2 is n, field 3 ns/op; `B/op` and `allocs/op`
/// are picked up wherever they follow. The target is the name up to the first `/`, the
/// benchmark what follows it cut at its first `-` (as the awk script's `split(s[2], b, "-")`).
/// `goos:`, `goarch:`, `pkg:` and `cpu:` lines fill [`crate::results::RunMeta`]; every other
/// line is ignored. Targets come out sorted byte-wise; benchmarks keep their first-seen order.
///
/// Where this differs from `benchtomd.awk`, on purpose:
/// - A line whose field 4 is not `ns/op`, or whose n or ns/op does not parse, is skipped; awk
///   would still record it and print a row of 0 or empty cells.
/// - A target/benchmark pair seen several times (`go test -count N`) becomes N repetitions,
///   and the markdown table shows their median; awk keeps only the last one.
/// - A name without `/` (a benchmark with no sub-benchmarks) is skipped; awk would make a
///   column of the whole name with an empty benchmark name.
/// - With more than one `/` (nested sub-benchmarks) the benchmark keeps every level after the
///   first `/`; awk keeps only the second level.
pub fn parse_go_bench(text: &str) -> RunResults {
    let mut results = RunResults::default();
    let mut targets: BTreeMap<String, TargetResults> = BTreeMap::new();
    for line in text.lines() {
        if let Some(full) = line.strip_prefix("Benchmark") {
            let Some(parsed) = go_line(full).and_then(split_name) else {
                continue;
            };
            if results.meta.procs == 0 {
                results.meta.procs = parsed.procs;
            }
            let target =
                targets
                    .entry(parsed.target.to_string())
                    .or_insert_with(|| TargetResults {
                        name: parsed.target.to_string(),
                        ..TargetResults::default()
                    });
            let index = match target
                .benchmarks
                .iter()
                .position(|b| b.name == parsed.bench)
            {
                Some(i) => i,
                None => {
                    target.benchmarks.push(BenchResults {
                        name: parsed.bench.to_string(),
                        runs: Vec::new(),
                        not_applicable: None,
                    });
                    target.benchmarks.len() - 1
                }
            };
            target.benchmarks[index].runs.push(parsed.measurement);
        } else if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().to_string();
            match key {
                "goos" => results.meta.goos = value,
                "goarch" => results.meta.goarch = value,
                "cpu" => results.meta.cpu = value,
                // edgebench writes `pkg: edgebench/{workload}`; for Go's own output the
                // package path is the closest thing to a workload name.
                "pkg" => {
                    results.meta.workload = match value.strip_prefix("edgebench/") {
                        Some(workload) => workload.to_string(),
                        None => value,
                    }
                }
                _ => {}
            }
        }
    }
    results.targets = targets.into_values().collect();
    results.meta.count = results
        .targets
        .iter()
        .flat_map(|t| t.benchmarks.iter().map(|b| b.runs.len()))
        .max()
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    results
}

/// One benchmark line split as benchtomd.awk splits it, borrowed from the input.
struct Line<'a> {
    target: &'a str,
    bench: &'a str,
    /// The `-N` suffix; 0 when absent (Go leaves it out for GOMAXPROCS=1).
    procs: usize,
    measurement: Measurement,
}

/// One `Benchmark…` line of Go text as Go printed it: the name whole and the figures.
#[derive(Debug, Clone, PartialEq)]
pub struct GoLine<'a> {
    /// The name after `Benchmark`, `-N` suffix included: `RedisDB_TCP/AddReading-4`.
    pub name: &'a str,
    /// n, ns/op, and B/op and allocs/op when the line has them.
    pub measurement: Measurement,
}

/// Every benchmark line of `text` that carries ns/op, in order, with its name as Go printed
/// it. [`parse_go_bench`] reads lines through this and then cuts names as benchtomd.awk does;
/// `report compare` keys samples by the whole name, as benchstat does.
pub fn go_lines(text: &str) -> impl Iterator<Item = GoLine<'_>> {
    text.lines()
        .filter_map(|line| line.strip_prefix("Benchmark"))
        .filter_map(go_line)
}

/// `full` is the line after its `Benchmark` prefix. `None` unless field 4 is `ns/op` and n and
/// ns/op parse (see [`parse_go_bench`]).
fn go_line(full: &str) -> Option<GoLine<'_>> {
    let fields: Vec<&str> = full.split_whitespace().collect();
    let [name, n, ns, "ns/op", rest @ ..] = fields.as_slice() else {
        return None;
    };
    let mut measurement = Measurement {
        n: n.parse().ok()?,
        ns_per_op: ns.parse().ok()?,
        ..Measurement::default()
    };
    // After ns/op come (value, unit) pairs: B/op and allocs/op with -benchmem, and possibly
    // MB/s or custom b.ReportMetric units, of which only edgebench's store-B/op is in the
    // model.
    for pair in rest.chunks_exact(2) {
        match pair[1] {
            "B/op" => measurement.bytes_per_op = pair[0].parse().unwrap_or(0),
            "allocs/op" => measurement.allocs_per_op = pair[0].parse().unwrap_or(0),
            super::gobench::STORE_BYTES_PER_OP => {
                measurement.store_bytes_per_op = pair[0].parse().ok();
            }
            _ => {}
        }
    }
    Some(GoLine { name, measurement })
}

/// The awk script's cut of a name: target up to the first `/`, benchmark after it up to its
/// first `-`; `None` for a name without `/`.
fn split_name(line: GoLine<'_>) -> Option<Line<'_>> {
    let (target, sub) = line.name.split_once('/')?;
    let bench = sub.split('-').next().unwrap_or(sub);
    let procs = sub
        .rsplit_once('-')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or(0);
    Some(Line {
        target,
        bench,
        procs,
        measurement: line.measurement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markdown;

    const SEED_GIST: &str = include_str!("../../tests/fixtures/seed-gist-bench.txt");

    #[test]
    fn seed_gist_gives_the_gist_table() {
        let expected = include_str!("../../tests/fixtures/seed-gist-table.md");
        assert_eq!(markdown::table(&parse_go_bench(SEED_GIST)), expected);
    }

    #[test]
    fn seed_gist_details() {
        let r = parse_go_bench(SEED_GIST);
        assert_eq!(r.meta.goos, "linux");
        assert_eq!(r.meta.goarch, "amd64");
        assert_eq!(
            r.meta.workload,
            "github.com/edgexfoundry/edgex-go/core/data/clients"
        );
        assert_eq!(r.meta.cpu, "");
        assert_eq!(r.meta.procs, 4);
        assert_eq!(r.meta.count, 1);
        let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["MongoDB", "RedisDB_Embedded", "RedisDB_TCP", "RedisDB_UDS"]
        );
        // Benchmarks keep run order within a target (the gist's order is the 2018 harness's,
        // which `coredata::workload`'s tests check edgebench keeps).
        let mongo: Vec<&str> = r.targets[0]
            .benchmarks
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(mongo[..3], ["AddReading", "Readings", "ReadingCount"]);
        let events = &r.targets[0].bench("Events").unwrap().runs;
        assert_eq!(
            events,
            &[Measurement {
                n: 3,
                ns_per_op: 475972675.0,
                bytes_per_op: 14389898,
                allocs_per_op: 458216,
                ..Measurement::default()
            }]
        );
    }

    #[test]
    fn repeated_lines_are_repetitions_and_the_table_shows_their_median() {
        let text = "\
BenchmarkA/X-2\t100\t3000 ns/op
BenchmarkA/X-2\t100\t1000 ns/op
BenchmarkA/X-2\t100\t2000 ns/op
";
        let r = parse_go_bench(text);
        assert_eq!(r.meta.count, 3);
        let runs: Vec<f64> = r.targets[0].benchmarks[0]
            .runs
            .iter()
            .map(|m| m.ns_per_op)
            .collect();
        assert_eq!(runs, [3000.0, 1000.0, 2000.0]);
        // With a fourth, slower line awk would show the last value (9); the median is 2.
        let r = parse_go_bench(&format!("{text}BenchmarkA/X-2\t100\t9000 ns/op\n"));
        assert_eq!(
            markdown::table(&r),
            "| Benchmark | A (micro/op) |\n|-|-|\n| X | 2 |\n"
        );
    }

    #[test]
    fn malformed_and_unsupported_lines_are_skipped() {
        let text = "\
BenchmarkA/X-2\t100\t1500 ns/op
BenchmarkA/Y-2\t100\tfast ns/op
BenchmarkA/Z-2\t100\t1500 MB/s
BenchmarkA/W-2\tmany\t1500 ns/op
BenchmarkA/V-2\t100
BenchmarkNoSub-2\t100\t1500 ns/op
 BenchmarkA/Indented-2\t100\t1500 ns/op
--- BENCH: BenchmarkA
";
        let r = parse_go_bench(text);
        assert_eq!(r.targets.len(), 1);
        let names: Vec<&str> = r.targets[0]
            .benchmarks
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(names, ["X"]);
    }

    #[test]
    fn names_are_cut_like_awk_and_extra_units_ignored() {
        let text = "BenchmarkA/Get-Small-8\t10\t12.5 ns/op\t80.00 MB/s\t16 B/op\t1 allocs/op\n\
                    BenchmarkA/Outer/Inner-8\t10\t20 ns/op\n\
                    BenchmarkB/One\t10\t20 ns/op\n";
        let r = parse_go_bench(text);
        let a = &r.targets[0];
        let names: Vec<&str> = a.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["Get", "Outer/Inner"]);
        let m = &a.benchmarks[0].runs[0];
        assert_eq!((m.n, m.ns_per_op), (10, 12.5));
        assert_eq!((m.bytes_per_op, m.allocs_per_op), (16, 1));
        assert_eq!(r.meta.procs, 8);
        assert_eq!(r.targets[1].benchmarks[0].name, "One");
    }

    #[test]
    fn empty_input() {
        let r = parse_go_bench("");
        assert!(r.targets.is_empty());
        assert_eq!(r.meta.count, 0);
    }
}
