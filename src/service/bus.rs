//! core-data's message-bus subscriber: EdgeX 3.x/4.x's `SubscribeEvents` loop
//! (edgexfoundry/edgex-go `internal/core/data/controller/messaging/subscriber.go`, v3.1.0 and
//! v4.0.0), beside the REST API, into the same store.
//!
//! One subscription per bus to `edgex/events/device/#`, one thread each, and on it EdgeX's loop
//! exactly: take one message, decode it (an envelope of either release, JSON or CBOR by its
//! content type; NATS's `nats` format by its headers), validate it (the `AddEventRequest`
//! rules, then the topic's last three levels against the event's names), persist it (unless
//! `PersistData` is false), then take the next. A message that fails any step is counted,
//! its first reason kept, and dropped; the loop goes on, as EdgeX's logs and goes on.
//!
//! The counts ([`Counts`]) are what a benchmark reads: received, persisted, rejected (did not
//! decode or validate) and failed (the store refused or broke).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::edgex::envelope::{self, check_topic};
use crate::store::backend::StoreOpener;
use crate::transport::bus::{self, BusUrl, Delivery, SubscribeOptions, Subscriber};

/// The topic filter core-data subscribes to (`BaseTopicPrefix` + `events/device/#`).
pub const EVENTS_FILTER: &str = "edgex/events/device/#";

/// How often a subscriber thread looks at the stop flag while no message comes.
const POLL: Duration = Duration::from_millis(50);

/// What the subscribers did, all buses together.
#[derive(Debug)]
pub struct Counts {
    /// Messages taken off the bus.
    pub received: AtomicU64,
    /// Events the store committed.
    pub persisted: AtomicU64,
    /// Messages that did not decode or validate.
    pub rejected: AtomicU64,
    /// Valid events the store refused or failed on.
    pub failed: AtomicU64,
    first_rejection: Mutex<Option<String>>,
    first_failure: Mutex<Option<String>>,
    /// Commit time minus the event's origin, ns, for events whose origin is at or after
    /// [`Counts::record_from`]: from the intended publish time a fleet writes into each
    /// origin to the store's commit.
    commit: Mutex<Option<hdrhistogram::Histogram<u64>>>,
    record_from: std::sync::atomic::AtomicI64,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            received: AtomicU64::new(0),
            persisted: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            first_rejection: Mutex::new(None),
            first_failure: Mutex::new(None),
            commit: Mutex::new(None),
            record_from: std::sync::atomic::AtomicI64::new(i64::MAX),
        }
    }
}

impl Counts {
    /// Starts recording commit latencies of events with an origin at or after `origin_ns`
    /// (ns since the epoch); none are recorded before this is called.
    pub fn record_commits_from(&self, origin_ns: i64) {
        *self.commit.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(crate::runner::stats::latency_histogram());
        self.record_from.store(origin_ns, Ordering::Relaxed);
    }

    /// The commit latencies recorded so far.
    pub fn commit_latency(&self) -> Option<hdrhistogram::Histogram<u64>> {
        self.commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Persisted, rejected and failed: every message the loops are done with.
    pub fn handled(&self) -> u64 {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        n(&self.persisted) + n(&self.rejected) + n(&self.failed)
    }

    fn record_commit(&self, origin: i64) {
        if origin < self.record_from.load(Ordering::Relaxed) {
            return;
        }
        let latency = crate::edgex::now_ns().saturating_sub(origin).max(0) as u64;
        if let Some(h) = self
            .commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            // `record`, not `saturating_record`: the histogram grows to fit (a saturating
            // record would clamp to its current top instead).
            let _ = h.record(latency.max(1));
        }
    }

    /// Why the first rejected message was rejected.
    pub fn first_rejection(&self) -> Option<String> {
        self.first_rejection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the first failed event failed.
    pub fn first_failure(&self) -> Option<String> {
        self.first_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// One line: `received N, persisted N, rejected N (first: …), failed N (first: …)`.
    pub fn summary(&self) -> String {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let first = |f: Option<String>| f.map(|r| format!(" (first: {r})")).unwrap_or_default();
        format!(
            "received {}, persisted {}, rejected {}{}, failed {}{}",
            n(&self.received),
            n(&self.persisted),
            n(&self.rejected),
            first(self.first_rejection()),
            n(&self.failed),
            first(self.first_failure()),
        )
    }

    fn note(slot: &Mutex<Option<String>>, why: impl FnOnce() -> String) {
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(why());
        }
    }
}

/// How the subscribers run.
#[derive(Debug, Clone)]
pub struct SubscriberConfig {
    /// `Writable.PersistData`: false receives, decodes and validates, and stores nothing.
    pub persist: bool,
    /// How each subscription connects (client id, MQTT QoS).
    pub options: SubscribeOptions,
}

/// Running subscribers; [`BusSubscribers::stop`] ends them.
#[derive(Debug)]
pub struct BusSubscribers {
    stop: Arc<AtomicBool>,
    threads: Vec<(BusUrl, JoinHandle<io::Result<()>>)>,
    counts: Arc<Counts>,
}

impl BusSubscribers {
    /// Subscribes on every bus (each before any thread starts, so an unreachable broker is an
    /// error here, naming it) and starts one loop per bus, each with a store of its own.
    pub fn start(
        urls: &[BusUrl],
        stores: &StoreOpener,
        cfg: &SubscriberConfig,
    ) -> Result<BusSubscribers, String> {
        let mut ready = Vec::with_capacity(urls.len());
        for url in urls {
            let sub = bus::subscribe(url, EVENTS_FILTER, &cfg.options).map_err(|e| {
                format!("--bus {url}: cannot subscribe: {e}; is the broker running there?")
            })?;
            let store =
                stores().map_err(|e| format!("cannot open the store for --bus {url}: {e}"))?;
            ready.push((url.clone(), sub, store));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let mut threads = Vec::with_capacity(ready.len());
        for (url, sub, store) in ready {
            let (stop, counts, persist) = (Arc::clone(&stop), Arc::clone(&counts), cfg.persist);
            let thread = std::thread::Builder::new()
                .name("core-data-bus".into())
                .spawn(move || run(sub, store, persist, &stop, &counts))
                .map_err(|e| format!("cannot start the subscriber thread: {e}"))?;
            threads.push((url, thread));
        }
        Ok(BusSubscribers {
            stop,
            threads,
            counts,
        })
    }

    /// The counts so far.
    pub fn counts(&self) -> &Arc<Counts> {
        &self.counts
    }

    /// Stops every loop and waits for it; the error names each bus whose connection broke.
    pub fn stop(self) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        let mut broken = Vec::new();
        for (url, thread) in self.threads {
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => broken.push(format!("{url}: {e}")),
                Err(_) => broken.push(format!("{url}: the subscriber panicked")),
            }
        }
        if broken.is_empty() {
            Ok(())
        } else {
            Err(format!("the bus subscription broke: {}", broken.join("; ")))
        }
    }
}

/// EdgeX's loop on one subscription, until `stop`.
fn run(
    mut sub: Box<dyn Subscriber>,
    mut store: Box<dyn crate::store::edgex::EventStore>,
    persist: bool,
    stop: &AtomicBool,
    counts: &Counts,
) -> io::Result<()> {
    while !stop.load(Ordering::Relaxed) {
        let Some(delivery) = sub.next(POLL)? else {
            continue;
        };
        counts.received.fetch_add(1, Ordering::Relaxed);
        match handle(&delivery, persist, store.as_mut()) {
            Ok(Some(origin)) => {
                counts.record_commit(origin);
                counts.persisted.fetch_add(1, Ordering::Relaxed);
            }
            Ok(None) => {}
            Err(Handled::Rejected(why)) => {
                counts.rejected.fetch_add(1, Ordering::Relaxed);
                Counts::note(&counts.first_rejection, || why);
            }
            Err(Handled::Failed(why)) => {
                counts.failed.fetch_add(1, Ordering::Relaxed);
                Counts::note(&counts.first_failure, || why);
            }
        }
        sub.done(&delivery)?;
    }
    Ok(())
}

/// Why a message was dropped.
enum Handled {
    Rejected(String),
    Failed(String),
}

/// Decodes, validates and (with `persist`) stores one message; `Ok(Some(origin))` when
/// stored.
fn handle(
    delivery: &Delivery,
    persist: bool,
    store: &mut dyn crate::store::edgex::EventStore,
) -> Result<Option<i64>, Handled> {
    let received = match &delivery.content_type {
        Some(ct) => envelope::decode_parts(
            &delivery.payload,
            Some(ct),
            delivery.correlation_id.as_deref(),
        ),
        None => envelope::decode(&delivery.payload),
    }
    .map_err(|e| Handled::Rejected(e.0))?;
    let event = received
        .request
        .into_event()
        .map_err(|e| Handled::Rejected(e.0))?;
    check_topic(&delivery.topic, &event).map_err(|e| Handled::Rejected(e.0))?;
    if !persist {
        return Ok(None);
    }
    store
        .add_event(&event)
        .map_err(|e| Handled::Failed(format!("fail to persist the event: {e}")))?;
    Ok(Some(event.origin))
}
