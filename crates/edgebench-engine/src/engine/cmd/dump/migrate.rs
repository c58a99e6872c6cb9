//! MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
//! AUTH2 username password] [KEYS key ...]: moves keys to another server (redis-server or
//! the engine behind its RESP server) as Redis 7.0 does — DUMP payloads sent as `RESTORE key
//! ttl payload [REPLACE]` after an optional AUTH and a SELECT, each key deleted here once
//! the target acknowledged it (unless COPY).
//!
//! Like redis-server, the command holds its keys while it talks to the target, bounded by
//! `timeout` (ms; 0 or less: 1 s) for the connection and each read and write. Unlike
//! redis-server, it keeps no connection between calls (INFO's `migrate_cached_sockets` is 0).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::{payload, CmdError};
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::keyevents::Classes;
use crate::resp::reply::Reply;

/// MIGRATE's key positions: the key argument, or those after KEYS when it is empty.
pub(crate) fn key_positions(args: &[&[u8]]) -> Vec<usize> {
    let mut i = 6;
    while i < args.len() {
        if is(args[i], "keys") {
            return if args.get(3).is_some_and(|k| k.is_empty()) {
                (i + 1..args.len()).collect()
            } else {
                Vec::new()
            };
        }
        if is(args[i], "auth") {
            i += 1;
        } else if is(args[i], "auth2") {
            i += 2;
        }
        i += 1;
    }
    vec![3]
}

struct Options<'a> {
    copy: bool,
    replace: bool,
    auth: Option<(Option<&'a [u8]>, &'a [u8])>,
    keys: Vec<&'a [u8]>,
}

fn options<'a>(args: &[&'a [u8]]) -> Result<Options<'a>, CmdError> {
    let mut o = Options {
        copy: false,
        replace: false,
        auth: None,
        keys: vec![args[3]],
    };
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let a = args[j];
        if is(a, "copy") {
            o.copy = true;
        } else if is(a, "replace") {
            o.replace = true;
        } else if is(a, "auth") {
            if more == 0 {
                return Err(CmdError::Syntax);
            }
            j += 1;
            o.auth = Some((None, args[j]));
        } else if is(a, "auth2") {
            if more < 2 {
                return Err(CmdError::Syntax);
            }
            o.auth = Some((Some(args[j + 1]), args[j + 2]));
            j += 2;
        } else if is(a, "keys") {
            if !args[3].is_empty() {
                return Err(CmdError::Other(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
                        .into(),
                ));
            }
            o.keys = args[j + 1..].to_vec();
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

/// `*N` then each argument as a bulk string.
fn command(parts: &[&[u8]], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
    for p in parts {
        out.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
        out.extend_from_slice(p);
        out.extend_from_slice(b"\r\n");
    }
}

fn io_error(what: &str) -> CmdError {
    CmdError::Other(format!("IOERR error or timeout {what} to target instance").into())
}

pub(super) fn migrate(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let o = options(args)?;
    let timeout_ms = parse_i64(args[5])?;
    let db = parse_i64(args[4])?;
    let timeout = Duration::from_millis(if timeout_ms <= 0 {
        1000
    } else {
        timeout_ms as u64
    });
    let fill = ctx
        .engine
        .config_get("list-max-listpack-size")
        .and_then(|v| v.parse().ok())
        .unwrap_or(-2);
    // The keys that exist, with their payloads and remaining TTLs (ms, 0: none).
    let now = ctx.ks.now_ms();
    let mut found: Vec<(&[u8], Vec<u8>, u64)> = Vec::new();
    for &key in &o.keys {
        let Some(encoding) = ctx.ks.encoding_of(key) else {
            continue;
        };
        let Some(entry) = ctx.ks.peek(key) else {
            continue;
        };
        let ttl = entry
            .expires_at_ms()
            .map_or(0, |t| t.saturating_sub(now).max(1));
        found.push((key, payload(&entry.value, encoding, fill), ttl));
    }
    if found.is_empty() {
        return Ok(Reply::Status("NOKEY".into()));
    }
    let host = String::from_utf8_lossy(args[1]).into_owned();
    let port = String::from_utf8_lossy(args[2]).into_owned();
    let addr = format!("{host}:{port}")
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next());
    let stream = match addr.map(|a| TcpStream::connect_timeout(&a, timeout)) {
        Some(Ok(stream)) => stream,
        // redis-server connects without waiting and learns of a refusal when it writes,
        // so that is the error it names.
        Some(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(io_error("writing"))
        }
        _ => {
            return Err(CmdError::Other(
                "IOERR error or timeout connecting to the client".into(),
            ))
        }
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let _ = stream.set_nodelay(true);
    // Everything in one write, as Redis sends it, then the replies in order.
    let mut out = Vec::new();
    if let Some((user, pass)) = o.auth {
        match user {
            Some(u) => command(&[b"AUTH", u, pass], &mut out),
            None => command(&[b"AUTH", pass], &mut out),
        }
    }
    let db_text = db.to_string();
    command(&[b"SELECT", db_text.as_bytes()], &mut out);
    for (key, data, ttl) in &found {
        let ttl_text = ttl.to_string();
        let mut parts: Vec<&[u8]> = vec![b"RESTORE", key, ttl_text.as_bytes(), data];
        if o.replace {
            parts.push(b"REPLACE");
        }
        command(&parts, &mut out);
    }
    let mut writer = &stream;
    if writer.write_all(&out).is_err() {
        return Err(io_error("writing"));
    }
    let mut reader = BufReader::new(&stream);
    let mut read_line = || -> Result<String, CmdError> {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(n) if n > 0 => Ok(line.trim_end().to_string()),
            _ => Err(io_error("reading")),
        }
    };
    let target_error = |line: &str| {
        CmdError::Other(
            format!(
                "ERR Target instance replied with error: {}",
                line.strip_prefix('-').unwrap_or(line)
            )
            .into(),
        )
    };
    if o.auth.is_some() {
        let line = read_line()?;
        if line.starts_with('-') {
            return Err(target_error(&line));
        }
    }
    let line = read_line()?;
    if line.starts_with('-') {
        return Err(target_error(&line));
    }
    let mut first_error = None;
    for (key, _, _) in &found {
        let line = read_line()?;
        if line.starts_with('-') {
            first_error.get_or_insert(line);
        } else if !o.copy {
            // Acknowledged by the target: gone from here.
            if ctx.ks.remove(key).is_some() {
                ctx.ks.notify(Classes::GENERIC, "del", key);
            }
        }
    }
    match first_error {
        Some(line) => Err(target_error(&line)),
        None => Ok(Reply::ok()),
    }
}
