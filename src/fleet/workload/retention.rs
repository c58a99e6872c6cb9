//! Retention running alongside the writers, as EdgeX's core data runs it, so the cost of
//! purging shows in the writers' and readers' latency. What one purge does is
//! [`crate::store::edgex::retention`]'s (which names the edgex-go code it follows); here is
//! the fleet's choice of purges and the purger that runs them every `--purge-interval`.
//!
//! `--retention edgex3` (the default, as before there was a choice):
//! - **age** (`--retain D`): delete the events older than D (`DELETE /event/age/{D}`, as
//!   EdgeX 3.x's support-scheduler `ScrubAged` job sends it);
//! - **high/low watermark** (`--max-cap N --min-cap M`, readings, EdgeX 3.1's `Retention`):
//!   when the store holds at least N readings, delete every event at or before the origin of
//!   the reading at offset M, newest first: at most M readings are left.
//!
//! `--retention edgex4`: EdgeX 4.0's retention per device and source ([`PerSource`]), with
//! `--max-cap` as `DefaultMaxCap` and `--min-cap` as `DefaultMinCap` (events of one device
//! and source), and `--retain` as `DefaultDuration`; EdgeX 4.0's defaults where not given
//! (-1, 1, 168h). EdgeX walks each device's AutoEvents; the fleet's devices × the sources it
//! writes stand for them, each with the defaults (as an AutoEvent without a retention of its
//! own takes them).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::FleetSpec;
use crate::runner::stats::latency_histogram;
pub use crate::store::edgex::retention::purge_to_watermark;
use crate::store::edgex::retention::{purge_sources, wait_interval, EventRetention};
use crate::store::edgex::{DeviceSource, Doomed, EventStore};
use crate::store::StoreResult;

/// What retention does and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// EdgeX 3.x: delete events older than this.
    pub retain: Option<Duration>,
    /// EdgeX 3.1: the high/low watermark, in readings: `(max_cap, min_cap)`.
    pub caps: Option<(u64, u64)>,
    /// EdgeX 4.0: the retention of each device and source (`--retention edgex4`, which
    /// leaves the two above unset).
    pub per_source: Option<PerSource>,
    /// How often a purge runs.
    pub interval: Duration,
}

impl Retention {
    /// Whether any purge is configured.
    pub fn enabled(&self) -> bool {
        self.retain.is_some() || self.caps.is_some() || self.per_source.is_some()
    }
}

/// EdgeX 4.0's retention over the fleet's (device, source) pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerSource {
    /// Core data's `Retention.Default*`, which every pair takes.
    pub policy: EventRetention,
    /// The pairs a purge walks, in EdgeX the devices' AutoEvents.
    pub pairs: Vec<DeviceSource>,
}

impl PerSource {
    /// `policy` over every device of `spec` and each source it writes: one per device
    /// (every event of the fleet has the same `sourceName`).
    pub fn for_fleet(spec: &FleetSpec, policy: EventRetention) -> PerSource {
        let source = spec.blank_event().source_name;
        PerSource {
            policy,
            pairs: (0..spec.devices)
                .map(|d| DeviceSource::new(spec.device(d), source.clone()))
                .collect(),
        }
    }
}

/// What the purger measured.
#[derive(Debug, Clone)]
pub struct PurgeReport {
    /// Purges run (each: the age delete and/or the watermark check and delete).
    pub purges: u64,
    /// How long each took, ns.
    pub latency: Histogram<u64>,
    /// Purges that failed, and the first error.
    pub failed: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

/// One purge: EdgeX 4.0's over every pair, or the age delete, then the watermark.
pub fn purge(store: &mut dyn EventStore, retention: &Retention) -> StoreResult<()> {
    if let Some(per_source) = &retention.per_source {
        purge_sources(store, &per_source.pairs, &per_source.policy)?;
    }
    if let Some(retain) = retention.retain {
        let age_ns = retain.as_nanos().min(i64::MAX as u128) as i64;
        store.delete_events(Doomed::OlderThan { age_ns })?;
    }
    if let Some((max_cap, min_cap)) = retention.caps {
        purge_to_watermark(store, max_cap, min_cap)?;
    }
    Ok(())
}

/// Purges every `interval` until `done`, on its own store client; sleeps in short steps so it
/// stops promptly.
pub fn run_purger(
    store: &mut dyn EventStore,
    retention: &Retention,
    done: &AtomicBool,
) -> PurgeReport {
    let mut report = PurgeReport {
        purges: 0,
        latency: latency_histogram(),
        failed: 0,
        first_error: None,
    };
    while wait_interval(retention.interval, done) {
        let start = std::time::Instant::now();
        match purge(store, retention) {
            Ok(()) => {
                report.purges += 1;
                let _ = report
                    .latency
                    .record(crate::runner::duration_ns(start.elapsed()));
            }
            Err(e) => {
                report.failed += 1;
                if report.first_error.is_none() {
                    report.first_error = Some(e.to_string());
                }
            }
        }
    }
    report
}
