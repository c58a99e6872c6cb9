//! The Redis store on Redis Cluster: the 2018 layout's records and indexes, partitioned by
//! hash tag ([`ClusterKeys`]), over a [`ClusterConnection`].
//!
//! It writes what [`super::redis::RedisStore`] writes, with the same commands, but every key
//! carries its partition's `{TAG}`, and:
//! - an event with its readings is one `MULTI … EXEC` in the partition of its device, as on
//!   one node. The exceptions are index entries of another partition: a reading whose device
//!   differs from its event's, or an update that moves a record to a device of another
//!   partition. Those entries go in a second pipeline, so that part is not atomic with the
//!   rest;
//! - a read that spans devices (all events or readings, counts, time ranges, by name) sends
//!   its command to every partition in one pipeline (the cluster connection sends each primary
//!   its part) and merges the replies by (score, id), the order one sorted set gives;
//! - records are fetched with one `MGET` per partition, in one pipeline.
//!
//! The per-event reads of 2018 stay: each event loads its readings with its own `ZRANGE` +
//! `MGET` (both in the event's slot).

use redis::{FromRedisValue, Pipeline};

use crate::store::redis::records2018::{
    encode, found, ClusterKeys as K, Record, RedisEvent, RedisReading,
};
use crate::store::redis::{backend, used_memory_of, RecordReads};
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::{CoreData, StoreResult, UNLIMITED};
use crate::transport::cluster::ClusterConnection;
use crate::transport::StoreConnection;
use crate::v2018::{now_ms, Event, Reading};

/// Keys per `UNLINK` when scrubbing.
const UNLINK_CHUNK: usize = 4096;
/// `SCAN … COUNT` hint when scrubbing.
const SCAN_COUNT: usize = 1000;

impl StoreConnection for ClusterConnection {
    fn for_each_node(
        &mut self,
        mut f: impl FnMut(&mut dyn redis::ConnectionLike) -> redis::RedisResult<()>,
    ) -> redis::RedisResult<()> {
        self.for_each_primary(|node| f(node))
    }
}

/// The [`CoreData`] store on a Redis Cluster.
pub struct ClusterStore {
    conn: ClusterConnection,
    buf: Vec<u8>,
}

/// The global indexes, sharded one per partition.
const EVENTS: &str = "event";
const EVENTS_BY_CREATED: &str = "event:created";
const EVENTS_BY_PUSHED: &str = "event:pushed";
const READINGS: &str = "reading";
const READINGS_BY_CREATED: &str = "reading:created";

fn events_by_device(device: &str) -> String {
    K::key2(K::of_device(device), "event:device:", device)
}

fn readings_by_device(device: &str) -> String {
    K::key2(K::of_device(device), "reading:device:", device)
}

fn event_readings(event_id: &str) -> String {
    K::key2(K::of_id(event_id), "event:readings:", event_id)
}

fn readings_by_name(p: usize, name: &str) -> String {
    K::key2(p, "reading:name:", name)
}

/// Two pipelines: `main`, atomic, for the keys of one partition; `rest`, for index entries
/// that live in other partitions (run after `main`, not atomically with it).
struct Writes {
    home: usize,
    main: Pipeline,
    rest: Pipeline,
    rest_len: usize,
}

impl Writes {
    fn new(home: usize) -> Writes {
        let mut main = redis::pipe();
        main.atomic();
        Writes {
            home,
            main,
            rest: redis::pipe(),
            rest_len: 0,
        }
    }

    /// The pipeline for a key of partition `p`.
    fn at(&mut self, p: usize) -> &mut Pipeline {
        if p == self.home {
            &mut self.main
        } else {
            self.rest_len += 1;
            &mut self.rest
        }
    }
}

impl ClusterStore {
    /// A store over `conn`. The cluster must hold only what this store wrote, or keys that do
    /// not match `{*}event*` or `{*}reading*` (the scrub deletes those).
    pub fn new(conn: ClusterConnection) -> Self {
        ClusterStore {
            conn,
            buf: Vec::new(),
        }
    }

    fn query<T: FromRedisValue>(&mut self, cmd: &redis::Cmd) -> StoreResult<T> {
        cmd.query(&mut self.conn).map_err(backend)
    }

    fn pipeline<T: FromRedisValue>(&mut self, pipe: &Pipeline) -> StoreResult<T> {
        pipe.query(&mut self.conn).map_err(backend)
    }

    fn run(&mut self, w: &Writes) -> StoreResult<()> {
        self.pipeline::<()>(&w.main)?;
        if w.rest_len > 0 {
            self.pipeline::<()>(&w.rest)?;
        }
        Ok(())
    }

    /// The first `limit` members of one zset, by score then member.
    fn zrange(&mut self, key: &str, limit: usize) -> StoreResult<Vec<String>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let stop = i64::try_from(limit).map_or(-1, |n| n - 1);
        self.query(redis::cmd("ZRANGE").arg(key).arg(0).arg(stop))
    }

    /// The first `limit` members, by score then member, of the union of one zset per
    /// partition (`rest` after each partition's tag), with `min <= score <= max`.
    fn merged(
        &mut self,
        rest: &str,
        min: &str,
        max: &str,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut pipe = Pipeline::with_capacity(K::PARTITIONS);
        for p in 0..K::PARTITIONS {
            let cmd = pipe
                .cmd("ZRANGEBYSCORE")
                .arg(K::key(p, rest))
                .arg(min)
                .arg(max)
                .arg("WITHSCORES");
            if let Ok(count) = i64::try_from(limit) {
                cmd.arg("LIMIT").arg(0).arg(count);
            }
        }
        let parts: Vec<Vec<(String, f64)>> = self.pipeline(&pipe)?;
        let mut all: Vec<(String, f64)> = parts.into_iter().flatten().collect();
        all.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(limit);
        Ok(all.into_iter().map(|(id, _)| id).collect())
    }

    /// Every member of one zset per partition, by score then member.
    fn merged_all(&mut self, rest: &str) -> StoreResult<Vec<String>> {
        self.merged(rest, "-inf", "+inf", UNLIMITED)
    }

    /// The record of kind `T` under `id`.
    fn record<T: Record>(&mut self, id: &str) -> StoreResult<T> {
        let blob: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(K::record(id)))?;
        found(id, blob.as_deref())
    }

    /// The sum of `ZCARD` of one zset per partition.
    fn count(&mut self, rest: &str) -> StoreResult<usize> {
        let mut pipe = Pipeline::with_capacity(K::PARTITIONS);
        for p in 0..K::PARTITIONS {
            pipe.cmd("ZCARD").arg(K::key(p, rest));
        }
        let counts: Vec<usize> = self.pipeline(&pipe)?;
        Ok(counts.iter().sum())
    }
}

impl RecordReads for ClusterStore {
    /// One `MGET` per partition, in one pipeline.
    fn mget(&mut self, ids: &[String]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); K::PARTITIONS];
        for (i, id) in ids.iter().enumerate() {
            groups[K::of_id(id)].push(i);
        }
        let mut pipe = redis::pipe();
        for group in groups.iter().filter(|g| !g.is_empty()) {
            let cmd = pipe.cmd("MGET");
            for &i in group {
                cmd.arg(K::record(&ids[i]));
            }
        }
        let replies: Vec<Vec<Option<Vec<u8>>>> = self.pipeline(&pipe)?;
        let mut out = vec![None; ids.len()];
        for (group, blobs) in groups.iter().filter(|g| !g.is_empty()).zip(replies) {
            for (&i, blob) in group.iter().zip(blobs) {
                out[i] = blob;
            }
        }
        Ok(out)
    }

    fn reading_ids(&mut self, event_id: &str) -> StoreResult<Vec<String>> {
        self.zrange(&event_readings(event_id), UNLIMITED)
    }
}

/// Queues the SET and index ZADDs of one reading, in its id's partition (its device index in
/// the device's).
fn push_add_reading(w: &mut Writes, buf: &mut Vec<u8>, r: &Reading) -> StoreResult<()> {
    let p = K::of_id(&r.id);
    let record = encode(buf, "reading", &r.id, &RedisReading::of(r))?;
    let pipe = w.at(p);
    pipe.cmd("SET").arg(K::record(&r.id)).arg(record);
    pipe.cmd("ZADD").arg(K::key(p, READINGS)).arg(0).arg(&r.id);
    pipe.cmd("ZADD")
        .arg(K::key(p, READINGS_BY_CREATED))
        .arg(r.created)
        .arg(&r.id);
    pipe.cmd("ZADD")
        .arg(readings_by_name(p, &r.name))
        .arg(r.created)
        .arg(&r.id);
    w.at(K::of_device(&r.device))
        .cmd("ZADD")
        .arg(readings_by_device(&r.device))
        .arg(r.created)
        .arg(&r.id);
    Ok(())
}

/// Queues the removal of a reading's record and index entries.
fn push_remove_reading(w: &mut Writes, r: &Reading) {
    let p = K::of_id(&r.id);
    let pipe = w.at(p);
    pipe.cmd("UNLINK").arg(K::record(&r.id));
    pipe.cmd("ZREM").arg(K::key(p, READINGS)).arg(&r.id);
    pipe.cmd("ZREM")
        .arg(K::key(p, READINGS_BY_CREATED))
        .arg(&r.id);
    pipe.cmd("ZREM")
        .arg(readings_by_name(p, &r.name))
        .arg(&r.id);
    w.at(K::of_device(&r.device))
        .cmd("ZREM")
        .arg(readings_by_device(&r.device))
        .arg(&r.id);
}

impl CoreData for ClusterStore {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        let p = K::of_device(&e.device);
        K::mark_id(&mut e.id, p);
        for r in &mut e.readings {
            K::mark_id(&mut r.id, p);
        }
        let mut w = Writes::new(p);
        let id = e.id.as_str();
        let record = encode(&mut self.buf, "event", id, &RedisEvent::of(e))?;
        w.main.cmd("SET").arg(K::record(id)).arg(record);
        w.main.cmd("ZADD").arg(K::key(p, EVENTS)).arg(0).arg(id);
        w.main
            .cmd("ZADD")
            .arg(K::key(p, EVENTS_BY_CREATED))
            .arg(e.created)
            .arg(id);
        w.main
            .cmd("ZADD")
            .arg(K::key(p, EVENTS_BY_PUSHED))
            .arg(e.pushed)
            .arg(id);
        w.main
            .cmd("ZADD")
            .arg(events_by_device(&e.device))
            .arg(e.created)
            .arg(id);
        for r in &e.readings {
            push_add_reading(&mut w, &mut self.buf, r)?;
        }
        if !e.readings.is_empty() {
            let links = w.main.cmd("ZADD").arg(event_readings(&e.id));
            for (position, r) in e.readings.iter().enumerate() {
                links.arg(position).arg(&r.id);
            }
        }
        self.run(&w)?;
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = key_id(&e.id)?;
        let id = &*id;
        let mut stored: Event = self.record(id)?;
        let moves = merge_event(&mut stored, e);
        let p = K::of_id(id);
        let mut w = Writes::new(p);
        if moves.pushed {
            w.main
                .cmd("ZADD")
                .arg(K::key(p, EVENTS_BY_PUSHED))
                .arg(stored.pushed)
                .arg(id);
        }
        if let Some(old) = &moves.old_device {
            w.at(K::of_device(old))
                .cmd("ZREM")
                .arg(events_by_device(old))
                .arg(id);
            w.at(K::of_device(&stored.device))
                .cmd("ZADD")
                .arg(events_by_device(&stored.device))
                .arg(stored.created)
                .arg(id);
        }
        let record = encode(&mut self.buf, "event", id, &RedisEvent::of(&stored))?;
        w.main.cmd("SET").arg(K::record(id)).arg(record);
        self.run(&w)
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let mut e: Event = self.record(&key_id(id)?)?;
        self.load_readings(&mut e)?;
        Ok(e)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.count(EVENTS)
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.query(redis::cmd("ZCARD").arg(events_by_device(device)))
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        let e = self.event_by_id(id)?;
        let p = K::of_id(id);
        let mut w = Writes::new(p);
        w.main
            .cmd("UNLINK")
            .arg(K::record(id))
            .arg(event_readings(id));
        w.main.cmd("ZREM").arg(K::key(p, EVENTS)).arg(id);
        w.main.cmd("ZREM").arg(K::key(p, EVENTS_BY_CREATED)).arg(id);
        w.main.cmd("ZREM").arg(K::key(p, EVENTS_BY_PUSHED)).arg(id);
        w.at(K::of_device(&e.device))
            .cmd("ZREM")
            .arg(events_by_device(&e.device))
            .arg(id);
        for r in &e.readings {
            push_remove_reading(&mut w, r);
        }
        self.run(&w)
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        let ids = self.merged_all(EVENTS)?;
        self.events_at(&ids)
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        let ids = self.zrange(&events_by_device(device), limit)?;
        self.events_at(&ids)
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        let ids = self.merged(
            EVENTS_BY_CREATED,
            &start_ms.to_string(),
            &end_ms.to_string(),
            limit,
        )?;
        self.events_at(&ids)
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        let cutoff = format!("({}", now_ms().saturating_sub(age_ms));
        let ids = self.merged(EVENTS_BY_CREATED, "-inf", &cutoff, UNLIMITED)?;
        self.events_at(&ids)
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        let ids = self.merged(EVENTS_BY_PUSHED, "(0", "+inf", UNLIMITED)?;
        self.events_at(&ids)
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        // Records first, partition by partition (one slot each), then every index key.
        for p in 0..K::PARTITIONS {
            for collection in [EVENTS, READINGS] {
                let ids = self.zrange(&K::key(p, collection), UNLIMITED)?;
                let keys: Vec<String> = ids.iter().map(|id| K::record(id)).collect();
                for chunk in keys.chunks(UNLINK_CHUNK) {
                    self.query::<()>(redis::cmd("UNLINK").arg(chunk))?;
                }
            }
        }
        // SCAN walks one node: ask every primary, then unlink through the cluster connection,
        // which sends each key to its slot's node.
        let mut keys: Vec<String> = Vec::new();
        self.conn
            .for_each_primary(|node| {
                for pattern in K::INDEX_PATTERNS {
                    let mut cursor: u64 = 0;
                    loop {
                        let (next, mut found): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(pattern)
                            .arg("COUNT")
                            .arg(SCAN_COUNT)
                            .query(node)?;
                        keys.append(&mut found);
                        if next == 0 {
                            break;
                        }
                        cursor = next;
                    }
                }
                Ok(())
            })
            .map_err(backend)?;
        for chunk in keys.chunks(UNLINK_CHUNK) {
            self.query::<()>(redis::cmd("UNLINK").arg(chunk))?;
        }
        Ok(())
    }

    /// The sum of every primary's `used_memory` (replicas hold copies and are not counted).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        let mut total = Some(0u64);
        self.conn
            .for_each_primary(|node| {
                let info: String = redis::cmd("INFO").arg("memory").query(node)?;
                total = total.zip(used_memory_of(&info)).map(|(t, n)| t + n);
                Ok(())
            })
            .map_err(backend)?;
        Ok(total)
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let p = K::of_device(&r.device);
        K::mark_id(&mut r.id, p);
        let mut w = Writes::new(p);
        push_add_reading(&mut w, &mut self.buf, r)?;
        self.run(&w)?;
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = key_id(&r.id)?;
        let id = &*id;
        let mut stored: Reading = self.record(id)?;
        let moves = merge_reading(&mut stored, r);
        let p = K::of_id(id);
        let mut w = Writes::new(p);
        if let Some(old) = &moves.old_device {
            w.at(K::of_device(old))
                .cmd("ZREM")
                .arg(readings_by_device(old))
                .arg(id);
            w.at(K::of_device(&stored.device))
                .cmd("ZADD")
                .arg(readings_by_device(&stored.device))
                .arg(stored.created)
                .arg(id);
        }
        if let Some(old) = &moves.old_name {
            w.main.cmd("ZREM").arg(readings_by_name(p, old)).arg(id);
            w.main
                .cmd("ZADD")
                .arg(readings_by_name(p, &stored.name))
                .arg(stored.created)
                .arg(id);
        }
        let record = encode(&mut self.buf, "reading", id, &RedisReading::of(&stored))?;
        w.main.cmd("SET").arg(K::record(id)).arg(record);
        self.run(&w)
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        let ids = self.merged_all(READINGS)?;
        self.readings_at(&ids)
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        self.record(&key_id(id)?)
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        self.count(READINGS)
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let r = self.reading_by_id(id)?;
        let mut w = Writes::new(K::of_id(&r.id));
        push_remove_reading(&mut w, &r);
        self.run(&w)
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let ids = self.zrange(&readings_by_device(device), limit)?;
        self.readings_at(&ids)
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let ids = self.merged(&format!("reading:name:{name}"), "-inf", "+inf", limit)?;
        self.readings_at(&ids)
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        let ids = self.merged(
            READINGS_BY_CREATED,
            &start_ms.to_string(),
            &end_ms.to_string(),
            limit,
        )?;
        self.readings_at(&ids)
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let by_device = self.zrange(&readings_by_device(device), UNLIMITED)?;
        if by_device.is_empty() {
            return Ok(Vec::new());
        }
        // Each id's name-index entry is in its own partition.
        let mut pipe = Pipeline::with_capacity(by_device.len());
        for id in &by_device {
            pipe.cmd("ZSCORE")
                .arg(readings_by_name(K::of_id(id), name))
                .arg(id);
        }
        let scores: Vec<Option<f64>> = self.pipeline(&pipe)?;
        let ids: Vec<String> = by_device
            .into_iter()
            .zip(scores)
            .filter_map(|(id, score)| score.map(|_| id))
            .take(limit)
            .collect();
        self.readings_at(&ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyslot::{hash_slot, SLOTS};

    #[test]
    fn partition_tags_hash_into_their_own_sixteenth_of_the_slots() {
        for p in 0..K::PARTITIONS {
            let key = K::key(p, "event");
            let slot = usize::from(hash_slot(key.as_bytes()));
            assert_eq!(slot * K::PARTITIONS / SLOTS, p, "{key}");
        }
    }

    #[test]
    fn marked_ids_carry_their_partition_and_keep_creation_order() {
        let mut ids = Vec::new();
        for p in [3, 0, 15, 7] {
            let mut r = Reading::default();
            stamp_reading(&mut r);
            let mut id = r.id;
            K::mark_id(&mut id, p);
            assert_eq!(K::of_id(&id), p, "{id}");
            assert!(crate::v2018::is_object_id(&id), "{id}");
            ids.push(id);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "ids made one after another sort in that order");
    }
}
