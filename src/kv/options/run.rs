//! The run section of [`super::KvConfig`] (memtier's "Test Options"): how many threads and
//! connections, how many requests or how long, the SET:GET ratio, the open-loop schedule
//! (`--rate-limiting`, `--rate`), the warm-up and the seed.
//!
//! Invariants of a [`RunShape`]: at most one of `-n` and `--test-time` was given, and exactly
//! one of `requests` and `test_time` is set (10 000 requests per connection by default); at
//! most one of `--rate-limiting` and `--rate`; a warm-up shorter than `--test-time`.

use std::time::Duration;

use super::args::KvArgs;
use super::config::{Ratio, Requests};
use super::parse::{parse_u32, parse_u64, LONGEST_RUN};
use crate::kv::error::{conflict, invalid, KvConfigError};

/// The run fields of [`super::KvConfig`], typed.
pub(super) struct RunShape {
    pub clients: u32,
    pub threads: u32,
    pub pipeline: u32,
    pub run_count: u32,
    pub requests: Option<Requests>,
    pub test_time: Option<Duration>,
    pub ratio: Ratio,
    /// `--ratio` was given (it may not be with `--command`).
    pub ratio_given: bool,
    pub multi_key_get: u32,
    pub rate_limiting: Option<u32>,
    pub rate: Option<u64>,
    pub warmup: Duration,
    pub seed: u64,
}

/// Types the run flags; `entropy` is the base seed `--randomize` uses without `--seed`.
pub(super) fn run_shape(a: &KvArgs, entropy: u64) -> Result<RunShape, KvConfigError> {
    let count = |v: &Option<String>, flag, default, fix| match v {
        Some(v) => parse_u32(flag, v, 1, fix),
        None => Ok(default),
    };
    let clients = count(
        &a.clients,
        "--clients",
        50,
        "clients must be greater than zero",
    )?;
    let threads = count(
        &a.threads,
        "--threads",
        4,
        "threads must be greater than zero",
    )?;
    let pipeline = count(
        &a.pipeline,
        "--pipeline",
        1,
        "pipeline must be greater than zero",
    )?;
    let run_count = count(
        &a.run_count,
        "--run-count",
        1,
        "run count must be greater than zero",
    )?;
    let (requests, test_time) = requests_or_time(a)?;
    let ratio = ratio(a)?;
    let multi_key_get = count(
        &a.multi_key_get,
        "--multi-key-get",
        0,
        "multi-key-get must be greater than zero",
    )?;
    let rate_limiting = a
        .rate_limiting
        .as_deref()
        .map(|v| {
            parse_u32(
                "--rate-limiting",
                v,
                1,
                "rate must be requests per second per connection, above 0",
            )
        })
        .transpose()?;
    let rate = a
        .rate
        .as_deref()
        .map(|v| {
            parse_u64(
                "--rate",
                v,
                1,
                "rate must be requests per second in total, above 0",
            )
        })
        .transpose()?;
    if let (Some(rl), Some(r)) = (&a.rate_limiting, &a.rate) {
        return Err(conflict(
            format!("--rate-limiting {rl} with --rate {r}"),
            "both set a request schedule (per connection and in total): keep one",
        ));
    }
    let warmup = warmup(a, test_time)?;
    let seed = match &a.seed {
        Some(v) => parse_u64(
            "--seed",
            v,
            0,
            "a seed is a whole number 0-18446744073709551615",
        )?,
        None if a.randomize => entropy,
        None => 0,
    };
    Ok(RunShape {
        clients,
        threads,
        pipeline,
        run_count,
        requests,
        test_time,
        ratio,
        ratio_given: a.ratio.is_some(),
        multi_key_get,
        rate_limiting,
        rate,
        warmup,
        seed,
    })
}

/// `-n` and `--test-time`: one of them, or 10 000 requests per connection.
fn requests_or_time(a: &KvArgs) -> Result<(Option<Requests>, Option<Duration>), KvConfigError> {
    let requests = match a.requests.as_deref() {
        Some("allkeys") => Some(Requests::AllKeys),
        Some(v) => Some(Requests::Count(parse_u64(
            "--requests",
            v,
            1,
            "requests must be a number greater than zero, or allkeys",
        )?)),
        None => None,
    };
    let test_time = match &a.test_time {
        Some(v) => {
            let t = Duration::from_secs(parse_u64(
                "--test-time",
                v,
                1,
                "test time is whole seconds greater than zero",
            )?);
            if t > LONGEST_RUN {
                return Err(invalid(
                    "--test-time",
                    v,
                    "at most 315360000 seconds (ten years)",
                ));
            }
            Some(t)
        }
        None => None,
    };
    if let (Some(n), Some(t)) = (&a.requests, &a.test_time) {
        // memtier rejects -n N with --test-time; with -n allkeys it depends on the order
        // of the flags. We always reject.
        return Err(conflict(
            format!("--requests {n} with --test-time {t}"),
            "they are mutually exclusive (memtier): keep one",
        ));
    }
    let requests = match (requests, test_time) {
        (None, None) => Some(Requests::Count(10_000)),
        (r, _) => r,
    };
    Ok((requests, test_time))
}

/// `--ratio SETS:GETS`, 1:10 by default.
fn ratio(a: &KvArgs) -> Result<Ratio, KvConfigError> {
    let Some(v) = &a.ratio else {
        return Ok(Ratio { sets: 1, gets: 10 });
    };
    let fix = "ratio must be SETS:GETS with whole numbers, e.g. 1:10";
    let (s, g) = v
        .split_once(':')
        .ok_or_else(|| invalid("--ratio", v, fix))?;
    let (sets, gets) = (
        s.parse::<u32>().map_err(|_| invalid("--ratio", v, fix))?,
        g.parse::<u32>().map_err(|_| invalid("--ratio", v, fix))?,
    );
    if sets == 0 && gets == 0 {
        return Err(invalid(
            "--ratio",
            v,
            "0:0 sends nothing; give e.g. 1:0 or 1:10",
        ));
    }
    Ok(Ratio { sets, gets })
}

/// `--warmup`, zero without it; it must leave something of `--test-time` to measure.
fn warmup(a: &KvArgs, test_time: Option<Duration>) -> Result<Duration, KvConfigError> {
    let warmup = match &a.warmup {
        Some(v) => {
            let w = crate::runner::parse_duration(v)
                .map_err(|e| invalid("--warmup", v, e.to_string()))?;
            if w > LONGEST_RUN {
                return Err(invalid("--warmup", v, "at most ten years (315360000s)"));
            }
            w
        }
        None => Duration::ZERO,
    };
    if let Some(t) = test_time {
        if !warmup.is_zero() && warmup >= t {
            return Err(conflict(
                format!(
                    "--warmup {} with --test-time {}",
                    a.warmup.as_deref().unwrap_or(""),
                    t.as_secs()
                ),
                "the warm-up would leave nothing to measure: shorten --warmup or lengthen --test-time",
            ));
        }
    }
    Ok(warmup)
}
