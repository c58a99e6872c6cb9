//! `--via bus`: EdgeX's ingestion path in front of a target's store. A broker (spawned here,
//! or someone's by URL), edgebench's core-data subscriber started in this process on the
//! store ([`crate::service::bus`]), and stores whose `add_event` publishes the event as a
//! device service does ([`Published`]); everything else they do goes to the store directly.
//!
//! What left the publisher is not yet in the store: [`InProcessBus::settle`] waits (at most
//! the drain time) until the subscriber has handled every published event, then says what
//! happened to them.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::Target;
use crate::edgex::dto::AddEventOf;
use crate::edgex::envelope::{self, Encoding, EnvelopeVersion};
use crate::edgex::{Event, Reading};
use crate::service::bus::{BusSubscribers, Counts, Stages, SubscriberConfig, SubscriberMode};
use crate::store::backend::{BackendError, Started, StoreOpener};
use crate::store::edgex::{
    Behaviour, DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter,
};
use crate::store::redis::spawn::{Listen, RedisServer};
use crate::store::{CoreData, StoreError, StoreResult};
use crate::transport::bus::broker::{Broker, BrokerKind};
use crate::transport::bus::stats::{self, BrokerDrops, DropsWatch};
use crate::transport::bus::{
    self, embedded, mqtt, nats, redis_pubsub, Addr, BusUrl, SubscribeOptions, Subscriber,
};
use crate::transport::Endpoint;
use edgebench_engine::server::pubsub::Broker as EngineBroker;

/// The device service name in the topics a fleet publishes on.
pub const FLEET_SERVICE: &str = "device-fleet";

/// How long connecting to a broker may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A bus edgebench starts for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpawnedBus {
    /// Mosquitto over TCP, configured as EdgeX ships it (Nagle's algorithm on: Mosquitto's
    /// `set_tcp_nodelay false`).
    MqttTcp,
    /// Mosquitto over TCP with `set_tcp_nodelay true`: small messages leave at once instead
    /// of waiting for the subscriber's (delayed) ACK.
    MqttTcpNoDelay,
    /// Mosquitto over its Unix socket.
    MqttUds,
    /// Mosquitto as EdgeX's secure bus: TLS (a private CA made for the run) and a user with a
    /// password (`allow_anonymous false`), over TCP.
    MqttTls,
    /// nats-server over TCP.
    Nats,
    /// redis-server's Pub/Sub over TCP.
    RedisPubSubTcp,
    /// redis-server's Pub/Sub over a Unix socket.
    RedisPubSubUds,
    /// The engine's Pub/Sub in this process: no broker process, no socket.
    Embedded,
}

/// Which bus a `--via bus` column goes through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BusChoice {
    /// Spawned for the run, stopped after it.
    Spawn(SpawnedBus),
    /// Someone's broker.
    At(BusUrl),
}

/// Every `--bus` name, for error messages.
pub const BUS_NAMES: &str =
    "mqtt-tcp, mqtt-tcp-nodelay, mqtt-uds, mqtt-tls, nats, redis-pubsub-tcp, redis-pubsub-uds, embedded, or \
     a broker's URL (mqtt://[USER:PASSWORD@]HOST:PORT, mqtts://[USER:PASSWORD@]HOST:PORT[?cacert=FILE], \
     mqtt+unix:///PATH, nats://HOST:PORT, redis://HOST:PORT, redis+unix:///PATH)";

impl BusChoice {
    /// One `--bus` item: a spawned kind's name or a URL.
    pub fn parse(item: &str) -> Result<BusChoice, String> {
        Ok(BusChoice::Spawn(match item.trim() {
            "mqtt-tcp" => SpawnedBus::MqttTcp,
            "mqtt-tcp-nodelay" => SpawnedBus::MqttTcpNoDelay,
            "mqtt-uds" => SpawnedBus::MqttUds,
            "mqtt-tls" => SpawnedBus::MqttTls,
            "nats" => SpawnedBus::Nats,
            "redis-pubsub-tcp" => SpawnedBus::RedisPubSubTcp,
            "redis-pubsub-uds" => SpawnedBus::RedisPubSubUds,
            "embedded" => SpawnedBus::Embedded,
            url if url.contains("://") => return BusUrl::parse(url).map(BusChoice::At),
            other => return Err(format!("--bus {other:?}: unknown; give {BUS_NAMES}")),
        }))
    }

    /// What a column's name gets: `MQTT_TCP`, `MQTT_TCP_NoDelay`, `MQTT_UDS`, `MQTT_TLS`
    /// (`mqtts://`), `NATS_TCP`, `RedisPubSub_TCP`, `RedisPubSub_UDS`, `Bus_Embedded`.
    pub fn column_suffix(&self) -> String {
        match self {
            BusChoice::Spawn(SpawnedBus::MqttTcp) => "MQTT_TCP".into(),
            BusChoice::Spawn(SpawnedBus::MqttTcpNoDelay) => "MQTT_TCP_NoDelay".into(),
            BusChoice::Spawn(SpawnedBus::MqttUds) => "MQTT_UDS".into(),
            BusChoice::Spawn(SpawnedBus::MqttTls) => "MQTT_TLS".into(),
            BusChoice::Spawn(SpawnedBus::Nats) => "NATS_TCP".into(),
            BusChoice::Spawn(SpawnedBus::RedisPubSubTcp) => "RedisPubSub_TCP".into(),
            BusChoice::Spawn(SpawnedBus::RedisPubSubUds) => "RedisPubSub_UDS".into(),
            BusChoice::Spawn(SpawnedBus::Embedded) => "Bus_Embedded".into(),
            BusChoice::At(url) => {
                let transport = match url.addr() {
                    _ if url.is_tls() => "TLS",
                    Addr::Tcp { .. } => "TCP",
                    Addr::Unix(_) => "UDS",
                };
                format!("{}_{transport}", url.protocol())
            }
        }
    }
}

/// A `--via bus` column's bus and how devices publish on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BusSettings {
    /// The bus.
    pub choice: BusChoice,
    /// Which release's envelope the devices publish (`--edgex 3|4`).
    pub envelope: EnvelopeVersion,
    /// MQTT QoS of publishes and the subscription (`--qos`).
    pub qos: mqtt::Qos,
    /// How core-data's subscriber handles events (`--subscriber`).
    pub subscriber: SubscriberMode,
    /// Whether the subscriber stores events (`--persist`, EdgeX's `PersistData`).
    pub persist: bool,
}

/// What the bus did with the events published through it.
#[derive(Debug, Clone, Default)]
pub struct BusReport {
    /// Events the publishers sent.
    pub published: u64,
    /// Messages the subscriber took off the bus.
    pub received: u64,
    /// Events the store committed.
    pub persisted: u64,
    /// Messages that did not decode or validate, and the first reason.
    pub rejected: u64,
    /// Events the store refused, and the first reason.
    pub failed: u64,
    /// The first reason a message was dropped (rejected or failed).
    pub first_reason: Option<String>,
    /// Published, never persisted, after the drain: `published − persisted` (with the
    /// subscriber at `--persist false`, never received: `published − received`).
    pub lost: u64,
    /// Whether the subscriber stored events (`--persist`); without, the store holds none.
    pub stores: bool,
    /// How long the drain waited.
    pub drained: Duration,
    /// Whether the subscriber had handled every published event when the drain ended.
    pub caught_up: bool,
    /// From each measured event's origin (its intended publish time) to its commit, ns.
    pub commit: Option<hdrhistogram::Histogram<u64>>,
    /// Where the measured events' time went.
    pub stages: Option<Stages>,
    /// Why the subscription ended before the run did (the broker cut it off), if it did.
    pub cut_off: Option<String>,
    /// With someone's core-data service as the subscriber: how `persisted` was counted (its
    /// REST API's event count); received, rejected, failed and the latencies are then unknown.
    pub counted_by: Option<String>,
    /// How core-data's subscriber handled events; `None` for someone's core-data service.
    pub subscriber: Option<String>,
    /// What the broker says it dropped or disconnected during the run, where it says.
    pub broker: Option<BrokerCount>,
    /// At the end of each second of the run: events published so far and those persisted
    /// (`None` where a core-data service's count did not answer).
    pub per_second: Vec<(u64, Option<u64>)>,
}

/// Where a run's bus is: a broker at a URL, or the engine's in this process.
#[derive(Clone)]
enum Place {
    Url(BusUrl),
    Embedded(Arc<EngineBroker>),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Url(url) => url.fmt(f),
            Place::Embedded(_) => f.write_str("the engine's Pub/Sub in process"),
        }
    }
}

/// What a broker said it lost during one run (its counters' rise since the run began).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerCount {
    /// Messages it dropped (Mosquitto's `$SYS`).
    pub dropped: Option<u64>,
    /// Subscribers it closed for falling behind (nats-server's `slow_consumers`, Redis 7.4's
    /// `client_output_buffer_limit_disconnections`).
    pub disconnected: Option<u64>,
    /// The report's line (`broker: 1,399 messages dropped ($SYS/…)`, or why it is unknown).
    pub line: String,
}

/// How long reading a broker's counters may take when the run lost events (Mosquitto
/// publishes `$SYS` every 2 s with the spawned config).
const DROPS_WAIT: Duration = Duration::from_millis(2500);

/// The broker and subscriber of a `--via bus` target, in front of `inner`.
pub(super) struct InProcessBus {
    // Fields drop in order: the subscribers stop, then the broker, then the store's target.
    /// `None` when someone's core-data service subscribes (an `http://` target).
    subscribers: Mutex<Option<BusSubscribers>>,
    counts: Arc<Counts>,
    published: Arc<AtomicU64>,
    place: Place,
    settings: BusSettings,
    _broker: Option<Broker>,
    _redis: Option<RedisServer>,
    inner: Target,
    direct: StoreOpener,
    /// Someone's core-data service subscribes, and is counted through its REST API.
    external: bool,
    /// The counts when the current run began (a `--find-max` search runs several on one
    /// bus): published, received, persisted, rejected, failed.
    baseline: Mutex<[u64; 5]>,
    /// The broker's drop counters, watched from the start; `None` in process.
    drops: Option<DropsWatch>,
    /// The broker's counters when the current run began.
    drops_baseline: Mutex<Option<BrokerDrops>>,
    /// With someone's core-data service: the store that counts its events.
    counter: Mutex<Option<Box<dyn EventStore>>>,
}

impl std::fmt::Debug for InProcessBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl InProcessBus {
    /// Starts (or reaches) the bus and subscribes core-data on it to `inner`'s store; with
    /// `inner` a core-data service (someone's, by URL), that service is the subscriber and
    /// the bus must be the broker it subscribes to, by URL.
    pub(super) fn start(settings: &BusSettings, inner: Target) -> Result<InProcessBus, String> {
        let external = inner.service;
        if external && !matches!(settings.choice, BusChoice::At(_)) {
            return Err(format!(
                "--bus {}: a core-data service by URL subscribes to its own broker, which \
                 edgebench cannot spawn for it; give that broker's URL (mqtt://HOST:PORT, …)",
                settings.choice.column_suffix()
            ));
        }
        let (mut broker, mut redis) = (None, None);
        let place = match &settings.choice {
            BusChoice::At(url) => Place::Url(url.clone()),
            BusChoice::Spawn(SpawnedBus::Embedded) => Place::Embedded(embedded::broker()),
            BusChoice::Spawn(kind) => Place::Url(match kind {
                SpawnedBus::RedisPubSubTcp | SpawnedBus::RedisPubSubUds => {
                    let listen = match kind {
                        SpawnedBus::RedisPubSubTcp => Listen::Tcp,
                        _ => Listen::Unix,
                    };
                    let server = RedisServer::spawn(listen).map_err(|e| e.to_string())?;
                    let addr = match server.endpoint() {
                        Endpoint::Tcp { host, port } => Addr::Tcp { host, port },
                        Endpoint::Unix(path) => Addr::Unix(path),
                    };
                    redis = Some(server);
                    BusUrl::RedisPubSub(addr)
                }
                SpawnedBus::MqttTls => {
                    // A password of this run's own: it is in no file a user reads, and the
                    // URL shows it as ***.
                    let password = uuid::Uuid::new_v4().simple().to_string();
                    let b =
                        Broker::spawn_secure("edgex-bus", &password).map_err(|e| e.to_string())?;
                    let url = b.url();
                    broker = Some(b);
                    url
                }
                _ => {
                    let (kind_of, extra) = match kind {
                        SpawnedBus::Nats => (BrokerKind::Nats, ""),
                        SpawnedBus::MqttTcpNoDelay => {
                            (BrokerKind::Mosquitto, "set_tcp_nodelay true")
                        }
                        _ => (BrokerKind::Mosquitto, ""),
                    };
                    let b = Broker::spawn_with(kind_of, extra).map_err(|e| e.to_string())?;
                    let url = match kind {
                        SpawnedBus::MqttUds => {
                            BusUrl::mqtt(b.unix().expect("mosquitto has a socket").clone())
                        }
                        SpawnedBus::Nats => BusUrl::Nats(b.tcp().clone()),
                        _ => BusUrl::mqtt(b.tcp().clone()),
                    };
                    broker = Some(b);
                    url
                }
            }),
        };
        let direct = inner.event_store_opener().map_err(|e| e.to_string())?;
        let config = SubscriberConfig {
            persist: settings.persist,
            options: SubscribeOptions {
                qos: settings.qos,
                timeout: CONNECT_TIMEOUT,
                ..SubscribeOptions::default()
            },
            mode: settings.subscriber,
        };
        let subscribers = match (&place, external) {
            (_, true) => None,
            (Place::Url(url), false) => Some(BusSubscribers::start(
                std::slice::from_ref(url),
                &direct,
                &config,
            )?),
            (Place::Embedded(broker), false) => {
                let sub = embedded::subscribe(broker, crate::service::bus::EVENTS_FILTER)
                    .map_err(|e| format!("cannot subscribe to the embedded bus: {e}"))?;
                let named = vec![("embedded".to_string(), Box::new(sub) as Box<dyn Subscriber>)];
                Some(BusSubscribers::start_on(named, &direct, &config)?)
            }
        };
        let counts = subscribers
            .as_ref()
            .map_or_else(Arc::default, |s| Arc::clone(s.counts()));
        // A broker whose counters cannot be watched is still a bus: the report says why.
        let drops = match &place {
            Place::Url(url) => {
                let monitor = broker.as_ref().and_then(Broker::monitor_port);
                stats::watch(url, monitor, CONNECT_TIMEOUT).ok()
            }
            Place::Embedded(_) => None,
        };
        Ok(InProcessBus {
            subscribers: Mutex::new(subscribers),
            counts,
            published: Arc::new(AtomicU64::new(0)),
            place,
            settings: settings.clone(),
            _broker: broker,
            _redis: redis,
            inner,
            direct,
            external,
            baseline: Mutex::new([0; 5]),
            drops,
            drops_baseline: Mutex::new(None),
            counter: Mutex::new(None),
        })
    }

    /// A run begins: its counts start from here, and commit latencies of events with an
    /// origin at or after `origin_ns` are recorded.
    pub(super) fn begin(&self, origin_ns: i64) {
        *self.baseline.lock().unwrap_or_else(PoisonError::into_inner) = self.totals();
        self.counts.record_commits_from(origin_ns);
        if let Some(watch) = &self.drops {
            // What it says now, without waiting for its next report.
            let now = watch.read(Duration::from_millis(1)).ok();
            *self
                .drops_baseline
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = now;
        }
    }

    /// What the broker says it lost since the run began (waiting for its next report when
    /// the run lost events, so the count covers them).
    fn broker_count(&self, lost: bool) -> Option<BrokerCount> {
        let watch = self.drops.as_ref()?;
        let wait = if lost {
            DROPS_WAIT
        } else {
            Duration::from_millis(1)
        };
        let now = match watch.read(wait) {
            Ok(now) => now,
            Err(e) => {
                return Some(BrokerCount {
                    line: format!("broker: {e}"),
                    ..BrokerCount::default()
                })
            }
        };
        let base = self
            .drops_baseline
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let since = |now: Option<u64>, pick: fn(&BrokerDrops) -> Option<u64>| {
            now.map(|n| n.saturating_sub(base.as_ref().and_then(pick).unwrap_or(0)))
        };
        let counted = BrokerDrops {
            dropped: since(now.dropped, |b| b.dropped),
            disconnected: since(now.disconnected, |b| b.disconnected),
            ..now
        };
        Some(BrokerCount {
            dropped: counted.dropped,
            disconnected: counted.disconnected,
            line: counted.to_string(),
        })
    }

    /// Waits, at most `limit`, until the subscriber has taken nothing new for 100 ms and has
    /// handled everything it took: what a previous run left on the bus is then in (or
    /// lost), not in the next run.
    pub(super) fn quiesce(&self, limit: Duration) {
        if self.external {
            return;
        }
        let start = Instant::now();
        let mut last = self.totals();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let now = self.totals();
            let [_, received, persisted, rejected, failed] = now;
            let handled = match self.settings.persist {
                true => persisted + rejected + failed,
                false => received,
            };
            if (now == last && handled >= received) || start.elapsed() >= limit {
                return;
            }
            last = now;
        }
    }

    /// Published, received, persisted (by the subscriber), rejected, failed, since the start.
    fn totals(&self) -> [u64; 5] {
        let n = |c: &AtomicU64| c.load(Ordering::SeqCst);
        // Downstream first: what was persisted by the time it is read was published before,
        // so published, read last, is never behind it.
        let (failed, rejected) = (n(&self.counts.failed), n(&self.counts.rejected));
        let (persisted, received) = (n(&self.counts.persisted), n(&self.counts.received));
        [n(&self.published), received, persisted, rejected, failed]
    }

    /// [`InProcessBus::totals`] since the current run began.
    fn since_begin(&self) -> [u64; 5] {
        let base = *self.baseline.lock().unwrap_or_else(PoisonError::into_inner);
        let mut now = self.totals();
        for (n, b) in now.iter_mut().zip(base) {
            *n = n.saturating_sub(b);
        }
        now
    }

    /// Events published so far, and those persisted (with someone's core-data service: its
    /// event count, `None` when asking failed).
    /// With the subscriber at `--persist false`, the second figure is what it received.
    pub(super) fn progress(&self) -> (u64, Option<u64>) {
        if !self.settings.persist {
            let now = self.since_begin();
            return (now[0], Some(now[1]));
        }
        // Persisted before published, as in `totals`.
        let persisted = self.persisted();
        (self.since_begin()[0], persisted)
    }

    /// Persisted since the run began; with someone's core-data service, its event count (the
    /// run scrubbed the store first).
    fn persisted(&self) -> Option<u64> {
        if self.external {
            // One connection to the service for every count (each second, and every 50 ms
            // of the drain), opened at the first.
            let mut counter = self.counter.lock().unwrap_or_else(PoisonError::into_inner);
            if counter.is_none() {
                *counter = (self.direct)().ok();
            }
            let count = counter.as_mut()?.event_count(Filter::all());
            if count.is_err() {
                // A broken connection is opened again at the next count.
                *counter = None;
            }
            return count.ok();
        }
        Some(self.since_begin()[2])
    }

    /// Waits at most `drain` until the subscriber has handled every event published so far,
    /// then reports.
    pub(super) fn settle(&self, drain: Duration) -> BusReport {
        let start = Instant::now();
        let published = self.since_begin()[0];
        let done = || match self.external {
            true => self.persisted().unwrap_or(0) >= published,
            false => {
                let [_, received, persisted, rejected, failed] = self.since_begin();
                let handled = match self.settings.persist {
                    true => persisted + rejected + failed,
                    // Nothing is stored: what was received is done with.
                    false => received,
                };
                handled >= published || self.counts.cut_off().is_some()
            }
        };
        let pause = Duration::from_millis(if self.external { 50 } else { 5 });
        let mut caught_up = done();
        while !caught_up && start.elapsed() < drain {
            std::thread::sleep(pause);
            caught_up = done();
        }
        let [_, received, _, rejected, failed] = self.since_begin();
        let persisted = self.persisted().unwrap_or(0);
        let cut_off = self.counts.cut_off();
        let done = match self.settings.persist {
            true => persisted,
            false => received,
        };
        let broker = self.broker_count(done < published);
        BusReport {
            published,
            received,
            persisted,
            rejected,
            failed,
            first_reason: self
                .counts
                .first_rejection()
                .or_else(|| self.counts.first_failure())
                .or_else(|| cut_off.clone()),
            lost: published.saturating_sub(done),
            broker,
            stores: self.settings.persist,
            drained: start.elapsed(),
            caught_up: caught_up && cut_off.is_none(),
            commit: self.counts.commit_latency(),
            stages: self.counts.stages(),
            cut_off,
            counted_by: self
                .external
                .then(|| format!("GET {}/event/count", self.inner.endpoint())),
            subscriber: (!self.external).then(|| match self.settings.persist {
                true => self.settings.subscriber.label(),
                false => format!("{}, persist false", self.settings.subscriber.label()),
            }),
            per_second: Vec::new(),
        }
    }
}

impl Drop for InProcessBus {
    fn drop(&mut self) {
        let subs = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(subs) = subs {
            let _ = subs.stop();
        }
    }
}

impl Started for InProcessBus {
    fn describe(&self) -> String {
        let subscriber = match self.external {
            true => "its core-data service subscribes".to_string(),
            false => format!(
                "edgebench's core-data subscriber, --subscriber {}",
                self.settings.subscriber.label()
            ),
        };
        format!(
            "{} ({subscriber}, EdgeX {} envelopes, store {})",
            self.place,
            match self.settings.envelope {
                EnvelopeVersion::V3 => "3",
                EnvelopeVersion::V4 => "4",
            },
            self.inner.endpoint()
        )
    }

    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        Err(BackendError::Unsuitable(
            "a bus carries EdgeX 3/4 events only".to_string(),
        ))
    }

    /// Stores whose adds are publishes and whose other calls go to the store directly.
    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        let (direct, place) = (Arc::clone(&self.direct), self.place.clone());
        let (published, envelope, qos) = (
            Arc::clone(&self.published),
            self.settings.envelope,
            self.settings.qos,
        );
        Ok(Arc::new(move || {
            let publisher = Publisher::connect(&place, qos).map_err(|e| StoreError::Backend {
                backend: "bus",
                message: format!("cannot connect a publisher to {place}: {e}"),
            })?;
            Ok(Box::new(Published {
                publisher,
                direct: direct()?,
                envelope,
                published: Arc::clone(&published),
                topic: String::with_capacity(128),
                wire: Vec::with_capacity(4096),
                sends: 0,
            }) as Box<dyn EventStore>)
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A device service's connection to the bus.
enum Publisher {
    Mqtt(mqtt::Client, mqtt::Qos),
    Nats(nats::Client),
    Redis(redis_pubsub::Client),
    Embedded(Arc<EngineBroker>),
}

impl Publisher {
    /// Reads what the broker sent back (PUBACKs, PUBLISH replies, PINGs), so it never piles
    /// up unread: unread, PUBACKs would fill the socket and stall the broker, Redis would
    /// queue replies without bound, and nats-server would drop a publisher that never answers
    /// its pings.
    fn poll(&mut self) -> std::io::Result<()> {
        let now = Duration::ZERO;
        match self {
            Publisher::Mqtt(client, _) => client.poll_acks(now).map(drop),
            Publisher::Nats(client) => client.poll(now),
            Publisher::Redis(client) => client.poll_published(now).map(drop),
            Publisher::Embedded(_) => Ok(()),
        }
    }

    fn connect(place: &Place, qos: mqtt::Qos) -> std::io::Result<Publisher> {
        let url = match place {
            Place::Embedded(broker) => return Ok(Publisher::Embedded(Arc::clone(broker))),
            Place::Url(url) => url,
        };
        Ok(match url {
            BusUrl::Mqtt(addr, security) => {
                let options = mqtt::Options {
                    client_id: format!("{FLEET_SERVICE}-{}", uuid::Uuid::new_v4().simple()),
                    connect_timeout: CONNECT_TIMEOUT,
                    security: security.clone(),
                    ..mqtt::Options::default()
                };
                Publisher::Mqtt(mqtt::Client::connect(addr, &options)?, qos)
            }
            BusUrl::Nats(addr) => {
                Publisher::Nats(nats::Client::connect(addr, FLEET_SERVICE, CONNECT_TIMEOUT)?)
            }
            BusUrl::RedisPubSub(addr) => {
                Publisher::Redis(redis_pubsub::Client::connect(addr, CONNECT_TIMEOUT)?)
            }
        })
    }
}

/// A store whose `add_event` publishes the event as a device service does: the topic
/// `edgex/events/device/<service>/<profile>/<device>/<source>`, the envelope of its release,
/// CBOR when a reading is Binary (NATS: EdgeX's `nats` format, the payload with its content
/// type in a header).
struct Published {
    publisher: Publisher,
    direct: Box<dyn EventStore>,
    envelope: EnvelopeVersion,
    published: Arc<AtomicU64>,
    topic: String,
    /// The envelope being sent (one buffer, reused).
    wire: Vec<u8>,
    /// Publishes since the start, to read the broker's answers every [`POLL_EVERY`].
    sends: u64,
}

/// How many publishes go out between two reads of what the broker sent back.
const POLL_EVERY: u64 = 64;

impl EventStore for Published {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let request = AddEventOf::new(event);
        let encoding = Encoding::for_event(event);
        envelope::event_topic_into(&mut self.topic, "edgex", FLEET_SERVICE, event);
        // Counted before it is sent (and taken back if the send fails): the subscriber may
        // persist it before this thread gets on, and persisted must never pass published.
        self.published.fetch_add(1, Ordering::SeqCst);
        let wire = &mut self.wire;
        let sent = match &mut self.publisher {
            Publisher::Mqtt(client, qos) => {
                envelope::encode_into(wire, &request, self.envelope, encoding, "");
                client.publish(&self.topic, wire, *qos)
            }
            Publisher::Nats(client) => {
                let payload = envelope::payload_bytes(&request, encoding);
                let headers = [("Content-Type", encoding.content_type())];
                client.publish(&bus::nats_subject(&self.topic), &headers, &payload)
            }
            Publisher::Redis(client) => {
                envelope::encode_into(wire, &request, self.envelope, encoding, "");
                client.publish(&redis_pubsub::channel_of(&self.topic), wire)
            }
            Publisher::Embedded(broker) => {
                envelope::encode_into(wire, &request, self.envelope, encoding, "");
                embedded::publish(broker, &self.topic, wire);
                Ok(())
            }
        };
        let failed = |e: std::io::Error| StoreError::Backend {
            backend: "bus",
            message: format!("publish failed: {e}"),
        };
        if let Err(e) = sent {
            self.published.fetch_sub(1, Ordering::SeqCst);
            return Err(failed(e));
        }
        self.sends += 1;
        if self.sends.is_multiple_of(POLL_EVERY) {
            self.publisher.poll().map_err(failed)?;
        }
        Ok(())
    }
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        self.direct.event_by_id(id)
    }
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.direct.delete_event_by_id(id)
    }
    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.direct.event_count(filter)
    }
    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        self.direct.events(filter, page)
    }
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        self.direct.delete_events(doomed)
    }
    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.direct.reading_count(filter)
    }
    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        self.direct.readings(filter, page)
    }
    fn scrub(&mut self) -> StoreResult<()> {
        self.direct.scrub()
    }
    fn behaviour(&self) -> Behaviour {
        self.direct.behaviour()
    }
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        self.direct.size_bytes()
    }
    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        self.direct.source_event_count(filter, limit)
    }
    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        self.direct.source_events(filter, page)
    }
    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        self.direct.device_sources()
    }
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        events.iter().try_for_each(|e| self.add_event(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_names_and_urls_parse_with_their_column_suffixes() {
        for (item, suffix) in [
            ("mqtt-tcp", "MQTT_TCP"),
            ("mqtt-uds", "MQTT_UDS"),
            ("nats", "NATS_TCP"),
            ("redis-pubsub-tcp", "RedisPubSub_TCP"),
            ("redis-pubsub-uds", "RedisPubSub_UDS"),
            ("mqtt://h:1883", "MQTT_TCP"),
            ("mqtt+unix:///s", "MQTT_UDS"),
            ("nats://h", "NATS_TCP"),
            ("redis+unix:///r", "RedisPubSub_UDS"),
            ("embedded", "Bus_Embedded"),
        ] {
            assert_eq!(
                BusChoice::parse(item).unwrap().column_suffix(),
                suffix,
                "{item}"
            );
        }
        let e = BusChoice::parse("kafka").unwrap_err();
        assert!(e.contains("--bus \"kafka\": unknown; give mqtt-tcp"), "{e}");
        let e = BusChoice::parse("amqp://h").unwrap_err();
        assert!(e.contains("unknown scheme"), "{e}");
    }
}
