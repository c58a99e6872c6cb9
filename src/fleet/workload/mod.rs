//! The fleet workload: a fleet of EdgeX devices posting events at a fixed total rate, open loop,
//! against any EdgeX store ([`EventStore`]: a store in its EdgeX layout, or a core-data service
//! over HTTP), answering "does my store keep up with my devices?".
//!
//! - [`FleetSpec`]: the devices, their rate, what each event carries, how long to run.
//! - [`schedule`]: the open-loop writer (intended send times, coordinated-omission-corrected
//!   and uncorrected latency, late and unsent events).
//! - [`run`]: scrubs the store, runs the writers (each its own store client, splitting one
//!   schedule), then verifies that every event written is in the store.
//!
//! Events: event `j` comes from device `j % devices` (`device-0000` ...), profile
//! [`FleetSpec::profile`], source `fleet`, origin = the wall clock when it is built (ns, at
//! least 1 µs after the writer's previous one; with a [`Delivery`], its intended send time), with `readings_per_event` readings named after
//! `resources` (cycled), all of `value_type`.

pub mod find_max;
pub mod retention;
pub mod schedule;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

pub use retention::{PurgeReport, Retention};
pub use schedule::{Schedule, WriterReport};

use crate::edgex::{self, Event, Reading, ReadingValue, ValueKind};
use crate::runner::duration_ns;
use crate::store::edgex::{EventStore, Filter, Page};
use crate::store::{StoreError, StoreResult};

/// A fleet run as it goes, once a second ([`run`]'s `on_second`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// Since the start (warmup included).
    pub elapsed: Duration,
    /// The whole run (warmup included).
    pub total: Duration,
    /// Events due so far.
    pub due: u64,
    /// Events answered as written so far.
    pub sent: u64,
    /// Writes refused so far.
    pub failed: u64,
    /// Reads answered so far.
    pub reads: u64,
}

/// Why a fleet run could not run.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The spec is out of bounds (the message names the setting and the fix).
    #[error("{0}")]
    Spec(String),
    /// The store failed to open, scrub or count.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The most devices a fleet may have (each is a name; the bound keeps a typo from asking for
/// billions of them).
pub const MAX_DEVICES: u64 = 1_000_000;
/// The most readings one event may carry.
pub const MAX_READINGS_PER_EVENT: u64 = 1_000;
/// The largest `Binary` payload, bytes (EdgeX's default MaxEventSize is 25,000 KB).
pub const MAX_VALUE_SIZE: u64 = 16 * 1024 * 1024;
/// The most writer threads.
pub const MAX_WRITERS: u64 = 1_024;

/// What a fleet is and does.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSpec {
    /// How many devices post.
    pub devices: u64,
    /// Events per second, all devices together.
    pub events_per_second: f64,
    /// Readings in each event.
    pub readings_per_event: u64,
    /// EdgeX value type of every reading (`Int64`, `Float64`, `Binary`, `Object`, ...).
    pub value_type: String,
    /// Bytes of each `Binary` value.
    pub value_size: u64,
    /// Media type of `Binary` values.
    pub media_type: String,
    /// The devices' profile name.
    pub profile: String,
    /// Resource names of the readings, cycled.
    pub resources: Vec<String>,
    /// Writer threads (each its own store client); they split the schedule.
    pub writers: u64,
    /// The whole run, warmup included.
    pub duration: Duration,
    /// Events due in this first part are sent but not measured.
    pub warmup: Duration,
    /// A send that starts later than this after its intended time is late.
    pub late_after: Duration,
    /// The p99 write latency (corrected) a target must stay under to have kept up.
    pub slo: Option<Duration>,
    /// Reader clients running [`READ_MIX`] alongside the writers, each its own store client.
    pub readers: u64,
    /// Reads per second of each reader (open loop); `None`: each reader reads again as soon
    /// as it has its answer (closed loop).
    pub read_rate: Option<f64>,
    /// Purging alongside the writers, on a client of its own.
    pub retention: Retention,
    /// `--start-at`: several load hosts start writing together; the store is scrubbed and
    /// every client connected before it. `None`: at once.
    pub start_at: Option<std::time::SystemTime>,
}

/// What readers ask, in turn: a dashboard's latest readings of one device, a rules engine's
/// readings of one resource over the last [`READ_WINDOW`], and an event count by device.
pub const READ_MIX: [&str; 3] = [
    "latest readings of a device",
    "readings by resource in a time window",
    "event count by device",
];
/// How many readings "latest readings of a device" asks for (EdgeX's default page).
pub const LATEST_READINGS: usize = 20;
/// The time window of "readings by resource", back from now.
pub const READ_WINDOW: Duration = Duration::from_secs(10);
/// The most readings a windowed read returns (a page as EdgeX's MaxResultCount bounds it).
pub const WINDOW_LIMIT: usize = 1_024;
/// The most reader threads.
pub const MAX_READERS: u64 = 1_024;
/// The longest run, warmup included (each client keeps a small histogram per second).
pub const MAX_RUN: Duration = Duration::from_secs(2 * 3600);
/// The most client-seconds (writers and readers × seconds of the run): each keeps a
/// per-second histogram of a few KB, so this bounds them to a few hundred MB.
pub const MAX_CLIENT_SECONDS: u64 = 50_000;

impl Default for FleetSpec {
    /// A small factory line: 100 devices, 1,000 events/s of 5 Int64 readings, 10 s after a
    /// 2 s warmup, one writer.
    fn default() -> Self {
        FleetSpec {
            devices: 100,
            events_per_second: 1_000.0,
            readings_per_event: 5,
            value_type: "Int64".to_string(),
            value_size: 1_024,
            media_type: "application/octet-stream".to_string(),
            profile: "fleet-profile".to_string(),
            resources: vec!["temperature".to_string(), "pressure".to_string()],
            writers: 1,
            duration: Duration::from_secs(12),
            warmup: Duration::from_secs(2),
            late_after: Duration::from_millis(1),
            slo: None,
            readers: 0,
            read_rate: None,
            retention: Retention {
                retain: None,
                caps: None,
                per_source: None,
                // EdgeX 3.1's default Retention.Interval.
                interval: Duration::from_secs(30),
            },
            start_at: None,
        }
    }
}

impl FleetSpec {
    /// The open-loop schedule.
    pub fn schedule(&self) -> Schedule {
        Schedule {
            rate: self.events_per_second,
            duration_ns: duration_ns(self.duration),
            warmup_ns: duration_ns(self.warmup),
            late_after_ns: duration_ns(self.late_after),
        }
    }

    /// Device `d`'s name.
    pub fn device(&self, d: u64) -> String {
        format!("device-{d:04}")
    }

    /// Event `j` of the fleet, with origin `origin` ns.
    pub fn event(&self, j: u64, origin: i64) -> Event {
        let mut event = self.blank_event();
        self.refill(&mut event, j, origin);
        event
    }

    /// An event with what every event of the fleet shares; [`FleetSpec::refill`] makes it
    /// event `j`.
    pub fn blank_event(&self) -> Event {
        let reading = Reading {
            id: String::new(),
            origin: 0,
            device_name: String::new(),
            resource_name: String::new(),
            profile_name: self.profile.clone(),
            value_type: self.value_type.clone(),
            units: String::new(),
            tags: None,
            value: ReadingValue::Simple(String::new()),
        };
        Event {
            id: String::new(),
            device_name: String::new(),
            profile_name: self.profile.clone(),
            source_name: "fleet".to_string(),
            origin: 0,
            readings: vec![reading; self.readings_per_event as usize],
            tags: None,
        }
    }

    /// Makes `event` (from [`FleetSpec::blank_event`]) event `j` with origin `origin` ns: new
    /// ids, its device, its values. The strings are rewritten in place, so a writer that
    /// refills one event allocates nothing per event for the simple value types: at 200,000
    /// events/s the generator's own cost is part of what it measures.
    pub fn refill(&self, event: &mut Event, j: u64, origin: i64) {
        use std::fmt::Write as _;
        set_uuid(&mut event.id);
        event.device_name.clear();
        let _ = write!(event.device_name, "device-{:04}", j % self.devices.max(1));
        event.origin = origin;
        for (k, r) in event.readings.iter_mut().enumerate() {
            let k = k as u64;
            set_uuid(&mut r.id);
            r.origin = origin;
            r.device_name.clone_from(&event.device_name);
            r.resource_name
                .clone_from(&self.resources[k as usize % self.resources.len()]);
            self.set_value(&mut r.value, j, k);
        }
    }

    /// Writes reading `k` of event `j`'s value into `value`, reusing its buffers.
    fn set_value(&self, value: &mut ReadingValue, j: u64, k: u64) {
        match edgex::value_kind(&self.value_type) {
            Some(ValueKind::Binary) => {
                let byte = (j % 251) as u8;
                match value {
                    ReadingValue::Binary { data, .. } => {
                        data.clear();
                        data.resize(self.value_size as usize, byte);
                    }
                    _ => {
                        *value = ReadingValue::Binary {
                            data: vec![byte; self.value_size as usize],
                            media_type: self.media_type.clone(),
                        }
                    }
                }
            }
            Some(ValueKind::Object) => {
                *value = ReadingValue::Object(json!({"seq": j, "reading": k}));
            }
            _ => match value {
                ReadingValue::Simple(text) => {
                    text.clear();
                    simple_value(text, &self.value_type, j + k);
                }
                _ => {
                    let mut text = String::new();
                    simple_value(&mut text, &self.value_type, j + k);
                    *value = ReadingValue::Simple(text);
                }
            },
        }
    }

    /// Checks every bound; the error names the setting (as its flag or file key) and the fix.
    pub fn check(&self) -> Result<(), String> {
        let within = |key: &str, v: u64, max: u64| {
            if v == 0 || v > max {
                Err(format!("{key} {v} is out of range: give 1 to {max}"))
            } else {
                Ok(())
            }
        };
        within("devices", self.devices, MAX_DEVICES)?;
        within(
            "readings-per-event",
            self.readings_per_event,
            MAX_READINGS_PER_EVENT,
        )?;
        within("writers", self.writers, MAX_WRITERS)?;
        if self.readers > MAX_READERS {
            return Err(format!(
                "readers {} is out of range: give 0 to {MAX_READERS}",
                self.readers
            ));
        }
        if let Some(r) = self.read_rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!(
                    "read-rate {r} is not a rate: give a number of reads per second above 0"
                ));
            }
        }
        if !(self.events_per_second.is_finite() && self.events_per_second > 0.0) {
            return Err(format!(
                "events-per-second {} is not a rate: give a number of events per second above 0",
                self.events_per_second
            ));
        }
        // A run offers at most this many events: bound the work (and the f64 schedule).
        let offered = self.events_per_second * self.duration.as_secs_f64();
        if offered > 1e12 {
            return Err(format!(
                "events-per-second {} over duration {:?} is {offered:.0} events: give a lower \
                 rate or a shorter duration (at most 1e12 events)",
                self.events_per_second, self.duration
            ));
        }
        if self.duration > MAX_RUN {
            return Err(format!(
                "duration {:?} (warmup included) is longer than {MAX_RUN:?}: give a shorter \
                 duration (runs longer than 2 h are not supported)",
                self.duration
            ));
        }
        let client_seconds = (self.writers + self.readers) * self.duration.as_secs().max(1);
        if client_seconds > MAX_CLIENT_SECONDS {
            return Err(format!(
                "writers {} and {} readers over {:?} are {client_seconds} client-seconds, more \
                 than {MAX_CLIENT_SECONDS}: give fewer writers or readers, or a shorter duration",
                self.writers, self.readers, self.duration
            ));
        }
        if self.retention.interval.is_zero() {
            return Err("purge-interval 0s is not an interval: give one above 0, e.g. 30s".into());
        }
        if let Some((max_cap, min_cap)) = self.retention.caps {
            if max_cap == 0 || min_cap >= max_cap || max_cap > 1_000_000_000_000 {
                return Err(format!(
                    "max-cap {max_cap} with min-cap {min_cap}: give 0 < min-cap < max-cap <= 1e12 \
                     (readings)"
                ));
            }
        }
        match edgex::value_kind(&self.value_type) {
            None => {
                return Err(format!(
                    "value-type {:?} is not an EdgeX value type: give one of {}",
                    self.value_type,
                    edgex::VALUE_TYPES.join(", ")
                ))
            }
            Some(ValueKind::Binary) => within("value-size", self.value_size, MAX_VALUE_SIZE)?,
            _ => {}
        }
        if self.resources.is_empty() || self.resources.iter().any(|r| r.is_empty()) {
            return Err("resources: give one or more non-empty resource names".to_string());
        }
        if self.profile.is_empty() {
            return Err("profiles: give a non-empty profile name".to_string());
        }
        if self.warmup >= self.duration {
            return Err(format!(
                "warmup {:?} is not shorter than duration {:?}: give a longer duration or a \
                 shorter warmup",
                self.warmup, self.duration
            ));
        }
        Ok(())
    }
}

impl FleetSpec {
    /// Read `k` of reader `r`: the next query of [`READ_MIX`], on a device and resource that
    /// move with `k`.
    pub fn read(&self, store: &mut dyn EventStore, r: u64, k: u64) -> StoreResult<()> {
        let device = self.device((k.wrapping_mul(7).wrapping_add(r)) % self.devices.max(1));
        match k % READ_MIX.len() as u64 {
            0 => store
                .readings(Filter::device(&device), Page::first(LATEST_READINGS))
                .map(drop),
            1 => {
                let resource = &self.resources[(k / 3) as usize % self.resources.len()];
                let now = edgex::now_ns();
                let from = now.saturating_sub(READ_WINDOW.as_nanos() as i64);
                store
                    .readings(
                        Filter::resource(resource).between(from, now),
                        Page::first(WINDOW_LIMIT),
                    )
                    .map(drop)
            }
            _ => store.event_count(Filter::device(&device)).map(drop),
        }
    }
}

/// Appends a value of a simple value type, from `n`, to `out`.
fn simple_value(out: &mut String, value_type: &str, n: u64) {
    use std::fmt::Write as _;
    let _ = match value_type {
        "Bool" => write!(out, "{}", n.is_multiple_of(2)),
        "String" => write!(out, "value-{n}"),
        "Float32" | "Float64" => write!(out, "{:.2}", (n % 10_000) as f64 / 100.0),
        t if t.ends_with("Array") => write!(out, "[{}]", n % 100),
        _ => write!(out, "{}", n % 100),
    };
}

/// Overwrites `id` with a new lowercase UUID, in place.
fn set_uuid(id: &mut String) {
    let mut buf = uuid::Uuid::encode_buffer();
    id.clear();
    id.push_str(uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buf));
}

/// What one fleet run against one target measured.
#[derive(Debug, Clone)]
pub struct FleetReport {
    /// The writers' figures, merged.
    pub writes: WriterReport,
    /// The readers' figures, merged (`sent` counts reads), when there were readers.
    pub reads: Option<WriterReport>,
    /// Events due in the run (warmup included): what the fleet offered.
    pub offered: u64,
    /// Events the store holds at the end.
    pub stored: u64,
    /// Events answered as written that the store does not hold; `None` with retention on (it
    /// deletes events on purpose).
    pub missing: Option<u64>,
    /// The purger's figures, when retention was on.
    pub purges: Option<PurgeReport>,
    /// The store's size ([`EventStore::size_bytes`]) at the end of each second of the run
    /// (warmup included), when the store reports one.
    pub sizes: Vec<Option<u64>>,
    /// The store's size at the end, after the writers stopped.
    pub final_size: Option<u64>,
    /// From the first send to the last answer.
    pub elapsed: Duration,
    /// Whether the target kept up, and if not, why.
    pub verdict: Verdict,
    /// With a bus between the writers and the store: what it did with the events.
    pub bus: Option<crate::target::BusReport>,
}

/// Did the target keep up with the fleet?
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every event due was sent, none failed, all are stored, p99 under the SLO.
    KeptUp,
    /// It did not: the first reason found.
    FellBehind(String),
    /// Ctrl-C stopped the run: the figures cover what ran, and no verdict is given.
    Interrupted,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::KeptUp => f.write_str("kept up"),
            Verdict::FellBehind(why) => write!(f, "fell behind: {why}"),
            Verdict::Interrupted => f.write_str("interrupted: the figures cover what ran"),
        }
    }
}

/// Runs the fleet against the stores `open` gives (one per writer, plus one to scrub and
/// verify): scrubs, writes open loop until the duration is over or `stop`, then counts what
/// the store holds. **Scrubbing deletes every event in the store.**
pub fn run(
    spec: &FleetSpec,
    open: &(dyn Fn() -> StoreResult<Box<dyn EventStore>> + Sync),
    stop: &AtomicBool,
    on_second: &(dyn Fn(&Live) + Sync),
) -> Result<FleetReport, FleetError> {
    run_with(spec, open, None, stop, on_second)
}

/// A way from the writers to the store that delivers later (a message bus): a write is
/// answered when it leaves, and the store has it only once the bus has carried it.
pub trait Delivery: Sync {
    /// Before a run scrubs the store: wait (a bounded time) until what an earlier run sent
    /// has stopped arriving, so none of it lands in this run's store or counts.
    fn quiesce(&self);
    /// Writing starts: events with an origin at or after `origin_ns` are the measured ones.
    fn measure_from(&self, origin_ns: i64);
    /// The writers have stopped: wait for what is in flight (a bounded time), and say what
    /// became of every event written.
    fn settle(&self) -> crate::target::BusReport;
    /// Events sent into it so far and those the store committed (`None` when that could not
    /// be counted just now): read once a second for the backlog.
    fn progress(&self) -> (u64, Option<u64>);
}

/// [`run`] with a [`Delivery`] between the writers and the store: each event's origin is its
/// intended send time (a device stamps its readings as it publishes them, on schedule), so the
/// delivery can time each event from then to its commit; the store is counted after the
/// delivery settles, and what it lost is falling behind.
pub fn run_with(
    spec: &FleetSpec,
    open: &(dyn Fn() -> StoreResult<Box<dyn EventStore>> + Sync),
    delivery: Option<&dyn Delivery>,
    stop: &AtomicBool,
    on_second: &(dyn Fn(&Live) + Sync),
) -> Result<FleetReport, FleetError> {
    spec.check().map_err(FleetError::Spec)?;
    if let Some(d) = delivery {
        d.quiesce();
    }
    let mut checker = open()?;
    checker.scrub()?;
    let mut writers = (0..spec.writers)
        .map(|_| open())
        .collect::<StoreResult<Vec<_>>>()?;
    let mut readers = (0..spec.readers)
        .map(|_| open())
        .collect::<StoreResult<Vec<_>>>()?;
    let mut purger = match spec.retention.enabled() {
        true => Some(open()?),
        false => None,
    };
    let clients_done = AtomicBool::new(false);
    let schedule = spec.schedule();
    // Several load hosts: scrubbed and connected; start together (Ctrl-C ends the wait).
    crate::runner::barrier::wait_until(spec.start_at, stop);
    let origin = Instant::now();
    // Intended origins: the wall clock at the start plus each event's intended offset.
    let intended_from = delivery.map(|d| {
        let start = edgex::now_ns();
        d.measure_from(start.saturating_add(duration_ns(spec.warmup) as i64));
        start
    });
    let counters = Counters::default();
    let clients = Clients {
        spec,
        schedule: &schedule,
        origin,
        intended_from,
        stop,
        counters: &counters,
    };
    let (reports, read_reports, (purges, sizes, backlogs, carried)) = std::thread::scope(|scope| {
        let purging = purger.as_mut().map(|store| {
            let done = &clients_done;
            scope.spawn(move || retention::run_purger(store.as_mut(), &spec.retention, done))
        });
        let clients = &clients;
        let writing: Vec<_> = writers
            .iter_mut()
            .enumerate()
            .map(|(w, store)| scope.spawn(move || clients.write(w as u64, store.as_mut())))
            .collect();
        let reading: Vec<_> = readers
            .iter_mut()
            .enumerate()
            .map(|(r, store)| scope.spawn(move || clients.read(r as u64, store.as_mut())))
            .collect();
        let done = &clients_done;
        // The checker is idle while the clients run: it measures the store's size.
        let sizer = checker.as_mut();
        let watching = scope.spawn(move || {
            watch(
                clients.schedule,
                origin,
                done,
                clients.counters,
                sizer,
                delivery,
                on_second,
            )
        });
        let join = |hs: Vec<std::thread::ScopedJoinHandle<'_, WriterReport>>| {
            hs.into_iter()
                .map(|h| h.join().expect("a fleet client panicked"))
                .collect::<Vec<_>>()
        };
        let (writes, reads) = (join(writing), join(reading));
        clients_done.store(true, Ordering::Relaxed);
        let (sizes, backlogs, carried) = watching.join().expect("the fleet's watcher panicked");
        let purges = purging.map(|h| h.join().expect("the fleet's purger panicked"));
        (writes, reads, (purges, sizes, backlogs, carried))
    });
    let elapsed = origin.elapsed();
    let writes = merged(&reports).expect("at least one writer");
    let reads = merged(&read_reports);
    // What the bus still carries reaches the store before it is counted (or the drain ends).
    let bus = delivery.map(|d| {
        let settled = d.settle();
        // The last entry is after the drain: what the bus carried in the end.
        let mut per_second = carried;
        per_second.push(d.progress());
        crate::target::BusReport {
            per_second,
            ..settled
        }
    });
    let stored = checker.event_count(Filter::all())?;
    // A store that cannot say its size is not a failed run.
    let final_size = checker.size_bytes().ok().flatten();
    // Retention deletes on purpose, and a bus that does not store keeps nothing.
    let keeps = !spec.retention.enabled() && bus.as_ref().is_none_or(|b| b.stores);
    let missing = keeps.then(|| writes.sent.saturating_sub(stored));
    let offered = schedule.due();
    let verdict = if stop.load(Ordering::Relaxed) {
        Verdict::Interrupted
    } else {
        match bus.as_ref().and_then(|b| bus_verdict(spec, b)) {
            // What the bus lost or delayed is the first thing wrong: everything else follows.
            Some(why) => Verdict::FellBehind(why),
            None => verdict(
                spec,
                &writes,
                missing,
                purges.as_ref(),
                backlog_from(spec, &backlogs),
            ),
        }
    };
    Ok(FleetReport {
        writes,
        reads,
        offered,
        stored,
        missing,
        purges,
        sizes,
        final_size,
        elapsed,
        verdict,
        bus,
    })
}

/// What the clients did so far, for the once-a-second [`Live`].
#[derive(Debug, Default)]
struct Counters {
    sent: AtomicU64,
    failed: AtomicU64,
    reads: AtomicU64,
}

/// What every client thread of a run shares: the fleet, its schedule, the run's start, the
/// stop flag and the live counters.
struct Clients<'a> {
    spec: &'a FleetSpec,
    schedule: &'a Schedule,
    origin: Instant,
    /// With a delivery: the wall clock (ns) at the start, from which each event's origin is
    /// its intended send time.
    intended_from: Option<i64>,
    stop: &'a AtomicBool,
    counters: &'a Counters,
}

impl Clients<'_> {
    /// Writer `w` of the fleet: its share of the schedule, open loop.
    fn write(&self, w: u64, store: &mut dyn EventStore) -> WriterReport {
        let (spec, counters) = (self.spec, self.counters);
        let mut pacer = schedule::RealPacer::new(self.origin);
        let mut last_origin = 0i64;
        let cpu = schedule::thread_cpu_ns();
        // Each event is built ahead of its time, stamped when built (a device reads its
        // sensors, then posts), and origins of one writer strictly increase.
        let (schedule, intended_from) = (self.schedule, self.intended_from);
        let prepare = |j, event: &mut Event| {
            let stamp = match intended_from {
                Some(start) => start.saturating_add(schedule.intended_ns(j) as i64),
                None => edgex::now_ns(),
            };
            last_origin = stamp.max(last_origin + 1_000);
            spec.refill(event, j, last_origin);
        };
        let send = |event: &Event| {
            let result = store.add_event(event);
            let counter = if result.is_ok() {
                &counters.sent
            } else {
                &counters.failed
            };
            counter.fetch_add(1, Ordering::Relaxed);
            result
        };
        let mut report = schedule::write_open_loop(
            self.schedule,
            schedule::Share {
                first: w,
                stride: spec.writers,
            },
            &mut pacer,
            self.stop,
            spec.blank_event(),
            prepare,
            send,
        );
        report.cpu_ns = schedule::thread_cpu_ns().saturating_sub(cpu);
        report
    }

    /// Reader `r`: [`READ_MIX`] at `read_rate` (open loop) or back to back (closed loop).
    fn read(&self, r: u64, store: &mut dyn EventStore) -> WriterReport {
        let mut pacer = schedule::RealPacer::new(self.origin);
        let mut read = |k| {
            let result = self.spec.read(store, r, k);
            if result.is_ok() {
                self.counters.reads.fetch_add(1, Ordering::Relaxed);
            }
            result
        };
        match self.spec.read_rate {
            Some(rate) => schedule::write_open_loop(
                &Schedule {
                    rate,
                    ..*self.schedule
                },
                schedule::Share::ALL,
                &mut pacer,
                self.stop,
                0,
                |k, item| *item = k,
                |&k| read(k),
            ),
            None => schedule::run_closed_loop(self.schedule, &mut pacer, self.stop, read),
        }
    }
}

/// What the watcher saw each second: the store's sizes, the writers' backlogs, and a
/// delivery's progress (published, persisted).
type Watched = (Vec<Option<u64>>, Vec<u64>, Vec<(u64, Option<u64>)>);

/// Calls `on_second` once a second until `done`, and measures the store's size (and with a
/// delivery, what it carried) each time; returns the sizes, the writers' backlogs and the
/// delivery's progress.
fn watch(
    schedule: &Schedule,
    origin: Instant,
    done: &AtomicBool,
    counters: &Counters,
    sizer: &mut dyn EventStore,
    delivery: Option<&dyn Delivery>,
    on_second: &(dyn Fn(&Live) + Sync),
) -> Watched {
    let (mut sizes, mut backlogs, mut carried) = (Vec::new(), Vec::new(), Vec::new());
    let total = Duration::from_nanos(schedule.duration_ns);
    let mut next = Duration::from_secs(1);
    while !done.load(Ordering::Relaxed) {
        let elapsed = origin.elapsed();
        if elapsed < next {
            std::thread::sleep((next - elapsed).min(Duration::from_millis(50)));
            continue;
        }
        next += Duration::from_secs(1);
        let live = Live {
            elapsed,
            total,
            due: schedule.due_by(duration_ns(elapsed)),
            sent: counters.sent.load(Ordering::Relaxed),
            failed: counters.failed.load(Ordering::Relaxed),
            reads: counters.reads.load(Ordering::Relaxed),
        };
        on_second(&live);
        backlogs.push(live.due.saturating_sub(live.sent + live.failed));
        if let Some(d) = delivery {
            carried.push(d.progress());
        }
        sizes.push(sizer.size_bytes().ok().flatten());
    }
    (sizes, backlogs, carried)
}

/// What the bus did wrong, first thing first: events lost (and since when the backlog grew),
/// the subscriber cut off, the publish-to-commit p99 over the SLO; `None` when nothing.
fn bus_verdict(spec: &FleetSpec, b: &crate::target::BusReport) -> Option<String> {
    let first = |r: &Option<String>| {
        r.as_ref()
            .map_or(String::new(), |r| format!(" (first: {r})"))
    };
    if b.lost > 0 {
        let since = bus_backlog_from(&b.per_second).map_or(String::new(), |s| {
            format!("; the backlog grew from second {s}")
        });
        return Some(format!(
            "the bus lost {} of {} events{}{since}",
            b.lost,
            b.published,
            first(&b.first_reason)
        ));
    }
    if let Some(why) = &b.cut_off {
        return Some(format!("the subscriber was cut off: {why}"));
    }
    if let (Some(slo), Some(commit)) = (spec.slo, &b.commit) {
        let p99 = commit.value_at_quantile(0.99);
        if !commit.is_empty() && p99 > duration_ns(slo) {
            return Some(format!(
                "p99 publish-to-commit latency {:.3} ms over the SLO {:.3} ms",
                p99 as f64 / 1e6,
                slo.as_secs_f64() * 1e3
            ));
        }
    }
    None
}

/// The second (1-based) from which the bus's backlog (published − persisted) grew every
/// second to the end, if it grew over the last two seconds at least.
pub fn bus_backlog_from(per_second: &[(u64, Option<u64>)]) -> Option<usize> {
    let backlog: Vec<Option<u64>> = per_second
        .iter()
        .map(|&(p, done)| done.map(|d| p.saturating_sub(d)))
        .collect();
    let mut from = backlog.len();
    while from >= 2 {
        match (backlog[from - 2], backlog[from - 1]) {
            (Some(a), Some(b)) if b > a => from -= 1,
            _ => break,
        }
    }
    (backlog.len() - from >= 2).then_some(from + 1)
}

/// The second (1-based, warmup included) from which the writers' backlog stayed above what
/// `late_after` allows until the end, if it did.
fn backlog_from(spec: &FleetSpec, backlogs: &[u64]) -> Option<usize> {
    let allowed = (spec.events_per_second * spec.late_after.as_secs_f64()).ceil() as u64 + 1;
    let last_ok = backlogs.iter().rposition(|&b| b <= allowed);
    match last_ok {
        Some(i) if i + 1 == backlogs.len() => None,
        Some(i) => Some(i + 2),
        None if backlogs.is_empty() => None,
        None => Some(1),
    }
}

/// The reports of several clients as one; `None` for none.
fn merged(reports: &[WriterReport]) -> Option<WriterReport> {
    let (first, rest) = reports.split_first()?;
    let mut all = first.clone();
    for r in rest {
        all.merge(r);
    }
    Some(all)
}

/// The verdict: the first of a backlog at the end (more events than the SLO's time, or one
/// second, brings, and more than a tenth of the run's), failed writes, missing events, an SLO
/// breach. Late sends alone are not falling behind (a writer that oversleeps catches up); they
/// are reported beside it.
fn verdict(
    spec: &FleetSpec,
    w: &WriterReport,
    missing: Option<u64>,
    purges: Option<&PurgeReport>,
    backlog_from: Option<usize>,
) -> Verdict {
    let behind = |why: String| Verdict::FellBehind(why);
    // A backlog at the end worth less than the SLO's time (a second without one, and at most
    // a tenth of the measured run) is lag the latency figures judge; more is falling behind.
    let measured = spec.duration.saturating_sub(spec.warmup).as_secs_f64();
    let allowance = spec
        .slo
        .unwrap_or(Duration::from_secs(1))
        .as_secs_f64()
        .min(measured / 10.0);
    if w.unsent as f64 > spec.events_per_second * allowance {
        let since = backlog_from.map_or(String::new(), |s| format!(" from second {s}"));
        return behind(format!(
            "{} events were still unsent at the end (the backlog grew{since}: the store took \
             longer than the schedule allowed)",
            w.unsent
        ));
    }
    if w.failed > 0 {
        return behind(format!("{} writes failed", w.failed));
    }
    if let Some(missing) = missing.filter(|&m| m > 0) {
        return behind(format!(
            "{missing} events answered as written are not stored"
        ));
    }
    if let Some(p) = purges.filter(|p| p.failed > 0) {
        return behind(format!(
            "{} purges failed: {}",
            p.failed,
            p.first_error.as_deref().unwrap_or("")
        ));
    }
    if let Some(slo) = spec.slo {
        let p99 = w.corrected.value_at_quantile(0.99);
        if p99 > duration_ns(slo) {
            let second = first_slow_second(w, slo).unwrap_or(0);
            return behind(format!(
                "p99 write latency {:.3} ms over the SLO {:.3} ms (from second {second})",
                p99 as f64 / 1e6,
                slo.as_secs_f64() * 1e3
            ));
        }
    }
    Verdict::KeptUp
}

/// The first measured second whose p99 corrected latency is over `limit`.
fn first_slow_second(w: &WriterReport, limit: Duration) -> Option<usize> {
    w.per_second
        .iter()
        .position(|h| !h.is_empty() && h.value_at_quantile(0.99) > duration_ns(limit))
}
