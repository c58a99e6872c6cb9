//! YCSB's Redis layouts on the engine's typed API (`embedded-direct`): the same hashes and
//! `_indices` sorted set as [`crate::store::redis::ycsb`] writes through commands, reached
//! by locking the record's shard and working on the hash in place. No command is built, no
//! argument parsed and no reply encoded: what the column costs is what the storage costs.
//!
//! With the append-only file on, each write is fed as the command the Redis binding sends
//! (`HMSET`, `ZADD`, `DEL`, `ZREM`), so the file replays on redis-server and the engine alike.

use std::ops::Bound;

use crate::engine::types::ZSet;
use crate::engine::{Engine, Entry, Value};
use crate::store::redis::ycsb::{BINDINGS, INDEX_KEY};
use crate::store::ycsb::{
    java_string_hash, Binding, Record, Records, Setup, YcsbError, YcsbResult, YcsbStore,
    GO_YCSB_NO_SCAN,
};

/// One YCSB client of the engine's typed API, in one of the Redis layouts.
pub struct EngineYcsb {
    engine: Engine,
    binding: Binding,
    /// go-ycsb's key prefix, `<table>/`.
    prefix: Vec<u8>,
    /// The stored key being built.
    key: Vec<u8>,
    /// Keys a scan listed.
    scanned: Vec<Vec<u8>>,
}

impl EngineYcsb {
    /// A client of `engine`'s database 0, laid out as `setup` says (one of [`BINDINGS`]).
    pub fn new(engine: Engine, setup: &Setup) -> YcsbResult<EngineYcsb> {
        if !BINDINGS.contains(&setup.binding) {
            return Err(YcsbError::Backend(format!(
                "the engine has no {} binding",
                setup.binding.name()
            )));
        }
        Ok(EngineYcsb {
            engine,
            binding: setup.binding,
            prefix: format!("{}/", setup.table).into_bytes(),
            key: Vec::new(),
            scanned: Vec::new(),
        })
    }

    /// Sets `self.key` to where `key`'s record is stored.
    fn stored(&mut self, key: &str) {
        self.key.clear();
        if self.binding == Binding::GoYcsb {
            self.key.extend_from_slice(&self.prefix);
        }
        self.key.extend_from_slice(key.as_bytes());
    }

    /// Writes `values` into the hash at `self.key` (and, on an insert in YCSB's layout, the
    /// key into the index), under one lock, fed as the binding's commands.
    fn write(&mut self, key: &str, values: &[(String, Vec<u8>)], index: bool) -> YcsbResult<()> {
        self.stored(key);
        let index = index && self.binding == Binding::Redis;
        let db = self.engine.db(0);
        let now = self.engine.now_ms();
        let stored = self.key.as_slice();
        let mut locked = if index {
            db.lock([stored, INDEX_KEY.as_bytes()], now)
        } else {
            db.lock([stored], now)
        };
        let pairs: Vec<(&[u8], &[u8])> = values
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_slice()))
            .collect();
        locked.hset(stored, &pairs).map_err(engine_error)?;
        let score = f64::from(java_string_hash(key));
        if index {
            match locked
                .get_zset_mut(INDEX_KEY.as_bytes())
                .map_err(engine_error)?
            {
                Some(z) => {
                    z.insert(key.as_bytes(), score);
                }
                None => {
                    let mut z = ZSet::default();
                    z.insert(key.as_bytes(), score);
                    locked.insert(INDEX_KEY.as_bytes(), Entry::new(Value::ZSet(Box::new(z))));
                }
            }
        }
        let feed = db.feed();
        if feed.on() {
            let mut hmset: Vec<&[u8]> = vec![b"HMSET", stored];
            for (n, v) in &pairs {
                hmset.push(n);
                hmset.push(v);
            }
            feed.push(0, &[&hmset[..]]);
            if index {
                let score = crate::engine::cmd::format_f64(score);
                feed.push(
                    0,
                    &[&[
                        &b"ZADD"[..],
                        INDEX_KEY.as_bytes(),
                        score.as_bytes(),
                        key.as_bytes(),
                    ][..]],
                );
            }
        }
        Ok(())
    }

    /// Reads the hash at `stored` into `out`; `false` when it is missing.
    fn read_stored(
        engine: &Engine,
        stored: &[u8],
        fields: Option<&[String]>,
        out: &mut Record,
    ) -> YcsbResult<bool> {
        out.clear();
        let mut locked = engine.db(0).lock([stored], engine.now_ms());
        let Some(hash) = locked.get_hash(stored).map_err(engine_error)? else {
            return Ok(false);
        };
        match fields {
            None => {
                for (name, value) in hash {
                    out.push(name, value);
                }
            }
            Some(names) => {
                for name in names {
                    if let Some(value) = hash.get(name.as_bytes()) {
                        out.push(name.as_bytes(), value);
                    }
                }
            }
        }
        Ok(true)
    }
}

fn engine_error(e: crate::engine::CmdError) -> YcsbError {
    YcsbError::Backend(e.to_string())
}

impl YcsbStore for EngineYcsb {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        self.write(key, values, true)
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        self.stored(key);
        match EngineYcsb::read_stored(&self.engine, &self.key, fields, out)? {
            true => Ok(()),
            false => Err(YcsbError::NotFound(key.to_string())),
        }
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        self.write(key, values, false)
    }

    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()> {
        out.clear();
        if self.binding == Binding::GoYcsb {
            return Err(YcsbError::Unsupported(GO_YCSB_NO_SCAN));
        }
        let mut keys = std::mem::take(&mut self.scanned);
        keys.clear();
        {
            let index = INDEX_KEY.as_bytes();
            let mut locked = self.engine.db(0).lock([index], self.engine.now_ms());
            if let Some(z) = locked.get_zset(index).map_err(engine_error)? {
                let from = Bound::Included(f64::from(java_string_hash(start)));
                keys.extend(
                    z.range_by_score(from, Bound::Unbounded)
                        .take(count)
                        .map(|(member, _)| member.to_vec()),
                );
            }
        }
        let engine = &self.engine;
        let result = out.read_each(&keys, |key, record| {
            EngineYcsb::read_stored(engine, key, fields, record)
        });
        self.scanned = keys;
        result
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        self.stored(key);
        let db = self.engine.db(0);
        let stored = self.key.as_slice();
        let index = INDEX_KEY.as_bytes();
        let mut locked = db.lock([stored, index], self.engine.now_ms());
        let deleted = locked.remove(stored).is_some();
        let mut unindexed = false;
        if self.binding == Binding::Redis {
            unindexed = locked
                .get_zset_mut(index)
                .map_err(engine_error)?
                .is_some_and(|z| z.remove(key.as_bytes()));
            if unindexed {
                locked.drop_if_empty(index);
            }
        }
        let feed = db.feed();
        if feed.on() {
            feed.push(0, &[&[&b"DEL"[..], stored][..]]);
            if self.binding == Binding::Redis {
                feed.push(0, &[&[&b"ZREM"[..], index, key.as_bytes()][..]]);
            }
        }
        match deleted || unindexed {
            true => Ok(()),
            false => Err(YcsbError::NotFound(key.to_string())),
        }
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let db = self.engine.db(0);
        let now = self.engine.now_ms();
        if self.binding == Binding::GoYcsb {
            let mut locked = db.lock_all(now);
            return Ok(locked.len() as u64);
        }
        let index = INDEX_KEY.as_bytes();
        let mut locked = db.lock([index], now);
        Ok(locked
            .get_zset(index)
            .map_err(engine_error)?
            .map_or(0, |z| z.len() as u64))
    }

    fn clear(&mut self) -> YcsbResult<()> {
        let db = self.engine.db(0);
        let mut locked = db.lock_all(self.engine.now_ms());
        let doomed: Vec<Vec<u8>> = match self.binding {
            Binding::GoYcsb => locked
                .keys()
                .into_iter()
                .map(|k| k.to_vec())
                .filter(|k| k.starts_with(&self.prefix))
                .collect(),
            _ => {
                let index = INDEX_KEY.as_bytes();
                let mut keys: Vec<Vec<u8>> = locked
                    .get_zset(index)
                    .map_err(engine_error)?
                    .map(|z| z.iter().map(|(m, _)| m.to_vec()).collect())
                    .unwrap_or_default();
                keys.push(index.to_vec());
                keys
            }
        };
        for key in &doomed {
            locked.remove(key);
        }
        let feed = db.feed();
        if feed.on() {
            for key in &doomed {
                feed.push(0, &[&[&b"DEL"[..], key.as_slice()][..]]);
            }
        }
        Ok(())
    }
}
