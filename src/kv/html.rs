//! The kv page: requests per second and p50/p99 latency per second, one series per `-x` run,
//! memtier's configuration, and `results.md`.
//!
//! The page reads memtier's JSON document (`results.json`), the one reader for both the run
//! (which hands over a document with every run as a `RUN #n RESULTS` section) and
//! `report html DIR` (which has the sections the run printed: with `-x` and no
//! `--print-all-runs`, the best and worst run and the average). A section's `Totals` →
//! `Time-Serie` has, per second, `Count` and the `--print-percentiles` figures in ms; the
//! latency chart needs p50 and p99 among them (memtier's default 50,99,99.9 has both).

use std::io;
use std::path::Path;

use serde_json::Value;

use crate::kv::results::KvResults;
use crate::report::html::charts::{ChartError, Palette};
use crate::report::html::series::{self, Second, Series};
use crate::report::html::{escape, markdown, this_process, Report, Section, FILE};
use crate::report::Exporter as _;

/// Writes a kv run's `report.html` into `dir`, with every `-x` run's series.
pub fn write(dir: &Path, results: &KvResults) -> io::Result<()> {
    let report = report(&KvView::of(results), this_process()).map_err(io::Error::other)?;
    report.write(&dir.join(FILE), false).map(drop)
}

/// What the kv page shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KvView {
    /// One series per run (or per printed section).
    pub runs: Vec<Series>,
    /// memtier's `--show-config` values.
    pub configuration: Vec<(String, String)>,
    /// `results.md`.
    pub markdown: String,
    /// When the first run started (RFC 3339, UTC), if known.
    pub started: Option<String>,
}

impl KvView {
    /// The view of a run that just finished: every `-x` run's series.
    pub fn of(results: &KvResults) -> KvView {
        use crate::kv::export;
        let sections: Vec<(String, &crate::kv::load::LoadResult)> = if !results.hosts.is_empty() {
            results.sections()
        } else if results.runs.len() == 1 {
            vec![("ALL STATS".to_string(), &results.runs[0])]
        } else {
            results
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("RUN #{} RESULTS", i + 1), r))
                .collect()
        };
        let doc = export::document(&results.cfg, &sections).to_pretty();
        let markdown = crate::kv::results::KvMarkdown
            .render(results)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        // Our own document, so it parses; were it not, the page would just have no series.
        let json = serde_json::from_str(&doc).unwrap_or(Value::Null);
        KvView::from_json(&json, markdown)
    }

    /// The view of memtier's JSON document and `results.md`.
    pub fn from_json(doc: &Value, markdown: String) -> KvView {
        let mut view = KvView {
            markdown,
            ..KvView::default()
        };
        let Some(items) = doc.as_object() else {
            return view;
        };
        if let Some(config) = doc.get("configuration").and_then(Value::as_object) {
            view.configuration = config.iter().map(|(k, v)| (k.clone(), plain(v))).collect();
        }
        for (title, section) in items {
            if title == "configuration" || title == "run information" {
                continue;
            }
            if view.started.is_none() {
                view.started = section
                    .pointer("/Runtime/Start time")
                    .and_then(Value::as_i64)
                    .and_then(chrono::DateTime::from_timestamp_millis)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            }
            view.runs.push(Series {
                name: run_name(title),
                seconds: seconds(section),
            });
        }
        view
    }
}

/// A JSON value as text (strings without their quotes).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// `RUN #2 RESULTS` → `run 2`; `ALL STATS` → `all`; other titles in lower case.
fn run_name(title: &str) -> String {
    if let Some(n) = title
        .strip_prefix("RUN #")
        .and_then(|t| t.strip_suffix(" RESULTS"))
    {
        return format!("run {n}");
    }
    match title {
        "ALL STATS" => "all".to_string(),
        t => t.trim_end_matches(" RESULTS").to_lowercase(),
    }
}

/// A section's seconds from `Totals` → `Time-Serie` (keys "0", "1", … in order).
fn seconds(section: &Value) -> Vec<Second> {
    let Some(series) = section
        .pointer("/Totals/Time-Serie")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let mut out: Vec<Second> = series
        .iter()
        .filter_map(|(k, s)| {
            let ms = |key: &str| s.get(key).and_then(Value::as_f64).map(|ms| ms * 1e6);
            Some(Second {
                at: k.parse::<f64>().ok()? + 1.0,
                per_sec: s.get("Count").and_then(Value::as_f64).unwrap_or(0.0),
                p50_ns: ms("p50.00"),
                p99_ns: ms("p99.00"),
            })
        })
        .collect();
    out.sort_by(|a, b| a.at.total_cmp(&b.at));
    out
}

/// The kv page of `view`; `facts` first (command, machine, version).
pub fn report(view: &KvView, facts: Vec<(String, String)>) -> Result<Report, ChartError> {
    let mut facts = facts;
    if let Some(started) = &view.started {
        facts.push(("started".into(), started.clone()));
    }
    let mut report = Report::new(
        "edgebench kv: requests per second and latency",
        "How many requests the target answered each second and how long they took, per \
         run: higher throughput and lower latency are better; a dip or a spike shows when.",
        facts,
    );
    let palette = Palette::new(view.runs.iter().map(|r| r.name.as_str()));
    report.push_charts(
        "Per second",
        "<p class=\"note\">One line per run (<code>-x</code>); the latency of a second is \
         that of the requests answered in it.</p>",
        series::charts("kv", "requests", &view.runs, &palette),
    )?;
    report.push(Section::new("Tables", markdown(&view.markdown)));
    if !view.configuration.is_empty() {
        let mut html = String::from("<table><tbody>\n");
        for (k, v) in &view.configuration {
            html.push_str(&format!(
                "<tr><td>{}</td><td>{}</td></tr>\n",
                escape(k),
                escape(v)
            ));
        }
        html.push_str("</tbody></table>");
        report.push(Section::new("Configuration (--show-config)", html));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_memtiers_sections_and_time_series() {
        let doc: Value = serde_json::from_str(
            r#"{"configuration": {"server": "127.0.0.1", "port": 6379},
                "run information": {"Threads": 4},
                "BEST RUN RESULTS": {"Runtime": {"Start time": 1700000000000},
                  "Totals": {"Time-Serie": {
                    "1": {"Count": 900, "p50.00": 0.2, "p99.00": 1.5},
                    "0": {"Count": 1000, "p50.00": 0.1, "p99.00": 0.9}}}},
                "RUN #2 RESULTS": {"Totals": {"Time-Serie": {"0": {"Count": 5}}}}}"#,
        )
        .unwrap();
        let view = KvView::from_json(&doc, "| a |\n|-|\n".into());
        assert_eq!(
            view.configuration,
            [
                ("server".to_string(), "127.0.0.1".to_string()),
                ("port".to_string(), "6379".to_string())
            ]
        );
        assert_eq!(view.started.as_deref(), Some("2023-11-14T22:13:20Z"));
        let names: Vec<&str> = view.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["best run", "run 2"]);
        assert_eq!(
            view.runs[0].seconds,
            [
                Second {
                    at: 1.0,
                    per_sec: 1000.0,
                    p50_ns: Some(100_000.0),
                    p99_ns: Some(900_000.0)
                },
                Second {
                    at: 2.0,
                    per_sec: 900.0,
                    p50_ns: Some(200_000.0),
                    p99_ns: Some(1_500_000.0)
                }
            ]
        );
        assert_eq!(view.runs[1].seconds[0].p50_ns, None);
        let report = report(&view, Vec::new()).unwrap();
        assert_eq!(report.charts.len(), 2);
        let titles: Vec<&str> = report
            .page
            .sections
            .iter()
            .map(|s| s.title.as_str())
            .collect();
        assert_eq!(
            titles,
            ["Per second", "Tables", "Configuration (--show-config)"]
        );
    }
}
