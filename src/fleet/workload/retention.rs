//! Retention running alongside the writers, as EdgeX's core data runs it
//! (edgexfoundry/edgex-go: `internal/core/data/application/eventpurge.go` at v4.0.2, `reading.go` at v3.1.1), so the cost of purging shows
//! in the writers' and readers' latency:
//!
//! - **age** (`--retain D`): every interval, delete the events older than D
//!   (`DELETE /event/age/{D}`);
//! - **high/low watermark** (`--max-cap N --min-cap M`, readings, EdgeX 3.x's `Retention`):
//!   every interval, when the store holds at least N readings, find the reading at offset M
//!   (newest first) and delete every event with an origin at or before its origin. What is left
//!   is exactly the readings newer than that one's event: at most M.
//!
//! Deletes go through [`EventStore::delete_events`] with an age, as EdgeX's do; the watermark's
//! age is computed so that the cutoff falls just after the found origin (`now − origin − 1 ns`),
//! and the store takes its own "now" a few µs later, so events younger than the cutoff by less
//! than that also go. Fleet events are at least 1 µs apart per writer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::edgex;
use crate::runner::stats::latency_histogram;
use crate::store::edgex::{Doomed, EventStore, Filter, Page};
use crate::store::StoreResult;

/// What retention does and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Delete events older than this.
    pub retain: Option<Duration>,
    /// The high/low watermark, in readings: `(max_cap, min_cap)`.
    pub caps: Option<(u64, u64)>,
    /// How often a purge runs.
    pub interval: Duration,
}

impl Retention {
    /// Whether any purge is configured.
    pub fn enabled(&self) -> bool {
        self.retain.is_some() || self.caps.is_some()
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

/// One purge: the age delete, then the watermark.
pub fn purge(store: &mut dyn EventStore, retention: &Retention) -> StoreResult<()> {
    if let Some(retain) = retention.retain {
        let age_ns = retain.as_nanos().min(i64::MAX as u128) as i64;
        store.delete_events(Doomed::OlderThan { age_ns })?;
    }
    if let Some((max_cap, min_cap)) = retention.caps {
        purge_to_watermark(store, max_cap, min_cap)?;
    }
    Ok(())
}

/// EdgeX 3.x's watermark: at `max_cap` readings or more, delete every event at or before the
/// origin of the reading at offset `min_cap` (newest first). Returns that origin when it
/// deleted.
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
    let age_ns = edgex::now_ns()
        .saturating_sub(reading.origin)
        .saturating_sub(1)
        .max(0);
    store.delete_events(Doomed::OlderThan { age_ns })?;
    Ok(Some(reading.origin))
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
    let step = Duration::from_millis(10);
    loop {
        let mut waited = Duration::ZERO;
        while waited < retention.interval {
            if done.load(Ordering::Relaxed) {
                return report;
            }
            std::thread::sleep(step.min(retention.interval - waited));
            waited += step;
        }
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
}
