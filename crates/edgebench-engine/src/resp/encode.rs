//! Reply encoding: a [`Reply`] → RESP2 or RESP3 bytes, appended to the connection's output
//! buffer (one buffer per batch of pipelined commands, written with one syscall).
//!
//! RESP2 has no maps, sets, doubles, booleans, verbatim strings, pushes or a single null, so
//! those are written as redis-server writes them to a RESP2 client: a map as a flat array of
//! keys and values, a set as an array, a double as a bulk string, a boolean as `:1`/`:0`, a
//! verbatim string as a bulk string, a push as an array, and the two nulls as `$-1` / `*-1`.

use super::protocol::Protocol;
use super::reply::{format_f64, Reply};

/// Appends `reply`, encoded for a client speaking `protocol`, to `out`.
pub fn encode(reply: &Reply, protocol: Protocol, out: &mut Vec<u8>) {
    let resp3 = protocol == Protocol::Resp3;
    match reply {
        Reply::Status(text) => write_line(out, b'+', text.as_bytes()),
        Reply::Error(text) => write_line(out, b'-', text.as_bytes()),
        Reply::Int(n) => write_int(out, b':', *n),
        Reply::Bulk(bytes) => write_bulk(out, bytes),
        Reply::Nil if resp3 => out.extend_from_slice(b"_\r\n"),
        Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
        Reply::NilArray if resp3 => out.extend_from_slice(b"_\r\n"),
        Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
        Reply::Array(items) => write_aggregate(out, b'*', items, protocol),
        Reply::Double(d) if resp3 => write_line(out, b',', format_f64(*d).as_bytes()),
        Reply::Double(d) => write_bulk(out, format_f64(*d).as_bytes()),
        Reply::HumanDouble(text) if resp3 => write_line(out, b',', text.as_bytes()),
        Reply::HumanDouble(text) => write_bulk(out, text.as_bytes()),
        Reply::Map(pairs) => {
            let (kind, len) = if resp3 {
                (b'%', pairs.len())
            } else {
                (b'*', pairs.len().saturating_mul(2))
            };
            write_len(out, kind, len);
            for (key, value) in pairs {
                encode(key, protocol, out);
                encode(value, protocol, out);
            }
        }
        Reply::Set(items) => write_aggregate(out, if resp3 { b'~' } else { b'*' }, items, protocol),
        Reply::Bool(b) if resp3 => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        Reply::Bool(b) => write_int(out, b':', i64::from(*b)),
        Reply::Verbatim(text) if resp3 => {
            write_len(out, b'=', text.len() + 4);
            out.extend_from_slice(b"txt:");
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Reply::Verbatim(text) => write_bulk(out, text.as_bytes()),
        Reply::Push(items) => {
            write_aggregate(out, if resp3 { b'>' } else { b'*' }, items, protocol)
        }
    }
}

/// The bytes of `reply` for `protocol`, in a new buffer.
pub fn to_bytes(reply: &Reply, protocol: Protocol) -> Vec<u8> {
    let mut out = Vec::new();
    encode(reply, protocol, &mut out);
    out
}

fn write_aggregate(out: &mut Vec<u8>, kind: u8, items: &[Reply], protocol: Protocol) {
    write_len(out, kind, items.len());
    for item in items {
        encode(item, protocol, out);
    }
}

/// `+text` or `-text`. A line end inside would end the reply early and desynchronise the
/// client, so it becomes a space, as Redis does for error texts.
fn write_line(out: &mut Vec<u8>, kind: u8, text: &[u8]) {
    out.push(kind);
    if text.iter().any(|&b| b == b'\r' || b == b'\n') {
        out.extend(text.iter().map(|&b| match b {
            b'\r' | b'\n' => b' ',
            b => b,
        }));
    } else {
        out.extend_from_slice(text);
    }
    out.extend_from_slice(b"\r\n");
}

/// `$len\r\nbytes\r\n`.
pub fn write_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    write_len(out, b'$', bytes.len());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// An aggregate or bulk header: `kind` (`*`, `$`, `%`, `~`, `>`) then the length.
pub fn write_len(out: &mut Vec<u8>, kind: u8, len: usize) {
    write_int(out, kind, i64::try_from(len).unwrap_or(i64::MAX));
}

/// `kind` then the decimal integer and `\r\n`, without going through `fmt` (every reply
/// header is one of these).
pub fn write_int(out: &mut Vec<u8>, kind: u8, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.push(kind);
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(reply: Reply) -> (String, String) {
        let text = |p| String::from_utf8_lossy(&to_bytes(&reply, p)).into_owned();
        (text(Protocol::Resp2), text(Protocol::Resp3))
    }

    #[test]
    fn simple_kinds() {
        assert_eq!(both(Reply::ok()), ("+OK\r\n".into(), "+OK\r\n".into()));
        let err = "-ERR syntax error\r\n".to_string();
        assert_eq!(both(Reply::err("ERR syntax error")), (err.clone(), err));
        for (n, text) in [
            (0, ":0\r\n"),
            (-1, ":-1\r\n"),
            (i64::MIN, ":-9223372036854775808\r\n"),
        ] {
            assert_eq!(both(Reply::Int(n)).0, text);
        }
        assert_eq!(both(Reply::Int(i64::MAX)).1, ":9223372036854775807\r\n");
        assert_eq!(both(Reply::bulk(b"")).0, "$0\r\n\r\n");
        assert_eq!(both(Reply::bulk(b"a\r\nb")).1, "$4\r\na\r\nb\r\n");
    }

    #[test]
    fn nulls() {
        assert_eq!(both(Reply::Nil), ("$-1\r\n".into(), "_\r\n".into()));
        assert_eq!(both(Reply::NilArray), ("*-1\r\n".into(), "_\r\n".into()));
    }

    #[test]
    fn resp3_kinds_and_their_resp2_forms() {
        let map = Reply::Map(vec![(Reply::bulk(b"k"), Reply::Int(1))]);
        assert_eq!(
            both(map),
            (
                "*2\r\n$1\r\nk\r\n:1\r\n".into(),
                "%1\r\n$1\r\nk\r\n:1\r\n".into()
            )
        );
        assert_eq!(
            both(Reply::Set(vec![Reply::bulk(b"m")])),
            ("*1\r\n$1\r\nm\r\n".into(), "~1\r\n$1\r\nm\r\n".into())
        );
        assert_eq!(
            both(Reply::Double(1.5)),
            ("$3\r\n1.5\r\n".into(), ",1.5\r\n".into())
        );
        assert_eq!(
            both(Reply::Double(f64::NEG_INFINITY)),
            ("$4\r\n-inf\r\n".into(), ",-inf\r\n".into())
        );
        assert_eq!(
            both(Reply::HumanDouble("13.36138933897018433".into())),
            (
                "$20\r\n13.36138933897018433\r\n".into(),
                ",13.36138933897018433\r\n".into()
            )
        );
        assert_eq!(both(Reply::Bool(true)), (":1\r\n".into(), "#t\r\n".into()));
        assert_eq!(both(Reply::Bool(false)), (":0\r\n".into(), "#f\r\n".into()));
        assert_eq!(
            both(Reply::Verbatim("hi".into())),
            ("$2\r\nhi\r\n".into(), "=6\r\ntxt:hi\r\n".into())
        );
        assert_eq!(
            both(Reply::Push(vec![Reply::bulk(b"message"), Reply::Nil])),
            (
                "*2\r\n$7\r\nmessage\r\n$-1\r\n".into(),
                ">2\r\n$7\r\nmessage\r\n_\r\n".into()
            )
        );
    }

    #[test]
    fn nested_aggregates() {
        let reply = Reply::Array(vec![
            Reply::Array(vec![]),
            Reply::Map(vec![(Reply::Status("a".into()), Reply::NilArray)]),
        ]);
        assert_eq!(
            both(reply),
            (
                "*2\r\n*0\r\n*2\r\n+a\r\n*-1\r\n".into(),
                "*2\r\n*0\r\n%1\r\n+a\r\n_\r\n".into()
            )
        );
    }

    #[test]
    fn line_ends_inside_status_and_error_texts_become_spaces() {
        assert_eq!(
            both(Reply::Error("ERR bad\r\nthing".into())).0,
            "-ERR bad  thing\r\n"
        );
    }
}
