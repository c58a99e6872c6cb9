//! What a broker says it lost (`transport::bus::stats`), against real brokers each spawned for
//! its test: a fresh broker says 0, and after a subscriber that never reads has been flooded
//! the broker's own count has risen, exactly where the flood lets us be exact.

use std::time::{Duration, Instant};

use edgebench::target::Endpoint;
use edgebench::transport::bus::broker::{Broker, BrokerKind};
use edgebench::transport::bus::stats::{self, BrokerDrops};
use edgebench::transport::bus::{mqtt, nats, redis_pubsub, Addr, BusUrl};

use crate::common;

const TIMEOUT: Duration = Duration::from_secs(5);

/// Reads until `done` holds (or fails after `TIMEOUT`): a broker updates its counts a little
/// after the fact (nats-server's write deadline, Redis's asynchronous close).
fn read_until(
    url: &BusUrl,
    monitor: Option<u16>,
    done: impl Fn(&BrokerDrops) -> bool,
) -> BrokerDrops {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let drops = stats::broker_drops(url, monitor, TIMEOUT).unwrap_or_else(|e| panic!("{e}"));
        if done(&drops) || Instant::now() >= deadline {
            return drops;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads from a subscriber that was closed until its connection says so.
fn closed<T>(mut next: impl FnMut() -> std::io::Result<Option<T>>) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    while Instant::now() < deadline {
        if next().is_err() {
            return true;
        }
    }
    false
}

#[test]
fn mosquitto_counts_every_message_it_drops_for_a_subscriber_that_does_not_read() {
    let broker = Broker::spawn(BrokerKind::Mosquitto).unwrap_or_else(|e| panic!("{e}"));
    let url = BusUrl::mqtt(broker.tcp().clone());
    let watch = stats::watch(&url, None, TIMEOUT).unwrap_or_else(|e| panic!("{e}"));
    // The same answer over the Unix socket, read at the same time: both wait for the next
    // $SYS pass.
    let unix = BusUrl::mqtt(broker.unix().unwrap().clone());
    let over_unix = std::thread::spawn(move || stats::broker_drops(&unix, None, TIMEOUT));
    let fresh = watch.read(TIMEOUT).unwrap();
    assert_eq!(
        fresh,
        BrokerDrops {
            dropped: Some(0),
            disconnected: None,
            source: stats::MOSQUITTO_DROPPED,
            pubsub_clients: None,
            missing: None,
        }
    );
    assert_eq!(over_unix.join().unwrap().unwrap(), fresh);

    // No keep-alive: a subscriber that sends nothing is not timed out.
    let connect = |id: &str, keep_alive| {
        let options = mqtt::Options {
            client_id: id.into(),
            keep_alive,
            connect_timeout: TIMEOUT,
            ..mqtt::Options::default()
        };
        mqtt::Client::connect(broker.tcp(), &options).unwrap()
    };
    let mut slow = connect("slow", Duration::ZERO);
    slow.subscribe("flood/#", mqtt::Qos::AtMostOnce, TIMEOUT)
        .unwrap();
    let mut publisher = connect("flood", Duration::from_secs(10));
    const SENT: u64 = 10_000;
    let payload = vec![b'x'; 4096];
    for _ in 0..SENT {
        publisher
            .publish("flood/x", &payload, mqtt::Qos::AtMostOnce)
            .unwrap();
    }
    // A QoS 1 publish nobody subscribes to: its PUBACK says the broker has routed (or
    // dropped) every publish before it.
    publisher
        .publish("marker", b"", mqtt::Qos::AtLeastOnce)
        .unwrap();
    let deadline = Instant::now() + TIMEOUT;
    while publisher.poll_acks(Duration::from_millis(50)).unwrap() < 1 {
        assert!(Instant::now() < deadline, "no PUBACK for the marker");
    }

    let after = watch.read(TIMEOUT).unwrap();
    let dropped = after.dropped.expect("a count");
    assert!(dropped > 0, "{after}");
    assert!(after.to_string().starts_with("broker: "), "{after}");
    // What the broker did not drop, the subscriber gets: exactly the rest.
    let mut received = 0;
    while slow.next(Duration::from_millis(500)).unwrap().is_some() {
        received += 1;
    }
    assert_eq!(received + dropped, SENT, "{after}");
}

#[test]
fn nats_counts_the_slow_consumer_it_closes() {
    // A short write deadline (default 10 s) so the non-reading subscriber is found slow at
    // once; the pending limit (64 MB) is far above the flood, so nothing stalls the publisher.
    let broker = Broker::spawn_with(BrokerKind::Nats, "write_deadline: \"200ms\"")
        .unwrap_or_else(|e| panic!("{e}"));
    let url = BusUrl::Nats(broker.tcp().clone());
    let monitor = broker.monitor_port();
    assert!(monitor.is_some());
    let fresh = stats::broker_drops(&url, monitor, TIMEOUT).unwrap();
    assert_eq!(
        fresh,
        BrokerDrops {
            dropped: None,
            disconnected: Some(0),
            source: stats::NATS_SLOW_CONSUMERS,
            pubsub_clients: None,
            missing: None,
        }
    );
    // A NATS URL names no monitoring port: no count, and the line says why.
    let by_url = stats::broker_drops(&url, None, TIMEOUT).unwrap();
    assert_eq!((by_url.dropped, by_url.disconnected), (None, None));
    assert!(by_url.to_string().contains("monitoring port"), "{by_url}");

    let mut slow = nats::Client::connect(broker.tcp(), "slow", TIMEOUT).unwrap();
    slow.subscribe("flood.>", None, TIMEOUT).unwrap();
    let mut publisher = nats::Client::connect(broker.tcp(), "flood", TIMEOUT).unwrap();
    let payload = vec![b'x'; 64 * 1024];
    for _ in 0..384 {
        publisher.publish("flood.x", &[], &payload).unwrap();
    }
    publisher.flush(TIMEOUT).unwrap();

    let after = read_until(&url, monitor, |d| d.disconnected != Some(0));
    assert_eq!(after.disconnected, Some(1), "{after}");
    assert_eq!(
        after.to_string(),
        "broker: 1 client disconnected (/varz slow_consumers)"
    );
    assert!(closed(|| slow.next(Duration::from_millis(200))));
}

#[test]
fn redis_closes_a_subscriber_over_its_output_limit_and_says_what_it_can() {
    common::require_redis_server();
    let server = common::start("redis-tcp");
    let Some(Endpoint::Tcp { host, port }) = server.redis_endpoint() else {
        panic!("redis-tcp has a TCP endpoint");
    };
    let mut admin = redis::Client::open(format!("redis://{host}:{port}"))
        .unwrap()
        .get_connection()
        .unwrap();
    let info: String = redis::cmd("INFO").arg("server").query(&mut admin).unwrap();
    let version: Vec<u32> = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .expect("a version")
        .trim()
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    // INFO counts output-limit disconnections from Redis 7.4 on.
    let counts = version[..2] >= [7, 4][..];
    let addr = Addr::Tcp { host, port };
    let url = BusUrl::RedisPubSub(addr.clone());

    let fresh = stats::broker_drops(&url, None, TIMEOUT).unwrap();
    assert_eq!(fresh.dropped, None);
    assert_eq!(fresh.source, stats::REDIS_OUTPUT_LIMIT_DISCONNECTIONS);
    assert_eq!(fresh.pubsub_clients, Some(0));
    if counts {
        assert_eq!(
            (fresh.disconnected, fresh.missing.as_deref()),
            (Some(0), None)
        );
    } else {
        assert_eq!(fresh.disconnected, None);
        let why = fresh.missing.as_deref().unwrap();
        assert!(why.contains("7.4"), "{why}");
        assert!(why.contains(&format!("Redis {}.", version[0])), "{why}");
    }

    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("client-output-buffer-limit")
        .arg("pubsub 1mb 0 0")
        .query(&mut admin)
        .unwrap();
    let mut slow = redis_pubsub::Client::connect(&addr, TIMEOUT).unwrap();
    slow.psubscribe(&["flood.*".to_string()], TIMEOUT).unwrap();
    let subscribed = stats::broker_drops(&url, None, TIMEOUT).unwrap();
    assert_eq!(subscribed.pubsub_clients, Some(1), "{subscribed}");

    let mut publisher = redis_pubsub::Client::connect(&addr, TIMEOUT).unwrap();
    const SENT: u64 = 512;
    let payload = vec![b'x'; 64 * 1024];
    for i in 0..SENT {
        publisher.publish("flood.x", &payload).unwrap();
        if i % 64 == 0 {
            publisher.poll_published(Duration::ZERO).unwrap();
        }
    }
    let deadline = Instant::now() + TIMEOUT;
    while publisher.poll_published(Duration::from_millis(50)).unwrap() < SENT {
        assert!(Instant::now() < deadline, "PUBLISH replies missing");
    }

    let after = read_until(&url, None, |d| d.pubsub_clients == Some(0));
    assert_eq!(after.pubsub_clients, Some(0), "{after}");
    assert_eq!(after.disconnected, counts.then_some(1), "{after}");
    assert!(
        after.to_string().contains("0 Pub/Sub clients connected"),
        "{after}"
    );
    assert!(closed(|| slow.next(Duration::from_millis(200))));
}
