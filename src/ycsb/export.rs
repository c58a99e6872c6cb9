//! YCSB's measurement export, line for line as its exporters write it, so whatever parses
//! YCSB's output parses edgebench's:
//!
//! ```text
//! [OVERALL], RunTime(ms), 10110
//! [OVERALL], Throughput(ops/sec), 98.91196834817012
//! [READ], Operations, 503
//! [READ], AverageLatency(us), 377.3041749502982
//! [READ], MinLatency(us), 151
//! [READ], MaxLatency(us), 12951
//! [READ], 50thPercentileLatency(us), 293
//! [READ], 95thPercentileLatency(us), 627
//! [READ], 99thPercentileLatency(us), 1088
//! [READ], Return=OK, 503
//! ```
//!
//! `TextMeasurementsExporter` writes `[metric], measurement, value` lines;
//! `JSONMeasurementsExporter` one `{"metric":…,"measurement":…,"value":…}` object per line,
//! `JSONArrayMeasurementsExporter` the same objects in one array. Numbers print as Java
//! prints them (`long`s whole, `double`s with `Double.toString`). A JVM's garbage-collector
//! lines (`[TOTAL_GCS_…]`) have no equivalent here and are left out.

use hdrhistogram::Histogram;

use super::config::{Exporter, Interval, Workload};
use super::measure::{OpMeasure, Status};
use super::run::PhaseResult;

/// One exported value: a Java `long` or `double`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// Printed whole.
    Long(u64),
    /// Printed as `Double.toString`.
    Double(f64),
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Long(n) => write!(f, "{n}"),
            Number::Double(x) => f.write_str(&java_double(*x)),
        }
    }
}

/// The (metric, measurement, value) rows of a phase, in YCSB's order: `[OVERALL]`, then each
/// operation (its OK series, then `-FAILED`), each followed by its `Intended-` series when
/// `measurement.interval=both`.
pub fn rows(result: &PhaseResult, w: &Workload) -> Vec<(String, String, Number)> {
    let mut out = Vec::new();
    out.push((
        "OVERALL".to_string(),
        "RunTime(ms)".to_string(),
        Number::Long(result.runtime.as_millis() as u64),
    ));
    out.push((
        "OVERALL".to_string(),
        "Throughput(ops/sec)".to_string(),
        Number::Double(result.throughput()),
    ));
    for (op, m) in result.measurements.measured() {
        let name = op.name();
        series(&mut out, w, name, &m.ok, &m.ok_intended, Some(m));
        if !m.failed.is_empty() {
            let failed = format!("{name}-FAILED");
            series(&mut out, w, &failed, &m.failed, &m.failed_intended, None);
        }
    }
    out
}

/// One operation's rows: its actual-start series and/or its intended-start one.
fn series(
    out: &mut Vec<(String, String, Number)>,
    w: &Workload,
    name: &str,
    actual: &Histogram<u64>,
    intended: &Histogram<u64>,
    statuses: Option<&OpMeasure>,
) {
    match w.interval {
        Interval::Op => histogram_rows(out, w, name, actual, statuses),
        Interval::Intended => histogram_rows(out, w, name, intended, statuses),
        Interval::Both => {
            histogram_rows(out, w, name, actual, statuses);
            histogram_rows(out, w, &format!("Intended-{name}"), intended, None);
        }
    }
}

fn histogram_rows(
    out: &mut Vec<(String, String, Number)>,
    w: &Workload,
    metric: &str,
    h: &Histogram<u64>,
    statuses: Option<&OpMeasure>,
) {
    let us = |ns: u64| Number::Long(ns / 1000);
    let mut row = |what: String, value: Number| out.push((metric.to_string(), what, value));
    row("Operations".into(), Number::Long(h.len()));
    let empty = h.is_empty();
    row(
        "AverageLatency(us)".into(),
        Number::Double(if empty { 0.0 } else { h.mean() / 1000.0 }),
    );
    row("MinLatency(us)".into(), us(if empty { 0 } else { h.min() }));
    row("MaxLatency(us)".into(), us(h.max()));
    for p in &w.percentiles {
        row(
            format!("{}PercentileLatency(us)", ordinal(*p)),
            us(h.value_at_percentile(*p)),
        );
    }
    if let Some(m) = statuses {
        for (status, n) in Status::ALL.iter().zip(m.returns) {
            if n > 0 {
                row(format!("Return={}", status.name()), Number::Long(n));
            }
        }
    }
}

/// YCSB's `ordinal`: `50th`, `1st`, `2nd`, `3rd`, `11th`–`13th`; a fraction as it is (`99.9`).
pub fn ordinal(p: f64) -> String {
    if p.fract() != 0.0 {
        return java_double(p).trim_end_matches(".0").to_string();
    }
    let n = p as u64;
    let suffix = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The export in `exporter`'s format.
pub fn render(rows: &[(String, String, Number)], exporter: Exporter) -> String {
    match exporter {
        Exporter::Text => rows
            .iter()
            .map(|(metric, what, value)| format!("[{metric}], {what}, {value}\n"))
            .collect(),
        Exporter::Json | Exporter::JsonArray => {
            let objects: Vec<String> = rows
                .iter()
                .map(|(metric, what, value)| {
                    format!(
                        "{{\"metric\":{},\"measurement\":{},\"value\":{value}}}",
                        serde_json::Value::from(metric.as_str()),
                        serde_json::Value::from(what.as_str())
                    )
                })
                .collect();
            if exporter == Exporter::Json {
                objects.iter().map(|o| format!("{o}\n")).collect()
            } else {
                format!("[{}]\n", objects.join(",\n"))
            }
        }
    }
}

/// Java's `Double.toString`: the shortest decimal that reads back as `x`, with at least one
/// digit after the point, in computerized scientific notation (`1.0E7`) outside
/// [10^-3, 10^7).
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let a = x.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    // Rust's `{:e}` is the shortest round-trip digits too: `1e7`, `1.2345e-5`.
    let s = format!("{x:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::measure::{Measurements, Op};
    use crate::ycsb::properties::{Origin, Properties};
    use std::time::Duration;

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java_double(98.91196834817012), "98.91196834817012");
        assert_eq!(java_double(3.0), "3.0");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(12_345_678.9), "1.23456789E7");
        assert_eq!(java_double(0.0005), "5.0E-4");
        assert_eq!(java_double(0.001), "0.001");
        assert_eq!(java_double(0.0), "0.0");
    }

    #[test]
    fn ordinals_as_ycsb() {
        let got: Vec<String> = [
            1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 21.0, 50.0, 95.0, 99.0, 99.9,
        ]
        .into_iter()
        .map(ordinal)
        .collect();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "11th", "12th", "13th", "21st", "50th", "95th", "99th", "99.9"]
        );
    }

    fn workload(interval: &str) -> Workload {
        let mut p = Properties::default();
        p.set("recordcount", "10", Origin::Flag);
        p.set("operationcount", "10", Origin::Flag);
        p.set("measurement.interval", interval, Origin::Flag);
        crate::ycsb::config::read(&p, true).unwrap()
    }

    #[test]
    fn text_export_is_ycsbs_lines() {
        let mut m = Measurements::default();
        // Below 2,048 ns a histogram of 3 significant digits is exact.
        m.record(Op::Read, Status::Ok, 0, 0, 1_000);
        m.record(Op::Read, Status::Ok, 0, 500, 2_000);
        m.record(Op::Read, Status::NotFound, 0, 0, 1_999);
        for _ in 0..3 {
            m.done();
        }
        let result = PhaseResult {
            measurements: m,
            runtime: Duration::from_millis(1500),
            stopped: None,
        };
        let text = render(&rows(&result, &workload("both")), Exporter::Text);
        assert_eq!(
            text,
            "[OVERALL], RunTime(ms), 1500\n\
             [OVERALL], Throughput(ops/sec), 2.0\n\
             [READ], Operations, 2\n\
             [READ], AverageLatency(us), 1.25\n\
             [READ], MinLatency(us), 1\n\
             [READ], MaxLatency(us), 1\n\
             [READ], 50thPercentileLatency(us), 1\n\
             [READ], 95thPercentileLatency(us), 1\n\
             [READ], 99thPercentileLatency(us), 1\n\
             [READ], Return=OK, 2\n\
             [READ], Return=NOT_FOUND, 1\n\
             [Intended-READ], Operations, 2\n\
             [Intended-READ], AverageLatency(us), 1.5\n\
             [Intended-READ], MinLatency(us), 1\n\
             [Intended-READ], MaxLatency(us), 2\n\
             [Intended-READ], 50thPercentileLatency(us), 1\n\
             [Intended-READ], 95thPercentileLatency(us), 2\n\
             [Intended-READ], 99thPercentileLatency(us), 2\n\
             [READ-FAILED], Operations, 1\n\
             [READ-FAILED], AverageLatency(us), 1.999\n\
             [READ-FAILED], MinLatency(us), 1\n\
             [READ-FAILED], MaxLatency(us), 1\n\
             [READ-FAILED], 50thPercentileLatency(us), 1\n\
             [READ-FAILED], 95thPercentileLatency(us), 1\n\
             [READ-FAILED], 99thPercentileLatency(us), 1\n\
             [Intended-READ-FAILED], Operations, 1\n\
             [Intended-READ-FAILED], AverageLatency(us), 1.999\n\
             [Intended-READ-FAILED], MinLatency(us), 1\n\
             [Intended-READ-FAILED], MaxLatency(us), 1\n\
             [Intended-READ-FAILED], 50thPercentileLatency(us), 1\n\
             [Intended-READ-FAILED], 95thPercentileLatency(us), 1\n\
             [Intended-READ-FAILED], 99thPercentileLatency(us), 1\n"
        );
        let json = render(&rows(&result, &workload("op"))[..2], Exporter::JsonArray);
        assert_eq!(
            json,
            "[{\"metric\":\"OVERALL\",\"measurement\":\"RunTime(ms)\",\"value\":1500},\n\
             {\"metric\":\"OVERALL\",\"measurement\":\"Throughput(ops/sec)\",\"value\":2.0}]\n"
        );
    }
}
