//! The `Embedded_Direct` store: [`CoreData`] over the embedded engine's typed Rust API, with
//! no command, no argument parsing and no reply in between.
//!
//! It keeps the same key layout and the same msgpack records as the Redis store
//! ([`crate::store::redis::records2018`]), so the two columns differ only in the access path:
//! [`super::redis::RedisStore`] builds commands that the engine parses and answers;
//! [`EngineStore`] locks the keys' shards ([`Db::lock`]) and works on the values in place. What
//! this column costs is what the storage costs: hashing, a few mutexes, map and B-tree
//! operations, msgpack.
//!
//! Writes are queued as a [`Batch`] of the operations the Redis store sends between `MULTI`
//! and `EXEC` (SET, UNLINK, ZADD, ZREM), in the same order, then applied under one lock of
//! every key they touch: as atomic as the `EXEC`. Updates and deletes must read a record to
//! know some of the keys they touch (its old device or name). They lock what they can name,
//! read, and if the record needs a key they did not lock, lock again with it and read again,
//! so the read and the write are one atomic step (the Redis store reads, then writes). An
//! update that does not move the record between indexes takes one lock.
//!
//! Reads lock what they read. A range read copies the ids out of its index under one lock,
//! then loads the records [`READ_CHUNK`] at a time, each chunk under its own lock: a long list
//! never holds every shard while it decodes (other workers keep going), and one lock still
//! serves many records. Records are decoded straight from the stored bytes, under the lock,
//! so a read copies nothing but the result. Like the Redis store's `ZRANGE` + `MGET`, a list
//! is not a snapshot: a record deleted in between is skipped.
//!
//! Scratch buffers live in the store and are reused, so at steady state a call allocates
//! only the records it returns, the blobs it stores and what the engine allocates itself.
//!
//! This file holds the store and its read paths; `batch` holds the buffers a write and a
//! read are built in ([`KeyBuf`], [`Batch`]), and `tests` the unit tests.

use std::ops::{Bound, Range};

use crate::engine::types::ZSet;
use crate::engine::{Db, Engine, Entry, Locked, Value, DATABASES};
use crate::store::redis::records2018::{
    decode, found, Key, Keys, Record, RedisEvent, RedisReading,
};
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::{CoreData, StoreResult, UNLIMITED};
use crate::v2018::{now_ms, Event, Reading};

pub mod backend;
mod batch;
#[cfg(test)]
mod tests;
pub mod ycsb;

use batch::{engine_error, Batch, KeyBuf, Op};

/// Records loaded under one lock by a range read. Big enough that the lock costs little per
/// record, small enough that a chunk holds its shards for a few microseconds.
const READ_CHUNK: usize = 32;

/// The [`CoreData`] store over one database of an in-process [`Engine`].
pub struct EngineStore {
    engine: Engine,
    db: usize,
    /// The write being built (see [`Batch`]).
    batch: Batch,
    /// Ids read from an index, before their records are loaded.
    ids: KeyBuf,
    /// Keys a read locks, and the ids of the readings of the events being loaded.
    scratch: Scratch,
}

/// Buffers of the read paths, apart from [`EngineStore::ids`] so that a read can fill one
/// while it reads the other.
#[derive(Default)]
struct Scratch {
    /// Keys to lock.
    lock: KeyBuf,
    /// Reading ids of the events being loaded, in event order, then link order.
    links: KeyBuf,
    /// For each entry of `links`, the index of its event in the result.
    owners: Vec<usize>,
}

impl EngineStore {
    /// A store over database `db` of `engine`. Like [`super::redis::RedisStore::new`], it
    /// expects a database that holds only what core-data stores wrote (this one, or a Redis
    /// store on the same engine: they share the layout), or unrelated keys that start with
    /// neither `event` nor `reading` ([`CoreData::scrub_all_events`] deletes those).
    ///
    /// # Panics
    /// If `db` is not a database of the engine (`db >= DATABASES`).
    pub fn new(engine: Engine, db: usize) -> Self {
        assert!(
            db < DATABASES,
            "database {db} does not exist: the engine has databases 0 to {}",
            DATABASES - 1
        );
        EngineStore {
            engine,
            db,
            batch: Batch::default(),
            ids: KeyBuf::default(),
            scratch: Scratch::default(),
        }
    }

    /// Gives the engine back.
    pub fn into_inner(self) -> Engine {
        self.engine
    }

    /// The readings of `self.ids`, in order; ids that name nothing are skipped.
    fn readings_at_ids(&self) -> StoreResult<Vec<Reading>> {
        let db = self.engine.db(self.db);
        let mut readings = Vec::with_capacity(self.ids.len());
        load(db, self.engine.now_ms(), &self.ids, |_, r| readings.push(r))?;
        Ok(readings)
    }

    /// The events of `self.ids`, in order, each with its readings; ids that name nothing are
    /// skipped.
    fn events_at_ids(&mut self) -> StoreResult<Vec<Event>> {
        let db = self.engine.db(self.db);
        let now = self.engine.now_ms();
        let (ids, s) = (&self.ids, &mut self.scratch);
        let mut events = Vec::with_capacity(ids.len());
        for chunk in chunks(ids.len()) {
            s.lock.clear();
            s.links.clear();
            s.owners.clear();
            for id in ids.range(chunk.clone()) {
                s.lock.push(id);
                push_links_key(&mut s.lock, id);
            }
            let mut locked = db.lock(s.lock.iter(), now);
            for (n, i) in chunk.enumerate() {
                let id = ids.get(i);
                // As `MGET`: a missing key, or one that holds no string, is nil and skipped.
                let Ok(Some(blob)) = locked.get_str(id) else {
                    continue;
                };
                let e: Event = decode(id, blob)?;
                let links = s.lock.get(2 * n + 1);
                collect_links(
                    &mut locked,
                    links,
                    events.len(),
                    &mut s.links,
                    &mut s.owners,
                )?;
                events.push(e);
            }
            drop(locked);
            load(db, now, &s.links, |i, r| {
                events[s.owners[i]].readings.push(r)
            })?;
        }
        Ok(events)
    }

    /// `ZRANGE key 0 limit-1` into `self.ids`.
    fn zrange(&mut self, key: Key<'_>, limit: usize) -> StoreResult<()> {
        let s = &mut self.scratch;
        s.lock.clear();
        s.lock.push_key(key);
        let db = self.engine.db(self.db);
        zrange(
            db,
            self.engine.now_ms(),
            s.lock.get(0),
            limit,
            &mut self.ids,
        )
    }

    /// The members of a zset with `min <= score <= max` (bounds as given), the first `limit`
    /// of them, into `self.ids`.
    fn zrange_by_score(
        &mut self,
        key: &str,
        min: Bound<f64>,
        max: Bound<f64>,
        limit: usize,
    ) -> StoreResult<()> {
        let ids = &mut self.ids;
        ids.clear();
        if limit == 0 {
            return Ok(());
        }
        let key = key.as_bytes();
        let mut locked = self.engine.db(self.db).lock([key], self.engine.now_ms());
        if let Some(z) = locked.get_zset(key).map_err(engine_error)? {
            for (id, _) in z.range_by_score(min, max).take(limit) {
                ids.push(id);
            }
        }
        Ok(())
    }

    /// The members of a by-created index with `start_ms <= created <= end_ms`, the first
    /// `limit` of them, into `self.ids`.
    fn created_between(
        &mut self,
        key: &str,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<()> {
        let (min, max) = (start_ms as f64, end_ms as f64);
        self.zrange_by_score(key, Bound::Included(min), Bound::Included(max), limit)
    }

    /// `ZCARD key`.
    fn zcard(&mut self, key: Key<'_>) -> StoreResult<usize> {
        let s = &mut self.scratch;
        s.lock.clear();
        s.lock.push_key(key);
        let key = s.lock.get(0);
        let mut locked = self.engine.db(self.db).lock([key], self.engine.now_ms());
        Ok(locked
            .get_zset(key)
            .map_err(engine_error)?
            .map_or(0, ZSet::len))
    }
}

impl CoreData for EngineStore {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        let b = &mut self.batch;
        b.clear();
        let id = e.id.as_str();
        let record = b.key(id);
        b.set(record, "event", id, &RedisEvent::of(e))?;
        b.zadd(Key("", Keys::EVENTS), 0, record);
        b.zadd(Key("", Keys::EVENTS_BY_CREATED), e.created, record);
        b.zadd(Key("", Keys::EVENTS_BY_PUSHED), e.pushed, record);
        b.zadd(Keys::events_by_device(&e.device), e.created, record);
        for r in &e.readings {
            push_add_reading(b, r)?;
        }
        if !e.readings.is_empty() {
            let links = b.keys.push_key(Keys::event_readings(id));
            for (position, r) in e.readings.iter().enumerate() {
                let member = b.key(&r.id);
                b.ops.push(Op::ZAdd {
                    key: links,
                    score: position as f64,
                    member,
                });
            }
        }
        b.apply(self.engine.db(self.db), self.engine.now_ms())?;
        self.engine.flush_aof();
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = key_id(&e.id)?;
        let id = &*id;
        let db = self.engine.db(self.db);
        // The stored device, once a first try found that the update moves the event from it.
        let mut old_device: Option<String> = None;
        loop {
            let lock = &mut self.scratch.lock;
            lock.clear();
            lock.push(id.as_bytes());
            lock.push(Keys::EVENTS_BY_PUSHED.as_bytes());
            // An empty device in the argument means "keep the stored one"; an empty stored
            // device is a real index key (`event:device:`) and must be locked.
            let new_device = (!e.device.is_empty()).then_some(e.device.as_str());
            for device in [new_device, old_device.as_deref()].into_iter().flatten() {
                lock.push_key(Keys::events_by_device(device));
            }
            let mut locked = db.lock(lock.iter(), self.engine.now_ms());
            let blob = locked.get_str(id.as_bytes()).map_err(engine_error)?;
            let mut stored: Event = found(id, blob.map(Vec::as_slice))?;
            let moves = merge_event(&mut stored, e);
            if moves.old_device.is_some() && moves.old_device != old_device {
                old_device = moves.old_device;
                continue;
            }
            let b = &mut self.batch;
            b.clear();
            let record = b.key(id);
            if moves.pushed {
                b.zadd(Key("", Keys::EVENTS_BY_PUSHED), stored.pushed, record);
            }
            if let Some(old) = &moves.old_device {
                b.zrem(Keys::events_by_device(old), record);
                b.zadd(
                    Keys::events_by_device(&stored.device),
                    stored.created,
                    record,
                );
            }
            b.set(record, "event", id, &RedisEvent::of(&stored))?;
            let applied = b.apply_locked(&mut locked);
            drop(locked);
            // With the append-only file on, the write is in it (and synced under
            // `appendfsync always`) before the call returns, as a reply would wait for it.
            self.engine.flush_aof();
            return applied;
        }
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = key_id(id)?;
        let id = &*id;
        let db = self.engine.db(self.db);
        let now = self.engine.now_ms();
        let s = &mut self.scratch;
        s.lock.clear();
        s.links.clear();
        s.owners.clear();
        s.lock.push(id.as_bytes());
        push_links_key(&mut s.lock, id.as_bytes());
        let mut locked = db.lock(s.lock.iter(), now);
        let blob = locked.get_str(id.as_bytes()).map_err(engine_error)?;
        let mut e: Event = found(id, blob.map(Vec::as_slice))?;
        collect_links(&mut locked, s.lock.get(1), 0, &mut s.links, &mut s.owners)?;
        drop(locked);
        e.readings.reserve_exact(s.links.len());
        load(db, now, &s.links, |_, r| e.readings.push(r))?;
        Ok(e)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.zcard(Key("", Keys::EVENTS))
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.zcard(Keys::events_by_device(device))
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        loop {
            // Which reading keys to remove is known only from the readings themselves: read
            // the event, then lock every key and check that what it read still holds.
            let e = self.event_by_id(id)?;
            let b = &mut self.batch;
            b.clear();
            let record = b.key(id);
            b.del(record);
            // The links key goes too, with any members whose readings were deleted on their
            // own.
            let links = b.keys.push_key(Keys::event_readings(id));
            b.del(links);
            b.zrem(Key("", Keys::EVENTS), record);
            b.zrem(Key("", Keys::EVENTS_BY_CREATED), record);
            b.zrem(Key("", Keys::EVENTS_BY_PUSHED), record);
            b.zrem(Keys::events_by_device(&e.device), record);
            for r in &e.readings {
                push_remove_reading(b, r);
            }
            let mut locked = b.lock(self.engine.db(self.db), self.engine.now_ms());
            let blob = locked.get_str(id.as_bytes()).map_err(engine_error)?;
            let now: Event = found(id, blob.map(Vec::as_slice))?;
            let mut unchanged = now.device == e.device;
            for r in &e.readings {
                if let Ok(Some(blob)) = locked.get_str(r.id.as_bytes()) {
                    let now: Reading = decode(&r.id, blob)?;
                    unchanged &= same_indexes(&now, r);
                }
            }
            // (An event's links never change: only `add_event` writes them, for a new id.)
            if unchanged {
                let applied = b.apply_locked(&mut locked);
                drop(locked);
                // With the append-only file on, the write is in it (and synced under
                // `appendfsync always`) before the call returns, as a reply would wait for it.
                self.engine.flush_aof();
                return applied;
            }
        }
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        self.zrange(Key("", Keys::EVENTS), UNLIMITED)?;
        self.events_at_ids()
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        self.zrange(Keys::events_by_device(device), limit)?;
        self.events_at_ids()
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        self.created_between(Keys::EVENTS_BY_CREATED, start_ms, end_ms, limit)?;
        self.events_at_ids()
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        // created < now - age.
        let cutoff = now_ms().saturating_sub(age_ms) as f64;
        self.zrange_by_score(
            Keys::EVENTS_BY_CREATED,
            Bound::Unbounded,
            Bound::Excluded(cutoff),
            UNLIMITED,
        )?;
        self.events_at_ids()
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        // pushed is never negative, so `> 0` is exactly pushed != 0.
        self.zrange_by_score(
            Keys::EVENTS_BY_PUSHED,
            Bound::Excluded(0.0),
            Bound::Unbounded,
            UNLIMITED,
        )?;
        self.events_at_ids()
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        let mut locked = self.engine.db(self.db).lock_all(self.engine.now_ms());
        let feed = locked.db().feed().on();
        // What the append-only file gets: one DEL of every key removed.
        let mut gone: Vec<Vec<u8>> = Vec::new();
        // Records first (they are the members of the two collections), then every index key.
        for collection in [Keys::EVENTS, Keys::READINGS] {
            if let Some(Entry {
                value: Value::ZSet(ids),
                ..
            }) = locked.remove(collection.as_bytes())
            {
                if feed {
                    gone.push(collection.as_bytes().to_vec());
                }
                for (id, _) in ids.iter() {
                    if locked.remove(id).is_some() && feed {
                        gone.push(id.to_vec());
                    }
                }
            }
        }
        for key in locked.keys() {
            if Keys::is_index(&key) && locked.remove(&key).is_some() && feed {
                gone.push(key.to_vec());
            }
        }
        if !gone.is_empty() {
            let mut del = vec![b"DEL".to_vec()];
            del.append(&mut gone);
            locked.db().feed().push(self.db, &[del.as_slice()]);
        }
        drop(locked);
        self.engine.flush_aof();
        Ok(())
    }

    /// The engine's INFO `used_memory`, as the Redis store over it reports
    /// ([`crate::store::redis::used_memory`]), read without a command in between.
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        Ok(crate::store::redis::used_memory_of(
            &self.engine.info(&["memory"]),
        ))
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let b = &mut self.batch;
        b.clear();
        push_add_reading(b, r)?;
        b.apply(self.engine.db(self.db), self.engine.now_ms())?;
        self.engine.flush_aof();
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = key_id(&r.id)?;
        let id = &*id;
        let db = self.engine.db(self.db);
        // The stored device and name, once a first try found that the update moves the
        // reading from them.
        let (mut old_device, mut old_name): (Option<String>, Option<String>) = (None, None);
        loop {
            let lock = &mut self.scratch.lock;
            lock.clear();
            lock.push(id.as_bytes());
            // Empty in the argument means "keep the stored one"; empty as stored is a real
            // index key (`reading:device:`, `reading:name:`) and must be locked.
            let new_device = (!r.device.is_empty()).then_some(r.device.as_str());
            for device in [new_device, old_device.as_deref()].into_iter().flatten() {
                lock.push_key(Keys::readings_by_device(device));
            }
            let new_name = (!r.name.is_empty()).then_some(r.name.as_str());
            for name in [new_name, old_name.as_deref()].into_iter().flatten() {
                lock.push_key(Keys::readings_by_name(name));
            }
            let mut locked = db.lock(lock.iter(), self.engine.now_ms());
            let blob = locked.get_str(id.as_bytes()).map_err(engine_error)?;
            let mut stored: Reading = found(id, blob.map(Vec::as_slice))?;
            let moves = merge_reading(&mut stored, r);
            let device_locked = moves.old_device.is_none() || moves.old_device == old_device;
            let name_locked = moves.old_name.is_none() || moves.old_name == old_name;
            if !(device_locked && name_locked) {
                (old_device, old_name) = (moves.old_device, moves.old_name);
                continue;
            }
            let b = &mut self.batch;
            b.clear();
            let record = b.key(id);
            if let Some(old) = &moves.old_device {
                b.zrem(Keys::readings_by_device(old), record);
                b.zadd(
                    Keys::readings_by_device(&stored.device),
                    stored.created,
                    record,
                );
            }
            if let Some(old) = &moves.old_name {
                b.zrem(Keys::readings_by_name(old), record);
                b.zadd(Keys::readings_by_name(&stored.name), stored.created, record);
            }
            b.set(record, "reading", id, &RedisReading::of(&stored))?;
            let applied = b.apply_locked(&mut locked);
            drop(locked);
            // With the append-only file on, the write is in it (and synced under
            // `appendfsync always`) before the call returns, as a reply would wait for it.
            self.engine.flush_aof();
            return applied;
        }
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        self.zrange(Key("", Keys::READINGS), UNLIMITED)?;
        self.readings_at_ids()
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        let id = key_id(id)?;
        let key = id.as_bytes();
        let mut locked = self.engine.db(self.db).lock([key], self.engine.now_ms());
        let blob = locked.get_str(key).map_err(engine_error)?;
        found(&id, blob.map(Vec::as_slice))
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        let key = Keys::READINGS.as_bytes();
        let mut locked = self.engine.db(self.db).lock([key], self.engine.now_ms());
        Ok(locked
            .get_zset(key)
            .map_err(engine_error)?
            .map_or(0, ZSet::len))
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        let db = self.engine.db(self.db);
        // The stored reading whose index keys the batch removes, once a first try read it.
        let mut known: Option<Reading> = None;
        loop {
            let b = &mut self.batch;
            b.clear();
            b.key(id);
            if let Some(r) = &known {
                push_remove_reading(b, r);
            }
            let mut locked = b.lock(db, self.engine.now_ms());
            let blob = locked.get_str(id.as_bytes()).map_err(engine_error)?;
            let stored: Reading = found(id, blob.map(Vec::as_slice))?;
            if known.as_ref().is_some_and(|r| same_indexes(r, &stored)) {
                let applied = b.apply_locked(&mut locked);
                drop(locked);
                // With the append-only file on, the write is in it (and synced under
                // `appendfsync always`) before the call returns, as a reply would wait for it.
                self.engine.flush_aof();
                return applied;
            }
            known = Some(stored);
        }
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.zrange(Keys::readings_by_device(device), limit)?;
        self.readings_at_ids()
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.zrange(Keys::readings_by_name(name), limit)?;
        self.readings_at_ids()
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.created_between(Keys::READINGS_BY_CREATED, start_ms, end_ms, limit)?;
        self.readings_at_ids()
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        // As the Redis store: the device's readings in order, kept when they are in the name
        // index, then the first `limit` of them. Both indexes are read under one lock.
        self.ids.clear();
        if limit == 0 {
            return Ok(Vec::new());
        }
        let s = &mut self.scratch;
        s.lock.clear();
        let by_device = s.lock.push_key(Keys::readings_by_device(device));
        let by_name = s.lock.push_key(Keys::readings_by_name(name));
        let db = self.engine.db(self.db);
        let mut locked = db.lock(s.lock.iter(), self.engine.now_ms());
        // `Locked` lends one value at a time: copy the device's ids, then filter them.
        s.links.clear();
        if let Some(z) = locked
            .get_zset(s.lock.get(by_device))
            .map_err(engine_error)?
        {
            for (id, _) in z.iter() {
                s.links.push(id);
            }
        }
        if let Some(z) = locked.get_zset(s.lock.get(by_name)).map_err(engine_error)? {
            for id in s.links.iter() {
                if self.ids.len() == limit {
                    break;
                }
                if z.score(id).is_some() {
                    self.ids.push(id);
                }
            }
        }
        drop(locked);
        self.readings_at_ids()
    }
}

/// Queues the SET and the four index ZADDs of one reading.
fn push_add_reading(b: &mut Batch, r: &Reading) -> StoreResult<()> {
    let record = b.key(&r.id);
    b.set(record, "reading", &r.id, &RedisReading::of(r))?;
    b.zadd(Key("", Keys::READINGS), 0, record);
    b.zadd(Key("", Keys::READINGS_BY_CREATED), r.created, record);
    b.zadd(Keys::readings_by_device(&r.device), r.created, record);
    b.zadd(Keys::readings_by_name(&r.name), r.created, record);
    Ok(())
}

/// Queues the UNLINK of a reading record and its removal from the four reading indexes.
fn push_remove_reading(b: &mut Batch, r: &Reading) {
    let record = b.key(&r.id);
    b.del(record);
    b.zrem(Key("", Keys::READINGS), record);
    b.zrem(Key("", Keys::READINGS_BY_CREATED), record);
    b.zrem(Keys::readings_by_device(&r.device), record);
    b.zrem(Keys::readings_by_name(&r.name), record);
}

/// Whether two versions of a reading are in the same index keys.
fn same_indexes(a: &Reading, b: &Reading) -> bool {
    a.device == b.device && a.name == b.name
}

/// Pushes `Keys::event_readings` of an id read back as bytes (an index member).
fn push_links_key(keys: &mut KeyBuf, event_id: &[u8]) -> usize {
    let Key(prefix, _) = Keys::event_readings("");
    keys.push_parts(&[prefix.as_bytes(), event_id])
}

/// Appends the members of the links zset `key` to `links`, in order (by position), and
/// `owner` (the index of their event) to `owners` as many times.
fn collect_links(
    locked: &mut Locked<'_>,
    key: &[u8],
    owner: usize,
    links: &mut KeyBuf,
    owners: &mut Vec<usize>,
) -> StoreResult<()> {
    if let Some(z) = locked.get_zset(key).map_err(engine_error)? {
        for (id, _) in z.iter() {
            links.push(id);
            owners.push(owner);
        }
    }
    Ok(())
}

/// The members of zset `key` by score then member, the first `limit`, into `out` (cleared).
fn zrange(db: &Db, now: u64, key: &[u8], limit: usize, out: &mut KeyBuf) -> StoreResult<()> {
    out.clear();
    if limit == 0 {
        return Ok(());
    }
    let mut locked = db.lock([key], now);
    if let Some(z) = locked.get_zset(key).map_err(engine_error)? {
        for (id, _) in z.iter().take(limit) {
            out.push(id);
        }
    }
    Ok(())
}

/// Decodes the records of `ids`, in order, [`READ_CHUNK`] under each lock, handing each to
/// `each` with its index in `ids`. As `MGET`, an id whose key is missing or holds no string
/// is skipped; a string that is not a `T` is a decode error.
fn load<T: Record>(
    db: &Db,
    now: u64,
    ids: &KeyBuf,
    mut each: impl FnMut(usize, T),
) -> StoreResult<()> {
    for chunk in chunks(ids.len()) {
        let mut locked = db.lock(ids.range(chunk.clone()), now);
        for i in chunk {
            let id = ids.get(i);
            if let Ok(Some(blob)) = locked.get_str(id) {
                each(i, decode(id, blob)?);
            }
        }
    }
    Ok(())
}

/// `0..n` in ranges of [`READ_CHUNK`].
fn chunks(n: usize) -> impl Iterator<Item = Range<usize>> {
    (0..n)
        .step_by(READ_CHUNK)
        .map(move |start| start..n.min(start + READ_CHUNK))
}
