//! The WAIT section of [`super::KvConfig`]: memtier's own `--wait-ratio`, `--num-slaves` and
//! `--wait-timeout` (`memtier_benchmark.cpp`: `config_parse_args`; `client.cpp`:
//! `client::create_request`, `client::create_wait_request`), and edgebench's `--wait N`.
//!
//! The two ask different questions. memtier's WAITs are requests of their own in the mix,
//! between SETs and GETs, with a random replica count and timeout each, timed and counted
//! in their own `Waits` row. edgebench's `--wait N` follows every write with `WAIT N 0` on
//! the same connection, as `coredata --wait N` does, and the write's latency includes it.
//!
//! Invariants of a [`WaitRatio`]: not both sides 0; `num_slaves` and `timeout_ms` are
//! `(min, max)` with `min <= max`. `--wait` and `--wait-ratio` are never both set.

use super::args::KvArgs;
use super::parse::parse_range;
use crate::kv::error::{conflict, invalid, KvConfigError};
use crate::transport::MAX_WAIT;

/// memtier's `--wait-ratio SETS:WAITS` with `--num-slaves` and `--wait-timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WaitRatio {
    /// The SET side: a WAIT is due while sets ÷ waits (whole numbers) exceeds sets ÷ waits
    /// of the ratio.
    pub sets: u32,
    /// The WAIT side; 0 sends no WAIT (memtier's default `1:0`).
    pub waits: u32,
    /// `--num-slaves MIN-MAX`: each WAIT's replica count, uniform in the range (default
    /// `0-0`).
    pub num_slaves: (u32, u32),
    /// `--wait-timeout MIN-MAX`: each WAIT's timeout in ms, normal around the middle of the
    /// range with a sixth of it as standard deviation (default `0-0`).
    pub timeout_ms: (u32, u32),
}

impl WaitRatio {
    /// The most replicas a WAIT of this run may wait for with timeout 0, i.e. for ever;
    /// `None` when every WAIT returns by itself (no WAIT sent, none asks for a replica, or
    /// every timeout is above 0).
    pub fn blocking_replicas(&self) -> Option<u32> {
        (self.waits > 0 && self.timeout_ms.0 == 0 && self.num_slaves.1 > 0)
            .then_some(self.num_slaves.1)
    }
}

/// Types the WAIT flags: `(--wait, --wait-ratio)`. `has_commands`: `--command`s replace the
/// SET/GET mix, which is where memtier sends its WAITs.
pub(super) fn waits(
    a: &KvArgs,
    has_commands: bool,
    warnings: &mut Vec<String>,
) -> Result<(u32, Option<WaitRatio>), KvConfigError> {
    let wait = a
        .wait
        .as_deref()
        .map(|v| match v.parse::<u32>() {
            Ok(n) if (1..=MAX_WAIT).contains(&n) => Ok(n),
            _ => Err(invalid(
                "--wait",
                v,
                format!("give a number of replicas from 1 to {MAX_WAIT}"),
            )),
        })
        .transpose()?
        .unwrap_or(0);
    let ratio = a
        .wait_ratio
        .as_deref()
        .map(|v| {
            let bad = || {
                invalid(
                    "--wait-ratio",
                    v,
                    "wait-ratio must be expressed as [0-n]:[0-n]",
                )
            };
            let (s, w) = v.split_once(':').ok_or_else(bad)?;
            let (s, w) = (
                s.parse::<u32>().map_err(|_| bad())?,
                w.parse::<u32>().map_err(|_| bad())?,
            );
            // memtier's `config_ratio::is_defined`: 0:0 is no ratio at all.
            if s == 0 && w == 0 {
                return Err(bad());
            }
            Ok((s, w))
        })
        .transpose()?;
    // memtier's `config_range`, defined only with a maximum above 0.
    let range = |flag: &'static str, v: Option<&str>, fix: &str| {
        v.map(|v| match parse_range(flag, v, fix)? {
            (_, 0) => Err(invalid(flag, v, fix)),
            r => Ok(r),
        })
        .transpose()
    };
    let num_slaves = range(
        "--num-slaves",
        a.num_slaves.as_deref(),
        "num-slaves must be expressed as [0-n]-[1-n]",
    )?;
    let timeout_ms = range(
        "--wait-timeout",
        a.wait_timeout.as_deref(),
        "wait-timeout must be expressed as [0-n]-[1-n]",
    )?;
    if let (Some(r), true) = (&a.wait_ratio, wait > 0) {
        return Err(conflict(
            format!("--wait {wait} with --wait-ratio {r}"),
            "--wait N follows every write with WAIT N 0 in the write's own latency, \
             --wait-ratio sends memtier's WAITs as requests of their own: drop one",
        ));
    }
    let Some((sets, waits)) = ratio else {
        for (flag, given) in [("--num-slaves", num_slaves), ("--wait-timeout", timeout_ms)] {
            if given.is_some() {
                warnings.push(format!(
                    "{flag} applies to --wait-ratio's WAITs only (as in memtier); ignored"
                ));
            }
        }
        return Ok((wait, None));
    };
    if has_commands {
        warnings.push(
            "--wait-ratio does not apply to --command (memtier sends its WAITs only between \
             SETs and GETs); ignored"
                .to_string(),
        );
        return Ok((wait, None));
    }
    Ok((
        wait,
        Some(WaitRatio {
            sets,
            waits,
            num_slaves: num_slaves.unwrap_or((0, 0)),
            timeout_ms: timeout_ms.unwrap_or((0, 0)),
        }),
    ))
}
