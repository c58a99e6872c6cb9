//! The `embedded` bus: the engine's own Pub/Sub broker ([`edgebench_engine::server::pubsub`]),
//! in this process, with Redis Pub/Sub's semantics and no socket: a publish is a call that
//! hands the message to every matching subscriber's queue, and the subscriber takes it off
//! that queue. Topics travel as EdgeX 3.x's Redis channels (`edgex.events.device.…`,
//! [`redis_pubsub::patterns_of`]), so it is Redis Pub/Sub minus the network.
//!
//! The queue is bounded as redis-server bounds a Pub/Sub client: past
//! [`pubsub::PENDING_LIMIT`] bytes waiting, the broker stops delivering to the subscriber
//! and [`EmbeddedSubscriber::next`] reports it cut off, as `client-output-buffer-limit pubsub
//! 32mb` disconnects a slow subscriber.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use edgebench_engine::resp::Protocol;
use edgebench_engine::server::pubsub::{self, Broker, Kind, Subscriptions};

use super::{redis_pubsub, Delivery, Subscriber};

/// A broker for one run's publishers and subscriber.
pub fn broker() -> Arc<Broker> {
    Arc::new(Broker::new())
}

/// Publishes `payload` on the EdgeX topic `topic`; returns how many subscriptions got it.
pub fn publish(broker: &Broker, topic: &str, payload: &[u8]) -> usize {
    broker.publish(redis_pubsub::channel_of(topic).as_bytes(), payload)
}

/// A subscription to the engine's broker.
pub struct EmbeddedSubscriber {
    subscriptions: Subscriptions,
    /// Waits on the broker's queue (a tokio channel) when it is empty.
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for EmbeddedSubscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbeddedSubscriber")
    }
}

/// Subscribes to `filter` (MQTT syntax) as EdgeX 3.x subscribes on Redis: its patterns.
pub fn subscribe(broker: &Arc<Broker>, filter: &str) -> io::Result<EmbeddedSubscriber> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let mut subscriptions = Subscriptions::new(Arc::clone(broker), 1);
    let patterns = redis_pubsub::patterns_of(filter);
    let names: Vec<&[u8]> = patterns.iter().map(|p| p.as_bytes()).collect();
    // The confirmations a RESP client would read: nobody reads them here.
    let mut confirmations = Vec::new();
    subscriptions.subscribe(Kind::Pattern, &names, Protocol::Resp2, &mut confirmations);
    Ok(EmbeddedSubscriber {
        subscriptions,
        runtime,
    })
}

impl EmbeddedSubscriber {
    fn delivery(d: &pubsub::Delivery) -> Delivery {
        Delivery {
            topic: redis_pubsub::topic_of(&String::from_utf8_lossy(d.channel())),
            payload: d.payload().to_vec(),
            content_type: None,
            correlation_id: None,
            ack: None,
        }
    }
}

impl Subscriber for EmbeddedSubscriber {
    fn next(&mut self, timeout: Duration) -> io::Result<Option<Delivery>> {
        if self.subscriptions.overflowed() {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "the embedded broker cut the subscriber off: more than {} MiB of messages \
                     waited for it (Redis's client-output-buffer-limit pubsub)",
                    pubsub::PENDING_LIMIT >> 20
                ),
            ));
        }
        // Queued already: no waiting, no runtime.
        if let Some(d) = self.subscriptions.try_recv() {
            return Ok(Some(Self::delivery(&d)));
        }
        let subscriptions = &mut self.subscriptions;
        let received = self
            .runtime
            .block_on(async { tokio::time::timeout(timeout, subscriptions.recv()).await });
        Ok(received.ok().flatten().map(|d| Self::delivery(&d)))
    }

    fn done(&mut self, _: &Delivery) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_subscriber_gets_edgex_topics_in_order_and_waits_when_idle() {
        let broker = broker();
        let mut sub = subscribe(&broker, "edgex/events/device/#").unwrap();
        assert_eq!(publish(&broker, "edgex/events/device/s/p/d/src", b"one"), 1);
        assert_eq!(publish(&broker, "edgex/other/x", b"no"), 0);
        assert_eq!(publish(&broker, "edgex/events/device/s/p/d/src", b"two"), 1);
        let first = sub.next(Duration::from_millis(10)).unwrap().unwrap();
        assert_eq!(first.topic, "edgex/events/device/s/p/d/src");
        assert_eq!(first.payload, b"one");
        let second = sub.next(Duration::from_millis(10)).unwrap().unwrap();
        assert_eq!(second.payload, b"two");
        let started = std::time::Instant::now();
        assert!(sub.next(Duration::from_millis(30)).unwrap().is_none());
        assert!(started.elapsed() >= Duration::from_millis(30));
        // A publish from another thread wakes a waiting subscriber.
        let b = Arc::clone(&broker);
        let publisher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            publish(&b, "edgex/events/device/s/p/d/src", b"three")
        });
        let third = sub.next(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!(third.payload, b"three");
        assert_eq!(publisher.join().unwrap(), 1);
    }

    #[test]
    fn a_subscriber_that_lets_32_mib_pile_up_is_cut_off() {
        let broker = broker();
        let mut sub = subscribe(&broker, "edgex/events/device/#").unwrap();
        let payload = vec![b'x'; 1 << 20];
        for _ in 0..40 {
            publish(&broker, "edgex/events/device/s/p/d/src", &payload);
        }
        let e = sub.next(Duration::from_millis(10)).unwrap_err();
        assert!(e.to_string().contains("cut the subscriber off"), "{e}");
    }
}
