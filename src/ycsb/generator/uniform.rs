//! The distributions built on one uniform draw: uniform, hotspot and exponential.

use super::next_f64;
use crate::kv::rng::Rng;

/// A record number uniform over `lb..=ub`, as YCSB's `UniformLongGenerator` (used for the
/// `uniform` request distribution, the field chosen for an update, and scan lengths).
///
/// YCSB takes `Math.abs(nextLong()) % interval`, whose bias is below 2^-30 for any interval
/// a run uses; [`Rng::range_inclusive`] is unbiased.
#[derive(Debug, Clone)]
pub struct UniformLong {
    lb: u64,
    ub: u64,
}

impl UniformLong {
    /// Uniform over `lb..=ub`, both included.
    ///
    /// # Panics
    /// If `lb > ub` (YCSB then returns garbage; the configuration must reject it first).
    pub fn new(lb: u64, ub: u64) -> Self {
        assert!(lb <= ub, "uniform bounds {lb}..={ub} are reversed");
        UniformLong { lb, ub }
    }

    /// The next number in `lb..=ub`.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        rng.range_inclusive(self.lb, self.ub)
    }
}

/// YCSB's `HotspotIntegerGenerator`: the first `hotsetfraction` of `lb..=ub` (the hot set)
/// takes `hotopnfraction` of the draws, uniform within it; the rest are uniform over the
/// other records.
#[derive(Debug, Clone)]
pub struct Hotspot {
    lb: u64,
    hot_items: u64,
    cold_items: u64,
    hot_share: f64,
}

impl Hotspot {
    /// The hotspot over `lb..=ub` (`hotspotdatafraction`, `hotspotopnfraction`). As YCSB, a
    /// fraction outside `[0, 1]` becomes 0, reversed bounds are swapped, and the hot set's
    /// size is `(int) (items * hotsetfraction)`: truncated, and at most `i32::MAX`.
    ///
    /// YCSB divides by zero when a draw lands in an empty set (a hot set below one record,
    /// or all records hot); here such a draw goes to the other set.
    pub fn new(lb: u64, ub: u64, hotsetfraction: f64, hotopnfraction: f64) -> Self {
        let in_range = |f: f64| if (0.0..=1.0).contains(&f) { f } else { 0.0 };
        let (hotsetfraction, hot_share) = (in_range(hotsetfraction), in_range(hotopnfraction));
        let (lb, ub) = if lb <= ub { (lb, ub) } else { (ub, lb) };
        let items = ub - lb + 1;
        // Java's (int) cast of a double: truncates, and saturates at Integer.MAX_VALUE.
        let hot_items = (items as f64 * hotsetfraction) as i32 as u64;
        Hotspot {
            lb,
            hot_items,
            cold_items: items - hot_items,
            hot_share,
        }
    }

    /// The next record number.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let hot = next_f64(rng) < self.hot_share;
        if (hot && self.hot_items > 0) || self.cold_items == 0 {
            self.lb + rng.below(self.hot_items)
        } else {
            self.lb + self.hot_items + rng.below(self.cold_items)
        }
    }
}

/// YCSB's `ExponentialGenerator`: an exponential distribution with rate `gamma`, so that
/// `percentile` percent of draws fall below `range`.
#[derive(Debug, Clone)]
pub struct Exponential {
    gamma: f64,
}

impl Exponential {
    /// `gamma = -ln(1 - percentile/100) / range`. CoreWorkload passes
    /// `exponential.percentile` (default 95) and `recordcount * exponential.frac` (default
    /// 0.8571428571).
    pub fn new(percentile: f64, range: f64) -> Self {
        Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    /// The rate of the distribution.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The next draw as YCSB makes it, `-ln(u) / gamma` for `u` uniform in `[0, 1)`.
    #[inline]
    pub fn next_f64(&self, rng: &mut Rng) -> f64 {
        -next_f64(rng).ln() / self.gamma
    }

    /// The next draw truncated to an integer, as CoreWorkload uses it (`intValue()`; YCSB
    /// narrows to a Java `int`, we saturate at `u64::MAX`, which differs only beyond 2^31).
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        self.next_f64(rng) as u64
    }
}
