//! DUMP and RESTORE: a value in Redis 7.0's serialization, so payloads move between the
//! engine and redis-server both ways.
//!
//! A payload is one RDB value ([`rdb`]), then the RDB version as 2 bytes little endian (10,
//! Redis 7.0's), then the CRC-64 ([`crc64`]) of everything before it, 8 bytes little endian.
//! RESTORE checks the footer (`ERR DUMP payload version or checksum are wrong`: a version
//! above 10 or a wrong checksum), then decodes the value, refusing anything malformed with
//! `ERR Bad data format`; the payload is client input, so decoding allocates no more than a
//! small multiple of its size and never panics.
//!
//! RESTORE's IDLETIME sets the key's last access that far back (OBJECT IDLETIME); FREQ is
//! checked as Redis checks it and then ignored: the engine keeps no access frequencies
//! (see `object`).
//!
//! Keyspace events: `restore` (after `new`: a replaced key is deleted first), or `del` alone
//! when REPLACE removed a key and the payload's TTL has already passed, as in Redis.

pub mod crc64;
pub mod listpack;
pub mod lzf;
pub(crate) mod migrate;
pub mod rdb;
mod stream;

use std::borrow::Cow;

use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Value};
use crate::resp::reply::Reply;

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[
    spec("dump", 2, ONE_KEY, false, dump),
    spec("restore", -4, ONE_KEY, true, restore),
    spec(
        "migrate",
        -6,
        KeySpec::Custom(migrate::key_positions),
        true,
        migrate::migrate,
    ),
];

/// The RDB version Redis 7.0 writes and the newest it reads.
pub const RDB_VERSION: u16 = 10;

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

/// A DUMP payload of `value`, with its footer. `encoding` is OBJECT ENCODING's name for it
/// (it picks the RDB type), `list_fill` the `list-max-listpack-size` that cuts list nodes.
pub fn payload(value: &Value, encoding: &str, list_fill: i64) -> Vec<u8> {
    let mut out = Vec::new();
    rdb::write_value(value, encoding, list_fill, &mut out);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Why a payload was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadError {
    /// Too short, a newer RDB version, or a wrong checksum.
    Footer,
    /// Not a value Redis could have written.
    BadFormat,
}

impl From<PayloadError> for CmdError {
    fn from(e: PayloadError) -> CmdError {
        match e {
            PayloadError::Footer => err("ERR DUMP payload version or checksum are wrong"),
            PayloadError::BadFormat => err("ERR Bad data format"),
        }
    }
}

/// The value a DUMP payload holds.
pub fn decode(payload: &[u8]) -> Result<Value, PayloadError> {
    let Some(body_len) = payload.len().checked_sub(10) else {
        return Err(PayloadError::Footer);
    };
    let footer = &payload[body_len..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let mut crc = [0u8; 8];
    crc.copy_from_slice(&footer[2..]);
    if version > RDB_VERSION || crc64::crc64(&payload[..body_len + 2]) != u64::from_le_bytes(crc) {
        return Err(PayloadError::Footer);
    }
    // As Redis, the value is read from the whole payload: a body cut short may run into
    // the footer's bytes (and is then checked as whatever they make).
    rdb::read_value(&mut rdb::Reader::new(payload)).map_err(|_| PayloadError::BadFormat)
}

fn dump(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let fill = ctx
        .engine
        .config_get("list-max-listpack-size")
        .and_then(|v| v.parse().ok())
        .unwrap_or(-2);
    let key = args[1];
    let Some(encoding) = ctx.ks.encoding_of(key) else {
        return Ok(Reply::Nil);
    };
    let Some(entry) = ctx.ks.get(key) else {
        return Ok(Reply::Nil);
    };
    Ok(Reply::Bulk(payload(&entry.value, encoding, fill)))
}

/// RESTORE's options.
#[derive(Debug, Default)]
struct RestoreOptions {
    replace: bool,
    absolute_ttl: bool,
    /// IDLETIME, seconds.
    idle_s: Option<i64>,
}

fn restore_options(args: &[&[u8]]) -> Result<RestoreOptions, CmdError> {
    let mut o = RestoreOptions::default();
    let (mut idle, mut freq) = (false, false);
    let mut j = 4;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(args[j], "replace") {
            o.replace = true;
        } else if is(args[j], "absttl") {
            o.absolute_ttl = true;
        } else if is(args[j], "idletime") && more && !freq {
            let v = parse_i64(args[j + 1])?;
            if v < 0 {
                return Err(err("ERR Invalid IDLETIME value, must be >= 0"));
            }
            o.idle_s = Some(v);
            idle = true;
            j += 1;
        } else if is(args[j], "freq") && more && !idle {
            if !(0..=255).contains(&parse_i64(args[j + 1])?) {
                return Err(err("ERR Invalid FREQ value, must be >= 0 and <= 255"));
            }
            freq = true;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

fn restore(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let o = restore_options(args)?;
    let key = args[1];
    if !o.replace && ctx.ks.exists(key) {
        return Err(err("BUSYKEY Target key name already exists."));
    }
    let ttl = parse_i64(args[2])?;
    if ttl < 0 {
        return Err(err("ERR Invalid TTL value, must be >= 0"));
    }
    let value = decode(args[3])?;
    let now = ctx.ks.now_ms() as i64;
    let expires_at = match ttl {
        0 => None,
        t if o.absolute_ttl => Some(t),
        t => Some(t.saturating_add(now)),
    };
    let deleted = o.replace && ctx.ks.remove(key).is_some();
    if let Some(t) = expires_at {
        if ctx.ks.has_passed(t) {
            // Born expired: only the replaced key's removal is announced, as in Redis.
            if deleted {
                ctx.ks.notify(Classes::GENERIC, "del", key);
            }
            return Ok(Reply::ok());
        }
    }
    let expires = expires_at.map(|t| t as u64);
    ctx.ks.insert(key, Entry::with_expiry(value, expires));
    if let Some(idle) = o.idle_s {
        let now_s = (now / 1000) as u64;
        let at = now_s.saturating_sub(u64::try_from(idle).unwrap_or(0));
        ctx.ks.set_accessed(key, at as u32);
    }
    ctx.ks.notify(Classes::GENERIC, "restore", key);
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::keyspace::{BytesSet, FieldMap};
    use proptest::prelude::*;

    fn framed(body: &[u8]) -> Vec<u8> {
        let mut out = body.to_vec();
        out.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64::crc64(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    fn element() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            any::<i64>().prop_map(|v| v.to_string().into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..80),
            "[a-c]{0,300}".prop_map(String::into_bytes),
        ]
    }

    proptest! {
        /// Any body with a valid footer decodes or is refused: never a panic.
        #[test]
        fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&framed(&body));
        }

        /// Values of every type come back as they went, whatever their encoding.
        #[test]
        fn values_round_trip(elements in proptest::collection::vec(element(), 1..40), fill in -5i64..20) {
            let list = Value::List(Box::new(elements.iter().cloned().collect()));
            let set: BytesSet = elements.iter().map(|e| e[..].into()).collect();
            let hash: FieldMap =
                elements.iter().map(|e| (e[..].into(), e.clone())).collect();
            let mut zset = crate::engine::types::ZSet::default();
            for (i, e) in elements.iter().enumerate() {
                zset.insert(e, i as f64 / 3.0);
            }
            let cases = [
                (list, "quicklist"),
                (Value::Set(Box::new(set.clone())), "hashtable"),
                (Value::Hash(Box::new(hash.clone())), "listpack"),
                (Value::Hash(Box::new(hash)), "hashtable"),
                (Value::ZSet(Box::new(zset.clone())), "listpack"),
                (Value::ZSet(Box::new(zset)), "skiplist"),
                (Value::Str(elements.concat()), "raw"),
            ];
            for (value, encoding) in cases {
                let back = decode(&payload(&value, encoding, fill)).expect("decodes");
                prop_assert_eq!(format!("{:?}", sorted(&back)), format!("{:?}", sorted(&value)));
            }
        }
    }

    /// A value's contents in a canonical order, to compare across hash orders.
    fn sorted(v: &Value) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = match v {
            Value::Str(s) => vec![s.clone()],
            Value::List(l) => return l.iter().cloned().collect(),
            Value::Set(s) => s.iter().map(|m| m.to_vec()).collect(),
            Value::Hash(h) => h.iter().map(|(f, v)| [&f[..], b"=", v].concat()).collect(),
            Value::ZSet(z) => {
                return z
                    .iter()
                    .map(|(m, s)| [m, &s.to_le_bytes()].concat())
                    .collect()
            }
            Value::Stream(_) => Vec::new(),
        };
        out.sort();
        out
    }
}
