//! Golden tests of the charts' SVG: for small fixed inputs, the series, axes and labels are
//! there as `<text>`, and values sit where the axes say (a bar twice as long is twice as
//! wide; a bar ends at its value's tick; the median of a latency curve is at the 50% tick).

use regex::Regex;

use super::charts::{Axis, Bar, Chart, Line, Marks, Palette, Unit};

/// Every `<text>` of an SVG: (x, y, text).
fn texts(svg: &str) -> Vec<(i32, i32, String)> {
    let re = Regex::new(r#"<text x="(-?\d+)" y="(-?\d+)"[^>]*>\n([^\n]*)\n</text>"#).unwrap();
    re.captures_iter(svg)
        .map(|c| {
            (
                c[1].parse().unwrap(),
                c[2].parse().unwrap(),
                c[3].to_string(),
            )
        })
        .collect()
}

/// The x of the text `t` (a tick label is centred on its tick).
fn x_of(svg: &str, t: &str) -> i32 {
    texts(svg)
        .into_iter()
        .find(|(_, _, s)| s == t)
        .unwrap_or_else(|| panic!("no text {t:?} in {svg}"))
        .0
}

/// (x, width) of the rectangles filled with `fill` (upper-case hex, as plotters writes it).
fn rects(svg: &str, fill: &str) -> Vec<(i32, i32)> {
    let re = Regex::new(&format!(
        r#"<rect x="(-?\d+)" y="-?\d+" width="(\d+)" height="\d+" opacity="1" fill="{fill}""#
    ))
    .unwrap();
    re.captures_iter(svg)
        .map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap()))
        .collect()
}

fn bars(values: &[(&str, f64)]) -> Chart {
    let palette = Palette::new(values.iter().map(|(n, _)| *n));
    Chart::bars(
        "AddReading: time per operation",
        "time per operation",
        Unit::Nanos,
        values
            .iter()
            .map(|&(name, v)| Bar {
                name: name.into(),
                colour: palette.colour(name),
                value: v,
                low: v * 0.9,
                high: v * 1.2,
                note: format!("{name} note"),
            })
            .collect(),
    )
}

#[test]
fn bar_chart_has_its_texts_and_bars_in_proportion() {
    let svg = bars(&[("RedisDB_TCP", 100.0), ("MongoDB", 200.0)])
        .svg()
        .unwrap();
    let all: Vec<String> = texts(&svg).into_iter().map(|t| t.2).collect();
    for t in [
        "AddReading: time per operation",
        "time per operation",
        "RedisDB_TCP",
        "MongoDB",
        "0 ns",
        "100 ns",
        "200 ns",
        "RedisDB_TCP note",
        "MongoDB note",
    ] {
        assert!(all.iter().any(|s| s == t), "{t:?} missing from {all:?}");
    }
    // The first target is on top.
    let y = |t: &str| texts(&svg).into_iter().find(|x| x.2 == t).unwrap().1;
    assert!(y("RedisDB_TCP") < y("MongoDB"));
    let first = rects(&svg, "#4E79A7");
    let second = rects(&svg, "#F28E2B");
    assert_eq!((first.len(), second.len()), (1, 1));
    // Both start at the 0 tick; 100 ns ends at the 100 ns tick; 200 ns is twice as long.
    assert_eq!(first[0].0, x_of(&svg, "0 ns"));
    assert_eq!(second[0].0, x_of(&svg, "0 ns"));
    assert!((first[0].0 + first[0].1 - x_of(&svg, "100 ns")).abs() <= 1);
    assert!(
        (second[0].1 - 2 * first[0].1).abs() <= 1,
        "{first:?} {second:?}"
    );
    // Error bars: a whisker and a median mark per bar.
    assert_eq!(svg.matches("<circle").count(), 2);
}

#[test]
fn bar_chart_goes_log_and_places_decades_evenly() {
    let svg = bars(&[("a", 400.0), ("b", 40_000.0)]).svg().unwrap();
    assert!(svg.contains("time per operation (log scale)"));
    let (t100, t1k, t10k) = (
        x_of(&svg, "100 ns"),
        x_of(&svg, "1 µs"),
        x_of(&svg, "10 µs"),
    );
    assert!(((t1k - t100) - (t10k - t1k)).abs() <= 1);
    // 40 µs is log10(4) of a decade past the 10 µs tick.
    let b = rects(&svg, "#F28E2B")[0];
    let expected = t10k as f64 + 4f64.log10() * (t10k - t1k) as f64;
    assert!(
        (f64::from(b.0 + b.1) - expected).abs() <= 1.5,
        "{b:?} {expected}"
    );
}

#[test]
fn percentile_curve_has_hdrhistograms_axis_and_a_legend() {
    let chart = Chart {
        title: "AddReading: latency by percentile".into(),
        x: Axis {
            label: "percentile".into(),
            unit: Unit::Percentile,
            range: (1.0, 1000.0),
            log: true,
        },
        y: Axis::fit("latency", Unit::Nanos, &[100.0, 400.0], 0.0),
        marks: Marks::Lines(vec![Line {
            name: "RedisDB_TCP".into(),
            colour: (78, 121, 167),
            dashed: false,
            points: std::sync::Arc::new(vec![
                (1.0, 100.0),
                (2.0, 200.0),
                (10.0, 300.0),
                (100.0, 400.0),
            ]),
        }]),
    };
    let svg = chart.svg().unwrap();
    let all: Vec<String> = texts(&svg).into_iter().map(|t| t.2).collect();
    for t in [
        "50%",
        "90%",
        "99%",
        "99.9%",
        "percentile",
        "latency",
        "RedisDB_TCP",
    ] {
        assert!(all.iter().any(|s| s == t), "{t:?} missing from {all:?}");
    }
    let re = Regex::new(
        r##"<polyline fill="none" opacity="1" stroke="#4E79A7" stroke-width="2" points="([^"]*)"/>"##,
    ).unwrap();
    let lines: Vec<Vec<(i32, i32)>> = re
        .captures_iter(&svg)
        .map(|c| {
            c[1].split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect();
    // The curve, and its legend sample right of the plot, before the name.
    let curve = lines.iter().find(|l| l.len() == 4).expect("the curve");
    let sample = lines
        .iter()
        .find(|l| l.len() == 2)
        .expect("the legend's sample");
    assert!(sample[0].0 > x_of(&svg, "99.9%"));
    assert!(sample[1].0 < x_of(&svg, "RedisDB_TCP"));
    // p = 0 at the start of the axis, and 50% a log10(2) of the way to 90%.
    let (x0, x50, x90) = (curve[0].0, x_of(&svg, "50%"), x_of(&svg, "90%"));
    let expected = f64::from(x0) + 2f64.log10() * f64::from(x90 - x0);
    assert!((f64::from(x50) - expected).abs() <= 1.0, "{x0} {x50} {x90}");
    assert_eq!(curve[1].0, x_of(&svg, "50%"));
    assert_eq!(curve[2].0, x_of(&svg, "90%"));
    assert_eq!(curve[3].0, x_of(&svg, "99%"));
    // Linear y from 0: 200 ns is twice as high above the axis as 100 ns.
    let y0 = texts(&svg).into_iter().find(|t| t.2 == "0 ns").unwrap().1;
    assert!(((y0 - curve[1].1) - 2 * (y0 - curve[0].1)).abs() <= 1);
}
