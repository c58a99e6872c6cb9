//! Key indexes and key bytes, following memtier_benchmark's `object_generator`
//! (`obj_gen.cpp`) and its per-client set-up (`client.cpp`, `client::setup_client`).
//!
//! A key is `--key-prefix` followed by the decimal index (`snprintf("%s%llu")` in
//! `object_generator::generate_key`). Each connection owns one [`KeyGen`]; it keeps one
//! position per key *stream* (the SET side and the GET side, or one per `--command`), so
//! sequential streams advance independently, as memtier's key iterators do.
//!
//! Invariants:
//! - Every index returned lies in the generator's range `[min, max]` (the whole key range,
//!   or the connection's slice for `P`).
//! - `S` and `P` visit every index of their range once per pass, in order, then wrap.
//! - Writing a key appends to the caller's buffer and never allocates once the buffer has
//!   room for prefix + 20 digits.

use super::rng::Rng;

/// How one side (or one `--command`) picks key indexes: memtier's `--key-pattern` letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KeyPattern {
    /// `S`: sequential over `[min, max]`, wrapping; every connection walks the whole range.
    Sequential,
    /// `R`: uniform over `[min, max]`.
    Random,
    /// `G`: Gaussian around `--key-median` with `--key-stddev`, redrawn until inside the range.
    Gaussian,
    /// `Z`: Zipf with `--key-zipf-exp` over `[max(min, 1), max]`; index 1 (or min) is the
    /// most popular.
    Zipf,
    /// `P`: "parallel" sequential: each connection walks only its own slice of the range
    /// ([`parallel_slice`]), so all connections together visit each key once per pass.
    Parallel,
}

impl KeyPattern {
    /// Reads memtier's letter (`S`, `R`, `G`, `Z`, `P`), upper case only as memtier does.
    pub fn from_letter(c: char) -> Option<Self> {
        Some(match c {
            'S' => KeyPattern::Sequential,
            'R' => KeyPattern::Random,
            'G' => KeyPattern::Gaussian,
            'Z' => KeyPattern::Zipf,
            'P' => KeyPattern::Parallel,
            _ => return None,
        })
    }

    /// memtier's letter for this pattern.
    pub fn letter(self) -> char {
        match self {
            KeyPattern::Sequential => 'S',
            KeyPattern::Random => 'R',
            KeyPattern::Gaussian => 'G',
            KeyPattern::Zipf => 'Z',
            KeyPattern::Parallel => 'P',
        }
    }
}

/// The key space every connection draws from (`--key-prefix`, `--key-minimum`,
/// `--key-maximum`, `--key-stddev`, `--key-median`, `--key-zipf-exp`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeySpace {
    /// Bytes before the decimal index.
    pub prefix: String,
    /// Smallest index, inclusive.
    pub min: u64,
    /// Largest index, inclusive.
    pub max: u64,
    /// Gaussian standard deviation; `None` means memtier's default, (max − min) / 6.
    pub stddev: Option<f64>,
    /// Gaussian centre; `None` means memtier's default, min + (max − min) / 2 + 0.5.
    pub median: Option<f64>,
    /// Zipf exponent in (0, 5); memtier's default is 1.
    pub zipf_exp: f64,
}

impl KeySpace {
    /// The standard deviation `G` uses (`gaussian_noise::gaussian_distribution_range`).
    pub fn effective_stddev(&self) -> f64 {
        self.stddev.unwrap_or((self.max - self.min) as f64 / 6.0)
    }

    /// The centre `G` uses (`gaussian_noise::gaussian_distribution_range`).
    pub fn effective_median(&self) -> f64 {
        self.median
            .unwrap_or((self.max - self.min) as f64 / 2.0 + self.min as f64 + 0.5)
    }

    /// How many keys the range holds (saturating at `u64::MAX`).
    pub fn len(&self) -> u64 {
        (self.max - self.min).saturating_add(1)
    }

    /// Never true: a range holds at least one key. Present for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// The slice `[lo, hi]` of `[min, max]` that connection `conn_index` of `total` walks under
/// `P`, and with `-n allkeys` writes exactly once.
///
/// memtier (`client::setup_client`) gives each client `range = (max − min) / total + 1`
/// keys starting at `min + range × index`, and the last client the leftover up to `max`.
/// When the key count is not a multiple of `total`, that formula can start the last slices
/// beyond `max` (memtier then writes keys past `--key-maximum`, a bug). Where memtier's
/// slices are all inside the range we use them unchanged; otherwise we split evenly (slice
/// sizes differ by at most one). Either way the slices are disjoint and cover the range.
///
/// Requires `1 <= total <= max − min + 1` and `conn_index < total` (checked by
/// [`super::KvConfig::from_args`]).
pub fn parallel_slice(min: u64, max: u64, conn_index: u64, total: u64) -> (u64, u64) {
    debug_assert!(total >= 1 && conn_index < total);
    let (min_w, max_w, i, t) = (
        u128::from(min),
        u128::from(max),
        u128::from(conn_index),
        u128::from(total),
    );
    let range = (max_w - min_w) / t + 1;
    if min_w + range * (t - 1) <= max_w {
        let lo = min_w + range * i;
        let hi = if i == t - 1 { max_w } else { lo + range - 1 };
        return (lo as u64, hi as u64);
    }
    let n = max_w - min_w + 1;
    let (base, extra) = (n / t, n % t);
    let lo = min_w + i * base + i.min(extra);
    let len = base + u128::from(i < extra);
    (lo as u64, (lo + len - 1) as u64)
}

/// memtier's Gaussian sampler (`gaussian_noise` in `obj_gen.cpp`): Marsaglia's polar method,
/// keeping the spare value, redrawing until the value falls inside the range.
#[derive(Debug, Clone)]
pub(crate) struct Gaussian {
    stddev: f64,
    median: f64,
    spare: Option<f64>,
}

impl Gaussian {
    /// A sampler around `median` with standard deviation `stddev`.
    pub(crate) fn new(stddev: f64, median: f64) -> Self {
        Gaussian {
            stddev,
            median,
            spare: None,
        }
    }

    fn noise(&mut self, rng: &mut Rng) -> f64 {
        if let Some(spare) = self.spare.take() {
            return self.stddev * spare;
        }
        loop {
            let u = rng.unit_closed() * 2.0 - 1.0;
            let v = rng.unit_closed() * 2.0 - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s != 0.0 {
                let m = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * m);
                return self.stddev * u * m;
            }
        }
    }

    /// memtier accepts `val <= max + 1` and truncates, so `max + 1` itself could escape the
    /// range (with probability zero in exact arithmetic); we take `val < max + 1`.
    pub(crate) fn sample(&mut self, rng: &mut Rng, min: u64, max: u64) -> u64 {
        if min == max {
            return min;
        }
        let (lo, hi) = (min as f64, max as f64 + 1.0);
        loop {
            let val = self.noise(rng) + self.median;
            if val >= lo && val < hi {
                return (val as u64).clamp(min, max);
            }
        }
    }
}

/// memtier's Zipf sampler: rejection-inversion (Hörmann and Derflinger, "Rejection-inversion
/// to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), set
/// up as in `object_generator::set_key_zipf_distribution` and drawn as in
/// `object_generator::zipf_distribution`.
#[derive(Debug, Clone)]
struct Zipf {
    min: u64,
    max: u64,
    exp: f64,
    one_minus_exp: f64,
    one_minus_exp_inv: f64,
    h_min: f64,
    h_max: f64,
    s: f64,
}

/// memtier's tolerance for "the exponent is 0" and "the exponent is 1".
const ZIPF_EPS: f64 = 1e-4;

impl Zipf {
    fn new(key_min: u64, key_max: u64, key_exp: f64) -> Self {
        let exp = if key_exp < ZIPF_EPS {
            0.0
        } else if (key_exp - 1.0).abs() < ZIPF_EPS {
            1.0
        } else {
            key_exp
        };
        let min = key_min.max(1);
        let max = key_max.max(min);
        let (fmin, fmax) = (min as f64, max as f64);
        let mut z = Zipf {
            min,
            max,
            exp,
            one_minus_exp: 0.0,
            one_minus_exp_inv: 0.0,
            h_min: 0.0,
            h_max: 0.0,
            s: 0.0,
        };
        if exp < ZIPF_EPS {
            return z;
        }
        if (exp - 1.0).abs() < ZIPF_EPS {
            z.h_min = (fmin + 0.5).ln() - 1.0 / fmin;
            z.h_max = (fmax + 0.5).ln();
            let t = (fmin + 1.5).ln() - 1.0 / (fmin + 1.0);
            z.s = fmin + 1.0 - t.exp();
        } else {
            z.one_minus_exp = 1.0 - exp;
            z.one_minus_exp_inv = 1.0 / z.one_minus_exp;
            z.h_min = (fmin + 0.5).powf(z.one_minus_exp) - z.one_minus_exp * fmin.powf(-exp);
            z.h_max = (fmax + 0.5).powf(z.one_minus_exp);
            let t = (fmin + 1.5).powf(z.one_minus_exp) - z.one_minus_exp * (fmin + 1.0).powf(-exp);
            z.s = fmin + 1.0 - t.powf(z.one_minus_exp_inv);
        }
        z
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        if self.exp < ZIPF_EPS {
            return rng.range_inclusive(self.min, self.max);
        }
        let (fmin, fmax) = (self.min as f64, self.max as f64);
        let harmonic_one = (self.exp - 1.0).abs() < ZIPF_EPS;
        loop {
            let p = rng.unit_closed();
            let u = p * (self.h_max - self.h_min) + self.h_min;
            let mut x = if harmonic_one {
                u.exp()
            } else {
                u.powf(self.one_minus_exp_inv)
            };
            if x < fmin - 0.5 {
                x = fmin + 0.5;
            }
            if x >= fmax + 0.5 {
                x = fmax;
            }
            let k = (x + 0.5).floor();
            let accept = k - x <= self.s
                || if harmonic_one {
                    u > (k + 0.5).ln() - 1.0 / k
                } else {
                    self.one_minus_exp_inv * (u - (k + 0.5).powf(self.one_minus_exp))
                        > -k.powf(-self.exp)
                };
            if accept {
                return (k as u64).clamp(self.min, self.max);
            }
        }
    }
}

/// One key stream: its pattern and, for `S` and `P`, the next index.
#[derive(Debug, Clone)]
struct Stream {
    pattern: KeyPattern,
    next: u64,
}

/// A connection's key generator: one stream per side or per `--command`.
#[derive(Debug, Clone)]
pub struct KeyGen {
    prefix: Box<[u8]>,
    min: u64,
    max: u64,
    streams: Box<[Stream]>,
    rng: Rng,
    gaussian: Gaussian,
    zipf: Option<Zipf>,
}

impl KeyGen {
    /// A generator over `space` with one stream per entry of `patterns`. `slice` narrows the
    /// range for `P` (from [`parallel_slice`]); memtier narrows the whole generator, so `S`,
    /// `R` and `G` streams of the same connection would use it too. Zipf always uses the
    /// whole space, as memtier sets it up before slicing.
    pub fn new(
        space: &KeySpace,
        patterns: &[KeyPattern],
        slice: Option<(u64, u64)>,
        rng: Rng,
    ) -> Self {
        let (min, max) = slice.unwrap_or((space.min, space.max));
        let zipf = patterns
            .contains(&KeyPattern::Zipf)
            .then(|| Zipf::new(space.min, space.max, space.zipf_exp));
        KeyGen {
            prefix: space.prefix.as_bytes().into(),
            min,
            max,
            streams: patterns
                .iter()
                .map(|&pattern| Stream { pattern, next: min })
                .collect(),
            rng,
            gaussian: Gaussian {
                stddev: space.effective_stddev(),
                median: space.effective_median(),
                spare: None,
            },
            zipf,
        }
    }

    /// The range this generator draws from: the key space, or the connection's `P` slice.
    pub fn range(&self) -> (u64, u64) {
        (self.min, self.max)
    }

    /// The next key index of `stream` (memtier's `object_generator::get_key_index`).
    ///
    /// # Panics
    /// If `stream` is not one of the streams the generator was built with.
    #[inline]
    pub fn next_index(&mut self, stream: usize) -> u64 {
        let s = &mut self.streams[stream];
        match s.pattern {
            KeyPattern::Random => self.rng.range_inclusive(self.min, self.max),
            KeyPattern::Gaussian => self.gaussian.sample(&mut self.rng, self.min, self.max),
            KeyPattern::Zipf => match &self.zipf {
                Some(z) => z.sample(&mut self.rng),
                None => unreachable!("KeyGen::new sets up Zipf whenever a stream uses it"),
            },
            KeyPattern::Sequential | KeyPattern::Parallel => {
                let k = s.next;
                s.next = if k >= self.max { self.min } else { k + 1 };
                k
            }
        }
    }

    /// Appends the key for `index` (prefix + decimal digits) to `out`.
    #[inline]
    pub fn write_key(&self, index: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        write_decimal(index, out);
    }

    /// Draws the next index of `stream`, appends its key to `out`, and returns the index.
    #[inline]
    pub fn next_key(&mut self, stream: usize, out: &mut Vec<u8>) -> u64 {
        let index = self.next_index(stream);
        self.write_key(index, out);
        index
    }
}

/// Appends `n` in decimal without going through `fmt` (which would be slower, not
/// allocating either way).
#[inline]
pub(crate) fn write_decimal(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(min: u64, max: u64) -> KeySpace {
        KeySpace {
            prefix: "memtier-".into(),
            min,
            max,
            stddev: None,
            median: None,
            zipf_exp: 1.0,
        }
    }

    #[test]
    fn keys_are_prefix_and_decimal_index() {
        let g = KeyGen::new(&space(0, 10), &[KeyPattern::Random], None, Rng::new(1));
        let mut out = b"x".to_vec();
        g.write_key(0, &mut out);
        g.write_key(18_446_744_073_709_551_615, &mut out);
        assert_eq!(out, b"xmemtier-0memtier-18446744073709551615");
    }

    #[test]
    fn sequential_covers_the_range_once_per_pass_and_wraps() {
        let mut g = KeyGen::new(
            &space(3, 9),
            &[KeyPattern::Sequential, KeyPattern::Sequential],
            None,
            Rng::new(7),
        );
        let set: Vec<u64> = (0..14).map(|_| g.next_index(0)).collect();
        assert_eq!(set, [3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 8, 9]);
        // The other stream keeps its own position.
        assert_eq!(g.next_index(1), 3);
        assert_eq!(g.next_index(0), 3);
    }

    #[test]
    fn parallel_slices_partition_the_range() {
        for (min, max) in [
            (0u64, 0u64),
            (1, 10),
            (0, 10),
            (1, 100),
            (0, 100),
            (5, 5_004),
            (1, 7),
        ] {
            let n = max - min + 1;
            for total in 1..=n.min(40) {
                let mut seen = vec![0u32; n as usize];
                for i in 0..total {
                    let (lo, hi) = parallel_slice(min, max, i, total);
                    assert!(
                        min <= lo && lo <= hi && hi <= max,
                        "{min}-{max}/{total}: slice {i} = {lo}-{hi}"
                    );
                    for k in lo..=hi {
                        seen[(k - min) as usize] += 1;
                    }
                }
                assert!(
                    seen.iter().all(|&c| c == 1),
                    "{min}-{max}/{total}: {seen:?}"
                );
            }
        }
    }

    #[test]
    fn parallel_slices_match_memtier_when_memtier_stays_in_range() {
        // 1..=10 over 3 clients: memtier's range = 9/3 + 1 = 4 → 1-4, 5-8, 9-10.
        assert_eq!(parallel_slice(1, 10, 0, 3), (1, 4));
        assert_eq!(parallel_slice(1, 10, 1, 3), (5, 8));
        assert_eq!(parallel_slice(1, 10, 2, 3), (9, 10));
        // 0..=100 over 20: memtier's range 6 would start client 17 at 102 > 100; even split.
        assert_eq!(parallel_slice(0, 100, 0, 20), (0, 5));
        assert_eq!(parallel_slice(0, 100, 1, 20), (6, 10));
        assert_eq!(parallel_slice(0, 100, 19, 20), (96, 100));
    }

    #[test]
    fn parallel_walks_its_slice() {
        let (lo, hi) = parallel_slice(1, 10, 1, 3);
        let mut g = KeyGen::new(
            &space(1, 10),
            &[KeyPattern::Parallel; 2],
            Some((lo, hi)),
            Rng::new(0),
        );
        let got: Vec<u64> = (0..6).map(|_| g.next_index(0)).collect();
        assert_eq!(got, [5, 6, 7, 8, 5, 6]);
    }

    #[test]
    fn random_is_uniform() {
        // 100 buckets, 200_000 draws: chi-square with 99 degrees of freedom has mean 99 and
        // standard deviation sqrt(198) ≈ 14; 99 + 6 × 14 ≈ 183 is a > 6σ bound, so a correct
        // generator fails it with probability far below 1e-6, for any seed.
        let mut g = KeyGen::new(&space(0, 99), &[KeyPattern::Random], None, Rng::new(42));
        let draws = 200_000u64;
        let mut counts = [0u64; 100];
        for _ in 0..draws {
            let k = g.next_index(0);
            assert!(k <= 99);
            counts[k as usize] += 1;
        }
        let expected = draws as f64 / 100.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 183.0, "chi-square {chi2}");
    }

    #[test]
    fn gaussian_mean_and_stddev_follow_median_and_stddev() {
        // Range 0..=1_000_000, median 500_000, stddev 50_000: truncation at ±10σ is
        // negligible. With n = 100_000 draws the sample mean has standard error
        // σ/√n ≈ 158 and the sample stddev ≈ σ/√(2n) ≈ 112; we allow 6 standard errors, plus
        // 0.5 for the truncation to an integer index.
        let mut s = space(0, 1_000_000);
        s.stddev = Some(50_000.0);
        s.median = Some(500_000.0);
        let mut g = KeyGen::new(&s, &[KeyPattern::Gaussian], None, Rng::new(5));
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| g.next_index(0) as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!((mean - 499_999.5).abs() < 6.0 * 158.0, "mean {mean}");
        assert!(
            (var.sqrt() - 50_000.0).abs() < 6.0 * 112.0,
            "stddev {}",
            var.sqrt()
        );
    }

    #[test]
    fn gaussian_defaults_are_memtiers_and_stay_in_range() {
        let s = space(1, 7);
        assert_eq!(s.effective_stddev(), 1.0);
        assert_eq!(s.effective_median(), 4.5);
        let mut g = KeyGen::new(&s, &[KeyPattern::Gaussian], None, Rng::new(9));
        let mut counts = [0u32; 8];
        for _ in 0..10_000 {
            counts[g.next_index(0) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        // Median 4.5 truncated: 4 is the mode; the ends are rarest.
        assert!(counts[4] > counts[3] && counts[4] > counts[5], "{counts:?}");
        assert!(counts[1] < counts[3] && counts[7] < counts[5], "{counts:?}");
    }

    /// Zipf with exponent s: P(k) ∝ k^-s, so count(1) / count(10) ≈ 10^s. With 400_000 draws
    /// over 1..=1000 the rarest case is s = 0.5: P(10) ≈ 0.316 / 61 ≈ 0.0052 (≈ 2_080 draws)
    /// and P(1) ≈ 0.0164 (≈ 6_560), so the ratio's relative standard error is
    /// √(1/2080 + 1/6560) ≈ 2.5%; ±15% is a 6σ bound (s = 1 and 1.5 are tighter).
    #[test]
    fn zipf_skew_follows_the_exponent() {
        for (exp, seed) in [(1.0, 3u64), (0.5, 4), (1.5, 8)] {
            let mut s = space(1, 1000);
            s.zipf_exp = exp;
            let mut g = KeyGen::new(&s, &[KeyPattern::Zipf], None, Rng::new(seed));
            let mut counts = vec![0u64; 1001];
            for _ in 0..400_000 {
                let k = g.next_index(0);
                assert!((1..=1000).contains(&k));
                counts[k as usize] += 1;
            }
            let ratio = counts[1] as f64 / counts[10] as f64;
            let want = 10f64.powf(exp);
            assert!(
                (ratio / want - 1.0).abs() < 0.15,
                "exp {exp}: ratio {ratio}, want {want}"
            );
            assert!(counts[1] > counts[2] && counts[2] > counts[3], "exp {exp}");
        }
    }

    #[test]
    fn zipf_with_key_minimum_zero_starts_at_one() {
        let mut g = KeyGen::new(&space(0, 50), &[KeyPattern::Zipf], None, Rng::new(1));
        assert!((0..10_000).all(|_| (1..=50).contains(&g.next_index(0))));
    }

    #[test]
    fn same_seed_same_keys() {
        let mk = |seed| {
            let mut g = KeyGen::new(
                &space(0, 1 << 40),
                &[KeyPattern::Random],
                None,
                Rng::new(seed),
            );
            (0..5).map(|_| g.next_index(0)).collect::<Vec<_>>()
        };
        assert_eq!(mk(11), mk(11));
        assert_ne!(mk(11), mk(12));
    }
}
