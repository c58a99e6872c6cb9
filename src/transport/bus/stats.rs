//! What a bus's broker says it lost, read where the broker itself says it: the messages it
//! dropped and the subscribers it disconnected for falling behind. Counts are the broker's
//! own, since it started (a spawned broker starts with the run).
//!
//! - **Mosquitto** publishes `$SYS/broker/publish/messages/dropped`, "the total number of
//!   publish messages that have been dropped due to inflight/queuing limits" (mosquitto(8)).
//!   To a connected QoS 0 subscriber a message is dropped once `max_queued_messages` (1000)
//!   packets wait in its output queue (2.0's `db__ready_for_flight`); Mosquitto never
//!   disconnects a slow subscriber, so there is no disconnection count. `$SYS` values are
//!   retained and republished every `sys_interval` only when they changed, and Mosquitto
//!   before 2.0.16 (Debian's is 2.0.11) lets a retained `$SYS` value expire 60 s after it was
//!   published (fixed by 86fffa34): an unchanged count then cannot be read by a new subscriber.
//!   So [`watch`] subscribes when a run starts and a thread keeps every value as it comes.
//! - **nats-server** closes a client that falls behind (more than `max_pending`, 64 MB, of
//!   output waiting, or a write blocked past `write_deadline`) and counts it once in `/varz`'s
//!   `slow_consumers` (2.9's `client.go`, `queueOutbound` and `handleWriteTimeout`); the
//!   messages that client then misses are not counted. `/varz` is on the HTTP monitoring port
//!   (`-m`), which a spawned broker has ([`super::broker::Broker::monitor_port`]) and a NATS
//!   URL does not name.
//! - **Redis** drops no single message: it closes a Pub/Sub client whose output buffer passes
//!   `client-output-buffer-limit pubsub` (32mb 8mb 60 by default). `INFO` counts those closes
//!   as `client_output_buffer_limit_disconnections` only from Redis 7.4 (redis#12476); 7.0
//!   counts nothing, so there the reading says so and gives what 7.0 can tell: how many
//!   Pub/Sub clients are connected now (`CLIENT LIST TYPE pubsub`), where a subscriber the
//!   server closed is one fewer.
//!
//! Plain sockets throughout, and the bus's own MQTT client: no HTTP or Redis crate for two
//! requests.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::mqtt;
use super::stream::{no_answer, Addr, Reader, Stream};
use super::BusUrl;
use crate::transport::cluster::slots::Value;

/// Mosquitto's count of dropped messages.
pub const MOSQUITTO_DROPPED: &str = "$SYS/broker/publish/messages/dropped";
/// nats-server's count of slow consumers it closed.
pub const NATS_SLOW_CONSUMERS: &str = "/varz slow_consumers";
/// Redis's (7.4 and later) count of clients closed over their output buffer limit.
pub const REDIS_OUTPUT_LIMIT_DISCONNECTIONS: &str =
    "INFO client_output_buffer_limit_disconnections";
/// Where [`BrokerDrops::pubsub_clients`] comes from.
pub const REDIS_PUBSUB_CLIENTS: &str = "CLIENT LIST TYPE pubsub";

/// Published by Mosquitto on every `$SYS` pass, changed or not: the watch's clock.
const MOSQUITTO_UPTIME: &str = "$SYS/broker/uptime";
/// After a fresh `$SYS` pass's uptime, how long its other values get to arrive: they are
/// queued in the same pass, so they come right behind it.
const PASS_TAIL: Duration = Duration::from_millis(200);
/// How often the watching thread looks at its stop flag.
const WATCH_POLL: Duration = Duration::from_millis(200);
/// The largest reply or response read (an `INFO` or `/varz` is a few KB).
const MAX_REPLY: usize = 16 << 20;

/// What a broker says it lost. `None` where it does not say; [`BrokerDrops::missing`] then
/// says why in one line. [`std::fmt::Display`] is the report's line:
/// `broker: 1,399 messages dropped ($SYS/broker/publish/messages/dropped)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerDrops {
    /// Messages the broker dropped (Mosquitto).
    pub dropped: Option<u64>,
    /// Subscribers the broker closed for falling behind (nats-server; Redis from 7.4).
    pub disconnected: Option<u64>,
    /// The counter that answers for this broker, read or not: one of the `const`s above.
    pub source: &'static str,
    /// Redis only: Pub/Sub connections open now ([`REDIS_PUBSUB_CLIENTS`]), a gauge where 7.0
    /// has no counter.
    pub pubsub_clients: Option<u64>,
    /// Why a count is `None`.
    pub missing: Option<String>,
}

impl BrokerDrops {
    fn unknown(source: &'static str, why: String) -> BrokerDrops {
        BrokerDrops {
            dropped: None,
            disconnected: None,
            source,
            pubsub_clients: None,
            missing: Some(why),
        }
    }
}

impl std::fmt::Display for BrokerDrops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut counts = Vec::new();
        if let Some(n) = self.dropped {
            counts.push(format!(
                "{} {} dropped",
                crate::report::group_thousands(n),
                plural(n, "message")
            ));
        }
        if let Some(n) = self.disconnected {
            counts.push(format!(
                "{} {} disconnected",
                crate::report::group_thousands(n),
                plural(n, "client")
            ));
        }
        if counts.is_empty() {
            let why = self.missing.as_deref().unwrap_or("not read");
            write!(f, "broker: drops unknown ({}: {why})", self.source)?;
        } else {
            write!(f, "broker: {} ({})", counts.join(", "), self.source)?;
        }
        if let Some(n) = self.pubsub_clients {
            write!(
                f,
                "; {} Pub/Sub {} connected ({REDIS_PUBSUB_CLIENTS})",
                crate::report::group_thousands(n),
                plural(n, "client")
            )?;
        }
        Ok(())
    }
}

/// Why a broker's counters could not be read at all (as opposed to a broker that does not
/// keep them, which is a [`BrokerDrops`] with `None`s).
#[derive(Debug, thiserror::Error)]
#[error("cannot read the drop counters of {url}: {reason}")]
pub struct StatsError {
    /// The bus.
    pub url: String,
    /// What went wrong.
    pub reason: String,
}

/// Reads what the broker at `url` says it lost, now. `nats_monitor` is nats-server's HTTP
/// monitoring port on the URL's host ([`super::broker::Broker::monitor_port`] for a spawned
/// one; ignored for the other protocols). A Mosquitto value is the one of its next `$SYS`
/// pass (at most 2 s away for a spawned broker), or the retained one when no pass comes
/// within `timeout`; for a run, [`watch`] from its start instead (see the module's note on
/// Mosquitto before 2.0.16).
pub fn broker_drops(
    url: &BusUrl,
    nats_monitor: Option<u16>,
    timeout: Duration,
) -> Result<BrokerDrops, StatsError> {
    watch(url, nats_monitor, timeout)?.read(timeout)
}

/// Starts watching the broker at `url`: for Mosquitto, a `$SYS` subscription now, kept by a
/// thread until the watch drops; for the others, nothing until [`DropsWatch::read`].
pub fn watch(
    url: &BusUrl,
    nats_monitor: Option<u16>,
    timeout: Duration,
) -> Result<DropsWatch, StatsError> {
    let watched = match url {
        BusUrl::Mqtt(addr, security) => {
            Watched::Sys(SysWatch::start(addr, security, timeout).map_err(|e| fail(url, e))?)
        }
        BusUrl::Nats(addr) => Watched::Varz(addr.clone(), nats_monitor),
        BusUrl::RedisPubSub(addr) => Watched::Info(addr.clone()),
    };
    Ok(DropsWatch {
        url: url.clone(),
        watched,
    })
}

/// A broker being watched ([`watch`]).
#[derive(Debug)]
pub struct DropsWatch {
    url: BusUrl,
    watched: Watched,
}

/// Where a broker's counts are read.
#[derive(Debug)]
enum Watched {
    /// Mosquitto's `$SYS`, kept as it comes.
    Sys(SysWatch),
    /// nats-server's `/varz`, on its monitoring port when that is known.
    Varz(Addr, Option<u16>),
    /// Redis's `INFO`.
    Info(Addr),
}

impl DropsWatch {
    /// What the broker says it lost so far, waiting at most `timeout`.
    pub fn read(&self, timeout: Duration) -> Result<BrokerDrops, StatsError> {
        let read = match &self.watched {
            Watched::Sys(sys) => sys.read(timeout),
            Watched::Varz(_, None) => Ok(BrokerDrops::unknown(
                NATS_SLOW_CONSUMERS,
                "nats-server counts slow consumers on its HTTP monitoring port (-m), which a \
                 nats:// URL does not name"
                    .into(),
            )),
            Watched::Varz(addr, Some(port)) => read_nats(addr, *port, timeout),
            Watched::Info(addr) => read_redis(addr, timeout),
        };
        read.map_err(|e| fail(&self.url, e))
    }
}

fn fail(url: &BusUrl, reason: impl ToString) -> StatsError {
    StatsError {
        url: url.to_string(),
        reason: reason.to_string(),
    }
}

// --- Mosquitto: $SYS ---

/// What the watching thread has seen.
#[derive(Debug, Default)]
struct SysSeen {
    /// The latest `publish/messages/dropped`.
    dropped: Option<u64>,
    /// `$SYS` passes seen after the first uptime (which is the retained one, sent on
    /// subscribing, not a pass that happened since).
    passes: u64,
    /// Uptimes seen, the retained one included.
    uptimes: u64,
    /// Why the subscription ended, if it did.
    error: Option<String>,
}

#[derive(Debug)]
struct SysWatch {
    seen: Arc<(Mutex<SysSeen>, Condvar)>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SysWatch {
    fn start(addr: &Addr, security: &mqtt::Security, timeout: Duration) -> io::Result<SysWatch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let options = mqtt::Options {
            // Unique: Mosquitto closes the older of two connections with one id.
            client_id: format!("edgebench-stats-{}-{nanos}", std::process::id()),
            keep_alive: Duration::from_secs(30),
            connect_timeout: timeout,
            security: security.clone(),
        };
        let mut client = mqtt::Client::connect(addr, &options)?;
        // The count first, then the clock: the count's retained value is in before the first
        // uptime, which is the retained one and starts no pass.
        for topic in [MOSQUITTO_DROPPED, MOSQUITTO_UPTIME] {
            client.subscribe(topic, mqtt::Qos::AtMostOnce, timeout)?;
        }
        let seen = Arc::new((Mutex::new(SysSeen::default()), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("bus-stats".into())
                .spawn(move || keep_sys(client, &seen, &stop))?
        };
        Ok(SysWatch {
            seen,
            stop,
            thread: Some(thread),
        })
    }

    /// The count as of the next `$SYS` pass that starts after this call, or the latest seen
    /// when none comes within `timeout`.
    fn read(&self, timeout: Duration) -> Result<BrokerDrops, String> {
        let deadline = Instant::now() + timeout;
        let (lock, changed) = &*self.seen;
        let mut seen = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let before = seen.passes;
        while seen.passes == before && seen.error.is_none() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            seen = changed
                .wait_timeout(seen, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if seen.passes > before {
            drop(seen);
            std::thread::sleep(PASS_TAIL.min(deadline.saturating_duration_since(Instant::now())));
            seen = lock.lock().unwrap_or_else(PoisonError::into_inner);
        }
        match (seen.dropped, &seen.error) {
            // A value from before the subscription broke may be stale: none rather than it.
            (_, Some(e)) => Err(format!("the $SYS subscription ended: {e}")),
            (Some(n), None) => Ok(BrokerDrops {
                dropped: Some(n),
                disconnected: None,
                source: MOSQUITTO_DROPPED,
                pubsub_clients: None,
                missing: None,
            }),
            (None, None) if seen.uptimes > 0 => Ok(BrokerDrops::unknown(
                MOSQUITTO_DROPPED,
                "the broker publishes $SYS but sent no value: Mosquitto before 2.0.16 forgets \
                 one 60 s after it last changed; watch from the start of the run"
                    .into(),
            )),
            (None, None) => Ok(BrokerDrops::unknown(
                MOSQUITTO_DROPPED,
                format!(
                    "nothing on $SYS within {timeout:?}: the broker's sys_interval may be 0 or \
                     longer, or $SYS may not be readable"
                ),
            )),
        }
    }
}

impl Drop for SysWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watching thread: every `$SYS` value as it comes, until stopped or disconnected.
fn keep_sys(mut client: mqtt::Client, seen: &(Mutex<SysSeen>, Condvar), stop: &AtomicBool) {
    let (lock, changed) = seen;
    while !stop.load(Ordering::Relaxed) {
        let publish = match client.next(WATCH_POLL) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(e) => {
                lock.lock().unwrap_or_else(PoisonError::into_inner).error = Some(e.to_string());
                changed.notify_all();
                return;
            }
        };
        let mut seen = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if publish.topic == MOSQUITTO_DROPPED {
            match parse_count(&publish.payload) {
                Ok(n) => seen.dropped = Some(n),
                Err(e) => seen.error = Some(format!("{MOSQUITTO_DROPPED}: {e}")),
            }
        } else if publish.topic == MOSQUITTO_UPTIME {
            seen.uptimes += 1;
            if seen.uptimes > 1 {
                seen.passes += 1;
            }
        }
        changed.notify_all();
    }
    client.disconnect();
}

/// A decimal count, as `$SYS` and `INFO` write them.
fn parse_count(text: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| format!("not a count: {:?}", String::from_utf8_lossy(text)))
}

// --- nats-server: /varz ---

fn read_nats(addr: &Addr, port: u16, timeout: Duration) -> Result<BrokerDrops, String> {
    let Addr::Tcp { host, .. } = addr else {
        return Err("a NATS bus on a Unix socket has no monitoring host".into());
    };
    let response = http_get(host, port, "/varz", timeout)
        .map_err(|e| format!("GET http://{host}:{port}/varz: {e}"))?;
    let body = http_body(&response).map_err(|e| format!("GET /varz: {e}"))?;
    Ok(BrokerDrops {
        dropped: None,
        disconnected: Some(varz_slow_consumers(body)?),
        source: NATS_SLOW_CONSUMERS,
        pubsub_clients: None,
        missing: None,
    })
}

/// One HTTP/1.0 GET: the whole response (the server closes after it).
fn http_get(host: &str, port: u16, path: &str, timeout: Duration) -> io::Result<Vec<u8>> {
    let addr = Addr::Tcp {
        host: host.to_string(),
        port,
    };
    let mut stream = Stream::connect(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").as_bytes())?;
    let mut response = Vec::new();
    (&mut stream)
        .take(MAX_REPLY as u64)
        .read_to_end(&mut response)?;
    Ok(response)
}

/// The body of a `200` response.
fn http_body(response: &[u8]) -> Result<&[u8], String> {
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers in the response")?;
    let head = String::from_utf8_lossy(&response[..split]);
    let status = head.lines().next().unwrap_or_default();
    match status.split_whitespace().nth(1) {
        Some("200") => Ok(&response[split + 4..]),
        _ => Err(format!("the server answered {status:?}")),
    }
}

/// `slow_consumers` from a `/varz` document.
fn varz_slow_consumers(body: &[u8]) -> Result<u64, String> {
    let varz: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("/varz is not JSON: {e}"))?;
    varz.get("slow_consumers")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| "/varz has no slow_consumers count".into())
}

// --- Redis: INFO ---

fn read_redis(addr: &Addr, timeout: Duration) -> Result<BrokerDrops, String> {
    let deadline = Instant::now() + timeout;
    let mut stream = Stream::connect(addr, timeout).map_err(|e| e.to_string())?;
    let mut reader = Reader::default();
    let info = match request(&mut stream, &mut reader, &[b"INFO"], deadline)? {
        Value::Bulk(text) => String::from_utf8_lossy(&text).into_owned(),
        other => return Err(format!("INFO answered {other:?}")),
    };
    let fields = info_fields(&info);
    // A server that renamed CLIENT away still has INFO: the gauge is then absent.
    let request_list = [&b"CLIENT"[..], b"LIST", b"TYPE", b"pubsub"];
    let pubsub_clients = match request(&mut stream, &mut reader, &request_list, deadline)? {
        Value::Bulk(text) => Some(
            text.split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .count(),
        ),
        _ => None,
    };
    let field = "client_output_buffer_limit_disconnections";
    let (disconnected, missing) = match fields.get(field) {
        Some(v) => (Some(parse_count(v.as_bytes())?), None),
        None => {
            let version = fields.get("redis_version").copied().unwrap_or("unknown");
            let why = format!("Redis {version} has no such count, added in 7.4");
            (None, Some(why))
        }
    };
    Ok(BrokerDrops {
        dropped: None,
        disconnected,
        source: REDIS_OUTPUT_LIMIT_DISCONNECTIONS,
        pubsub_clients: pubsub_clients.map(|n| n as u64),
        missing,
    })
}

/// Sends one command and reads its reply.
fn request(
    stream: &mut Stream,
    reader: &mut Reader,
    args: &[&[u8]],
    deadline: Instant,
) -> Result<Value, String> {
    let mut out = Vec::new();
    crate::resp::encode::write_len(&mut out, b'*', args.len());
    for a in args {
        crate::resp::encode::write_bulk(&mut out, a);
    }
    stream.write_all(&out).map_err(|e| e.to_string())?;
    reader
        .next_before(stream, deadline, super::redis_pubsub::frame)
        .and_then(|v| v.ok_or_else(|| no_answer("Redis")))
        .map_err(|e| e.to_string())
}

/// `INFO`'s `field:value` lines (section headers and blank lines skipped).
fn info_fields(info: &str) -> HashMap<&str, &str> {
    info.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .collect()
}

// --- the report's line ---

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_skip_sections_and_keep_values_whole() {
        let info = "# Server\r\nredis_version:7.0.15\r\nexecutable:/usr/bin/redis-server\r\n\r\n\
                    # Stats\r\ntotal_connections_received:7\r\n\
                    client_output_buffer_limit_disconnections:2\r\n";
        let f = info_fields(info);
        assert_eq!(f.get("redis_version"), Some(&"7.0.15"));
        assert_eq!(f.get("executable"), Some(&"/usr/bin/redis-server"));
        assert_eq!(
            f.get("client_output_buffer_limit_disconnections"),
            Some(&"2")
        );
        assert_eq!(f.len(), 4);
    }

    #[test]
    fn varz_gives_slow_consumers_and_a_response_its_body() {
        let response = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n\
            {\"server_id\":\"N\",\"version\":\"2.9.10\",\"connections\":1,\"slow_consumers\":3,\
            \"subscriptions\":1}";
        let body = http_body(response).unwrap();
        assert_eq!(varz_slow_consumers(body), Ok(3));
        let e = http_body(b"HTTP/1.0 404 Not Found\r\n\r\n").unwrap_err();
        assert!(e.contains("404"), "{e}");
        assert!(varz_slow_consumers(b"{}")
            .unwrap_err()
            .contains("slow_consumers"));
        assert!(varz_slow_consumers(b"<html>")
            .unwrap_err()
            .contains("not JSON"));
    }

    #[test]
    fn counts_parse_as_sys_writes_them() {
        assert_eq!(parse_count(b"1399"), Ok(1399));
        assert_eq!(parse_count(b"0\r"), Ok(0));
        assert!(parse_count(b"-1").is_err());
    }

    #[test]
    fn the_report_line_names_the_count_and_where_it_came_from() {
        let drops = |dropped, disconnected, source, pubsub_clients, missing: Option<&str>| {
            BrokerDrops {
                dropped,
                disconnected,
                source,
                pubsub_clients,
                missing: missing.map(str::to_string),
            }
            .to_string()
        };
        assert_eq!(
            drops(Some(1399), None, MOSQUITTO_DROPPED, None, None),
            "broker: 1,399 messages dropped ($SYS/broker/publish/messages/dropped)"
        );
        assert_eq!(
            drops(None, Some(1), NATS_SLOW_CONSUMERS, None, None),
            "broker: 1 client disconnected (/varz slow_consumers)"
        );
        assert_eq!(
            drops(
                None,
                None,
                REDIS_OUTPUT_LIMIT_DISCONNECTIONS,
                Some(0),
                Some("Redis 7.0.15 keeps no such count")
            ),
            "broker: drops unknown (INFO client_output_buffer_limit_disconnections: Redis \
             7.0.15 keeps no such count); 0 Pub/Sub clients connected (CLIENT LIST TYPE pubsub)"
        );
        assert_eq!(crate::report::group_thousands(0), "0");
        assert_eq!(crate::report::group_thousands(999), "999");
        assert_eq!(crate::report::group_thousands(1_000), "1,000");
        assert_eq!(crate::report::group_thousands(12_345_678), "12,345,678");
    }
}
