//! RDB files, as redis-server 7.0 writes and reads them (RDB version 10): a snapshot of
//! every database, written from locked shards, and a loader that refuses anything it cannot
//! read rather than start with part of a dataset.
//!
//! Layout: `REDIS0010`, AUX fields (`redis-ver`, `redis-bits`, `ctime`, `used-mem`,
//! `aof-base`), one FUNCTION2 record per function library, then per non-empty database
//! SELECTDB, RESIZEDB and its keys (EXPIRETIME_MS before a key that has a TTL, then the
//! value's type, the key and the value in the DUMP encoding of [`crate::engine::cmd::dump`]),
//! then EOF and the CRC-64 of everything before it. The loader also takes what other 7.0
//! writers add (IDLE, FREQ, seconds EXPIRETIME, any AUX field) and a zero checksum (written
//! with `rdbchecksum no`); module data and the pre-7.0 value encodings (ziplist, zipmap)
//! are refused by name.

use std::io::{self, Write};

use crate::engine::cmd::dump::{crc64, rdb as value, RDB_VERSION};
use crate::engine::keyspace::{Locked, Value};

/// RDB opcodes (rdb.h).
mod op {
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION_PRE_GA: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// The `redis-ver` a snapshot names: the Redis whose format it is.
const REDIS_VER: &str = "7.0.15";

/// A writer that keeps the CRC-64 of what went through it.
struct Summing<W: Write> {
    inner: W,
    crc: u64,
    written: u64,
}

impl<W: Write> Summing<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc = crc64::update(self.crc, bytes);
        self.written += bytes.len() as u64;
        self.inner.write_all(bytes)
    }
}

/// What a snapshot holds besides the keys.
pub struct Extras<'a> {
    /// The function libraries' code, in load order.
    pub functions: &'a [Vec<u8>],
    /// INFO's `used_memory` at the time (AUX `used-mem`).
    pub used_memory: u64,
    /// Whether this is an append-only file's base (AUX `aof-base`).
    pub aof_base: bool,
    /// CONFIG `list-max-listpack-size`, which cuts list nodes.
    pub list_fill: i64,
    /// The time, seconds since the epoch (AUX `ctime`).
    pub now_s: u64,
}

/// Writes a snapshot of `dbs` (every shard of each locked; the index is the database's
/// number) to `out`; returns the bytes written.
pub fn write<W: Write>(
    out: W,
    dbs: &[(usize, Locked<'_>)],
    extras: &Extras<'_>,
) -> io::Result<u64> {
    let mut w = Summing {
        inner: out,
        crc: 0,
        written: 0,
    };
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut scratch = Vec::new();
    buf.extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
    let aux = |buf: &mut Vec<u8>, k: &str, v: &str| {
        buf.push(op::AUX);
        value::write_string(k.as_bytes(), buf);
        value::write_string(v.as_bytes(), buf);
    };
    aux(&mut buf, "redis-ver", REDIS_VER);
    aux(&mut buf, "redis-bits", "64");
    aux(&mut buf, "ctime", &extras.now_s.to_string());
    aux(&mut buf, "used-mem", &extras.used_memory.to_string());
    aux(
        &mut buf,
        "aof-base",
        if extras.aof_base { "1" } else { "0" },
    );
    for code in extras.functions {
        buf.push(op::FUNCTION2);
        value::write_string(code, &mut buf);
    }
    for (index, ks) in dbs {
        let keys = ks.count_all();
        if keys == 0 {
            continue;
        }
        buf.push(op::SELECTDB);
        value::write_len(*index as u64, &mut buf);
        buf.push(op::RESIZEDB);
        value::write_len(keys as u64, &mut buf);
        value::write_len(ks.count_expiring() as u64, &mut buf);
        let mut failed = None;
        ks.for_each_entry(|key, entry, encoding| {
            if failed.is_some() {
                return;
            }
            if let Some(t) = entry.expires_at_ms() {
                buf.push(op::EXPIRETIME_MS);
                buf.extend_from_slice(&t.to_le_bytes());
            }
            // The value's type byte goes before the key, its body after.
            scratch.clear();
            value::write_value(&entry.value, encoding, extras.list_fill, &mut scratch);
            buf.push(scratch[0]);
            value::write_string(key, &mut buf);
            buf.extend_from_slice(&scratch[1..]);
            if buf.len() >= 32 * 1024 {
                if let Err(e) = w.put(&buf) {
                    failed = Some(e);
                }
                buf.clear();
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
    }
    buf.push(op::EOF);
    w.put(&buf)?;
    let crc = w.crc;
    w.put(&crc.to_le_bytes())?;
    w.inner.flush()?;
    Ok(w.written)
}

/// Why a file could not be loaded, for a one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Not an RDB file (no `REDIS` magic).
    NotRdb,
    /// An RDB version this engine cannot read.
    Version(u32),
    /// The checksum at the end does not match.
    Checksum,
    /// Cut short, damaged, or something no Redis 7.0 writes, at this offset.
    Damaged(usize, &'static str),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotRdb => write!(f, "not an RDB file (it does not start with REDIS)"),
            LoadError::Version(v) => write!(
                f,
                "RDB version {v}, newer than the {RDB_VERSION} this engine reads (Redis 7.0's)"
            ),
            LoadError::Checksum => write!(f, "wrong checksum: the file is damaged"),
            LoadError::Damaged(at, what) => write!(f, "{what} at byte {at}"),
        }
    }
}

/// One key of a file.
pub struct Loaded {
    /// Its database.
    pub db: usize,
    /// The key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Value,
    /// Its deadline, ms since the epoch.
    pub expires_at_ms: Option<u64>,
    /// IDLE: seconds since its last access.
    pub idle_s: Option<u64>,
}

/// What a file holds besides keys.
#[derive(Debug, Default)]
pub struct Summary {
    /// Function libraries' code.
    pub functions: Vec<Vec<u8>>,
    /// Keys read.
    pub keys: u64,
    /// Bytes read, up to and with the checksum (an AOF base with commands after it).
    pub length: usize,
}

const CUT: &str = "cut short or damaged";

/// Reads an RDB file from `data`, giving each key to `key` (which may refuse it with a
/// reason: a database number beyond the engine's). Stops after the EOF opcode and checksum.
pub fn read(
    data: &[u8],
    mut key: impl FnMut(Loaded) -> Result<(), &'static str>,
) -> Result<Summary, LoadError> {
    if data.len() < 9 || &data[..5] != b"REDIS" {
        return Err(LoadError::NotRdb);
    }
    let version = std::str::from_utf8(&data[5..9])
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .ok_or(LoadError::NotRdb)?;
    if version == 0 || version > u32::from(RDB_VERSION) {
        return Err(LoadError::Version(version));
    }
    let mut r = value::Reader::new(&data[9..]);
    let at = |r: &value::Reader<'_>| data.len() - r.remaining();
    let cut = |r: &value::Reader<'_>| LoadError::Damaged(data.len() - r.remaining(), CUT);
    let mut summary = Summary::default();
    let mut db = 0usize;
    let mut expires: Option<u64> = None;
    let mut idle: Option<u64> = None;
    loop {
        let Ok(kind) = r.raw(1).map(|b| b[0]) else {
            return Err(cut(&r));
        };
        match kind {
            op::EOF => break,
            op::SELECTDB => {
                let n = r.length().map_err(|_| cut(&r))?;
                db = usize::try_from(n).unwrap_or(usize::MAX);
            }
            op::RESIZEDB => {
                r.length().map_err(|_| cut(&r))?;
                r.length().map_err(|_| cut(&r))?;
            }
            op::AUX => {
                r.string().map_err(|_| cut(&r))?;
                r.string().map_err(|_| cut(&r))?;
            }
            op::EXPIRETIME_MS => {
                let b = r.raw(8).map_err(|_| cut(&r))?;
                expires = Some(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
            }
            op::EXPIRETIME => {
                let b = r.raw(4).map_err(|_| cut(&r))?;
                let s = u32::from_le_bytes(b.try_into().unwrap_or([0; 4]));
                expires = Some(u64::from(s) * 1000);
            }
            op::IDLE => idle = Some(r.length().map_err(|_| cut(&r))?),
            op::FREQ => {
                r.raw(1).map_err(|_| cut(&r))?;
            }
            op::FUNCTION2 => summary.functions.push(r.string().map_err(|_| cut(&r))?),
            op::FUNCTION_PRE_GA => {
                return Err(LoadError::Damaged(
                    at(&r) - 1,
                    "a function library in Redis 7.0 rc1's format",
                ))
            }
            op::MODULE_AUX | 6 | 7 => {
                return Err(LoadError::Damaged(
                    at(&r) - 1,
                    "module data (the engine has no modules)",
                ))
            }
            1 | 3 | 9 | 10 | 12 | 13 | 14 => {
                return Err(LoadError::Damaged(
                    at(&r) - 1,
                    "a value in a pre-7.0 encoding (ziplist, zipmap or linked list)",
                ))
            }
            _ => {
                let start = at(&r) - 1;
                let name = r.string().map_err(|_| cut(&r))?;
                let value = value::read_value_of(kind, &mut r)
                    .map_err(|_| LoadError::Damaged(start, "a key whose value does not decode"))?;
                summary.keys += 1;
                key(Loaded {
                    db,
                    key: name,
                    value,
                    expires_at_ms: expires.take(),
                    idle_s: idle.take(),
                })
                .map_err(|why| LoadError::Damaged(start, why))?;
            }
        }
    }
    let end = at(&r);
    if version >= 5 {
        let Ok(sum) = r.raw(8) else {
            return Err(cut(&r));
        };
        let sum = u64::from_le_bytes(sum.try_into().unwrap_or([0; 8]));
        if sum != 0 && sum != crc64::crc64(&data[..end]) {
            return Err(LoadError::Checksum);
        }
        summary.length = end + 8;
    } else {
        summary.length = end;
    }
    Ok(summary)
}
