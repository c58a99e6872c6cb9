//! The core-data page: which target is fastest for each benchmark and how far apart they are
//! (a summary table and one bar chart per benchmark), the `--baseline` ratios as a heat map,
//! each target's latency distribution per benchmark, and the run's markdown tables.
//!
//! Every figure is the median repetition's ([`BenchResults::median`]), as in `results.md`,
//! so the page and the tables never disagree; the error bars span the fastest and slowest
//! repetition of `--count`.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::report::html::charts::{self, Bar, Chart, ChartError, Line, Palette, Unit};
use crate::report::html::{command_line, escape, latency, markdown, Report, Section, FILE};
use crate::report::Exporter as _;
use crate::results::{BenchResults, RunResults, TargetResults};

/// Writes a core-data run's `report.html` into `dir` (the run calls this after every
/// benchmark, beside the other results files).
pub fn write(dir: &Path, results: &RunResults) -> io::Result<()> {
    let report = report(results, command_line()).map_err(io::Error::other)?;
    report.write(&dir.join(FILE), false).map(drop)
}

/// The page of a core-data run (or of several merged, their columns named by directory).
/// `facts` come first (the command line, when known); the run's own follow.
pub fn report(results: &RunResults, facts: Vec<(String, String)>) -> Result<Report, ChartError> {
    let mut report = Report::new(
        format!(
            "edgebench {}: time per operation by target",
            workload(results)
        ),
        "Which target is fastest for each benchmark, and how far apart they are. Shorter bars \
         are faster; each bar says how many times slower than the fastest it is.",
        facts.into_iter().chain(run_facts(results)).collect(),
    );
    let columns: Vec<&TargetResults> = results
        .targets
        .iter()
        .filter(|t| !t.benchmarks.is_empty())
        .collect();
    let palette = Palette::new(columns.iter().map(|t| t.column()));
    let benches = results.bench_names();
    report.push(Section::new(
        "Fastest target per benchmark",
        summary(results, &columns, &benches, &palette),
    ));
    let bars = benches
        .iter()
        .filter_map(|b| bar_chart(b, &columns, &palette))
        .collect();
    let count = results.meta.count.max(1);
    let what = if count > 1 {
        format!(
            "the median of {count} repetitions (<code>--count {count}</code>); the whisker \
             spans the fastest and the slowest"
        )
    } else {
        "one measured round (<code>--count 1</code>)".to_string()
    };
    report.push_charts(
        "Time per operation",
        &format!(
            "<p class=\"note\">Each bar is {what}. An axis switches to a log scale when the \
             slowest target takes more than {}× the fastest.</p>",
            charts::LOG_ABOVE_RATIO
        ),
        bars,
    )?;
    if let Some(base) = results.meta.baseline.as_deref() {
        if let Some(html) = heat_map(results, &columns, &benches, base) {
            report.push(Section::new(format!("Against the baseline {base}"), html));
        }
    }
    let curves: Vec<Chart> = benches
        .iter()
        .filter_map(|b| latency_chart(b, &columns, &palette))
        .collect();
    report.push_charts(
        "Latency distribution",
        "<p class=\"note\">Each operation's latency at every percentile, from the median \
         repetition's full HDR histogram. The x axis is HdrHistogram's: 1/(1−p), so the \
         tail (99%, 99.9%) gets as much room as the median. Lower is faster; a curve that \
         rises steeply on the right has a long tail.</p>",
        curves,
    )?;
    report.push(Section::new("Tables", tables(results)));
    Ok(report)
}

fn workload(results: &RunResults) -> &str {
    match results.meta.workload.as_str() {
        "" => "coredata",
        w => w,
    }
}

/// The run's facts from its meta: when, which edgebench, the machine, the settings.
fn run_facts(results: &RunResults) -> Vec<(String, String)> {
    let m = &results.meta;
    let mut settings = format!("--benchtime {} --count {}", m.benchtime, m.count);
    if !m.parallel.is_empty() {
        let levels: Vec<String> = m.parallel.iter().map(u32::to_string).collect();
        let _ = write!(settings, " --parallel {}", levels.join(","));
    }
    if let Some(b) = &m.baseline {
        let _ = write!(settings, " --baseline {b}");
    }
    let targets: Vec<String> = results
        .targets
        .iter()
        .map(|t| match &t.error {
            Some(e) => format!("{} (failed: {e})", t.column()),
            None if t.endpoint.is_empty() => t.column(),
            None => format!("{} ({})", t.column(), t.endpoint),
        })
        .collect();
    vec![
        ("started".into(), m.started.clone()),
        ("edgebench".into(), m.version.clone()),
        (
            "machine".into(),
            format!("{}, {} CPUs, {}/{}", m.cpu, m.procs, m.goos, m.goarch),
        ),
        ("settings".into(), settings),
        ("targets".into(), targets.join("; ")),
    ]
}

/// The medians of `bench` on every column that has one, fastest first.
fn ranked<'a>(bench: &str, columns: &[&'a TargetResults]) -> Vec<(&'a TargetResults, f64)> {
    let mut ranked: Vec<(&TargetResults, f64)> = columns
        .iter()
        .filter_map(|t| Some((*t, t.bench(bench)?.median()?.ns_per_op)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    ranked
}

/// `1.91× slower` against the fastest, or `fastest`.
fn slower(ns: f64, fastest: f64) -> String {
    if ns <= fastest || fastest <= 0.0 {
        "fastest".to_string()
    } else {
        format!("{}× slower", ratio(ns / fastest))
    }
}

/// A ratio with three significant digits (`1.91`, `12.3`, `240`).
fn ratio(r: f64) -> String {
    let d = if r >= 100.0 {
        0
    } else if r >= 10.0 {
        1
    } else {
        2
    };
    format!("{r:.d$}")
}

/// The at-a-glance table: per benchmark, the fastest target and its time, then every other
/// target's distance from it, and the targets that failed.
fn summary(
    results: &RunResults,
    columns: &[&TargetResults],
    benches: &[String],
    palette: &Palette,
) -> String {
    let swatch = |name: &str| {
        format!(
            "<span class=\"swatch\" style=\"background:{}\"></span>{}",
            palette.css(name),
            escape(name)
        )
    };
    let mut html = String::from(
        "<table class=\"glance\"><thead><tr><th>Benchmark</th><th>Fastest</th>\
         <th>time/op</th><th>Then (times slower than the fastest)</th></tr></thead><tbody>\n",
    );
    for bench in benches {
        let ranked = ranked(bench, columns);
        let Some(&(first, fastest)) = ranked.first() else {
            continue;
        };
        let rest: Vec<String> = ranked[1..]
            .iter()
            .map(|(t, ns)| format!("{} {}×", swatch(&t.column()), ratio(ns / fastest)))
            .collect();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"fastest\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(bench),
            swatch(&first.column()),
            escape(&charts::duration(fastest)),
            rest.join(", ")
        );
    }
    html.push_str("</tbody></table>\n");
    for t in &results.targets {
        if let Some(e) = &t.error {
            let _ = writeln!(
                html,
                "<p class=\"note\">{} did not finish: {}</p>",
                escape(&t.column()),
                escape(e)
            );
        }
    }
    html
}

/// One benchmark's bars, one per column that measured it, in the columns' order (so a
/// target keeps its place and colour in every chart).
fn bar_chart(bench: &str, columns: &[&TargetResults], palette: &Palette) -> Option<Chart> {
    let fastest = ranked(bench, columns).first()?.1;
    let bars = columns
        .iter()
        .filter_map(|t| {
            let b: &BenchResults = t.bench(bench)?;
            let m = b.median()?;
            let (low, high) = b.runs.iter().fold((m.ns_per_op, m.ns_per_op), |(l, h), r| {
                (l.min(r.ns_per_op), h.max(r.ns_per_op))
            });
            let column = t.column();
            Some(Bar {
                colour: palette.colour(&column),
                name: column,
                value: m.ns_per_op,
                low,
                high,
                note: format!(
                    "{} · {}",
                    charts::duration(m.ns_per_op),
                    slower(m.ns_per_op, fastest)
                ),
            })
        })
        .collect();
    Some(Chart::bars(
        &format!("{bench}: time per operation"),
        "time per operation",
        Unit::Nanos,
        bars,
    ))
}

/// One benchmark's latency curves, one per column whose median repetition kept a histogram.
fn latency_chart(bench: &str, columns: &[&TargetResults], palette: &Palette) -> Option<Chart> {
    let lines: Vec<Line> = columns
        .iter()
        .filter_map(|t| {
            let m = t.bench(bench)?.median()?;
            let points = latency::curve_of(&m.histogram)?;
            let column = t.column();
            Some(Line {
                colour: palette.colour(&column),
                name: column,
                dashed: false,
                points,
            })
        })
        .collect();
    latency::chart(
        &format!("{bench}: latency by percentile"),
        "latency of one operation",
        lines,
    )
}

/// The `--baseline` ratios (each column's median over the baseline's) as a table whose cells
/// are shaded by how far from 1 they are: green faster, red slower, full colour at 8× either
/// way (log scale, so 2× faster and 2× slower are equally deep). `None` when the baseline
/// column measured nothing.
fn heat_map(
    results: &RunResults,
    columns: &[&TargetResults],
    benches: &[String],
    base: &str,
) -> Option<String> {
    let baseline = results
        .targets
        .iter()
        .find(|t| t.column() == base && !t.benchmarks.is_empty())?;
    let mut html = format!(
        "<p class=\"note\">Each cell: the target's time per operation divided by {}'s. \
         Green is faster than the baseline, red slower; the deeper, the further (deepest \
         at 8×).</p>\n<table class=\"heat\"><thead><tr><th>Benchmark</th>",
        escape(base)
    );
    for t in columns {
        let _ = write!(html, "<th>{}</th>", escape(&t.column()));
    }
    html.push_str("</tr></thead><tbody>\n");
    for bench in benches {
        let _ = write!(html, "<tr><td>{}</td>", escape(bench));
        let base_ns = baseline
            .bench(bench)
            .and_then(|b| b.median())
            .map(|m| m.ns_per_op);
        for t in columns {
            match (t.bench(bench).and_then(|b| b.median()), base_ns) {
                (Some(m), Some(b)) if b > 0.0 && m.ns_per_op > 0.0 => {
                    let r = m.ns_per_op / b;
                    let _ = write!(
                        html,
                        "<td style=\"background:{}\">{}×</td>",
                        heat(r),
                        ratio(r)
                    );
                }
                _ => html.push_str("<td>n/a</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>");
    Some(html)
}

/// The cell colour of ratio `r`: white at 1, towards green below and red above, saturating
/// at 8× (three doublings).
fn heat(r: f64) -> String {
    let depth = (r.log2().abs() / 3.0).min(1.0);
    let (tr, tg, tb) = if r < 1.0 {
        (99.0, 190.0, 123.0)
    } else {
        (248.0, 105.0, 107.0)
    };
    let mix = |t: f64| (255.0 + (t - 255.0) * depth).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(tr), mix(tg), mix(tb))
}

/// `results.md` and `percentiles.md`, so the page stands alone.
fn tables(results: &RunResults) -> String {
    let md = crate::report::markdown::Markdown
        .render(results)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    format!(
        "<h3>µs per operation (results.md)</h3>\n{}\n<h3>Latency percentiles \
         (percentiles.md)</h3>\n{}",
        markdown(&md),
        markdown(&crate::report::percentiles::table(results))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use crate::report::html::charts::Marks;

    #[test]
    fn slower_and_ratio_read_plainly() {
        assert_eq!(slower(100.0, 100.0), "fastest");
        assert_eq!(slower(191.0, 100.0), "1.91× slower");
        assert_eq!(slower(1234.0, 100.0), "12.3× slower");
        assert_eq!(ratio(240.4), "240");
    }

    #[test]
    fn heat_is_white_at_one_and_saturates_at_eight() {
        assert_eq!(heat(1.0), "#ffffff");
        assert_eq!(heat(8.0), "#f8696b");
        assert_eq!(heat(100.0), "#f8696b");
        assert_eq!(heat(0.125), "#63be7b");
    }

    #[test]
    fn summary_names_the_fastest_and_the_distance() {
        let results = fixture::run();
        let columns: Vec<&TargetResults> = results.targets.iter().collect();
        let palette = Palette::new(columns.iter().map(|t| t.column()));
        let html = summary(&results, &columns, &results.bench_names(), &palette);
        // AddReading: RedisDB_TCP's median 76,292 ns against MongoDB's 146,033 ns.
        assert!(
            html.contains(
                "<tr><td>AddReading</td><td class=\"fastest\"><span class=\"swatch\" \
                 style=\"background:#4e79a7\"></span>RedisDB_TCP</td><td>76.3 µs</td>\
                 <td><span class=\"swatch\" style=\"background:#f28e2b\"></span>MongoDB \
                 1.91×</td></tr>"
            ),
            "{html}"
        );
        assert!(html.contains("MongoDB did not finish: connection reset by peer"));
    }

    #[test]
    fn bars_carry_median_spread_and_distance() {
        let results = fixture::run();
        let columns: Vec<&TargetResults> = results.targets.iter().collect();
        let palette = Palette::new(columns.iter().map(|t| t.column()));
        let chart = bar_chart("AddReading", &columns, &palette).unwrap();
        let Marks::Bars(bars) = &chart.marks else {
            panic!("bars")
        };
        assert_eq!(bars.len(), 2);
        assert_eq!(
            (bars[0].value, bars[0].low, bars[0].high),
            (76292.0, 70100.4, 81000.0)
        );
        assert_eq!(bars[0].note, "76.3 µs · fastest");
        assert_eq!(bars[1].note, "146 µs · 1.91× slower");
        // 70 µs to 146 µs is well within 20×: a linear axis from zero.
        assert!(!chart.x.log);
        // Events: one target only; EventCount: 210 ns against 94 µs, a log axis.
        assert!(bar_chart("EventCount", &columns, &palette).unwrap().x.log);
    }
}
