//! A stream in RDB type 19 (`STREAM_LISTPACKS_2`, Redis 7.0), without consumer groups.
//!
//! Body: the count of listpack nodes, each a 16-byte big-endian master id and a listpack;
//! then the stream's length, last id, first id, largest deleted id, entries ever added, and
//! the consumer groups (always written as none here; read: refused unless none, until the
//! stream type carries groups: [`read_groups`] is where they will be read).
//!
//! A node's listpack: the master entry (live count, deleted count, the field count, the
//! field names, a 0), then per entry its flags (1 deleted, 2 same fields as the master),
//! its id as deltas from the master id, its fields (names only when not the master's) and
//! values, and its element count.

use super::listpack;
use super::rdb::{write_len, write_string, BadFormat, Reader};
use crate::engine::keyspace::Value;
use crate::engine::types::stream::{Fields, Stream, StreamId};

const DELETED: i64 = 1;
const SAME_FIELDS: i64 = 2;
/// Entries per node when writing (Redis's `stream-node-max-entries` default).
const NODE_ENTRIES: usize = 100;

/// Reads a stream body.
pub fn read(r: &mut Reader<'_>) -> Result<Value, BadFormat> {
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
    let _first = StreamId::new(r.length()?, r.length()?);
    let _max_deleted = StreamId::new(r.length()?, r.length()?);
    let _entries_added = r.length()?;
    read_groups(r)?;
    if length != stream.len() as u64 || stream.last_entry_id().is_some_and(|id| id > last) {
        return Err(BadFormat);
    }
    stream.last_id = last;
    Ok(Value::Stream(stream))
}

/// Consumer groups: none supported yet, so a payload with groups is refused rather than
/// restored without them.
fn read_groups(r: &mut Reader<'_>) -> Result<(), BadFormat> {
    if r.length()? != 0 {
        return Err(BadFormat);
    }
    Ok(())
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
        stream.append(id, fields);
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
        key.extend_from_slice(&master.ms.to_be_bytes());
        key.extend_from_slice(&master.seq.to_be_bytes());
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
    // Not tracked by the stream type: no deletions known, all live entries added.
    write_len(0, out);
    write_len(0, out);
    write_len(s.len() as u64, out);
    write_len(0, out);
}
