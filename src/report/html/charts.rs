//! The page's charts, drawn by plotters: a [`Chart`] is plain data (title, two axes, bars or
//! lines) and draws itself as SVG for the page or as PNG for `report html --png`.
//!
//! Two kinds cover every results kind: horizontal bars with error bars (one bar per target,
//! names on the left where long target names fit), and lines over two numeric axes (time
//! series, percentile distributions). An axis is linear or logarithmic; the ticks are chosen
//! here, not by plotters, so that a log axis shows round decades and the percentile axis
//! shows HdrHistogram's 50%/90%/99%/99.9%/99.99% marks.
//!
//! Text: plotters' SVG backend writes every label as a real `<text>` element (searchable,
//! copyable); it still measures text to lay the chart out, and the bitmap backend needs glyphs,
//! so DejaVu Sans (the `dejavu` crate, compiled in) is registered as plotters' `sans-serif`
//! once per process: no system font is assumed, and SVG and PNG lay out the same.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::memo::{Memo, QuickHasher};

/// An sRGB colour.
pub type Rgb = (u8, u8, u8);

/// Every chart is this wide, in pixels; two fit side by side on a wide screen.
pub const WIDTH: u32 = 720;

/// Colours by series name: a name gets the same colour in every chart of a page, in the
/// order the names were first given.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    names: Vec<String>,
}

/// Tableau 10 (distinct, readable on white, fairly colour-blind safe), then two darker tones
/// for runs with more targets; past twelve the colours repeat (the labels still say which).
const COLOURS: [Rgb; 12] = [
    (78, 121, 167),
    (242, 142, 43),
    (225, 87, 89),
    (118, 183, 178),
    (89, 161, 79),
    (237, 201, 72),
    (176, 122, 161),
    (255, 157, 167),
    (156, 117, 95),
    (186, 176, 172),
    (31, 59, 115),
    (140, 90, 30),
];

impl Palette {
    /// A palette over `names`, in order; repeated names keep their first colour.
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Palette {
        let mut palette = Palette::default();
        for n in names {
            if !palette.names.iter().any(|m| m == n.as_ref()) {
                palette.names.push(n.as_ref().to_string());
            }
        }
        palette
    }

    /// The colour of `name` (grey for a name the palette was not given).
    pub fn colour(&self, name: &str) -> Rgb {
        match self.names.iter().position(|n| n == name) {
            Some(i) => COLOURS[i % COLOURS.len()],
            None => (120, 120, 120),
        }
    }

    /// `#rrggbb` of `name`'s colour, for HTML beside the charts.
    pub fn css(&self, name: &str) -> String {
        let (r, g, b) = self.colour(name);
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// What an axis's numbers are, which decides how its ticks read.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    /// A duration in nanoseconds, shown as ns, µs, ms or s.
    Nanos,
    /// A count or a rate, shown with k/M/G.
    Count,
    /// Seconds since the start of a run.
    Seconds,
    /// HdrHistogram's percentile axis: x = 1/(1−p), shown as the percentile.
    Percentile,
    /// Named rows (a bar chart's targets), top first: value `i` is row `len − 1 − i`.
    Names(Vec<String>),
}

/// One axis: its title, unit, range and scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title, unit included ("time per operation (log scale)").
    pub label: String,
    /// What the numbers are.
    pub unit: Unit,
    /// The range shown.
    pub range: (f64, f64),
    /// Logarithmic (base 10) rather than linear.
    pub log: bool,
}

/// A log scale is used when the largest value is more than this many times the smallest
/// (issue 14: bars of 0.2 µs and 200 ms on one linear axis would hide the small ones).
pub const LOG_ABOVE_RATIO: f64 = 20.0;

impl Axis {
    /// An axis from zero (or, when `values` span more than [`LOG_ABOVE_RATIO`], a log axis)
    /// to a little past the largest value, with `headroom` (a fraction of the range, or of
    /// the decades on a log axis) added on top for labels or a legend.
    pub fn fit(label: &str, unit: Unit, values: &[f64], headroom: f64) -> Axis {
        Axis::fit_scaled(
            label,
            unit,
            values,
            headroom,
            spans(values) > LOG_ABOVE_RATIO,
        )
    }

    /// As [`Axis::fit`], with the scale decided by the caller (a bar chart decides by its
    /// medians, not by its whiskers).
    pub fn fit_scaled(label: &str, unit: Unit, values: &[f64], headroom: f64, log: bool) -> Axis {
        let positive: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let hi = positive.iter().copied().fold(0.0, f64::max);
        let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
        if hi <= 0.0 {
            return Axis {
                label: label.to_string(),
                unit,
                range: (0.0, 1.0),
                log: false,
            };
        }
        if log {
            // A whole decade, so the bars start at a labelled tick, and one more when the
            // smallest value is near it: the shortest bar must still show.
            let mut start = 10f64.powf(lo.log10().floor());
            if lo / start < 3.0 {
                start /= 10.0;
            }
            let (lo, hi) = (start, 10f64.powf(hi.log10() + (hi / lo).log10() * headroom));
            return Axis {
                label: format!("{label} (log scale)"),
                unit,
                range: (lo, hi),
                log: true,
            };
        }
        Axis {
            label: label.to_string(),
            unit,
            range: (0.0, hi * (1.0 + headroom).max(1.05)),
            log: false,
        }
    }

    /// The value where bars start: the left end of the axis.
    fn base(&self) -> f64 {
        self.range.0
    }

    /// The tick values: round numbers on a linear axis, decades (and 2, 5 between them on
    /// a short one) on a log axis, HdrHistogram's marks on the percentile axis, one per row
    /// on a names axis.
    pub fn ticks(&self) -> Vec<f64> {
        let (lo, hi) = self.range;
        match &self.unit {
            Unit::Names(names) => (0..names.len()).map(|i| i as f64).collect(),
            // From 50%: the 0% mark would sit on the 50% one's label.
            Unit::Percentile => [2.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
                .into_iter()
                .filter(|x| *x <= hi * 1.0001)
                .collect(),
            _ if self.log => {
                let decades = (hi / lo).log10();
                let steps: &[f64] = if decades <= 2.0 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let mut ticks = Vec::new();
                let mut decade = 10f64.powf(lo.log10().floor());
                while decade <= hi {
                    for s in steps {
                        let t = decade * s;
                        if t >= lo * 0.9999 && t <= hi * 1.0001 {
                            ticks.push(t);
                        }
                    }
                    decade *= 10.0;
                }
                ticks
            }
            _ => {
                // Heckbert's nice numbers ("Nice numbers for graph labels", Graphics Gems,
                // 1990): a step of 1, 2 or 5 times a power of ten, about six ticks.
                let raw = (hi - lo) / 6.0;
                if raw <= 0.0 || !raw.is_finite() {
                    return vec![lo];
                }
                let mag = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 5.0, 10.0]
                    .into_iter()
                    .map(|m| m * mag)
                    .find(|s| *s >= raw)
                    .unwrap_or(10.0 * mag);
                // Whole seconds: a run's seconds are counted, not measured.
                let step = match self.unit {
                    Unit::Seconds => step.max(1.0),
                    _ => step,
                };
                let mut t = (lo / step).ceil() * step;
                let mut ticks = Vec::new();
                while t <= hi + step * 1e-9 {
                    ticks.push(t);
                    t += step;
                }
                ticks
            }
        }
    }

    /// The tick label of `v`.
    pub fn label_of(&self, v: f64) -> String {
        match &self.unit {
            Unit::Nanos => duration(v),
            Unit::Count => count(v),
            Unit::Seconds => format!("{} s", significant(v)),
            Unit::Percentile => percentile(v),
            Unit::Names(names) => {
                let row = v.round();
                let idx = names.len() as f64 - 1.0 - row;
                if (v - row).abs() > 1e-6 || idx < 0.0 {
                    return String::new();
                }
                names.get(idx as usize).cloned().unwrap_or_default()
            }
        }
    }
}

/// How many times the largest positive value is the smallest (1 with none).
pub fn spans(values: &[f64]) -> f64 {
    let positive = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if hi > 0.0 {
        hi / lo
    } else {
        1.0
    }
}

/// A duration in ns as people read it: `850 ns`, `76.3 µs`, `1.20 ms`, `2.5 s` (three
/// significant digits at most, trailing zeros dropped).
pub fn duration(ns: f64) -> String {
    scaled(ns, &[(1e9, " s"), (1e6, " ms"), (1e3, " µs"), (1.0, " ns")])
}

/// A count with k, M or G: `950`, `12.5k`, `3M`.
pub fn count(v: f64) -> String {
    scaled(v, &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")])
}

/// `v` divided by the first of `units` (largest first) it reaches, or by the last, with
/// that unit's suffix.
fn scaled(v: f64, units: &[(f64, &str)]) -> String {
    let (div, suffix) = units
        .iter()
        .find(|(d, _)| v.abs() >= *d)
        .or(units.last())
        .copied()
        .unwrap_or((1.0, ""));
    format!("{}{suffix}", significant(v / div))
}

/// Three significant digits, no trailing zeros: 76.25 → `76.3`, 120.0 → `120`, 1.5 → `1.5`.
fn significant(v: f64) -> String {
    let decimals = if v.abs() >= 100.0 || v == 0.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The percentile at x = 1/(1−p) on HdrHistogram's axis: 2 → `50%`, 1000 → `99.9%`.
pub fn percentile(x: f64) -> String {
    if x <= 1.0 {
        return "0%".to_string();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    // As many decimals as the nines need: 99% none, 99.9% one, 99.99% two.
    let decimals = (x.log10() - 2.0).ceil().max(0.0) as usize;
    format!("{p:.decimals$}%")
}

/// One bar: a target's value, its spread, and the note printed at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The row's name (the target).
    pub name: String,
    /// The bar's colour.
    pub colour: Rgb,
    /// Where the bar ends (the median).
    pub value: f64,
    /// The error bar's ends (the smallest and largest repetition); equal to `value` for none.
    pub low: f64,
    /// See `low`.
    pub high: f64,
    /// Text after the bar ("76.3 µs  1.9× fastest").
    pub note: String,
}

/// One line: a series of (x, y) points.
#[derive(Debug, Clone)]
pub struct Line {
    /// The legend's name.
    pub name: String,
    /// Its colour.
    pub colour: Rgb,
    /// Dashed (a second statistic of the same series, e.g. p99 beside p50).
    pub dashed: bool,
    /// The points, in x order; shared, so a latency curve is not copied into every page.
    pub points: Arc<Vec<(f64, f64)>>,
}

impl PartialEq for Line {
    /// Equal lines; the same shared points are equal without a look at them.
    fn eq(&self, other: &Line) -> bool {
        (&self.name, self.colour, self.dashed) == (&other.name, other.colour, other.dashed)
            && (Arc::ptr_eq(&self.points, &other.points) || self.points == other.points)
    }
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Marks {
    /// One horizontal bar per row of the y axis ([`Unit::Names`]), first row on top.
    Bars(Vec<Bar>),
    /// Lines, with a legend.
    Lines(Vec<Line>),
}

/// A chart: a title, two axes and what is drawn between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The caption.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// Bars or lines.
    pub marks: Marks,
}

/// Drawing a chart failed (plotters' error, e.g. a font it could not use).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart \"{title}\": {why}")]
pub struct ChartError {
    title: String,
    why: String,
}

/// Every chart [`Chart::svg`] drew (a default run's page has 20).
pub static SVGS: Memo<Chart, String> = Memo::new(512);

/// Pixels per bar row.
const ROW: u32 = 30;

impl Chart {
    /// A bar chart of `bars` (top to bottom) along a value axis titled `value_label`.
    pub fn bars(title: &str, value_label: &str, unit: Unit, bars: Vec<Bar>) -> Chart {
        let values: Vec<f64> = bars.iter().flat_map(|b| [b.value, b.low, b.high]).collect();
        let medians: Vec<f64> = bars.iter().map(|b| b.value).collect();
        let x = Axis::fit_scaled(
            value_label,
            unit,
            &values,
            0.05,
            spans(&medians) > LOG_ABOVE_RATIO,
        );
        let x = with_room_for_notes(x, &bars);
        let names: Vec<String> = bars.iter().map(|b| b.name.clone()).collect();
        let n = names.len().max(1) as f64;
        let y = Axis {
            label: String::new(),
            unit: Unit::Names(names),
            range: (-0.5, n - 0.5),
            log: false,
        };
        Chart {
            title: title.to_string(),
            x,
            y,
            marks: Marks::Bars(bars),
        }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        match &self.marks {
            Marks::Bars(bars) => (WIDTH, 95 + ROW * bars.len().max(1) as u32),
            // Tall enough for the legend beside the plot.
            Marks::Lines(lines) => (WIDTH, 360.max(90 + 19 * lines.len() as u32)),
        }
    }

    /// The chart as an SVG document (`<svg …>…</svg>`), its text as `<text>` elements;
    /// drawn once per process for the same chart ([`super::memo`]).
    pub fn svg(&self) -> Result<Arc<String>, ChartError> {
        SVGS.get_or(self.fingerprint(), self, || self.draw_svg())
    }

    /// A hash of everything the chart draws (f64s by their bits).
    fn fingerprint(&self) -> u64 {
        let mut h = QuickHasher::default();
        self.title.hash(&mut h);
        for a in [&self.x, &self.y] {
            a.label.hash(&mut h);
            std::mem::discriminant(&a.unit).hash(&mut h);
            if let Unit::Names(names) = &a.unit {
                names.hash(&mut h);
            }
            [a.range.0, a.range.1].map(f64::to_bits).hash(&mut h);
            a.log.hash(&mut h);
        }
        match &self.marks {
            Marks::Bars(bars) => {
                for b in bars {
                    (&b.name, b.colour, &b.note).hash(&mut h);
                    [b.value, b.low, b.high].map(f64::to_bits).hash(&mut h);
                }
            }
            Marks::Lines(lines) => {
                for l in lines {
                    (&l.name, l.colour, l.dashed).hash(&mut h);
                    // The points by where they are: the memo's key keeps them alive, so the
                    // address names them; other points equal to them only miss.
                    h.write_usize(Arc::as_ptr(&l.points) as usize);
                }
            }
        }
        h.finish()
    }

    fn draw_svg(&self) -> Result<String, ChartError> {
        fonts();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size()).into_drawing_area();
            self.draw_on(&root)?;
            root.present().map_err(|e| self.error(e))?;
        }
        Ok(svg)
    }

    /// The chart as a PNG image.
    pub fn png(&self) -> Result<Vec<u8>, ChartError> {
        fonts();
        let (w, h) = self.size();
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            self.draw_on(&root)?;
            root.present().map_err(|e| self.error(e))?;
        }
        let mut png = Vec::new();
        let mut encoder = png::Encoder::new(&mut png, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .write_header()
            .and_then(|mut w| w.write_image_data(&rgb))
            .map_err(|e| self.error(e))?;
        Ok(png)
    }

    fn error(&self, why: impl std::fmt::Display) -> ChartError {
        ChartError {
            title: self.title.clone(),
            why: why.to_string(),
        }
    }

    /// Draws on any plotters backend.
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        root.fill(&WHITE).map_err(|e| self.error(e))?;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| self.error(e);
        let label_font = ("sans-serif", 15).into_font();
        let y_area = match &self.y.unit {
            // As wide as the longest name, so no target name is cut.
            Unit::Names(names) => {
                names
                    .iter()
                    .filter_map(|n| label_font.box_size(n).ok())
                    .map(|(w, _)| w)
                    .max()
                    .unwrap_or(40)
                    + 14
            }
            _ => 80,
        };
        // Lines get their legend to the right of the plot, where it covers no curve.
        let legend_width = match &self.marks {
            Marks::Lines(lines) => {
                let font = ("sans-serif", 14).into_font();
                lines
                    .iter()
                    .filter_map(|l| font.box_size(&l.name).ok())
                    .map(|(w, _)| w)
                    .max()
                    .unwrap_or(0)
                    + 48
            }
            Marks::Bars(_) => 0,
        };
        let mut chart = ChartBuilder::on(root)
            .caption(
                &self.title,
                ("sans-serif", 20).into_font().style(FontStyle::Bold),
            )
            .margin(12)
            .margin_right(12 + legend_width)
            .x_label_area_size(48)
            .y_label_area_size(y_area)
            .build_cartesian_2d(Coord::of(&self.x), Coord::of(&self.y))
            .map_err(err)?;
        let fx = |v: &f64| self.x.label_of(*v);
        let fy = |v: &f64| self.y.label_of(*v);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .x_labels(self.x.ticks().len())
            .y_labels(self.y.ticks().len())
            .label_style(label_font.clone())
            .axis_desc_style(("sans-serif", 16))
            .bold_line_style(RGBColor(225, 225, 225))
            .light_line_style(TRANSPARENT);
        if !self.y.label.is_empty() {
            mesh.y_desc(self.y.label.as_str());
        }
        if matches!(self.y.unit, Unit::Names(_)) {
            mesh.disable_y_mesh();
        }
        mesh.draw().map_err(err)?;
        match &self.marks {
            Marks::Bars(bars) => self.draw_bars(&mut chart, bars).map_err(err),
            Marks::Lines(lines) => {
                self.draw_lines(&mut chart, lines).map_err(err)?;
                let left = (WIDTH - 12 - legend_width) as i32 + 16;
                self.draw_legend(root, lines, left).map_err(err)
            }
        }
    }

    fn draw_bars<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<Coord, Coord>>,
        bars: &[Bar],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let base = self.x.base();
        let rows = bars.len() as f64;
        let row = |k: usize| rows - 1.0 - k as f64;
        chart.draw_series(bars.iter().enumerate().map(|(k, b)| {
            let (r, g, bl) = b.colour;
            Rectangle::new(
                [(base, row(k) - 0.32), (b.value.max(base), row(k) + 0.32)],
                RGBColor(r, g, bl).filled(),
            )
        }))?;
        chart.draw_series(bars.iter().enumerate().filter(|(_, b)| b.high > b.low).map(
            |(k, b)| {
                ErrorBar::new_horizontal(
                    row(k),
                    b.low.max(base),
                    b.value.max(base),
                    b.high.max(base),
                    RGBColor(40, 40, 40).stroke_width(1),
                    8,
                )
            },
        ))?;
        let note = ("sans-serif", 15)
            .into_font()
            .color(&RGBColor(30, 30, 30))
            .pos(Pos::new(HPos::Left, VPos::Center));
        chart.draw_series(bars.iter().enumerate().map(|(k, b)| {
            EmptyElement::at((b.high.max(b.value).max(base), row(k)))
                + Text::new(b.note.clone(), (8, 0), note.clone())
        }))?;
        Ok(())
    }

    fn draw_lines<'a, DB: DrawingBackend + 'a>(
        &self,
        chart: &mut ChartContext<'a, DB, Cartesian2d<Coord, Coord>>,
        lines: &[Line],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        // A log axis has no zero: values below its start sit on it.
        let (x0, y0) = (self.x.range.0, self.y.range.0);
        for l in lines {
            let (r, g, b) = l.colour;
            let style = RGBColor(r, g, b).stroke_width(2);
            let points = l.points.iter().map(|&(x, y)| (x.max(x0), y.max(y0)));
            if l.dashed {
                chart.draw_series(DashedLineSeries::new(points, 7, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(points, style))?;
            }
        }
        Ok(())
    }

    /// The lines' legend in the right margin `draw_on` leaves for it, one row per line from
    /// the top of the plot: a sample of the line (two dashes for a dashed one) and its name.
    /// Drawn on the whole chart's area: plotters' own legend lives inside the plot.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: &[Line],
        left: i32,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let font = ("sans-serif", 14)
            .into_font()
            .color(&RGBColor(30, 30, 30))
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, l) in lines.iter().enumerate() {
            let y = 52 + 19 * i as i32;
            let (r, g, b) = l.colour;
            let style = RGBColor(r, g, b).stroke_width(2);
            let dashes: &[(i32, i32)] = if l.dashed {
                &[(0, 7), (11, 18)]
            } else {
                &[(0, 18)]
            };
            for &(from, to) in dashes {
                root.draw(&PathElement::new(
                    vec![(left + from, y), (left + to, y)],
                    style,
                ))?;
            }
            root.draw(&Text::new(l.name.clone(), (left + 24, y), font.clone()))?;
        }
        Ok(())
    }
}

/// `x` stretched so that every bar's note fits after its bar (or whisker) inside the chart:
/// the axis end moves until each bar's end leaves its note's width ([`text_width`]) free.
fn with_room_for_notes(mut x: Axis, bars: &[Bar]) -> Axis {
    let width = |t: &str| text_width(t, 15.0);
    let names = bars.iter().map(|b| width(&b.name)).max().unwrap_or(40) + 14;
    // The plot's width: the chart less its margins, the names and the axis.
    let plot = f64::from(WIDTH.saturating_sub(24 + names + 4)).max(100.0);
    let (lo, hi) = x.range;
    let scale = |v: f64| if x.log { v.max(lo).log10() } else { v };
    let (a, b) = (scale(lo), scale(hi));
    let mut end = b;
    for bar in bars {
        // What fraction of the plot the bar and its whisker may take.
        let room = (1.0 - f64::from(width(&bar.note) + 14) / plot).max(0.2);
        end = end.max(a + (scale(bar.high.max(bar.value)) - a) / room);
    }
    x.range.1 = if x.log { 10f64.powf(end) } else { end };
    x
}

/// A little more than the width of `text` in DejaVu Sans at plotters' font `size` (drawn at
/// size / 1.24 px): its widest common glyphs (digits, most letters) advance 0.64 em. An
/// estimate rather than a measure: measuring every note of every chart on every rewrite of a
/// run's page cost more than drawing the charts that changed.
fn text_width(text: &str, size: f64) -> u32 {
    (text.chars().count() as f64 * size / 1.24 * 0.64).ceil() as u32
}

/// An [`Axis`] as a plotters coordinate: linear or log10 between the axis's ends, and its
/// own ticks as the only key points (plotters' own log axis would pick 1, 10, 100 and no
/// 50% mark; its linear one leaves us no ticks of our own and no way to mix the two in one
/// chart type).
#[derive(Debug, Clone)]
struct Coord {
    range: (f64, f64),
    log: bool,
    ticks: Vec<f64>,
}

impl Coord {
    fn of(axis: &Axis) -> Coord {
        Coord {
            range: axis.range,
            log: axis.log,
            ticks: axis.ticks(),
        }
    }

    /// Where `v` is between the ends, 0 to 1, in the axis's scale.
    fn fraction(&self, v: f64) -> f64 {
        let scale = |x: f64| {
            if self.log {
                x.max(f64::MIN_POSITIVE).log10()
            } else {
                x
            }
        };
        let (a, b) = (scale(self.range.0), scale(self.range.1));
        if b > a {
            (scale(v) - a) / (b - a)
        } else {
            0.0
        }
    }
}

impl Ranged for Coord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = f64::from(limit.1 - limit.0);
        limit.0 + (self.fraction(*value) * span).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Grid lines at the ticks only: the light grid would repeat them.
        match hint.weight() {
            KeyPointWeight::Bold => self.ticks.clone(),
            KeyPointWeight::Any => Vec::new(),
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.0..self.range.1
    }
}

/// Registers DejaVu Sans as plotters' `sans-serif` (regular and bold), once per process.
/// plotters keeps its fonts in a table of its own, so this is the one place the page touches
/// process-wide state; registering the same bytes again would change nothing.
fn fonts() {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| {
        // The bytes are the crate's own TrueType files, which parse; were they not, text
        // drawing would fail with an error naming the chart.
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts_read_as_people_write_them() {
        assert_eq!(duration(850.0), "850 ns");
        assert_eq!(duration(76_292.0), "76.3 µs");
        assert_eq!(duration(1_200_000.0), "1.2 ms");
        assert_eq!(duration(100_022_091.0), "100 ms");
        assert_eq!(duration(2.5e9), "2.5 s");
        assert_eq!(duration(0.0), "0 ns");
        assert_eq!(count(950.0), "950");
        assert_eq!(count(12_500.0), "12.5k");
        assert_eq!(count(3_000_000.0), "3M");
    }

    #[test]
    fn percentile_axis_labels_are_hdrhistograms() {
        let labels: Vec<String> = [1.0, 2.0, 10.0, 100.0, 1e3, 1e4]
            .into_iter()
            .map(percentile)
            .collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn axis_goes_log_past_twenty_times() {
        let linear = Axis::fit("t", Unit::Nanos, &[100.0, 2000.0], 0.0);
        assert!(!linear.log);
        assert_eq!(linear.range, (0.0, 2100.0));
        let log = Axis::fit("t", Unit::Nanos, &[100.0, 2001.0], 0.0);
        assert!(log.log);
        assert_eq!(log.label, "t (log scale)");
        // 100 is at its decade: one decade more, so its bar shows.
        assert_eq!(log.range.0, 10.0);
        assert!((log.range.1 - 2001.0).abs() < 1e-6);
        assert_eq!(
            log.ticks(),
            [10.0, 100.0, 1000.0],
            "decades only over more than two"
        );
        let short = Axis::fit("t", Unit::Nanos, &[400.0, 9000.0], 0.0);
        assert_eq!(short.range.0, 100.0);
        assert_eq!(short.ticks(), [100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]);
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::fit("ops", Unit::Count, &[0.0, 9_300.0], 0.0);
        assert_eq!(a.ticks(), [0.0, 2000.0, 4000.0, 6000.0, 8000.0]);
        let s = Axis {
            label: "s".into(),
            unit: Unit::Seconds,
            range: (0.0, 3.0),
            log: false,
        };
        assert_eq!(s.ticks(), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(s.label_of(2.0), "2 s");
    }

    #[test]
    fn names_axis_puts_the_first_name_on_top() {
        let c = Chart::bars(
            "t",
            "v",
            Unit::Nanos,
            ["a", "b", "c"]
                .iter()
                .map(|n| Bar {
                    name: n.to_string(),
                    colour: (0, 0, 0),
                    value: 1.0,
                    low: 1.0,
                    high: 1.0,
                    note: String::new(),
                })
                .collect(),
        );
        assert_eq!(c.y.label_of(2.0), "a");
        assert_eq!(c.y.label_of(0.0), "c");
        assert_eq!(c.y.label_of(0.5), "");
    }

    #[test]
    fn palette_keeps_colours_by_name() {
        let p = Palette::new(["b", "a", "b"]);
        assert_eq!(p.colour("b"), COLOURS[0]);
        assert_eq!(p.colour("a"), COLOURS[1]);
        assert_eq!(p.css("a"), "#f28e2b");
        assert_eq!(p.colour("zzz"), (120, 120, 120));
    }
}
