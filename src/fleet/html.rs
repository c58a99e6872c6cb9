//! The fleet page: each target's writes per second and their p50/p99 latency (from the
//! intended send time, coordinated omission corrected), the same for reads when there were
//! readers, the verdicts, and `fleet.md`.
//!
//! The page reads `fleet.json`'s shape (the run's [`FleetRun`] goes through serde_json once),
//! so a page written by the run and one rebuilt from the directory are the same page.

use std::io;
use std::path::Path;

use serde::Deserialize;

use crate::fleet::results::FleetRun;
use crate::report::html::charts::{ChartError, Palette};
use crate::report::html::series::{self, Second, Series};
use crate::report::html::{escape, markdown, Report, Section, FILE};

/// Writes a fleet run's `report.html` into `dir` (after every target, as the other files).
pub fn write(dir: &Path, run: &FleetRun) -> io::Result<()> {
    let view = FleetView::of(run).map_err(io::Error::other)?;
    let report = report(&view).map_err(io::Error::other)?;
    report.write(&dir.join(FILE), false).map(drop)
}

/// What the fleet page shows: `fleet.json`'s fields it needs, and `fleet.md`.
#[derive(Debug, Clone, Deserialize)]
pub struct FleetView {
    /// The command line.
    pub command: String,
    /// When the run started.
    pub started: String,
    /// The fleet's settings, as recorded.
    pub fleet: serde_json::Map<String, serde_json::Value>,
    /// One entry per target.
    pub targets: Vec<TargetView>,
    /// `fleet.md`.
    #[serde(skip)]
    pub markdown: String,
}

/// One target of `fleet.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct TargetView {
    /// The column name.
    pub name: String,
    /// Why it did not run.
    #[serde(default)]
    pub error: Option<String>,
    /// What it measured.
    #[serde(default)]
    pub summary: Option<SummaryView>,
}

/// A target's measured figures.
#[derive(Debug, Clone, Deserialize)]
pub struct SummaryView {
    /// "kept up", or why not.
    pub verdict: String,
    /// Events/s offered.
    pub offered_per_sec: f64,
    /// Events/s answered.
    pub achieved_per_sec: f64,
    /// The writes, second by second.
    pub per_second: Vec<SecondView>,
    /// The reads, when there were readers.
    #[serde(default)]
    pub reads: Option<ReadsView>,
}

/// The readers' seconds.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadsView {
    /// Second by second.
    pub per_second: Vec<SecondView>,
}

/// One second of `fleet.json`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct SecondView {
    /// From 0, after the warmup.
    pub second: usize,
    /// Events (or reads) in it.
    pub events: u64,
    /// Median latency, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
}

impl FleetView {
    /// The view of a run in progress or finished.
    pub fn of(run: &FleetRun) -> Result<FleetView, serde_json::Error> {
        let mut view: FleetView = serde_json::from_value(serde_json::to_value(run)?)?;
        view.markdown = crate::fleet::results::markdown(run);
        Ok(view)
    }
}

fn series_of(name: &str, seconds: &[SecondView]) -> Series {
    Series {
        name: name.to_string(),
        seconds: seconds
            .iter()
            .map(|s| Second {
                at: s.second as f64 + 1.0,
                per_sec: s.events as f64,
                p50_ns: (s.events > 0).then_some(s.p50_ns as f64),
                p99_ns: (s.events > 0).then_some(s.p99_ns as f64),
            })
            .collect(),
    }
}

/// The fleet page of `view`.
pub fn report(view: &FleetView) -> Result<Report, ChartError> {
    let settings: Vec<String> = view.fleet.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut report = Report::new(
        "edgebench fleet: does the store keep up with the devices?",
        "Events written per second against the rate the fleet offered, and how late they \
         were answered (from their intended send time): a target keeps up when its line \
         stays on the offered rate and its latency stays flat.",
        vec![
            ("command".into(), view.command.clone()),
            ("started".into(), view.started.clone()),
            ("edgebench".into(), env!("CARGO_PKG_VERSION").into()),
            ("fleet".into(), settings.join(", ")),
        ],
    );
    let palette = Palette::new(view.targets.iter().map(|t| t.name.as_str()));
    let mut verdicts = String::from("<ul>\n");
    for t in &view.targets {
        let line = match (&t.summary, &t.error) {
            (Some(s), _) => format!(
                "{}: {} ({:.0} of {:.0} events/s)",
                t.name, s.verdict, s.achieved_per_sec, s.offered_per_sec
            ),
            (None, Some(e)) => format!("{}: did not run: {e}", t.name),
            (None, None) => format!("{}: no result", t.name),
        };
        verdicts.push_str(&format!(
            "<li><span class=\"swatch\" style=\"background:{}\"></span>{}</li>\n",
            palette.css(&t.name),
            escape(&line)
        ));
    }
    verdicts.push_str("</ul>");
    report.push(Section::new("Verdicts", verdicts));
    let measured = |pick: fn(&SummaryView) -> Option<&[SecondView]>| -> Vec<Series> {
        view.targets
            .iter()
            .filter_map(|t| Some(series_of(&t.name, pick(t.summary.as_ref()?)?)))
            .collect()
    };
    let writes = measured(|s| Some(&s.per_second));
    let reads = measured(|s| s.reads.as_ref().map(|r| r.per_second.as_slice()));
    let mut charts = series::charts("writes", "events", &writes, &palette);
    charts.extend(series::charts("reads", "reads", &reads, &palette));
    report.push_charts(
        "Per second",
        "<p class=\"note\">One line per target, after the warmup; latency is from each \
         event's intended send time, so a store that falls behind shows it.</p>",
        charts,
    )?;
    report.push(Section::new("Tables", markdown(&view.markdown)));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> FleetView {
        let mut view: FleetView = serde_json::from_str(
            r#"{"command": "edgebench fleet --devices 10", "started": "2026-01-01T00:00:00Z",
                "fleet": {"devices": 10, "events_per_second": 100.0},
                "targets": [
                  {"name": "RedisDB_TCP", "endpoint": "x", "summary": {
                    "verdict": "kept up", "offered_per_sec": 100.0, "achieved_per_sec": 99.5,
                    "per_second": [{"second": 0, "events": 100, "p50_ns": 50000, "p99_ns": 90000},
                                   {"second": 1, "events": 0, "p50_ns": 0, "p99_ns": 0}]}},
                  {"name": "MongoDB", "endpoint": "", "error": "cannot connect"}]}"#,
        )
        .unwrap();
        view.markdown = "| Target |\n|-|\n| RedisDB_TCP |\n".into();
        view
    }

    #[test]
    fn seconds_without_events_have_no_latency() {
        let s = series_of("t", &view().targets[0].summary.as_ref().unwrap().per_second);
        assert_eq!(
            s.seconds,
            [
                Second {
                    at: 1.0,
                    per_sec: 100.0,
                    p50_ns: Some(50_000.0),
                    p99_ns: Some(90_000.0)
                },
                Second {
                    at: 2.0,
                    per_sec: 0.0,
                    p50_ns: None,
                    p99_ns: None
                }
            ]
        );
    }

    #[test]
    fn page_has_verdicts_charts_and_table() {
        let report = report(&view()).unwrap();
        assert_eq!(report.charts.len(), 2, "writes and their latency; no reads");
        let verdicts = &report.page.sections[0].html;
        assert!(verdicts.contains("RedisDB_TCP: kept up (100 of 100 events/s)"));
        assert!(verdicts.contains("MongoDB: did not run: cannot connect"));
        assert!(report.page.facts.contains(&(
            "fleet".to_string(),
            "devices=10, events_per_second=100.0".to_string()
        )));
    }
}
