//! `fleet --find-max`: the highest event rate a target sustains, found as wrk2 users find it by
//! hand: run the fleet at a rate, double it while the target keeps up (the verdict, with the
//! p99 write latency under `--slo`), then bisect between the last rate that kept up and the
//! first that did not, until they are within [`PRECISION`] of each other or [`MAX_PROBES`]
//! runs were made. A target that does not keep up at the starting rate is probed downward
//! (halving) first.
//!
//! One run can be decided by a single stall (a VM's hiccup, a checkpoint), so every rate, in
//! the ramp as in the bisection, is run until two runs agree (at most [`VOTES`]): a
//! majority, not a single run, moves the search. Longer runs (`--duration`) make each vote
//! steadier still; docs/fleet.md says how long is long enough.
//!
//! The search is generic over the probe, so its logic is tested with a synthetic capacity.

/// The search stops when the bracket `[kept_up, fell_behind]` is this close (5%).
pub const PRECISION: f64 = 1.05;
/// The most fleet runs one search makes: a ramp over ten doublings and a bisection of five
/// steps, each rate decided by two or three runs.
pub const MAX_PROBES: usize = 48;
/// Runs per rate: the rate kept up when most of them did.
pub const VOTES: usize = 3;
/// No rate above this is tried (events/s).
pub const MAX_RATE: f64 = 10_000_000.0;
/// No rate below this is tried (events/s).
pub const MIN_RATE: f64 = 1.0;

/// One fleet run of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// Events per second offered.
    pub rate: f64,
    /// Whether the target kept up.
    pub kept_up: bool,
    /// The run's verdict.
    pub verdict: String,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The highest rate that kept up; `None` when not even [`MIN_RATE`] did.
    pub max_rate: Option<f64>,
    /// The lowest rate that did not keep up, if one was found below [`MAX_RATE`].
    pub first_failing: Option<f64>,
    /// Every run, in order.
    pub probes: Vec<Probe>,
}

/// Searches from `start` events/s. `probe(rate)` runs the fleet at `rate` and returns
/// `(kept_up, verdict)`; an error ends the search with it.
pub fn search<E>(
    start: f64,
    mut probe: impl FnMut(f64) -> Result<(bool, String), E>,
) -> Result<Found, E> {
    let mut probes = Vec::new();
    // Runs `rate` until a majority of [`VOTES`] agrees (or the runs are used up: a tie is
    // then not keeping up).
    let mut decide = |rate: f64, probes: &mut Vec<Probe>| -> Result<bool, E> {
        let (mut yes, mut no) = (0, 0);
        while yes * 2 <= VOTES && no * 2 <= VOTES && probes.len() < MAX_PROBES {
            let (kept_up, verdict) = probe(rate)?;
            probes.push(Probe {
                rate,
                kept_up,
                verdict,
            });
            match kept_up {
                true => yes += 1,
                false => no += 1,
            }
        }
        Ok(yes > no)
    };
    let mut rate = start.clamp(MIN_RATE, MAX_RATE);
    let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
    // Bracket: up while it keeps up, down while it does not.
    if decide(rate, &mut probes)? {
        good = Some(rate);
        while rate < MAX_RATE && probes.len() < MAX_PROBES {
            rate = (rate * 2.0).min(MAX_RATE);
            if decide(rate, &mut probes)? {
                good = Some(rate);
            } else {
                bad = Some(rate);
                break;
            }
        }
    } else {
        bad = Some(rate);
        while rate > MIN_RATE && probes.len() < MAX_PROBES {
            rate = (rate / 2.0).max(MIN_RATE);
            if decide(rate, &mut probes)? {
                good = Some(rate);
                break;
            }
            bad = Some(rate);
        }
    }
    // Bisect (geometrically: rates span decades).
    while let (Some(lo), Some(hi)) = (good, bad) {
        if hi / lo <= PRECISION || probes.len() + VOTES > MAX_PROBES {
            break;
        }
        let mid = (lo * hi).sqrt();
        if decide(mid, &mut probes)? {
            good = Some(mid);
        } else {
            bad = Some(mid);
        }
    }
    Ok(Found {
        max_rate: good,
        first_failing: bad,
        probes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capacity(cap: f64) -> impl FnMut(f64) -> Result<(bool, String), String> {
        move |rate| Ok((rate <= cap, String::new()))
    }

    #[test]
    fn ramps_up_then_bisects_to_within_five_percent() {
        let found = search(1000.0, capacity(12_345.0)).expect("searches");
        let (lo, hi) = (found.max_rate.unwrap(), found.first_failing.unwrap());
        assert!(lo <= 12_345.0 && hi > 12_345.0, "{lo} {hi}");
        assert!(hi / lo <= PRECISION, "{lo} {hi}");
        // 1000, 2000, ..., 16000, each decided by two runs that agree, then bisection.
        let rates: Vec<f64> = found.probes.iter().take(10).map(|p| p.rate).collect();
        assert_eq!(
            rates,
            [1000.0, 1000.0, 2000.0, 2000.0, 4000.0, 4000.0, 8000.0, 8000.0, 16000.0, 16000.0]
        );
        assert!(found.probes.len() <= MAX_PROBES);
    }

    #[test]
    fn probes_down_when_the_start_is_too_fast() {
        let found = search(1000.0, capacity(90.0)).expect("searches");
        let lo = found.max_rate.unwrap();
        assert!(lo <= 90.0 && found.first_failing.unwrap() / lo <= PRECISION);
        assert_eq!(found.probes[0].rate, 1000.0);
        assert!(!found.probes[0].kept_up);
    }

    #[test]
    fn nothing_keeps_up_and_everything_keeps_up_are_answers_too() {
        let none = search(8.0, capacity(0.5)).expect("searches");
        assert_eq!(none.max_rate, None);
        assert_eq!(none.probes.last().unwrap().rate, MIN_RATE);
        let all = search(MAX_RATE / 4.0, capacity(f64::INFINITY)).expect("searches");
        assert_eq!(all.max_rate, Some(MAX_RATE));
        assert_eq!(all.first_failing, None);
    }

    #[test]
    fn one_stall_does_not_move_the_bracket() {
        // Capacity 5,000/s, but the first run at each rate strictly between 4,000 and 5,000
        // stalls: the bisection visits 4,757 and 4,968, and a single run would call both
        // failures and end near 4,000.
        let mut seen = std::collections::HashSet::new();
        let found = search(1000.0, |rate: f64| {
            let first = seen.insert(rate.to_bits());
            let stalled = first && rate > 4_000.0 && rate < 5_000.0;
            Ok::<_, String>((rate <= 5_000.0 && !stalled, String::new()))
        })
        .expect("searches");
        let lo = found.max_rate.unwrap();
        assert!(lo > 4_800.0 && lo <= 5_000.0, "{lo}: {:?}", found.probes);
    }

    #[test]
    fn one_stall_in_the_ramp_does_not_end_it() {
        // Capacity 5,000/s; the first run at 2,000 stalls. A single run would stop the ramp
        // there and answer below 2,000; the vote runs 2,000 twice more and goes on.
        let mut stalled = false;
        let found = search(1000.0, |rate: f64| {
            let stall = rate == 2_000.0 && !stalled;
            stalled |= stall;
            Ok::<_, String>((rate <= 5_000.0 && !stall, String::new()))
        })
        .expect("searches");
        let lo = found.max_rate.unwrap();
        assert!(lo > 4_700.0 && lo <= 5_000.0, "{lo}: {:?}", found.probes);
        let at_2000: Vec<bool> = found
            .probes
            .iter()
            .filter(|p| p.rate == 2_000.0)
            .map(|p| p.kept_up)
            .collect();
        assert_eq!(at_2000, [false, true, true]);
    }

    #[test]
    fn an_error_ends_the_search_with_it() {
        let r = search(100.0, |rate| {
            if rate > 150.0 {
                Err(format!("lost at {rate}"))
            } else {
                Ok((true, String::new()))
            }
        });
        assert_eq!(r, Err("lost at 200".to_string()));
    }
}
