//! The two-sided Mann–Whitney U test, decided as benchstat decides it.
//!
//! benchstat (golang.org/x/perf, `benchmath.AssumeNothing`) compares two samples with
//! go-moremath's `stats.MannWhitneyUTest`, two-sided. We follow its rules, not its code:
//!
//! - U is sample 1's statistic with ties counted as ½: `U1 = R1 − n1(n1+1)/2`, `R1` the sum of
//!   sample 1's mid-ranks in the pooled sample (Mann & Whitney 1947).
//! - Exact distribution when there are no ties and both samples have at most 50 values, or
//!   there are ties and both have at most 25: the distribution of U1 over every way of
//!   drawing sample 1's positions from the pooled, tied ranking (the permutation
//!   distribution given the ties; Klotz 1966, which benchstat computes after Cheung & Klotz
//!   1997). Ours counts the draws group by group of tied values (see [`exact_cdf`]), which
//!   gives the same counts. The p-value is `2·P(U1 ≤ min(U1, U2))`, and 1 when `U1 = U2`.
//! - Otherwise the normal approximation with tie correction and continuity correction:
//!   `σ² = n1·n2/12 · ((N+1) − Σ(t³−t)/(N(N−1)))` (Klotz 1966; any textbook),
//!   `z = (U1 − n1·n2/2 ∓ ½)/σ`, `p = 2·min(Φ(z), 1−Φ(z)) = erfc(|z|/√2)`.
//! - Every value equal in both samples: no test (benchstat: "all samples are equal", p = 1).
//!
//! One difference, on purpose: with ties the exact distribution of U1 is not symmetric, and
//! benchstat's `2·P(U1 ≤ min(U1, U2))` can then exceed 1; we cap p at 1. The verdict
//! (p ≤ α) is the same.

/// The result of one test: sample 1's U and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// Sample 1's U (ties count ½), in `[0, n1·n2]`.
    pub u: f64,
    /// Two-sided p-value, in `[0, 1]`.
    pub p: f64,
}

/// The largest samples (both) for which the exact distribution is used without ties, and
/// with ties: benchstat's `MannWhitneyExactLimit` and `MannWhitneyTiesExactLimit`.
const EXACT_LIMIT: usize = 50;
const EXACT_LIMIT_TIES: usize = 25;

/// The pooled sample as a ranking: for each group of equal values in ascending order, how
/// many values it holds and how many of them are sample 1's.
struct Ranking {
    /// (group size, from sample 1).
    groups: Vec<(usize, usize)>,
    n1: usize,
    n2: usize,
}

impl Ranking {
    fn new(x1: &[f64], x2: &[f64]) -> Ranking {
        let mut pooled: Vec<(f64, bool)> = x1
            .iter()
            .map(|&v| (v, true))
            .chain(x2.iter().map(|&v| (v, false)))
            .collect();
        pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut last: Option<f64> = None;
        for (v, first) in pooled {
            if last != Some(v) {
                groups.push((0, 0));
                last = Some(v);
            }
            if let Some(g) = groups.last_mut() {
                g.0 += 1;
                g.1 += usize::from(first);
            }
        }
        Ranking {
            groups,
            n1: x1.len(),
            n2: x2.len(),
        }
    }

    fn has_ties(&self) -> bool {
        self.groups.iter().any(|&(t, _)| t > 1)
    }

    /// Twice sample 1's U: `2·R1 − n1(n1+1)`, an integer because mid-ranks are halves.
    fn two_u1(&self) -> i64 {
        let mut two_r1 = 0i64;
        for (start, &(_, from1)) in self.group_starts().zip(&self.groups) {
            two_r1 += from1 as i64 * start.1;
        }
        two_r1 - (self.n1 * (self.n1 + 1)) as i64
    }

    /// For each group: (its first rank, twice its mid-rank), ranks counted from 1.
    fn group_starts(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.groups.iter().scan(1usize, |next, &(t, _)| {
            let first = *next;
            *next += t;
            // first + last = first + (first + t − 1).
            Some((first, (2 * first + t - 1) as i64))
        })
    }
}

/// The two-sided U test of `x1` against `x2`; `None` when a sample is empty or every value in
/// both is the same (no ranking to test).
pub fn mann_whitney(x1: &[f64], x2: &[f64]) -> Option<UTest> {
    let (n1, n2) = (x1.len(), x2.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let ranking = Ranking::new(x1, x2);
    if ranking.groups.len() == 1 {
        return None;
    }
    let two_u1 = ranking.two_u1();
    let two_u2 = 2 * (n1 * n2) as i64 - two_u1;
    let u1 = two_u1 as f64 / 2.0;
    let ties = ranking.has_ties();
    let limit = if ties { EXACT_LIMIT_TIES } else { EXACT_LIMIT };
    let p = if n1 <= limit && n2 <= limit {
        if two_u1 == two_u2 {
            // The observed U is the centre: the two tails together are the whole mass.
            1.0
        } else {
            2.0 * exact_cdf(&ranking, two_u1.min(two_u2))
        }
    } else {
        normal_p(&ranking, u1)?
    };
    Some(UTest {
        u: u1,
        p: p.min(1.0),
    })
}

/// `P(U1 ≤ two_u/2)` over every equally likely choice of sample 1's n1 positions in the
/// ranking (the null hypothesis). Group by group of tied values, taking r of a group's t
/// values adds `r·(first + last rank)` to `2·R1` in `C(t, r)` ways; the counts of (values
/// taken, `2·R1`) so far are carried from group to group. Counts are f64: C(100, 50) ≈ 1e29
/// is past u64, and a relative error of 1e-16 is far below the three decimals shown.
fn exact_cdf(ranking: &Ranking, two_u: i64) -> f64 {
    let n1 = ranking.n1;
    let total = ranking.n1 + ranking.n2;
    let max_two_r = total * (total + 1);
    // ways[k][s]: ways to have taken k of sample 1's values with 2·R1 = s.
    let mut ways = vec![vec![0.0f64; max_two_r + 1]; n1 + 1];
    ways[0][0] = 1.0;
    let mut reach = 0usize;
    for ((_, twice_mid), &(t, _)) in ranking.group_starts().zip(&ranking.groups) {
        let twice_mid = twice_mid as usize;
        let choose: Vec<f64> = (0..=t).map(|r| binomial(t, r)).collect();
        reach += t * twice_mid;
        // Downwards in k, so each group's values are taken once (0/1-knapsack order).
        for k in (0..=n1).rev() {
            for s in (0..=reach.min(max_two_r)).rev() {
                let mut sum = 0.0;
                for r in 1..=t.min(k) {
                    if let Some(from) = s.checked_sub(r * twice_mid) {
                        sum += ways[k - r][from] * choose[r];
                    }
                }
                ways[k][s] += sum;
            }
        }
    }
    let offset = (n1 * (n1 + 1)) as i64;
    let below: f64 = ways[n1]
        .iter()
        .enumerate()
        .filter(|&(s, _)| s as i64 - offset <= two_u)
        .map(|(_, w)| w)
        .sum();
    below / binomial(total, n1)
}

/// The normal approximation's two-sided p-value for sample 1's `u1`; `None` when the variance
/// is 0 (every value equal).
fn normal_p(ranking: &Ranking, u1: f64) -> Option<f64> {
    let (n1, n2) = (ranking.n1 as f64, ranking.n2 as f64);
    let n = n1 + n2;
    let ties: f64 = ranking
        .groups
        .iter()
        .map(|&(t, _)| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let sigma = (n1 * n2 * ((n + 1.0) - ties / (n * (n - 1.0))) / 12.0).sqrt();
    if sigma == 0.0 {
        return None;
    }
    let mut numer = u1 - n1 * n2 / 2.0;
    // Continuity correction: half a step towards the centre (none at the centre).
    if numer != 0.0 {
        numer -= 0.5 * numer.signum();
    }
    let z = numer / sigma;
    Some(erfc(z.abs() / std::f64::consts::SQRT_2))
}

/// `C(n, k)` as f64 (exact up to 2^53, and within a rounding beyond).
fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The complementary error function for `x ≥ 0`, to about 1e-14 relative: below 2 as
/// `1 − erf(x)` from the all-positive series `erf(x) = 2/√π·e^{−x²}·Σ 2ⁿx^{2n+1}/(2n+1)!!`
/// (Abramowitz & Stegun 7.1.6), from 2 on from Laplace's continued fraction
/// `erfc(x) = e^{−x²}/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …))))` (A&S 7.1.14), evaluated by
/// the modified Lentz method (Numerical Recipes §5.2). std has no erfc on stable Rust, and
/// one function is not worth a dependency.
pub(crate) fn erfc(x: f64) -> f64 {
    const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
    if x < 2.0 {
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x * x / (2.0 * n + 1.0);
            sum += term;
        }
        return 1.0 - 2.0 * FRAC_1_SQRT_PI * (-x * x).exp() * sum;
    }
    // f = x + a1/(x + a2/(x + …)), a_i = i/2.
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for i in 1..200 {
        let a = f64::from(i) / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    FRAC_1_SQRT_PI * (-x * x).exp() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1e-300),
            "got {got:e}, want {want:e}"
        );
    }

    #[test]
    fn erfc_matches_scipy() {
        // scipy.special.erfc(x), scipy 1.17.1, printed with repr().
        for (x, want) in [
            (0.0, 1.0),
            (0.1, 0.8875370839817152),
            (1.0, 0.15729920705028516),
            (1.9, 0.007209570764742531),
            (2.0, 0.004677734981047266),
            (3.5, 7.430983723414129e-07),
            (6.0, 2.1519736712498913e-17),
        ] {
            close(erfc(x), want);
        }
    }

    fn test(x1: &[f64], x2: &[f64]) -> UTest {
        mann_whitney(x1, x2).expect("a ranking to test")
    }

    // The expected values below come from scipy 1.17.1:
    // `scipy.stats.mannwhitneyu(x1, x2, alternative='two-sided', method=..., use_continuity=True)`
    // for the untied exact cases and the normal approximation (its statistic is sample 1's
    // U, as ours); and, for the exact cases with ties (scipy's exact method ignores ties), from
    // a brute-force enumeration in Python with fractions of every choice of sample 1's
    // positions among the mid-ranked pooled sample, p = min(1, 2·P(U1 ≤ min(U1, U2))).
    // The script: tests/fixtures/compare/reference_pvalues.py.

    #[test]
    fn exact_without_ties_matches_scipy_exact() {
        // Fully separated 5 vs 5: the smallest p five repetitions can give, 2/C(10,5) = 2/252.
        let t = test(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]);
        assert_eq!(t.u, 0.0);
        close(t.p, 2.0 / 252.0);
        close(t.p, 0.007936507936507936);
        // The other way round: U1 is 25, the same p.
        let t = test(&[6., 7., 8., 9., 10.], &[1., 2., 3., 4., 5.]);
        assert_eq!(t.u, 25.0);
        close(t.p, 0.007936507936507936);

        let t = test(&[10., 12., 14., 16., 18.], &[11., 13., 15., 17., 30.]);
        assert_eq!(t.u, 10.0);
        close(t.p, 0.6904761904761905);
        let t = test(
            &[100., 101., 102., 103., 104.],
            &[103.5, 105., 106., 107., 108.],
        );
        assert_eq!(t.u, 1.0);
        close(t.p, 0.015873015873015872);
        let t = test(&[3.1, 4.2, 5.3], &[1.0, 2.0, 6.4, 7.5, 8.6, 9.7]);
        assert_eq!(t.u, 6.0);
        close(t.p, 0.5476190476190476);
    }

    #[test]
    fn exact_with_ties_matches_brute_force_enumeration() {
        let t = test(&[1., 2., 2., 3., 5.], &[2., 3., 4., 5., 6.]);
        assert_eq!(t.u, 6.0);
        close(t.p, 0.2222222222222222);
        let t = test(&[10., 10., 11., 12.], &[10., 12., 13., 13., 14.]);
        assert_eq!(t.u, 3.5);
        close(t.p, 0.1746031746031746);
        // An uneven tie structure, where the distribution of U1 is not symmetric.
        let t = test(&[1., 1., 2.], &[2., 3., 3., 3.]);
        assert_eq!(t.u, 0.5);
        close(t.p, 0.11428571428571428);
    }

    #[test]
    fn normal_approximation_matches_scipy_asymptotic() {
        // 26 and 27 values with ties: past the exact limit for ties (25).
        let a: Vec<f64> = (0..26).map(|i| f64::from(i % 7)).collect();
        let b: Vec<f64> = (0..27).map(|i| f64::from(i % 7 + 1)).collect();
        let t = test(&a, &b);
        assert_eq!(t.u, 248.0);
        close(t.p, 0.06563522843310994);
        // 51 and 51 without ties: past the exact limit (50).
        let c: Vec<f64> = (0..51).map(f64::from).collect();
        let d: Vec<f64> = (0..51).map(|i| f64::from(i) + 10.5).collect();
        let t = test(&c, &d);
        assert_eq!(t.u, 820.0);
        close(t.p, 0.0013158536667911224);
    }

    #[test]
    fn a_centred_u_has_p_one_and_equal_samples_no_test() {
        let t = test(&[1., 4.], &[2., 3.]);
        assert_eq!((t.u, t.p), (2.0, 1.0));
        assert_eq!(mann_whitney(&[7.; 5], &[7.; 5]), None);
        assert_eq!(mann_whitney(&[7.; 30], &[7.; 30]), None);
        assert_eq!(mann_whitney(&[], &[1.0]), None);
    }
}
