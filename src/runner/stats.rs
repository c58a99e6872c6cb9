//! The statistics every workload shares: the median of a sample, and the HDR histogram that
//! records latencies (3 significant digits, as memtier_benchmark and PadoGrid's runs keep
//! them; auto-resizing, so no latency is out of range).

use hdrhistogram::Histogram;

/// The median of the finite values in `values` (the middle one, or the mean of the middle
/// two); NaN when there is none. NaN and infinite entries (a run that measured nothing) are
/// left out rather than sorted to an end.
pub fn median(values: &mut Vec<f64>) -> f64 {
    values.retain(|x| x.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// An empty latency histogram: 3 significant digits, auto-resizing.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is valid")
}

/// A histogram as HdrHistogram's V2 compressed encoding in base64, as `results.json` keeps
/// them (any HdrHistogram library decodes it); empty when encoding fails, which loses only
/// the exportable histogram, never the figures.
pub fn encoded<T: hdrhistogram::Counter>(h: &Histogram<T>) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&bytes),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_even_and_non_finite_samples() {
        assert_eq!(median(&mut vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut vec![4.0, 1.0, f64::NAN, 2.0, 3.0]), 2.5);
        assert!(median(&mut vec![f64::NAN]).is_nan());
        assert!(median(&mut Vec::new()).is_nan());
    }

    #[test]
    fn latency_histograms_take_any_latency() {
        let mut h = latency_histogram();
        h.record(1).unwrap();
        h.record(3_600_000_000_000).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h.sigfig(), 3);
    }
}
