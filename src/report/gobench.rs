//! Go benchmark text, byte for byte as Go's `testing` package prints it, so `benchstat` (and
//! any script written for `go test -bench` output, such as benchtomd.awk) reads edgebench runs.
//!
//! Each target becomes a top-level benchmark and each workload benchmark a sub-benchmark:
//! `BenchmarkRedisDB_TCP/AddReading-4`. Every repetition is its own line, as `go test -count`
//! prints them, because benchstat computes its own statistics from the repetitions. The
//! formatting rules (name padding, `%8d`, the significant-digit table of `prettyPrint`) are
//! Go's, from `src/testing/benchmark.go`.
//!
//! The `-N` suffix is the host's CPUs ([`RunMeta::procs`], Go's default GOMAXPROCS), except in
//! a `--parallel` run: there it is the level's number of clients, left out for 1, as
//! `go test -cpu 1,2,4` names its runs (`Foo`, `Foo-2`, `Foo-4`), so benchstat keeps the
//! levels apart; `procs` alone would give level 1 and level `procs` one name.
//!
//! [`RunMeta::procs`]: crate::results::RunMeta::procs

use std::fmt::Write as _;
use std::io;

use super::Exporter;
use crate::results::{Measurement, RunResults};

/// The unit of [`Measurement::store_bytes_per_op`] in Go text, as a benchmark would name it in
/// `b.ReportMetric(growth, "store-B/op")`: benchstat keeps it apart from the client's B/op.
pub const STORE_BYTES_PER_OP: &str = "store-B/op";

/// The Go benchmark text exporter (`bench.txt`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoBench;

impl Exporter for GoBench {
    fn file_name(&self) -> &str {
        "bench.txt"
    }

    fn render(&self, results: &RunResults) -> io::Result<Vec<u8>> {
        Ok(text(results).into_bytes())
    }
}

/// The whole file: configuration header, one line per repetition, `PASS`.
pub fn text(results: &RunResults) -> String {
    let meta = &results.meta;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "goos: {}", meta.goos);
    let _ = writeln!(out, "goarch: {}", meta.goarch);
    let _ = writeln!(out, "pkg: edgebench/{}", meta.workload);
    if !meta.cpu.is_empty() {
        let _ = writeln!(out, "cpu: {}", meta.cpu);
    }

    let lines: Vec<(String, &Measurement)> = results
        .targets
        .iter()
        .flat_map(|t| {
            t.benchmarks.iter().flat_map(move |b| {
                // With --parallel a level's clients play GOMAXPROCS, as with `go test -cpu`.
                let procs = if meta.parallel.is_empty() {
                    meta.procs
                } else {
                    t.parallel as usize
                };
                let name = bench_name(&t.name, &b.name, procs);
                b.runs.iter().map(move |m| (name.clone(), m))
            })
        })
        .collect();
    // Go pads every name to the longest benchmark name of the run, so the columns line up.
    let width = lines
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    for (name, m) in &lines {
        // A custom metric goes where Go prints a `b.ReportMetric`: after ns/op, before the
        // -benchmem columns (`BenchmarkResult.String`, then `MemString`).
        let store = match m.store_bytes_per_op {
            Some(bytes) => format!("\t{} {STORE_BYTES_PER_OP}", pretty_print(bytes)),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{name:<width$}\t{:8}\t{} ns/op{store}\t{:8} B/op\t{:8} allocs/op",
            m.n,
            pretty_print(m.ns_per_op),
            m.bytes_per_op,
            m.allocs_per_op
        );
    }
    out.push_str("PASS\n");
    out
}

/// `Benchmark{target}/{bench}-{procs}`. Go leaves the `-N` suffix out when GOMAXPROCS is 1
/// (`benchmarkName`), and rewrites spaces in names to `_` (`rewrite`), because benchstat splits
/// lines on whitespace; both rules are followed here.
fn bench_name(target: &str, bench: &str, procs: usize) -> String {
    let clean = |s: &str| s.replace(char::is_whitespace, "_");
    let name = format!("Benchmark{}/{}", clean(target), clean(bench));
    if procs > 1 {
        format!("{name}-{procs}")
    } else {
        name
    }
}

/// A float metric (ns/op, store-B/op) at the precision the Go text carries it: what
/// `benchstat` and `report benchtomd` read back. The markdown tables use it, so a table and
/// benchtomd over the Go text never differ by one in the last digit (e.g. 325,999.6 ns is
/// "326000 ns/op", 326 µs in both).
pub(crate) fn go_precision(x: f64) -> f64 {
    pretty_print(x).trim().parse().unwrap_or(x)
}

/// A float metric (ns/op, a custom one) as Go's `prettyPrint` prints it: a fixed width, and
/// more decimals the smaller the value, so that about four significant digits show.
fn pretty_print(x: f64) -> String {
    let y = x.abs();
    let (width, decimals) = if y == 0.0 || y >= 999.95 {
        (10, 0)
    } else if y >= 99.995 {
        (12, 1)
    } else if y >= 9.9995 {
        (13, 2)
    } else if y >= 0.99995 {
        (14, 3)
    } else if y >= 0.099995 {
        (15, 4)
    } else if y >= 0.0099995 {
        (16, 5)
    } else if y >= 0.00099995 {
        (17, 6)
    } else {
        (18, 7)
    };
    // Rust's `{:.N}` rounds the exact binary value with ties to even, as Go's `%.Nf` does.
    format!("{x:>width$.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::benchtomd::parse_go_bench;
    use crate::report::fixture;

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(text(&fixture::run()), @r#"
            goos: linux
            goarch: amd64
            pkg: edgebench/coredata
            cpu: Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz
            BenchmarkRedisDB_TCP/AddReading-4	   20000	     76292 ns/op	       176.2 store-B/op	    1019 B/op	      42 allocs/op
            BenchmarkRedisDB_TCP/AddReading-4	   20000	     70100 ns/op	       175.5 store-B/op	    1019 B/op	      42 allocs/op
            BenchmarkRedisDB_TCP/AddReading-4	   20000	     81000 ns/op	      1176 store-B/op	    1020 B/op	      42 allocs/op
            BenchmarkRedisDB_TCP/Events-4    	      20	 100022091 ns/op	 1796015 B/op	   28010 allocs/op
            BenchmarkRedisDB_TCP/EventCount-4	 5000000	       210.4 ns/op	       0 B/op	       0 allocs/op
            BenchmarkMongoDB/AddReading-4    	   10000	    146033 ns/op	    3632 B/op	      70 allocs/op
            BenchmarkMongoDB/EventCount-4    	   20000	     94343 ns/op	    1832 B/op	      43 allocs/op
            PASS
            "#);
    }

    #[test]
    fn line_matches_go_output() {
        let mut results = fixture::run();
        results.meta.procs = 2;
        results.targets.truncate(1);
        results.targets[0].benchmarks.truncate(1);
        results.targets[0].benchmarks[0].runs.truncate(1);
        // Go's standard columns alone (custom metrics: the next test).
        results.targets[0].benchmarks[0].runs[0].store_bytes_per_op = None;
        let text = text(&results);
        let line = text.lines().find(|l| l.starts_with("Benchmark")).unwrap();
        assert_eq!(
            line,
            "BenchmarkRedisDB_TCP/AddReading-2\t   20000\t     76292 ns/op\t    1019 B/op\t      42 allocs/op"
        );
    }

    #[test]
    fn store_growth_is_a_custom_metric_between_ns_op_and_b_op() {
        let mut results = fixture::run();
        results.targets[0].benchmarks.truncate(1);
        results.targets.truncate(1);
        let text = text(&results);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("Benchmark"))
            .collect();
        // As Go prints `b.ReportMetric(176.25, "store-B/op")` under -benchmem, ties to even.
        assert_eq!(
            lines[0],
            "BenchmarkRedisDB_TCP/AddReading-4\t   20000\t     76292 ns/op\t       176.2 store-B/op\t    1019 B/op\t      42 allocs/op"
        );
        assert!(
            lines[2].contains("\t      1176 store-B/op\t"),
            "{}",
            lines[2]
        );
        // A store that cannot say prints no metric at all, not a 0.
        results.targets[0].benchmarks[0].runs[0].store_bytes_per_op = None;
        let text = super::text(&results);
        assert!(
            !text.lines().nth(4).unwrap().contains("store-B/op"),
            "{text}"
        );
        // A store that shrank prints a negative figure, as Go's %f would.
        results.targets[0].benchmarks[0].runs[0].store_bytes_per_op = Some(-3.5);
        assert!(super::text(&results).contains("\t        -3.500 store-B/op\t"));
    }

    #[test]
    fn pretty_print_thresholds() {
        // Each row of Go's prettyPrint table, at and just below its threshold.
        assert_eq!(pretty_print(0.0), "         0");
        assert_eq!(pretty_print(999.95), "      1000");
        assert_eq!(pretty_print(999.94), "       999.9");
        assert_eq!(pretty_print(99.995), "       100.0");
        assert_eq!(pretty_print(99.99), "        99.99");
        assert_eq!(pretty_print(9.9995), "        10.00");
        assert_eq!(pretty_print(9.999), "         9.999");
        assert_eq!(pretty_print(0.99995), "         1.000");
        assert_eq!(pretty_print(0.5), "         0.5000");
        assert_eq!(pretty_print(0.05), "         0.05000");
        assert_eq!(pretty_print(0.005), "         0.005000");
        assert_eq!(pretty_print(0.0001), "         0.0001000");
        assert_eq!(pretty_print(76292.0), "     76292");
        assert_eq!(pretty_print(475972675.0), " 475972675");
    }

    #[test]
    fn procs_one_has_no_suffix_and_spaces_become_underscores() {
        assert_eq!(
            bench_name("Redis TCP", "Add Reading", 1),
            "BenchmarkRedis_TCP/Add_Reading"
        );
        assert_eq!(
            bench_name("RedisDB_TCP", "Events", 0),
            "BenchmarkRedisDB_TCP/Events"
        );
        assert_eq!(
            bench_name("RedisDB_TCP", "Events", 8),
            "BenchmarkRedisDB_TCP/Events-8"
        );
    }

    #[test]
    fn parallel_levels_are_named_as_go_test_cpu_names_them() {
        let mut results = fixture::run();
        results.meta.parallel = vec![1, 4];
        results.targets.truncate(1);
        results.targets[0].benchmarks.truncate(1);
        results.targets[0].benchmarks[0].runs.truncate(1);
        let mut level4 = results.targets[0].clone();
        level4.parallel = 4;
        results.targets.push(level4);
        let text = text(&results);
        let names: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("Benchmark"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        // Not `-4` (the host's procs) for level 1: that would be level 4's name.
        assert_eq!(
            names,
            [
                "BenchmarkRedisDB_TCP/AddReading",
                "BenchmarkRedisDB_TCP/AddReading-4"
            ]
        );
    }

    #[test]
    fn round_trip_through_parse_go_bench() {
        let original = fixture::run();
        let parsed = parse_go_bench(&text(&original));
        assert_eq!(parsed.meta.goos, original.meta.goos);
        assert_eq!(parsed.meta.goarch, original.meta.goarch);
        assert_eq!(parsed.meta.cpu, original.meta.cpu);
        assert_eq!(parsed.meta.workload, original.meta.workload);
        assert_eq!(parsed.meta.procs, original.meta.procs);
        let figures = |m: &Measurement| {
            (
                m.n,
                m.ns_per_op.round() as u64,
                m.bytes_per_op,
                m.allocs_per_op,
                // At the precision the text carries it.
                m.store_bytes_per_op.map(go_precision),
            )
        };
        // The parser sorts targets by name, as benchtomd.awk does; compare by name.
        assert_eq!(parsed.targets.len(), original.targets.len());
        for want in &original.targets {
            let got = parsed
                .targets
                .iter()
                .find(|t| t.name == want.name)
                .unwrap_or_else(|| panic!("target {} lost", want.name));
            let names = |t: &crate::results::TargetResults| {
                t.benchmarks
                    .iter()
                    .map(|b| b.name.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(got), names(want));
            for (g, w) in got.benchmarks.iter().zip(&want.benchmarks) {
                let g: Vec<_> = g.runs.iter().map(figures).collect();
                let w: Vec<_> = w.runs.iter().map(figures).collect();
                assert_eq!(g, w, "{}/{}", want.name, got.name);
            }
        }
    }
}
