//! One value in Redis 7.0's RDB format (what DUMP carries before its footer): reading every
//! type redis-server 7.0 writes, and writing them as it does.
//!
//! Read: a type byte, then the type's body. Lengths use RDB's variable encoding (6, 14, 32
//! or 64 bits); strings may be stored as 8/16/32-bit integers or LZF-compressed. Every
//! length read is client input: a string must fit in the bytes left, a collection's element
//! count may not exceed them (each element takes a byte at least), and an LZF string may
//! not expand past what LZF can reach from its compressed size, so nothing allocates more
//! than a small multiple of the payload. Anything malformed is [`BadFormat`], never a panic.
//!
//! Written: strings as Redis writes them: integers of up to 11 characters as integers,
//! strings over 20 bytes LZF-compressed when that saves 4 bytes or more ([`lzf::compress`]). Hashes, sets and
//! sorted sets take the RDB type of the encoding OBJECT ENCODING reports, so a small hash is
//! a listpack as in Redis; a list is a quicklist of listpack nodes split as Redis's
//! `list-max-listpack-size` splits an appended list.

use super::listpack;
use super::lzf;
use crate::engine::keyspace::{BytesSet, FieldMap, Value};
use crate::engine::types::encoding::is_redis_integer;
use crate::engine::types::ZSet;

/// The payload is not a value Redis could have written (`ERR Bad data format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadFormat;

impl From<listpack::Corrupt> for BadFormat {
    fn from(_: listpack::Corrupt) -> Self {
        BadFormat
    }
}

impl From<lzf::Corrupt> for BadFormat {
    fn from(_: lzf::Corrupt) -> Self {
        BadFormat
    }
}

/// RDB type bytes (rdb.h).
pub mod kind {
    pub const STRING: u8 = 0;
    pub const SET: u8 = 2;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const SET_INTSET: u8 = 11;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const STREAM_LISTPACKS_2: u8 = 19;
}

/// The most an LZF stream expands: a 2-byte back-reference yields up to 264 bytes.
const LZF_MAX_RATIO: usize = 132;

/// A reader over a payload's body.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads from the start of `data`.
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, pos: 0 }
    }

    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], BadFormat> {
        let end = self.pos.checked_add(n).ok_or(BadFormat)?;
        let s = self.data.get(self.pos..end).ok_or(BadFormat)?;
        self.pos = end;
        Ok(s)
    }

    /// `n` raw bytes.
    pub fn raw(&mut self, n: usize) -> Result<&'a [u8], BadFormat> {
        self.take(n)
    }

    /// How many bytes are left to read.
    pub fn remaining(&self) -> usize {
        self.left()
    }

    fn byte(&mut self) -> Result<u8, BadFormat> {
        Ok(self.take(1)?[0])
    }

    /// A length, or the special string encoding (`Err`-free `Special`).
    fn len_or_special(&mut self) -> Result<Len, BadFormat> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain((u64::from(b & 0x3f) << 8) | u64::from(self.byte()?)),
            3 => Len::Special(b & 0x3f),
            _ => match b {
                0x80 => {
                    let s = self.take(4)?;
                    Len::Plain(u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]])))
                }
                0x81 => {
                    let s = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(s);
                    Len::Plain(u64::from_be_bytes(a))
                }
                _ => return Err(BadFormat),
            },
        })
    }

    /// A length (never a special encoding).
    pub fn length(&mut self) -> Result<u64, BadFormat> {
        match self.len_or_special()? {
            Len::Plain(n) => Ok(n),
            Len::Special(_) => Err(BadFormat),
        }
    }

    /// A count of things each taking at least `min_bytes`: refused if the payload cannot
    /// hold that many, so the count can size an allocation.
    fn count(&mut self, min_bytes: usize) -> Result<usize, BadFormat> {
        let n = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
        if n.checked_mul(min_bytes)
            .is_none_or(|need| need > self.left())
        {
            return Err(BadFormat);
        }
        Ok(n)
    }

    /// A string in any of RDB's encodings.
    pub fn string(&mut self) -> Result<Vec<u8>, BadFormat> {
        match self.len_or_special()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| BadFormat)?;
                Ok(self.take(n)?.to_vec())
            }
            Len::Special(0) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Len::Special(1) => {
                let s = self.take(2)?;
                Ok(i16::from_le_bytes([s[0], s[1]]).to_string().into_bytes())
            }
            Len::Special(2) => {
                let s = self.take(4)?;
                Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]])
                    .to_string()
                    .into_bytes())
            }
            Len::Special(3) => {
                let compressed = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
                let plain = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
                if compressed == 0 || plain > compressed.saturating_mul(LZF_MAX_RATIO) + 1 {
                    return Err(BadFormat);
                }
                let blob = self.take(compressed)?;
                Ok(lzf::decompress(blob, plain)?)
            }
            Len::Special(_) => Err(BadFormat),
        }
    }

    /// A double in binary (8 bytes, little endian).
    fn binary_double(&mut self) -> Result<f64, BadFormat> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(f64::from_le_bytes(a))
    }
}

enum Len {
    Plain(u64),
    Special(u8),
}

/// Reads one value (type byte and body) from the start of `r`.
pub fn read_value(r: &mut Reader<'_>) -> Result<Value, BadFormat> {
    let kind = r.byte()?;
    read_value_of(kind, r)
}

/// A value of RDB type `kind`, whose type byte was read already (in an RDB file the key
/// comes between them).
pub fn read_value_of(kind: u8, r: &mut Reader<'_>) -> Result<Value, BadFormat> {
    let value = match kind {
        kind::STRING => Value::Str(r.string()?),
        kind::LIST_QUICKLIST_2 => read_quicklist(r)?,
        kind::SET => {
            let n = r.count(1)?;
            let mut set = BytesSet::with_capacity_and_hasher(n, Default::default());
            for _ in 0..n {
                if !set.insert(r.string()?.into()) {
                    return Err(BadFormat);
                }
            }
            Value::Set(Box::new(set))
        }
        kind::SET_INTSET => {
            let values = listpack::read_intset(&r.string()?)?;
            Value::Set(Box::new(
                values
                    .iter()
                    .map(|v| v.to_string().into_bytes().into())
                    .collect::<BytesSet>(),
            ))
        }
        kind::HASH => {
            let n = r.count(2)?;
            let mut hash = FieldMap::with_capacity_and_hasher(n, Default::default());
            for _ in 0..n {
                let field = r.string()?;
                let value = r.string()?;
                if hash.insert(field.into(), value).is_some() {
                    return Err(BadFormat);
                }
            }
            Value::Hash(Box::new(hash))
        }
        kind::HASH_LISTPACK => {
            let elements = listpack::read(&r.string()?)?;
            if elements.len() % 2 != 0 {
                return Err(BadFormat);
            }
            let mut hash =
                FieldMap::with_capacity_and_hasher(elements.len() / 2, Default::default());
            let mut it = elements.into_iter();
            while let (Some(f), Some(v)) = (it.next(), it.next()) {
                if hash.insert(f.into(), v).is_some() {
                    return Err(BadFormat);
                }
            }
            Value::Hash(Box::new(hash))
        }
        kind::ZSET_2 => {
            let n = r.count(9)?;
            let mut z = ZSet::default();
            for _ in 0..n {
                let member = r.string()?;
                let score = r.binary_double()?;
                if score.is_nan() || !z.insert(&member, score) {
                    return Err(BadFormat);
                }
            }
            Value::ZSet(Box::new(z))
        }
        kind::ZSET_LISTPACK => {
            let elements = listpack::read(&r.string()?)?;
            if elements.len() % 2 != 0 {
                return Err(BadFormat);
            }
            let mut z = ZSet::default();
            let mut it = elements.into_iter();
            while let (Some(member), Some(score)) = (it.next(), it.next()) {
                let score = parse_score(&score)?;
                if !z.insert(&member, score) {
                    return Err(BadFormat);
                }
            }
            Value::ZSet(Box::new(z))
        }
        kind::STREAM_LISTPACKS => super::stream::read(r, false)?,
        kind::STREAM_LISTPACKS_2 => super::stream::read(r, true)?,
        _ => return Err(BadFormat),
    };
    // Redis refuses empty collections in a payload.
    let empty = match &value {
        Value::List(l) => l.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::Hash(h) => h.is_empty(),
        Value::ZSet(z) => z.is_empty(),
        Value::Str(_) | Value::Stream(_) => false,
    };
    if empty {
        return Err(BadFormat);
    }
    Ok(value)
}

/// A score as a listpack stores it (`d2string`'s text, or an integer).
fn parse_score(s: &[u8]) -> Result<f64, BadFormat> {
    let v = crate::engine::cmd::parse_f64(s).map_err(|_| BadFormat)?;
    if v.is_nan() {
        return Err(BadFormat);
    }
    Ok(v)
}

fn read_quicklist(r: &mut Reader<'_>) -> Result<Value, BadFormat> {
    const PLAIN: u64 = 1;
    const PACKED: u64 = 2;
    let nodes = r.count(2)?;
    let mut list = std::collections::VecDeque::new();
    for _ in 0..nodes {
        let container = r.length()?;
        let blob = r.string()?;
        match container {
            PLAIN => list.push_back(blob),
            PACKED => {
                let elements = listpack::read(&blob)?;
                // Redis refuses an empty node.
                if elements.is_empty() {
                    return Err(BadFormat);
                }
                list.extend(elements);
            }
            _ => return Err(BadFormat),
        }
    }
    Ok(Value::List(Box::new(list)))
}

// ---- writing ----

/// Appends an RDB length.
pub fn write_len(n: u64, out: &mut Vec<u8>) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 16384 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if let Ok(n) = u32::try_from(n) {
        out.push(0x80);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends a string as Redis's `rdbSaveRawString` does: up to 11 characters that read as an
/// integer fitting 32 bits are stored as that integer, longer strings LZF-compressed when
/// it pays.
pub fn write_string(s: &[u8], out: &mut Vec<u8>) {
    if s.len() <= 11 && is_redis_integer(s) {
        if let Some(v) = std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
        {
            if let Ok(v) = i8::try_from(v) {
                out.extend_from_slice(&[0xc0, v as u8]);
                return;
            }
            if let Ok(v) = i16::try_from(v) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(v) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    // Redis compresses strings over 20 bytes when LZF saves at least 4 bytes.
    if s.len() > 20 {
        if let Some(packed) = lzf::compress(s, s.len() - 4) {
            out.push(0xc3);
            write_len(packed.len() as u64, out);
            write_len(s.len() as u64, out);
            out.extend_from_slice(&packed);
            return;
        }
    }
    write_len(s.len() as u64, out);
    out.extend_from_slice(s);
}

/// Redis's `d2string` for a listpack score: integers in `long long` range as integers, the
/// rest as `%.17g`.
fn score_text(v: f64) -> String {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if v != 0.0 && v.is_finite() && v == v.trunc() && v > -LIMIT && v < LIMIT {
        return (v as i64).to_string();
    }
    crate::engine::cmd::format_f64(v)
}

/// How a list's quicklist nodes are cut: `list-max-listpack-size` (negative: a byte limit
/// of 4 KB << (-n - 1); positive: a count of elements, within 8 KB).
pub fn list_node_limit(fill: i64) -> (usize, usize) {
    const SAFETY: usize = 8192;
    if fill < 0 {
        let level = usize::try_from(-fill - 1).unwrap_or(usize::MAX).min(4);
        (4096 << level, usize::MAX)
    } else {
        (SAFETY, usize::try_from(fill).unwrap_or(usize::MAX).max(1))
    }
}

/// Appends `value` with its type byte, in the encoding `encoding` (OBJECT ENCODING's name).
pub fn write_value(value: &Value, encoding: &str, list_fill: i64, out: &mut Vec<u8>) {
    match value {
        Value::Str(s) => {
            out.push(kind::STRING);
            write_string(s, out);
        }
        Value::List(l) => {
            out.push(kind::LIST_QUICKLIST_2);
            write_quicklist(l, list_fill, out);
        }
        Value::Set(s) if encoding == "intset" => {
            out.push(kind::SET_INTSET);
            let values: Vec<i64> = s
                .iter()
                .filter_map(|m| std::str::from_utf8(m).ok()?.parse().ok())
                .collect();
            write_string(&listpack::write_intset(values), out);
        }
        Value::Set(s) => {
            out.push(kind::SET);
            write_len(s.len() as u64, out);
            for m in s.iter() {
                write_string(m, out);
            }
        }
        Value::Hash(h) if encoding == "listpack" => {
            out.push(kind::HASH_LISTPACK);
            let blob = listpack::write(h.iter().flat_map(|(f, v)| [&f[..], &v[..]]));
            write_string(&blob, out);
        }
        Value::Hash(h) => {
            out.push(kind::HASH);
            write_len(h.len() as u64, out);
            for (f, v) in h.iter() {
                write_string(f, out);
                write_string(v, out);
            }
        }
        Value::ZSet(z) if encoding == "listpack" => {
            out.push(kind::ZSET_LISTPACK);
            let scores: Vec<String> = z.iter().map(|(_, s)| score_text(s)).collect();
            let blob = listpack::write(
                z.iter()
                    .zip(&scores)
                    .flat_map(|((m, _), s)| [m, s.as_bytes()]),
            );
            write_string(&blob, out);
        }
        Value::ZSet(z) => {
            out.push(kind::ZSET_2);
            write_len(z.len() as u64, out);
            // Redis writes a skip list from its tail (highest first).
            for (m, s) in z.iter().rev() {
                write_string(m, out);
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
        Value::Stream(s) => {
            out.push(kind::STREAM_LISTPACKS_2);
            super::stream::write(s, out);
        }
    }
}

/// A list as quicklist nodes, cut as appending the elements one by one cuts them in Redis
/// (`_quicklistNodeAllowInsert`): a node takes an element while its listpack stays within
/// the byte limit (with Redis's 8-byte estimate overhead) and, for a count limit, while it
/// holds fewer elements than the limit.
fn write_quicklist(list: &std::collections::VecDeque<Vec<u8>>, fill: i64, out: &mut Vec<u8>) {
    const PACKED: u64 = 2;
    const OVERHEAD: usize = 8;
    const EMPTY_LISTPACK: usize = 7;
    let (max_bytes, max_count) = list_node_limit(fill);
    let mut nodes: Vec<(usize, usize)> = Vec::new(); // (start, end) element ranges
    let (mut start, mut bytes) = (0usize, EMPTY_LISTPACK);
    for (i, e) in list.iter().enumerate() {
        let count = i - start;
        let fits = count == 0 || (bytes + e.len() + OVERHEAD <= max_bytes && count < max_count);
        if !fits {
            nodes.push((start, i));
            start = i;
            bytes = EMPTY_LISTPACK;
        }
        bytes += listpack::element_size(e);
    }
    if start < list.len() {
        nodes.push((start, list.len()));
    }
    write_len(nodes.len() as u64, out);
    for (a, b) in nodes {
        write_len(PACKED, out);
        let blob = listpack::write(list.range(a..b).map(|e| &e[..]));
        write_string(&blob, out);
    }
}
