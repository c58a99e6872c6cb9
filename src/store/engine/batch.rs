//! The buffers a write and a read are built in: [`KeyBuf`], byte strings packed into one
//! buffer and reused from call to call, and [`Batch`], one write as the typed operations the
//! Redis store queues between `MULTI` and `EXEC` (SET, UNLINK, ZADD, ZREM), in the same
//! order, applied under one lock of every key they touch.

use std::ops::Range;

use serde::Serialize;

use crate::engine::types::ZSet;
use crate::engine::{CmdError, Db, Entry, Locked, Value};
use crate::store::redis::records2018::{encode, Key};
use crate::store::{StoreError, StoreResult};

/// Byte strings packed into one buffer: the keys or ids of one call, gathered without an
/// allocation per key, and reused from call to call.
#[derive(Default)]
pub(super) struct KeyBuf {
    pub(super) bytes: Vec<u8>,
    /// Where each string ends in `bytes`.
    pub(super) ends: Vec<usize>,
}

impl KeyBuf {
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends the concatenation of `parts` as one string; returns its index.
    pub(super) fn push_parts(&mut self, parts: &[&[u8]]) -> usize {
        for part in parts {
            self.bytes.extend_from_slice(part);
        }
        self.ends.push(self.bytes.len());
        self.ends.len() - 1
    }

    pub(super) fn push(&mut self, s: &[u8]) -> usize {
        self.push_parts(&[s])
    }

    pub(super) fn push_key(&mut self, key: Key<'_>) -> usize {
        self.push_parts(&[key.0.as_bytes(), key.1.as_bytes()])
    }

    pub(super) fn get(&self, i: usize) -> &[u8] {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        &self.bytes[start..self.ends[i]]
    }

    pub(super) fn range(&self, range: Range<usize>) -> impl Iterator<Item = &[u8]> + '_ {
        range.map(|i| self.get(i))
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.range(0..self.len())
    }
}

/// One write: the operations the Redis store queues between `MULTI` and `EXEC`, typed, over
/// keys gathered in one [`KeyBuf`]. Every member an operation names is a record id, which is
/// also a key of the batch, so operations refer to keys and members alike by index.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) keys: KeyBuf,
    pub(super) ops: Vec<Op>,
    /// Scratch for msgpack-encoding a record before it is copied into its own exact-size
    /// value.
    pub(super) buf: Vec<u8>,
}

pub(super) enum Op {
    /// `SET key blob`.
    Set { key: usize, blob: Vec<u8> },
    /// `UNLINK key`.
    Del { key: usize },
    /// `ZADD key score member`.
    ZAdd {
        key: usize,
        score: f64,
        member: usize,
    },
    /// `ZREM key member`.
    ZRem { key: usize, member: usize },
}

impl Batch {
    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.ops.clear();
    }

    /// Adds `key` to the keys of the batch; returns its index.
    pub(super) fn key(&mut self, key: &str) -> usize {
        self.keys.push(key.as_bytes())
    }

    pub(super) fn set<T: Serialize>(
        &mut self,
        key: usize,
        kind: &'static str,
        id: &str,
        record: &T,
    ) -> StoreResult<()> {
        let blob = encode(&mut self.buf, kind, id, record)?.to_vec();
        self.ops.push(Op::Set { key, blob });
        Ok(())
    }

    pub(super) fn del(&mut self, key: usize) {
        self.ops.push(Op::Del { key });
    }

    pub(super) fn zadd(&mut self, key: Key<'_>, score: i64, member: usize) {
        let key = self.keys.push_key(key);
        self.ops.push(Op::ZAdd {
            key,
            score: score as f64,
            member,
        });
    }

    pub(super) fn zrem(&mut self, key: Key<'_>, member: usize) {
        let key = self.keys.push_key(key);
        self.ops.push(Op::ZRem { key, member });
    }

    /// Locks every key of the batch at once.
    pub(super) fn lock<'d>(&self, db: &'d Db, now: u64) -> Locked<'d> {
        db.lock(self.keys.iter(), now)
    }

    /// Applies the batch under one lock of all its keys.
    pub(super) fn apply(&mut self, db: &Db, now: u64) -> StoreResult<()> {
        let mut locked = self.lock(db, now);
        self.apply_locked(&mut locked)
    }

    /// Applies the batch under `locked`, which must hold every key of the batch. As `EXEC`,
    /// an operation that fails (a key of the wrong type) does not stop the others; the first
    /// error is returned.
    pub(super) fn apply_locked(&mut self, locked: &mut Locked<'_>) -> StoreResult<()> {
        let keys = &self.keys;
        let mut first_error = None;
        // With the append-only file on, the batch is fed as the Redis store sends it: its
        // commands between MULTI and EXEC, under the same locks.
        let feed = locked.db().feed();
        let mut fed: Vec<(usize, Vec<Vec<u8>>)> = Vec::new();
        if feed.on() {
            let db = locked.db().index();
            for op in &self.ops {
                fed.push((db, op.command(keys)));
            }
        }
        for op in self.ops.drain(..) {
            let result = match op {
                Op::Set { key, blob } => {
                    locked.insert(keys.get(key), Entry::new(Value::Str(blob)));
                    Ok(())
                }
                Op::Del { key } => {
                    locked.remove(keys.get(key));
                    Ok(())
                }
                Op::ZAdd { key, score, member } => {
                    // `get_zset_mut`, then an insert when missing: half the map lookups of
                    // `zset_or_default` when the index exists, as it nearly always does.
                    let (key, member) = (keys.get(key), keys.get(member));
                    match locked.get_zset_mut(key) {
                        Ok(Some(z)) => {
                            z.insert(member, score);
                            Ok(())
                        }
                        Ok(None) => {
                            let mut z = ZSet::default();
                            z.insert(member, score);
                            locked.insert(key, Entry::new(Value::ZSet(Box::new(z))));
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                }
                Op::ZRem { key, member } => {
                    let key = keys.get(key);
                    let removed = locked
                        .get_zset_mut(key)
                        .map(|z| z.is_some_and(|z| z.remove(keys.get(member))));
                    if removed == Ok(true) {
                        locked.drop_if_empty(key);
                    }
                    removed.map(drop)
                }
            };
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        if !fed.is_empty() {
            feed.push_transaction(&fed);
        }
        first_error.map_or(Ok(()), |e| Err(engine_error(e)))
    }
}

impl Op {
    /// The command the Redis store sends for this operation.
    fn command(&self, keys: &KeyBuf) -> Vec<Vec<u8>> {
        let owned = |parts: &[&[u8]]| parts.iter().map(|p| p.to_vec()).collect();
        match self {
            Op::Set { key, blob } => owned(&[b"SET", keys.get(*key), blob]),
            Op::Del { key } => owned(&[b"UNLINK", keys.get(*key)]),
            Op::ZAdd { key, score, member } => owned(&[
                b"ZADD",
                keys.get(*key),
                crate::engine::cmd::format_f64(*score).as_bytes(),
                keys.get(*member),
            ]),
            Op::ZRem { key, member } => owned(&[b"ZREM", keys.get(*key), keys.get(*member)]),
        }
    }
}

/// An engine command error as the store's error.
pub(super) fn engine_error(e: CmdError) -> StoreError {
    StoreError::Backend {
        backend: "engine",
        message: e.to_string(),
    }
}
