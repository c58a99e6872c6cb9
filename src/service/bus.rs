//! core-data's message-bus subscriber: EdgeX 3.x/4.x's `SubscribeEvents` loop
//! (edgexfoundry/edgex-go `internal/core/data/controller/messaging/subscriber.go`, v3.1.0 and
//! v4.0.0), beside the REST API, into the same store.
//!
//! One subscription per bus to `edgex/events/device/#`, and on it one of three ways to handle
//! what arrives ([`SubscriberMode`]):
//! - `edgex` (the default), EdgeX's loop exactly: take one message, decode it (an envelope of
//!   either release, JSON or CBOR by its content type; NATS's `nats` format by its headers),
//!   validate it (the `AddEventRequest` rules, then the topic's last three levels against the
//!   event's names), persist it (unless `PersistData` is false), then take the next. A message
//!   that fails any step is counted, its first reason kept, and dropped; the loop goes on, as
//!   EdgeX's logs and goes on.
//! - `batch=N,wait=T`, the buffer edgex-go issue #5185 proposes: decoded and validated events
//!   wait until N are there or the first has waited T, then go to the store in one transaction
//!   ([`EventStore::add_events`]); their messages are acknowledged after the commit, so what
//!   was acknowledged is stored.
//! - `workers=N`: one thread takes messages off the bus into a bounded queue (and acknowledges
//!   each as it hands it over, as EdgeX's handler does when it passes a message to its
//!   channel) and N loops, each with a store of its own, handle them.
//!
//! The counts ([`Counts`]) are what a benchmark reads: received, persisted, rejected (did not
//! decode or validate) and failed (the store refused or broke), the commit latency and where
//! each event's time went ([`Stages`]).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::edgex::envelope::{self, check_topic};
use crate::edgex::{now_ns, Event};
use crate::store::backend::StoreOpener;
use crate::store::edgex::EventStore;
use crate::transport::bus::{self, BusUrl, Delivery, SubscribeOptions, Subscriber};

/// The topic filter core-data subscribes to (`BaseTopicPrefix` + `events/device/#`).
pub const EVENTS_FILTER: &str = "edgex/events/device/#";

/// How often a subscriber thread looks at the stop flag while no message comes.
const POLL: Duration = Duration::from_millis(50);

/// The most events one batch holds (`--subscriber batch=N`).
pub const MAX_BATCH: usize = 10_000;
/// The longest a batch may wait (`--subscriber batch=N,wait=T`).
pub const MAX_WAIT: Duration = Duration::from_secs(10);
/// The most loops `--subscriber workers=N` runs per bus.
pub const MAX_WORKERS: usize = 64;
/// Messages the `workers` receiver may hold for its loops: when they are all busy and this
/// many wait, the receiver waits too and the broker holds (or drops) the rest.
pub const WORKER_QUEUE: usize = 1024;

/// How the subscriber handles what arrives (`--subscriber`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SubscriberMode {
    /// EdgeX's loop: one message at a time, one store write each.
    #[default]
    EdgeX,
    /// Up to `size` events per store transaction, the first waiting at most `wait`.
    Batch {
        /// Events per transaction at most.
        size: usize,
        /// How long the first event of a batch waits for the rest.
        wait: Duration,
    },
    /// One receiver and this many loops.
    Workers(usize),
}

impl SubscriberMode {
    /// `edgex`, `batch=N[,wait=T]` (wait 100ms unless given) or `workers=N`; the error names
    /// the flag and the forms.
    pub fn parse(text: &str) -> Result<SubscriberMode, String> {
        let text = text.trim();
        let bad = |why: &str| {
            format!(
                "--subscriber {text:?}: {why}; give edgex, batch=N[,wait=T] (N 1-{MAX_BATCH}, \
                 T up to {}s, e.g. batch=100,wait=50ms) or workers=N (1-{MAX_WORKERS})",
                MAX_WAIT.as_secs()
            )
        };
        if text.eq_ignore_ascii_case("edgex") {
            return Ok(SubscriberMode::EdgeX);
        }
        let mut size = None;
        let mut wait = None;
        let mut workers = None;
        for part in text.split(',') {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(&format!("{part:?} is not KEY=VALUE")))?;
            let count = |max: usize| {
                value
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=max).contains(n))
                    .ok_or_else(|| bad(&format!("{key} must be 1-{max}")))
            };
            match key.trim() {
                "batch" => size = Some(count(MAX_BATCH)?),
                "workers" => workers = Some(count(MAX_WORKERS)?),
                "wait" => {
                    let t = crate::runner::parse_duration(value.trim())
                        .map_err(|_| bad(&format!("wait: {value:?} is not a duration")))?;
                    if t > MAX_WAIT {
                        return Err(bad("wait is too long"));
                    }
                    wait = Some(t);
                }
                other => return Err(bad(&format!("unknown key {other:?}"))),
            }
        }
        match (size, workers) {
            (Some(size), None) => Ok(SubscriberMode::Batch {
                size,
                wait: wait.unwrap_or(Duration::from_millis(100)),
            }),
            (None, Some(n)) if wait.is_none() => Ok(SubscriberMode::Workers(n)),
            (None, Some(_)) => Err(bad("wait goes with batch")),
            (Some(_), Some(_)) => Err(bad("batch and workers do not go together")),
            (None, None) => Err(bad("batch=N is missing")),
        }
    }

    /// The mode as `--subscriber` takes it.
    pub fn label(&self) -> String {
        match self {
            SubscriberMode::EdgeX => "edgex".into(),
            SubscriberMode::Batch { size, wait } => {
                format!("batch={size},wait={wait:?}")
            }
            SubscriberMode::Workers(n) => format!("workers={n}"),
        }
    }
}

/// Where the measured events' time went, ns, one value per event in each.
#[derive(Debug, Clone)]
pub struct Stages {
    /// From the event's origin (the intended publish time a fleet writes into it) to the
    /// subscriber taking the message off the bus: the publisher's lateness, the broker's hop
    /// and what waited in the subscriber's socket (or queue).
    pub reach: Histogram<u64>,
    /// Decoding the envelope and the event (JSON or CBOR).
    pub decode: Histogram<u64>,
    /// The request's rules and the topic's names.
    pub validate: Histogram<u64>,
    /// From validated to committed: the store write (with `batch`, the wait for the batch
    /// too). Persisted events only.
    pub store: Histogram<u64>,
}

impl Stages {
    fn new() -> Stages {
        let h = crate::runner::stats::latency_histogram;
        Stages {
            reach: h(),
            decode: h(),
            validate: h(),
            store: h(),
        }
    }
}

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
    /// Why a subscription ended before it was stopped (the broker cut it off, the connection
    /// broke).
    cut_off: Mutex<Option<String>>,
    /// Commit time minus the event's origin, ns, and the stages, for events whose origin is
    /// at or after `record_from`.
    measured: Mutex<Option<Measured>>,
    record_from: AtomicI64,
}

#[derive(Debug, Clone)]
struct Measured {
    commit: Histogram<u64>,
    stages: Stages,
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
            cut_off: Mutex::new(None),
            measured: Mutex::new(None),
            record_from: AtomicI64::new(i64::MAX),
        }
    }
}

/// `record`, not `saturating_record`: the histogram grows to fit (a saturating record would
/// clamp to its current top instead).
fn record(h: &mut Histogram<u64>, ns: u64) {
    let _ = h.record(ns.max(1));
}

impl Counts {
    /// Starts recording commit latencies and stages of events with an origin at or after
    /// `origin_ns` (ns since the epoch); none are recorded before this is called.
    pub fn record_commits_from(&self, origin_ns: i64) {
        *lock(&self.measured) = Some(Measured {
            commit: crate::runner::stats::latency_histogram(),
            stages: Stages::new(),
        });
        self.record_from.store(origin_ns, Ordering::Relaxed);
    }

    /// The commit latencies recorded so far.
    pub fn commit_latency(&self) -> Option<Histogram<u64>> {
        lock(&self.measured).as_ref().map(|m| m.commit.clone())
    }

    /// The stages recorded so far.
    pub fn stages(&self) -> Option<Stages> {
        lock(&self.measured).as_ref().map(|m| m.stages.clone())
    }

    /// Persisted, rejected and failed: every message the loops are done with.
    pub fn handled(&self) -> u64 {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        n(&self.persisted) + n(&self.rejected) + n(&self.failed)
    }

    /// Records one handled event's figures, if it is a measured one; `committed` when the
    /// store committed it (now).
    fn record(&self, timing: &Timing, origin: i64, committed: bool) {
        if origin < self.record_from.load(Ordering::Relaxed) {
            return;
        }
        let mut measured = lock(&self.measured);
        let Some(m) = measured.as_mut() else {
            return;
        };
        let since = |from: i64, to: i64| to.saturating_sub(from).max(0) as u64;
        record(&mut m.stages.reach, since(origin, timing.received_ns));
        record(&mut m.stages.decode, timing.decode_ns);
        record(&mut m.stages.validate, timing.validate_ns);
        if committed {
            record(
                &mut m.stages.store,
                timing.validated.elapsed().as_nanos() as u64,
            );
            record(&mut m.commit, since(origin, now_ns()));
        }
    }

    /// Why the first rejected message was rejected.
    pub fn first_rejection(&self) -> Option<String> {
        lock(&self.first_rejection).clone()
    }

    /// Why the first failed event failed.
    pub fn first_failure(&self) -> Option<String> {
        lock(&self.first_failure).clone()
    }

    /// Why a subscription ended on its own, if one did.
    pub fn cut_off(&self) -> Option<String> {
        lock(&self.cut_off).clone()
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
        let mut slot = lock(slot);
        if slot.is_none() {
            *slot = Some(why());
        }
    }

    fn rejected(&self, why: String) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
        Counts::note(&self.first_rejection, || why);
    }

    fn failed(&self, n: u64, why: String) {
        self.failed.fetch_add(n, Ordering::Relaxed);
        Counts::note(&self.first_failure, || why);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How the subscribers run.
#[derive(Debug, Clone)]
pub struct SubscriberConfig {
    /// `Writable.PersistData`: false receives, decodes and validates, and stores nothing.
    pub persist: bool,
    /// How each subscription connects (client id, MQTT QoS).
    pub options: SubscribeOptions,
    /// How what arrives is handled.
    pub mode: SubscriberMode,
}

/// A subscription and the name its messages and errors give it (a URL, `embedded`).
pub type Named = (String, Box<dyn Subscriber>);

/// Running subscribers; [`BusSubscribers::stop`] ends them.
#[derive(Debug)]
pub struct BusSubscribers {
    stop: Arc<AtomicBool>,
    threads: Vec<(String, JoinHandle<io::Result<()>>)>,
    counts: Arc<Counts>,
}

impl BusSubscribers {
    /// Subscribes on every bus (each before any thread starts, so an unreachable broker is an
    /// error here, naming it) and starts its loops, each with a store of its own.
    pub fn start(
        urls: &[BusUrl],
        stores: &StoreOpener,
        cfg: &SubscriberConfig,
    ) -> Result<BusSubscribers, String> {
        BusSubscribers::start_on(BusSubscribers::subscribe(urls, cfg)?, stores, cfg)
    }

    /// Subscribes to [`EVENTS_FILTER`] on every bus, each named by its URL; an unreachable
    /// broker is an error naming it.
    pub fn subscribe(urls: &[BusUrl], cfg: &SubscriberConfig) -> Result<Vec<Named>, String> {
        let mut subscriptions = Vec::with_capacity(urls.len());
        for url in urls {
            let sub = bus::subscribe(url, EVENTS_FILTER, &cfg.options).map_err(|e| {
                // Only where nothing answered: a broker that refused us (a CONNACK's return
                // code, a certificate, a hang-up) is running, and its reason says why.
                use std::io::ErrorKind as K;
                let hint = match e.kind() {
                    K::ConnectionRefused
                    | K::NotFound
                    | K::TimedOut
                    | K::WouldBlock
                    | K::AddrNotAvailable
                    | K::HostUnreachable
                    | K::NetworkUnreachable => "; is the broker running there?",
                    _ => "",
                };
                format!("--bus {url}: cannot subscribe: {e}{hint}")
            })?;
            subscriptions.push((url.to_string(), sub));
        }
        Ok(subscriptions)
    }

    /// Starts the loops on subscriptions already made, each named for messages.
    pub fn start_on(
        subscriptions: Vec<Named>,
        stores: &StoreOpener,
        cfg: &SubscriberConfig,
    ) -> Result<BusSubscribers, String> {
        let loops = match cfg.mode {
            SubscriberMode::Workers(n) => n,
            _ => 1,
        };
        let mut ready = Vec::with_capacity(subscriptions.len());
        for (name, sub) in subscriptions {
            let stores = (0..loops)
                .map(|_| stores())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("cannot open the store for --bus {name}: {e}"))?;
            ready.push((name, sub, stores));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let mut threads = Vec::with_capacity(ready.len());
        for (name, sub, stores) in ready {
            let (stop, counts, cfg) = (Arc::clone(&stop), Arc::clone(&counts), cfg.clone());
            let loop_name = name.clone();
            let thread = std::thread::Builder::new()
                .name("core-data-bus".into())
                .spawn(move || {
                    let ended = run(sub, stores, &cfg, &stop, &counts);
                    if let Err(e) = &ended {
                        Counts::note(&counts.cut_off, || format!("{loop_name}: {e}"));
                    }
                    ended
                })
                .map_err(|e| format!("cannot start the subscriber thread: {e}"))?;
            threads.push((name, thread));
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

/// One subscription's loops, until `stop`.
fn run(
    sub: Box<dyn Subscriber>,
    mut stores: Vec<Box<dyn EventStore>>,
    cfg: &SubscriberConfig,
    stop: &AtomicBool,
    counts: &Counts,
) -> io::Result<()> {
    match cfg.mode {
        SubscriberMode::EdgeX => {
            let store = stores.pop().expect("one store");
            run_edgex(sub, store, cfg.persist, stop, counts)
        }
        SubscriberMode::Batch { size, wait } => {
            let store = stores.pop().expect("one store");
            run_batch(sub, store, cfg.persist, (size, wait), stop, counts)
        }
        SubscriberMode::Workers(_) => run_workers(sub, stores, cfg.persist, stop, counts),
    }
}

/// When a message arrived and what decoding and validating it took.
struct Timing {
    /// Wall clock, ns since the epoch.
    received_ns: i64,
    decode_ns: u64,
    validate_ns: u64,
    /// When validation ended (the store's time runs from here).
    validated: Instant,
}

impl Timing {
    fn received() -> (Timing, Instant) {
        let timing = Timing {
            received_ns: now_ns(),
            decode_ns: 0,
            validate_ns: 0,
            validated: Instant::now(),
        };
        (timing, Instant::now())
    }
}

/// Decodes and validates one message: the event, or why it was rejected.
fn prepare(delivery: &Delivery, timing: &mut Timing, from: Instant) -> Result<Event, String> {
    let received = match &delivery.content_type {
        Some(ct) => envelope::decode_parts(
            &delivery.payload,
            Some(ct),
            delivery.correlation_id.as_deref(),
        ),
        None => envelope::decode(&delivery.payload),
    }
    .map_err(|e| e.0)?;
    let decoded = Instant::now();
    timing.decode_ns = decoded.duration_since(from).as_nanos() as u64;
    let event = received.request.into_event().map_err(|e| e.0)?;
    check_topic(&delivery.topic, &event).map_err(|e| e.0)?;
    timing.validated = Instant::now();
    timing.validate_ns = timing.validated.duration_since(decoded).as_nanos() as u64;
    Ok(event)
}

/// Handles one message as EdgeX does: decode, validate, persist (or not), count.
fn handle_one(
    delivery: &Delivery,
    (mut timing, from): (Timing, Instant),
    persist: bool,
    store: &mut dyn EventStore,
    counts: &Counts,
) {
    let event = match prepare(delivery, &mut timing, from) {
        Ok(event) => event,
        Err(why) => return counts.rejected(why),
    };
    if !persist {
        counts.record(&timing, event.origin, false);
        return;
    }
    match store.add_event(&event) {
        Ok(()) => {
            counts.record(&timing, event.origin, true);
            counts.persisted.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => counts.failed(1, format!("fail to persist the event: {e}")),
    }
}

/// EdgeX's loop on one subscription.
fn run_edgex(
    mut sub: Box<dyn Subscriber>,
    mut store: Box<dyn EventStore>,
    persist: bool,
    stop: &AtomicBool,
    counts: &Counts,
) -> io::Result<()> {
    while !stop.load(Ordering::Relaxed) {
        let Some(delivery) = sub.next(POLL)? else {
            continue;
        };
        let received = Timing::received();
        counts.received.fetch_add(1, Ordering::Relaxed);
        handle_one(&delivery, received, persist, store.as_mut(), counts);
        sub.done(&delivery)?;
    }
    Ok(())
}

/// A batch being filled: its events, their timings, the messages to acknowledge after the
/// commit, and when it must go.
struct Batch {
    events: Vec<Event>,
    timings: Vec<Timing>,
    acks: Vec<Delivery>,
    due: Option<Instant>,
}

/// The batching loop on one subscription (#5185): a transaction per `size` events or per
/// `wait`, whichever comes first; acknowledgements after the commit.
fn run_batch(
    mut sub: Box<dyn Subscriber>,
    mut store: Box<dyn EventStore>,
    persist: bool,
    (size, wait): (usize, Duration),
    stop: &AtomicBool,
    counts: &Counts,
) -> io::Result<()> {
    let mut batch = Batch {
        events: Vec::with_capacity(size),
        timings: Vec::with_capacity(size),
        acks: Vec::new(),
        due: None,
    };
    while !stop.load(Ordering::Relaxed) {
        let timeout = batch
            .due
            .map_or(POLL, |due| due.saturating_duration_since(Instant::now()))
            .min(POLL);
        if let Some(delivery) = sub.next(timeout)? {
            let (mut timing, from) = Timing::received();
            counts.received.fetch_add(1, Ordering::Relaxed);
            match prepare(&delivery, &mut timing, from) {
                Ok(event) => {
                    batch.due.get_or_insert_with(|| Instant::now() + wait);
                    batch.events.push(event);
                    batch.timings.push(timing);
                    batch.acks.push(delivery);
                }
                Err(why) => {
                    counts.rejected(why);
                    sub.done(&delivery)?;
                }
            }
        }
        let due = batch.due.is_some_and(|d| Instant::now() >= d);
        if batch.events.len() >= size || due {
            flush(&mut batch, sub.as_mut(), store.as_mut(), persist, counts)?;
        }
    }
    // What was taken off the bus is stored before the loop ends.
    flush(&mut batch, sub.as_mut(), store.as_mut(), persist, counts)
}

/// Writes the batch in one transaction, counts it, acknowledges its messages, empties it.
fn flush(
    batch: &mut Batch,
    sub: &mut dyn Subscriber,
    store: &mut dyn EventStore,
    persist: bool,
    counts: &Counts,
) -> io::Result<()> {
    batch.due = None;
    if batch.events.is_empty() {
        return Ok(());
    }
    let stored = match persist {
        true => store.add_events(&batch.events),
        false => Ok(()),
    };
    let n = batch.events.len() as u64;
    match stored {
        Ok(()) => {
            for (event, timing) in batch.events.iter().zip(&batch.timings) {
                counts.record(timing, event.origin, persist);
            }
            if persist {
                counts.persisted.fetch_add(n, Ordering::Relaxed);
            }
        }
        Err(e) => counts.failed(n, format!("fail to persist a batch of {n} events: {e}")),
    }
    batch.events.clear();
    batch.timings.clear();
    for delivery in batch.acks.drain(..) {
        sub.done(&delivery)?;
    }
    Ok(())
}

/// One receiver feeding `stores.len()` loops through a bounded queue.
fn run_workers(
    mut sub: Box<dyn Subscriber>,
    stores: Vec<Box<dyn EventStore>>,
    persist: bool,
    stop: &AtomicBool,
    counts: &Counts,
) -> io::Result<()> {
    let (queue, taken): (SyncSender<Delivery>, Receiver<Delivery>) = sync_channel(WORKER_QUEUE);
    let taken = Mutex::new(taken);
    std::thread::scope(|scope| {
        for mut store in stores {
            let taken = &taken;
            scope.spawn(move || loop {
                let next = lock(taken).recv_timeout(POLL);
                match next {
                    // The wait in the queue counts as reaching the subscriber: the loop's
                    // own stages start when it takes the message.
                    Ok(delivery) => handle_one(
                        &delivery,
                        Timing::received(),
                        persist,
                        store.as_mut(),
                        counts,
                    ),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            });
        }
        let received = (|| {
            while !stop.load(Ordering::Relaxed) {
                let Some(delivery) = sub.next(POLL)? else {
                    continue;
                };
                counts.received.fetch_add(1, Ordering::Relaxed);
                // Acknowledged as it is handed over (EdgeX's handler returns once the message
                // is in its channel).
                sub.done(&delivery)?;
                let mut item = delivery;
                // A full queue waits here (the broker holds the rest), looking at `stop`.
                loop {
                    match queue.try_send(item) {
                        Ok(()) => break,
                        Err(TrySendError::Full(back)) if !stop.load(Ordering::Relaxed) => {
                            item = back;
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                            return Ok(());
                        }
                    }
                }
            }
            Ok(())
        })();
        // The loops finish what is queued, then see the queue closed.
        drop(queue);
        received
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriber_modes_parse_and_bad_ones_name_the_flag_and_the_forms() {
        assert_eq!(SubscriberMode::parse("edgex"), Ok(SubscriberMode::EdgeX));
        assert_eq!(
            SubscriberMode::parse("batch=100,wait=50ms"),
            Ok(SubscriberMode::Batch {
                size: 100,
                wait: Duration::from_millis(50)
            })
        );
        assert_eq!(
            SubscriberMode::parse("batch=10"),
            Ok(SubscriberMode::Batch {
                size: 10,
                wait: Duration::from_millis(100)
            })
        );
        assert_eq!(
            SubscriberMode::parse("workers=4"),
            Ok(SubscriberMode::Workers(4))
        );
        assert_eq!(
            SubscriberMode::parse("batch=100,wait=50ms")
                .unwrap()
                .label(),
            "batch=100,wait=50ms"
        );
        for (bad, why) in [
            ("fast", "is not KEY=VALUE"),
            ("batch=0", "batch must be 1-10000"),
            ("batch=10001", "batch must be 1-10000"),
            ("workers=65", "workers must be 1-64"),
            ("batch=5,wait=11s", "wait is too long"),
            ("batch=5,wait=soon", "wait:"),
            ("workers=2,wait=1s", "wait goes with batch"),
            ("batch=2,workers=2", "do not go together"),
            ("wait=1s", "batch=N is missing"),
            ("size=3", "unknown key"),
        ] {
            let e = SubscriberMode::parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("--subscriber {bad:?}: ")), "{e}");
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.contains("give edgex, batch=N"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
