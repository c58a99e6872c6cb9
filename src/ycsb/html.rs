//! The YCSB page: for each step, every target's throughput (one bar each) and, for each of
//! the step's operations, every target's latency at each percentile (one curve each, from the
//! operation's full HDR histogram); in a merge, each load host's throughput beside the total;
//! then `results.md` and `percentiles.md`.
//!
//! The page is a function of [`YcsbResults`] alone, so the page the run writes after each
//! step and the one `report html DIR` rebuilds from `results.json` are the same page.
//! CLEANUP (one call per client thread) and the `-FAILED` series are in the tables, not
//! charted: a curve of a handful of values says nothing.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::measure::Op;
use super::results::{self, group, StepResults, YcsbResults};
use crate::report::html::charts::{self, Bar, Chart, ChartError, Line, Palette, Unit};
use crate::report::html::{latency, markdown, Report, Section, FILE};
use crate::report::Exporter as _;

/// Writes a YCSB run's `report.html` into `dir` (after every step, beside the other files).
pub fn write(dir: &Path, results: &YcsbResults) -> io::Result<()> {
    let report = report(results, Vec::new()).map_err(io::Error::other)?;
    report.write(&dir.join(FILE), false).map(drop)
}

/// The throughput section's title.
pub const THROUGHPUT: &str = "Throughput per step";
/// The latency section's title.
pub const LATENCY: &str = "Latency by percentile";
/// The merged hosts' section's title.
pub const HOSTS: &str = "Load hosts";
/// The tables' section's title.
pub const TABLES: &str = "Tables";

/// The page of `results` (one run, a merge, or several directories put together with each
/// column named `label: column`); `facts` come first, then the run's own (its command when
/// it has one, when it started, its steps and targets).
pub fn report(results: &YcsbResults, facts: Vec<(String, String)>) -> Result<Report, ChartError> {
    let mut report = Report::new(
        "edgebench ycsb: throughput and latency per step and target",
        "YCSB's core workloads, step by step, on every target: more operations per second and \
         lower latency are better; a curve that rises steeply on the right has a long tail.",
        facts.into_iter().chain(run_facts(results)).collect(),
    );
    let palette = Palette::new(results.targets.iter().map(|t| t.column.as_str()));
    let bars = results
        .steps
        .iter()
        .filter_map(|step| throughput_chart(results, step, &palette))
        .collect();
    let added = if results.hosts > 0 {
        format!(
            " The {} load hosts' throughputs are added (they ran at the same time).",
            results.hosts
        )
    } else {
        String::new()
    };
    report.push_charts(
        THROUGHPUT,
        &format!(
            "<p class=\"note\">One bar per target: YCSB's <code>Throughput(ops/sec)</code> of \
             the step, longer is better; each bar says how many times slower than the fastest \
             it is.{added}</p>"
        ),
        bars,
    )?;
    let curves = results
        .steps
        .iter()
        .flat_map(|step| {
            operations(results, step)
                .into_iter()
                .filter_map(|op| latency_chart(results, step, &op, &palette))
                .collect::<Vec<_>>()
        })
        .collect();
    report.push_charts(
        LATENCY,
        "<p class=\"note\">Each operation's latency at every percentile, from its full HDR \
         histogram (the OK operations, from their actual start; dashed, from their intended \
         start, when the step was throttled with <code>-target</code>). The x axis is \
         HdrHistogram's: 1/(1−p), so the tail gets as much room as the median.</p>",
        curves,
    )?;
    if let Some(html) = hosts_table(results) {
        report.push(Section::new(HOSTS, html));
    }
    report.push(Section::new(TABLES, tables(results)));
    Ok(report)
}

/// What `results.json` says about the run: its command (when not empty), when it started,
/// the run id and hosts of a merge, its steps and targets.
fn run_facts(r: &YcsbResults) -> Vec<(String, String)> {
    let mut facts = Vec::new();
    if !r.command.is_empty() {
        facts.push(("command".into(), r.command.clone()));
    }
    if !r.started.is_empty() {
        facts.push(("started".into(), r.started.clone()));
    }
    facts.push(("edgebench".into(), env!("CARGO_PKG_VERSION").into()));
    if let Some(id) = &r.run_id {
        facts.push(("run id".into(), id.clone()));
    }
    if r.hosts > 0 {
        facts.push(("load hosts".into(), r.hosts.to_string()));
    }
    facts.push(("steps".into(), r.steps.join(", ")));
    let targets: Vec<String> = r
        .targets
        .iter()
        .map(|t| {
            let mut s = format!("{} ({}", t.column, t.binding);
            if !t.describe.is_empty() {
                let _ = write!(s, ", {}", t.describe);
            }
            s.push(')');
            if let Some(e) = &t.error {
                let _ = write!(s, " failed: {e}");
            }
            s
        })
        .collect();
    facts.push(("targets".into(), targets.join("; ")));
    facts
}

/// `step` on each target that ran it, in column order.
fn ran<'a>(r: &'a YcsbResults, step: &'a str) -> impl Iterator<Item = (&'a str, &'a StepResults)> {
    r.targets.iter().filter_map(move |t| {
        t.steps
            .iter()
            .find(|s| s.step == step)
            .map(|s| (t.column.as_str(), s))
    })
}

/// One step's bars: each target's throughput, in column order (a target keeps its place and
/// colour in every chart); `None` when no target ran it.
fn throughput_chart(r: &YcsbResults, step: &str, palette: &Palette) -> Option<Chart> {
    let ran: Vec<(&str, &StepResults)> = ran(r, step).collect();
    let fastest = ran.iter().map(|(_, s)| s.throughput).fold(0.0, f64::max);
    if ran.is_empty() {
        return None;
    }
    let bars = ran
        .iter()
        .map(|(column, s)| {
            let mut note = format!(
                "{} ops/s · {}",
                charts::count(s.throughput),
                slower(s.throughput, fastest)
            );
            if s.stopped.is_some() {
                note.push_str(" · stopped early");
            }
            Bar {
                name: column.to_string(),
                colour: palette.colour(column),
                value: s.throughput,
                low: s.throughput,
                high: s.throughput,
                note,
            }
        })
        .collect();
    Some(Chart::bars(
        &format!("{step}: throughput"),
        "operations per second",
        Unit::Count,
        bars,
    ))
}

/// `fastest`, or how many times slower than the fastest a throughput is (`1.91× slower`).
fn slower(throughput: f64, fastest: f64) -> String {
    if throughput >= fastest || fastest <= 0.0 {
        "fastest".to_string()
    } else if throughput <= 0.0 {
        "none".to_string()
    } else {
        format!("{:.2}× slower", fastest / throughput)
    }
}

/// The operations `step` measured on any target, first seen first, without CLEANUP.
fn operations(r: &YcsbResults, step: &str) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    for (_, s) in ran(r, step) {
        for op in &s.ops {
            if op.op != Op::Cleanup.name() && !ops.contains(&op.op) {
                ops.push(op.op.clone());
            }
        }
    }
    ops
}

/// One operation of one step: a curve per target (from the actual start), and a dashed one
/// from the intended start where the step was throttled.
fn latency_chart(r: &YcsbResults, step: &str, op: &str, palette: &Palette) -> Option<Chart> {
    let mut lines = Vec::new();
    for (column, s) in ran(r, step) {
        let Some(o) = s.ops.iter().find(|o| o.op == op) else {
            continue;
        };
        let colour = palette.colour(column);
        if let Some(points) = latency::curve_of(&o.latency.histogram) {
            lines.push(Line {
                name: column.to_string(),
                colour,
                dashed: false,
                points,
            });
        }
        if s.target_ops > 0.0 {
            if let Some(points) = latency::curve_of(&o.intended.histogram) {
                lines.push(Line {
                    name: format!("{column} (intended start)"),
                    colour,
                    dashed: true,
                    points,
                });
            }
        }
    }
    latency::chart(
        &format!("{step}: {op} latency by percentile"),
        "latency of one operation",
        lines,
    )
}

/// In a merge, each host's figures beside the total, step by step and target by target;
/// `None` for one host's run.
fn hosts_table(r: &YcsbResults) -> Option<String> {
    let mut md = String::from(
        "| step | target | host | operations | runtime ms | ops/s |\n|-|-|-|-:|-:|-:|\n",
    );
    let mut any = false;
    for step in &r.steps {
        for (column, s) in ran(r, step) {
            for h in &s.per_host {
                any = true;
                let _ = writeln!(
                    md,
                    "| {step} | {column} | {} | {} | {} | {} |",
                    h.host,
                    group(h.operations),
                    group(h.runtime_ms),
                    group(h.throughput.round() as u64)
                );
            }
            if !s.per_host.is_empty() {
                let _ = writeln!(
                    md,
                    "| {step} | {column} | **all** | {} | {} | {} |",
                    group(s.operations),
                    group(s.runtime_ms),
                    group(s.throughput.round() as u64)
                );
            }
        }
    }
    any.then(|| {
        format!(
            "<p class=\"note\">Each load host's own figures and their total (operations and \
             ops/s added, the longest runtime); the p99 of the total is that of all the \
             hosts' operations together, from their histograms added.</p>\n{}",
            markdown(&md)
        )
    })
}

/// `results.md` and `percentiles.md`, as the run wrote them.
fn tables(r: &YcsbResults) -> String {
    let percentiles = results::Percentiles
        .render(r)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    format!(
        "{}\n<h3>Percentiles per operation (µs)</h3>\n{}",
        markdown(&results::table(r)),
        markdown(&percentiles)
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::html::charts::Marks;
    use crate::ycsb::results::{HostStep, OpResults, Series, TargetResults};
    use hdrhistogram::Histogram;

    /// A histogram of `values` ns.
    pub fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = crate::runner::stats::latency_histogram();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    /// An operation whose latencies (actual and intended start) are `values` ns.
    pub fn op(name: &str, values: impl IntoIterator<Item = u64> + Clone) -> OpResults {
        let h = histogram(values);
        OpResults {
            op: name.into(),
            returns: [("OK".to_string(), h.len())].into(),
            latency: Series::of(&h),
            intended: Series::of(&h),
            failed: None,
        }
    }

    /// A step that did `ops` in `runtime_ms`.
    pub fn step(name: &str, runtime_ms: u64, ops: Vec<OpResults>) -> StepResults {
        let operations = ops
            .iter()
            .filter(|o| o.op != "CLEANUP")
            .map(|o| o.latency.count)
            .sum();
        StepResults {
            step: name.into(),
            threads: 1,
            runtime_ms,
            operations,
            throughput: operations as f64 * 1000.0 / runtime_ms as f64,
            ops,
            ..StepResults::default()
        }
    }

    /// Two targets, a load and a run of workload A; the second target's run is slower.
    pub fn run() -> YcsbResults {
        let load = |ms| step("load workloada", ms, vec![op("INSERT", 1_000..2_000)]);
        let run = |base: u64| {
            step(
                "run workloada",
                500,
                vec![
                    op("READ", (0..500).map(move |i| base + i)),
                    op("UPDATE", (0..500).map(move |i| 2 * base + i)),
                    op("CLEANUP", [700]),
                ],
            )
        };
        YcsbResults {
            kind: results::KIND.into(),
            command: "edgebench ycsb load run -P etc/ycsb/workloada".into(),
            started: "2026-12-07T20:00:00+00:00".into(),
            run_id: Some("r1".into()),
            hosts: 0,
            steps: vec!["load workloada".into(), "run workloada".into()],
            targets: vec![
                TargetResults {
                    column: "RedisDB_Embedded".into(),
                    describe: "in-process".into(),
                    binding: "redis".into(),
                    steps: vec![load(1000), run(10_000)],
                    error: None,
                },
                TargetResults {
                    column: "Embedded_Direct".into(),
                    describe: String::new(),
                    binding: "redis".into(),
                    steps: vec![load(500), run(40_000)],
                    error: None,
                },
            ],
        }
    }

    fn titles(report: &Report) -> Vec<&str> {
        report.charts.iter().map(|c| c.title.as_str()).collect()
    }

    #[test]
    fn page_has_a_bar_chart_per_step_and_a_curve_chart_per_operation() {
        let r = run();
        let report = report(&r, Vec::new()).unwrap();
        assert_eq!(
            titles(&report),
            [
                "load workloada: throughput",
                "run workloada: throughput",
                "load workloada: INSERT latency by percentile",
                "run workloada: READ latency by percentile",
                "run workloada: UPDATE latency by percentile",
            ],
            "no chart of CLEANUP"
        );
        let sections: Vec<&str> = report
            .page
            .sections
            .iter()
            .map(|s| s.title.as_str())
            .collect();
        assert_eq!(sections, [THROUGHPUT, LATENCY, TABLES], "no hosts: one run");
        assert_eq!(report.page.sections[0].figures.len(), 2);
        assert_eq!(report.page.sections[1].figures.len(), 3);

        // The load's bars: 1,000 inserts in 1 s and in 0.5 s, in column order.
        let Marks::Bars(bars) = &report.charts[0].marks else {
            panic!("bars")
        };
        let bars: Vec<(&str, f64, &str)> = bars
            .iter()
            .map(|b| (b.name.as_str(), b.value, b.note.as_str()))
            .collect();
        assert_eq!(
            bars,
            [
                ("RedisDB_Embedded", 1000.0, "1k ops/s · 2.00× slower"),
                ("Embedded_Direct", 2000.0, "2k ops/s · fastest"),
            ]
        );
        // The READ curves: one per target, ending at its slowest read.
        let Marks::Lines(lines) = &report.charts[3].marks else {
            panic!("lines")
        };
        let ends: Vec<(&str, bool, f64)> = lines
            .iter()
            .map(|l| (l.name.as_str(), l.dashed, l.points.last().unwrap().1))
            .collect();
        let slowest = |base: u64| histogram((0..500).map(|i| base + i)).max() as f64;
        assert_eq!(
            ends,
            [
                ("RedisDB_Embedded", false, slowest(10_000)),
                ("Embedded_Direct", false, slowest(40_000)),
            ]
        );

        let facts = &report.page.facts;
        let fact = |k: &str| facts.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str());
        assert_eq!(
            fact("command"),
            Some("edgebench ycsb load run -P etc/ycsb/workloada")
        );
        assert_eq!(fact("started"), Some("2026-12-07T20:00:00+00:00"));
        assert_eq!(fact("steps"), Some("load workloada, run workloada"));
        assert_eq!(fact("load hosts"), None);
        let tables = &report.page.sections[2].html;
        assert!(tables.contains("<td>run workloada</td>"), "{tables}");
        assert!(tables.contains("Percentiles per operation"), "{tables}");
        assert!(report.page.render().contains("RedisDB_Embedded"));
    }

    #[test]
    fn throttled_steps_add_the_intended_start_curve_and_merges_their_hosts() {
        let mut r = run();
        r.hosts = 2;
        let s = &mut r.targets[0].steps[1];
        s.target_ops = 1000.0;
        s.per_host = vec![
            HostStep {
                host: "a".into(),
                operations: 600,
                runtime_ms: 500,
                throughput: 1200.0,
            },
            HostStep {
                host: "b".into(),
                operations: 400,
                runtime_ms: 450,
                throughput: 888.9,
            },
        ];
        let report = report(&r, Vec::new()).unwrap();
        let Marks::Lines(lines) = &report.charts[3].marks else {
            panic!("lines")
        };
        let names: Vec<(&str, bool)> = lines.iter().map(|l| (l.name.as_str(), l.dashed)).collect();
        assert_eq!(
            names,
            [
                ("RedisDB_Embedded", false),
                ("RedisDB_Embedded (intended start)", true),
                ("Embedded_Direct", false),
            ]
        );
        let hosts = report
            .page
            .sections
            .iter()
            .find(|s| s.title == HOSTS)
            .expect("a hosts section in a merge");
        assert!(hosts
            .html
            .contains("<td>run workloada</td><td>RedisDB_Embedded</td><td>b</td>"));
        assert!(
            hosts.html.contains("<strong>all</strong>"),
            "{}",
            hosts.html
        );
        assert!(report.page.sections[0].html.contains("2 load hosts"));
    }
}
