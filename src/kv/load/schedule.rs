//! The run's clock and the open-loop schedule (`--rate-limiting`, `--rate`): request `k` of
//! a connection is intended to go out at `first + k · interval`, `first` staggered over the
//! connections so they do not send in phase (memtier PR #519).
//!
//! Invariants: a schedule never moves (a late request does not shift the ones after it, so
//! stalls show up as coordinated-omission-corrected latency, not as a slower rate); a slot
//! due before the end but never sent is counted as dropped, unless it fell in the warm-up or
//! beyond the connection's `-n` share.

use std::time::{Duration, Instant};

use crate::kv::options::KvConfig;

/// The open-loop rate of one connection, requests/s: `--rate-limiting` as given (memtier:
/// per connection), or `--rate` split evenly over all connections.
pub fn connection_rate(cfg: &KvConfig) -> Option<f64> {
    let conns = f64::from(cfg.threads) * f64::from(cfg.clients);
    cfg.rate_limiting
        .map(f64::from)
        .or(cfg.rate.map(|r| r as f64 / conns.max(1.0)))
}

/// The run's times, shared by every connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    /// The end of the warm-up: requests sent (intended) before it are not recorded.
    pub(super) measure_from: Instant,
    /// `--test-time`'s end.
    pub(super) deadline: Option<Instant>,
    /// Open loop: one connection's interval between intended sends, ns.
    pub(super) interval_ns: Option<f64>,
    /// All connections of the run, for staggering their schedules.
    pub(super) total_conns: u64,
    pub(super) pipeline: usize,
}

/// One connection's intended send times: `first + k · interval`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    pub(super) first: Instant,
    pub(super) interval_ns: f64,
}

impl Schedule {
    pub(super) fn at(&self, k: u64) -> Instant {
        self.first + Duration::from_nanos((k as f64 * self.interval_ns) as u64)
    }

    pub(super) fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns as u64)
    }

    /// How many slots `k` have `at(k)` strictly before `t`.
    pub(super) fn slots_before(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(self.first).as_nanos() as f64;
        (ns / self.interval_ns).ceil() as u64
    }

    /// Scheduled requests that were due before `end` (capped by the connection's `-n`
    /// share) and after the warm-up, but never sent.
    pub(super) fn dropped(
        &self,
        sent: u64,
        limit: Option<u64>,
        end: Instant,
        measure_from: Instant,
    ) -> u64 {
        let due = self.slots_before(end);
        let due = limit.map_or(due, |l| due.min(l));
        due.saturating_sub(sent.max(self.slots_before(measure_from)))
    }
}

impl Clock {
    /// Connection `index`'s schedule once it is ready at `ready`, staggered by
    /// `index / total_conns` of an interval so that connections do not send in phase.
    pub(super) fn schedule(&self, ready: Instant, index: u64) -> Option<Schedule> {
        self.interval_ns.map(|interval_ns| Schedule {
            first: ready
                + Duration::from_nanos(
                    (interval_ns * index as f64 / self.total_conns.max(1) as f64) as u64,
                ),
            interval_ns,
        })
    }

    /// When a connection that stopped sending at `now` stopped being due.
    pub(super) fn end(&self, now: Instant) -> Instant {
        self.deadline.map_or(now, |d| d.min(now))
    }
}

/// Sleeps are cut to this, so Ctrl-C and a failed connection stop a slow schedule promptly.
pub(super) const MAX_NAP: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn schedule(interval_ms: u64) -> (Instant, Schedule) {
        let t0 = Instant::now();
        (
            t0,
            Schedule {
                first: t0,
                interval_ns: (interval_ms * 1_000_000) as f64,
            },
        )
    }

    #[test]
    pub(super) fn a_schedule_counts_its_slots_and_the_dropped_ones() {
        let (t0, s) = schedule(10);
        assert_eq!(s.at(3), t0 + Duration::from_millis(30));
        // Slots 0..=9 are due strictly before 100 ms.
        assert_eq!(s.slots_before(t0 + Duration::from_millis(100)), 10);
        assert_eq!(s.slots_before(t0 + Duration::from_millis(101)), 11);
        let end = t0 + Duration::from_millis(100);
        // 7 of 10 sent: 3 dropped; a -n share of 8 caps what was due.
        assert_eq!(s.dropped(7, None, end, t0), 3);
        assert_eq!(s.dropped(7, Some(8), end, t0), 1);
        assert_eq!(s.dropped(10, None, end, t0), 0);
        // Slots in the warm-up (before 50 ms: 0..=4) are not counted as dropped.
        assert_eq!(s.dropped(2, None, end, t0 + Duration::from_millis(50)), 5);
    }

    #[test]
    pub(super) fn rates_are_per_connection() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            kv: crate::kv::KvArgs,
        }
        let cfg = |extra: &[&str]| {
            let mut argv = vec!["kv", "-t", "2", "-c", "5", "--test-time", "1"];
            argv.extend_from_slice(extra);
            let cli = <Cli as clap::Parser>::parse_from(argv);
            KvConfig::from_args(&cli.kv).unwrap()
        };
        assert_eq!(connection_rate(&cfg(&[])), None);
        assert_eq!(
            connection_rate(&cfg(&["--rate-limiting", "300"])),
            Some(300.0)
        );
        // --rate is the total: 1,000/s over 10 connections.
        assert_eq!(connection_rate(&cfg(&["--rate", "1000"])), Some(100.0));
    }
}
