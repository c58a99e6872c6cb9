//! MQTT 3.1.1 (OASIS standard, 2014), the part a device service and core-data use: CONNECT
//! with a client id and clean session, SUBSCRIBE to one filter, PUBLISH at QoS 0 or 1 with
//! PUBACK, PINGREQ to keep the connection alive, DISCONNECT. EdgeX's Go bus (paho.mqtt.golang)
//! speaks 3.1.1 and nothing newer; QoS 2 is refused where it is asked for.
//!
//! Blocking, over TCP, TLS or a Unix socket ([`Stream`]): the subscriber's loop handles one
//! message at a time, as core-data's does, and a publisher thread writes without waiting for
//! its acknowledgements ([`Client::publish`] counts them as they come back).
//!
//! EdgeX's secure bus ([`Security`]): CONNECT with a user name and password (`AuthMode:
//! usernamepassword`), over TLS when the URL is `mqtts://` (the server's certificate checked
//! against a CA file, as `mosquitto_pub --cafile` does, or the system's roots).

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::stream::{no_answer, Addr, Framed, Reader, Stream};

/// The largest packet edgebench reads: a packet announcing more is refused, so a stray
/// publisher cannot make the subscriber allocate without bound. EdgeX's `MaxEventSize` default
/// is 25,000 KB; this leaves room above it.
pub const MAX_PACKET: usize = 64 << 20;

/// A QoS level edgebench speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Qos {
    /// At most once.
    AtMostOnce = 0,
    /// At least once: PUBLISH, then PUBACK.
    AtLeastOnce = 1,
}

impl Qos {
    /// `0` or `1`; QoS 2 gets the one-line refusal.
    pub fn parse(s: &str) -> Result<Qos, String> {
        match s.trim() {
            "0" => Ok(Qos::AtMostOnce),
            "1" => Ok(Qos::AtLeastOnce),
            "2" => Err(
                "--qos 2: exactly-once delivery is not supported (EdgeX's bus uses 0 \
                        by default); use --qos 0 or 1"
                    .into(),
            ),
            other => Err(format!("--qos {other:?}: give 0 or 1")),
        }
    }
}

/// How a client connects.
#[derive(Debug, Clone)]
pub struct Options {
    /// The client id (`core-data` for EdgeX's subscriber).
    pub client_id: String,
    /// Keep-alive: a PINGREQ goes out when nothing was sent for this long; 0 turns it off.
    pub keep_alive: Duration,
    /// How long connecting, the TLS handshake and the CONNACK may take.
    pub connect_timeout: Duration,
    /// TLS and credentials (none by default: plain, anonymous).
    pub security: Security,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            client_id: "edgebench".into(),
            keep_alive: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            security: Security::default(),
        }
    }
}

/// What EdgeX's secure bus adds to a connection: TLS (`mqtts://`) and CONNECT's user name and
/// password (`mqtt://USER:PASSWORD@…`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Security {
    /// TLS, when the URL is `mqtts://`.
    pub tls: Option<Tls>,
    /// The user name and password CONNECT carries.
    pub credentials: Option<Credentials>,
}

/// How an `mqtts://` client trusts its broker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Tls {
    /// The CA certificate (PEM) that signed the broker's (`?cacert=FILE`); `None`: the
    /// system's roots.
    pub ca_file: Option<PathBuf>,
}

/// CONNECT's user name and password (MQTT 3.1.1 §3.1.3.4, §3.1.3.5).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password.
    pub password: String,
}

// The password never reaches a log or an error message through `{:?}`.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"***")
            .finish()
    }
}

impl Tls {
    /// The rustls config: the broker's chain and host name checked against the CA file, or
    /// the system's roots, as every edgebench client's ([`crate::transport::TlsOptions`]).
    /// Reads the file; the error names it as the URL does (`cacert=FILE: …`).
    pub fn client_config(&self) -> io::Result<Arc<rustls::ClientConfig>> {
        let options = crate::transport::TlsOptions {
            cacert: self.ca_file.clone(),
            ..Default::default()
        };
        let client = options
            .client()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.in_url()))?;
        Ok(client.config())
    }
}

/// A PUBLISH received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    /// Its topic.
    pub topic: String,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Its QoS and, at QoS 1, its packet id (to acknowledge with [`Client::ack`]).
    pub qos: Qos,
    /// The packet id at QoS 1; 0 at QoS 0.
    pub packet_id: u16,
}

/// A packet, as far as edgebench reads them.
#[derive(Debug, PartialEq, Eq)]
enum Packet {
    ConnAck {
        code: u8,
    },
    Publish(Publish),
    PubAck {
        packet_id: u16,
    },
    SubAck {
        packet_id: u16,
        codes: Vec<u8>,
    },
    PingResp,
    /// A packet a client does not expect (a broker sends none of these to a client).
    Other(u8),
}

/// One MQTT connection.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    reader: Reader,
    out: Vec<u8>,
    next_id: u16,
    keep_alive: Duration,
    last_sent: Instant,
    /// PUBACKs received for QoS 1 publishes.
    acked: u64,
    /// Publishes that arrived while waiting for something else.
    pending: std::collections::VecDeque<Publish>,
}

impl Client {
    /// Connects (over TLS when `options.security` says so) with a clean session, and waits
    /// for the broker's CONNACK; a refusal is an error that says why in words.
    pub fn connect(addr: &Addr, options: &Options) -> io::Result<Client> {
        let stream = match &options.security.tls {
            None => Stream::connect(addr, options.connect_timeout)?,
            Some(tls) => {
                let config = tls.client_config()?;
                Stream::connect_tls(addr, config, options.connect_timeout).map_err(|e| {
                    if !e.to_string().contains("invalid peer certificate") {
                        return e;
                    }
                    let fix = match tls.ca_file {
                        Some(_) => "give the CA that signed it: ?cacert=FILE",
                        None => {
                            "give the CA that signed it: ?cacert=FILE (none given: the system's \
                             roots were used)"
                        }
                    };
                    io::Error::new(
                        e.kind(),
                        format!("{e} (the broker's certificate does not verify: {fix})"),
                    )
                })?
            }
        };
        let mut client = Client {
            stream,
            reader: Reader::default(),
            out: Vec::with_capacity(64 * 1024),
            next_id: 0,
            keep_alive: options.keep_alive,
            last_sent: Instant::now(),
            acked: 0,
            pending: Default::default(),
        };
        client.out.clear();
        encode_connect(
            &mut client.out,
            &options.client_id,
            options.keep_alive,
            options.security.credentials.as_ref(),
        );
        let deadline = Instant::now() + options.connect_timeout;
        let answer = client
            .send()
            .and_then(|()| client.wait(deadline, |p| matches!(p, Packet::ConnAck { .. })))
            .map_err(|e| {
                let hung_up = matches!(
                    e.kind(),
                    io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                );
                if !hung_up || options.security.tls.is_some() {
                    return e;
                }
                // Mosquitto's TLS listener takes a plain CONNECT for a bad handshake and hangs
                // up: say what that most likely means.
                io::Error::new(
                    e.kind(),
                    format!(
                        "the broker hung up before its CONNACK ({e}; a TLS listener does that \
                         to a plain client: use mqtts://)"
                    ),
                )
            })?;
        match answer {
            Packet::ConnAck { code: 0 } => Ok(client),
            // Not `ConnectionRefused`, which is TCP's: the broker is there and said no.
            Packet::ConnAck { code } => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the broker refused the connection: {} (CONNACK return code {code}){}",
                    connack_reason(code),
                    connack_fix(code, &options.security)
                ),
            )),
            _ => unreachable!("wait returns what it was asked for"),
        }
    }

    /// Subscribes to `filter` at `qos` and waits for the SUBACK.
    pub fn subscribe(&mut self, filter: &str, qos: Qos, timeout: Duration) -> io::Result<()> {
        let id = self.packet_id();
        self.out.clear();
        let mut body = Vec::with_capacity(filter.len() + 5);
        body.extend_from_slice(&id.to_be_bytes());
        put_str(&mut body, filter);
        body.push(qos as u8);
        put_packet(&mut self.out, 0x82, &body);
        self.send()?;
        let deadline = Instant::now() + timeout;
        match self.wait(
            deadline,
            |p| matches!(p, Packet::SubAck { packet_id, .. } if *packet_id == id),
        )? {
            Packet::SubAck { codes, .. } if codes.first().is_some_and(|c| *c <= 2) => Ok(()),
            _ => Err(io::Error::other(format!(
                "the broker refused the subscription to {filter}"
            ))),
        }
    }

    /// Writes a PUBLISH without waiting for anything: at QoS 1 its PUBACK is counted when
    /// [`Client::poll_acks`] or a receive reads it.
    pub fn publish(&mut self, topic: &str, payload: &[u8], qos: Qos) -> io::Result<()> {
        self.out.clear();
        let id = match qos {
            Qos::AtMostOnce => None,
            Qos::AtLeastOnce => Some(self.packet_id()),
        };
        encode_publish(&mut self.out, topic, payload, id);
        self.send()
    }

    /// Reads whatever arrived within `wait` and returns how many QoS 1 publishes the broker
    /// has acknowledged so far (and sends a PINGREQ when the keep-alive is due). Received
    /// publishes are kept for [`Client::next`]. A publisher calls it now and then, so
    /// acknowledgements never pile up unread.
    /// With `wait` zero it never blocks.
    pub fn poll_acks(&mut self, wait: Duration) -> io::Result<u64> {
        self.ping_if_due()?;
        let mut read = false;
        while let Some(p) = self.reader.next_now(&mut self.stream, frame)? {
            self.take(p);
            read = true;
        }
        if !read && !wait.is_zero() {
            let deadline = Instant::now() + wait;
            if let Some(p) = self.reader.next_before(&mut self.stream, deadline, frame)? {
                self.take(p);
                while let Some(p) = self.reader.next_now(&mut self.stream, frame)? {
                    self.take(p);
                }
            }
        }
        Ok(self.acked)
    }

    /// The next PUBLISH, waiting at most `timeout`; `Ok(None)` when none came. Sends a
    /// PINGREQ when the keep-alive is due.
    pub fn next(&mut self, timeout: Duration) -> io::Result<Option<Publish>> {
        if let Some(p) = self.pending.pop_front() {
            return Ok(Some(p));
        }
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            self.ping_if_due()?;
            let mut until = deadline;
            if !self.keep_alive.is_zero() {
                until = until.min(Instant::now() + self.keep_alive / 2);
            }
            match self.reader.next_before(&mut self.stream, until, frame)? {
                Some(Packet::Publish(p)) => return Ok(Some(p)),
                Some(other) => self.take(other),
                None => {}
            }
        }
        Ok(None)
    }

    /// Acknowledges a QoS 1 publish (after it was handled, as paho does once its handler
    /// returns).
    pub fn ack(&mut self, packet_id: u16) -> io::Result<()> {
        self.out.clear();
        put_packet(&mut self.out, 0x40, &packet_id.to_be_bytes());
        self.send()
    }

    /// Sends DISCONNECT and closes the connection.
    pub fn disconnect(mut self) {
        self.out.clear();
        put_packet(&mut self.out, 0xE0, &[]);
        let _ = self.send();
        self.stream.shutdown();
    }

    fn packet_id(&mut self) -> u16 {
        // Packet ids are 1..=65535.
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        self.next_id
    }

    fn send(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.out)?;
        self.last_sent = Instant::now();
        Ok(())
    }

    fn ping_if_due(&mut self) -> io::Result<()> {
        if !self.keep_alive.is_zero() && self.last_sent.elapsed() >= self.keep_alive / 2 {
            self.out.clear();
            put_packet(&mut self.out, 0xC0, &[]);
            self.send()?;
        }
        Ok(())
    }

    /// Keeps what arrived while waiting for something else.
    fn take(&mut self, p: Packet) {
        match p {
            Packet::PubAck { .. } => self.acked += 1,
            Packet::Publish(p) => self.pending.push_back(p),
            _ => {}
        }
    }

    /// Reads until a packet `wanted` accepts arrives, or `deadline`.
    fn wait(&mut self, deadline: Instant, wanted: impl Fn(&Packet) -> bool) -> io::Result<Packet> {
        loop {
            match self.reader.next_before(&mut self.stream, deadline, frame)? {
                None => return Err(no_answer("the broker")),
                Some(p) if wanted(&p) => return Ok(p),
                Some(p) => self.take(p),
            }
        }
    }
}

/// The return codes of CONNACK, in words (MQTT 3.1.1 §3.2.2.3).
fn connack_reason(code: u8) -> &'static str {
    match code {
        1 => "unacceptable protocol version (the broker does not speak MQTT 3.1.1)",
        2 => "client identifier rejected",
        3 => "server unavailable",
        4 => "bad user name or password",
        5 => "not authorized",
        _ => "an unknown return code",
    }
}

/// What to do about a refusal, for the codes a secure broker gives.
fn connack_fix(code: u8, security: &Security) -> String {
    let scheme = if security.tls.is_some() {
        "mqtts"
    } else {
        "mqtt"
    };
    match (code, &security.credentials) {
        (4 | 5, None) => format!(
            "; the broker wants a user name and password: give them in the URL, \
             {scheme}://USER:PASSWORD@HOST:PORT"
        ),
        // Mosquitto answers 5, not 4, to a wrong password.
        (4 | 5, Some(_)) => {
            "; check the user and password in the URL against the broker's password file".into()
        }
        _ => String::new(),
    }
}

/// Appends a length-prefixed UTF-8 string.
fn put_str(out: &mut Vec<u8>, s: &str) {
    let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&s.as_bytes()[..usize::from(len)]);
}

/// Appends the remaining length, 7 bits a byte.
fn put_len(out: &mut Vec<u8>, mut len: usize) {
    loop {
        let mut byte = (len % 128) as u8;
        len /= 128;
        if len > 0 {
            byte |= 0x80;
        }
        out.push(byte);
        if len == 0 {
            break;
        }
    }
}

fn put_packet(out: &mut Vec<u8>, first: u8, body: &[u8]) {
    out.push(first);
    put_len(out, body.len());
    out.extend_from_slice(body);
}

/// CONNECT, with a clean session, and the user name and password when given (§3.1.2.8,
/// §3.1.2.9: both flags, then both strings after the client id).
fn encode_connect(
    out: &mut Vec<u8>,
    client_id: &str,
    keep_alive: Duration,
    credentials: Option<&Credentials>,
) {
    let mut body = Vec::with_capacity(12 + client_id.len());
    put_str(&mut body, "MQTT");
    body.push(4); // protocol level: 3.1.1
    let mut flags = 0x02; // clean session
    if credentials.is_some() {
        flags |= 0x80 | 0x40; // user name, password
    }
    body.push(flags);
    let keep = u16::try_from(keep_alive.as_secs()).unwrap_or(u16::MAX);
    body.extend_from_slice(&keep.to_be_bytes());
    put_str(&mut body, client_id);
    if let Some(c) = credentials {
        put_str(&mut body, &c.username);
        put_str(&mut body, &c.password);
    }
    put_packet(out, 0x10, &body);
}

/// A PUBLISH: QoS 1 when `packet_id` is given, else QoS 0; never retained.
pub fn encode_publish(out: &mut Vec<u8>, topic: &str, payload: &[u8], packet_id: Option<u16>) {
    let first = if packet_id.is_some() { 0x32 } else { 0x30 };
    out.push(first);
    let len = 2 + topic.len() + packet_id.map_or(0, |_| 2) + payload.len();
    put_len(out, len);
    put_str(out, topic);
    if let Some(id) = packet_id {
        out.extend_from_slice(&id.to_be_bytes());
    }
    out.extend_from_slice(payload);
}

fn bad(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Frames one packet from the front of `buf`.
fn frame(buf: &[u8]) -> io::Result<Framed<Packet>> {
    if buf.len() < 2 {
        return Ok(Framed::Incomplete);
    }
    let mut len = 0usize;
    let mut shift = 0;
    let mut i = 1;
    loop {
        let Some(&byte) = buf.get(i) else {
            return Ok(Framed::Incomplete);
        };
        len |= usize::from(byte & 0x7F) << shift;
        i += 1;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 21 {
            return Err(bad("a packet length longer than four bytes"));
        }
    }
    if len > MAX_PACKET {
        return Err(bad(format!(
            "a packet of {len} bytes, more than the {MAX_PACKET} edgebench reads"
        )));
    }
    let Some(body) = buf.get(i..i + len) else {
        return Ok(Framed::Incomplete);
    };
    let first = buf[0];
    let packet = match first >> 4 {
        2 => Packet::ConnAck {
            code: *body.get(1).ok_or_else(|| bad("a short CONNACK"))?,
        },
        3 => Packet::Publish(parse_publish(first, body)?),
        4 => Packet::PubAck {
            packet_id: id_at(body, 0)?,
        },
        9 => Packet::SubAck {
            packet_id: id_at(body, 0)?,
            codes: body[2..].to_vec(),
        },
        13 => Packet::PingResp,
        other => Packet::Other(other),
    };
    Ok(Framed::Frame(packet, i + len))
}

fn id_at(body: &[u8], at: usize) -> io::Result<u16> {
    body.get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| bad("a packet too short for its packet id"))
}

fn parse_publish(first: u8, body: &[u8]) -> io::Result<Publish> {
    let qos = (first >> 1) & 0x03;
    let topic_len = usize::from(id_at(body, 0)?);
    let topic = body
        .get(2..2 + topic_len)
        .ok_or_else(|| bad("a PUBLISH shorter than its topic"))?;
    let topic = std::str::from_utf8(topic)
        .map_err(|_| bad("a PUBLISH topic that is not UTF-8"))?
        .to_string();
    let mut at = 2 + topic_len;
    let (qos, packet_id) = match qos {
        0 => (Qos::AtMostOnce, 0),
        1 => {
            let id = id_at(body, at)?;
            at += 2;
            (Qos::AtLeastOnce, id)
        }
        _ => {
            return Err(bad(
                "a PUBLISH at QoS 2, which edgebench never subscribes to",
            ))
        }
    };
    Ok(Publish {
        topic,
        payload: body[at..].to_vec(),
        qos,
        packet_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_take_one_to_four_bytes() {
        for (len, bytes) in [
            (0usize, &[0x00][..]),
            (127, &[0x7F]),
            (128, &[0x80, 0x01]),
            (16_383, &[0xFF, 0x7F]),
            (16_384, &[0x80, 0x80, 0x01]),
            (268_435_455, &[0xFF, 0xFF, 0xFF, 0x7F]),
        ] {
            let mut out = Vec::new();
            put_len(&mut out, len);
            assert_eq!(out, bytes, "{len}");
        }
    }

    #[test]
    fn a_publish_frames_back_at_both_qos_levels() {
        for id in [None, Some(7)] {
            let mut out = Vec::new();
            encode_publish(&mut out, "edgex/events/device/a/b/c/d", &[1, 2, 3], id);
            let Framed::Frame(Packet::Publish(p), used) = frame(&out).unwrap() else {
                panic!("not a publish");
            };
            assert_eq!(used, out.len());
            assert_eq!(p.topic, "edgex/events/device/a/b/c/d");
            assert_eq!(p.payload, [1, 2, 3]);
            assert_eq!(p.packet_id, id.unwrap_or(0));
            // Any prefix is incomplete, never an error.
            for cut in 0..out.len() {
                assert!(matches!(frame(&out[..cut]).unwrap(), Framed::Incomplete));
            }
        }
    }

    #[test]
    fn connect_is_mqtt_3_1_1_with_a_clean_session() {
        let mut out = Vec::new();
        encode_connect(&mut out, "core-data", Duration::from_secs(10), None);
        assert_eq!(
            out,
            [
                0x10, 21, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 10, 0, 9, b'c', b'o', b'r',
                b'e', b'-', b'd', b'a', b't', b'a'
            ]
        );
    }

    #[test]
    fn connect_carries_the_user_name_and_password_after_the_client_id() {
        let mut out = Vec::new();
        let credentials = Credentials {
            username: "u".into(),
            password: "pw".into(),
        };
        encode_connect(&mut out, "c", Duration::from_secs(10), Some(&credentials));
        assert_eq!(
            out,
            [
                0x10, 20, 0, 4, b'M', b'Q', b'T', b'T', 4, 0xC2, 0, 10, 0, 1, b'c', 0, 1, b'u', 0,
                2, b'p', b'w'
            ]
        );
        assert!(!format!("{credentials:?}").contains("pw"));
    }

    #[test]
    fn oversized_and_malformed_packets_are_refused() {
        let e = frame(&[0x30, 0xFF, 0xFF, 0xFF, 0x7F]).err().unwrap();
        assert!(e.to_string().contains("more than"), "{e}");
        let e = frame(&[0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).err().unwrap();
        assert!(e.to_string().contains("four bytes"), "{e}");
        let e = frame(&[0x34, 0x02, 0x00, 0x00]).err().unwrap();
        assert!(e.to_string().contains("QoS 2"), "{e}");
        let e = frame(&[0x30, 0x02, 0x00, 0x05]).err().unwrap();
        assert!(e.to_string().contains("shorter than its topic"), "{e}");
    }

    #[test]
    fn qos_2_and_junk_are_one_line_refusals() {
        assert_eq!(Qos::parse("0"), Ok(Qos::AtMostOnce));
        assert_eq!(Qos::parse("1"), Ok(Qos::AtLeastOnce));
        assert!(Qos::parse("2").unwrap_err().contains("--qos 0 or 1"));
        assert!(Qos::parse("x").unwrap_err().contains("give 0 or 1"));
    }
}
