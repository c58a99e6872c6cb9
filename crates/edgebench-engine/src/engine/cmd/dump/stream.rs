//! A stream in RDB type 19 (`STREAM_LISTPACKS_2`, Redis 7.0), with its consumer groups; read
//! also from type 15 (`STREAM_LISTPACKS`, Redis 5.0–6.2: [`read`] says what it lacks).
//!
//! Body: the count of listpack nodes, each a 16-byte big-endian master id and a listpack;
//! then the stream's length, last id, first id, largest deleted id, entries ever added, and
//! the consumer groups: per group its name, last delivered id, entries read (-1 as
//! 2^64 - 1 when unknown), its PEL (16-byte ids, delivery times as 8-byte little-endian ms,
//! delivery counts) and its consumers (name, seen time, the ids of their PEL entries, each
//! of which must be in the group's PEL).
//!
//! Written: the live entries only, in nodes of 100 entries (Redis keeps deleted entries
//! flagged in their node until it empties, and also cuts nodes at `stream-node-max-bytes`),
//! so a payload equals redis-server's for a stream without deletions of small entries.
//!
//! A node's listpack: the master entry (live count, deleted count, the field count, the
//! field names, a 0), then per entry its flags (1 deleted, 2 same fields as the master),
//! its id as deltas from the master id, its fields (names only when not the master's) and
//! values, and its element count.

use super::listpack;
use super::rdb::{write_len, write_string, BadFormat, Reader};
use crate::engine::keyspace::Value;
use crate::engine::types::stream::groups::{Consumer, ConsumerGroup, PendingEntry};
use crate::engine::types::stream::{Fields, Stream, StreamId};

const DELETED: i64 = 1;
const SAME_FIELDS: i64 = 2;
/// Entries per node when writing (Redis's `stream-node-max-entries` default).
const NODE_ENTRIES: usize = 100;

/// Reads a stream body: type 19 (`v2`), or type 15 (`STREAM_LISTPACKS`, Redis 5.0–6.2),
/// which lacks the first id, the largest deleted id, the entries ever added and the groups'
/// read counters: as Redis 7.0 loads it, entries added = the length, no deletion known, and
/// each group's counter estimated from its last delivered id (unknown where it cannot be).
pub fn read(r: &mut Reader<'_>, v2: bool) -> Result<Value, BadFormat> {
    let mut stream = Stream::default();
    let nodes = r.length()?;
    for _ in 0..nodes {
        let key = r.string()?;
        let master = master_id(&key)?;
        let blob = r.string()?;
        read_node(master, &listpack::read(&blob)?, &mut stream)?;
    }
    let length = r.length()?;
    let last = StreamId::new(r.length()?, r.length()?);
    if length != stream.len() as u64 || stream.last_entry_id().is_some_and(|id| id > last) {
        return Err(BadFormat);
    }
    stream.last_id = last;
    if v2 {
        let _first = StreamId::new(r.length()?, r.length()?);
        stream.max_deleted_id = StreamId::new(r.length()?, r.length()?);
        stream.entries_added = r.length()?;
    } else {
        stream.max_deleted_id = StreamId::MIN;
        stream.entries_added = length;
    }
    stream.groups = read_groups(r, (!v2).then_some(&stream))?;
    Ok(Value::Stream(Box::new(stream)))
}

/// A 16-byte big-endian id (PEL keys).
fn raw_id(r: &mut Reader<'_>) -> Result<StreamId, BadFormat> {
    master_id(r.raw(16)?)
}

fn millis(r: &mut Reader<'_>) -> Result<i64, BadFormat> {
    let b = r.raw(8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(i64::from_le_bytes(a))
}

/// A count of records each at least `min` bytes long, bounded by what is left.
fn count(r: &mut Reader<'_>, min: usize) -> Result<usize, BadFormat> {
    let n = usize::try_from(r.length()?).map_err(|_| BadFormat)?;
    if n.checked_mul(min).is_none_or(|need| need > r.remaining()) {
        return Err(BadFormat);
    }
    Ok(n)
}

/// The consumer groups; `estimate_from`: a type 15 stream, whose groups carry no read
/// counter (Redis 7.0 estimates it from the group's last delivered id).
fn read_groups(
    r: &mut Reader<'_>,
    estimate_from: Option<&Stream>,
) -> Result<std::collections::BTreeMap<Vec<u8>, ConsumerGroup>, BadFormat> {
    let mut groups = std::collections::BTreeMap::new();
    for _ in 0..count(r, 4)? {
        let name = r.string()?;
        let last = StreamId::new(r.length()?, r.length()?);
        let entries_read = match estimate_from {
            Some(stream) => stream.estimated_entries_read(last),
            None => match r.length()? {
                u64::MAX => None,
                read => Some(i64::try_from(read).map_err(|_| BadFormat)?),
            },
        };
        let mut group = ConsumerGroup::new(last, entries_read);
        for _ in 0..count(r, 25)? {
            let id = raw_id(r)?;
            let delivery_time_ms = millis(r)?;
            let delivery_count = r.length()?;
            let entry = PendingEntry {
                consumer: Vec::new(),
                delivery_time_ms,
                delivery_count,
            };
            if group.pending.insert(id, entry).is_some() {
                return Err(BadFormat);
            }
        }
        for _ in 0..count(r, 10)? {
            let consumer_name = r.string()?;
            let seen_time_ms = millis(r)?;
            let mut consumer = Consumer {
                seen_time_ms,
                ..Consumer::default()
            };
            for _ in 0..count(r, 16)? {
                let id = raw_id(r)?;
                // Every consumer entry refers to an unowned entry of the group's PEL.
                match group.pending.get_mut(&id) {
                    Some(p) if p.consumer.is_empty() => p.consumer = consumer_name.clone(),
                    _ => return Err(BadFormat),
                }
                consumer.pending.insert(id);
            }
            if group.consumers.insert(consumer_name, consumer).is_some() {
                return Err(BadFormat);
            }
        }
        // A PEL entry no consumer owns is corrupt (Redis refuses it too).
        if group.pending.values().any(|p| p.consumer.is_empty()) {
            return Err(BadFormat);
        }
        if groups.insert(name, group).is_some() {
            return Err(BadFormat);
        }
    }
    Ok(groups)
}

fn write_groups(s: &Stream, out: &mut Vec<u8>) {
    write_len(s.groups.len() as u64, out);
    for (name, g) in &s.groups {
        write_string(name, out);
        write_len(g.last_delivered.ms, out);
        write_len(g.last_delivered.seq, out);
        write_len(g.entries_read.map_or(u64::MAX, |v| v as u64), out);
        write_len(g.pending.len() as u64, out);
        for (id, p) in &g.pending {
            write_raw_id(*id, out);
            out.extend_from_slice(&p.delivery_time_ms.to_le_bytes());
            write_len(p.delivery_count, out);
        }
        write_len(g.consumers.len() as u64, out);
        for (cname, c) in &g.consumers {
            write_string(cname, out);
            out.extend_from_slice(&c.seen_time_ms.to_le_bytes());
            write_len(c.pending.len() as u64, out);
            for id in &c.pending {
                write_raw_id(*id, out);
            }
        }
    }
}

fn write_raw_id(id: StreamId, out: &mut Vec<u8>) {
    out.extend_from_slice(&id.ms.to_be_bytes());
    out.extend_from_slice(&id.seq.to_be_bytes());
}

fn master_id(key: &[u8]) -> Result<StreamId, BadFormat> {
    if key.len() != 16 {
        return Err(BadFormat);
    }
    let mut ms = [0u8; 8];
    let mut seq = [0u8; 8];
    ms.copy_from_slice(&key[..8]);
    seq.copy_from_slice(&key[8..]);
    Ok(StreamId::new(
        u64::from_be_bytes(ms),
        u64::from_be_bytes(seq),
    ))
}

fn int(e: Option<&Vec<u8>>) -> Result<i64, BadFormat> {
    std::str::from_utf8(e.ok_or(BadFormat)?)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(BadFormat)
}

fn read_node(master: StreamId, lp: &[Vec<u8>], stream: &mut Stream) -> Result<(), BadFormat> {
    let mut it = lp.iter();
    let live = int(it.next())?;
    let deleted = int(it.next())?;
    let nfields = usize::try_from(int(it.next())?).map_err(|_| BadFormat)?;
    if nfields > lp.len() {
        return Err(BadFormat);
    }
    let master_fields: Vec<&Vec<u8>> = (0..nfields)
        .map(|_| it.next().ok_or(BadFormat))
        .collect::<Result<_, _>>()?;
    if int(it.next())? != 0 {
        return Err(BadFormat);
    }
    let (mut seen_live, mut seen_deleted) = (0i64, 0i64);
    while let Some(flags) = it.next() {
        let flags = int(Some(flags))?;
        let ms = master.ms.wrapping_add(int(it.next())? as u64);
        let seq = master.seq.wrapping_add(int(it.next())? as u64);
        let id = StreamId::new(ms, seq);
        let mut fields: Fields = Vec::new();
        let elements = if flags & SAME_FIELDS != 0 {
            for f in &master_fields {
                fields.push(((*f).clone(), it.next().ok_or(BadFormat)?.clone()));
            }
            nfields as i64 + 3
        } else {
            let n = usize::try_from(int(it.next())?).map_err(|_| BadFormat)?;
            if n > lp.len() {
                return Err(BadFormat);
            }
            for _ in 0..n {
                let f = it.next().ok_or(BadFormat)?.clone();
                let v = it.next().ok_or(BadFormat)?.clone();
                fields.push((f, v));
            }
            2 * n as i64 + 4
        };
        if int(it.next())? != elements {
            return Err(BadFormat);
        }
        if flags & DELETED != 0 {
            seen_deleted += 1;
            continue;
        }
        // Entries ascend, and 0-0 is never an entry's id.
        if id <= stream.last_id {
            return Err(BadFormat);
        }
        seen_live += 1;
        // The dump's own node boundaries are not kept: nodes are cut as Redis's defaults cut
        // them (what the engine did before CONFIG could change them).
        stream.append(
            id,
            fields,
            crate::engine::types::stream::NodeLimits::default(),
        );
    }
    if seen_live != live || seen_deleted != deleted {
        return Err(BadFormat);
    }
    Ok(())
}

/// Writes a stream body (no consumer groups).
pub fn write(s: &Stream, out: &mut Vec<u8>) {
    let entries: Vec<(&StreamId, &Fields)> = s.entries.iter().collect();
    let chunks: Vec<&[(&StreamId, &Fields)]> = entries.chunks(NODE_ENTRIES).collect();
    write_len(chunks.len() as u64, out);
    for chunk in chunks {
        let master = *chunk[0].0;
        let master_fields: Vec<&[u8]> = chunk[0].1.iter().map(|(f, _)| &f[..]).collect();
        let mut key = Vec::with_capacity(16);
        write_raw_id(master, &mut key);
        write_string(&key, out);
        let mut lp: Vec<Vec<u8>> = Vec::new();
        let num = |v: i64| v.to_string().into_bytes();
        lp.push(num(chunk.len() as i64));
        lp.push(num(0));
        lp.push(num(master_fields.len() as i64));
        lp.extend(master_fields.iter().map(|f| f.to_vec()));
        lp.push(num(0));
        for (id, fields) in chunk {
            let same = fields.len() == master_fields.len()
                && fields.iter().zip(&master_fields).all(|((f, _), m)| f == m);
            lp.push(num(if same { SAME_FIELDS } else { 0 }));
            lp.push(num(id.ms.wrapping_sub(master.ms) as i64));
            lp.push(num(id.seq.wrapping_sub(master.seq) as i64));
            if same {
                lp.extend(fields.iter().map(|(_, v)| v.clone()));
                lp.push(num(fields.len() as i64 + 3));
            } else {
                lp.push(num(fields.len() as i64));
                for (f, v) in fields.iter() {
                    lp.push(f.clone());
                    lp.push(v.clone());
                }
                lp.push(num(2 * fields.len() as i64 + 4));
            }
        }
        write_string(&listpack::write(lp.iter().map(|e| &e[..])), out);
    }
    write_len(s.len() as u64, out);
    write_len(s.last_id.ms, out);
    write_len(s.last_id.seq, out);
    let first = s.entries.keys().next().copied().unwrap_or(StreamId::MIN);
    write_len(first.ms, out);
    write_len(first.seq, out);
    write_len(s.max_deleted_id.ms, out);
    write_len(s.max_deleted_id.seq, out);
    write_len(s.entries_added, out);
    write_groups(s, out);
}
