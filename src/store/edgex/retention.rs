//! What one purge of EdgeX core data's retention does, over any [`EventStore`]; when to purge
//! is the caller's (the fleet's purger beside its writers, the core-data service's own
//! thread), and so is what to do with an error (EdgeX logs it and purges again next time).
//!
//! Read in edgexfoundry/edgex-go, and implemented here from what it does, not copied:
//! - **EdgeX 3.1** (`internal/core/data/application/reading.go` at v3.1.1, `purgeReading`):
//!   when the store holds at least MaxCap readings (all of them: `ReadingTotalCount`), take
//!   the reading at offset MinCap, newest first (`LatestReadingByOffset`), and delete every
//!   event by age down to its origin (`DeleteEventsByAge(now - origin)`). See
//!   [`purge_to_watermark`].
//! - **EdgeX 4.0** (`internal/core/data/application/eventpurge.go` at v4.0.2: `purgeEvents`,
//!   `purgeEventsByAutoEvent`, `purgeEventsByDeviceInfo`, `handleEventRetention`,
//!   `isReachMaxCap`, `timeBasedEventRetention`, `countBasedEventRetention`; v4.0.0 had the
//!   same steps in `reading.go` as `purgeEventByAutoEvents` / `purgeEvent`), and the
//!   PostgreSQL calls they make (`internal/pkg/infrastructure/postgres/event.go` and `sql.go`
//!   at v4.0.2: `EventCountByDeviceNameAndSourceNameAndLimit`,
//!   `LatestEventByDeviceNameAndSourceNameAndOffset`,
//!   `LatestEventByDeviceNameAndSourceNameAndAgeAndOffset`,
//!   `DeleteEventsByAgeAndDeviceNameAndSourceName`, `DeleteEventsByDeviceNameAndSourceName`).
//!   Every device's AutoEvents, then every remaining (device, source) of the device_info
//!   cache, each with its [`EventRetention`]: see [`purge_source`]. EdgeX 4.0's Redis client
//!   implements none of those five calls (each logs "didn't implement" and deletes nothing),
//!   so on Redis EdgeX 4.0's retention removes nothing; edgebench's Redis layout answers them
//!   ([`crate::store::redis::edgex3`]), to show what they would cost there.
//!
//! Where edgebench differs: EdgeX finds the event at offset MinCap, then deletes by *age*,
//! `now - origin` with a second `now` read later, so events newer than that one by less than
//! the time between the two clock reads go too. Here the delete names the found origin
//! itself ([`Doomed::Source`]), so exactly the events newer than it stay (all of them
//! distinct in origin: the fleet's are). EdgeX's 3.1 watermark is kept as EdgeX has it,
//! through [`Doomed::OlderThan`], as the fleet has always run it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter};
use crate::edgex::now_ns;
use crate::store::StoreResult;

/// EdgeX 4.0's retention of one device and source: an AutoEvent's `retention`, or core
/// data's `Retention.Default{MaxCap,MinCap,Duration}` for the pairs without one.
///
/// EdgeX falls back to the defaults field by field: an AutoEvent's MaxCap or MinCap of 0 or
/// its empty Duration takes the default's. edgebench's callers have no AutoEvents of their
/// own (the fleet's devices × sources and the service's stored pairs stand for them), so
/// every pair takes the defaults, as an AutoEvent without a retention does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRetention {
    /// `MaxCap`, events of the pair: when > 0, a pair is purged only once it holds at least
    /// this many; -1 (or 0) purges at every interval.
    pub max_cap: i64,
    /// `MinCap`, events of the pair: when > 0, the purge keeps this many (of the expired
    /// ones, with a duration); -1 (or 0) keeps none.
    pub min_cap: i64,
    /// `Duration`: when > 0, time-based (only events older than now − duration go), else
    /// count-based.
    pub duration: Duration,
}

impl EventRetention {
    /// EdgeX 4.0's defaults (`cmd/core-data/res/configuration.yaml` at v4.0.2:
    /// `DefaultMaxCap: -1`, `DefaultMinCap: 1`, `DefaultDuration: "168h"`).
    pub const EDGEX_DEFAULTS: EventRetention = EventRetention {
        max_cap: -1,
        min_cap: 1,
        duration: Duration::from_secs(168 * 3600),
    };

    /// EdgeX's values in one line, e.g. `max-cap 5, min-cap 3, duration 168h`.
    pub fn describe(&self) -> String {
        format!(
            "max-cap {}, min-cap {}, duration {}",
            self.max_cap,
            self.min_cap,
            duration_text(self.duration)
        )
    }
}

/// A duration as EdgeX's configuration writes one, in its largest whole unit (`168h`,
/// `10m`, `30s`, `200ms`, `0s`); other values as Rust prints them (`1.5s`).
pub fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, size) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
    ] {
        if ns > 0 && ns.is_multiple_of(size) {
            return format!("{}{unit}", ns / size);
        }
    }
    match ns {
        0 => "0s".to_string(),
        _ => format!("{d:?}"),
    }
}

/// EdgeX 4.0's purge of one device and source under `policy` (`handleEventRetention`):
/// 1. MaxCap > 0: count the pair's events, no further than MaxCap; fewer, and nothing goes.
/// 2. Duration > 0 (time-based): the expired events are those with `origin <= now −
///    duration`. MinCap <= 0: all of them go. MinCap > 0: the expired one at offset MinCap
///    (newest first) and every older one go, so the MinCap newest expired events stay as
///    well as every unexpired one; none at that offset, and nothing goes.
/// 3. Otherwise (count-based): MinCap <= 0: every event of the pair goes. MinCap > 0: the
///    event at offset MinCap and every older one go, so the MinCap newest stay; none at that
///    offset, and nothing goes.
///
/// Returns the newest origin deleted up to (inclusive), or `None` when nothing was due.
pub fn purge_source(
    store: &mut dyn EventStore,
    device: &str,
    source: &str,
    policy: &EventRetention,
) -> StoreResult<Option<i64>> {
    let pair = SourceFilter::new(device, source);
    if let Ok(max_cap @ 1..) = u64::try_from(policy.max_cap) {
        let limit = usize::try_from(max_cap).unwrap_or(usize::MAX);
        if store.source_event_count(pair, limit)? < max_cap {
            return Ok(None);
        }
    }
    // Time-based looks only at the expired events; count-based at all of them.
    let (among, all) = match policy.duration {
        Duration::ZERO => (pair, i64::MAX),
        duration => {
            let age = i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX);
            let expired = now_ns().saturating_sub(age);
            (pair.between(i64::MIN, expired), expired)
        }
    };
    let up_to = match usize::try_from(policy.min_cap) {
        Ok(min_cap @ 1..) => {
            let page = Page {
                offset: min_cap,
                limit: 1,
            };
            match store.source_events(among, page)?.first() {
                Some(event) => event.origin,
                // MinCap or fewer (expired) events: nothing to delete.
                None => return Ok(None),
            }
        }
        _ => all,
    };
    store.delete_events(Doomed::Source {
        device,
        source,
        up_to_ns: up_to,
    })?;
    Ok(Some(up_to))
}

/// [`purge_source`] on each pair in turn. A pair that fails does not stop the others (EdgeX
/// logs it and goes on); the first failure is returned once every pair has been tried.
pub fn purge_sources(
    store: &mut dyn EventStore,
    pairs: &[DeviceSource],
    policy: &EventRetention,
) -> StoreResult<()> {
    let mut first_error = None;
    for pair in pairs {
        if let Err(e) = purge_source(store, &pair.device, &pair.source, policy) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// EdgeX 3.1's watermark (`purgeReading`): at `max_cap` readings or more in the whole store,
/// delete every event at or before the origin of the reading at offset `min_cap` (newest
/// first). Returns that origin when it deleted.
///
/// The delete goes by age, as EdgeX's: `now − origin − 1 ns`, so that the cutoff falls just
/// after the found origin; the store takes its own "now" a few µs later, so events younger
/// than the cutoff by less than that go too (as in EdgeX).
pub fn purge_to_watermark(
    store: &mut dyn EventStore,
    max_cap: u64,
    min_cap: u64,
) -> StoreResult<Option<i64>> {
    if store.reading_count(Filter::all())? < max_cap {
        return Ok(None);
    }
    let page = Page {
        offset: usize::try_from(min_cap).unwrap_or(usize::MAX),
        limit: 1,
    };
    let Some(reading) = store.readings(Filter::all(), page)?.pop() else {
        return Ok(None);
    };
    let age_ns = now_ns()
        .saturating_sub(reading.origin)
        .saturating_sub(1)
        .max(0);
    store.delete_events(Doomed::OlderThan { age_ns })?;
    Ok(Some(reading.origin))
}

/// Waits `interval` in short steps; `false` as soon as `done` is set (so a purger stops
/// promptly), `true` when the interval has passed. EdgeX restarts its timer after each purge,
/// so a caller waits, purges, and waits again.
pub fn wait_interval(interval: Duration, done: &AtomicBool) -> bool {
    let step = Duration::from_millis(10);
    let mut waited = Duration::ZERO;
    while waited < interval {
        if done.load(Ordering::Relaxed) {
            return false;
        }
        let nap = step.min(interval - waited);
        std::thread::sleep(nap);
        waited += nap;
    }
    !done.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edgex::testing::event_of;
    use crate::engine::{Engine, EngineConnection};
    use crate::store::redis::edgex3::Redis3Store;

    /// `n` events of `device`/`source` with origins `base`, `base + 1 µs`, ..., oldest first.
    fn add(store: &mut dyn EventStore, device: &str, source: &str, base: i64, n: i64) {
        for i in 0..n {
            let mut e = event_of(device, base + i * 1_000, &["r"]);
            e.source_name = source.to_string();
            store.add_event(&e).expect("adds");
        }
    }

    fn count(store: &mut dyn EventStore, device: &str, source: &str) -> u64 {
        let pair = SourceFilter::new(device, source);
        store
            .source_event_count(pair, crate::store::UNLIMITED)
            .expect("counts")
    }

    fn store() -> Redis3Store<EngineConnection> {
        Redis3Store::new(EngineConnection::new(Engine::new()))
    }

    fn policy(max_cap: i64, min_cap: i64, duration: Duration) -> EventRetention {
        EventRetention {
            max_cap,
            min_cap,
            duration,
        }
    }

    #[test]
    fn count_based_keeps_min_cap_once_max_cap_is_reached_and_only_of_that_pair() {
        let mut s = store();
        let now = now_ns();
        add(&mut s, "d", "a", now, 9);
        add(&mut s, "d", "b", now, 9);
        // 9 < MaxCap 10: nothing goes.
        let p = policy(10, 3, Duration::ZERO);
        assert_eq!(purge_source(&mut s, "d", "a", &p).expect("purges"), None);
        assert_eq!(count(&mut s, "d", "a"), 9);
        add(&mut s, "d", "a", now + 9_000, 1);
        // 10 >= 10: the event at offset 3 (origin now + 6 µs) and older go; 3 stay.
        let up_to = purge_source(&mut s, "d", "a", &p).expect("purges");
        assert_eq!(up_to, Some(now + 6_000));
        assert_eq!(count(&mut s, "d", "a"), 3);
        assert_eq!(count(&mut s, "d", "b"), 9, "the other source is untouched");
        // MaxCap -1: no threshold; MinCap -1: none kept.
        purge_source(&mut s, "d", "b", &policy(-1, -1, Duration::ZERO)).expect("purges");
        assert_eq!(count(&mut s, "d", "b"), 0);
        assert_eq!(count(&mut s, "d", "a"), 3);
    }

    #[test]
    fn time_based_keeps_the_unexpired_and_min_cap_of_the_expired() {
        let mut s = store();
        let hour = 3_600_000_000_000i64;
        let now = now_ns();
        // 6 events two hours old, 4 from now on.
        add(&mut s, "d", "a", now - 2 * hour, 6);
        add(&mut s, "d", "a", now, 4);
        let p = policy(-1, 2, Duration::from_secs(3600));
        purge_source(&mut s, "d", "a", &p).expect("purges");
        // The 4 unexpired and the 2 newest expired stay.
        assert_eq!(count(&mut s, "d", "a"), 6);
        // Again: 2 expired, none at offset 2, nothing goes.
        assert_eq!(purge_source(&mut s, "d", "a", &p).expect("purges"), None);
        // MinCap -1: every expired one goes.
        purge_source(&mut s, "d", "a", &policy(-1, -1, Duration::from_secs(3600))).expect("purges");
        assert_eq!(count(&mut s, "d", "a"), 4);
    }

    #[test]
    fn purge_sources_walks_every_pair() {
        let mut s = store();
        let now = now_ns();
        for (d, src) in [("d1", "a"), ("d1", "b"), ("d2", "a")] {
            add(&mut s, d, src, now, 5);
        }
        let pairs = s.device_sources().expect("lists");
        assert_eq!(pairs.len(), 3);
        purge_sources(&mut s, &pairs, &policy(5, 2, Duration::ZERO)).expect("purges");
        for (d, src) in [("d1", "a"), ("d1", "b"), ("d2", "a")] {
            assert_eq!(count(&mut s, d, src), 2, "{d}/{src}");
        }
    }

    #[test]
    fn durations_read_as_edgex_writes_them() {
        assert_eq!(
            duration_text(EventRetention::EDGEX_DEFAULTS.duration),
            "168h"
        );
        assert_eq!(duration_text(Duration::from_secs(600)), "10m");
        assert_eq!(duration_text(Duration::from_secs(90)), "90s");
        assert_eq!(duration_text(Duration::from_millis(200)), "200ms");
        assert_eq!(duration_text(Duration::ZERO), "0s");
        assert_eq!(duration_text(Duration::from_micros(1_500)), "1.5ms");
    }

    #[test]
    fn waiting_stops_when_done() {
        let done = AtomicBool::new(true);
        assert!(!wait_interval(Duration::from_secs(60), &done));
        done.store(false, Ordering::Relaxed);
        assert!(wait_interval(Duration::from_millis(1), &done));
    }
}
