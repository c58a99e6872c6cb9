//! Several load hosts, one run: the run id they share (`--run-id`) and the start barrier
//! (`--start-at TIME`) that lets them begin the measured load together.
//!
//! A host sets everything up first (targets started, the first connection probed), then
//! sleeps until the barrier, then starts its clock. Invariants: a barrier is never more than
//! [`LONGEST_WAIT`] ahead when it is given (a typo cannot hang a host for a year); a barrier
//! already in the past when it is given is a usage error, one that passes while the host sets
//! up is a warning and the load starts at once; Ctrl-C ends the wait within [`POLL`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// How far ahead a `--start-at` may be.
pub const LONGEST_WAIT: Duration = Duration::from_secs(24 * 3600);

/// How often the wait looks at the Ctrl-C flag.
pub const POLL: Duration = Duration::from_millis(50);

/// The longest `--run-id`.
pub const RUN_ID_MAX: usize = 64;

/// `--run-id ID`: 1 to [`RUN_ID_MAX`] letters, digits, `.`, `_` or `-`, so it can name files
/// and be compared byte for byte on every host.
pub fn run_id(value: &str) -> Result<String, String> {
    let ok = !value.is_empty()
        && value.len() <= RUN_ID_MAX
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(value.to_string())
    } else {
        Err(format!(
            "--run-id {value:?}: expected 1 to {RUN_ID_MAX} letters, digits, '.', '_' or '-' \
             (the same on every load host), e.g. --run-id nightly-42"
        ))
    }
}

/// `--start-at TIME` read at `now`: an RFC 3339 time (`2026-12-03T17:00:00Z`, any offset), or
/// `+SECONDS` from now (whole or fractional). It must be in the future and at most
/// [`LONGEST_WAIT`] ahead.
pub fn start_at(value: &str, now: SystemTime) -> Result<SystemTime, String> {
    let fix = "give an RFC 3339 UTC time in the future, e.g. --start-at \
               $(date -u -d '+30 seconds' +%Y-%m-%dT%H:%M:%SZ), or +SECONDS";
    let at = if let Some(secs) = value.strip_prefix('+') {
        let secs: f64 = secs
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| format!("--start-at {value:?}: not a number of seconds; {fix}"))?;
        if secs > LONGEST_WAIT.as_secs_f64() {
            return Err(too_far(value));
        }
        now + Duration::from_secs_f64(secs)
    } else {
        let t = chrono::DateTime::parse_from_rfc3339(value)
            .map_err(|e| format!("--start-at {value:?}: not an RFC 3339 time ({e}); {fix}"))?;
        let since_epoch = Duration::from_secs(t.timestamp().max(0) as u64)
            + Duration::from_nanos(u64::from(t.timestamp_subsec_nanos()));
        SystemTime::UNIX_EPOCH + since_epoch
    };
    match at.duration_since(now) {
        Err(past) => Err(format!(
            "--start-at {value:?}: that time passed {:.1} s ago; {fix}",
            past.duration().as_secs_f64()
        )),
        Ok(ahead) if ahead > LONGEST_WAIT => Err(too_far(value)),
        Ok(_) => Ok(at),
    }
}

/// `--run-id` and `--start-at` as the commands take them (absent, or checked as [`run_id`]
/// and [`start_at`] read now).
pub fn flags(
    run_id_flag: Option<&str>,
    start_at_flag: Option<&str>,
) -> Result<(Option<String>, Option<SystemTime>), String> {
    Ok((
        run_id_flag.map(run_id).transpose()?,
        start_at_flag
            .map(|v| start_at(v, SystemTime::now()))
            .transpose()?,
    ))
}

fn too_far(value: &str) -> String {
    format!(
        "--start-at {value:?}: more than {} hours ahead; give a time within a day (a typo \
         should not leave the load hosts waiting)",
        LONGEST_WAIT.as_secs() / 3600
    )
}

/// How the wait for a barrier ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waited {
    /// The barrier was reached (or there was none).
    OnTime,
    /// The barrier had already passed when the host was ready: it starts this late.
    Late(Duration),
    /// Ctrl-C ended the wait.
    Interrupted,
}

/// Sleeps until `at` (no barrier: returns at once), looking at `interrupted` every [`POLL`].
pub fn wait_until(at: Option<SystemTime>, interrupted: &AtomicBool) -> Waited {
    let Some(at) = at else {
        return Waited::OnTime;
    };
    if let Err(late) = at.duration_since(SystemTime::now()) {
        return Waited::Late(late.duration());
    }
    loop {
        if interrupted.load(Ordering::Relaxed) {
            return Waited::Interrupted;
        }
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(POLL)),
            _ => return Waited::OnTime,
        }
    }
}

/// The warning a host prints when it reached the barrier late, if it did.
pub fn late_warning(waited: Waited) -> Option<String> {
    match waited {
        Waited::Late(by) => Some(format!(
            "--start-at had passed {:.3} s before this host was ready; it started at once \
             (give the hosts more time to set up)",
            by.as_secs_f64()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(s)
    }

    #[test]
    fn start_times_absolute_relative_and_refused() {
        let now = at(1_800_000_000); // 2027-01-15T08:00:00Z
        assert_eq!(start_at("2027-01-15T08:00:30Z", now), Ok(at(1_800_000_030)));
        assert_eq!(
            start_at("2027-01-15T09:00:30+01:00", now),
            Ok(at(1_800_000_030))
        );
        assert_eq!(start_at("+30", now), Ok(at(1_800_000_030)));
        assert_eq!(start_at("+0.5", now), Ok(now + Duration::from_millis(500)));
        let past = start_at("2027-01-15T07:59:50Z", now).unwrap_err();
        assert!(past.contains("passed 10.0 s ago"), "{past}");
        assert!(start_at("+86401", now).unwrap_err().contains("24 hours"));
        assert!(start_at("2027-01-16T08:00:01Z", now)
            .unwrap_err()
            .contains("24 hours"));
        assert!(start_at("+x", now).unwrap_err().contains("seconds"));
        assert!(start_at("+-1", now).unwrap_err().contains("seconds"));
        assert!(start_at("tomorrow", now).unwrap_err().contains("RFC 3339"));
    }

    #[test]
    fn run_ids_are_short_and_plain() {
        assert_eq!(run_id("nightly-42.a_b"), Ok("nightly-42.a_b".to_string()));
        assert!(run_id("").is_err());
        assert!(run_id("a b").is_err());
        assert!(run_id(&"x".repeat(65)).is_err());
        assert!(run_id(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn waits_end_on_time_late_or_interrupted() {
        let no = AtomicBool::new(false);
        assert_eq!(wait_until(None, &no), Waited::OnTime);
        let soon = SystemTime::now() + Duration::from_millis(20);
        assert_eq!(wait_until(Some(soon), &no), Waited::OnTime);
        assert!(SystemTime::now() >= soon);
        let Waited::Late(by) = wait_until(Some(at(0)), &no) else {
            panic!("a barrier in 1970 is late")
        };
        assert!(late_warning(Waited::Late(by)).is_some());
        let yes = AtomicBool::new(true);
        let hour = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(wait_until(Some(hour), &yes), Waited::Interrupted);
    }
}
