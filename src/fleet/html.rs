//! The fleet page: each target's writes per second and their p50/p99 latency (from the
//! intended send time, coordinated omission corrected), the same for reads when there were
//! readers, with `--via bus` what the bus did (published, persisted and backlog per second,
//! and the publish-to-commit latency by percentile), the verdicts, and `fleet.md`.
//!
//! The page reads `fleet.json`'s shape (the run's [`FleetRun`] goes through serde_json once),
//! so a page written by the run and one rebuilt from the directory are the same page.

use std::io;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::fleet::results::{BusSecond, FleetRun};
use crate::report::html::charts::{Chart, ChartError, Line, Palette};
use crate::report::html::latency;
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
    /// What the bus did, with `--via bus`.
    #[serde(default)]
    pub bus: Option<BusView>,
}

/// What a bus did with a target's events (`fleet.json`'s `summary.bus`); every field may be
/// missing, so files written before a field existed still load.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BusView {
    /// Events the writers published.
    pub published: u64,
    /// Events the store committed.
    pub persisted: u64,
    /// Messages that did not decode or validate.
    pub rejected: u64,
    /// Events the store refused.
    pub failed: u64,
    /// Published and never persisted after the drain.
    pub lost: u64,
    /// Why the first message was dropped.
    pub first_reason: Option<String>,
    /// Why the subscription ended early, if it did.
    pub cut_off: Option<String>,
    /// How `persisted` was counted, with someone's core-data service as the subscriber.
    pub counted_by: Option<String>,
    /// From each measured event's intended publish time to its commit.
    pub commit: Option<HistogramView>,
    /// Running totals at the end of each second, warmup included.
    pub per_second: Vec<BusSecond>,
}

/// A latency's full histogram, as `fleet.json` keeps it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HistogramView {
    /// HdrHistogram V2 compressed, base64.
    pub histogram: String,
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

/// Per second from running totals (one per second's end, `None` where it was not counted):
/// (the second's end, from 1; the growth since the last known total, 0 at the start, over the
/// seconds since it). Exact for consecutive seconds; across an uncounted second, their mean.
fn per_second(totals: impl Iterator<Item = Option<u64>>) -> Vec<(f64, f64)> {
    let mut last = (0.0, 0.0);
    totals
        .enumerate()
        .filter_map(|(i, total)| {
            let (at, total) = (i as f64 + 1.0, total? as f64);
            let rate = (total - last.1) / (at - last.0);
            last = (at, total);
            Some((at, rate))
        })
        .collect()
}

/// Events published in each second.
fn published_per_second(bus: &BusView) -> Vec<(f64, f64)> {
    per_second(bus.per_second.iter().map(|s| Some(s.published)))
}

/// Events persisted in each second, where counted.
fn persisted_per_second(bus: &BusView) -> Vec<(f64, f64)> {
    per_second(bus.per_second.iter().map(|s| s.persisted))
}

/// Published and not yet persisted at the end of each second, where counted.
fn backlog(bus: &BusView) -> Vec<(f64, f64)> {
    bus.per_second
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i as f64 + 1.0, s.backlog()? as f64)))
        .collect()
}

/// One line of a list, with the target's colour beside it.
fn swatch_item(palette: &Palette, name: &str, text: &str) -> String {
    format!(
        "<li><span class=\"swatch\" style=\"background:{}\"></span>{}</li>\n",
        palette.css(name),
        escape(text)
    )
}

/// What a target's bus did, in one line.
fn bus_line(name: &str, bus: &BusView) -> String {
    let mut line = format!(
        "{name}: {} published, {} persisted, {} lost",
        bus.published, bus.persisted, bus.lost
    );
    if bus.rejected > 0 {
        line.push_str(&format!(", {} rejected", bus.rejected));
    }
    if bus.failed > 0 {
        line.push_str(&format!(", {} refused by the store", bus.failed));
    }
    // A cut-off subscription is also the first reason when nothing was dropped before it.
    let first_reason = match (&bus.first_reason, &bus.cut_off) {
        (Some(r), Some(c)) if r == c => None,
        (r, _) => r.as_ref(),
    };
    let notes = [
        ("; first dropped: ", first_reason),
        ("; cut off: ", bus.cut_off.as_ref()),
        ("; persisted counted by ", bus.counted_by.as_ref()),
    ];
    for (what, note) in notes {
        if let Some(note) = note {
            line.push_str(what);
            line.push_str(note);
        }
    }
    line
}

/// The "Message bus" section, when some target ran `--via bus`: published, persisted and
/// backlog per second, one line per target, and the publish-to-commit latency curves.
fn push_bus(report: &mut Report, view: &FleetView, palette: &Palette) -> Result<(), ChartError> {
    let buses: Vec<(&str, &BusView)> = view
        .targets
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.summary.as_ref()?.bus.as_ref()?)))
        .collect();
    if buses.is_empty() {
        return Ok(());
    }
    let lines = |pick: fn(&BusView) -> Vec<(f64, f64)>| -> Vec<Line> {
        buses
            .iter()
            .map(|(name, bus)| Line {
                name: name.to_string(),
                colour: palette.colour(name),
                dashed: false,
                points: Arc::new(pick(bus)),
            })
            .filter(|l| !l.points.is_empty())
            .collect()
    };
    let mut charts: Vec<Chart> = [
        (
            "bus: events published per second",
            "events published per second",
            lines(published_per_second),
        ),
        (
            "bus: events persisted per second",
            "events persisted per second",
            lines(persisted_per_second),
        ),
        (
            "bus: backlog (published, not yet persisted)",
            "events published, not yet persisted",
            lines(backlog),
        ),
    ]
    .into_iter()
    .filter(|(_, _, lines)| !lines.is_empty())
    .map(|(title, label, lines)| series::counts(title, label, lines))
    .collect();
    let curves: Vec<Line> = buses
        .iter()
        .filter_map(|(name, bus)| {
            Some(Line {
                name: name.to_string(),
                colour: palette.colour(name),
                dashed: false,
                points: latency::curve_of(&bus.commit.as_ref()?.histogram)?,
            })
        })
        .collect();
    charts.extend(latency::chart(
        "bus: publish to commit, by percentile",
        "from intended publish time to commit",
        curves,
    ));
    let mut intro = String::from(
        "<p class=\"note\">One line per target, from the start of the run (warmup \
         included): events the devices published on the bus each second, events core-data \
         committed to the store each second, and the backlog between them. The latency runs \
         from each measured event's intended publish time to its commit in the store, so a bus \
         or a subscriber that falls behind shows it.</p>\n<ul>\n",
    );
    for (name, bus) in &buses {
        intro.push_str(&swatch_item(palette, name, &bus_line(name, bus)));
    }
    intro.push_str("</ul>");
    if charts.is_empty() {
        report.push(Section::new(BUS_SECTION, intro));
        return Ok(());
    }
    report.push_charts(BUS_SECTION, &intro, charts)
}

/// The bus section's title.
const BUS_SECTION: &str = "Message bus";

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
        verdicts.push_str(&swatch_item(&palette, &t.name, &line));
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
    push_bus(&mut report, view, &palette)?;
    report.push(Section::new("Tables", markdown(&view.markdown)));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::charts::{Marks, Unit};

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

    /// `view()` with a bus on its first target: four seconds whose third was not counted,
    /// and a commit histogram of 1 to 100 ms; and a bus on a third target counted by someone's
    /// core-data service, without seconds or latency.
    fn bus_view() -> (FleetView, hdrhistogram::Histogram<u64>) {
        let mut commit = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for ms in 1..=100u64 {
            commit.record(ms * 1_000_000).unwrap();
        }
        let bus = serde_json::json!({
            "published": 300, "received": 300, "persisted": 300, "rejected": 0, "failed": 0,
            "lost": 0, "drain_s": 0.1, "subscriber": "edgex",
            "first_reason": "bad envelope", "cut_off": "the broker closed it",
            "commit": {"p50_ns": 50_000_000, "p90_ns": 90_000_000, "p99_ns": 99_000_000,
                       "p999_ns": 100_000_000, "max_ns": 100_000_000,
                       "histogram": crate::runner::stats::encoded(&commit)},
            "per_second": [{"published": 100, "persisted": 80},
                           {"published": 200, "persisted": 190},
                           {"published": 300},
                           {"published": 300, "persisted": 300}]});
        let mut view = view();
        view.targets[0].summary.as_mut().unwrap().bus = Some(serde_json::from_value(bus).unwrap());
        let mut service = view.targets[0].clone();
        service.name = "core-data".into();
        service.summary.as_mut().unwrap().bus = Some(
            serde_json::from_value(serde_json::json!({
                "published": 10, "persisted": 7, "lost": 3, "counted_by": "GET /event/count"}))
            .unwrap(),
        );
        view.targets.push(service);
        (view, commit)
    }

    fn points(chart: &Chart) -> Vec<(&str, Vec<(f64, f64)>)> {
        let Marks::Lines(lines) = &chart.marks else {
            panic!("{} has no lines", chart.title)
        };
        lines
            .iter()
            .map(|l| (l.name.as_str(), l.points.to_vec()))
            .collect()
    }

    #[test]
    fn bus_section_has_rates_backlog_and_commit_curve() {
        let (view, commit) = bus_view();
        let report = report(&view).unwrap();
        let titles: Vec<&str> = report.charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles[2..],
            [
                "bus: events published per second",
                "bus: events persisted per second",
                "bus: backlog (published, not yet persisted)",
                "bus: publish to commit, by percentile"
            ],
            "after the writes chart and their latency chart"
        );
        let chart = |i: usize| points(&report.charts[i]);
        assert_eq!(
            chart(2),
            [(
                "RedisDB_TCP",
                vec![(1.0, 100.0), (2.0, 100.0), (3.0, 100.0), (4.0, 0.0)]
            )]
        );
        // The uncounted third second: the fourth's point is the mean of the two.
        assert_eq!(
            chart(3),
            [("RedisDB_TCP", vec![(1.0, 80.0), (2.0, 110.0), (4.0, 55.0)])]
        );
        assert_eq!(
            chart(4),
            [("RedisDB_TCP", vec![(1.0, 20.0), (2.0, 10.0), (4.0, 0.0)])]
        );
        let curve = chart(5);
        assert_eq!(curve.len(), 1);
        assert_eq!(curve[0].0, "RedisDB_TCP");
        assert_eq!(curve[0].1, latency::curve(&commit));
        assert_eq!(curve[0].1.last(), Some(&(100.0, commit.max() as f64)));
        assert_eq!(report.charts[5].x.unit, Unit::Percentile);
        assert_eq!(report.charts[5].x.range, (1.0, 100.0));

        let section = report
            .page
            .sections
            .iter()
            .find(|s| s.title == BUS_SECTION)
            .unwrap();
        assert_eq!(section.figures.len(), 4);
        assert!(section.html.contains(
            "RedisDB_TCP: 300 published, 300 persisted, 0 lost; first dropped: bad envelope; \
             cut off: the broker closed it</li>"
        ));
        assert!(section.html.contains(
            "core-data: 10 published, 7 persisted, 3 lost; persisted counted by GET \
             /event/count</li>"
        ));
        let order: Vec<&str> = report
            .page
            .sections
            .iter()
            .map(|s| s.title.as_str())
            .collect();
        assert_eq!(order, ["Verdicts", "Per second", BUS_SECTION, "Tables"]);
    }

    #[test]
    fn bus_without_seconds_or_latency_still_has_its_lines() {
        let (mut view, _) = bus_view();
        view.targets.remove(0);
        let report = report(&view).unwrap();
        let section = report
            .page
            .sections
            .iter()
            .find(|s| s.title == BUS_SECTION)
            .unwrap();
        assert!(section.figures.is_empty());
        assert!(section.html.contains("core-data: 10 published"));

        // A cut-off subscription that was also the first reason is said once.
        let bus = view.targets[1]
            .summary
            .as_mut()
            .unwrap()
            .bus
            .as_mut()
            .unwrap();
        bus.cut_off = Some("the broker closed it".into());
        bus.first_reason = bus.cut_off.clone();
        let line = bus_line("core-data", bus);
        assert_eq!(line.matches("the broker closed it").count(), 1, "{line}");
        assert!(line.contains("; cut off: the broker closed it"));
    }

    #[test]
    fn page_has_verdicts_charts_and_table() {
        let report = report(&view()).unwrap();
        assert_eq!(report.charts.len(), 2, "writes and their latency; no reads");
        assert!(
            report.page.sections.iter().all(|s| s.title != BUS_SECTION),
            "no bus, no bus section"
        );
        assert!(view().targets[0].summary.as_ref().unwrap().bus.is_none());
        let verdicts = &report.page.sections[0].html;
        assert!(verdicts.contains("RedisDB_TCP: kept up (100 of 100 events/s)"));
        assert!(verdicts.contains("MongoDB: did not run: cannot connect"));
        assert!(report.page.facts.contains(&(
            "fleet".to_string(),
            "devices=10, events_per_second=100.0".to_string()
        )));
    }
}
