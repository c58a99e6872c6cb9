//! Percentile-distribution curves from the full HDR histograms the results keep, on
//! HdrHistogram's axis: x = 1/(1−p), so 50%, 90%, 99%, 99.9% and 99.99% are evenly spaced on
//! a log scale and the tail gets as much room as the median (Gil Tene's
//! HistogramLogAnalyzer / `hdrhistogram.github.io/HdrHistogram/plotFiles.html`), and the
//! chart that draws them ([`chart`]).

use std::sync::Arc;

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use super::charts::{Axis, Chart, Line, Marks, Unit};
use super::memo::{hash_of, Memo};

/// Quantile steps per halving of the distance to 100%, as HdrHistogram's
/// `outputPercentileDistribution` prints them with 5 ticks.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// A histogram stored as `results.json` keeps it (V2 compressed encoding, base64); `None`
/// when there is none or it does not decode (the chart then leaves that target out and the
/// page says so, rather than failing the whole page).
pub fn decode(b64: &str) -> Option<Histogram<u64>> {
    if b64.is_empty() {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}

/// Every curve [`curve_of`] decoded (a default run has 110 histograms).
pub static CURVES: Memo<String, Vec<(f64, f64)>> = Memo::new(4096);

/// The curve of the histogram `b64` (as `results.json` keeps it), decoded once per process
/// (`super::memo`); `None` when there is none or it does not decode.
pub fn curve_of(b64: &str) -> Option<Arc<Vec<(f64, f64)>>> {
    if b64.is_empty() {
        return None;
    }
    // The hash only picks the bucket (the full string is compared), so its length and first
    // bytes will do: hashing all of a run's histograms on every rewrite would cost more.
    let head = &b64.as_bytes()[..b64.len().min(96)];
    CURVES
        .get_or(hash_of(&(b64.len(), head)), b64, || {
            decode(b64).map(|h| curve(&h)).ok_or(())
        })
        .ok()
}

/// The curve of `h`: (1/(1−p), latency ns) at HdrHistogram's quantile steps. Past
/// p = 1 − 1/n there is nothing but the slowest value, so the curve ends at x = n (`n` the
/// count) with the maximum, where HdrHistogram's own plot would go on to infinity.
pub fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let n = h.len() as f64;
    if n == 0.0 {
        return Vec::new();
    }
    let x_max = n.max(2.0);
    let mut points: Vec<(f64, f64)> = Vec::new();
    for v in h.iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        let q = v.quantile_iterated_to();
        let x = if q >= 1.0 {
            x_max
        } else {
            (1.0 / (1.0 - q)).min(x_max)
        };
        let ns = h.highest_equivalent(v.value_iterated_to()) as f64;
        match points.last_mut() {
            // Two steps at the same x (the cap): keep the larger value.
            Some(last) if last.0 >= x => last.1 = last.1.max(ns),
            _ => points.push((x, ns)),
        }
    }
    points
}

/// The right end of the percentile axis for curves reaching `x_max`: the next power of ten,
/// so the last labelled percentile is past every curve.
pub fn axis_end(x_max: f64) -> f64 {
    10f64.powf(x_max.max(10.0).log10().ceil())
}

/// A chart of percentile-distribution curves (`lines`, their points from [`curve_of`]): x on
/// HdrHistogram's axis up to the decade past the longest curve, y the latency, titled
/// `label`. `None` without lines.
pub fn chart(title: &str, label: &str, lines: Vec<Line>) -> Option<Chart> {
    if lines.is_empty() {
        return None;
    }
    // A curve rises left to right in both x and latency: its ends are its extremes (the
    // first positive latency, for a log axis), so no page rewrite walks every point.
    let x_max = lines
        .iter()
        .filter_map(|l| l.points.last().map(|p| p.0))
        .fold(1.0, f64::max);
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| {
            let low = l.points.iter().find(|p| p.1 > 0.0).map(|p| p.1);
            low.into_iter().chain(l.points.last().map(|p| p.1))
        })
        .collect();
    Some(Chart {
        title: title.to_string(),
        x: Axis {
            label: "percentile".into(),
            unit: Unit::Percentile,
            range: (1.0, axis_end(x_max)),
            log: true,
        },
        y: Axis::fit(label, Unit::Nanos, &ys, 0.1),
        marks: Marks::Lines(lines),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_places_percentiles_on_hdrhistograms_axis() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let points = curve(&h);
        // Starts at p = 0 (x = 1) with the smallest value, ends at x = n with the largest.
        assert_eq!(points[0].0, 1.0);
        assert_eq!(points[0].1, h.highest_equivalent(1000) as f64);
        assert_eq!(points.last().unwrap(), &(1000.0, h.max() as f64));
        // The median sits at x = 2, the 90th percentile at x = 10.
        let at = |x: f64| points.iter().find(|p| (p.0 - x).abs() < 1e-9).unwrap().1;
        assert_eq!(at(2.0), h.highest_equivalent(500_000) as f64);
        // hdrhistogram's iterator steps past the 900th value at 90% into the next bucket
        // (1,024 ns wide here), as HdrHistogram's own percentile output does.
        assert_eq!(at(10.0), h.highest_equivalent(901_000) as f64);
        assert!(points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn decode_reads_what_results_json_keeps() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(1234).unwrap();
        h.record(99_000).unwrap();
        let back = decode(&crate::runner::stats::encoded(&h)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.max(), h.max());
        assert!(decode("").is_none());
        assert!(decode("not base64!").is_none());
    }

    #[test]
    fn axis_ends_on_a_decade() {
        assert_eq!(axis_end(20.0), 100.0);
        assert_eq!(axis_end(3.0), 10.0);
        assert_eq!(axis_end(1000.0), 1000.0);
    }
}
