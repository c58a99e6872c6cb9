//! The perf page: per PadoGrid group, each app's (target's) M throughput and M latency, from
//! the `results-group-all.csv` that `create_csv -all` writes, and the comparison table
//! (`results-group-all.md`) beside it.
//!
//! A bar is the median over the app's runs of the group, its whisker the smallest and
//! largest run: the comparison table's median and min–max, computed the same way. Figures PadoGrid printed as
//! something other than a number (`∞` for a run too short to time) are left out.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::perf::csv::ResultsKind;
use crate::report::html::charts::{self, Bar, Chart, ChartError, Palette, Unit};
use crate::report::html::{markdown, this_process, Report, Section, FILE};

/// Writes `root/report.html` from the `-all` CSVs `create_csv -all` has just written there.
pub fn write(root: &Path) -> io::Result<()> {
    let view = PerfView::read(root, None).map_err(io::Error::other)?;
    let report = report(&view, this_process()).map_err(io::Error::other)?;
    report.write(&root.join(FILE), false).map(drop)
}

/// One group run: a row of `results-group-all.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRun {
    /// The app (`perf_test_<target>`), possibly prefixed by its directory.
    pub app: String,
    /// The group id.
    pub group: String,
    /// M Throughput, invocations/s.
    pub throughput: f64,
    /// M Latency, ms.
    pub latency_ms: f64,
}

/// What the perf page shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerfView {
    /// Every group run, in the CSV's order.
    pub runs: Vec<GroupRun>,
    /// `results-group-all.md`.
    pub markdown: String,
}

/// The perf results could not be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read {}: {error} (run `edgebench perf create_csv -all` first; it writes it)",
    path.display()
)]
pub struct PerfError {
    path: PathBuf,
    error: std::io::Error,
}

impl PerfView {
    /// Reads `root`'s `-all` CSV and comparison; apps are prefixed with `label: ` when given.
    pub fn read(root: &Path, label: Option<&str>) -> Result<PerfView, PerfError> {
        let path = root.join(ResultsKind::Group.all_csv_name());
        let csv = std::fs::read_to_string(&path).map_err(|error| PerfError { path, error })?;
        let markdown = std::fs::read_to_string(root.join(crate::perf::apps::GROUP_COMPARISON))
            .unwrap_or_default();
        let mut runs = group_runs(&csv);
        if let Some(label) = label {
            for r in &mut runs {
                r.app = format!("{label}: {}", r.app);
            }
        }
        Ok(PerfView { runs, markdown })
    }
}

/// The rows of a group CSV. App and Group are columns 1 and 4; the M figures are the 4th and
/// 3rd from the end, because a `,` inside Comment or Operations shifts the middle columns.
fn group_runs(csv: &str) -> Vec<GroupRun> {
    csv.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(", ").map(str::trim).collect();
            let from_end = |k: usize| cols.len().checked_sub(k).map(|i| cols[i]);
            if cols.len() < 22 {
                return None;
            }
            Some(GroupRun {
                app: cols[0].to_string(),
                group: cols[3].to_string(),
                throughput: from_end(4)?.parse().unwrap_or(f64::NAN),
                latency_ms: from_end(3)?.parse().unwrap_or(f64::NAN),
            })
        })
        .collect()
}

/// The median (as the comparison table computes it: [`crate::runner::stats::median`]),
/// smallest and largest of the finite `values`; `None` with none.
fn median_range(mut values: Vec<f64>) -> Option<(f64, f64, f64)> {
    let mid = crate::runner::stats::median(&mut values);
    // `values` is now the finite ones, sorted.
    Some((mid, *values.first()?, *values.last()?))
}

/// The perf page of `view`.
pub fn report(view: &PerfView, facts: Vec<(String, String)>) -> Result<Report, ChartError> {
    let mut report = Report::new(
        "edgebench perf: PadoGrid groups by target",
        "Each group's throughput (higher is better) and latency (lower is better) on every \
         app (one app per target), median of the runs.",
        facts,
    );
    let palette = Palette::new(view.runs.iter().map(|r| r.app.as_str()));
    // group → app → runs, groups in name order, apps in the CSV's order.
    let mut groups: BTreeMap<&str, Vec<(&str, Vec<&GroupRun>)>> = BTreeMap::new();
    for r in &view.runs {
        let apps = groups.entry(&r.group).or_default();
        match apps.iter_mut().find(|(a, _)| *a == r.app) {
            Some((_, runs)) => runs.push(r),
            None => apps.push((&r.app, vec![r])),
        }
    }
    let mut charts = Vec::new();
    for (group, apps) in &groups {
        let bars = |pick: fn(&GroupRun) -> f64, scale: f64, show: fn(f64) -> String| {
            apps.iter()
                .filter_map(|(app, runs)| {
                    let (mid, low, high) = median_range(runs.iter().map(|r| pick(r)).collect())?;
                    Some(Bar {
                        name: app.to_string(),
                        colour: palette.colour(app),
                        value: mid * scale,
                        low: low * scale,
                        high: high * scale,
                        note: format!(
                            "{} ({} run{})",
                            show(mid * scale),
                            runs.len(),
                            if runs.len() == 1 { "" } else { "s" }
                        ),
                    })
                })
                .collect::<Vec<_>>()
        };
        charts.push(Chart::bars(
            &format!("{group}: throughput"),
            "M throughput, invocations per second",
            Unit::Count,
            bars(|r| r.throughput, 1.0, |v| format!("{}/s", charts::count(v))),
        ));
        charts.push(Chart::bars(
            &format!("{group}: latency"),
            "M latency per invocation",
            Unit::Nanos,
            bars(|r| r.latency_ms, 1e6, charts::duration),
        ));
    }
    report.push_charts(
        "Groups",
        "<p class=\"note\">Bars: the median over the app's runs of the group; whiskers: \
         the smallest and largest run.</p>",
        charts,
    )?;
    if !view.markdown.is_empty() {
        report.push(Section::new(
            "Comparison (results-group-all.md)",
            markdown(&view.markdown),
        ));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::charts::Marks;

    const CSV: &str = "header\n\
        perf_test_a, group-g1.txt, A, g1, g1, put, c, 1, 0, 10, 2, 5, s, t, 10, 5, 6, 10, 2000, 0.5, 1666.6, 0.6\n\
        perf_test_a, group-g1.txt, A, g1, g1, put, c, 1, 0, 10, 2, 5, s, t, 10, 5, 6, 10, 1000, 1.5, 1666.6, 0.6\n\
        perf_test_a, group-g1.txt, A, g1, g1, put, c, 1, 0, 10, 2, 5, s, t, 10, 5, 6, 10, 3000, 0.25, 1666.6, 0.6\n\
        perf_test_b, group-g1.txt, B, g1, g1, put, get, c, 1, 0, 10, 2, 5, s, t, 10, 5, 6, 10, ∞, 0.1, 1, 1\n\
        short, row\n";

    #[test]
    fn rows_read_from_both_ends() {
        let runs = group_runs(CSV);
        assert_eq!(runs.len(), 4);
        assert_eq!(
            runs[0],
            GroupRun {
                app: "perf_test_a".into(),
                group: "g1".into(),
                throughput: 2000.0,
                latency_ms: 0.5
            }
        );
        assert!(runs[3].throughput.is_nan());
        assert_eq!(runs[3].latency_ms, 0.1);
    }

    #[test]
    fn bars_are_medians_with_their_range() {
        let view = PerfView {
            runs: group_runs(CSV),
            markdown: String::new(),
        };
        let report = report(&view, Vec::new()).unwrap();
        assert_eq!(report.charts.len(), 2);
        let Marks::Bars(thr) = &report.charts[0].marks else {
            panic!()
        };
        // perf_test_b's only throughput is ∞: no bar.
        assert_eq!(thr.len(), 1);
        assert_eq!(
            (thr[0].value, thr[0].low, thr[0].high),
            (2000.0, 1000.0, 3000.0)
        );
        assert_eq!(thr[0].note, "2k/s (3 runs)");
        let Marks::Bars(lat) = &report.charts[1].marks else {
            panic!()
        };
        assert_eq!(lat[0].value, 500_000.0);
        assert_eq!(lat[1].note, "100 µs (1 run)");
    }
}
