//! Per-second series (kv's requests, fleet's writes and reads): a throughput chart and a
//! latency chart (p50 solid, p99 dashed, one colour per series), shared by the kv and fleet
//! pages so both read the same way; and [`counts`], the throughput chart's shape for any
//! count over the seconds of a run (fleet's bus: published, persisted, backlog).

use std::sync::Arc;

use super::charts::{Axis, Chart, Line, Marks, Palette, Unit};

/// One series: a run or a target, second by second.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's name (the run, or the target).
    pub name: String,
    /// Its seconds, in order.
    pub seconds: Vec<Second>,
}

/// One second of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    /// Seconds from the start of the series.
    pub at: f64,
    /// Operations answered in that second.
    pub per_sec: f64,
    /// Their median latency, ns, when known.
    pub p50_ns: Option<f64>,
    /// Their 99th percentile, ns, when known.
    pub p99_ns: Option<f64>,
}

/// The throughput chart (`what` per second, e.g. "requests") and, when any second knows its
/// latency, the latency chart. Empty when no series has a second.
pub fn charts(title: &str, what: &str, series: &[Series], palette: &Palette) -> Vec<Chart> {
    if series.iter().all(|s| s.seconds.is_empty()) {
        return Vec::new();
    }
    let line = |s: &Series, name: String, dashed, pick: &dyn Fn(&Second) -> Option<f64>| Line {
        colour: palette.colour(&s.name),
        name,
        dashed,
        points: Arc::new(
            s.seconds
                .iter()
                .filter_map(|p| Some((p.at, pick(p)?)))
                .collect(),
        ),
    };
    let throughput: Vec<Line> = series
        .iter()
        .map(|s| line(s, s.name.clone(), false, &|p| Some(p.per_sec)))
        .collect();
    let per_second = format!("{what} per second");
    let throughput = counts(&format!("{title}: {per_second}"), &per_second, throughput);
    let x = throughput.x.clone();
    let mut charts = vec![throughput];
    let latency: Vec<Line> = series
        .iter()
        .flat_map(|s| {
            [
                line(s, format!("{} p50", s.name), false, &|p| p.p50_ns),
                line(s, format!("{} p99", s.name), true, &|p| p.p99_ns),
            ]
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if !latency.is_empty() {
        let ys: Vec<f64> = latency
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .collect();
        charts.push(Chart {
            title: format!("{title}: latency per second (p50 solid, p99 dashed)"),
            x,
            y: Axis::fit("latency", Unit::Nanos, &ys, 0.1),
            marks: Marks::Lines(latency),
        });
    }
    charts
}

/// A chart of `lines` over the seconds of a run (x from 0 to the last point's second) on a
/// count axis titled `label`: events per second, or a running count such as a backlog.
pub fn counts(title: &str, label: &str, lines: Vec<Line>) -> Chart {
    let x_end = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .collect();
    Chart {
        title: title.to_string(),
        x: Axis {
            label: "seconds into the run".into(),
            unit: Unit::Seconds,
            range: (0.0, x_end),
            log: false,
        },
        y: Axis::fit(label, Unit::Count, &ys, 0.1),
        marks: Marks::Lines(lines),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_and_latency_per_series() {
        let s = Series {
            name: "run 1".into(),
            seconds: vec![
                Second {
                    at: 1.0,
                    per_sec: 1000.0,
                    p50_ns: Some(50_000.0),
                    p99_ns: Some(90_000.0),
                },
                Second {
                    at: 2.0,
                    per_sec: 1200.0,
                    p50_ns: None,
                    p99_ns: None,
                },
            ],
        };
        let charts = charts("kv", "requests", &[s], &Palette::new(["run 1"]));
        assert_eq!(charts.len(), 2);
        let Marks::Lines(t) = &charts[0].marks else {
            panic!()
        };
        assert_eq!(*t[0].points, [(1.0, 1000.0), (2.0, 1200.0)]);
        let Marks::Lines(l) = &charts[1].marks else {
            panic!()
        };
        let names: Vec<(&str, bool)> = l.iter().map(|l| (l.name.as_str(), l.dashed)).collect();
        assert_eq!(names, [("run 1 p50", false), ("run 1 p99", true)]);
        assert_eq!(*l[1].points, [(1.0, 90_000.0)]);
        assert!(super::charts("kv", "requests", &[], &Palette::default()).is_empty());
    }
}
