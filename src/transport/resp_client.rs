//! A lean blocking RESP2 client for one plain connection (no TLS, no AUTH): commands encoded
//! into one reused buffer, replies framed in place in one reused read buffer
//! ([`crate::resp::scan::scan_reply`]) and handed to the caller as bytes to walk, so a
//! reply's bulk strings can be copied straight to where they are wanted. redis-rs builds a
//! `redis::Value` of every reply through its parser combinators: for a ten-field `HGETALL`
//! that is most of a client's instructions (docs/PERFORMANCE.md, "YCSB").
//!
//! [`Reply`] walks a RESP2 reply: [`Reply::bulks`] visits the bulk strings of an array (nil
//! elements as `None`); anything else is read through redis-rs's own parser
//! ([`Reply::value`]), which the cold calls use.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::resp::scan::scan_reply;
use crate::transport::Endpoint;

/// The socket, either kind.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(bytes),
            Stream::Unix(s) => s.write_all(bytes),
        }
    }

    fn read(&mut self, into: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(into),
            Stream::Unix(s) => s.read(into),
        }
    }
}

/// The largest reply read (a scan of many records fits; a bigger one is an error, never an
/// allocation a server can force).
const LARGEST_REPLY: usize = 512 << 20;

/// One plain RESP2 connection.
pub struct RespClient {
    stream: Stream,
    out: Vec<u8>,
    buf: Vec<u8>,
    /// The reply being read occupies `buf[..filled]`.
    filled: usize,
    /// Where the bulk strings of an array reply lie in `buf` (start, length; `None` for a
    /// nil), found while framing it, so walking it parses nothing twice.
    spans: Vec<Option<(usize, usize)>>,
}

impl RespClient {
    /// Connects to `endpoint`, with `timeout` on connecting, each read and each write.
    pub fn connect(endpoint: &Endpoint, timeout: Duration) -> io::Result<RespClient> {
        let stream = match endpoint {
            Endpoint::Tcp { host, port } => {
                let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port))?
                    .next()
                    .ok_or_else(|| io::Error::other(format!("{host}: no address")))?;
                let s = TcpStream::connect_timeout(&addr, timeout)?;
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(timeout))?;
                s.set_write_timeout(Some(timeout))?;
                Stream::Tcp(s)
            }
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_read_timeout(Some(timeout))?;
                s.set_write_timeout(Some(timeout))?;
                Stream::Unix(s)
            }
        };
        Ok(RespClient {
            stream,
            out: Vec::with_capacity(4096),
            buf: vec![0; 16 * 1024],
            filled: 0,
            spans: Vec::new(),
        })
    }

    /// Sends the command of `count` arguments `args` and reads its whole reply.
    pub fn call<'a>(
        &mut self,
        count: usize,
        args: impl Iterator<Item = &'a [u8]>,
    ) -> io::Result<Reply<'_>> {
        self.out.clear();
        push_len(&mut self.out, b'*', count);
        for arg in args {
            push_len(&mut self.out, b'$', arg.len());
            self.out.extend_from_slice(arg);
            self.out.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&self.out)?;
        self.filled = 0;
        loop {
            if let Some((len, bulks)) = frame(&self.buf[..self.filled], &mut self.spans)? {
                // One command, one reply: nothing follows it.
                return Ok(Reply {
                    bytes: &self.buf[..len],
                    spans: bulks.then_some(&self.spans[..]),
                });
            }
            if self.filled == self.buf.len() {
                if self.buf.len() >= LARGEST_REPLY {
                    return Err(io::Error::other("reply larger than 512 MiB"));
                }
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = self.stream.read(&mut self.buf[self.filled..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.filled += n;
        }
    }
}

/// How long the reply at the start of `bytes` is, and whether it is an array of bulk strings
/// (whose spans are then in `spans`); `None` while it is incomplete. Such an array (every
/// read's reply) is measured by jumping from header to header; anything else by
/// [`scan_reply`].
fn frame(
    bytes: &[u8],
    spans: &mut Vec<Option<(usize, usize)>>,
) -> io::Result<Option<(usize, bool)>> {
    let scanned = |bytes: &[u8]| -> io::Result<Option<(usize, bool)>> {
        let s = scan_reply(bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        Ok(s.map(|s| (s.len, false)))
    };
    spans.clear();
    if bytes.first() != Some(&b'*') {
        return scanned(bytes);
    }
    let Some((count, mut at)) = signed_header(bytes, 0) else {
        // An incomplete header, or not a number: the full scanner says which.
        return scanned(bytes);
    };
    if count < 0 {
        return Ok(Some((at, false)));
    }
    for _ in 0..count {
        match bytes.get(at) {
            None => return Ok(None),
            Some(b'$') => match signed_header(bytes, at) {
                Some((len, start)) if len < 0 => {
                    spans.push(None);
                    at = start;
                }
                Some((len, start)) => {
                    spans.push(Some((start, len as usize)));
                    at = start + len as usize + 2;
                }
                None => return scanned(bytes),
            },
            // A nested or other element: the full scanner.
            Some(_) => return scanned(bytes),
        }
    }
    Ok((at <= bytes.len()).then_some((at, true)))
}

/// `kind`, the decimal `n` and CRLF, without a formatter.
fn push_len(out: &mut Vec<u8>, kind: u8, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut left = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (left % 10) as u8;
        left /= 10;
        if left == 0 {
            break;
        }
    }
    out.push(kind);
    out.extend_from_slice(&digits[at..]);
    out.extend_from_slice(b"\r\n");
}

/// One whole reply's bytes, and where its bulk strings lie when it is an array of them.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    bytes: &'a [u8],
    spans: Option<&'a [Option<(usize, usize)>]>,
}

impl<'a> Reply<'a> {
    /// A reply read elsewhere (its bulks are found when walked).
    pub fn new(bytes: &'a [u8]) -> Reply<'a> {
        Reply { bytes, spans: None }
    }

    /// The server's error text, when the reply is an error.
    pub fn error(&self) -> Option<String> {
        (self.bytes.first() == Some(&b'-')).then(|| {
            String::from_utf8_lossy(&self.bytes[1..self.bytes.len().saturating_sub(2)]).into_owned()
        })
    }

    /// The reply as redis-rs's value (its own parser).
    pub fn value(&self) -> io::Result<redis::Value> {
        redis::parse_redis_value(self.bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
    }

    /// Visits each element of an array of bulk strings (`None` for a nil), in order; `false`
    /// when the reply is not such an array (an error, a nil array, another type).
    pub fn bulks(&self, mut each: impl FnMut(Option<&'a [u8]>)) -> bool {
        let bytes = self.bytes;
        if let Some(spans) = self.spans {
            for span in spans {
                each(span.and_then(|(start, len)| bytes.get(start..start + len)));
            }
            return true;
        }
        let Some((count, mut at)) = header(bytes, 0, b'*') else {
            return false;
        };
        for _ in 0..count {
            match bytes.get(at) {
                Some(b'$') => {
                    let Some((len, start)) = signed_header(bytes, at) else {
                        return false;
                    };
                    if len < 0 {
                        each(None);
                        at = start;
                        continue;
                    }
                    let end = start + len as usize;
                    let Some(value) = bytes.get(start..end) else {
                        return false;
                    };
                    each(Some(value));
                    at = end + 2;
                }
                _ => return false,
            }
        }
        true
    }
}

/// The count after `kind` at `at`, and where the next element starts.
fn header(bytes: &[u8], at: usize, kind: u8) -> Option<(usize, usize)> {
    if bytes.get(at) != Some(&kind) {
        return None;
    }
    let (n, next) = signed_header(bytes, at)?;
    usize::try_from(n).ok().map(|n| (n, next))
}

/// The signed number on the line at `at` (after its type byte), and where the next line
/// starts.
fn signed_header(bytes: &[u8], at: usize) -> Option<(i64, usize)> {
    let line_end = at + 1 + bytes.get(at + 1..)?.iter().position(|&b| b == b'\r')?;
    if bytes.get(line_end + 1) != Some(&b'\n') {
        return None;
    }
    let n = crate::resp::scan::parse_i64(&bytes[at + 1..line_end])?;
    Some((n, line_end + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_framed_whole_and_only_whole() {
        let replies: [&[u8]; 6] = [
            b"*3\r\n$2\r\nab\r\n$-1\r\n$0\r\n\r\n",
            b"*0\r\n",
            b"*-1\r\n",
            b"+OK\r\n",
            b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n",
            b":12\r\n",
        ];
        let mut spans = Vec::new();
        for reply in replies {
            for cut in 0..reply.len() {
                let got = frame(&reply[..cut], &mut spans).unwrap();
                assert_eq!(got, None, "{reply:?} cut at {cut}");
            }
            let (len, _) = frame(reply, &mut spans).unwrap().unwrap();
            assert_eq!(len, reply.len(), "{reply:?}");
        }
        let whole = frame(replies[0], &mut spans).unwrap();
        assert_eq!(whole, Some((replies[0].len(), true)));
        assert_eq!(spans, vec![Some((8, 2)), None, Some((21, 0))]);
        let walked = Reply {
            bytes: replies[0],
            spans: Some(&spans),
        };
        let mut seen = Vec::new();
        assert!(walked.bulks(|b| seen.push(b.map(<[u8]>::to_vec))));
        assert_eq!(seen, vec![Some(b"ab".to_vec()), None, Some(Vec::new())]);
        assert!(frame(b"*x\r\n", &mut spans).is_err());
    }

    #[test]
    fn arrays_of_bulks_are_walked_in_place() {
        let r = Reply::new(b"*3\r\n$2\r\nab\r\n$-1\r\n$0\r\n\r\n");
        let mut seen = Vec::new();
        assert!(r.bulks(|b| seen.push(b.map(<[u8]>::to_vec))));
        assert_eq!(seen, vec![Some(b"ab".to_vec()), None, Some(Vec::new())]);
        assert!(!Reply::new(b"-ERR no\r\n").bulks(|_| {}));
        assert_eq!(
            Reply::new(b"-ERR no\r\n").error().as_deref(),
            Some("ERR no")
        );
        assert!(!Reply::new(b"*-1\r\n").bulks(|_| {}));
        assert!(Reply::new(b"*0\r\n").bulks(|_| panic!("no element")));
        assert_eq!(Reply::new(b":5\r\n").value().unwrap(), redis::Value::Int(5));
    }
}
