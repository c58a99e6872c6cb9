//! EdgeX's ingestion path over the message bus, against real brokers: private Mosquitto (TCP
//! and its Unix socket), nats-server (TCP) and redis-server (Pub/Sub over TCP and a Unix
//! socket), each spawned for its test. Device-side publishes go through edgebench's own
//! protocol clients; the core-data side is `service::bus`, EdgeX's subscriber loop, into a
//! store in its EdgeX layout; every count is checked in the store itself.

use std::time::{Duration, Instant};

use edgebench::edgex::dto::{AddEventRequest, EventDto};
use edgebench::edgex::envelope::{self, Encoding, EnvelopeVersion};
use edgebench::edgex::testing;
use edgebench::edgex::{Event, ReadingValue};
use edgebench::service::bus::{
    BusSubscribers, Counts, SubscriberConfig, SubscriberMode, EVENTS_FILTER,
};
use edgebench::store::edgex::{EventStore, Filter};
use edgebench::target::Target;
use edgebench::transport::bus::broker::{Broker, BrokerKind};
use edgebench::transport::bus::{self, mqtt, nats, redis_pubsub, Addr, BusUrl, SubscribeOptions};

use crate::common;

const TIMEOUT: Duration = Duration::from_secs(5);

/// A device service's publisher on one bus.
enum Publisher {
    Mqtt(mqtt::Client, mqtt::Qos),
    Nats(nats::Client, bool),
    Redis(redis_pubsub::Client),
}

impl Publisher {
    fn new(url: &BusUrl, qos: mqtt::Qos, nats_headers: bool) -> Publisher {
        match url {
            BusUrl::Mqtt(a, security) => {
                let options = mqtt::Options {
                    client_id: "device-virtual".into(),
                    security: security.clone(),
                    ..mqtt::Options::default()
                };
                Publisher::Mqtt(mqtt::Client::connect(a, &options).unwrap(), qos)
            }
            BusUrl::Nats(a) => Publisher::Nats(
                nats::Client::connect(a, "device-virtual", TIMEOUT).unwrap(),
                nats_headers,
            ),
            BusUrl::RedisPubSub(a) => {
                Publisher::Redis(redis_pubsub::Client::connect(a, TIMEOUT).unwrap())
            }
        }
    }

    /// Publishes `event` as a device service of `version` does (CBOR when a reading is Binary).
    fn send(&mut self, version: EnvelopeVersion, event: &Event) {
        let request = AddEventRequest {
            api_version: "v3".into(),
            request_id: String::new(),
            event: EventDto::of(event),
        };
        let encoding = Encoding::for_request(&request);
        let topic = envelope::event_topic("edgex", "device-virtual", event);
        self.send_raw(&topic, &request, version, encoding);
    }

    fn send_raw(
        &mut self,
        topic: &str,
        request: &AddEventRequest,
        version: EnvelopeVersion,
        encoding: Encoding,
    ) {
        match self {
            Publisher::Mqtt(c, qos) => {
                let wire = envelope::encode(request, version, encoding, "corr");
                c.publish(topic, &wire, *qos).unwrap();
            }
            Publisher::Nats(c, true) => {
                let payload = envelope::payload_bytes(request, encoding);
                let headers = [
                    ("Content-Type", encoding.content_type()),
                    ("X-Correlation-ID", "corr"),
                ];
                c.publish(&bus::nats_subject(topic), &headers, &payload)
                    .unwrap();
            }
            Publisher::Nats(c, false) => {
                let wire = envelope::encode(request, version, encoding, "corr");
                c.publish(&bus::nats_subject(topic), &[], &wire).unwrap();
            }
            Publisher::Redis(c) => {
                let wire = envelope::encode(request, version, encoding, "corr");
                c.publish(&redis_pubsub::channel_of(topic), &wire).unwrap();
            }
        }
    }

    fn send_bytes(&mut self, topic: &str, bytes: &[u8]) {
        match self {
            Publisher::Mqtt(c, qos) => c.publish(topic, bytes, *qos).unwrap(),
            Publisher::Nats(c, _) => c.publish(&bus::nats_subject(topic), &[], bytes).unwrap(),
            Publisher::Redis(c) => c.publish(&redis_pubsub::channel_of(topic), bytes).unwrap(),
        }
    }
}

/// The in-process engine in EdgeX 3.1's layout, as `coredata-service --store embedded` starts it.
fn engine_store() -> Target {
    in_edgex_layout("embedded")
}

/// The `--target` item in its EdgeX layout, started.
fn in_edgex_layout(item: &str) -> Target {
    let mut spec = edgebench::target::parse_targets(&[item.to_string()])
        .unwrap()
        .remove(0);
    spec.layout = spec.edgex_layout().expect("an EdgeX layout");
    Target::start(&spec).unwrap_or_else(|e| panic!("{e}"))
}

fn subscribe(url: &BusUrl, target: &Target, persist: bool, qos: mqtt::Qos) -> BusSubscribers {
    subscribe_as(url, target, persist, qos, SubscriberMode::EdgeX)
}

fn subscribe_as(
    url: &BusUrl,
    target: &Target,
    persist: bool,
    qos: mqtt::Qos,
    mode: SubscriberMode,
) -> BusSubscribers {
    let stores = target.event_store_opener().unwrap();
    let cfg = SubscriberConfig {
        persist,
        options: SubscribeOptions {
            qos,
            ..SubscribeOptions::default()
        },
        mode,
    };
    BusSubscribers::start(std::slice::from_ref(url), &stores, &cfg)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Waits until the subscribers have handled `n` messages (or fails after 10 s).
fn wait_handled(counts: &Counts, n: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let handled = counts.persisted.load(Relaxed)
            + counts.rejected.load(Relaxed)
            + counts.failed.load(Relaxed);
        let received = counts.received.load(Relaxed);
        if handled >= n && (received >= n) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after 10 s: {}",
            counts.summary()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn n(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(std::sync::atomic::Ordering::Relaxed)
}

/// Publishes `count` events of each release's envelope (half of them with a Binary reading,
/// so CBOR) on `url` and checks the store holds exactly those events.
fn delivers_and_persists_exactly(url: &BusUrl, qos: mqtt::Qos, nats_headers: bool) {
    delivers_and_persists_exactly_into(
        &engine_store(),
        url,
        qos,
        nats_headers,
        SubscriberMode::EdgeX,
    );
}

/// [`delivers_and_persists_exactly`] into `target`'s store, with the subscriber in `mode`.
fn delivers_and_persists_exactly_into(
    target: &Target,
    url: &BusUrl,
    qos: mqtt::Qos,
    nats_headers: bool,
    mode: SubscriberMode,
) {
    let subs = subscribe_as(url, target, true, qos, mode);
    let mut publisher = Publisher::new(url, qos, nats_headers);
    let mut sent = Vec::new();
    for i in 0..40 {
        let device = format!("dev-{}", i % 4);
        let event = if i % 2 == 0 {
            testing::event_of(&device, testing::at(i), &["a", "b"])
        } else {
            testing::every_value_kind(&device, testing::at(i))
        };
        let version = if i % 4 < 2 {
            EnvelopeVersion::V3
        } else {
            EnvelopeVersion::V4
        };
        publisher.send(version, &event);
        sent.push(event);
    }
    wait_handled(subs.counts(), 40);
    let counts = std::sync::Arc::clone(subs.counts());
    subs.stop().unwrap();
    assert_eq!(
        (
            n(&counts.received),
            n(&counts.persisted),
            n(&counts.rejected),
            n(&counts.failed)
        ),
        (40, 40, 0, 0),
        "{url} {mode:?}: {}",
        counts.summary()
    );
    let mut store = target.open_event_store().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 40, "{url}");
    for event in &sent {
        let got = store
            .event_by_id(&event.id)
            .unwrap_or_else(|e| panic!("{url}: {}: {e}", event.id));
        assert_eq!(got.device_name, event.device_name);
        assert_eq!(got.origin, event.origin);
        assert_eq!(got.readings.len(), event.readings.len());
        for (g, s) in got.readings.iter().zip(&event.readings) {
            let mut want = s.value.clone();
            // EdgeX 3.1's Redis layout keeps a Binary reading's media type, not its bytes.
            if let (false, ReadingValue::Binary { data, .. }) =
                (store.keeps_binary_values(), &mut want)
            {
                data.clear();
            }
            assert_eq!(
                (&g.resource_name, &g.value, &g.value_type),
                (&s.resource_name, &want, &s.value_type)
            );
        }
    }
}

fn mosquitto() -> Broker {
    Broker::spawn(BrokerKind::Mosquitto).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn mqtt_over_tcp_delivers_and_persists_exactly_at_qos_0_and_1() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    delivers_and_persists_exactly(&url, mqtt::Qos::AtMostOnce, false);
    delivers_and_persists_exactly(&url, mqtt::Qos::AtLeastOnce, false);
}

#[test]
fn mqtt_over_mosquittos_unix_socket_delivers_and_persists_exactly() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(
        broker
            .unix()
            .expect("mosquitto listens on a socket")
            .clone(),
    );
    assert!(matches!(url.addr(), Addr::Unix(_)));
    delivers_and_persists_exactly(&url, mqtt::Qos::AtMostOnce, false);
}

#[test]
fn nats_delivers_and_persists_exactly_in_both_of_edgexs_formats() {
    let broker = Broker::spawn(BrokerKind::Nats).unwrap_or_else(|e| panic!("{e}"));
    assert!(broker.unix().is_none());
    let url = BusUrl::Nats(broker.tcp().clone());
    delivers_and_persists_exactly(&url, mqtt::Qos::AtMostOnce, true);
    delivers_and_persists_exactly(&url, mqtt::Qos::AtMostOnce, false);
}

#[test]
fn redis_pubsub_delivers_and_persists_exactly_over_tcp_and_a_unix_socket() {
    common::require_redis_server();
    for item in ["redis-tcp", "redis-uds"] {
        let server = common::start(item);
        let addr = match server.redis_endpoint() {
            Some(edgebench::target::Endpoint::Tcp { host, port }) => Addr::Tcp { host, port },
            Some(edgebench::target::Endpoint::Unix(path)) => Addr::Unix(path),
            None => panic!("{item} has an endpoint"),
        };
        delivers_and_persists_exactly(&BusUrl::RedisPubSub(addr), mqtt::Qos::AtMostOnce, false);
    }
}

#[test]
fn bad_messages_are_counted_as_rejected_and_the_loop_goes_on() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let target = engine_store();
    let subs = subscribe(&url, &target, true, mqtt::Qos::AtMostOnce);
    let mut publisher = Publisher::new(&url, mqtt::Qos::AtMostOnce, false);
    let event = testing::event_of("dev-1", testing::at(1), &["a"]);
    let topic = envelope::event_topic("edgex", "svc", &event);
    // A stray publisher's junk, then an event on a topic naming another device.
    publisher.send_bytes(&topic, b"not an envelope");
    let request = AddEventRequest {
        api_version: "v3".into(),
        request_id: String::new(),
        event: EventDto::of(&event),
    };
    let wrong = topic.replace("dev-1", "dev-2");
    publisher.send_raw(&wrong, &request, EnvelopeVersion::V4, Encoding::Json);
    // An event without readings fails the request's own rules.
    let empty = AddEventRequest {
        event: EventDto {
            readings: Vec::new(),
            ..EventDto::of(&event)
        },
        ..request.clone()
    };
    publisher.send_raw(&topic, &empty, EnvelopeVersion::V3, Encoding::Json);
    // And a good one, which must still be persisted.
    publisher.send(EnvelopeVersion::V4, &event);
    wait_handled(subs.counts(), 4);
    let counts = std::sync::Arc::clone(subs.counts());
    subs.stop().unwrap();
    assert_eq!(
        (
            n(&counts.received),
            n(&counts.rejected),
            n(&counts.persisted)
        ),
        (4, 3, 1),
        "{}",
        counts.summary()
    );
    let first = counts.first_rejection().unwrap();
    assert!(first.contains("not an EdgeX envelope"), "{first}");
    let mut store = target.open_event_store().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 1);
    store.event_by_id(&event.id).unwrap();
}

#[test]
fn persist_false_receives_and_validates_but_stores_nothing() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let target = engine_store();
    let subs = subscribe(&url, &target, false, mqtt::Qos::AtMostOnce);
    let mut publisher = Publisher::new(&url, mqtt::Qos::AtMostOnce, false);
    for i in 0..10 {
        publisher.send(
            EnvelopeVersion::V4,
            &testing::event_of("d", testing::at(i), &["a"]),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while n(&subs.counts().received) < 10 {
        assert!(Instant::now() < deadline, "{}", subs.counts().summary());
        std::thread::sleep(Duration::from_millis(10));
    }
    let counts = std::sync::Arc::clone(subs.counts());
    subs.stop().unwrap();
    assert_eq!(
        (n(&counts.persisted), n(&counts.rejected), n(&counts.failed)),
        (0, 0, 0)
    );
    let mut store = target.open_event_store().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 0);
}

#[test]
fn an_unreachable_broker_is_one_line_naming_it() {
    let port = edgebench::transport::child::free_port().unwrap();
    let url = BusUrl::parse(&format!("mqtt://127.0.0.1:{port}")).unwrap();
    let e = subscribe_error(&url);
    assert!(
        e.contains(&format!("--bus mqtt://127.0.0.1:{port}: cannot subscribe")),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn core_data_subscribes_to_edgexs_device_events_filter() {
    assert_eq!(EVENTS_FILTER, "edgex/events/device/#");
}

/// Starts `edgebench coredata-service --store embedded --listen 127.0.0.1:0 --bus URL` as a
/// process and reads its status lines up to the store's: (the child, its `http://HOST:PORT`
/// base, the lines read, the rest of its stderr).
fn coredata_service(
    url: &BusUrl,
) -> (
    std::process::Child,
    String,
    Vec<String>,
    std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
) {
    coredata_service_with(&["--bus".to_string(), url.to_string()])
}

/// [`coredata_service`] with these bus flags.
fn coredata_service_with(
    bus: &[String],
) -> (
    std::process::Child,
    String,
    Vec<String>,
    std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
) {
    use std::io::{BufRead, BufReader};
    let mut child = common::edgebench()
        .args([
            "coredata-service",
            "--store",
            "embedded",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(bus)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut base, mut said) = (None, Vec::new());
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("edgebench coredata-service: listening on ") {
            base = Some(rest.trim_end_matches("/api/v3").to_string());
        }
        let last = line.starts_with("edgebench coredata-service: store ");
        said.push(line);
        if last {
            break;
        }
    }
    let base = base.unwrap_or_else(|| panic!("it says where it listens: {said:?}"));
    (child, base, said, lines)
}

/// `edgebench coredata-service --bus` as a separate process: events published on the bus are
/// counted by its REST API, and SIGTERM prints the bus's counts.
#[test]
fn coredata_service_persists_what_the_bus_brings_and_serves_it_over_rest() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.unix().unwrap().clone());
    let (child, base, said, lines) = coredata_service(&url);
    assert!(
        said.iter()
            .any(|l| l.contains("subscribed to edgex/events/device/# on mqtt+unix://")),
        "{said:?}"
    );
    let base = base.trim_start_matches("http://").to_string();
    let mut publisher = Publisher::new(&url, mqtt::Qos::AtMostOnce, false);
    for i in 0..25 {
        publisher.send(
            EnvelopeVersion::V4,
            &testing::event_of("d", testing::at(i), &["a", "b"]),
        );
    }
    await_event_count(&base, 25);
    stop_and_expect_bus_counts(child, lines, 25);
}

/// Waits (up to 10 s) until the service at `host_port` counts `n` events.
fn await_event_count(host_port: &str, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let body = common::http_get(host_port, "/api/v3/event/count");
        if body.contains(&format!("\"count\":{n}")) {
            return;
        }
        assert!(Instant::now() < deadline, "{body}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops a `coredata-service` with SIGTERM: it exits 0 and says its bus received and persisted
/// `n` events.
fn stop_and_expect_bus_counts(
    mut child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    n: u64,
) {
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let said = format!(
        "edgebench coredata-service: bus received {n}, persisted {n}, rejected 0, failed 0"
    );
    assert!(rest.contains(&said), "{rest:?}");
}

#[test]
fn bad_bus_flags_are_one_line_and_exit_2() {
    for (args, says) in [
        (
            &["--bus", "amqp://h"][..],
            "--bus \"amqp://h\": an unknown scheme",
        ),
        (
            &["--bus", "embedded"],
            "--bus embedded: device services need an address to publish to: give --bus-listen HOST:PORT and/or --bus-unixsocket PATH",
        ),
        (
            &["--bus", "embedded,embedded", "--bus-listen", "127.0.0.1:0"],
            "--bus: embedded is named twice",
        ),
        (
            &["--bus-listen", "127.0.0.1:0"],
            "--bus-listen and --bus-unixsocket serve the embedded broker: add --bus embedded",
        ),
        (
            &["--bus", "embedded", "--bus-listen", "localhost"],
            "--bus-listen \"localhost\"",
        ),
        (
            &["--bus", "mqtt://h", "--subscriber", "workers=99"],
            "--subscriber \"workers=99\": workers must be 1-64",
        ),
        (
            &["--bus", "mqtt://h", "--qos", "2"],
            "--qos 2: exactly-once delivery is not supported",
        ),
    ] {
        let out = common::edgebench()
            .args(["coredata-service", "--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
    let port = edgebench::transport::child::free_port().unwrap();
    let out = common::edgebench()
        .args(["coredata-service", "--listen", "127.0.0.1:0", "--bus"])
        .arg(format!("nats://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains(&format!("--bus nats://127.0.0.1:{port}: cannot subscribe")),
        "{stderr}"
    );
}

/// Runs `edgebench fleet ARGS --out DIR/run` (`args` split at spaces): (status, stderr,
/// fleet.json if written).
fn fleet(args: &str) -> (Option<i32>, String, Option<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let out = common::edgebench()
        .arg("fleet")
        .args(args.split_whitespace())
        .arg("--out")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let json = std::fs::read(dir.path().join("run/fleet.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap());
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        json,
    )
}

fn count(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// `fleet --via bus`: a column per bus, each event published, received and persisted exactly
/// once (the store's own count agrees), and commit latencies measured.
#[test]
fn fleet_via_bus_persists_every_event_on_every_bus() {
    common::require_redis_server();
    let (status, stderr, json) = fleet(
        "--target embedded --via bus --bus mqtt-tcp,mqtt-tcp-nodelay,mqtt-uds,mqtt-tls,nats,redis-pubsub-tcp,redis-pubsub-uds,embedded --events-per-second 200 --duration 1s --warmup 500ms --edgex 3",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let names: Vec<&str> = json["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "RedisDB_Embedded_EdgeX3+MQTT_TCP",
            "RedisDB_Embedded_EdgeX3+MQTT_TCP_NoDelay",
            "RedisDB_Embedded_EdgeX3+MQTT_UDS",
            "RedisDB_Embedded_EdgeX3+MQTT_TLS",
            "RedisDB_Embedded_EdgeX3+NATS_TCP",
            "RedisDB_Embedded_EdgeX3+RedisPubSub_TCP",
            "RedisDB_Embedded_EdgeX3+RedisPubSub_UDS",
            "RedisDB_Embedded_EdgeX3+Bus_Embedded",
        ]
    );
    for t in json["targets"].as_array().unwrap() {
        let s = &t["summary"];
        let b = &s["bus"];
        let sent = count(&s["sent"]);
        // Every due event is sent or, when a loaded machine held the writer past the
        // lateness allowance at the end of the run, reported as unsent backlog (the fleet's
        // contract); what was sent went all the way.
        assert_eq!(sent + count(&s["unsent"]), 300, "{}", t["name"]);
        assert!(sent >= 150, "{}: only {sent} of 300 sent", t["name"]);
        assert_eq!(count(&b["published"]), sent, "{b}");
        assert_eq!(count(&b["received"]), sent, "{b}");
        assert_eq!(count(&b["persisted"]), sent, "{b}");
        assert_eq!(count(&s["stored"]), sent, "{s}");
        assert_eq!(count(&b["lost"]), 0, "{b}");
        assert_eq!(count(&b["rejected"]) + count(&b["failed"]), 0, "{b}");
        // The measured events (after the warmup) were timed from intended publish to commit.
        let commit = &b["commit"];
        assert!(count(&commit["p50_ns"]) > 0, "{commit}");
        assert!(
            count(&commit["max_ns"]) >= count(&commit["p99_ns"]),
            "{commit}"
        );
        // Where the time went: every stage timed, each no longer than the whole.
        let stages = &b["stages"];
        for stage in ["reach", "decode", "validate", "store"] {
            let p50 = count(&stages[stage]["p50_ns"]);
            assert!(
                p50 > 0 && p50 <= count(&commit["max_ns"]),
                "{stage}: {stages}"
            );
        }
        assert_eq!(b["subscriber"], "edgex", "{b}");
        // A second's running totals: published never behind persisted, ending at the end.
        let seconds = b["per_second"].as_array().unwrap();
        assert!(!seconds.is_empty(), "{b}");
        for sec in seconds {
            assert!(count(&sec["published"]) >= count(&sec["persisted"]), "{b}");
        }
        assert_eq!(s["verdict"], "kept up", "{s}");
    }
}

/// At QoS 1 the publishers read the broker's PUBACKs as they go, and every event arrives.
#[test]
fn fleet_via_bus_at_qos_1_persists_every_event() {
    let (status, stderr, json) = fleet(
        "--target embedded --via bus --bus mqtt-tcp --qos 1 --events-per-second 500 \
         --duration 1s --warmup 0s",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let s = &json["targets"][0]["summary"];
    assert_eq!(count(&s["sent"]), 500, "{s}");
    assert_eq!(count(&s["bus"]["persisted"]), 500, "{s}");
    assert_eq!(count(&s["stored"]), 500, "{s}");
    assert_eq!(s["verdict"], "kept up", "{s}");
}

/// With no drain and more events than the subscriber takes in the time, what the bus still
/// carried when the run counted is lost: exactly published − persisted, and the verdict says so.
#[test]
fn fleet_via_bus_counts_what_it_lost_exactly() {
    let (status, stderr, json) = fleet(
        "--target embedded --via bus --bus mqtt-uds --events-per-second 20000 --duration 1s --warmup 0s --drain 0s",
    );
    // Falling behind is a result, not a failed run.
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let s = &json["targets"][0]["summary"];
    let b = &s["bus"];
    let (published, persisted, lost) = (
        count(&b["published"]),
        count(&b["persisted"]),
        count(&b["lost"]),
    );
    assert!(lost > 0, "{b}");
    assert_eq!(lost, published - persisted, "{b}");
    // Mosquitto's own account of the run is read from its $SYS topics.
    assert!(
        b["broker"]
            .as_str()
            .unwrap()
            .contains("$SYS/broker/publish/messages/dropped"),
        "{b}"
    );
    let verdict = s["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with(&format!(
            "fell behind: the bus lost {lost} of {published} events"
        )),
        "{verdict}"
    );
}

#[test]
fn fleet_bus_flags_are_one_line_and_exit_2() {
    let port = edgebench::transport::child::free_port()
        .unwrap()
        .to_string();
    for (args, says) in [
        (
            vec!["--via", "bus"],
            "--via bus needs --bus: give one or more of mqtt-tcp",
        ),
        (
            vec!["--via", "ftp"],
            "--via \"ftp\": use a comma-separated list of direct, http, http-tcp, http-uds, bus",
        ),
        (
            vec!["--bus", "mqtt-tcp"],
            "--bus \"mqtt-tcp\": a bus needs --via bus",
        ),
        (
            vec!["--via", "bus", "--bus", "kafka"],
            "--bus \"kafka\": unknown; give mqtt-tcp",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp", "--qos", "2"],
            "--qos 2: exactly-once",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp", "--edgex", "5"],
            "--edgex \"5\": give 3 or 4",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp,mqtt-tcp"],
            "a bus is named twice",
        ),
        (
            vec![
                "--via",
                "bus",
                "--bus",
                "mqtt-tcp",
                "--target",
                "http://127.0.0.1:59880",
            ],
            "--bus \"MQTT_TCP\": a core-data service by URL subscribes to its own broker; give that broker's URL",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp", "--subscriber", "batch=0"],
            "--subscriber \"batch=0\": batch must be 1-10000",
        ),
        (
            vec!["--subscriber", "workers=2"],
            "--subscriber \"workers=2\": a bus needs --via bus",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp", "--drain", "1h"],
            "--drain \"1h\": give at most 10m",
        ),
        (
            vec!["--via", "bus", "--bus", "mqtt-tcp", "--target", "mini-redis"],
            "--target \"MiniRedis\": a fleet writes EdgeX events, which need a store with an EdgeX layout",
        ),
    ] {
        let out = common::edgebench()
            .arg("fleet")
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    }
    let out = common::edgebench()
        .args(["coredata", "--via", "bus"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--via bus: the ten benchmarks read back"),
        "{stderr}"
    );
    // An unreachable broker fails its column in one line; the other column still runs.
    let (status, stderr, json) = fleet(&format!(
        "--via bus --bus mqtt://127.0.0.1:{port},mqtt-uds --events-per-second 100 --duration 500ms --warmup 0s"
    ));
    assert_eq!(status, Some(1), "{stderr}");
    let json = json.expect("fleet.json");
    let targets = json["targets"].as_array().unwrap();
    assert!(
        targets[0]["error"]
            .as_str()
            .unwrap()
            .contains(&format!("mqtt://127.0.0.1:{port}")),
        "{}",
        targets[0]
    );
    assert_eq!(
        targets[1]["summary"]["verdict"], "kept up",
        "{}",
        targets[1]
    );
}

/// The batching subscriber (#5185) and the workers deliver and persist exactly what was
/// published, into the engine and into PostgreSQL (EdgeX 4.0's schema), JSON and CBOR, both
/// envelopes.
#[test]
fn batch_and_workers_subscribers_persist_exactly_what_was_published() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let modes = [
        SubscriberMode::Batch {
            size: 7,
            wait: Duration::from_millis(20),
        },
        SubscriberMode::Workers(3),
    ];
    for item in ["embedded", "pg-uds"] {
        for mode in modes {
            let target = in_edgex_layout(item);
            for qos in [mqtt::Qos::AtMostOnce, mqtt::Qos::AtLeastOnce] {
                let mut store = target.open_event_store().unwrap();
                store.scrub().unwrap();
                delivers_and_persists_exactly_into(&target, &url, qos, false, mode);
            }
        }
    }
}

/// The batching subscriber acknowledges a QoS 1 message only once its batch is committed:
/// Mosquitto lets 20 unacknowledged messages out to a client (its default
/// `max_inflight_messages`), so with batches of 30 that never fill, exactly 20 arrive and none
/// more until the batch is written; stopping writes it, and the store then holds exactly them.
#[test]
fn the_batch_subscriber_persists_exactly_what_it_acknowledged() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let target = engine_store();
    let mode = SubscriberMode::Batch {
        size: 30,
        wait: Duration::from_secs(10),
    };
    let subs = subscribe_as(&url, &target, true, mqtt::Qos::AtLeastOnce, mode);
    let mut publisher = Publisher::new(&url, mqtt::Qos::AtLeastOnce, false);
    for i in 0..25 {
        publisher.send(
            EnvelopeVersion::V4,
            &testing::event_of("d", testing::at(i), &["a"]),
        );
    }
    let counts = std::sync::Arc::clone(subs.counts());
    let deadline = Instant::now() + Duration::from_secs(5);
    while n(&counts.received) < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Time for more to arrive, were any let out.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        (n(&counts.received), n(&counts.persisted)),
        (20, 0),
        "{}",
        counts.summary()
    );
    let mut store = target.open_event_store().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 0);
    subs.stop().unwrap();
    assert_eq!(
        (n(&counts.received), n(&counts.persisted)),
        (20, 20),
        "{}",
        counts.summary()
    );
    assert_eq!(store.event_count(Filter::all()).unwrap(), 20);
}

/// A batch the store refuses is counted as failed, all of it, and the loop goes on.
#[test]
fn a_refused_batch_counts_every_event_in_it_as_failed() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let target = engine_store();
    // Batches go when 5 are there (the wait is longer than the test).
    let mode = SubscriberMode::Batch {
        size: 5,
        wait: Duration::from_secs(10),
    };
    let subs = subscribe_as(&url, &target, true, mqtt::Qos::AtMostOnce, mode);
    let mut publisher = Publisher::new(&url, mqtt::Qos::AtMostOnce, false);
    let first = testing::event_of("d", testing::at(0), &["a"]);
    // EdgeX 3.1's Redis layout refuses an id it holds: the second batch repeats one.
    let mut events: Vec<Event> = (0..5)
        .map(|i| testing::event_of("d", testing::at(i), &["a"]))
        .collect();
    events[0] = first.clone();
    for e in &events {
        publisher.send(EnvelopeVersion::V3, e);
    }
    wait_handled(subs.counts(), 5);
    for i in 5..10 {
        let e = if i == 7 {
            first.clone()
        } else {
            testing::event_of("d", testing::at(i), &["a"])
        };
        publisher.send(EnvelopeVersion::V3, &e);
    }
    wait_handled(subs.counts(), 10);
    let counts = std::sync::Arc::clone(subs.counts());
    subs.stop().unwrap();
    assert_eq!(
        (n(&counts.persisted), n(&counts.failed)),
        (5, 5),
        "{}",
        counts.summary()
    );
    assert!(
        counts
            .first_failure()
            .unwrap()
            .contains("a batch of 5 events"),
        "{}",
        counts.summary()
    );
    let mut store = target.open_event_store().unwrap();
    assert_eq!(store.event_count(Filter::all()).unwrap(), 5);
}

/// Someone's core-data service as the subscriber: the fleet publishes on the broker it
/// subscribes to and counts what arrived through its REST API.
#[test]
fn fleet_via_bus_measures_a_core_data_service_subscribed_to_its_own_broker() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.unix().unwrap().clone());
    let (mut child, base, _, _rest) = coredata_service(&url);
    let (status, stderr, json) = fleet(&format!(
        "--target {base} --via bus --bus {url} --events-per-second 200 --duration 1s --warmup 0s"
    ));
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let t = &json["targets"][0];
    assert_eq!(t["name"], "EdgeX_HTTP_TCP+MQTT_UDS", "{t}");
    let s = &t["summary"];
    let b = &s["bus"];
    assert_eq!(count(&s["sent"]), 200, "{s}");
    assert_eq!(count(&b["published"]), 200, "{b}");
    assert_eq!(count(&b["persisted"]), 200, "{b}");
    assert_eq!(count(&b["lost"]), 0, "{b}");
    assert!(
        b["counted_by"].as_str().unwrap().contains("/event/count"),
        "{b}"
    );
    assert!(
        b.get("commit").is_none() && b.get("stages").is_none(),
        "{b}"
    );
    assert_eq!(s["verdict"], "kept up", "{s}");
}

/// `coredata-service --bus embedded`: the engine's broker lives in the service's process, its
/// subscriber reads it without a socket, and device services publish to it as to Redis over
/// TCP or a Unix socket. The fleet measures it through the REST API's counts; a second
/// publisher on the Unix socket lands in the same store.
#[test]
fn coredata_service_embedded_bus_takes_what_device_services_publish_over_resp() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("bus.sock");
    let (child, base, said, lines) = coredata_service_with(&[
        "--bus".into(),
        "embedded".into(),
        "--bus-listen".into(),
        "127.0.0.1:0".into(),
        "--bus-unixsocket".into(),
        socket.display().to_string(),
    ]);
    let on = |scheme: &str| {
        said.iter()
            .find_map(|l| {
                l.strip_prefix("edgebench coredata-service: embedded bus for publishers on ")
                    .filter(|url| url.starts_with(scheme))
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("it says where publishers reach it: {said:?}"))
    };
    let (tcp, unix) = (on("redis://"), on("redis+unix://"));
    assert_eq!(unix, format!("redis+unix://{}", socket.display()));
    assert!(
        said.iter()
            .any(|l| l.contains("subscribed to edgex/events/device/# on embedded")),
        "{said:?}"
    );
    let (status, stderr, json) = fleet(&format!(
        "--target {base} --via bus --bus {tcp} --events-per-second 200 --duration 1s --warmup 0s"
    ));
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let t = &json["targets"][0];
    assert_eq!(t["name"], "EdgeX_HTTP_TCP+RedisPubSub_TCP", "{t}");
    let b = &t["summary"]["bus"];
    assert_eq!(count(&b["published"]), 200, "{b}");
    assert_eq!(count(&b["persisted"]), 200, "{b}");
    assert_eq!(count(&b["lost"]), 0, "{b}");
    let mut publisher =
        Publisher::new(&BusUrl::parse(&unix).unwrap(), mqtt::Qos::AtMostOnce, false);
    for i in 0..25 {
        publisher.send(
            EnvelopeVersion::V3,
            &testing::event_of("uds", testing::at(i), &["a"]),
        );
    }
    await_event_count(base.trim_start_matches("http://"), 225);
    stop_and_expect_bus_counts(child, lines, 225);
    assert!(!socket.exists(), "the broker's socket is removed on exit");
}

/// `--find-max` through a bus: every probe is a fleet run through the same bus, and the answer
/// is a rate at which one kept up (no loss, p99 publish-to-commit under the SLO).
#[test]
fn find_max_runs_through_the_bus() {
    let (status, stderr, json) = fleet(
        "--target embedded --via bus --bus embedded --find-max --slo 1s --events-per-second 200 --readings-per-event 1 --duration 300ms --warmup 0s --drain 1s",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let t = &json["targets"][0];
    let f = &t["find_max"];
    let probes = f["probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "{f}");
    let max = f["max_rate"].as_f64().expect("a rate kept up");
    assert!(max >= 200.0, "{f}");
    let s = &t["summary"];
    assert_eq!(s["offered_per_sec"], max, "{s}");
    // The summary is of a run through the bus, in which nothing was lost.
    assert_eq!(count(&s["bus"]["lost"]), 0, "{s}");
    assert_eq!(count(&s["bus"]["persisted"]), count(&s["sent"]), "{s}");
}

/// `--persist false` measures the bus alone: every event received, decoded and validated,
/// none stored, nothing lost, and no "missing" events held against the store.
#[test]
fn fleet_via_bus_with_persist_false_receives_everything_and_stores_nothing() {
    let (status, stderr, json) = fleet(
        "--target embedded --via bus --bus embedded,mqtt-tcp --persist false --events-per-second 300 --duration 1s --warmup 0s",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    for t in json["targets"].as_array().unwrap() {
        let s = &t["summary"];
        let b = &s["bus"];
        assert_eq!(count(&s["sent"]), 300, "{s}");
        assert_eq!(count(&b["received"]), 300, "{b}");
        assert_eq!(count(&b["persisted"]), 0, "{b}");
        assert_eq!(count(&b["lost"]), 0, "{b}");
        assert_eq!(count(&s["stored"]), 0, "{s}");
        assert!(s.get("missing").is_none(), "{s}");
        assert_eq!(b["subscriber"], "edgex, persist false", "{b}");
        assert!(b["stages"].get("store").is_none(), "{b}");
        assert_eq!(s["verdict"], "kept up", "{s}");
    }
}

/// A broker killed in the middle of a run: the column still reports what it measured, and
/// the verdict says the bus broke.
#[test]
fn a_broker_killed_mid_run_is_reported_and_what_ran_is_kept() {
    let broker = mosquitto();
    let url = BusUrl::mqtt(broker.tcp().clone());
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        drop(broker);
    });
    let (status, stderr, json) = fleet(&format!(
        "--target embedded --via bus --bus {url} --events-per-second 200 --duration 3s --warmup 0s --drain 1s"
    ));
    killer.join().unwrap();
    let json = json.unwrap_or_else(|| panic!("fleet.json: {stderr}"));
    let s = &json["targets"][0]["summary"];
    assert!(status == Some(0) || status == Some(1), "{stderr}");
    // What ran before the broker went is kept: about 1.5 s of 200 events/s.
    let sent = count(&s["sent"]);
    assert!((100..=600).contains(&sent), "{s}");
    assert!(
        count(&s["failed"]) > 0,
        "publishes after the kill fail: {s}"
    );
    let verdict = s["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("fell behind"), "{verdict}");
    let b = &s["bus"];
    assert!(
        b["cut_off"].as_str().unwrap().contains(&url.to_string()),
        "the subscriber's broken connection is named: {b}"
    );
}

/// Bus runs from two load hosts merge: the counts add up, the histograms and the seconds
/// merge, and the page renders.
#[test]
fn report_merge_adds_up_two_hosts_bus_runs() {
    let dir = tempfile::tempdir().unwrap();
    for h in ["a", "b"] {
        let out = format!("fb-{h}");
        common::edgebench_ok(
            dir.path(),
            &[
                "fleet",
                "--via",
                "bus",
                "--bus",
                "embedded",
                "--devices",
                "5",
                "--events-per-second",
                "100",
                "--duration",
                "2s",
                "--warmup",
                "0s",
                "--run-id",
                "fb",
                "--out",
                &out,
            ],
        );
    }
    common::edgebench_ok(
        dir.path(),
        &["report", "merge", "fb-a", "fb-b", "--out", "fb-merged"],
    );
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.path().join(name).join("fleet.json")).unwrap())
            .unwrap()
    };
    let (a, b, m) = (read("fb-a"), read("fb-b"), read("fb-merged"));
    let bus = |v: &serde_json::Value| v["targets"][0]["summary"]["bus"].clone();
    let (ba, bb, bm) = (bus(&a), bus(&b), bus(&m));
    for field in ["published", "received", "persisted", "lost"] {
        assert_eq!(
            count(&bm[field]),
            count(&ba[field]) + count(&bb[field]),
            "{field}: {bm}"
        );
    }
    assert_eq!(count(&bm["published"]), 400, "{bm}");
    let seconds = |v: &serde_json::Value| v["per_second"].as_array().unwrap().len();
    assert_eq!(seconds(&bm), seconds(&ba).min(seconds(&bb)), "{bm}");
    assert_eq!(
        count(&bm["per_second"][0]["published"]),
        count(&ba["per_second"][0]["published"]) + count(&bb["per_second"][0]["published"])
    );
    assert!(count(&bm["stages"]["decode"]["max_ns"]) > 0, "{bm}");
    assert!(
        count(&bm["commit"]["max_ns"]) >= count(&ba["commit"]["max_ns"]),
        "{bm}"
    );
    common::edgebench_ok(dir.path(), &["report", "html", "fb-merged"]);
}

// --- EdgeX's secure bus: Mosquitto with a TLS listener and a password file (issue 30) ---

const BUS_USER: &str = "edgex-bus";
const BUS_PASSWORD: &str = "bus-s3cret";

fn secure_mosquitto() -> Broker {
    Broker::spawn_secure(BUS_USER, BUS_PASSWORD).unwrap_or_else(|e| panic!("{e}"))
}

/// Why subscribing to `url` failed, as the subscriber says it (one line).
fn subscribe_error(url: &BusUrl) -> String {
    let target = engine_store();
    let stores = target.event_store_opener().unwrap();
    let cfg = SubscriberConfig {
        persist: true,
        options: SubscribeOptions::default(),
        mode: SubscriberMode::EdgeX,
    };
    let e = BusSubscribers::start(std::slice::from_ref(url), &stores, &cfg)
        .err()
        .unwrap_or_else(|| panic!("{url}: subscribed"));
    assert!(!e.contains('\n'), "{e}");
    assert!(!e.contains(BUS_PASSWORD), "{e}");
    e
}

#[test]
fn mqtts_with_a_password_delivers_and_persists_exactly_at_qos_0_and_1() {
    let broker = secure_mosquitto();
    let url = broker.url();
    assert!(url
        .to_string()
        .starts_with(&format!("mqtts://{BUS_USER}:***@127.0.0.1:")));
    delivers_and_persists_exactly(&url, mqtt::Qos::AtMostOnce, false);
    delivers_and_persists_exactly(&url, mqtt::Qos::AtLeastOnce, false);
    // The same URL, as a user types it, parses to the same thing.
    let typed = format!(
        "mqtts://{BUS_USER}:{BUS_PASSWORD}@{}?cacert={}",
        broker.tcp(),
        broker_ca(&url).display()
    );
    assert_eq!(BusUrl::parse(&typed).unwrap(), url);
}

/// The CA file a secure broker's URL trusts.
fn broker_ca(url: &BusUrl) -> std::path::PathBuf {
    match url {
        BusUrl::Mqtt(_, security) => security.tls.clone().unwrap().ca_file.unwrap(),
        other => panic!("{other}"),
    }
}

#[test]
fn a_secure_broker_refuses_a_wrong_password_no_password_and_plain_text_in_one_line() {
    let broker = secure_mosquitto();
    let BusUrl::Mqtt(addr, security) = broker.url() else {
        panic!("mosquitto speaks MQTT")
    };
    let with = |credentials: Option<(&str, &str)>, tls: bool| {
        BusUrl::Mqtt(
            addr.clone(),
            mqtt::Security {
                tls: security.tls.clone().filter(|_| tls),
                credentials: credentials.map(|(u, p)| mqtt::Credentials {
                    username: u.into(),
                    password: p.into(),
                }),
            },
        )
    };

    let url = with(Some((BUS_USER, "wrong")), true);
    let e = subscribe_error(&url);
    assert!(
        e.starts_with(&format!("--bus {url}: cannot subscribe")),
        "names the broker's URL: {e}"
    );
    // Mosquitto 2 answers "not authorized" (5) to a wrong password, where MQTT 3.1.1 has 4.
    assert!(
        e.contains("the broker refused the connection: not authorized (CONNACK return code 5); check the user and password in the URL"),
        "{e}"
    );
    assert!(!e.contains("is the broker running"), "it is: {e}");

    // Mosquitto says "not authorized" (5) to a client without a user when anonymous is off.
    let url = with(None, true);
    let e = subscribe_error(&url);
    assert!(e.contains("not authorized (CONNACK return code 5)"), "{e}");
    assert!(
        e.contains("mqtts://USER:PASSWORD@HOST:PORT"),
        "the fix: {e}"
    );

    // Plain text to the TLS listener: refused, not a hang (the CONNACK wait has its deadline).
    let url = with(Some((BUS_USER, BUS_PASSWORD)), false);
    let e = subscribe_error(&url);
    assert!(
        e.starts_with(&format!("--bus {url}: cannot subscribe")),
        "{e}"
    );
    assert!(
        e.contains("use mqtts://") || e.contains("did not answer in time"),
        "{e}"
    );

    // A CA that did not sign the broker's certificate fails the handshake.
    let other = tempfile::tempdir().unwrap();
    let files = edgebench::transport::certs::PrivateCa::new()
        .unwrap()
        .write_files(other.path())
        .unwrap();
    let url = BusUrl::parse(&format!(
        "mqtts://{BUS_USER}:{BUS_PASSWORD}@{addr}?cacert={}",
        files.ca_cert.display()
    ))
    .unwrap();
    let e = subscribe_error(&url);
    assert!(e.contains("TLS handshake: invalid peer certificate"), "{e}");
    assert!(
        e.contains("give the CA that signed it: ?cacert=FILE"),
        "the fix: {e}"
    );
}

/// `fleet --via bus` over the secure broker's URL: the column says MQTT_TLS and every event
/// arrives.
#[test]
fn fleet_via_bus_over_mqtts_with_a_password_persists_every_event() {
    let broker = secure_mosquitto();
    let url = format!(
        "mqtts://{BUS_USER}:{BUS_PASSWORD}@{}?cacert={}",
        broker.tcp(),
        broker_ca(&broker.url()).display()
    );
    let (status, stderr, json) = fleet(&format!(
        "--target embedded --via bus --bus {url} --events-per-second 200 --duration 1s \
         --warmup 0s --edgex 3"
    ));
    assert_eq!(status, Some(0), "{stderr}");
    let json = json.expect("fleet.json");
    let t = &json["targets"][0];
    assert_eq!(t["name"], "RedisDB_Embedded_EdgeX3+MQTT_TLS", "{t}");
    let s = &t["summary"];
    let sent = count(&s["sent"]);
    assert!(sent > 0, "{s}");
    assert_eq!(count(&s["bus"]["persisted"]), sent, "{s}");
    assert_eq!(count(&s["stored"]), sent, "{s}");
    assert!(
        !json.to_string().contains(BUS_PASSWORD),
        "the password stays out of fleet.json"
    );
}
