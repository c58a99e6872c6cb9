//! Core NATS's client protocol (docs.nats.io, "Client Protocol"), the part EdgeX's bus uses:
//! `INFO` then `CONNECT` (headers on) and `PING`/`PONG`, `SUB`, `PUB` and `HPUB` (a message
//! with headers: EdgeX's `nats` format carries the envelope's metadata in them), `MSG` and
//! `HMSG`, and the server's `PING`, answered at once. Text control lines, each payload
//! length-prefixed; blocking, over TCP.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::stream::{no_answer, Addr, Framed, Reader, Stream};

/// The longest control line edgebench reads (a server's `INFO` is the longest, well under).
const MAX_LINE: usize = 64 * 1024;
/// The largest message edgebench reads; nats-server's own default `max_payload` is 1 MB.
pub const MAX_PAYLOAD: usize = 64 << 20;

/// A message received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Its subject.
    pub subject: String,
    /// Its headers (`HMSG`), in order; empty for a `MSG`.
    pub headers: Vec<(String, String)>,
    /// Its payload.
    pub payload: Vec<u8>,
}

impl Msg {
    /// The first header called `name` (case-insensitive, as HTTP headers).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Frame {
    Msg(Msg),
    Ping,
    Pong,
    Ok,
    Err(String),
    Info,
}

/// One NATS connection.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    reader: Reader,
    out: Vec<u8>,
    next_sid: u64,
}

impl Client {
    /// Connects: reads the server's `INFO`, sends `CONNECT` (no echo of its own messages,
    /// headers on) and a `PING`, and waits for the `PONG`.
    pub fn connect(addr: &Addr, name: &str, timeout: Duration) -> io::Result<Client> {
        let stream = Stream::connect(addr, timeout)?;
        let mut client = Client {
            stream,
            reader: Reader::default(),
            out: Vec::with_capacity(64 * 1024),
            next_sid: 0,
        };
        let deadline = Instant::now() + timeout;
        client.wait(deadline, |f| matches!(f, Frame::Info))?;
        let connect = serde_json::json!({
            "verbose": false, "pedantic": false, "tls_required": false, "name": name,
            "lang": "rust", "version": env!("CARGO_PKG_VERSION"), "protocol": 1,
            "headers": true, "no_responders": false, "echo": false,
        });
        client.out.clear();
        client.out.extend_from_slice(b"CONNECT ");
        client.out.extend_from_slice(connect.to_string().as_bytes());
        client.out.extend_from_slice(b"\r\nPING\r\n");
        client.send()?;
        client.wait(deadline, |f| matches!(f, Frame::Pong))?;
        Ok(client)
    }

    /// Subscribes to `subject` (optionally in a queue group) and makes sure the server has it
    /// (a `PING` answered after the `SUB`).
    pub fn subscribe(
        &mut self,
        subject: &str,
        queue: Option<&str>,
        timeout: Duration,
    ) -> io::Result<()> {
        self.next_sid += 1;
        self.out.clear();
        match queue {
            Some(q) => write!(self.out, "SUB {subject} {q} {}\r\nPING\r\n", self.next_sid)?,
            None => write!(self.out, "SUB {subject} {}\r\nPING\r\n", self.next_sid)?,
        }
        self.send()?;
        self.wait(Instant::now() + timeout, |f| matches!(f, Frame::Pong))?;
        Ok(())
    }

    /// Publishes, with headers when any are given (`HPUB`), without waiting.
    pub fn publish(
        &mut self,
        subject: &str,
        headers: &[(&str, &str)],
        payload: &[u8],
    ) -> io::Result<()> {
        self.out.clear();
        encode_publish(&mut self.out, subject, headers, payload);
        self.send()
    }

    /// Waits until the server has processed everything sent so far (`PING`, `PONG`).
    pub fn flush(&mut self, timeout: Duration) -> io::Result<()> {
        self.out.clear();
        self.out.extend_from_slice(b"PING\r\n");
        self.send()?;
        self.wait(Instant::now() + timeout, |f| matches!(f, Frame::Pong))?;
        Ok(())
    }

    /// The next message, waiting at most `timeout`; `Ok(None)` when none came. A server
    /// `PING` is answered on the way.
    pub fn next(&mut self, timeout: Duration) -> io::Result<Option<Msg>> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.reader.next_before(&mut self.stream, deadline, frame)? {
                None => return Ok(None),
                Some(Frame::Msg(m)) => return Ok(Some(m)),
                Some(f) => self.handle(f)?,
            }
        }
    }

    /// Reads whatever the server sent within `wait`, answering its `PING`s: a publisher that
    /// never reads is disconnected as stale after two unanswered pings (nats-server's
    /// `ping_interval`, 2 min, and `ping_max`, 2). Messages are dropped (a publisher has no
    /// subscription).
    /// With `wait` zero it never blocks.
    pub fn poll(&mut self, wait: Duration) -> io::Result<()> {
        while let Some(f) = self.reader.next_now(&mut self.stream, frame)? {
            if !matches!(f, Frame::Msg(_)) {
                self.handle(f)?;
            }
        }
        if wait.is_zero() {
            return Ok(());
        }
        let deadline = Instant::now() + wait;
        while let Some(f) = self.reader.next_before(&mut self.stream, deadline, frame)? {
            if !matches!(f, Frame::Msg(_)) {
                self.handle(f)?;
            }
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.out)
    }

    /// A frame other than the one waited for: answer a `PING`, report an `-ERR`.
    fn handle(&mut self, f: Frame) -> io::Result<()> {
        match f {
            Frame::Ping => self.stream.write_all(b"PONG\r\n"),
            Frame::Err(e) => Err(io::Error::other(format!("the NATS server says: {e}"))),
            _ => Ok(()),
        }
    }

    fn wait(&mut self, deadline: Instant, wanted: impl Fn(&Frame) -> bool) -> io::Result<Frame> {
        loop {
            match self.reader.next_before(&mut self.stream, deadline, frame)? {
                None => return Err(no_answer("the NATS server")),
                Some(f) if wanted(&f) => return Ok(f),
                Some(f) => self.handle(f)?,
            }
        }
    }
}

/// A `PUB`, or an `HPUB` when there are headers.
pub fn encode_publish(out: &mut Vec<u8>, subject: &str, headers: &[(&str, &str)], payload: &[u8]) {
    if headers.is_empty() {
        let _ = write!(out, "PUB {subject} {}\r\n", payload.len());
    } else {
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(b"NATS/1.0\r\n");
        for (k, v) in headers {
            let _ = write!(head, "{k}: {v}\r\n");
        }
        head.extend_from_slice(b"\r\n");
        let _ = write!(
            out,
            "HPUB {subject} {} {}\r\n",
            head.len(),
            head.len() + payload.len()
        );
        out.extend_from_slice(&head);
    }
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
}

fn bad(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Frames one server message from the front of `buf`.
fn frame(buf: &[u8]) -> io::Result<Framed<Frame>> {
    let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") else {
        if buf.len() > MAX_LINE {
            return Err(bad("a NATS control line longer than 64 KB"));
        }
        return Ok(Framed::Incomplete);
    };
    let line =
        std::str::from_utf8(&buf[..eol]).map_err(|_| bad("a control line that is not UTF-8"))?;
    let after = eol + 2;
    let (op, rest) = line.split_once(' ').unwrap_or((line, ""));
    let simple = |f| Ok(Framed::Frame(f, after));
    match op.to_ascii_uppercase().as_str() {
        "PING" => simple(Frame::Ping),
        "PONG" => simple(Frame::Pong),
        "+OK" => simple(Frame::Ok),
        "-ERR" => simple(Frame::Err(rest.trim().trim_matches('\'').to_string())),
        "INFO" => simple(Frame::Info),
        "MSG" | "HMSG" => {
            let words: Vec<&str> = rest.split_ascii_whitespace().collect();
            let with_headers = op.eq_ignore_ascii_case("HMSG");
            // MSG subject sid [reply] #bytes; HMSG subject sid [reply] #hdr #total
            let sizes = if with_headers { 2 } else { 1 };
            if words.len() < 2 + sizes || words.len() > 3 + sizes {
                return Err(bad(format!("a malformed {op} line: {line}")));
            }
            let number = |w: &str| {
                w.parse::<usize>()
                    .map_err(|_| bad(format!("a malformed {op} line: {line}")))
            };
            let total = number(words[words.len() - 1])?;
            let head = if with_headers {
                number(words[words.len() - 2])?
            } else {
                0
            };
            if total > MAX_PAYLOAD || head > total {
                return Err(bad(format!(
                    "a message of {total} bytes, more than the {MAX_PAYLOAD} edgebench reads"
                )));
            }
            let Some(body) = buf.get(after..after + total + 2) else {
                return Ok(Framed::Incomplete);
            };
            if &body[total..] != b"\r\n" {
                return Err(bad("a message not ended by CRLF"));
            }
            let headers = if with_headers {
                parse_headers(&body[..head])?
            } else {
                Vec::new()
            };
            Ok(Framed::Frame(
                Frame::Msg(Msg {
                    subject: words[0].to_string(),
                    headers,
                    payload: body[head..total].to_vec(),
                }),
                after + total + 2,
            ))
        }
        _ => Err(bad(format!("an unknown NATS operation: {line}"))),
    }
}

/// `NATS/1.0\r\nKey: Value\r\n…\r\n`.
fn parse_headers(block: &[u8]) -> io::Result<Vec<(String, String)>> {
    let text = std::str::from_utf8(block).map_err(|_| bad("headers that are not UTF-8"))?;
    let mut lines = text.split("\r\n");
    if !lines.next().is_some_and(|l| l.starts_with("NATS/1.0")) {
        return Err(bad("headers without NATS/1.0"));
    }
    Ok(lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(buf: &[u8]) -> Msg {
        match frame(buf).unwrap() {
            Framed::Frame(Frame::Msg(m), used) => {
                assert_eq!(used, buf.len());
                m
            }
            _ => panic!("not a message"),
        }
    }

    #[test]
    fn msg_and_hmsg_frame_with_and_without_reply_subjects() {
        let m = msg(b"MSG edgex.events.device.a 1 5\r\nhello\r\n");
        assert_eq!(
            (m.subject.as_str(), m.payload.as_slice()),
            ("edgex.events.device.a", &b"hello"[..])
        );
        let m = msg(b"MSG s 1 reply.to 2\r\nhi\r\n");
        assert_eq!(m.payload, b"hi");
        let mut out = Vec::new();
        encode_publish(
            &mut out,
            "s",
            &[("Content-Type", "application/cbor")],
            b"xyz",
        );
        let hmsg = String::from_utf8(out.clone())
            .unwrap()
            .replacen("HPUB s", "HMSG s 9", 1);
        let m = msg(hmsg.as_bytes());
        assert_eq!(m.header("content-type"), Some("application/cbor"));
        assert_eq!(m.payload, b"xyz");
        for cut in 0..out.len() {
            let partial = &hmsg.as_bytes()[..cut];
            assert!(
                matches!(frame(partial).unwrap(), Framed::Incomplete),
                "{cut}"
            );
        }
    }

    #[test]
    fn control_lines_frame() {
        for (line, want) in [
            (&b"PING\r\n"[..], Frame::Ping),
            (b"PONG\r\n", Frame::Pong),
            (b"+OK\r\n", Frame::Ok),
            (
                b"-ERR 'Authorization Violation'\r\n",
                Frame::Err("Authorization Violation".into()),
            ),
            (b"INFO {\"server_id\":\"x\"}\r\n", Frame::Info),
        ] {
            match frame(line).unwrap() {
                Framed::Frame(f, used) => {
                    assert_eq!(f, want);
                    assert_eq!(used, line.len());
                }
                Framed::Incomplete => panic!("{line:?} incomplete"),
            }
        }
    }

    #[test]
    fn oversized_and_malformed_messages_are_refused() {
        let e = frame(b"MSG s 1 999999999999\r\n").err().unwrap();
        assert!(e.to_string().contains("more than"), "{e}");
        let e = frame(b"MSG s\r\n").err().unwrap();
        assert!(e.to_string().contains("malformed"), "{e}");
        let e = frame(b"MSG s 1 2\r\nabcd").err().unwrap();
        assert!(e.to_string().contains("CRLF"), "{e}");
        let e = frame(b"BOGUS\r\n").err().unwrap();
        assert!(e.to_string().contains("unknown"), "{e}");
        let long = vec![b'x'; MAX_LINE + 1];
        assert!(frame(&long).is_err());
    }
}
