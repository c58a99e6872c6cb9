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
use crate::edgex::dto::{AddEventRequest, EventDto};
use crate::edgex::envelope::{self, Encoding, EnvelopeVersion};
use crate::edgex::{Event, Reading, API_VERSION};
use crate::service::bus::{BusSubscribers, Counts, SubscriberConfig};
use crate::store::backend::{BackendError, Started, StoreOpener};
use crate::store::edgex::{Behaviour, Doomed, EventStore, Filter, Page};
use crate::store::redis::spawn::{Listen, RedisServer};
use crate::store::{CoreData, StoreError, StoreResult};
use crate::transport::bus::broker::{Broker, BrokerKind};
use crate::transport::bus::{self, mqtt, nats, redis_pubsub, Addr, BusUrl, SubscribeOptions};
use crate::transport::Endpoint;

/// The device service name in the topics a fleet publishes on.
pub const FLEET_SERVICE: &str = "device-fleet";

/// How long connecting to a broker may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A bus edgebench starts for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpawnedBus {
    /// Mosquitto over TCP.
    MqttTcp,
    /// Mosquitto over its Unix socket.
    MqttUds,
    /// nats-server over TCP.
    Nats,
    /// redis-server's Pub/Sub over TCP.
    RedisPubSubTcp,
    /// redis-server's Pub/Sub over a Unix socket.
    RedisPubSubUds,
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
pub const BUS_NAMES: &str = "mqtt-tcp, mqtt-uds, nats, redis-pubsub-tcp, redis-pubsub-uds, or \
     a broker's URL (mqtt://HOST:PORT, mqtt+unix:///PATH, nats://HOST:PORT, redis://HOST:PORT, \
     redis+unix:///PATH)";

impl BusChoice {
    /// One `--bus` item: a spawned kind's name or a URL.
    pub fn parse(item: &str) -> Result<BusChoice, String> {
        Ok(BusChoice::Spawn(match item.trim() {
            "mqtt-tcp" => SpawnedBus::MqttTcp,
            "mqtt-uds" => SpawnedBus::MqttUds,
            "nats" => SpawnedBus::Nats,
            "redis-pubsub-tcp" => SpawnedBus::RedisPubSubTcp,
            "redis-pubsub-uds" => SpawnedBus::RedisPubSubUds,
            url if url.contains("://") => return BusUrl::parse(url).map(BusChoice::At),
            other => return Err(format!("--bus {other:?}: unknown; give {BUS_NAMES}")),
        }))
    }

    /// What a column's name gets: `MQTT_TCP`, `MQTT_UDS`, `NATS_TCP`, `RedisPubSub_TCP`,
    /// `RedisPubSub_UDS`.
    pub fn column_suffix(&self) -> String {
        match self {
            BusChoice::Spawn(SpawnedBus::MqttTcp) => "MQTT_TCP".into(),
            BusChoice::Spawn(SpawnedBus::MqttUds) => "MQTT_UDS".into(),
            BusChoice::Spawn(SpawnedBus::Nats) => "NATS_TCP".into(),
            BusChoice::Spawn(SpawnedBus::RedisPubSubTcp) => "RedisPubSub_TCP".into(),
            BusChoice::Spawn(SpawnedBus::RedisPubSubUds) => "RedisPubSub_UDS".into(),
            BusChoice::At(url) => {
                let transport = match url.addr() {
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
    /// Published, never persisted, after the drain: `published − persisted`.
    pub lost: u64,
    /// How long the drain waited.
    pub drained: Duration,
    /// Whether the subscriber had handled every published event when the drain ended.
    pub caught_up: bool,
    /// From each measured event's origin (its intended publish time) to its commit, ns.
    pub commit: Option<hdrhistogram::Histogram<u64>>,
}

/// The broker and subscriber of a `--via bus` target, in front of `inner`.
pub(super) struct InProcessBus {
    // Fields drop in order: the subscribers stop, then the broker, then the store's target.
    subscribers: Mutex<Option<BusSubscribers>>,
    counts: Arc<Counts>,
    published: Arc<AtomicU64>,
    url: BusUrl,
    settings: BusSettings,
    _broker: Option<Broker>,
    _redis: Option<RedisServer>,
    inner: Target,
    direct: StoreOpener,
}

impl std::fmt::Debug for InProcessBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl InProcessBus {
    /// Starts (or reaches) the bus and subscribes core-data on it to `inner`'s store.
    pub(super) fn start(settings: &BusSettings, inner: Target) -> Result<InProcessBus, String> {
        let (mut broker, mut redis) = (None, None);
        let url = match &settings.choice {
            BusChoice::At(url) => url.clone(),
            BusChoice::Spawn(kind) => match kind {
                SpawnedBus::MqttTcp | SpawnedBus::MqttUds | SpawnedBus::Nats => {
                    let b = Broker::spawn(match kind {
                        SpawnedBus::Nats => BrokerKind::Nats,
                        _ => BrokerKind::Mosquitto,
                    })
                    .map_err(|e| e.to_string())?;
                    let url = match kind {
                        SpawnedBus::MqttTcp => BusUrl::Mqtt(b.tcp().clone()),
                        SpawnedBus::MqttUds => {
                            BusUrl::Mqtt(b.unix().expect("mosquitto has a socket").clone())
                        }
                        _ => BusUrl::Nats(b.tcp().clone()),
                    };
                    broker = Some(b);
                    url
                }
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
            },
        };
        let direct = inner.event_store_opener().map_err(|e| e.to_string())?;
        let config = SubscriberConfig {
            persist: true,
            options: SubscribeOptions {
                qos: settings.qos,
                timeout: CONNECT_TIMEOUT,
                ..SubscribeOptions::default()
            },
        };
        let subscribers = BusSubscribers::start(std::slice::from_ref(&url), &direct, &config)?;
        let counts = Arc::clone(subscribers.counts());
        Ok(InProcessBus {
            subscribers: Mutex::new(Some(subscribers)),
            counts,
            published: Arc::new(AtomicU64::new(0)),
            url,
            settings: settings.clone(),
            _broker: broker,
            _redis: redis,
            inner,
            direct,
        })
    }

    /// The subscriber's counts.
    pub(super) fn counts(&self) -> &Arc<Counts> {
        &self.counts
    }

    /// Waits at most `drain` until the subscriber has handled every event published so far,
    /// then reports.
    pub(super) fn settle(&self, drain: Duration) -> BusReport {
        let start = Instant::now();
        let published = self.published.load(Ordering::Relaxed);
        let mut caught_up = self.counts.handled() >= published;
        while !caught_up && start.elapsed() < drain {
            std::thread::sleep(Duration::from_millis(5));
            caught_up = self.counts.handled() >= published;
        }
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let persisted = n(&self.counts.persisted);
        BusReport {
            published,
            received: n(&self.counts.received),
            persisted,
            rejected: n(&self.counts.rejected),
            failed: n(&self.counts.failed),
            first_reason: self
                .counts
                .first_rejection()
                .or_else(|| self.counts.first_failure()),
            lost: published.saturating_sub(persisted),
            drained: start.elapsed(),
            caught_up,
            commit: self.counts.commit_latency(),
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
        format!(
            "{} (edgebench's core-data subscriber, EdgeX {} envelopes, store {})",
            self.url,
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
        let (direct, url) = (Arc::clone(&self.direct), self.url.clone());
        let (published, envelope, qos) = (
            Arc::clone(&self.published),
            self.settings.envelope,
            self.settings.qos,
        );
        Ok(Arc::new(move || {
            let publisher = Publisher::connect(&url, qos).map_err(|e| StoreError::Backend {
                backend: "bus",
                message: format!("cannot connect a publisher to {url}: {e}"),
            })?;
            Ok(Box::new(Published {
                publisher,
                direct: direct()?,
                envelope,
                published: Arc::clone(&published),
                topic: String::with_capacity(128),
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
}

impl Publisher {
    /// Reads what the broker sent back (PUBACKs, PUBLISH replies, PINGs), so it never piles
    /// up unread: unread, PUBACKs would fill the socket and stall the broker, Redis would
    /// queue replies without bound, and nats-server would drop a publisher that never answers
    /// its pings.
    fn poll(&mut self) -> std::io::Result<()> {
        let now = Duration::from_micros(1);
        match self {
            Publisher::Mqtt(client, _) => client.poll_acks(now).map(drop),
            Publisher::Nats(client) => client.poll(now),
            Publisher::Redis(client) => client.poll_published(now).map(drop),
        }
    }

    fn connect(url: &BusUrl, qos: mqtt::Qos) -> std::io::Result<Publisher> {
        Ok(match url {
            BusUrl::Mqtt(addr) => {
                let options = mqtt::Options {
                    client_id: format!("{FLEET_SERVICE}-{}", uuid::Uuid::new_v4().simple()),
                    connect_timeout: CONNECT_TIMEOUT,
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
    /// Publishes since the start, to read the broker's answers every [`POLL_EVERY`].
    sends: u64,
}

/// How many publishes go out between two reads of what the broker sent back.
const POLL_EVERY: u64 = 64;

impl EventStore for Published {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let request = AddEventRequest {
            api_version: API_VERSION.to_string(),
            request_id: String::new(),
            event: EventDto::of(event),
        };
        let encoding = Encoding::for_request(&request);
        self.topic = envelope::event_topic("edgex", FLEET_SERVICE, event);
        let sent = match &mut self.publisher {
            Publisher::Mqtt(client, qos) => {
                let wire = envelope::encode(&request, self.envelope, encoding, "");
                client.publish(&self.topic, &wire, *qos)
            }
            Publisher::Nats(client) => {
                let payload = envelope::payload_bytes(&request, encoding);
                let headers = [("Content-Type", encoding.content_type())];
                client.publish(&bus::nats_subject(&self.topic), &headers, &payload)
            }
            Publisher::Redis(client) => {
                let wire = envelope::encode(&request, self.envelope, encoding, "");
                client.publish(&redis_pubsub::channel_of(&self.topic), &wire)
            }
        };
        let failed = |e: std::io::Error| StoreError::Backend {
            backend: "bus",
            message: format!("publish failed: {e}"),
        };
        sent.map_err(failed)?;
        self.published.fetch_add(1, Ordering::Relaxed);
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
