//! Redis Pub/Sub as EdgeX 3.x's bus uses it: the subscriber `PSUBSCRIBE`s patterns and reads
//! `pmessage` pushes; a publisher sends `PUBLISH channel payload`. Over TCP or a Unix socket
//! ([`Stream`]), RESP2, blocking; replies are framed by the engine's RESP scanner.
//!
//! EdgeX writes topics MQTT's way and translates them for Redis (go-mod-messaging v3
//! `internal/pkg/redis`): `/` becomes `.`, and a trailing `#` becomes two patterns, `a.b.*`
//! and `a.b` ([`patterns_of`]); a received channel turns back into a topic by `.` → `/`.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::stream::{no_answer, Addr, Framed, Reader, Stream};
use crate::resp::scan::scan_reply;
use crate::transport::cluster::slots::{parse, Value};

/// The largest reply edgebench reads: a larger one is refused, so a stray publisher cannot
/// make the subscriber allocate without bound (Redis's own pubsub output limit is 32 MB).
pub const MAX_REPLY: usize = 64 << 20;

/// The Redis patterns for an MQTT-style topic filter, as EdgeX 3.x subscribes.
pub fn patterns_of(filter: &str) -> Vec<String> {
    let dotted = filter.replace('/', ".").replace('+', "*");
    match dotted.strip_suffix(".#") {
        Some(stem) => vec![format!("{stem}.*"), stem.to_string()],
        None => vec![dotted.replace('#', "*")],
    }
}

/// A Redis channel back as an EdgeX topic.
pub fn topic_of(channel: &str) -> String {
    channel.replace('.', "/")
}

/// An EdgeX topic as the Redis channel a publisher uses.
pub fn channel_of(topic: &str) -> String {
    topic.replace('/', ".")
}

/// A message received: its channel and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The channel it was published on.
    pub channel: String,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// One Redis connection used for Pub/Sub.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    reader: Reader,
    out: Vec<u8>,
    /// Replies read to `PUBLISH`es (pipelined, not waited for).
    published: u64,
}

impl Client {
    /// Connects (and `PING`s, so an address that is not Redis fails here).
    pub fn connect(addr: &Addr, timeout: Duration) -> io::Result<Client> {
        let stream = Stream::connect(addr, timeout)?;
        let mut client = Client {
            stream,
            reader: Reader::default(),
            out: Vec::with_capacity(64 * 1024),
            published: 0,
        };
        client.command(&[b"PING"]);
        client.send()?;
        match client.reply(Instant::now() + timeout)? {
            Value::Simple(s) if s == "PONG" => Ok(client),
            Value::Error(e) => Err(io::Error::other(format!("Redis answered PING with {e}"))),
            other => Err(io::Error::other(format!(
                "not a Redis server (PING answered {other:?})"
            ))),
        }
    }

    /// `PSUBSCRIBE`s every pattern and waits for each confirmation.
    pub fn psubscribe(&mut self, patterns: &[String], timeout: Duration) -> io::Result<()> {
        let mut args: Vec<&[u8]> = vec![b"PSUBSCRIBE"];
        args.extend(patterns.iter().map(|p| p.as_bytes()));
        self.command(&args);
        self.send()?;
        let deadline = Instant::now() + timeout;
        for _ in patterns {
            match self.reply(deadline)? {
                Value::Array(items) if matches!(items.first(), Some(Value::Bulk(k)) if k == b"psubscribe") =>
                    {}
                Value::Error(e) => return Err(io::Error::other(format!("PSUBSCRIBE: {e}"))),
                other => return Err(io::Error::other(format!("PSUBSCRIBE answered {other:?}"))),
            }
        }
        Ok(())
    }

    /// Sends `PUBLISH` without waiting for its reply ([`Client::poll_published`] reads them).
    pub fn publish(&mut self, channel: &str, payload: &[u8]) -> io::Result<()> {
        self.command(&[b"PUBLISH", channel.as_bytes(), payload]);
        self.send()
    }

    /// Reads the replies that arrived within `wait`; how many `PUBLISH`es were answered so far.
    /// With `wait` zero it never blocks.
    pub fn poll_published(&mut self, wait: Duration) -> io::Result<u64> {
        let mut read = false;
        while let Some(v) = self.reader.next_now(&mut self.stream, frame)? {
            self.count_published(v)?;
            read = true;
        }
        if !read && !wait.is_zero() {
            let deadline = Instant::now() + wait;
            if let Some(v) = self.reader.next_before(&mut self.stream, deadline, frame)? {
                self.count_published(v)?;
                while let Some(v) = self.reader.next_now(&mut self.stream, frame)? {
                    self.count_published(v)?;
                }
            }
        }
        Ok(self.published)
    }

    fn count_published(&mut self, reply: Value) -> io::Result<()> {
        if let Value::Error(e) = reply {
            return Err(io::Error::other(format!("PUBLISH: {e}")));
        }
        self.published += 1;
        Ok(())
    }

    /// The next `message` or `pmessage`, waiting at most `timeout`.
    pub fn next(&mut self, timeout: Duration) -> io::Result<Option<Message>> {
        let deadline = Instant::now() + timeout;
        loop {
            let Some(value) = self.reader.next_before(&mut self.stream, deadline, frame)? else {
                return Ok(None);
            };
            let Value::Array(mut items) = value else {
                continue;
            };
            let kind = match items.first() {
                Some(Value::Bulk(k)) => k.clone(),
                _ => continue,
            };
            let (channel, payload) = match (kind.as_slice(), items.len()) {
                (b"pmessage", 4) => (items.swap_remove(2), items.pop()),
                (b"message", 3) => (items.swap_remove(1), items.pop()),
                _ => continue,
            };
            if let (Value::Bulk(c), Some(Value::Bulk(p))) = (channel, payload) {
                return Ok(Some(Message {
                    channel: String::from_utf8_lossy(&c).into_owned(),
                    payload: p,
                }));
            }
        }
    }

    fn command(&mut self, args: &[&[u8]]) {
        self.out.clear();
        crate::resp::encode::write_len(&mut self.out, b'*', args.len());
        for a in args {
            crate::resp::encode::write_bulk(&mut self.out, a);
        }
    }

    fn send(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.out)
    }

    fn reply(&mut self, deadline: Instant) -> io::Result<Value> {
        self.reader
            .next_before(&mut self.stream, deadline, frame)?
            .ok_or_else(|| no_answer("Redis"))
    }
}

/// Frames one reply from the front of `buf` (at most [`MAX_REPLY`] bytes).
pub(crate) fn frame(buf: &[u8]) -> io::Result<Framed<Value>> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    match scan_reply(buf).map_err(|e| bad(e.to_string()))? {
        None if buf.len() > MAX_REPLY => Err(bad(format!(
            "a reply of more than the {MAX_REPLY} bytes edgebench reads"
        ))),
        None => Ok(Framed::Incomplete),
        Some(s) => {
            let mut pos = 0;
            let value = parse(&buf[..s.len], &mut pos, 0).map_err(bad)?;
            Ok(Framed::Frame(value, s.len))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mqtt_filters_become_edgex_3s_patterns() {
        assert_eq!(
            patterns_of("edgex/events/device/#"),
            ["edgex.events.device.*", "edgex.events.device"]
        );
        assert_eq!(patterns_of("edgex/+/x"), ["edgex.*.x"]);
        assert_eq!(
            topic_of("edgex.events.device.s.p.d.r"),
            "edgex/events/device/s/p/d/r"
        );
        assert_eq!(channel_of("edgex/events/device/s"), "edgex.events.device.s");
    }

    #[test]
    fn pushes_frame_whole_or_not_at_all() {
        let push = b"*4\r\n$8\r\npmessage\r\n$3\r\np.*\r\n$3\r\np.a\r\n$2\r\nhi\r\n";
        for cut in 0..push.len() {
            assert!(matches!(frame(&push[..cut]).unwrap(), Framed::Incomplete));
        }
        let Framed::Frame(Value::Array(items), used) = frame(push).unwrap() else {
            panic!("not an array");
        };
        assert_eq!(used, push.len());
        assert_eq!(items.len(), 4);
    }
}
