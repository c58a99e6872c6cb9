//! The Redis store: the 2018 EdgeX `redis_client` layout and commands, over any transport.
//!
//! [`RedisStore`] is generic over [`StoreConnection`] (a [`redis::ConnectionLike`]), so the
//! same code runs over a TCP connection, a Unix-socket connection and the in-process engine:
//! whoever opens the connection ([`crate::target`]) picks the transport, and nothing here
//! depends on it.
//!
//! It writes the layout of [`crate::store::redis::records2018`] (the 2018 client at `2e866b8`,
//! RedisLabs/edgex-go, branch `redis_client` at 2e866b8, `core/data/clients/redis-client.go`) the way the 2018 client did: every write one
//! `MULTI … EXEC` round trip, range reads as `ZRANGE` + `MGET` ("local" mode, two round
//! trips), and every event loading its readings with its own `ZRANGE` + `MGET`. That N+1 is
//! what the Events benchmarks measure. It differs from 2018 on purpose in two places: the
//! readings links hold bare hex ids (see the layout), and an update rewrites the record and
//! fixes only the indexes that changed, in one `MULTI … EXEC`, where 2018 did delete + add.
//!
//! Updates read, merge and write without `WATCH`. A store is one connection used by one
//! thread (see [`crate::store`]), and two writers updating the same record is not a workload
//! we measure.

use std::io::Write;

use redis::{ConnectionLike, FromRedisValue, Pipeline, RedisError, RedisWrite, ToRedisArgs};

use crate::store::redis::records2018::{
    decode, encode, found, Key, Keys, Record, RedisEvent, RedisReading,
};
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::{CoreData, StoreError, StoreResult, UNLIMITED};
use crate::transport::StoreConnection;
use crate::v2018::{now_ms, Event, Reading};

impl ToRedisArgs for Key<'_> {
    fn write_redis_args<W: ?Sized + RedisWrite>(&self, out: &mut W) {
        let mut arg = out.writer_for_next_arg();
        // redis-rs writes arguments into memory (`Cmd`, `Vec<Vec<u8>>`): this cannot fail.
        let _ = arg.write_all(self.0.as_bytes());
        let _ = arg.write_all(self.1.as_bytes());
    }
}

/// How many keys one `UNLINK` takes in [`RedisStore::scrub_all_events`] (the 2018 Lua chunk).
const UNLINK_CHUNK: usize = 4096;
/// `SCAN … COUNT` hint for the scrub; a throughput knob only, results don't depend on it.
const SCAN_COUNT: usize = 1000;

/// The [`CoreData`] store over one Redis connection, of any transport.
pub struct RedisStore<C: StoreConnection> {
    conn: C,
    /// Scratch for msgpack-encoding one record; its bytes are copied into the command, so one
    /// buffer serves every record of a write.
    buf: Vec<u8>,
    /// `ZCARD event` and `ZCARD reading`, built once. A socket connection packs them per call
    /// (a few tens of ns against a round trip); the in-process engine reads their arguments
    /// as they are, with no RESP written or parsed (what the count benchmarks compare).
    zcard_events: redis::Cmd,
    zcard_readings: redis::Cmd,
}

impl<C: StoreConnection> RedisStore<C> {
    /// A store that talks over `conn`. The connection must be to database 0 of a server (or
    /// engine) that holds only what this store wrote, or unrelated keys that start with
    /// neither `event` nor `reading` ([`CoreData::scrub_all_events`] deletes those).
    pub fn new(conn: C) -> Self {
        let zcard = |key| redis::cmd("ZCARD").arg(key).to_owned();
        RedisStore {
            conn,
            buf: Vec::new(),
            zcard_events: zcard(Keys::EVENTS),
            zcard_readings: zcard(Keys::READINGS),
        }
    }

    /// Gives the connection back.
    pub fn into_inner(self) -> C {
        self.conn
    }

    fn query<T: FromRedisValue>(&mut self, cmd: &redis::Cmd) -> StoreResult<T> {
        cmd.query(&mut self.conn).map_err(backend)
    }

    fn run(&mut self, pipe: &Pipeline) -> StoreResult<()> {
        self.conn.query_pipeline::<()>(pipe).map_err(backend)
    }

    /// The first `limit` members of a zset, by score then member.
    fn zrange(&mut self, key: impl ToRedisArgs, limit: usize) -> StoreResult<Vec<String>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let stop = i64::try_from(limit).map_or(-1, |n| n - 1);
        self.query(redis::cmd("ZRANGE").arg(key).arg(0).arg(stop))
    }

    /// The first `limit` members with `min <= score <= max` (bounds in `ZRANGEBYSCORE` syntax).
    fn zrange_by_score(
        &mut self,
        key: &str,
        min: impl ToRedisArgs,
        max: impl ToRedisArgs,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("ZRANGEBYSCORE");
        cmd.arg(key).arg(min).arg(max);
        if let Ok(count) = i64::try_from(limit) {
            cmd.arg("LIMIT").arg(0).arg(count);
        }
        self.query(&cmd)
    }

    /// The records of `ids`, in order; `None` where an id names nothing.
    fn mget(&mut self, ids: &[String]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.query(redis::cmd("MGET").arg(ids))
    }

    /// The record of kind `T` under `id` (checked and lowercase: see [`key_id`]); `NotFound`
    /// when `id` names nothing, or a record of the other kind (see [`found`]).
    fn record<T: Record>(&mut self, id: &str) -> StoreResult<T> {
        let blob: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(Keys::record(id)))?;
        found(id, blob.as_deref())
    }

    /// `UNLINK`s `keys` in chunks, all chunks in one pipelined round trip.
    fn unlink_all(&mut self, keys: &[String]) -> StoreResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for chunk in keys.chunks(UNLINK_CHUNK) {
            pipe.cmd("UNLINK").arg(chunk);
        }
        self.run(&pipe)
    }
}

/// How a store of the 2018 layout turns ids into records: what its reads share, whatever its
/// keys look like (one node's, or a cluster's partitioned ones).
pub(crate) trait RecordReads {
    /// The records of `ids`, in order; `None` where an id names nothing.
    fn mget(&mut self, ids: &[String]) -> StoreResult<Vec<Option<Vec<u8>>>>;

    /// The ids of an event's readings, in the order they were added.
    fn reading_ids(&mut self, event_id: &str) -> StoreResult<Vec<String>>;

    /// The readings of `ids`, in order; ids that name nothing are skipped.
    fn readings_at(&mut self, ids: &[String]) -> StoreResult<Vec<Reading>> {
        let blobs = self.mget(ids)?;
        ids.iter()
            .zip(blobs)
            .filter_map(|(id, blob)| blob.map(|b| decode(id, &b)))
            .collect()
    }

    /// The events of `ids`, each with its readings: one `ZRANGE` + `MGET` per event, as 2018.
    fn events_at(&mut self, ids: &[String]) -> StoreResult<Vec<Event>> {
        let blobs = self.mget(ids)?;
        let mut events = Vec::with_capacity(blobs.len());
        for (id, blob) in ids.iter().zip(blobs) {
            if let Some(blob) = blob {
                let mut e = decode(id, &blob)?;
                self.load_readings(&mut e)?;
                events.push(e);
            }
        }
        Ok(events)
    }

    /// Fills in an event's readings.
    fn load_readings(&mut self, e: &mut Event) -> StoreResult<()> {
        let ids = self.reading_ids(&e.id)?;
        e.readings = self.readings_at(&ids)?;
        Ok(())
    }
}

impl<C: StoreConnection> RecordReads for RedisStore<C> {
    fn mget(&mut self, ids: &[String]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        RedisStore::mget(self, ids)
    }

    fn reading_ids(&mut self, event_id: &str) -> StoreResult<Vec<String>> {
        self.zrange(Keys::event_readings(event_id), UNLIMITED)
    }
}

impl<C: StoreConnection> CoreData for RedisStore<C> {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        // 5 commands for the event, 5 per reading, 1 for the links (MULTI/EXEC are implicit).
        let mut pipe = Pipeline::with_capacity(6 + 5 * e.readings.len());
        pipe.atomic();
        let id = e.id.as_str();
        pipe.cmd("SET").arg(Keys::record(id)).arg(encode(
            &mut self.buf,
            "event",
            id,
            &RedisEvent::of(e),
        )?);
        pipe.cmd("ZADD").arg(Keys::EVENTS).arg(0).arg(id);
        pipe.cmd("ZADD")
            .arg(Keys::EVENTS_BY_CREATED)
            .arg(e.created)
            .arg(id);
        pipe.cmd("ZADD")
            .arg(Keys::EVENTS_BY_PUSHED)
            .arg(e.pushed)
            .arg(id);
        pipe.cmd("ZADD")
            .arg(Keys::events_by_device(&e.device))
            .arg(e.created)
            .arg(id);
        for r in &e.readings {
            push_add_reading(&mut pipe, &mut self.buf, r)?;
        }
        if !e.readings.is_empty() {
            let links = pipe.cmd("ZADD").arg(Keys::event_readings(&e.id));
            for (position, r) in e.readings.iter().enumerate() {
                links.arg(position).arg(&r.id);
            }
        }
        self.run(&pipe)?;
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = key_id(&e.id)?;
        let id = &*id;
        let mut stored: Event = self.record(id)?;
        let moves = merge_event(&mut stored, e);
        let mut pipe = redis::pipe();
        pipe.atomic();
        if moves.pushed {
            pipe.cmd("ZADD")
                .arg(Keys::EVENTS_BY_PUSHED)
                .arg(stored.pushed)
                .arg(id);
        }
        if let Some(old) = &moves.old_device {
            pipe.cmd("ZREM").arg(Keys::events_by_device(old)).arg(id);
            pipe.cmd("ZADD")
                .arg(Keys::events_by_device(&stored.device))
                .arg(stored.created)
                .arg(id);
        }
        pipe.cmd("SET").arg(Keys::record(id)).arg(encode(
            &mut self.buf,
            "event",
            id,
            &RedisEvent::of(&stored),
        )?);
        self.run(&pipe)
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let mut e: Event = self.record(&key_id(id)?)?;
        self.load_readings(&mut e)?;
        Ok(e)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.zcard_events.query(&mut self.conn).map_err(backend)
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.query(redis::cmd("ZCARD").arg(Keys::events_by_device(device)))
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        let e = self.event_by_id(id)?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        // The links key goes too, with any members whose readings were deleted on their own.
        pipe.cmd("UNLINK")
            .arg(Keys::record(id))
            .arg(Keys::event_readings(id));
        pipe.cmd("ZREM").arg(Keys::EVENTS).arg(id);
        pipe.cmd("ZREM").arg(Keys::EVENTS_BY_CREATED).arg(id);
        pipe.cmd("ZREM").arg(Keys::EVENTS_BY_PUSHED).arg(id);
        pipe.cmd("ZREM")
            .arg(Keys::events_by_device(&e.device))
            .arg(id);
        for r in &e.readings {
            push_remove_reading(&mut pipe, r);
        }
        self.run(&pipe)
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        let ids = self.zrange(Keys::EVENTS, UNLIMITED)?;
        self.events_at(&ids)
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        let ids = self.zrange(Keys::events_by_device(device), limit)?;
        self.events_at(&ids)
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        let ids = self.zrange_by_score(Keys::EVENTS_BY_CREATED, start_ms, end_ms, limit)?;
        self.events_at(&ids)
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        // `(` makes the bound exclusive: created < now - age.
        let cutoff = format!("({}", now_ms().saturating_sub(age_ms));
        let ids = self.zrange_by_score(Keys::EVENTS_BY_CREATED, "-inf", cutoff, UNLIMITED)?;
        self.events_at(&ids)
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        // pushed is never negative, so `(0` is exactly pushed != 0.
        let ids = self.zrange_by_score(Keys::EVENTS_BY_PUSHED, "(0", "+inf", UNLIMITED)?;
        self.events_at(&ids)
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        // Records first (they match no pattern), then every index key.
        for collection in [Keys::EVENTS, Keys::READINGS] {
            let ids = self.zrange(collection, UNLIMITED)?;
            self.unlink_all(&ids)?;
        }
        for pattern in Keys::INDEX_PATTERNS {
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = self.query(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(pattern)
                        .arg("COUNT")
                        .arg(SCAN_COUNT),
                )?;
                // Deleting during a SCAN is safe: SCAN still returns every key that stays.
                self.unlink_all(&keys)?;
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(())
    }

    /// `used_memory` of `INFO memory`: the whole server's ([`used_memory`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        used_memory(&mut self.conn)
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let mut pipe = Pipeline::with_capacity(5);
        pipe.atomic();
        push_add_reading(&mut pipe, &mut self.buf, r)?;
        self.run(&pipe)?;
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = key_id(&r.id)?;
        let id = &*id;
        let mut stored: Reading = self.record(id)?;
        let moves = merge_reading(&mut stored, r);
        let mut pipe = redis::pipe();
        pipe.atomic();
        if let Some(old) = &moves.old_device {
            pipe.cmd("ZREM").arg(Keys::readings_by_device(old)).arg(id);
            pipe.cmd("ZADD")
                .arg(Keys::readings_by_device(&stored.device))
                .arg(stored.created)
                .arg(id);
        }
        if let Some(old) = &moves.old_name {
            pipe.cmd("ZREM").arg(Keys::readings_by_name(old)).arg(id);
            pipe.cmd("ZADD")
                .arg(Keys::readings_by_name(&stored.name))
                .arg(stored.created)
                .arg(id);
        }
        pipe.cmd("SET").arg(Keys::record(id)).arg(encode(
            &mut self.buf,
            "reading",
            id,
            &RedisReading::of(&stored),
        )?);
        self.run(&pipe)
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        let ids = self.zrange(Keys::READINGS, UNLIMITED)?;
        self.readings_at(&ids)
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        self.record(&key_id(id)?)
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        self.zcard_readings.query(&mut self.conn).map_err(backend)
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let r = self.reading_by_id(id)?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        push_remove_reading(&mut pipe, &r);
        self.run(&pipe)
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let ids = self.zrange(Keys::readings_by_device(device), limit)?;
        self.readings_at(&ids)
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let ids = self.zrange(Keys::readings_by_name(name), limit)?;
        self.readings_at(&ids)
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        let ids = self.zrange_by_score(Keys::READINGS_BY_CREATED, start_ms, end_ms, limit)?;
        self.readings_at(&ids)
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        // As 2018: the device's readings in order, filtered by a pipelined ZSCORE in the name
        // index. The limit applies after the filter, so the result is exact.
        if limit == 0 {
            return Ok(Vec::new());
        }
        let by_device = self.zrange(Keys::readings_by_device(device), UNLIMITED)?;
        if by_device.is_empty() {
            return Ok(Vec::new());
        }
        let name_key = Keys::readings_by_name(name);
        let mut pipe = Pipeline::with_capacity(by_device.len());
        for id in &by_device {
            pipe.cmd("ZSCORE").arg(name_key).arg(id);
        }
        let scores: Vec<Option<f64>> = self.conn.query_pipeline(&pipe).map_err(backend)?;
        let ids: Vec<String> = by_device
            .into_iter()
            .zip(scores)
            .filter_map(|(id, score)| score.map(|_| id))
            .take(limit)
            .collect();
        self.readings_at(&ids)
    }
}

/// Queues the SET and the four index ZADDs of one reading.
fn push_add_reading(pipe: &mut Pipeline, buf: &mut Vec<u8>, r: &Reading) -> StoreResult<()> {
    pipe.cmd("SET").arg(Keys::record(&r.id)).arg(encode(
        buf,
        "reading",
        &r.id,
        &RedisReading::of(r),
    )?);
    pipe.cmd("ZADD").arg(Keys::READINGS).arg(0).arg(&r.id);
    pipe.cmd("ZADD")
        .arg(Keys::READINGS_BY_CREATED)
        .arg(r.created)
        .arg(&r.id);
    pipe.cmd("ZADD")
        .arg(Keys::readings_by_device(&r.device))
        .arg(r.created)
        .arg(&r.id);
    pipe.cmd("ZADD")
        .arg(Keys::readings_by_name(&r.name))
        .arg(r.created)
        .arg(&r.id);
    Ok(())
}

/// Queues the UNLINK of a reading record and its removal from the four reading indexes.
fn push_remove_reading(pipe: &mut Pipeline, r: &Reading) {
    pipe.cmd("UNLINK").arg(Keys::record(&r.id));
    pipe.cmd("ZREM").arg(Keys::READINGS).arg(&r.id);
    pipe.cmd("ZREM").arg(Keys::READINGS_BY_CREATED).arg(&r.id);
    pipe.cmd("ZREM")
        .arg(Keys::readings_by_device(&r.device))
        .arg(&r.id);
    pipe.cmd("ZREM")
        .arg(Keys::readings_by_name(&r.name))
        .arg(&r.id);
}

/// `used_memory` of the server's `INFO memory`: redis-server's allocator's bytes; for the
/// engine in edgebench's process, the live heap of edgebench's counting allocator, which
/// includes edgebench's own allocations (its resident set size where that is not kept).
/// Every Redis-backed store (this one, EdgeX 3.1's layout) reports its size with it.
pub(crate) fn used_memory(conn: &mut impl ConnectionLike) -> StoreResult<Option<u64>> {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(conn)
        .map_err(backend)?;
    Ok(used_memory_of(&info))
}

/// The `used_memory:` line of INFO's text, if it has one.
pub(crate) fn used_memory_of(info: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A redis-rs error as a store error; a lost connection says so. Shared with the EdgeX 3.1
/// layout ([`crate::store::redis::edgex3`]).
pub(crate) fn backend(e: RedisError) -> StoreError {
    let message = if e.is_io_error() {
        format!("{e} (connection lost: is the server still running?)")
    } else {
        e.to_string()
    };
    StoreError::Backend {
        backend: "redis",
        message,
    }
}

#[cfg(test)]
mod tests {
    //! The wire shape of the store's calls, against a recording connection: which commands,
    //! in how many round trips. The results themselves are checked against real servers by
    //! `tests/it/conformance.rs`.

    use std::collections::VecDeque;

    use redis::{RedisResult, Value};
    use serde::Serialize;

    use super::*;
    use crate::v2018::ObjectId;

    /// Records every request (one per round trip) and answers from a script; unscripted
    /// requests get a harmless default.
    #[derive(Default)]
    struct Recorder {
        requests: Vec<Vec<Vec<String>>>,
        replies: VecDeque<Value>,
    }

    impl StoreConnection for Recorder {}

    impl ConnectionLike for Recorder {
        fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
            self.requests.push(parse_commands(cmd));
            Ok(self.replies.pop_front().unwrap_or(Value::Nil))
        }

        fn req_packed_commands(
            &mut self,
            cmd: &[u8],
            offset: usize,
            count: usize,
        ) -> RedisResult<Vec<Value>> {
            self.requests.push(parse_commands(cmd));
            Ok(match self.replies.pop_front() {
                Some(Value::Array(items)) if offset == 0 => items,
                Some(reply) => vec![reply],
                // MULTI … EXEC: the EXEC reply, one entry per queued command.
                None if offset > 0 => vec![Value::Array(vec![Value::Int(1); offset - 1])],
                None => vec![Value::Nil; count],
            })
        }

        fn get_db(&self) -> i64 {
            0
        }

        fn check_connection(&mut self) -> bool {
            true
        }

        fn is_open(&self) -> bool {
            true
        }
    }

    /// Splits packed RESP into commands, each a list of its arguments.
    fn parse_commands(mut bytes: &[u8]) -> Vec<Vec<String>> {
        fn line(bytes: &mut &[u8], prefix: u8) -> usize {
            assert_eq!(bytes[0], prefix);
            let end = bytes.windows(2).position(|w| w == b"\r\n").expect("CRLF");
            let n = std::str::from_utf8(&bytes[1..end])
                .expect("utf-8")
                .parse()
                .expect("n");
            *bytes = &bytes[end + 2..];
            n
        }
        let mut commands = Vec::new();
        while !bytes.is_empty() {
            let argc = line(&mut bytes, b'*');
            let args = (0..argc)
                .map(|_| {
                    let len = line(&mut bytes, b'$');
                    let arg = String::from_utf8_lossy(&bytes[..len]).into_owned();
                    bytes = &bytes[len + 2..];
                    arg
                })
                .collect();
            commands.push(args);
        }
        commands
    }

    fn names(request: &[Vec<String>]) -> Vec<&str> {
        request.iter().map(|args| args[0].as_str()).collect()
    }

    fn bulk(bytes: Vec<u8>) -> Value {
        Value::BulkString(bytes)
    }

    fn blob<T: Serialize>(record: &T) -> Vec<u8> {
        encode(&mut Vec::new(), "test", "", record)
            .expect("encode")
            .to_vec()
    }

    fn ids(ids: &[&str]) -> Value {
        Value::Array(ids.iter().map(|id| bulk(id.as_bytes().to_vec())).collect())
    }

    #[test]
    fn add_event_is_one_multi_exec_of_33_commands_for_5_readings() {
        let mut store = RedisStore::new(Recorder::default());
        let mut e = Event {
            device: "device0".into(),
            readings: (0..5)
                .map(|i| Reading {
                    name: format!("name{i}"),
                    ..Reading::default()
                })
                .collect(),
            ..Event::default()
        };
        let id = store.add_event(&mut e).expect("add_event");
        let requests = &store.conn.requests;
        assert_eq!(requests.len(), 1, "one round trip");
        let commands = &requests[0];
        assert_eq!(commands.len(), 33);
        let mut want = vec!["MULTI", "SET", "ZADD", "ZADD", "ZADD", "ZADD"];
        for _ in 0..5 {
            want.extend(["SET", "ZADD", "ZADD", "ZADD", "ZADD"]);
        }
        want.extend(["ZADD", "EXEC"]);
        assert_eq!(names(commands), want);
        let created = e.created.to_string();
        assert_eq!(commands[2], ["ZADD", "event", "0", id.as_str()]);
        assert_eq!(commands[3], ["ZADD", "event:created", &created, &id]);
        assert_eq!(commands[4], ["ZADD", "event:pushed", "0", &id]);
        assert_eq!(commands[5], ["ZADD", "event:device:device0", &created, &id]);
        let r0 = &e.readings[0].id;
        assert_eq!(commands[7], ["ZADD", "reading", "0", r0.as_str()]);
        assert_eq!(commands[8], ["ZADD", "reading:created", &created, r0]);
        assert_eq!(
            commands[9],
            ["ZADD", "reading:device:device0", &created, r0]
        );
        assert_eq!(commands[10], ["ZADD", "reading:name:name0", &created, r0]);
        let mut links = vec!["ZADD".to_string(), format!("event:readings:{id}")];
        for (i, r) in e.readings.iter().enumerate() {
            links.extend([i.to_string(), r.id.clone()]);
        }
        assert_eq!(commands[31], links);
    }

    #[test]
    fn add_reading_is_one_multi_exec_of_7_commands() {
        let mut store = RedisStore::new(Recorder::default());
        let mut r = Reading {
            device: "device0".into(),
            name: "test0".into(),
            ..Reading::default()
        };
        store.add_reading(&mut r).expect("add_reading");
        assert_eq!(store.conn.requests.len(), 1);
        assert_eq!(
            names(&store.conn.requests[0]),
            ["MULTI", "SET", "ZADD", "ZADD", "ZADD", "ZADD", "EXEC"]
        );
    }

    #[test]
    fn range_reads_are_zrange_then_mget_and_skip_what_they_need_not_send() {
        let mut store = RedisStore::new(Recorder::default());
        // limit 0: no round trip at all.
        assert_eq!(store.readings_by_device("d", 0).expect("read"), vec![]);
        assert!(store.conn.requests.is_empty());
        // Nothing in the index: no MGET.
        store.conn.replies.push_back(ids(&[]));
        assert_eq!(store.readings_by_device("d", 100).expect("read"), vec![]);
        assert_eq!(
            store.conn.requests,
            [[["ZRANGE", "reading:device:d", "0", "99"]]]
        );
        store.conn.requests.clear();
        store.conn.replies.push_back(ids(&[]));
        store.readings_by_device("d", UNLIMITED).expect("read");
        assert_eq!(
            store.conn.requests,
            [[["ZRANGE", "reading:device:d", "0", "-1"]]]
        );
    }

    #[test]
    fn an_event_is_get_then_zrange_then_mget_and_skips_deleted_readings() {
        let id = ObjectId::new().to_hex_string();
        let (r0, gone) = (
            ObjectId::new().to_hex_string(),
            ObjectId::new().to_hex_string(),
        );
        let event = Event {
            id: id.clone(),
            device: "d".into(),
            ..Event::default()
        };
        let reading = Reading {
            id: r0.clone(),
            device: "d".into(),
            ..Reading::default()
        };
        let mut store = RedisStore::new(Recorder::default());
        store.conn.replies.extend([
            bulk(blob(&RedisEvent::of(&event))),
            ids(&[&r0, &gone]),
            Value::Array(vec![bulk(blob(&RedisReading::of(&reading))), Value::Nil]),
        ]);
        let got = store.event_by_id(&id).expect("event_by_id");
        assert_eq!(
            got,
            Event {
                readings: vec![reading],
                ..event
            }
        );
        let links = format!("event:readings:{id}");
        assert_eq!(
            store.conn.requests,
            [
                vec![vec!["GET".to_string(), id.clone()]],
                vec![vec!["ZRANGE".into(), links, "0".into(), "-1".into()]],
                vec![vec!["MGET".into(), r0, gone]],
            ]
        );
    }

    #[test]
    fn counts_send_zcard_and_by_id_calls_use_the_lowercase_key() {
        let mut store = RedisStore::new(Recorder::default());
        store.conn.replies.extend([Value::Int(3), Value::Int(4)]);
        assert_eq!(store.event_count().expect("count"), 3);
        assert_eq!(store.reading_count().expect("count"), 4);
        let upper = "5B4F0000000000000000000A";
        assert!(matches!(
            store.reading_by_id(upper),
            Err(StoreError::NotFound { .. })
        ));
        assert_eq!(
            store.conn.requests,
            [
                [["ZCARD", "event"]],
                [["ZCARD", "reading"]],
                [["GET", "5b4f0000000000000000000a"]],
            ]
        );
    }
}
