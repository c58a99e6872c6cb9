//! The key section of [`super::KvConfig`] (memtier's "Key Options"): the key space
//! (`--key-prefix`, `--key-minimum`, `--key-maximum`, the `G` and `Z` shape flags) and
//! `--key-pattern`, then the checks that need the key space and the patterns in use
//! together.
//!
//! Invariants: `min <= max`; `P` on both sides or neither; `--key-stddev`/`--key-median`
//! only with a `G` pattern in use, the median strictly inside the range; with `P`, every
//! connection's slice is non-empty. Nothing here allocates per key: the key range may be
//! all of `u64` and costs nothing until keys are drawn.

use super::args::KvArgs;
use super::parse::{parse_pattern, parse_u64};
use crate::kv::command::ArbitraryCommand;
use crate::kv::error::{conflict, invalid, KvConfigError};
use crate::kv::keys::{KeyPattern, KeySpace};

/// The key fields of [`super::KvConfig`], typed.
pub(super) struct Keys {
    pub space: KeySpace,
    pub set_pattern: KeyPattern,
    pub get_pattern: KeyPattern,
}

/// Types the key flags.
pub(super) fn keys(a: &KvArgs) -> Result<Keys, KvConfigError> {
    // memtier rejects an explicit --key-minimum 0 although 0 is its default; we accept 0.
    let min = match &a.key_minimum {
        Some(v) => parse_u64("--key-minimum", v, 0, "key-minimum must be a whole number")?,
        None => 0,
    };
    let max = match &a.key_maximum {
        Some(v) => parse_u64(
            "--key-maximum",
            v,
            1,
            "key-maximum must be greater than zero",
        )?,
        None => 10_000_000,
    };
    if min > max {
        return Err(conflict(
            format!("--key-minimum {min} with --key-maximum {max}"),
            "key-minimum must not exceed key-maximum: swap or widen them",
        ));
    }
    let (set_pattern, get_pattern) = key_pattern(a)?;
    let positive = |flag: &'static str, v: &Option<String>, fix: &str| {
        v.as_deref()
            .map(|v| match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(invalid(flag, v, fix)),
            })
            .transpose()
    };
    let stddev = positive(
        "--key-stddev",
        &a.key_stddev,
        "key-stddev must be a number greater than zero",
    )?;
    let median = positive(
        "--key-median",
        &a.key_median,
        "key-median must be a number greater than zero",
    )?;
    let zipf_exp = match &a.key_zipf_exp {
        Some(v) => match v.parse::<f64>() {
            Ok(x) if x > 0.0 && x < 5.0 => x,
            _ => {
                return Err(invalid(
                    "--key-zipf-exp",
                    v,
                    "key-zipf-exp must be within (0, 5)",
                ))
            }
        },
        None => 1.0,
    };
    Ok(Keys {
        space: KeySpace {
            prefix: a
                .key_prefix
                .clone()
                .unwrap_or_else(|| "memtier-".to_string()),
            min,
            max,
            stddev,
            median,
            zipf_exp,
        },
        set_pattern,
        get_pattern,
    })
}

/// `--key-pattern SET:GET`, `R:R` by default; `P` on both sides or neither.
fn key_pattern(a: &KvArgs) -> Result<(KeyPattern, KeyPattern), KvConfigError> {
    let Some(v) = &a.key_pattern else {
        return Ok((KeyPattern::Random, KeyPattern::Random));
    };
    let fix = "key-pattern must be SET:GET, each one of S, R, G, Z, P (e.g. R:R, G:G, P:P)";
    let bad = |_| invalid("--key-pattern", v, fix);
    let (s, g) = v
        .split_once(':')
        .ok_or_else(|| invalid("--key-pattern", v, fix))?;
    let (set, get) = (
        parse_pattern("--key-pattern", s, fix).map_err(bad)?,
        parse_pattern("--key-pattern", g, fix).map_err(bad)?,
    );
    if (set == KeyPattern::Parallel) != (get == KeyPattern::Parallel) {
        return Err(invalid(
            "--key-pattern",
            v,
            "parallel key-pattern must be configured for both SET and GET (P:P)",
        ));
    }
    Ok((set, get))
}

/// The checks between the key space and the patterns in use (SET/GET's, or every
/// `--command`'s): `G`'s flags only with `G`, and with `P` at least one key per connection
/// of the `connections` in the run.
pub(super) fn check_patterns(
    a: &KvArgs,
    keys: &Keys,
    commands: &[ArbitraryCommand],
    clients: u32,
    threads: u32,
) -> Result<(), KvConfigError> {
    let space = &keys.space;
    let patterns_in_use: Vec<KeyPattern> = if commands.is_empty() {
        vec![keys.set_pattern, keys.get_pattern]
    } else {
        commands.iter().map(|c| c.key_pattern).collect()
    };
    let gaussian = patterns_in_use.contains(&KeyPattern::Gaussian);
    if (space.stddev.is_some() || space.median.is_some()) && !gaussian {
        return Err(conflict(
            "--key-stddev/--key-median without a G key pattern",
            "key-stddev and key-median are only allowed together with key-pattern G (memtier)",
        ));
    }
    if let Some(m) = space.median {
        // memtier checks min ≤ median ≤ max, then asserts min < median < max when sampling;
        // we check the strict form so a bad median is an error, not a crash.
        let (key_min, key_max) = (space.min, space.max);
        if !(m > key_min as f64 && m < key_max as f64) {
            return Err(invalid(
                "--key-median",
                a.key_median.as_deref().unwrap_or(""),
                format!("key-median must lie strictly between key-minimum {key_min} and key-maximum {key_max}"),
            ));
        }
    }
    let total_conns = u64::from(clients) * u64::from(threads);
    if patterns_in_use.contains(&KeyPattern::Parallel) && total_conns > space.len() {
        return Err(conflict(
            format!("key pattern P with {clients} clients × {threads} threads over {} keys", space.len()),
            "every connection needs at least one key of its own: lower -c/-t or widen --key-minimum/--key-maximum",
        ));
    }
    Ok(())
}
