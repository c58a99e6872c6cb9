//! Reading one side of a comparison: the ns/op of every repetition of every benchmark, from a
//! coredata results directory or a Go benchmark text.
//!
//! A directory is read through its `bench.txt`, the Go text `edgebench coredata` writes with
//! one line per `--count` repetition, rather than `results.json`: it is what benchstat reads,
//! so `benchstat OLD/bench.txt NEW/bench.txt` shows the same medians and p-values, and a
//! directory can be compared with a Go text (the names are the same). The Go text keeps about
//! four significant digits of ns/op, more than the table shows.
//!
//! Samples are keyed by the whole benchmark name, `-N` suffix included, as benchstat keys
//! them: with `--parallel`, `RedisDB_TCP/AddReading` (1 client) and `RedisDB_TCP/AddReading-4`
//! stay apart, and a run on another number of CPUs does not pair with this one.

use std::path::Path;

use super::CompareError;
use crate::report::benchtomd::go_lines;

/// The file of a results directory that holds the repetitions.
pub const BENCH_TEXT: &str = "bench.txt";

/// One side of a comparison: every benchmark's ns/op repetitions, in first-seen order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// What the user gave (the path), for table headers.
    pub label: String,
    /// (whole Go name without `Benchmark`, ns/op of each repetition in run order).
    pub benchmarks: Vec<(String, Vec<f64>)>,
}

impl Samples {
    /// Reads a results directory (its `bench.txt`) or a Go benchmark text file.
    pub fn read(path: &Path) -> Result<Samples, CompareError> {
        let meta = std::fs::metadata(path).map_err(|e| CompareError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let file = if meta.is_dir() {
            let file = path.join(BENCH_TEXT);
            if !file.is_file() {
                return Err(CompareError::NoBenchText {
                    dir: path.display().to_string(),
                });
            }
            file
        } else {
            path.to_path_buf()
        };
        let bytes = std::fs::read(&file).map_err(|e| CompareError::Unreadable {
            path: file.display().to_string(),
            reason: e.to_string(),
        })?;
        let samples = Samples::from_go_text(
            &path.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
        if samples.benchmarks.is_empty() {
            return Err(CompareError::NoBenchmarks {
                path: file.display().to_string(),
            });
        }
        Ok(samples)
    }

    /// The samples of Go benchmark text: each `Benchmark…` line with ns/op is one repetition
    /// of the benchmark it names (lines benchtomd skips as malformed are skipped here too).
    pub fn from_go_text(label: &str, text: &str) -> Samples {
        let mut samples = Samples {
            label: label.to_string(),
            benchmarks: Vec::new(),
        };
        for line in go_lines(text) {
            let ns = line.measurement.ns_per_op;
            match samples.benchmarks.iter_mut().find(|(n, _)| n == line.name) {
                Some((_, values)) => values.push(ns),
                None => samples.benchmarks.push((line.name.to_string(), vec![ns])),
            }
        }
        samples
    }

    /// The repetitions of the benchmark with this whole name.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.benchmarks
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// A whole name cut into (target, benchmark) at its first `/`: edgebench names its Go lines
/// `{target}/{benchmark}-{N}`. A name without `/` (a plain `go test` benchmark) has no
/// target.
pub fn split_target(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or(("", name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitions_are_gathered_by_whole_name() {
        let text = "goos: linux\n\
            BenchmarkA/X-2\t100\t3000 ns/op\n\
            BenchmarkA/X\t100\t5 ns/op\n\
            BenchmarkPlain-8\t10\t7.5 ns/op\t0 B/op\n\
            BenchmarkA/X-2\t100\t1000 ns/op\n\
            BenchmarkA/Y-2\t100\tfast ns/op\n\
            PASS\n";
        let s = Samples::from_go_text("old.txt", text);
        assert_eq!(
            s.benchmarks,
            [
                ("A/X-2".to_string(), vec![3000.0, 1000.0]),
                ("A/X".to_string(), vec![5.0]),
                ("Plain-8".to_string(), vec![7.5]),
            ]
        );
        assert_eq!(s.get("A/X"), Some(&[5.0][..]));
        assert_eq!(s.get("A/Z"), None);
        assert_eq!(split_target("A/X/Y-2"), ("A", "X/Y-2"));
        assert_eq!(split_target("Plain-8"), ("", "Plain-8"));
    }

    #[test]
    fn bad_inputs_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = Samples::read(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("cannot read {}: ", missing.display())),
            "{err}"
        );
        assert_eq!(
            Samples::read(dir.path()).unwrap_err().to_string(),
            format!(
                "{} has no bench.txt: give a results directory written by edgebench coredata \
                 --out DIR, or a go test -bench text",
                dir.path().display()
            )
        );
        let prose = dir.path().join("notes.txt");
        std::fs::write(&prose, "Benchmarking is fun\n").unwrap();
        assert_eq!(
            Samples::read(&prose).unwrap_err().to_string(),
            format!(
                "no Go benchmark lines (BenchmarkName-P  N  T ns/op) in {}: give the output of \
                 go test -bench, or an edgebench coredata results directory",
                prose.display()
            )
        );
    }
}
