//! The small value parsers the configuration sections share. Each returns a
//! [`KvConfigError`] that names the flag, the value and the fix.

use std::time::Duration;

use crate::kv::error::{invalid, KvConfigError};
use crate::kv::keys::KeyPattern;

/// The longest --test-time or --warmup accepted: ten years, far below what a clock can add.
pub(super) const LONGEST_RUN: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

pub(super) fn parse_u32(
    flag: &'static str,
    v: &str,
    min: u32,
    what: &str,
) -> Result<u32, KvConfigError> {
    match v.parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(flag, v, what)),
    }
}

pub(super) fn parse_u64(
    flag: &'static str,
    v: &str,
    min: u64,
    what: &str,
) -> Result<u64, KvConfigError> {
    match v.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(flag, v, what)),
    }
}

/// memtier's `config_range`: `MIN-MAX`, swapped when given backwards.
pub(super) fn parse_range(
    flag: &'static str,
    v: &str,
    fix: &str,
) -> Result<(u32, u32), KvConfigError> {
    let bad = || invalid(flag, v, fix);
    let (a, b) = v.split_once('-').ok_or_else(bad)?;
    let (a, b) = (
        a.parse::<u32>().map_err(|_| bad())?,
        b.parse::<u32>().map_err(|_| bad())?,
    );
    Ok((a.min(b), a.max(b)))
}

pub(super) fn parse_pattern(
    flag: &'static str,
    v: &str,
    fix: &str,
) -> Result<KeyPattern, KvConfigError> {
    let mut chars = v.chars();
    match (chars.next().and_then(KeyPattern::from_letter), chars.next()) {
        (Some(p), None) => Ok(p),
        _ => Err(invalid(flag, v, fix)),
    }
}

/// Fresh entropy for `--randomize` without I/O: std's randomly keyed hasher (seeded from the
/// OS once per process), the clock and the process id.
pub(super) fn fresh_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    h.write_u64(nanos);
    h.write_u32(std::process::id());
    h.finish()
}
