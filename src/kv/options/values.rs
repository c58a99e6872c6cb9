//! The object section of [`super::KvConfig`] (memtier's "Object Options"): value sizes
//! (`-d`, `--data-size-range`, `--data-size-list`, `--data-size-pattern`) and
//! `--expiry-range`.
//!
//! Invariants: at most one of the three size flags; every size is at least 1 byte and at
//! most [`LARGEST_VALUE`], so the one value buffer made before the run
//! ([`super::KvConfig::value_buffer`]) stays bounded; a size list has a weight above 0.

use super::args::KvArgs;
use super::parse::{parse_range, parse_u32};
use crate::kv::data::{DataSize, ExpiryRange, SizePattern, SizeWeight};
use crate::kv::error::{conflict, invalid, KvConfigError};

/// The largest value accepted, in bytes: Redis's own limit on a string (512 MB,
/// `proto-max-bulk-len`). The value buffer is allocated whole before the run, so without a
/// bound `-d 4000000000` would take 4 GB up front for values no server stores.
pub const LARGEST_VALUE: u32 = 512 * 1024 * 1024;

/// The object fields of [`super::KvConfig`], typed.
pub(super) struct Values {
    pub data_size: DataSize,
    pub expiry: Option<ExpiryRange>,
}

/// Types the value-size and expiry flags.
pub(super) fn values(a: &KvArgs, warnings: &mut Vec<String>) -> Result<Values, KvConfigError> {
    let size_pattern = match a.data_size_pattern.as_deref() {
        None | Some("R") => SizePattern::Random,
        Some("S") => SizePattern::Sequential,
        Some(v) => {
            return Err(invalid(
                "--data-size-pattern",
                v,
                "data-size-pattern must be either R or S",
            ))
        }
    };
    let data_size = match (&a.data_size, &a.data_size_range, &a.data_size_list) {
        (Some(d), Some(_), _) | (Some(d), _, Some(_)) => return Err(conflict(
            format!("--data-size {d} with --data-size-range/--data-size-list"),
            "data-size cannot be used with data-size-list or data-size-range (memtier): keep one",
        )),
        (None, Some(r), Some(l)) => {
            return Err(conflict(
                format!("--data-size-list {l} with --data-size-range {r}"),
                "data-size-list cannot be used with data-size-range (memtier): keep one",
            ))
        }
        (Some(d), None, None) => DataSize::Fixed(parse_u32(
            "--data-size",
            d,
            1,
            "data-size must be bytes greater than zero",
        )?),
        (None, Some(r), None) => {
            let fix = "data-size-range must be MIN-MAX with MIN ≥ 1";
            let (min, max) = parse_range("--data-size-range", r, fix)?;
            if min < 1 {
                return Err(invalid("--data-size-range", r, fix));
            }
            DataSize::Range {
                min,
                max,
                pattern: size_pattern,
            }
        }
        (None, None, Some(l)) => size_list(l)?,
        (None, None, None) => DataSize::Fixed(32),
    };
    check_largest(a, &data_size)?;
    if a.data_size_pattern.is_some() && !matches!(data_size, DataSize::Range { .. }) {
        warnings.push("--data-size-pattern only applies to --data-size-range; ignored".to_string());
    }
    let expiry = a
        .expiry_range
        .as_deref()
        .map(|v| {
            parse_range("--expiry-range", v, "expiry-range must be MIN-MAX seconds")
                .map(|(min, max)| ExpiryRange { min, max })
        })
        .transpose()?;
    Ok(Values { data_size, expiry })
}

/// `--data-size-list SIZE:WEIGHT,…`.
fn size_list(l: &str) -> Result<DataSize, KvConfigError> {
    let fix = "data-size-list must be SIZE:WEIGHT,… with sizes ≥ 1 and at least one weight ≥ 1";
    let bad = || invalid("--data-size-list", l, fix);
    let mut items = Vec::new();
    for item in l.split(',') {
        let (s, w) = item.split_once(':').ok_or_else(bad)?;
        let (size, weight) = (
            s.parse::<u32>().map_err(|_| bad())?,
            w.parse::<u32>().map_err(|_| bad())?,
        );
        if size == 0 {
            return Err(bad());
        }
        items.push(SizeWeight { size, weight });
    }
    if items.iter().all(|w| w.weight == 0) {
        return Err(bad());
    }
    Ok(DataSize::List(items))
}

/// Refuses a value size above [`LARGEST_VALUE`], naming the flag that asked for it.
fn check_largest(a: &KvArgs, size: &DataSize) -> Result<(), KvConfigError> {
    if size.largest() <= LARGEST_VALUE {
        return Ok(());
    }
    let (flag, value) = match size {
        DataSize::Fixed(_) => ("--data-size", a.data_size.as_deref()),
        DataSize::Range { .. } => ("--data-size-range", a.data_size_range.as_deref()),
        DataSize::List(_) => ("--data-size-list", a.data_size_list.as_deref()),
    };
    Err(invalid(
        flag,
        value.unwrap_or(""),
        format!(
            "values are at most {LARGEST_VALUE} bytes (512 MB, Redis's largest string): the \
             value buffer is made before the run"
        ),
    ))
}
