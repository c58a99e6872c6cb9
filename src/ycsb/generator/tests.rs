//! The generators against YCSB: keys and ζ against numbers YCSB's own Java code printed, and
//! each distribution's histogram over 10^6 seeded draws against the distribution its
//! algorithm defines (Pearson's chi-square). Every histogram test also runs its sample
//! against a deliberately wrong reference (an off-by-one range, a wrong constant) and asserts
//! that one fails, so the bound is shown to have the power to catch such a mistake.
//!
//! Java numbers come from a driver compiled against YCSB's `Utils`, `Generator`,
//! `NumberGenerator`, `ZipfianGenerator` and `ScrambledZipfianGenerator` at
//! brianfrankcooper/YCSB d9faaac8 (OpenJDK 17):
//! `javac -d classes <those files> RefDump.java && java -cp classes site.ycsb.generator.RefDump
//! <keys|fnv|zeta|zetabig 10000000000|scrambled 10000000>`; the driver only calls
//! `Utils.fnvhash64`, `ZipfianGenerator.zetastatic` and `ScrambledZipfianGenerator.nextValue`
//! (and repeats `buildKeyName`'s eight lines), and is not committed.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::*;

const DRAWS: usize = 1_000_000;

/// Pearson's chi-square statistic of `counts` against the probabilities `probs` (same length;
/// a bin with probability 0 and no count is skipped, one with a count gives infinity).
fn chi_square(counts: &[u64], probs: &[f64]) -> f64 {
    assert_eq!(counts.len(), probs.len());
    let total: u64 = counts.iter().sum();
    counts
        .iter()
        .zip(probs)
        .filter(|&(&o, &p)| o > 0 || p > 0.0)
        .map(|(&o, &p)| {
            let expected = total as f64 * p;
            (o as f64 - expected).powi(2) / expected
        })
        .sum()
}

/// The pass mark for a chi-square over the bins `probs` can fill: its mean plus six standard
/// deviations (df + 6·sqrt(2·df), the normal approximation to chi-square with df = bins - 1).
/// A right generator lands near df; the wrong references below land far above.
fn chi_square_bound(probs: &[f64]) -> f64 {
    let df = (probs.iter().filter(|&&p| p > 0.0).count() - 1) as f64;
    df + 6.0 * (2.0 * df).sqrt()
}

/// Asserts `counts` fits `probs` and does not fit `wrong` (padded to the longer length).
/// Measured with the seeds below (statistic / bound): zipfian over 100 88.8/183.4, its
/// wrong references 1946 (101 items) and 331 (θ 0.98); grown zipfian 981/1267 against
/// 99132 (η recomputed); scrambled 1028/1267 against 3.5e6 (1001 keys); latest 83.5/182
/// against 1963 (100 items) and 165/251 against 75018 after growing; uniform 1034/1267
/// against 2035 (off by one); hotspot 1040/1267 against 36226 (hot set 210) and 1629 (hot
/// share 0.79); exponential 183/320 against 3898 (94 %).
fn assert_fits(what: &str, counts: &[u64], probs: &[f64], wrong: &[(&str, Vec<f64>)]) {
    let bound = chi_square_bound(probs);
    let chi2 = chi_square(counts, probs);
    assert!(
        chi2 < bound,
        "{what}: chi-square {chi2:.1} above {bound:.1}"
    );
    for (why, wrong) in wrong {
        let bins = counts.len().max(wrong.len());
        let mut c = counts.to_vec();
        let mut w = wrong.clone();
        c.resize(bins, 0);
        w.resize(bins, 0.0);
        let chi2_wrong = chi_square(&c, &w);
        assert!(
            chi2_wrong > chi_square_bound(&w),
            "{what}: the wrong reference ({why}) passes too: chi-square {chi2_wrong:.1}"
        );
    }
}

fn histogram(bins: usize, mut draw: impl FnMut() -> usize) -> Vec<u64> {
    let mut counts = vec![0u64; bins];
    for _ in 0..DRAWS {
        counts[draw()] += 1;
    }
    counts
}

/// P(draw ≤ k) for YCSB's zipfian draw over `n` items from 0, its `η` computed for
/// `eta_items` (YCSB keeps the first count's) and its ζ `zetan`: item 0 below `1/zetan`,
/// item 1 below `ζ(2)/zetan`, and above that `⌊n·(η·u−η+1)^α⌋ ≤ k` exactly when
/// `u < 1 − (1 − ((k+1)/n)^(1−θ))/η` (the module doc's formula, inverted).
fn gray_cdf(k: u64, n: u64, eta_items: u64, zetan: f64, theta: f64) -> f64 {
    let zeta2 = 1.0 + 0.5f64.powf(theta);
    let eta = (1.0 - (2.0 / eta_items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    let u_k = 1.0 - (1.0 - ((k + 1) as f64 / n as f64).powf(1.0 - theta)) / eta;
    let head = if k == 0 { 1.0 } else { zeta2 } / zetan;
    (head + (u_k.min(1.0) - zeta2 / zetan).max(0.0)).min(1.0)
}

fn gray_pmf(n: u64, eta_items: u64, zetan: f64, theta: f64) -> Vec<f64> {
    let mut below = 0.0;
    (0..n)
        .map(|k| {
            let cdf = gray_cdf(k, n, eta_items, zetan, theta);
            let p = cdf - below;
            below = cdf;
            p
        })
        .collect()
}

// --- keys and values -------------------------------------------------------------------

#[test]
fn keys_equal_ycsbs() {
    let fixture = include_str!("../../../tests/fixtures/ycsb/keys.txt");
    let mut checked = 0;
    let mut first_thousand = 0;
    let mut out = String::new();
    for line in fixture.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(' ').collect();
        let [keynum, padding, order, key] = fields[..] else {
            panic!("bad fixture line {line:?}")
        };
        let (keynum, padding): (u64, usize) = (keynum.parse().unwrap(), padding.parse().unwrap());
        let ordered = order == "ordered";
        assert_eq!(build_key_name(keynum, padding, ordered), key, "{line}");
        build_key_into(keynum, padding, ordered, &mut out);
        assert_eq!(out, key, "{line}");
        checked += 1;
        first_thousand += usize::from(padding == 1 && !ordered && keynum < 1000);
    }
    assert_eq!(first_thousand, 1000);
    assert_eq!(checked, 1036);
}

#[test]
fn fnvhash64_equals_ycsbs() {
    // java -cp classes site.ycsb.generator.RefDump fnv (Utils.fnvhash64).
    let java = [
        (0, 6284781860667377211),
        (1, 8517097267634966620),
        (-1, 8289690350564177859),
        (i64::MAX, 8289549613075766851),
        (i64::MIN, 6284922598155788219),
        (2, 1820151046732198393),
        (255, 8064062821143829734),
        (256, 2056600594528442646),
        (1000, 5952875239596136740),
        (10_000_000_000, 1201321332300452516),
    ];
    for (value, hash) in java {
        assert_eq!(fnvhash64(value), hash, "fnvhash64({value})");
    }
}

#[test]
fn build_key_into_reuses_the_buffer_and_pads_a_negative_number_as_java() {
    let mut out = String::with_capacity(32);
    let before = out.as_ptr();
    for keynum in 0..100 {
        build_key_into(keynum, 20, false, &mut out);
    }
    assert_eq!(out.as_ptr(), before);
    assert_eq!(out, build_key_name(99, 20, false));
    // Java's Long.toString counts the sign, and the zeros go before it.
    assert_eq!(build_key_name(u64::MAX, 4, true), "user00-1");
}

#[test]
fn value_bytes_take_each_position_s_bits_as_ycsb() {
    let mut rng = Rng::new(7);
    let mut out = b"left over".to_vec();
    // 100 bytes: 16 full groups of six and a group cut to four, as in a YCSB field.
    let mut counts = vec![[0u64; 256]; 6];
    for _ in 0..DRAWS / 100 * 2 {
        fill_random_bytes(&mut rng, 100, &mut out);
        assert_eq!(out.len(), 100);
        for (i, &b) in out.iter().enumerate() {
            counts[i % 6][b as usize] += 1;
        }
    }
    for (position, mask) in [31u8, 63, 95, 31, 63, 95].into_iter().enumerate() {
        let allowed: BTreeSet<u8> = (0..=255u8).map(|x| b' ' + (x & mask)).collect();
        let probs: Vec<f64> = (0..256)
            .map(|b| f64::from(u8::from(allowed.contains(&(b as u8)))) / allowed.len() as f64)
            .collect();
        // A wrong mask: 63 where YCSB has 95, or 95 where it has 31 or 63.
        let wrong_mask = if mask == 95 { 63 } else { 95 };
        let wrong_set: BTreeSet<u8> = (0..=255u8).map(|x| b' ' + (x & wrong_mask)).collect();
        let wrong: Vec<f64> = (0..256)
            .map(|b| f64::from(u8::from(wrong_set.contains(&(b as u8)))) / wrong_set.len() as f64)
            .collect();
        assert_fits(
            &format!("value byte {position}"),
            &counts[position],
            &probs,
            &[("mask", wrong)],
        );
    }
}

// --- zipfian -----------------------------------------------------------------------------

#[test]
fn zeta_equals_ycsbs_sums() {
    // java -cp classes site.ycsb.generator.RefDump zeta (ZipfianGenerator.zetastatic).
    let java = [
        (1, 0.99, 1.0),
        (2, 0.99, 1.5034777750283594),
        (3, 0.99, 1.840493339007644),
        (10, 0.99, 2.9561075165103636),
        (100, 0.99, 5.294568831377164),
        (1000, 0.99, 7.728953217284729),
        (100_000, 0.99, 12.778338062551246),
        (1_000_000, 0.99, 15.391849746037371),
        (1000, 0.5, 61.80100876524318),
    ];
    for (n, theta, z) in java {
        assert!((zeta(n, theta) - z).abs() < 1e-9, "zeta({n}, {theta})");
    }
}

#[test]
fn scrambled_zetan_is_zeta_of_ten_billion() {
    // Summing 10^10 terms takes YCSB's Java 160 s (`RefDump zetabig 10000000000` printed
    // 26.46902820178302, YCSB's constant to the last digit). Here: the first 10^5 terms
    // summed, the rest by Euler–Maclaurin with f(x) = x^-θ, whose next term is below 1e-25.
    let (m, n, theta) = (100_000f64, SCRAMBLED_ITEM_COUNT as f64, ZIPFIAN_CONSTANT);
    let f = |x: f64| x.powf(-theta);
    let f1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = (n.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta);
    let tail = integral + (f(n) - f(m)) / 2.0 + (f1(n) - f1(m)) / 12.0;
    let exact = zeta(100_000, theta) + tail;
    // mpmath, 30 digits: zeta(0.99) - hurwitz_zeta(0.99, 10^10 + 1).
    assert!((exact - 26.469028201751479).abs() < 1e-11, "{exact}");
    assert!((exact - SCRAMBLED_ZETAN).abs() < 1e-9, "{exact}");
    // θ = 0.98 would be another number altogether.
    let integral98 = (n.powf(0.02) - m.powf(0.02)) / 0.02;
    assert!((zeta(100_000, 0.98) + integral98 - SCRAMBLED_ZETAN).abs() > 1.0);
}

#[test]
fn zipfian_draws_follow_grays_distribution() {
    let mut rng = Rng::new(1);
    let mut zipfian = Zipfian::new(0, 99);
    let counts = histogram(100, || zipfian.next(&mut rng) as usize);
    let zetan = zeta(100, 0.99);
    assert_eq!(zipfian.zetan(), zetan);
    assert_fits(
        "zipfian over 100",
        &counts,
        &gray_pmf(100, 100, zetan, 0.99),
        &[
            ("101 items", gray_pmf(101, 101, zeta(101, 0.99), 0.99)),
            ("theta 0.98", gray_pmf(100, 100, zeta(100, 0.98), 0.98)),
        ],
    );
    // Items 0 and 1 carry exactly their zipfian mass, 1/ζ(n) and 2^-θ/ζ(n).
    let head = gray_pmf(100, 100, zetan, 0.99);
    assert!((head[0] - 1.0 / zetan).abs() < 1e-15);
    assert!((head[1] - 0.5f64.powf(0.99) / zetan).abs() < 1e-15);

    // From min: field lengths 1..=100 are the same draw plus one.
    let mut lengths = FieldLength::Zipfian(Zipfian::new(1, 100));
    let counts = histogram(101, || lengths.next(&mut rng) as usize);
    assert_eq!(counts[0], 0);
    assert_fits("zipfian 1..=100", &counts[1..], &head, &[]);
}

#[test]
fn zipfian_extends_zeta_when_the_item_count_grows_and_keeps_its_first_eta() {
    let mut rng = Rng::new(2);
    let mut zipfian = Zipfian::new(0, 499);
    let counts = histogram(1000, || zipfian.next_long(&mut rng, 1000) as usize);
    // The same additions in the same order as summing from scratch.
    assert_eq!(zipfian.zetan(), zeta(1000, 0.99));
    assert_fits(
        "zipfian grown from 500 to 1000 items",
        &counts,
        &gray_pmf(1000, 500, zeta(1000, 0.99), 0.99),
        &[(
            "eta recomputed for 1000 items",
            gray_pmf(1000, 1000, zeta(1000, 0.99), 0.99),
        )],
    );
}

/// The exact distribution of YCSB's scrambled zipfian over `items` keys: the mass of the
/// first 10^6 ranks of the inner zipfian (10^10 + 1 items, ζ = ZETAN) hashed to their keys,
/// and the remaining 45 % spread evenly (each key gets a share of millions of small ranks;
/// their spread is about 4e-6 of the mass, a tenth of the sample's noise).
fn scrambled_pmf(items: u64) -> Vec<f64> {
    const RANKS: u64 = 1_000_000;
    let n = SCRAMBLED_ITEM_COUNT + 1;
    let mut mass = vec![0.0; items as usize];
    let mut below = 0.0;
    for rank in 0..RANKS {
        let cdf = gray_cdf(rank, n, n, SCRAMBLED_ZETAN, ZIPFIAN_CONSTANT);
        mass[(fnvhash64(rank as i64) % items as i64) as usize] += cdf - below;
        below = cdf;
    }
    for m in &mut mass {
        *m += (1.0 - below) / items as f64;
    }
    mass
}

fn top_keys(freq: &[f64], k: usize) -> Vec<usize> {
    let mut keys: Vec<usize> = (0..freq.len()).collect();
    keys.sort_by(|&a, &b| freq[b].total_cmp(&freq[a]));
    keys.truncate(k);
    keys
}

#[test]
fn scrambled_zipfian_follows_the_hashed_ranks_and_picks_ycsbs_popular_keys() {
    let mut rng = Rng::new(3);
    let mut scrambled = ScrambledZipfian::new(0, 999);
    let counts = histogram(1000, || scrambled.next(&mut rng) as usize);
    let pmf = scrambled_pmf(1000);
    assert_fits(
        "scrambled zipfian over 1000",
        &counts,
        &pmf,
        &[("1001 keys", scrambled_pmf(1001))],
    );

    // YCSB's own ScrambledZipfianGenerator(1000), 10^7 draws (`RefDump scrambled 10000000`):
    // its 11 most frequent keys and their counts.
    let java = [
        (211, 389484),
        (620, 201651),
        (393, 163542),
        (802, 120922),
        (769, 95797),
        (360, 79998),
        (587, 69654),
        (555, 64734),
        (964, 62896),
        (178, 62711),
        (737, 57352),
    ];
    let java_draws = 10_000_000f64;
    for (key, count) in java {
        let p = pmf[key];
        let sigma = (p * (1.0 - p) / java_draws).sqrt();
        let freq = count as f64 / java_draws;
        assert!(
            (freq - p).abs() < 5.0 * sigma,
            "YCSB's key {key}: {freq} against {p}"
        );
    }
    // The 10 most popular keys are the same items in YCSB's sample, ours, and the pmf (the
    // pmf's 10th and 11th, keys 178 and 737, differ by 5 standard deviations of our sample's
    // difference; we drew them 6127 and 5692 times).
    let java_top: BTreeSet<usize> = java[..10].iter().map(|&(k, _)| k).collect();
    let freq: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    let ours: BTreeSet<usize> = top_keys(&freq, 10).into_iter().collect();
    let exact: BTreeSet<usize> = top_keys(&pmf, 10).into_iter().collect();
    assert_eq!(ours, java_top);
    assert_eq!(exact, java_top);
    for key in top_keys(&pmf, 20) {
        let p = pmf[key];
        let sigma = (p * (1.0 - p) / DRAWS as f64).sqrt();
        let freq = counts[key] as f64 / DRAWS as f64;
        assert!(
            (freq - p).abs() < 5.0 * sigma,
            "key {key}: {freq} against {p}"
        );
    }
}

#[test]
fn skewed_latest_is_the_last_insert_minus_a_zipfian_draw() {
    let mut rng = Rng::new(4);
    let inserted = Arc::new(AcknowledgedCounter::new(100));
    let mut latest = SkewedLatest::new(inserted.clone());
    // last = 99: draws 99 - z with z zipfian over 99 items, so record 0 never comes up.
    let counts = histogram(99, || 99 - latest.next(&mut rng) as usize);
    assert_fits(
        "latest over 100 records",
        &counts,
        &gray_pmf(99, 99, zeta(99, 0.99), 0.99),
        &[("100 items", gray_pmf(100, 100, zeta(100, 0.99), 0.99))],
    );

    // 50 inserts later the zipfian grows to 149 items, keeping its first eta.
    for _ in 0..50 {
        inserted.acknowledge(inserted.next());
    }
    assert_eq!(inserted.last_value(), 149);
    let counts = histogram(149, || 149 - latest.next(&mut rng) as usize);
    assert_fits(
        "latest after 50 inserts",
        &counts,
        &gray_pmf(149, 99, zeta(149, 0.99), 0.99),
        &[(
            "eta recomputed for 149 items",
            gray_pmf(149, 149, zeta(149, 0.99), 0.99),
        )],
    );
}

// --- uniform, hotspot, exponential, discrete ---------------------------------------------

#[test]
fn uniform_covers_both_bounds_evenly() {
    let mut rng = Rng::new(5);
    let mut uniform = KeyChooser::Uniform(UniformLong::new(10, 1009));
    let counts = histogram(1000, || uniform.next(&mut rng) as usize - 10);
    assert_fits(
        "uniform 10..=1009",
        &counts,
        &[1.0 / 1000.0; 1000],
        &[("10..=1010", vec![1.0 / 1001.0; 1001])],
    );
}

fn hotspot_pmf(items: usize, hot_items: usize, hot_share: f64) -> Vec<f64> {
    (0..items)
        .map(|i| {
            if i < hot_items {
                hot_share / hot_items as f64
            } else {
                (1.0 - hot_share) / (items - hot_items) as f64
            }
        })
        .collect()
}

#[test]
fn hotspot_gives_the_hot_set_its_share() {
    let mut rng = Rng::new(6);
    let mut hotspot = KeyChooser::Hotspot(Hotspot::new(0, 999, 0.2, 0.8));
    let counts = histogram(1000, || hotspot.next(&mut rng) as usize);
    assert_fits(
        "hotspot 0.2/0.8",
        &counts,
        &hotspot_pmf(1000, 200, 0.8),
        &[
            ("hot set of 210", hotspot_pmf(1000, 210, 0.8)),
            ("hot share 0.79", hotspot_pmf(1000, 200, 0.79)),
        ],
    );
    // An empty hot set (YCSB divides by zero) sends every draw to the cold set.
    let empty = Hotspot::new(0, 9, 0.05, 0.8);
    assert!((0..1000).all(|_| empty.next(&mut rng) < 10));
}

fn exponential_bins(gamma: f64) -> Vec<f64> {
    // P(a ≤ ⌊x⌋ < b) = e^(-γa) - e^(-γb), bins of 10 up to 2000, then the tail.
    let mut probs: Vec<f64> = (0..200)
        .map(|b| (-gamma * (10 * b) as f64).exp() - (-gamma * (10 * b + 10) as f64).exp())
        .collect();
    probs.push((-gamma * 2000.0).exp());
    probs
}

#[test]
fn exponential_puts_the_percentile_below_the_range() {
    let mut rng = Rng::new(8);
    // CoreWorkload's defaults for 1000 records.
    let range = 1000.0 * 0.8571428571;
    let exponential = Exponential::new(95.0, range);
    let mut chooser = KeyChooser::Exponential(exponential.clone());
    let mut below_range = 0u64;
    let counts = histogram(201, || {
        let x = chooser.next(&mut rng);
        below_range += u64::from((x as f64) < range);
        (x as usize / 10).min(200)
    });
    assert_fits(
        "exponential 95 % below 857",
        &counts,
        &exponential_bins(exponential.gamma()),
        &[(
            "94 %",
            exponential_bins(Exponential::new(94.0, range).gamma()),
        )],
    );
    // ⌊x⌋ < 857.14 iff x < 858: a hair above 95 %.
    let p = 1.0 - (-exponential.gamma() * 858.0).exp();
    let sigma = (p * (1.0 - p) / DRAWS as f64).sqrt();
    assert!((below_range as f64 / DRAWS as f64 - p).abs() < 5.0 * sigma);
}

#[test]
fn discrete_picks_each_value_with_its_weight_s_share() {
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op {
        Read,
        Update,
        Insert,
        Scan,
    }
    let mut rng = Rng::new(9);
    let mut chooser = Discrete::new();
    assert!(chooser.is_empty());
    // Weights need not sum to 1: YCSB divides by their sum.
    let weights = [
        (1.0, Op::Read),
        (0.6, Op::Update),
        (0.3, Op::Insert),
        (0.1, Op::Scan),
    ];
    for (weight, op) in weights {
        chooser.add(weight, op);
    }
    let mut counts = [0u64; 4];
    for _ in 0..DRAWS {
        let op = chooser.next(&mut rng);
        counts[weights.iter().position(|&(_, o)| o == op).unwrap()] += 1;
    }
    for ((weight, op), count) in weights.iter().zip(counts) {
        let p = weight / 2.0;
        let sigma = (p * (1.0 - p) / DRAWS as f64).sqrt();
        let share = count as f64 / DRAWS as f64;
        // 5 sigma: ±0.0025 for READ, ±0.0011 for SCAN.
        assert!(
            (share - p).abs() < 5.0 * sigma,
            "{op:?}: {share} against {p}"
        );
    }
}

// --- counters ----------------------------------------------------------------------------

/// Runs `draw` 50,000 times on each of 4 threads and returns every number drawn, sorted.
fn drawn_by_four_threads(draw: impl Fn() -> u64 + Sync) -> Vec<u64> {
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..50_000).map(|_| draw()).collect::<Vec<u64>>()))
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    all.sort_unstable();
    all
}

#[test]
fn counters_hand_out_each_number_once_across_threads() {
    let counter = Counter::new(7);
    let all = drawn_by_four_threads(|| counter.clone().next());
    assert_eq!(all, (7..200_007).collect::<Vec<u64>>());
    assert_eq!(counter.last_value(), 200_006);

    let sequential = Sequential::new(Arc::new(AtomicU64::new(0)), 1000, 200_999);
    let all = drawn_by_four_threads(|| sequential.clone().next());
    assert_eq!(all, (1000..201_000).collect::<Vec<u64>>());
    // And around again.
    let short = Sequential::new(Arc::new(AtomicU64::new(0)), 5, 7);
    let mut chooser = KeyChooser::Sequential(short);
    let mut rng = Rng::new(0);
    let seq: Vec<u64> = (0..7).map(|_| chooser.next(&mut rng)).collect();
    assert_eq!(seq, [5, 6, 7, 5, 6, 7, 5]);
}

#[test]
fn acknowledged_counter_advances_over_the_contiguous_prefix_only() {
    let counter = AcknowledgedCounter::new(1000);
    assert_eq!(counter.last_value(), 999);
    let [a, b, c, d] = [(); 4].map(|_| counter.next());
    assert_eq!([a, b, c, d], [1000, 1001, 1002, 1003]);
    counter.acknowledge(c);
    counter.acknowledge(b);
    assert_eq!(counter.last_value(), 999);
    counter.acknowledge(a);
    assert_eq!(counter.last_value(), 1002);
    counter.acknowledge(d);
    assert_eq!(counter.last_value(), 1003);
    assert_eq!(counter.acknowledged_below(), 1004);
}

#[test]
fn acknowledged_counter_never_passes_an_unacknowledged_insert_across_threads() {
    const START: u64 = 500;
    const TOTAL: u64 = 4 * 20_000;
    let counter = AcknowledgedCounter::new(START);
    let done: Vec<AtomicBool> = (0..TOTAL).map(|_| AtomicBool::new(false)).collect();
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        // The watcher: every number below the limit must have been acknowledged, and the
        // limit never moves back.
        let watcher = s.spawn(|| {
            let mut checked = START;
            loop {
                let last = finished.load(Ordering::SeqCst);
                let below = counter.acknowledged_below();
                assert!(below >= checked);
                for v in checked..below {
                    assert!(
                        done[(v - START) as usize].load(Ordering::SeqCst),
                        "{v} passed"
                    );
                }
                checked = below;
                if last {
                    return checked;
                }
            }
        });
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    // Batches of 8 acknowledged newest first, as slow inserts finish late.
                    for _ in 0..20_000 / 8 {
                        let batch: Vec<u64> = (0..8).map(|_| counter.next()).collect();
                        for &v in batch.iter().rev() {
                            done[(v - START) as usize].store(true, Ordering::SeqCst);
                            counter.acknowledge(v);
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        finished.store(true, Ordering::SeqCst);
        // No acknowledgement is left behind once every insert is done.
        assert_eq!(watcher.join().unwrap(), START + TOTAL);
    });
    assert_eq!(counter.last_value(), START + TOTAL - 1);
}

#[test]
#[should_panic(expected = "too many unacknowledged insert keys")]
fn acknowledged_counter_refuses_a_full_window() {
    let counter = AcknowledgedCounter::new(0);
    counter.acknowledge(1);
    counter.acknowledge(1 + ACKNOWLEDGE_WINDOW as u64);
}

#[test]
fn next_keynum_chooses_acknowledged_records_only() {
    let mut rng = Rng::new(10);
    let inserted = AcknowledgedCounter::new(1000);
    let mut uniform = KeyChooser::Uniform(UniformLong::new(0, 1999));
    assert!((0..10_000).all(|_| uniform.next_keynum(&mut rng, &inserted) < 1000));
    let mut exponential = KeyChooser::Exponential(Exponential::new(95.0, 857.142857));
    let keys: Vec<u64> = (0..10_000)
        .map(|_| exponential.next_keynum(&mut rng, &inserted))
        .collect();
    assert!(keys.iter().all(|&k| k <= 999));
    // Counted back from the latest: most keys are recent.
    assert!(keys.iter().filter(|&&k| k > 500).count() > 8000);
    let mut constant = FieldLength::Constant(100);
    assert_eq!(constant.next(&mut rng), 100);
    let mut lengths = FieldLength::Uniform(UniformLong::new(1, 100));
    assert!((0..1000).all(|_| (1..=100).contains(&lengths.next(&mut rng))));
}

#[test]
fn per_thread_generators_are_send_and_counters_are_shared() {
    fn send<T: Send>() {}
    fn shared<T: Send + Sync>() {}
    send::<KeyChooser>();
    send::<FieldLength>();
    send::<Discrete<u8>>();
    send::<Zipfian>();
    shared::<Counter>();
    shared::<AcknowledgedCounter>();
    shared::<Sequential>();
}
