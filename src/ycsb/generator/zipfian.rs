//! The zipfian family: YCSB's `ZipfianGenerator`, `ScrambledZipfianGenerator` (the `zipfian`
//! request distribution) and `SkewedLatestGenerator` (`latest`).
//!
//! The draw is Gray et al.'s ("Quickly Generating Billion-Record Synthetic Databases", SIGMOD
//! 1994), as YCSB implements it: with `zetan` = ζ(n, θ) = Σ_{i=1..n} i^-θ, a uniform `u` picks
//! item 0 when `u·zetan < 1`, item 1 when `u·zetan < 1 + 2^-θ`, and otherwise
//! `⌊n·(η·u − η + 1)^(1/(1−θ))⌋` with `η = (1 − (2/n)^(1−θ)) / (1 − ζ(2, θ)/zetan)`. Items 0
//! and 1 get exactly their zipfian mass; the rest follow the continuous approximation, whose
//! CDF is `1 − (1 − ((k+1)/n)^(1−θ))/η` (the tests check draws against it).

use std::sync::Arc;

use super::{fnvhash64, next_f64, AcknowledgedCounter};
use crate::kv::rng::Rng;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`: θ for every zipfian CoreWorkload makes.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The item count of the zipfian behind [`ScrambledZipfian`]
/// (`ScrambledZipfianGenerator.ITEM_COUNT`, 10^10).
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;

/// ζ(10^10, 0.99), which YCSB precomputed (`ScrambledZipfianGenerator.ZETAN`) rather than sum
/// 10^10 terms at start-up. The exact value is 26.469028201751479…; YCSB's figure, a plain
/// double sum, is 3·10^-11 above it, and we keep YCSB's.
pub const SCRAMBLED_ZETAN: f64 = 26.46902820178302;

/// ζ(n, θ) = Σ_{i=1..n} i^-θ, summed in order as YCSB's `ZipfianGenerator.zetastatic` (so the
/// rounding is the same). O(n): 10^8 items take about a second in a release build; clone a
/// [`Zipfian`] rather than build one per thread.
pub fn zeta(n: u64, theta: f64) -> f64 {
    zeta_from(0, n, theta, 0.0)
}

/// `sum` (ζ over the first `from` items) extended to `to` items, in the same order.
fn zeta_from(from: u64, to: u64, theta: f64, sum: f64) -> f64 {
    (from..to).fold(sum, |sum, i| sum + 1.0 / ((i + 1) as f64).powf(theta))
}

/// YCSB's `ZipfianGenerator`: `min` is the most popular value, `min + 1` the next, … up to
/// `max`. [`Zipfian::next_long`] accepts a larger item count than the one it was built for
/// and extends ζ incrementally, as YCSB does; like YCSB, it keeps the `η` of the first count
/// (only `zetan` follows the new count), and a smaller count is used as is, without
/// recomputing ζ.
#[derive(Debug, Clone)]
pub struct Zipfian {
    /// `max - min + 1` as built; `η` stays computed from it.
    items: u64,
    base: u64,
    theta: f64,
    /// `1 / (1 - θ)`.
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// ζ(2, θ), for `η`.
    zeta2: f64,
    /// `1 + 0.5^θ`: ζ(2, θ) again, computed as YCSB's draw computes it (the two may round
    /// apart by one ulp); below it, `u·zetan` picks item 1.
    item1_bound: f64,
    /// The item count `zetan` is summed over.
    count_for_zeta: u64,
}

impl Zipfian {
    /// Over `min..=max` with θ = [`ZIPFIAN_CONSTANT`] (ζ summed here: O(max - min)).
    pub fn new(min: u64, max: u64) -> Self {
        Self::with_constant(min, max, ZIPFIAN_CONSTANT)
    }

    /// Over `min..=max` with θ = `constant` (ζ summed here: O(max - min)).
    pub fn with_constant(min: u64, max: u64, constant: f64) -> Self {
        let items = Self::items(min, max);
        Self::with_items(min, items, constant, zeta(items, constant))
    }

    /// Over `min..=max` with θ = `constant` and `zetan` = ζ(max - min + 1, θ) given (computed
    /// once, or YCSB's [`SCRAMBLED_ZETAN`]).
    pub fn with_zetan(min: u64, max: u64, constant: f64, zetan: f64) -> Self {
        Self::with_items(min, Self::items(min, max), constant, zetan)
    }

    /// `max - min + 1`; 0 for `max = min - 1`, as YCSB's `new ZipfianGenerator(0)`.
    fn items(min: u64, max: u64) -> u64 {
        max.wrapping_sub(min).wrapping_add(1)
    }

    /// YCSB's four-argument constructor, from an item count rather than `max` (YCSB's
    /// `SkewedLatestGenerator` builds one over its basis's last value, which may be 0 items).
    pub(super) fn with_items(base: u64, items: u64, theta: f64, zetan: f64) -> Self {
        let zeta2 = zeta(2, theta);
        Zipfian {
            items,
            base,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: Self::eta(items, theta, zeta2, zetan),
            zeta2,
            item1_bound: 1.0 + 0.5f64.powf(theta),
            count_for_zeta: items,
        }
    }

    fn eta(items: u64, theta: f64, zeta2: f64, zetan: f64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
    }

    /// ζ over the item count the generator currently uses.
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// The next value over the item count it was built for.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.next_long(rng, self.items)
    }

    /// The next value over `itemcount` items from `min` (YCSB's `nextLong(itemcount)`). A
    /// count above every count before extends ζ (O(the growth)); `η` keeps the first count,
    /// as YCSB's does.
    #[inline]
    pub fn next_long(&mut self, rng: &mut Rng, itemcount: u64) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta_from(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = Self::eta(self.items, self.theta, self.zeta2, self.zetan);
        }
        let u = next_f64(rng);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < self.item1_bound {
            return self.base + 1;
        }
        // `as u64` truncates as Java's (long) does (and maps NaN to 0, as Java does, which
        // YCSB's η reaches when built over 0 items).
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// YCSB's `ScrambledZipfianGenerator`, the `zipfian` request distribution: a zipfian draw over
/// [`SCRAMBLED_ITEM_COUNT`] items with ζ = [`SCRAMBLED_ZETAN`], hashed with [`fnvhash64`] and
/// folded onto `min..=max`, so the popular records are scattered over the key space and stay
/// the same records as the key space grows within the range.
///
/// As in YCSB the inner zipfian is built over `0..=ITEM_COUNT` (10^10 + 1 items) with ζ of
/// 10^10: the draw never reaches the last one.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    zipfian: Zipfian,
    min: u64,
    items: u64,
}

impl ScrambledZipfian {
    /// Over `min..=max` (CoreWorkload: `insertstart ..= insertstart + insertcount +
    /// expectednewkeys`). θ is 0.99: YCSB's only constant with a precomputed ζ.
    ///
    /// # Panics
    /// If `min > max`.
    pub fn new(min: u64, max: u64) -> Self {
        assert!(min <= max, "zipfian bounds {min}..={max} are reversed");
        ScrambledZipfian {
            zipfian: Zipfian::with_zetan(
                0,
                SCRAMBLED_ITEM_COUNT,
                ZIPFIAN_CONSTANT,
                SCRAMBLED_ZETAN,
            ),
            min,
            items: max - min + 1,
        }
    }

    /// The next record number: `min + fnvhash64(draw) % items`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let draw = self.zipfian.next(rng);
        // Java's signed remainder: fnvhash64 is never negative for these draws.
        let offset = fnvhash64(draw as i64) % self.items as i64;
        self.min.wrapping_add(offset as u64)
    }
}

/// YCSB's `SkewedLatestGenerator`, the `latest` request distribution: `last - z`, where `last`
/// is the insert counter's last acknowledged value at this draw and `z` a zipfian draw over
/// `last` items, so the newest records are the most popular. (So record 0 is never chosen,
/// as in YCSB: `z` stays below `last`.)
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    basis: Arc<AcknowledgedCounter>,
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// Over the records `basis` has acknowledged; sums ζ over its current last value (O(n)).
    pub fn new(basis: Arc<AcknowledgedCounter>) -> Self {
        let items = basis.last_value();
        let zipfian =
            Zipfian::with_items(0, items, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT));
        SkewedLatest { basis, zipfian }
    }

    /// The next record number.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let last = self.basis.last_value();
        // The draw is at most `last` (rounding can reach it, never pass it).
        last.saturating_sub(self.zipfian.next_long(rng, last))
    }
}
