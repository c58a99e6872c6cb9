//! Request parsing: bytes → a command's arguments, as redis-server 7.0 reads them
//! (`processMultibulkBuffer` and `processInlineBuffer` in its `networking.c`).
//!
//! A request is either an array of bulk strings (`*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n`, what every
//! client library sends, RESP2 and RESP3 alike) or an inline command (`ECHO hi\r\n`, what a
//! person types into telnet), told apart by the first byte being `*`.
//!
//! Invariants:
//! - A partial request is an expected state, not an error: [`RequestParser::parse`] returns
//!   `Ok(None)` and keeps how far it got, so a request arriving one byte at a time is parsed in
//!   linear time. The caller keeps the unconsumed bytes and calls again, with the buffer still
//!   starting at the first byte of that request, once more bytes arrived.
//! - No allocation per argument: the arguments of an array request are ranges into the
//!   caller's buffer ([`Request::arg`] slices it). Only inline commands, whose quotes and
//!   escapes must be decoded, are copied (into one scratch buffer the parser reuses).
//! - Errors are Redis's, word for word, and they are final: the server replies with the
//!   error and closes that connection, as Redis does.
//! - What Redis accepts, this accepts: the `\r\n` after a bulk string is skipped unchecked,
//!   `*0` and `*-1` are empty requests (skipped), and so are blank inline lines.

use std::ops::Range;

/// Longest inline request, and longest header line of an array request, without its line
/// end: Redis's `PROTO_INLINE_MAX_SIZE`. A longer one is a protocol error rather than a
/// buffer that grows until memory runs out.
pub const INLINE_MAX_SIZE: usize = 64 * 1024;

/// Default `proto-max-bulk-len`: the longest bulk string a request may carry (512 MB).
pub const DEFAULT_MAX_BULK_LEN: u64 = 512 * 1024 * 1024;

/// Before AUTH succeeds, Redis accepts at most this many arguments per request...
const UNAUTHENTICATED_MAX_ARGS: i64 = 10;
/// ...and bulk strings of at most this many bytes, so an unauthenticated client cannot
/// make the server allocate much.
const UNAUTHENTICATED_MAX_BULK_LEN: i64 = 16 * 1024;

/// The argument count of a request header is the client's word: room for at most this many
/// arguments is reserved up front (Redis reserves 1024 too), the rest as they arrive.
const MAX_PREALLOCATED_ARGS: usize = 1024;

/// A malformed request. The connection it came from gets [`ProtocolError::text`] as an
/// error reply and is then closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolError {
    /// `*` followed by something that is not an integer up to `i32::MAX`.
    InvalidMultibulkLength,
    /// `$` followed by something that is not an integer from 0 to `proto-max-bulk-len`.
    InvalidBulkLength,
    /// An argument of an array request that does not start with `$`; holds the byte found.
    ExpectedBulk(u8),
    /// More than 10 arguments before AUTH succeeded.
    UnauthenticatedMultibulkLength,
    /// A bulk string over 16 KB before AUTH succeeded.
    UnauthenticatedBulkLength,
    /// An inline request longer than [`INLINE_MAX_SIZE`] without a line end.
    TooBigInlineRequest,
    /// A `*` header line longer than [`INLINE_MAX_SIZE`].
    TooBigMultibulkCount,
    /// A `$` header line longer than [`INLINE_MAX_SIZE`].
    TooBigBulkCount,
    /// An inline request with an unterminated quote, or a closing quote not followed by a
    /// space.
    UnbalancedQuotes,
}

impl ProtocolError {
    /// The error reply's text, as Redis words it (`ERR Protocol error: ...`).
    pub fn text(&self) -> String {
        let what = match self {
            ProtocolError::InvalidMultibulkLength => "invalid multibulk length",
            ProtocolError::InvalidBulkLength => "invalid bulk length",
            ProtocolError::ExpectedBulk(byte) => {
                // Redis prints the byte with %c, then turns line ends into spaces so the
                // error stays one line; other bytes are shown as Latin-1 characters here.
                let shown = match byte {
                    b'\r' | b'\n' => ' ',
                    b => char::from(*b),
                };
                return format!("ERR Protocol error: expected '$', got '{shown}'");
            }
            ProtocolError::UnauthenticatedMultibulkLength => "unauthenticated multibulk length",
            ProtocolError::UnauthenticatedBulkLength => "unauthenticated bulk length",
            ProtocolError::TooBigInlineRequest => "too big inline request",
            ProtocolError::TooBigMultibulkCount => "too big mbulk count string",
            ProtocolError::TooBigBulkCount => "too big bulk count string",
            ProtocolError::UnbalancedQuotes => "unbalanced quotes in request",
        };
        format!("ERR Protocol error: {what}")
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for ProtocolError {}

/// One complete request: its arguments, and how many bytes of the buffer it took.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    consumed: usize,
    source: &'a [u8],
    ranges: &'a [Range<usize>],
}

impl<'a> Request<'a> {
    /// Bytes of the buffer this request took (the caller drops them before the next parse).
    pub fn consumed(&self) -> usize {
        self.consumed
    }

    /// Number of arguments, the command name included; 0 for an empty request (`*0`, a
    /// blank line), which Redis ignores.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether this is an empty request, to be ignored.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Argument `i` (0 is the command name).
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn arg(&self, i: usize) -> &'a [u8] {
        &self.source[self.ranges[i].clone()]
    }

    /// The arguments, in order.
    pub fn args(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let source = self.source;
        self.ranges.iter().map(move |r| &source[r.clone()])
    }

    /// The arguments as a slice, as [`Engine::execute`](crate::Engine::execute) takes them.
    pub fn arg_slice(&self) -> ArgSlice<'a> {
        ArgSlice::new(self.args())
    }
}

/// Arguments with at most this many entries are held on the stack by [`ArgSlice`].
const STACK_ARGS: usize = 16;

/// Arguments gathered into a slice: on the stack when there are at most 16 (nearly every
/// request), else in a `Vec`. Derefs to `[&[u8]]`.
#[allow(
    clippy::large_enum_variant,
    reason = "the stack array is the point: no allocation"
)]
pub enum ArgSlice<'a> {
    /// The first `usize` entries are the arguments.
    Stack([&'a [u8]; STACK_ARGS], usize),
    /// More arguments than the stack array holds.
    Heap(Vec<&'a [u8]>),
}

impl<'a> ArgSlice<'a> {
    /// Gathers `args`.
    pub fn new(args: impl ExactSizeIterator<Item = &'a [u8]>) -> ArgSlice<'a> {
        let len = args.len();
        if len > STACK_ARGS {
            return ArgSlice::Heap(args.collect());
        }
        let mut stack: [&[u8]; STACK_ARGS] = [&[]; STACK_ARGS];
        for (slot, arg) in stack.iter_mut().zip(args) {
            *slot = arg;
        }
        ArgSlice::Stack(stack, len)
    }
}

impl<'a> std::ops::Deref for ArgSlice<'a> {
    type Target = [&'a [u8]];

    fn deref(&self) -> &Self::Target {
        match self {
            ArgSlice::Stack(stack, len) => &stack[..*len],
            ArgSlice::Heap(v) => v,
        }
    }
}

/// Where a partially received array request stopped; offsets are from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a request.
    Start,
    /// Inside an array request.
    Array {
        /// Arguments still to read.
        remaining: usize,
        /// Offset of the next unread byte.
        pos: usize,
        /// The length of the bulk string at `pos`, once its `$` line was read.
        bulk_len: Option<usize>,
    },
}

/// An incremental request parser; one per connection.
#[derive(Debug)]
pub struct RequestParser {
    max_bulk_len: u64,
    state: State,
    /// Argument ranges of the request being parsed, into the caller's buffer (array
    /// requests) or into `inline` (inline requests).
    ranges: Vec<Range<usize>>,
    /// Decoded arguments of an inline request, back to back.
    inline: Vec<u8>,
}

impl Default for RequestParser {
    fn default() -> Self {
        RequestParser::new(DEFAULT_MAX_BULK_LEN)
    }
}

impl RequestParser {
    /// Empties the argument lists for the next request, and gives back their room when a
    /// request with many arguments grew it past what a common one needs: a connection that
    /// once sent SADD with 100,000 members must not hold 1.6 MB of ranges while idle
    /// (Redis's `used_memory`, which counts it, falls back after UNLINK, as it does on
    /// redis-server).
    fn release_large(&mut self) {
        if self.ranges.capacity() > MAX_PREALLOCATED_ARGS {
            self.ranges = Vec::new();
        } else {
            self.ranges.clear();
        }
        if self.inline.capacity() > INLINE_MAX_SIZE {
            self.inline = Vec::new();
        } else {
            self.inline.clear();
        }
    }

    /// A parser that refuses bulk strings longer than `max_bulk_len` bytes
    /// (`proto-max-bulk-len`).
    pub fn new(max_bulk_len: u64) -> RequestParser {
        RequestParser {
            max_bulk_len,
            state: State::Start,
            ranges: Vec::new(),
            inline: Vec::new(),
        }
    }

    /// Parses the request at the start of `buf`.
    ///
    /// Returns `Ok(None)` when `buf` holds only part of it: call again with the same bytes
    /// and more after them (the parser resumes where it stopped). `authenticated` is false
    /// while the client must still AUTH, which lowers the size limits as Redis does.
    pub fn parse<'a>(
        &'a mut self,
        buf: &'a [u8],
        authenticated: bool,
    ) -> Result<Option<Request<'a>>, ProtocolError> {
        let Some(&first) = buf.first() else {
            return Ok(None);
        };
        if self.state == State::Start && first != b'*' {
            let Some(consumed) = self.parse_inline(buf)? else {
                return Ok(None);
            };
            return Ok(Some(Request {
                consumed,
                source: &self.inline,
                ranges: &self.ranges,
            }));
        }
        match self.parse_array(buf, authenticated) {
            Ok(Some(consumed)) => Ok(Some(Request {
                consumed,
                source: buf,
                ranges: &self.ranges,
            })),
            Ok(None) => Ok(None),
            Err(e) => {
                self.state = State::Start;
                Err(e)
            }
        }
    }

    /// How many bytes, from the request's first byte, the buffer must hold before the
    /// request can progress: known while a bulk string is being received, so the reader can
    /// reserve room for a large value in one step. 0 when unknown.
    pub fn bytes_needed(&self) -> usize {
        match self.state {
            State::Array {
                pos,
                bulk_len: Some(len),
                ..
            } => pos.saturating_add(len).saturating_add(2),
            _ => 0,
        }
    }

    fn parse_array(
        &mut self,
        buf: &[u8],
        authenticated: bool,
    ) -> Result<Option<usize>, ProtocolError> {
        let (mut remaining, mut pos, mut bulk_len) = match self.state {
            State::Array {
                remaining,
                pos,
                bulk_len,
            } => (remaining, pos, bulk_len),
            State::Start => {
                let Some(line_end) = header_end(buf) else {
                    if buf.len() > INLINE_MAX_SIZE {
                        return Err(ProtocolError::TooBigMultibulkCount);
                    }
                    return Ok(None);
                };
                let count = parse_int(&buf[1..line_end])
                    .filter(|&n| n <= i64::from(i32::MAX))
                    .ok_or(ProtocolError::InvalidMultibulkLength)?;
                if count > UNAUTHENTICATED_MAX_ARGS && !authenticated {
                    return Err(ProtocolError::UnauthenticatedMultibulkLength);
                }
                self.release_large();
                if count <= 0 {
                    return Ok(Some(line_end + 2));
                }
                let count = count as usize;
                self.ranges.reserve(count.min(MAX_PREALLOCATED_ARGS));
                (count, line_end + 2, None)
            }
        };
        while remaining > 0 {
            let len = match bulk_len {
                Some(len) => len,
                None => {
                    let rest = &buf[pos..];
                    let Some(line_end) = header_end(rest) else {
                        if rest.len() > INLINE_MAX_SIZE {
                            return Err(ProtocolError::TooBigBulkCount);
                        }
                        self.state = State::Array {
                            remaining,
                            pos,
                            bulk_len: None,
                        };
                        return Ok(None);
                    };
                    if rest[0] != b'$' {
                        return Err(ProtocolError::ExpectedBulk(rest[0]));
                    }
                    let len = parse_int(&rest[1..line_end])
                        .filter(|&n| n >= 0 && n as u64 <= self.max_bulk_len)
                        .ok_or(ProtocolError::InvalidBulkLength)?;
                    if len > UNAUTHENTICATED_MAX_BULK_LEN && !authenticated {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    pos += line_end + 2;
                    usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?
                }
            };
            // Redis skips the two bytes after the data without looking at them.
            let end = pos.saturating_add(len);
            if buf.len() < end.saturating_add(2) {
                self.state = State::Array {
                    remaining,
                    pos,
                    bulk_len: Some(len),
                };
                return Ok(None);
            }
            self.ranges.push(pos..end);
            pos = end + 2;
            remaining -= 1;
            bulk_len = None;
        }
        self.state = State::Start;
        Ok(Some(pos))
    }

    fn parse_inline(&mut self, buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
        let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
            if buf.len() > INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigInlineRequest);
            }
            return Ok(None);
        };
        let mut end = newline;
        if end > 0 && buf[end - 1] == b'\r' {
            end -= 1;
        }
        self.release_large();
        split_into(&buf[..end], &mut self.inline, &mut self.ranges)
            .map_err(|_| ProtocolError::UnbalancedQuotes)?;
        Ok(Some(newline + 1))
    }
}

/// The offset of the `\r` ending a header line, once the byte after it (the `\n`, which
/// Redis does not check) has arrived too.
fn header_end(buf: &[u8]) -> Option<usize> {
    let cr = buf.iter().position(|&b| b == b'\r')?;
    (cr + 2 <= buf.len()).then_some(cr)
}

/// A decimal integer as Redis's `string2ll` reads it: optional `-`, no `+`, no leading
/// zeros, no `-0`, no spaces, within `i64`.
pub(crate) fn parse_int(digits: &[u8]) -> Option<i64> {
    let (negative, body) = match digits {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, digits),
    };
    match body {
        [] => return None,
        [b'0'] if !negative => return Some(0),
        [b'1'..=b'9', ..] => {}
        _ => return None,
    }
    let mut value: i64 = 0;
    for &d in body {
        if !d.is_ascii_digit() {
            return None;
        }
        let digit = i64::from(d - b'0');
        value = if negative {
            value.checked_mul(10)?.checked_sub(digit)?
        } else {
            value.checked_mul(10)?.checked_add(digit)?
        };
    }
    Some(value)
}

/// C's `isspace`, which Redis uses between inline arguments.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).map(|d| d as u8)
}

/// Why a command line does not split into arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteError {
    /// A `"` or `'` that is never closed.
    Unterminated(char),
    /// A closing `"` or `'` followed by something other than a space or the end.
    NoSpaceAfter(char),
}

impl std::fmt::Display for QuoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuoteError::Unterminated(q) => write!(f, "unterminated {q} quote"),
            QuoteError::NoSpaceAfter(q) => write!(
                f,
                "a closing {q} must be followed by a space or the end of the command"
            ),
        }
    }
}

impl std::error::Error for QuoteError {}

/// Splits a command line into arguments as Redis's `sdssplitargs` does (redis-cli, inline
/// requests, and memtier's `--command`): whitespace separates, `"..."` understands
/// `\n \r \t \b \a \xHH` and `\<any>`, `'...'` only `\'`, a quote may start mid-word, and a
/// closing quote must be followed by a space or the end of the line.
pub fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, QuoteError> {
    let (mut out, mut ranges) = (Vec::new(), Vec::new());
    split_into(line, &mut out, &mut ranges)?;
    Ok(ranges.into_iter().map(|r| out[r].to_vec()).collect())
}

/// [`split_args`] into one buffer and the ranges of its arguments (the inline parser reuses
/// both across requests).
fn split_into(
    line: &[u8],
    out: &mut Vec<u8>,
    ranges: &mut Vec<Range<usize>>,
) -> Result<(), QuoteError> {
    // Redis splits a C string: a NUL ends the line. (Without this cut, a NUL between
    // arguments would stop both loops below without advancing.)
    let line = match line.iter().position(|&b| b == 0) {
        Some(end) => &line[..end],
        None => line,
    };
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p == line.len() {
            return Ok(());
        }
        let start = out.len();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let Some(&c) = line.get(p) else {
                if in_double {
                    return Err(QuoteError::Unterminated('"'));
                }
                if in_single {
                    return Err(QuoteError::Unterminated('\''));
                }
                break;
            };
            let next = line.get(p + 1).copied();
            if in_double {
                let hex = (next == Some(b'x'))
                    .then(|| {
                        let hi = hex_value(*line.get(p + 2)?)?;
                        let lo = hex_value(*line.get(p + 3)?)?;
                        Some(hi * 16 + lo)
                    })
                    .flatten();
                match (c, next, hex) {
                    (b'\\', _, Some(byte)) => {
                        out.push(byte);
                        p += 3;
                    }
                    (b'\\', Some(escaped), None) => {
                        out.push(match escaped {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        p += 1;
                    }
                    (b'"', _, _) => {
                        if next.is_some_and(|b| !is_space(b)) {
                            return Err(QuoteError::NoSpaceAfter('"'));
                        }
                        p += 1;
                        break;
                    }
                    _ => out.push(c),
                }
            } else if in_single {
                match (c, next) {
                    (b'\\', Some(b'\'')) => {
                        out.push(b'\'');
                        p += 1;
                    }
                    (b'\'', _) => {
                        if next.is_some_and(|b| !is_space(b)) {
                            return Err(QuoteError::NoSpaceAfter('\''));
                        }
                        p += 1;
                        break;
                    }
                    _ => out.push(c),
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' => break,
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => out.push(c),
                }
            }
            p += 1;
        }
        ranges.push(start..out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_args_names_the_quote_that_is_wrong() {
        let split = |s: &str| split_args(s.as_bytes());
        assert_eq!(
            split(r#"SET k "a b" 'c\'d' e"x y""#).unwrap(),
            [&b"SET"[..], b"k", b"a b", b"c'd", b"ex y"]
        );
        assert_eq!(split(r#"SET "abc"#), Err(QuoteError::Unterminated('"')));
        assert_eq!(split("SET 'abc"), Err(QuoteError::Unterminated('\'')));
        assert_eq!(split(r#"SET "abc"def"#), Err(QuoteError::NoSpaceAfter('"')));
        assert_eq!(split("SET 'abc'def"), Err(QuoteError::NoSpaceAfter('\'')));
        assert_eq!(
            QuoteError::Unterminated('"').to_string(),
            "unterminated \" quote"
        );
    }

    /// Parses every request in `input` in one go: the arguments of each, or the error.
    fn parse_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut parser = RequestParser::default();
        let mut requests = Vec::new();
        let mut at = 0;
        while let Some(request) = parser.parse(&input[at..], true)? {
            at += request.consumed();
            requests.push(request.args().map(<[u8]>::to_vec).collect());
        }
        assert_eq!(at, input.len(), "unparsed bytes left");
        Ok(requests)
    }

    fn args(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    /// A request with many arguments does not leave its room with the connection: the
    /// next request starts from a list of common size.
    #[test]
    fn a_large_request_gives_its_room_back_to_the_next() {
        let mut big = b"*100001\r\n$4\r\nSADD\r\n".to_vec();
        for i in 0..100_000 {
            let member = i.to_string();
            big.extend_from_slice(format!("${}\r\n{member}\r\n", member.len()).as_bytes());
        }
        let mut parser = RequestParser::default();
        let request = parser.parse(&big, true).unwrap().unwrap();
        assert_eq!(request.len(), 100_001);
        assert!(parser.ranges.capacity() >= 100_001);
        let request = parser
            .parse(b"*1\r\n$4\r\nPING\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(request.arg(0), b"PING");
        assert!(parser.ranges.capacity() <= MAX_PREALLOCATED_ARGS);
    }

    #[test]
    fn array_requests_are_slices_of_the_buffer() {
        let input = b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
        let mut parser = RequestParser::default();
        let request = parser.parse(input, true).unwrap().unwrap();
        assert_eq!(request.consumed(), input.len());
        assert_eq!(request.len(), 2);
        assert_eq!(request.arg(1), b"hello");
        // The argument points into the input: no copy was made.
        assert!(std::ptr::eq(request.arg(1).as_ptr(), input[18..].as_ptr()));
    }

    /// A NUL in an inline request used to spin the splitter forever (and exhaust memory):
    /// the line ends at the NUL, as Redis reads it as a C string.
    #[test]
    fn a_nul_in_an_inline_request_ends_its_line() {
        assert_eq!(parse_all(b"GET\0k\r\n"), Ok(vec![args(&["GET"])]));
        assert_eq!(parse_all(b"SET a\0 b c\r\n"), Ok(vec![args(&["SET", "a"])]));
    }

    #[test]
    fn pipelined_requests_parse_one_after_another() {
        let input = b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\nGET k\r\n";
        assert_eq!(
            parse_all(input),
            Ok(vec![
                args(&["PING"]),
                args(&["SET", "k", ""]),
                args(&["GET", "k"])
            ])
        );
    }

    #[test]
    fn every_split_point_of_a_request_is_an_expected_partial_state() {
        let input = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\n";
        for cut in 0..input.len() {
            let mut parser = RequestParser::default();
            assert!(
                parser.parse(&input[..cut], true).unwrap().is_none(),
                "complete at {cut}"
            );
            // Resume with the whole request, byte by byte from the cut.
            for more in cut + 1..input.len() {
                assert!(parser.parse(&input[..more], true).unwrap().is_none());
            }
            let request = parser.parse(input, true).unwrap().unwrap();
            assert_eq!(request.consumed(), input.len());
            assert_eq!(request.arg(2), b"0123456789");
        }
    }

    #[test]
    fn bytes_needed_announces_a_large_value() {
        let mut parser = RequestParser::default();
        let input = b"*2\r\n$3\r\nSET\r\n$100000\r\nabc";
        assert!(parser.parse(input, true).unwrap().is_none());
        assert_eq!(parser.bytes_needed(), 22 + 100_000 + 2);
    }

    #[test]
    fn empty_requests_are_skipped_as_redis_does() {
        assert_eq!(
            parse_all(b"*0\r\n*-1\r\n\r\n   \n*1\r\n$4\r\nPING\r\n"),
            Ok(vec![vec![], vec![], vec![], vec![], args(&["PING"])])
        );
    }

    #[test]
    fn the_bytes_after_a_bulk_string_are_not_checked() {
        assert_eq!(
            parse_all(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"),
            Ok(vec![args(&["PING"]), args(&["PING"])])
        );
    }

    #[test]
    fn protocol_errors_are_redis_words() {
        let cases: [(&[u8], &str); 10] = [
            (b"*x\r\n", "ERR Protocol error: invalid multibulk length"),
            (b"*+1\r\n", "ERR Protocol error: invalid multibulk length"),
            (
                b"*3000000000\r\n",
                "ERR Protocol error: invalid multibulk length",
            ),
            (b"*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"),
            (b"*1\r\n$01\r\n", "ERR Protocol error: invalid bulk length"),
            (
                b"*1\r\n$600000000\r\n",
                "ERR Protocol error: invalid bulk length",
            ),
            (
                b"*1\r\nfoo\r\n",
                "ERR Protocol error: expected '$', got 'f'",
            ),
            (b"*1\r\n\r\n", "ERR Protocol error: expected '$', got ' '"),
            (
                b"ECHO \"ab\r\n",
                "ERR Protocol error: unbalanced quotes in request",
            ),
            (
                b"ECHO \"a\"b\r\n",
                "ERR Protocol error: unbalanced quotes in request",
            ),
        ];
        for (input, text) in cases {
            let error = parse_all(input).expect_err(&format!("{input:?} parsed"));
            assert_eq!(error.text(), text, "{input:?}");
        }
    }

    #[test]
    fn header_lines_and_inline_requests_are_bounded() {
        let long_inline = vec![b'A'; INLINE_MAX_SIZE + 1];
        let mut count = b"*".to_vec();
        count.extend(vec![b'1'; INLINE_MAX_SIZE]);
        let mut bulk = b"*1\r\n$".to_vec();
        bulk.extend(vec![b'1'; INLINE_MAX_SIZE]);
        for (input, error) in [
            (long_inline, ProtocolError::TooBigInlineRequest),
            (count, ProtocolError::TooBigMultibulkCount),
            (bulk, ProtocolError::TooBigBulkCount),
        ] {
            let mut parser = RequestParser::default();
            assert_eq!(parser.parse(&input, true).unwrap_err(), error);
            // One byte less is still a partial request.
            let mut parser = RequestParser::default();
            assert!(parser
                .parse(&input[..input.len() - 1], true)
                .unwrap()
                .is_none());
        }
    }

    #[test]
    fn proto_max_bulk_len_is_configurable() {
        let mut parser = RequestParser::new(5);
        assert!(parser
            .parse(b"*1\r\n$5\r\nhello\r\n", true)
            .unwrap()
            .is_some());
        assert_eq!(
            parser.parse(b"*1\r\n$6\r\n", true).unwrap_err(),
            ProtocolError::InvalidBulkLength
        );
    }

    #[test]
    fn unauthenticated_clients_get_lower_limits() {
        let mut parser = RequestParser::default();
        assert_eq!(
            parser.parse(b"*11\r\n", false).unwrap_err(),
            ProtocolError::UnauthenticatedMultibulkLength
        );
        assert!(parser.parse(b"*10\r\n", false).unwrap().is_none());
        let mut parser = RequestParser::default();
        assert_eq!(
            parser.parse(b"*1\r\n$16385\r\n", false).unwrap_err(),
            ProtocolError::UnauthenticatedBulkLength
        );
        assert_eq!(
            ProtocolError::UnauthenticatedBulkLength.text(),
            "ERR Protocol error: unauthenticated bulk length"
        );
    }

    #[test]
    fn inline_requests_split_like_sdssplitargs() {
        assert_eq!(
            parse_all(b"SET k v\r\nECHO\ta\nECHO \"a\\x41\\n\\q\\x4g\" 'it\\'s' \"\" ''\r\n"),
            Ok(vec![
                args(&["SET", "k", "v"]),
                args(&["ECHO", "a"]),
                args(&["ECHO", "aA\nqx4g", "it's", "", ""]),
            ])
        );
        assert_eq!(
            parse_all(b"ECHO a\"b c\"\r\n"),
            Ok(vec![args(&["ECHO", "ab c"])])
        );
    }

    #[test]
    fn integers_parse_like_string2ll() {
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"-12"), Some(-12));
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }
}
