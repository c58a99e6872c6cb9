//! The message bus: how EdgeX's device services hand events to core-data in EdgeX 3.x and 4.x.
//! Three protocols, each a blocking client of its own ([`mqtt`], [`nats`], [`redis_pubsub`]),
//! over TCP or a Unix socket ([`stream`]); private brokers edgebench starts ([`broker`]); and
//! one [`Subscriber`] seam the core-data subscriber reads from, whatever the protocol.
//!
//! Why our own clients rather than rumqttc, async-nats or redis-rs's `PubSub`: the core-data
//! subscriber is EdgeX's loop, one blocking read of one message, handled, then acknowledged;
//! those crates are async clients that run an event loop and a queue of their own between the
//! socket and the caller (or, for redis-rs, hold the connection borrowed for the whole
//! subscription), which would add a hop to the very path the bus is timed on. These three are
//! small (a frame parser and a few packets each) over one [`stream::Reader`] that bounds every
//! frame, so a stray publisher cannot make edgebench allocate without limit.
//!
//! Topics are written MQTT's way everywhere above this module (`edgex/events/device/#`), as
//! EdgeX writes them; each protocol translates as EdgeX's go-mod-messaging does (NATS: `/` → `.`,
//! `+` → `*`, `#` → `>`; Redis: [`redis_pubsub::patterns_of`]) and a received subject or
//! channel comes back in MQTT form.

pub mod broker;
pub mod embedded;
pub mod mqtt;
pub mod nats;
pub mod redis_pubsub;
pub mod stats;
pub mod stream;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

pub use stream::{Addr, Stream};

/// A bus given by URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BusUrl {
    /// `mqtt://[USER:PASSWORD@]HOST[:PORT]` (1883), `mqtts://[USER:PASSWORD@]HOST[:PORT]
    /// [?cacert=FILE]` (8883) or `mqtt+unix:///PATH`: MQTT 3.1.1, with EdgeX's secure bus's
    /// TLS and credentials when given.
    Mqtt(Addr, mqtt::Security),
    /// `nats://HOST[:PORT]` (4222): core NATS.
    Nats(Addr),
    /// `redis://HOST[:PORT]` (6379) or `redis+unix:///PATH`: Redis Pub/Sub (EdgeX 3.x).
    RedisPubSub(Addr),
}

/// The forms [`BusUrl::parse`] reads, for error messages.
pub const BUS_URL_FORMS: &str = "mqtt://[USER:PASSWORD@]HOST:PORT, \
     mqtts://[USER:PASSWORD@]HOST:PORT[?cacert=FILE], mqtt+unix:///PATH, nats://HOST:PORT, \
     redis://HOST:PORT or redis+unix:///PATH";

impl BusUrl {
    /// MQTT at `addr`, plain and anonymous.
    pub fn mqtt(addr: Addr) -> BusUrl {
        BusUrl::Mqtt(addr, mqtt::Security::default())
    }

    /// Reads one bus URL; the error names the item (its password hidden) and the forms.
    pub fn parse(item: &str) -> Result<BusUrl, String> {
        let item = item.trim();
        let shown = crate::redact::redact_password(item);
        let bad = |why: &str| format!("--bus {shown:?}: {why}; give {BUS_URL_FORMS}");
        let (scheme, rest) = item.split_once("://").ok_or_else(|| bad("not a URL"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "mqtt" || scheme == "tcp" || scheme == "mqtts" {
            let (rest, security) = mqtt_security(rest, scheme == "mqtts").map_err(|e| bad(&e))?;
            let default_port = if security.tls.is_some() { 8883 } else { 1883 };
            return Ok(BusUrl::Mqtt(tcp_addr(rest, default_port, &bad)?, security));
        }
        let unix = |rest: &str| -> Result<Addr, String> {
            if !rest.starts_with('/') || rest.len() < 2 {
                return Err(bad(
                    "a Unix socket URL needs an absolute path (three slashes)",
                ));
            }
            Ok(Addr::Unix(PathBuf::from(rest)))
        };
        match scheme.as_str() {
            "mqtt+unix" => unix(rest).map(BusUrl::mqtt),
            "nats" => tcp_addr(rest, 4222, &bad).map(BusUrl::Nats),
            "redis" => tcp_addr(rest, 6379, &bad).map(BusUrl::RedisPubSub),
            "redis+unix" | "unix" => unix(rest).map(BusUrl::RedisPubSub),
            _ => Err(bad("an unknown scheme")),
        }
    }

    /// The protocol's name as a column suffix uses it: `MQTT`, `NATS`, `RedisPubSub`.
    pub fn protocol(&self) -> &'static str {
        match self {
            BusUrl::Mqtt(..) => "MQTT",
            BusUrl::Nats(_) => "NATS",
            BusUrl::RedisPubSub(_) => "RedisPubSub",
        }
    }

    /// Where the broker listens.
    pub fn addr(&self) -> &Addr {
        match self {
            BusUrl::Mqtt(a, _) | BusUrl::Nats(a) | BusUrl::RedisPubSub(a) => a,
        }
    }

    /// Whether the connection is TLS (`mqtts://`).
    pub fn is_tls(&self) -> bool {
        matches!(self, BusUrl::Mqtt(_, security) if security.tls.is_some())
    }
}

/// `HOST` or `HOST:PORT` (IPv6 in brackets), `default` when no port is given.
fn tcp_addr(rest: &str, default: u16, bad: &dyn Fn(&str) -> String) -> Result<Addr, String> {
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') || rest.contains('@') || rest.contains('?') {
        return Err(bad("expected HOST or HOST:PORT after the scheme"));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
            let port = p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("the port must be 1-65535"))?;
            (h, port)
        }
        _ => (rest, default),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("the host is empty"));
    }
    Ok(Addr::Tcp {
        host: host.to_string(),
        port,
    })
}

/// Takes an MQTT URL's `USER:PASSWORD@` and `?cacert=FILE` (mqtts only) off `rest` (what
/// follows `://`): the `HOST[:PORT]` left, and what they say. The values are
/// percent-decoded, so a password may hold `@` or `:` as `%40`, `%3A`.
fn mqtt_security(rest: &str, tls: bool) -> Result<(&str, mqtt::Security), String> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|s| s.into_owned())
            .map_err(|_| "the user or password is not UTF-8 once %-decoded".to_string())
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, rest),
    };
    let credentials = match userinfo {
        None => None,
        Some(userinfo) => {
            let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            if user.is_empty() {
                return Err("the user name before @ is empty".into());
            }
            Some(mqtt::Credentials {
                username: decode(user)?,
                password: decode(password)?,
            })
        }
    };
    let mut tls = tls.then(mqtt::Tls::default);
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        match (pair.split_once('='), &mut tls) {
            // EdgeX's secret key and AuthMode are `cacert`; mosquitto_pub says `--cafile`.
            (Some(("cacert" | "cafile", file)), Some(tls)) if !file.is_empty() => {
                tls.ca_file = Some(decode(file)?.into());
            }
            (Some(("cacert" | "cafile", _)), None) => {
                return Err("cacert= is for TLS: use mqtts://".into());
            }
            _ => {
                return Err(format!(
                    "unknown option {pair:?} (mqtts:// takes cacert=FILE)"
                ))
            }
        }
    }
    Ok((rest, mqtt::Security { tls, credentials }))
}

/// The URL as it was given, with the password shown as `***`.
impl std::fmt::Display for BusUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (scheme, unix) = match self {
            BusUrl::Mqtt(_, s) if s.tls.is_some() => ("mqtts", "mqtt+unix"),
            BusUrl::Mqtt(..) => ("mqtt", "mqtt+unix"),
            BusUrl::Nats(_) => ("nats", "nats"),
            BusUrl::RedisPubSub(_) => ("redis", "redis+unix"),
        };
        let user = match self {
            BusUrl::Mqtt(
                _,
                mqtt::Security {
                    credentials: Some(c),
                    ..
                },
            ) => format!("{}:***@", c.username),
            _ => String::new(),
        };
        match self.addr() {
            Addr::Tcp { host, port } if host.contains(':') => {
                write!(f, "{scheme}://{user}[{host}]:{port}")
            }
            Addr::Tcp { host, port } => write!(f, "{scheme}://{user}{host}:{port}"),
            Addr::Unix(path) => write!(f, "{unix}://{}", path.display()),
        }?;
        if let BusUrl::Mqtt(
            _,
            mqtt::Security {
                tls: Some(mqtt::Tls {
                    ca_file: Some(file),
                }),
                ..
            },
        ) = self
        {
            write!(f, "?cacert={}", file.display())?;
        }
        Ok(())
    }
}

/// One message as the core-data subscriber sees it, whatever the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Its topic, MQTT's way (`edgex/events/device/…`).
    pub topic: String,
    /// Its bytes: an EdgeX envelope (JSON), or with [`Delivery::content_type`] set (NATS's
    /// `nats` format) the payload itself.
    pub payload: Vec<u8>,
    /// The `Content-Type` header of a NATS message in EdgeX's `nats` format; `None` when the
    /// payload is an envelope.
    pub content_type: Option<String>,
    /// The `X-Correlation-ID` header of such a message.
    pub correlation_id: Option<String>,
    /// The MQTT packet id to acknowledge at QoS 1.
    ack: Option<u16>,
}

/// How a subscriber connects.
#[derive(Debug, Clone)]
pub struct SubscribeOptions {
    /// The client id or connection name: `core-data`, as EdgeX's.
    pub client_id: String,
    /// MQTT's QoS (EdgeX's default is 0); the other protocols have none.
    pub qos: mqtt::Qos,
    /// How long connecting and subscribing may take.
    pub timeout: Duration,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        SubscribeOptions {
            client_id: "core-data".into(),
            qos: mqtt::Qos::AtMostOnce,
            timeout: Duration::from_secs(5),
        }
    }
}

/// A subscription, read one message at a time.
pub trait Subscriber: Send {
    /// The next message, waiting at most `timeout`; `Ok(None)` when none came. An error is a
    /// broken connection.
    fn next(&mut self, timeout: Duration) -> io::Result<Option<Delivery>>;

    /// Says the message was handled (MQTT QoS 1: its PUBACK, sent after handling as paho
    /// does once its handler returns; nothing for the others).
    fn done(&mut self, delivery: &Delivery) -> io::Result<()>;
}

/// Subscribes to `filter` (MQTT syntax) on the bus at `url`.
pub fn subscribe(
    url: &BusUrl,
    filter: &str,
    options: &SubscribeOptions,
) -> io::Result<Box<dyn Subscriber>> {
    match url {
        BusUrl::Mqtt(addr, security) => {
            let mut client = mqtt::Client::connect(
                addr,
                &mqtt::Options {
                    client_id: options.client_id.clone(),
                    keep_alive: Duration::from_secs(10),
                    connect_timeout: options.timeout,
                    security: security.clone(),
                },
            )?;
            client.subscribe(filter, options.qos, options.timeout)?;
            Ok(Box::new(client))
        }
        BusUrl::Nats(addr) => {
            let mut client = nats::Client::connect(addr, &options.client_id, options.timeout)?;
            client.subscribe(&nats_subject(filter), None, options.timeout)?;
            Ok(Box::new(client))
        }
        BusUrl::RedisPubSub(addr) => {
            let mut client = redis_pubsub::Client::connect(addr, options.timeout)?;
            client.psubscribe(&redis_pubsub::patterns_of(filter), options.timeout)?;
            Ok(Box::new(client))
        }
    }
}

/// An MQTT-style topic or filter as a NATS subject (go-mod-messaging's replacer).
pub fn nats_subject(topic: &str) -> String {
    topic.replace('/', ".").replace('+', "*").replace('#', ">")
}

/// A NATS subject back as an MQTT-style topic.
pub fn topic_of_subject(subject: &str) -> String {
    subject
        .replace('.', "/")
        .replace('*', "+")
        .replace('>', "#")
}

impl Subscriber for mqtt::Client {
    fn next(&mut self, timeout: Duration) -> io::Result<Option<Delivery>> {
        Ok(mqtt::Client::next(self, timeout)?.map(|p| Delivery {
            topic: p.topic,
            payload: p.payload,
            content_type: None,
            correlation_id: None,
            ack: (p.qos == mqtt::Qos::AtLeastOnce).then_some(p.packet_id),
        }))
    }

    fn done(&mut self, delivery: &Delivery) -> io::Result<()> {
        match delivery.ack {
            Some(id) => self.ack(id),
            None => Ok(()),
        }
    }
}

impl Subscriber for nats::Client {
    fn next(&mut self, timeout: Duration) -> io::Result<Option<Delivery>> {
        Ok(nats::Client::next(self, timeout)?.map(|m| {
            // EdgeX's `nats` format always sets Content-Type; its `json` format sends the
            // envelope with no headers.
            let content_type = m.header("Content-Type").map(str::to_string);
            let correlation_id = m.header("X-Correlation-ID").map(str::to_string);
            Delivery {
                topic: topic_of_subject(&m.subject),
                payload: m.payload,
                content_type,
                correlation_id,
                ack: None,
            }
        }))
    }

    fn done(&mut self, _: &Delivery) -> io::Result<()> {
        Ok(())
    }
}

impl Subscriber for redis_pubsub::Client {
    fn next(&mut self, timeout: Duration) -> io::Result<Option<Delivery>> {
        Ok(
            redis_pubsub::Client::next(self, timeout)?.map(|m| Delivery {
                topic: redis_pubsub::topic_of(&m.channel),
                payload: m.payload,
                content_type: None,
                correlation_id: None,
                ack: None,
            }),
        )
    }

    fn done(&mut self, _: &Delivery) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_urls_parse_with_default_ports() {
        let tcp = |host: &str, port| Addr::Tcp {
            host: host.into(),
            port,
        };
        assert_eq!(
            BusUrl::parse("mqtt://127.0.0.1"),
            Ok(BusUrl::mqtt(tcp("127.0.0.1", 1883)))
        );
        assert_eq!(
            BusUrl::parse("mqtt://broker:1884"),
            Ok(BusUrl::mqtt(tcp("broker", 1884)))
        );
        assert_eq!(
            BusUrl::parse("mqtt+unix:///run/mosquitto.sock"),
            Ok(BusUrl::mqtt(Addr::Unix("/run/mosquitto.sock".into())))
        );
        assert_eq!(BusUrl::parse("nats://h"), Ok(BusUrl::Nats(tcp("h", 4222))));
        assert_eq!(
            BusUrl::parse("redis://h:7000"),
            Ok(BusUrl::RedisPubSub(tcp("h", 7000)))
        );
        assert_eq!(
            BusUrl::parse("redis+unix:///tmp/r.sock"),
            Ok(BusUrl::RedisPubSub(Addr::Unix("/tmp/r.sock".into())))
        );
        assert_eq!(
            BusUrl::parse("mqtt://[::1]:1883"),
            Ok(BusUrl::mqtt(tcp("::1", 1883)))
        );
        for url in [
            "mqtt://127.0.0.1:1883",
            "mqtt+unix:///x.sock",
            "nats://h:4222",
            "redis+unix:///r",
        ] {
            assert_eq!(BusUrl::parse(url).unwrap().to_string(), url);
        }
    }

    #[test]
    fn bad_bus_urls_are_one_line_naming_the_item_and_the_forms() {
        for (item, says) in [
            ("mosquitto", "not a URL"),
            ("amqp://h", "unknown scheme"),
            ("mqtt://h:0", "1-65535"),
            ("mqtt://h:x", "1-65535"),
            ("mqtt://", "HOST or HOST:PORT"),
            ("mqtt+unix://rel.sock", "absolute path"),
            ("nats://user:pw@h", "HOST or HOST:PORT"),
            ("mqtt://:pw@h", "user name before @ is empty"),
            (
                "mqtt://h?cacert=/ca.crt",
                "cacert= is for TLS: use mqtts://",
            ),
            ("mqtts://h?insecure=1", "unknown option \"insecure=1\""),
        ] {
            let e = BusUrl::parse(item).unwrap_err();
            assert!(e.contains(says), "{item}: {e}");
            assert!(e.contains(&crate::redact::redact_password(item)), "{e}");
            assert!(!e.contains("pw@"), "the password is hidden: {e}");
            assert!(e.contains("mqtts://[USER:PASSWORD@]HOST:PORT"), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn mqtt_urls_take_credentials_and_tls_and_show_no_password() {
        let url = BusUrl::parse("mqtts://edgex:p%40ss%3Aw@broker?cacert=/etc/ca.crt").unwrap();
        let BusUrl::Mqtt(addr, security) = &url else {
            panic!("{url:?}")
        };
        assert_eq!(
            addr,
            &Addr::Tcp {
                host: "broker".into(),
                port: 8883
            }
        );
        let credentials = security.credentials.as_ref().unwrap();
        assert_eq!(
            (credentials.username.as_str(), credentials.password.as_str()),
            ("edgex", "p@ss:w")
        );
        assert_eq!(
            security.tls,
            Some(mqtt::Tls {
                ca_file: Some("/etc/ca.crt".into())
            })
        );
        assert!(url.is_tls());
        assert_eq!(
            url.to_string(),
            "mqtts://edgex:***@broker:8883?cacert=/etc/ca.crt"
        );
        assert!(!format!("{url:?}").contains("p@ss"));

        let url = BusUrl::parse("mqtt://u:pw@127.0.0.1:1884").unwrap();
        assert!(!url.is_tls());
        assert_eq!(url.to_string(), "mqtt://u:***@127.0.0.1:1884");
        // mqtts:// without a CA file trusts the system's roots; cafile= is mosquitto_pub's name.
        let BusUrl::Mqtt(_, security) = BusUrl::parse("mqtts://h:1").unwrap() else {
            panic!()
        };
        assert_eq!(security.tls, Some(mqtt::Tls { ca_file: None }));
        assert_eq!(
            BusUrl::parse("mqtts://h?cafile=/x.crt"),
            BusUrl::parse("mqtts://h?cacert=/x.crt")
        );
    }

    #[test]
    fn nats_subjects_translate_both_ways() {
        assert_eq!(
            nats_subject("edgex/events/device/#"),
            "edgex.events.device.>"
        );
        assert_eq!(nats_subject("edgex/+/x"), "edgex.*.x");
        assert_eq!(
            topic_of_subject("edgex.events.device.s.p.d.r"),
            "edgex/events/device/s/p/d/r"
        );
    }
}
