//! Merging `edgebench coredata` hosts ([`RunResults`]). For each column (target and
//! `--parallel` level) the merged results hold the total column, under the column's own name,
//! followed by each host's column renamed `NAME@HOST`, so every existing exporter (results.md,
//! bench.txt, the CSV, report.html) shows the hosts beside their total.
//!
//! A total measurement is the hosts' repetition `k` added up: iterations add; throughput adds
//! (ns/op = 1e9 / Σ ops/s: the hosts ran concurrently); B/op, allocs/op and the store growth
//! per op are averages weighted by iterations; the percentiles are read from the hosts'
//! histograms added together.

use std::path::{Path, PathBuf};

use crate::report::merge::{decode, sum_histograms, MergeError};
use crate::results::{BenchResults, Measurement, RunResults, TargetResults};

/// The hosts (label, path, results), at least one, merged.
pub fn merge(hosts: Vec<(String, PathBuf, RunResults)>) -> Result<RunResults, MergeError> {
    let (_, first_path, first) = &hosts[0];
    let mut meta = first.meta.clone();
    meta.hosts = hosts.iter().map(|(l, _, _)| l.clone()).collect();
    for (_, path, r) in &hosts[1..] {
        if r.meta.count != meta.count {
            return Err(MergeError::shape(
                path,
                format!(
                    "ran --count {} but {} ran --count {}: give every host the same --count",
                    r.meta.count,
                    first_path.display(),
                    meta.count
                ),
            ));
        }
    }
    let mut targets = Vec::new();
    for column in &first.targets {
        let key = column.column();
        let mut of_hosts: Vec<(&str, &Path, &TargetResults)> = Vec::new();
        for (label, path, r) in &hosts {
            let t = r
                .targets
                .iter()
                .find(|t| t.column() == key)
                .ok_or_else(|| {
                    MergeError::shape(
                        path,
                        format!(
                        "has no column {key} but {} has: give every host the same --target and \
                         --parallel",
                        first_path.display()
                    ),
                    )
                })?;
            of_hosts.push((label, path, t));
        }
        targets.push(total_column(&of_hosts)?);
        for (label, _, t) in &of_hosts {
            let mut own = (*t).clone();
            own.name = format!("{}@{label}", t.name);
            targets.push(own);
        }
    }
    Ok(RunResults { meta, targets })
}

/// One column's hosts added up, benchmark by benchmark (the first host's benchmarks, in its
/// order; a benchmark some host did not finish is left out of the total).
fn total_column(hosts: &[(&str, &Path, &TargetResults)]) -> Result<TargetResults, MergeError> {
    let first = hosts[0].2;
    let mut out = TargetResults::new(&first.name, first.parallel);
    out.endpoint.clone_from(&first.endpoint);
    out.error = hosts
        .iter()
        .find_map(|(label, _, t)| t.error.as_ref().map(|e| format!("host {label}: {e}")));
    'bench: for bench in &first.benchmarks {
        let mut of_bench = Vec::with_capacity(hosts.len());
        for (_, path, t) in hosts {
            match t.bench(&bench.name) {
                Some(b) if b.runs.len() == bench.runs.len() => of_bench.push((*path, b)),
                _ => continue 'bench,
            }
        }
        let runs = (0..bench.runs.len())
            .map(|k| {
                let reps: Vec<(&Path, &Measurement)> =
                    of_bench.iter().map(|(p, b)| (*p, &b.runs[k])).collect();
                total_measurement(&bench.name, &reps)
            })
            .collect::<Result<_, _>>()?;
        out.benchmarks.push(BenchResults {
            name: bench.name.clone(),
            runs,
            not_applicable: bench.not_applicable.clone(),
        });
    }
    Ok(out)
}

/// The hosts' measurements of one repetition, added up (see the module doc).
pub fn total_measurement(
    bench: &str,
    reps: &[(&Path, &Measurement)],
) -> Result<Measurement, MergeError> {
    let mut histograms = Vec::with_capacity(reps.len());
    for (path, m) in reps {
        histograms.push(decode(&m.histogram).ok_or_else(|| {
            MergeError::shape(
                path,
                format!(
                    "has no latency histogram for {bench} (results of an older edgebench); \
                     rerun the hosts with this one"
                ),
            )
        })?);
    }
    let h = sum_histograms(&histograms);
    let n: u64 = reps.iter().map(|(_, m)| m.n).sum();
    let ops_per_sec: f64 = reps.iter().map(|(_, m)| m.ops_per_sec()).sum();
    let weighted = |f: &dyn Fn(&Measurement) -> u64| {
        let sum: u128 = reps
            .iter()
            .map(|(_, m)| u128::from(f(m)) * u128::from(m.n))
            .sum();
        u64::try_from(sum / u128::from(n.max(1))).unwrap_or(u64::MAX)
    };
    let store_bytes_per_op = reps
        .iter()
        .map(|(_, m)| m.store_bytes_per_op.map(|b| b * m.n as f64))
        .sum::<Option<f64>>()
        .map(|sum| sum / n.max(1) as f64);
    Ok(Measurement {
        n,
        ns_per_op: if ops_per_sec > 0.0 {
            1e9 / ops_per_sec
        } else {
            0.0
        },
        bytes_per_op: weighted(&|m| m.bytes_per_op),
        allocs_per_op: weighted(&|m| m.allocs_per_op),
        p50_ns: h.value_at_quantile(0.50),
        p90_ns: h.value_at_quantile(0.90),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
        histogram: crate::runner::stats::encoded(&h),
        store_bytes_per_op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::stats::{encoded, latency_histogram};

    fn measurement(values: &[u64], ns_per_op: f64, bytes: u64) -> Measurement {
        let mut h = latency_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        Measurement {
            n: values.len() as u64,
            ns_per_op,
            bytes_per_op: bytes,
            histogram: encoded(&h),
            store_bytes_per_op: Some(bytes as f64),
            ..Measurement::default()
        }
    }

    fn host(values: &[u64], ns_per_op: f64, bytes: u64) -> RunResults {
        let mut t = TargetResults::new("RedisDB_TCP", 1);
        t.benchmarks.push(BenchResults {
            name: "AddEvent".into(),
            runs: vec![measurement(values, ns_per_op, bytes)],
            not_applicable: None,
        });
        let mut r = RunResults::default();
        r.meta.workload = "coredata".into();
        r.meta.count = 1;
        r.targets.push(t);
        r
    }

    #[test]
    fn totals_add_and_percentiles_come_from_all_values() {
        let a: Vec<u64> = (1..=1000).map(|i| i * 37).collect();
        let b: Vec<u64> = (1..=3000).map(|i| 5000 + i * i).collect();
        let merged = merge(vec![
            ("h1".into(), "h1".into(), host(&a, 1000.0, 100)),
            ("h2".into(), "h2".into(), host(&b, 250.0, 200)),
        ])
        .unwrap();
        let columns: Vec<String> = merged.targets.iter().map(|t| t.column()).collect();
        assert_eq!(columns, ["RedisDB_TCP", "RedisDB_TCP@h1", "RedisDB_TCP@h2"]);
        assert_eq!(merged.meta.hosts, ["h1", "h2"]);
        let total = &merged.targets[0].benchmarks[0].runs[0];
        assert_eq!(total.n, 4000);
        // 1e6 ops/s + 4e6 ops/s.
        assert_eq!(total.ops_per_sec(), 5_000_000.0);
        // (100·1000 + 200·3000) / 4000.
        assert_eq!(total.bytes_per_op, 175);
        assert_eq!(total.store_bytes_per_op, Some(175.0));
        let mut all = latency_histogram();
        for v in a.iter().chain(&b) {
            all.record(*v).unwrap();
        }
        assert_eq!(total.p50_ns, all.value_at_quantile(0.5));
        assert_eq!(total.p90_ns, all.value_at_quantile(0.9));
        assert_eq!(total.p99_ns, all.value_at_quantile(0.99));
        assert_eq!(total.p999_ns, all.value_at_quantile(0.999));
        assert_eq!(total.max_ns, all.max());
        assert_eq!(decode(&total.histogram).unwrap(), all);
        // The hosts' own figures, unchanged.
        assert_eq!(merged.targets[2].benchmarks[0].runs[0].n, 3000);
        assert_eq!(merged.targets[1].benchmarks[0].runs[0].ns_per_op, 1000.0);
    }

    #[test]
    fn hosts_that_ran_other_columns_or_counts_are_refused() {
        let mut other = host(&[1], 1.0, 0);
        other.targets[0].name = "Embedded".into();
        let e = merge(vec![
            ("h1".into(), "h1".into(), host(&[1], 1.0, 0)),
            ("h2".into(), "h2".into(), other),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("no column RedisDB_TCP"), "{e}");
        let mut counted = host(&[1], 1.0, 0);
        counted.meta.count = 3;
        let e = merge(vec![
            ("h1".into(), "h1".into(), host(&[1], 1.0, 0)),
            ("h2".into(), "h2".into(), counted),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("--count"), "{e}");
    }
}
