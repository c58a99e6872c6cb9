//! Core data's own retention, as EdgeX's service runs it beside its routes and its bus
//! subscriber: a thread with a store connection of its own that purges every interval (the
//! interval counted from the end of the last purge, as EdgeX restarts its timer) until the
//! service stops. What one purge does is [`crate::store::edgex::retention`]'s, which names
//! the edgex-go code it follows.
//!
//! - [`RetentionPolicy::Edgex4`] (EdgeX 4.0, on by default there, every 10m): every
//!   (device, source) pair the store holds ([`EventStore::device_sources`]) with core data's
//!   `Retention.Default*`, as EdgeX 4.0.2's `purgeEventsByDeviceInfo` walks the pairs of its
//!   device_info cache that no AutoEvent covers (this service knows no devices, so no
//!   AutoEvent covers any). The pairs are asked of the store at each purge: on EdgeX 4.0's
//!   schema (PostgreSQL, SQLite) that reads the event-level `device_info` rows, a probe of
//!   the event index each, so it grows with the pairs, not the events; on EdgeX 3.1's Redis
//!   layout and the MongoDB one, which index no source, it reads every event's record.
//! - [`RetentionPolicy::Edgex3`] (EdgeX 3.1, off by default there): the reading watermark
//!   over the whole store.
//!
//! A purge that fails is counted, and the next interval purges again (EdgeX logs it); the
//! counts and the first error are what [`Purger::stop`] returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::store::backend::StoreOpener;
use crate::store::edgex::retention::{
    purge_sources, purge_to_watermark, wait_interval, EventRetention,
};
use crate::store::edgex::EventStore;
use crate::store::StoreResult;

/// Which EdgeX's retention the service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetentionPolicy {
    /// EdgeX 3.1's `Retention.MaxCap` / `MinCap`, readings of the whole store.
    Edgex3 {
        /// Purge at this many readings or more.
        max_cap: u64,
        /// Down to this many.
        min_cap: u64,
    },
    /// EdgeX 4.0's `Retention.Default*`, for every (device, source) pair.
    Edgex4(EventRetention),
}

/// EdgeX 3.1's default `Retention.MaxCap`, readings (`cmd/core-data/res/configuration.yaml`
/// at v3.1.1).
pub const EDGEX3_MAX_CAP: u64 = 10_000;
/// EdgeX 3.1's default `Retention.MinCap`, readings.
pub const EDGEX3_MIN_CAP: u64 = 8_000;

impl RetentionPolicy {
    /// The policy in one line, e.g. `edgex4 (max-cap 5, min-cap 3, duration 168h)`.
    pub fn describe(&self) -> String {
        match self {
            RetentionPolicy::Edgex3 { max_cap, min_cap } => {
                format!("edgex3 (max-cap {max_cap} readings, min-cap {min_cap} readings)")
            }
            RetentionPolicy::Edgex4(p) => format!("edgex4 ({})", p.describe()),
        }
    }
}

/// Core data's retention: what and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionConfig {
    /// `Retention.Interval`, above zero (zero is retention off, and no config).
    pub interval: Duration,
    /// What each purge does.
    pub policy: RetentionPolicy,
}

/// What the purger did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeCounts {
    /// Purges that ran to the end.
    pub purges: u64,
    /// Purges that failed.
    pub failed: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

impl PurgeCounts {
    /// One line, e.g. `12 purges, 0 failed`.
    pub fn summary(&self) -> String {
        let first = self
            .first_error
            .as_ref()
            .map_or(String::new(), |e| format!(" (first: {e})"));
        format!("{} purges, {} failed{first}", self.purges, self.failed)
    }
}

/// One purge of `policy`.
pub fn purge(store: &mut dyn EventStore, policy: &RetentionPolicy) -> StoreResult<()> {
    match policy {
        RetentionPolicy::Edgex3 { max_cap, min_cap } => {
            purge_to_watermark(store, *max_cap, *min_cap).map(drop)
        }
        RetentionPolicy::Edgex4(defaults) => {
            let pairs = store.device_sources()?;
            purge_sources(store, &pairs, defaults)
        }
    }
}

/// The running purger; stopped by [`Purger::stop`] (or, without its counts, on drop).
#[derive(Debug)]
pub struct Purger {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<PurgeCounts>>,
}

impl Purger {
    /// Opens the purger's store now, so a store that cannot be reached fails before the
    /// service listens, and starts purging every `cfg.interval`.
    pub fn start(stores: &StoreOpener, cfg: RetentionConfig) -> StoreResult<Purger> {
        let mut store = stores()?;
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("edgebench-retention".to_string())
            .spawn(move || {
                let mut counts = PurgeCounts::default();
                while wait_interval(cfg.interval, &stop) {
                    match purge(store.as_mut(), &cfg.policy) {
                        Ok(()) => counts.purges += 1,
                        Err(e) => {
                            counts.failed += 1;
                            counts.first_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
                counts
            })
            .map_err(|e| crate::store::StoreError::Backend {
                backend: "retention",
                message: format!("cannot start the retention thread: {e}"),
            })?;
        Ok(Purger {
            done,
            thread: Some(thread),
        })
    }

    /// Stops purging (a purge under way finishes first) and returns what was done.
    pub fn stop(mut self) -> PurgeCounts {
        self.done.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(counts)) => counts,
            Some(Err(_)) => PurgeCounts {
                first_error: Some("the retention thread panicked".to_string()),
                ..PurgeCounts::default()
            },
            None => PurgeCounts::default(),
        }
    }
}

impl Drop for Purger {
    /// Asks the thread to stop; it ends at its next check without being waited for.
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edgex::testing::event_of;
    use crate::engine::{Engine, EngineConnection};
    use crate::store::edgex::{Filter, SourceFilter, UNLIMITED};
    use crate::store::redis::edgex3::Redis3Store;

    fn opener(engine: &Engine) -> StoreOpener {
        let engine = engine.clone();
        Arc::new(move || {
            Ok(Box::new(Redis3Store::new(EngineConnection::new(engine.clone()))) as Box<_>)
        })
    }

    /// The thread purges every pair the store holds until stopped, and says how often.
    #[test]
    fn the_purger_keeps_min_cap_of_every_stored_pair_until_stopped() {
        let engine = Engine::new();
        let stores = opener(&engine);
        let mut store = stores().expect("opens");
        let now = crate::edgex::now_ns();
        for (i, (device, source)) in [("a", "x"), ("a", "y"), ("b", "x")]
            .iter()
            .cycle()
            .take(18)
            .enumerate()
        {
            let mut e = event_of(device, now + i as i64 * 1_000, &["r"]);
            e.source_name = source.to_string();
            store.add_event(&e).expect("adds");
        }
        let policy = RetentionPolicy::Edgex4(EventRetention {
            max_cap: 5,
            min_cap: 2,
            duration: Duration::ZERO,
        });
        let purger = Purger::start(
            &stores,
            RetentionConfig {
                interval: Duration::from_millis(20),
                policy,
            },
        )
        .expect("starts");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while store.event_count(Filter::all()).expect("counts") > 6 {
            assert!(std::time::Instant::now() < deadline, "never purged");
            std::thread::sleep(Duration::from_millis(10));
        }
        let counts = purger.stop();
        assert!(counts.purges >= 1, "{counts:?}");
        assert_eq!((counts.failed, counts.first_error), (0, None));
        for (device, source) in [("a", "x"), ("a", "y"), ("b", "x")] {
            let pair = SourceFilter::new(device, source);
            assert_eq!(
                store.source_event_count(pair, UNLIMITED).expect("counts"),
                2
            );
        }
    }

    #[test]
    fn policies_describe_themselves_with_their_units() {
        assert_eq!(
            RetentionPolicy::Edgex3 {
                max_cap: EDGEX3_MAX_CAP,
                min_cap: EDGEX3_MIN_CAP
            }
            .describe(),
            "edgex3 (max-cap 10000 readings, min-cap 8000 readings)"
        );
        assert_eq!(
            RetentionPolicy::Edgex4(EventRetention::EDGEX_DEFAULTS).describe(),
            "edgex4 (max-cap -1, min-cap 1, duration 168h)"
        );
    }
}
