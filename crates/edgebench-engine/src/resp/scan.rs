//! Client-side reply framing: where one RESP2/RESP3 reply ends, and what kind it is, without
//! building it.
//!
//! A load generator needs only three facts about a reply: how many bytes it took (to find the
//! next one in a pipelined read), whether it was an error, and whether it was a nil or an
//! empty aggregate (a miss, for GET-like commands). Scanning in place answers them with no
//! allocation, so the client's cost per reply stays a few nanoseconds whatever the reply holds.
//!
//! Invariant: [`scan_reply`] never reads past `buf`, and returns `Ok(None)` (need more bytes)
//! for every proper prefix of a valid reply, so a caller can append what the socket gives it
//! and call again. Nesting is walked iteratively with a small stack of remaining counts, so
//! a hostile server cannot overflow the call stack; lengths are bounded by the buffer they
//! claim to fit in, never trusted for allocation.

/// A reply that is not RESP: the server (or whatever answered) is not speaking the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply from the server: {0}")]
pub struct BadReply(pub String);

/// What a scanned reply was, as a load generator counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// `-ERR ...` or RESP3 `!` (bulk error).
    Error,
    /// A nil (`$-1`, `*-1`, RESP3 `_`) or an empty array / set / map: nothing was found.
    Miss,
    /// Anything else.
    Value,
}

/// A reply found at the start of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// Bytes the reply took, including every CRLF.
    pub len: usize,
    /// What it was (of the outermost reply).
    pub kind: ReplyKind,
}

/// Deepest nesting accepted (Redis itself nests replies a few levels deep at most).
const MAX_DEPTH: usize = 64;

/// Scans the reply at the start of `buf`: `Ok(None)` when `buf` holds only part of it.
pub fn scan_reply(buf: &[u8]) -> Result<Option<Scanned>, BadReply> {
    let mut pos = 0;
    // Elements still to read at each open aggregate level.
    let mut pending: [u64; MAX_DEPTH] = [0; MAX_DEPTH];
    let mut depth = 0;
    let mut kind = None;
    loop {
        let Some(&tag) = buf.get(pos) else {
            return Ok(None);
        };
        let Some(line_end) = find_crlf(buf, pos + 1)? else {
            return Ok(None);
        };
        let line = &buf[pos + 1..line_end];
        pos = line_end + 2;
        // Children of this element (0 for scalars).
        let mut children: u64 = 0;
        let this = match tag {
            b'+' | b':' | b',' | b'#' | b'(' => ReplyKind::Value,
            b'-' => ReplyKind::Error,
            b'_' => ReplyKind::Miss,
            b'$' | b'=' | b'!' => {
                let n = int(line)?;
                if n < 0 {
                    if tag != b'$' {
                        return Err(BadReply(format!(
                            "negative length {n} in a {} reply",
                            tag as char
                        )));
                    }
                    ReplyKind::Miss
                } else {
                    let end = pos
                        .checked_add(n as usize)
                        .and_then(|e| e.checked_add(2))
                        .ok_or_else(|| BadReply(format!("bulk length {n}")))?;
                    if buf.len() < end {
                        return Ok(None);
                    }
                    if &buf[end - 2..end] != b"\r\n" {
                        return Err(BadReply("bulk reply not followed by CRLF".into()));
                    }
                    pos = end;
                    if tag == b'!' {
                        ReplyKind::Error
                    } else {
                        ReplyKind::Value
                    }
                }
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = int(line)?;
                if n < 0 {
                    if tag != b'*' {
                        return Err(BadReply(format!(
                            "negative count {n} in a {} reply",
                            tag as char
                        )));
                    }
                    ReplyKind::Miss
                } else {
                    // Maps and attributes hold key-value pairs.
                    children = if matches!(tag, b'%' | b'|') {
                        (n as u64).saturating_mul(2)
                    } else {
                        n as u64
                    };
                    // An element cannot take less than 3 bytes: a longer count than the rest
                    // of the buffer could hold is incomplete for now, not an allocation.
                    if children == 0 {
                        ReplyKind::Miss
                    } else {
                        ReplyKind::Value
                    }
                }
            }
            other => {
                return Err(BadReply(format!(
                    "unexpected reply type byte {:?}",
                    other as char
                )))
            }
        };
        // An attribute (`|`) precedes the reply it annotates: it does not count as one.
        let is_attribute = tag == b'|';
        if kind.is_none() && depth == 0 && !is_attribute {
            kind = Some(this);
        }
        if children > 0 {
            if depth == MAX_DEPTH {
                return Err(BadReply(format!(
                    "reply nested deeper than {MAX_DEPTH} levels"
                )));
            }
            pending[depth] = children;
            depth += 1;
            continue;
        }
        // A scalar (or empty aggregate) completed: close every level it finishes.
        loop {
            if depth == 0 {
                if is_attribute && kind.is_none() {
                    // A top-level empty attribute: the real reply follows.
                    break;
                }
                return Ok(kind.map(|kind| Scanned { len: pos, kind }));
            }
            pending[depth - 1] -= 1;
            if pending[depth - 1] > 0 {
                break;
            }
            depth -= 1;
            if depth == 0 && kind.is_none() {
                // The aggregate that just closed was a top-level attribute.
                break;
            }
        }
    }
}

/// The index of the CR that ends the line starting at `from`; `None` until its LF arrived.
fn find_crlf(buf: &[u8], from: usize) -> Result<Option<usize>, BadReply> {
    let Some(rest) = buf.get(from..) else {
        return Ok(None);
    };
    match rest.iter().position(|&b| b == b'\n') {
        None => Ok(None),
        Some(i) if i > 0 && rest[i - 1] == b'\r' => Ok(Some(from + i - 1)),
        Some(_) => Err(BadReply("reply line not ended by CRLF".into())),
    }
}

fn int(line: &[u8]) -> Result<i64, BadReply> {
    parse_i64(line).ok_or_else(|| {
        BadReply(format!(
            "invalid length {:?}",
            String::from_utf8_lossy(line)
        ))
    })
}

/// A decimal `i64` (an optional `-` or `+`, then digits), as `str::parse` reads it, without
/// the UTF-8 check and the generic parser: every length of every reply goes through here.
pub fn parse_i64(line: &[u8]) -> Option<i64> {
    let (negative, digits) = match line.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, line),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        n = if negative {
            n.checked_mul(10)?.checked_sub(d)?
        } else {
            n.checked_mul(10)?.checked_add(d)?
        };
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_parse_as_str_parse_does() {
        for text in [
            "0",
            "7",
            "-1",
            "+5",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert_eq!(parse_i64(text.as_bytes()), text.parse().ok(), "{text}");
        }
        for bad in ["", "-", "1x", "9223372036854775808", " 1", "--1"] {
            assert_eq!(parse_i64(bad.as_bytes()), None, "{bad}");
        }
    }

    fn scan(bytes: &[u8]) -> Option<Scanned> {
        scan_reply(bytes).unwrap_or_else(|e| panic!("{bytes:?}: {e}"))
    }

    fn full(bytes: &[u8], kind: ReplyKind) {
        assert_eq!(
            scan(bytes),
            Some(Scanned {
                len: bytes.len(),
                kind
            }),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
        // Every proper prefix is incomplete, and trailing bytes are not consumed.
        for cut in 0..bytes.len() {
            assert_eq!(scan(&bytes[..cut]), None, "prefix {cut} of {bytes:?}");
        }
        let mut more = bytes.to_vec();
        more.extend_from_slice(b"+OK\r\n");
        assert_eq!(scan(&more).map(|s| s.len), Some(bytes.len()));
    }

    #[test]
    fn scalars() {
        full(b"+OK\r\n", ReplyKind::Value);
        full(b"-ERR unknown command\r\n", ReplyKind::Error);
        full(b":42\r\n", ReplyKind::Value);
        full(b"$5\r\nhello\r\n", ReplyKind::Value);
        full(b"$0\r\n\r\n", ReplyKind::Value);
        full(b"$-1\r\n", ReplyKind::Miss);
        full(b"_\r\n", ReplyKind::Miss);
        full(b",3.14\r\n", ReplyKind::Value);
        full(b"#t\r\n", ReplyKind::Value);
        full(b"(12345678901234567890\r\n", ReplyKind::Value);
        full(b"!21\r\nSYNTAX invalid syntax\r\n", ReplyKind::Error);
        full(b"=15\r\ntxt:Some string\r\n", ReplyKind::Value);
    }

    #[test]
    fn bulk_bodies_may_hold_crlf() {
        full(b"$4\r\n\r\n\r\n\r\n", ReplyKind::Value);
    }

    #[test]
    fn aggregates() {
        full(b"*-1\r\n", ReplyKind::Miss);
        full(b"*0\r\n", ReplyKind::Miss);
        full(b"*2\r\n$1\r\na\r\n$-1\r\n", ReplyKind::Value);
        full(b"*2\r\n*1\r\n:1\r\n*0\r\n", ReplyKind::Value);
        full(b"%1\r\n+key\r\n*2\r\n:1\r\n:2\r\n", ReplyKind::Value);
        full(b"~2\r\n+a\r\n+b\r\n", ReplyKind::Value);
        full(b">3\r\n+message\r\n+ch\r\n$2\r\nhi\r\n", ReplyKind::Value);
        full(b"*1\r\n-ERR inside\r\n", ReplyKind::Value);
    }

    #[test]
    fn an_attribute_belongs_to_the_reply_after_it() {
        full(b"|1\r\n+ttl\r\n:3600\r\n$-1\r\n", ReplyKind::Miss);
        full(b"|1\r\n+ttl\r\n:3600\r\n:7\r\n", ReplyKind::Value);
    }

    #[test]
    fn garbage_is_an_error_not_a_hang() {
        for bad in [
            &b"?what\r\n"[..],
            b"$x\r\n",
            b"$3\r\nabcd\r\n",
            b"~-1\r\n",
            b"!-1\r\n",
            b"+OK\n",
        ] {
            assert!(
                scan_reply(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = b"*1\r\n".repeat(MAX_DEPTH + 1);
        assert!(scan_reply(&deep).is_err());
    }

    #[test]
    fn a_huge_claimed_length_waits_without_allocating() {
        assert_eq!(scan(b"$9223372036854775000\r\nab"), None);
        assert_eq!(scan(b"$9223372036854775807\r\n"), None);
        assert_eq!(scan(b"*4294967295\r\n:1\r\n"), None);
    }
}
