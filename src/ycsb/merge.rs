//! Merging `edgebench ycsb` load hosts ([`YcsbResults`], `results.json`) into one run: every
//! host ran the same steps on the same columns at the same time (one `--run-id`), each
//! against its own share of the keys or of the load.
//!
//! Per column and step: operations, statuses and throughputs add (the hosts ran
//! concurrently), so do client threads and `-target` (the rate offered); the runtime is the
//! longest host's; every latency series (actual start, intended start, failed, schedule lag)
//! is the hosts' HDR histograms added, so its percentiles are exactly those of one histogram
//! of every host's operations. Each host's own operations, runtime and throughput are kept in
//! [`StepResults::per_host`]. A step some host did not run (its target failed there) is left
//! out of the total and the column carries that host's error. YCSB's own export of a step is
//! one client's and stays in each host's directory: the merge has none.

use std::path::{Path, PathBuf};

use super::results::{HostStep, OpResults, Series, StepResults, TargetResults, YcsbResults};
use crate::report::merge::{decode, sum_histograms, MergeError};

/// The hosts (label, path, results), at least one, merged.
pub fn merge(hosts: Vec<(String, PathBuf, YcsbResults)>) -> Result<YcsbResults, MergeError> {
    let (_, first_path, first) = &hosts[0];
    for (_, path, r) in &hosts[1..] {
        if r.steps != first.steps {
            return Err(MergeError::shape(
                path,
                format!(
                    "ran the steps [{}] but {} ran [{}]: give every host the same steps \
                     (load, run, -P)",
                    r.steps.join(", "),
                    first_path.display(),
                    first.steps.join(", ")
                ),
            ));
        }
    }
    let mut out = first.clone();
    out.hosts = hosts.len();
    out.started = hosts
        .iter()
        .map(|(_, _, r)| r.started.clone())
        .min()
        .unwrap_or_default();
    out.targets = Vec::with_capacity(first.targets.len());
    for target in &first.targets {
        let mut of_hosts: Vec<(&str, &Path, &TargetResults)> = Vec::with_capacity(hosts.len());
        for (label, path, r) in &hosts {
            let t = r
                .targets
                .iter()
                .find(|t| t.column == target.column && t.binding == target.binding)
                .ok_or_else(|| {
                    MergeError::shape(
                        path,
                        format!(
                            "has no column {} ({}) but {} has: give every host the same \
                             --target and -db",
                            target.column,
                            target.binding,
                            first_path.display()
                        ),
                    )
                })?;
            of_hosts.push((label, path, t));
        }
        out.targets.push(total_target(&first.steps, &of_hosts)?);
    }
    Ok(out)
}

/// One column's hosts added up, step by step.
fn total_target(
    steps: &[String],
    hosts: &[(&str, &Path, &TargetResults)],
) -> Result<TargetResults, MergeError> {
    let first = hosts[0].2;
    let mut error = hosts
        .iter()
        .find_map(|(label, _, t)| t.error.as_ref().map(|e| format!("host {label}: {e}")));
    let mut merged = Vec::new();
    for step in steps {
        let ran: Vec<(&str, &Path, &StepResults)> = hosts
            .iter()
            .filter_map(|(l, p, t)| {
                t.steps
                    .iter()
                    .find(|s| &s.step == step)
                    .map(|s| (*l, *p, s))
            })
            .collect();
        if ran.is_empty() {
            continue;
        }
        if ran.len() < hosts.len() {
            if error.is_none() {
                let missing = hosts
                    .iter()
                    .find(|(_, _, t)| t.steps.iter().all(|s| &s.step != step))
                    .map(|(l, _, _)| *l)
                    .unwrap_or_default();
                error = Some(format!("host {missing} did not run {step}"));
            }
            continue;
        }
        merged.push(total_step(&ran)?);
    }
    Ok(TargetResults {
        column: first.column.clone(),
        describe: first.describe.clone(),
        binding: first.binding.clone(),
        steps: merged,
        error,
    })
}

/// The share of every host's throttled operations that started within 1 ms of their
/// intended start; `None` when no host was throttled.
fn within_1ms(hosts: &[(&str, &Path, &StepResults)]) -> Option<f64> {
    let (mut within, mut all) = (0.0, 0u64);
    for (_, _, s) in hosts {
        if let (Some(share), Some(lag)) = (s.schedule_within_1ms, &s.schedule_lag) {
            within += share * lag.count as f64;
            all += lag.count;
        }
    }
    (all > 0).then(|| within / all as f64)
}

/// One step of every host added up (see the module doc).
fn total_step(hosts: &[(&str, &Path, &StepResults)]) -> Result<StepResults, MergeError> {
    let first = hosts[0].2;
    let mut names: Vec<&str> = Vec::new();
    for (_, _, s) in hosts {
        for op in &s.ops {
            if !names.contains(&op.op.as_str()) {
                names.push(&op.op);
            }
        }
    }
    let ops = names
        .iter()
        .map(|name| {
            let of_hosts: Vec<(&Path, &OpResults)> = hosts
                .iter()
                .filter_map(|(_, p, s)| s.ops.iter().find(|o| o.op == *name).map(|o| (*p, o)))
                .collect();
            total_op(&first.step, &of_hosts)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let lags: Vec<(&Path, &Series)> = hosts
        .iter()
        .filter_map(|(_, p, s)| s.schedule_lag.as_ref().map(|l| (*p, l)))
        .collect();
    Ok(StepResults {
        step: first.step.clone(),
        threads: hosts.iter().map(|(_, _, s)| s.threads).sum(),
        target_ops: hosts.iter().map(|(_, _, s)| s.target_ops).sum(),
        runtime_ms: hosts
            .iter()
            .map(|(_, _, s)| s.runtime_ms)
            .max()
            .unwrap_or(0),
        operations: hosts.iter().map(|(_, _, s)| s.operations).sum(),
        throughput: hosts.iter().map(|(_, _, s)| s.throughput).sum(),
        stopped: hosts
            .iter()
            .find_map(|(label, _, s)| s.stopped.as_ref().map(|why| format!("host {label}: {why}"))),
        ops,
        schedule_lag: if lags.is_empty() {
            None
        } else {
            Some(sum(&first.step, "schedule lag", &lags)?)
        },
        // Each host's share weighted by its operations: the share of all of them.
        schedule_within_1ms: within_1ms(hosts),
        export: String::new(),
        per_host: hosts
            .iter()
            .map(|(label, _, s)| HostStep {
                host: label.to_string(),
                operations: s.operations,
                runtime_ms: s.runtime_ms,
                throughput: s.throughput,
            })
            .collect(),
    })
}

/// One operation of every host that measured it, added up.
fn total_op(step: &str, hosts: &[(&Path, &OpResults)]) -> Result<OpResults, MergeError> {
    let name = &hosts[0].1.op;
    let mut returns = std::collections::BTreeMap::new();
    for (_, o) in hosts {
        for (status, n) in &o.returns {
            *returns.entry(status.clone()).or_insert(0) += n;
        }
    }
    let series = |pick: fn(&OpResults) -> Option<&Series>| -> Vec<(&Path, &Series)> {
        hosts
            .iter()
            .filter_map(|(p, o)| pick(o).map(|s| (*p, s)))
            .collect()
    };
    let failed = series(|o| o.failed.as_ref());
    Ok(OpResults {
        op: name.clone(),
        returns,
        latency: sum(step, name, &series(|o| Some(&o.latency)))?,
        intended: sum(step, name, &series(|o| Some(&o.intended)))?,
        failed: if failed.is_empty() {
            None
        } else {
            Some(sum(step, &format!("{name}-FAILED"), &failed)?)
        },
    })
}

/// The series of the hosts' histograms added together; a histogram that does not decode
/// names its file and what it is.
fn sum(step: &str, what: &str, series: &[(&Path, &Series)]) -> Result<Series, MergeError> {
    let mut histograms = Vec::with_capacity(series.len());
    for (path, s) in series {
        if s.count == 0 && s.histogram.is_empty() {
            continue;
        }
        let h = decode(&s.histogram).ok_or_else(|| {
            MergeError::read(
                path,
                format!(
                    "{step}: the {what} histogram does not decode (is results.json complete? \
                     rerun that host)"
                ),
            )
        })?;
        histograms.push(h);
    }
    Ok(Series::of(&sum_histograms(&histograms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::merge::merge as merge_dirs;
    use crate::ycsb::html::tests::{histogram, op, run};
    use crate::ycsb::slice::{write, Ycsb};

    /// Host a's and host b's run: the same steps, b's READs and UPDATEs slower than a's and
    /// its run step longer.
    fn hosts() -> (YcsbResults, YcsbResults) {
        let a = run();
        let mut b = run();
        for t in &mut b.targets {
            let s = &mut t.steps[1];
            s.ops[0] = op("READ", 100_000..100_300);
            s.ops[1] = op("UPDATE", (0..300).map(|i| 300_000 + 7 * i));
            s.operations = 600;
            s.runtime_ms = 800;
            s.throughput = 750.0;
        }
        (a, b)
    }

    fn merged() -> YcsbResults {
        let (a, b) = hosts();
        merge(vec![
            ("a".into(), "a".into(), a),
            ("b".into(), "b".into(), b),
        ])
        .unwrap()
    }

    /// Every figure of a series but its encoding.
    fn figures(s: &Series) -> (u64, f64, [u64; 5]) {
        (
            s.count,
            s.mean_ns,
            [s.p50_ns, s.p95_ns, s.p99_ns, s.p999_ns, s.max_ns],
        )
    }

    #[test]
    fn counts_and_throughputs_add_and_percentiles_are_of_all_operations() {
        let (a, b) = hosts();
        let m = merged();
        assert_eq!(m.hosts, 2);
        assert_eq!(m.steps, a.steps);
        for (i, t) in m.targets.iter().enumerate() {
            let (sa, sb) = (&a.targets[i].steps[1], &b.targets[i].steps[1]);
            let s = &t.steps[1];
            assert_eq!(s.operations, sa.operations + sb.operations);
            assert_eq!(s.operations, 1600);
            assert_eq!(s.throughput, sa.throughput + sb.throughput);
            assert_eq!(s.runtime_ms, 800, "the longest host's");
            assert_eq!(s.threads, 2);
            assert_eq!(s.export, "");
            assert_eq!(
                s.per_host,
                [
                    HostStep {
                        host: "a".into(),
                        operations: sa.operations,
                        runtime_ms: 500,
                        throughput: sa.throughput,
                    },
                    HostStep {
                        host: "b".into(),
                        operations: 600,
                        runtime_ms: 800,
                        throughput: 750.0,
                    }
                ]
            );
            let read = &s.ops[0];
            assert_eq!(read.op, "READ");
            assert_eq!(read.returns["OK"], 800);
            // One histogram of every read of both hosts.
            let base = if i == 0 { 10_000 } else { 40_000 };
            let all = histogram((0..500).map(|i| base + i).chain(100_000..100_300));
            assert_eq!(figures(&read.latency), figures(&Series::of(&all)));
            assert_eq!(figures(&read.intended), figures(&Series::of(&all)));
            // p99 is host b's tail, which neither host's own p99 nor their mean is.
            assert!(read.latency.p99_ns >= 100_000);
            assert_ne!(
                read.latency.p99_ns,
                (sa.ops[0].latency.p99_ns + sb.ops[0].latency.p99_ns) / 2
            );
            let update = histogram(
                (0..500)
                    .map(|i| 2 * base + i)
                    .chain((0..300).map(|i| 300_000 + 7 * i)),
            );
            assert_eq!(figures(&s.ops[1].latency), figures(&Series::of(&update)));
            assert_eq!(s.ops[2].op, "CLEANUP");
            assert_eq!(s.ops[2].returns["OK"], 2);
            // The load: the same on both hosts, so twice of everything.
            let load = &t.steps[0];
            assert_eq!(load.operations, 2000);
            assert_eq!(load.ops[0].latency.count, 2000);
            assert_eq!(
                load.ops[0].latency.p50_ns,
                a.targets[i].steps[0].ops[0].latency.p50_ns
            );
        }
    }

    #[test]
    fn a_host_without_a_step_leaves_it_out_with_its_error() {
        let (a, mut b) = hosts();
        b.targets[1].steps.truncate(1);
        b.targets[1].error = Some("connection refused".into());
        let m = merge(vec![
            ("a".into(), "a".into(), a.clone()),
            ("b".into(), "b".into(), b),
        ])
        .unwrap();
        assert_eq!(m.targets[0].steps.len(), 2);
        assert_eq!(m.targets[1].steps.len(), 1);
        assert_eq!(
            m.targets[1].error.as_deref(),
            Some("host b: connection refused")
        );
        let mut c = a.clone();
        c.steps.pop();
        let e = merge(vec![
            ("a".into(), "a".into(), a),
            ("c".into(), "c".into(), c),
        ])
        .unwrap_err();
        assert!(
            e.to_string().contains("give every host the same steps"),
            "{e}"
        );
    }

    /// Writes each run into its own directory under a temp dir.
    fn dirs(runs: &[(&str, &YcsbResults)]) -> (tempfile::TempDir, Vec<PathBuf>) {
        let tmp = tempfile::tempdir().unwrap();
        let paths = runs
            .iter()
            .map(|(name, r)| {
                let dir = tmp.path().join(name);
                write(&dir, r).unwrap();
                dir
            })
            .collect();
        (tmp, paths)
    }

    #[test]
    fn report_merge_reads_directories_and_refuses_what_it_must() {
        let workloads: &[&dyn crate::report::Workload] = &[&crate::coredata::CoreData, &Ycsb];
        let (a, b) = hosts();
        let (tmp, paths) = dirs(&[("a", &a), ("b", &b)]);
        let out = tmp.path().join("merged");
        let md = merge_dirs(workloads, &paths, false)
            .unwrap()
            .write(&out)
            .unwrap();
        assert_eq!(md, std::fs::read(out.join("results.md")).unwrap());
        for file in [
            "results.md",
            "percentiles.md",
            "results.json",
            "report.html",
        ] {
            assert!(out.join(file).is_file(), "{file}");
        }
        let back: YcsbResults =
            serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
        assert_eq!(
            back,
            merged(),
            "the hosts are labelled by their directories' names"
        );

        // A merge is not merged again.
        let again = merge_dirs(workloads, &[out.clone(), paths[0].clone()], false).unwrap_err();
        assert!(again.to_string().contains("already a merge"), "{again}");

        // Another run's host: refused, unless forced.
        let mut other = b.clone();
        other.run_id = Some("r2".into());
        let (_tmp2, others) = dirs(&[("b", &other)]);
        let pair = [paths[0].clone(), others[0].clone()];
        let e = merge_dirs(workloads, &pair, false).unwrap_err();
        assert!(
            matches!(e, MergeError::RunIds { .. }) && e.to_string().contains("\"r2\""),
            "{e}"
        );
        assert!(merge_dirs(workloads, &pair, true).is_ok());

        // A core-data run beside a YCSB one: two workloads.
        let coredata = tmp.path().join("coredata");
        let mut results = crate::results::RunResults::default();
        results.meta.workload = "coredata".into();
        results.meta.run_id = Some("r1".into());
        crate::report::write_files(&coredata, &results).unwrap();
        let e = merge_dirs(workloads, &[paths[0].clone(), coredata], false).unwrap_err();
        assert!(matches!(e, MergeError::Mixed { .. }), "{e}");
    }
}
