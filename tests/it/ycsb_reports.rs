//! YCSB's results in the reports as a user gets them: two load hosts' runs of one `--run-id`
//! (`edgebench ycsb load run` on the in-process engine), `report merge` of the two,
//! `report html` of the merge, and `report compare` of the hosts.

use std::path::Path;

use edgebench::ycsb::results::YcsbResults;

/// Runs the built edgebench with `args`: (exit code, stdout, stderr).
fn edgebench(args: &[&str]) -> (i32, String, String) {
    let out = crate::common::edgebench().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `edgebench ycsb load run` of workload A, 300 records and operations, on the engine in
/// process, with `--run-id RUN_ID`, into `dir`; its results.
fn ycsb(dir: &Path, run_id: &str) -> YcsbResults {
    let dir_arg = dir.display().to_string();
    let (code, _, stderr) = edgebench(&[
        "ycsb",
        "load",
        "run",
        "-P",
        concat!(env!("CARGO_MANIFEST_DIR"), "/etc/ycsb/workloada"),
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=300",
        "--target",
        "embedded",
        "--run-id",
        run_id,
        "--out",
        &dir_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    for file in [
        "results.md",
        "percentiles.md",
        "results.json",
        "report.html",
    ] {
        assert!(dir.join(file).is_file(), "the run writes {file}");
    }
    json(dir)
}

fn json(dir: &Path) -> YcsbResults {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap()
}

#[test]
fn two_hosts_merge_into_one_run_whose_page_and_comparison_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, merged) = (
        tmp.path().join("host-a"),
        tmp.path().join("host-b"),
        tmp.path().join("merged"),
    );
    let (ra, rb) = (ycsb(&a, "r1"), ycsb(&b, "r1"));
    let page = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(
        page.contains("edgebench ycsb: throughput and latency"),
        "the run's own page"
    );
    assert!(page.contains("run workloada: READ latency by percentile"));

    let (code, stdout, stderr) = edgebench(&[
        "report",
        "merge",
        &a.display().to_string(),
        &b.display().to_string(),
        "--out",
        &merged.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("merged 2 hosts"), "{stderr}");
    assert_eq!(
        stdout,
        std::fs::read_to_string(merged.join("results.md")).unwrap(),
        "report merge prints results.md"
    );
    let m = json(&merged);
    assert_eq!(m.kind, "ycsb");
    assert_eq!(m.hosts, 2);
    assert_eq!(m.run_id.as_deref(), Some("r1"));
    assert_eq!(m.steps, ["load workloada", "run workloada"]);
    assert_eq!(m.targets.len(), 1);
    for (i, step) in m.targets[0].steps.iter().enumerate() {
        let (sa, sb) = (&ra.targets[0].steps[i], &rb.targets[0].steps[i]);
        assert_eq!(step.operations, 600, "{}", step.step);
        assert_eq!(step.operations, sa.operations + sb.operations);
        // serde_json reads a float back to within an ulp or two of what it wrote.
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs();
        assert!(
            close(step.throughput, sa.throughput + sb.throughput),
            "{} ops/s is not {} + {}",
            step.throughput,
            sa.throughput,
            sb.throughput
        );
        assert_eq!(step.runtime_ms, sa.runtime_ms.max(sb.runtime_ms));
        let hosts: Vec<&str> = step.per_host.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(hosts, ["host-a", "host-b"]);
        assert!(close(step.per_host[0].throughput, sa.throughput));
        assert!(close(step.per_host[1].throughput, sb.throughput));
        assert_eq!(step.per_host[1].operations, sb.operations);
        let count = |s: &edgebench::ycsb::results::StepResults| -> u64 {
            s.ops
                .iter()
                .filter(|o| o.op != "CLEANUP")
                .map(|o| o.latency.count)
                .sum()
        };
        assert_eq!(
            count(step),
            600,
            "every operation's latency is in the total"
        );
    }

    // The merge's page, rebuilt from its files: its hosts beside the total.
    let (code, stdout, stderr) = edgebench(&["report", "html", &merged.display().to_string()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        merged.join("report.html").display().to_string()
    );
    let page = std::fs::read_to_string(merged.join("report.html")).unwrap();
    for part in [
        "<dt>load hosts</dt><dd>2</dd>",
        "<h2>Load hosts</h2>",
        "<td>host-b</td>",
        "load workloada: throughput",
        "run workloada: UPDATE latency by percentile",
        "<h2>Tables</h2>",
    ] {
        assert!(page.contains(part), "the merged page has {part}");
    }

    // The two hosts compared: one row per step on the one target.
    let (code, stdout, stderr) = edgebench(&[
        "report",
        "compare",
        &a.display().to_string(),
        &b.display().to_string(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| load") || l.starts_with("| run"))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(
        rows[1].starts_with("| run workloada | RedisDB_Embedded | "),
        "{stdout}"
    );

    // A merge is not merged again, and hosts of another run are refused.
    let c = tmp.path().join("host-c");
    ycsb(&c, "r2");
    for (paths, says) in [([&merged, &a], "already a merge"), ([&a, &c], "has \"r2\"")] {
        let (code, _, stderr) = edgebench(&[
            "report",
            "merge",
            &paths[0].display().to_string(),
            &paths[1].display().to_string(),
            "--out",
            &tmp.path().join("refused").display().to_string(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    assert!(!tmp.path().join("refused").exists());
}
