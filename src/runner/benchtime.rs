//! `--benchtime`, as `go test` reads it: a duration (`1s`, `500ms`, `1m30s`) that one
//! reported round should last, or `Nx` for exactly N iterations.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How long the reported round of each benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchTime {
    /// Grow N until one round lasts at least this long.
    Duration(Duration),
    /// Exactly this many iterations (after Go's first N=1 round).
    Iterations(u64),
}

impl Default for BenchTime {
    /// Go's default, `1s`.
    fn default() -> Self {
        BenchTime::Duration(Duration::from_secs(1))
    }
}

/// Why a `--benchtime` or duration value was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {reason} (examples: 1s, 500ms, 1m30s, 2.5s, or 100x for 100 iterations)")]
pub struct DurationError {
    input: String,
    reason: &'static str,
}

impl FromStr for BenchTime {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(count) = s.strip_suffix('x') {
            return match count.parse::<u64>() {
                Ok(n) if n > 0 => Ok(BenchTime::Iterations(n)),
                _ => Err(DurationError {
                    input: s.to_string(),
                    reason: "Nx needs a whole number of iterations above 0",
                }),
            };
        }
        let d = parse_duration(s)?;
        if d.is_zero() {
            return Err(DurationError {
                input: s.to_string(),
                reason: "a benchtime must be above 0",
            });
        }
        Ok(BenchTime::Duration(d))
    }
}

impl fmt::Display for BenchTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchTime::Iterations(n) => write!(f, "{n}x"),
            BenchTime::Duration(d) => write!(f, "{d:?}"),
        }
    }
}

/// Parses a Go duration: one or more decimal numbers, each with a unit of `ns`, `us` (`µs`),
/// `ms`, `s`, `m` or `h`, e.g. `300ms`, `1.5h`, `2h45m` (Go's `time.ParseDuration`, without
/// signs).
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let err = |reason| DurationError {
        input: s.to_string(),
        reason,
    };
    if s.is_empty() {
        return Err(err("empty"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = s;
    let mut total_ns: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err("expected a number"));
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| err("not a number"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(err("missing unit")),
            _ => return Err(err("unknown unit")),
        };
        rest = &rest[unit_len..];
        total_ns += value * scale;
    }
    if !total_ns.is_finite() || total_ns > u64::MAX as f64 {
        return Err(err("too long"));
    }
    Ok(Duration::from_nanos(total_ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations_and_iterations() {
        let d = |s: &str| s.parse::<BenchTime>().unwrap();
        assert_eq!(d("1s"), BenchTime::Duration(Duration::from_secs(1)));
        assert_eq!(d("500ms"), BenchTime::Duration(Duration::from_millis(500)));
        assert_eq!(d("1m30s"), BenchTime::Duration(Duration::from_secs(90)));
        assert_eq!(d("2.5s"), BenchTime::Duration(Duration::from_millis(2500)));
        assert_eq!(d("10us"), BenchTime::Duration(Duration::from_micros(10)));
        assert_eq!(d("10µs"), BenchTime::Duration(Duration::from_micros(10)));
        assert_eq!(d("100x"), BenchTime::Iterations(100));
        assert_eq!(d("1x"), BenchTime::Iterations(1));
    }

    #[test]
    fn rejects_bad_input_with_a_message_naming_it() {
        for bad in ["", "1", "s", "1parsec", "0x", "-1s", "x", "0s", "1.2.3s"] {
            let e = bad.parse::<BenchTime>().unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid duration {bad:?}")), "{e}");
        }
    }

    #[test]
    fn display_round_trips_iterations() {
        assert_eq!(BenchTime::Iterations(100).to_string(), "100x");
        assert_eq!(BenchTime::default().to_string(), "1s");
    }
}
