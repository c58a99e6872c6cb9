//! EdgeX 3.1's Redis layout for core data (edgex-go v3.1.1
//! `internal/pkg/infrastructure/redis/{event,reading,queries}.go`; storage-layouts.md §B),
//! over any redis-rs connection: a `redis-server` over TCP or a Unix socket, or the embedded
//! engine's [`EngineConnection`](crate::engine::EngineConnection).
//!
//! # Layout
//! Each event is a JSON string under `cd|evt:<id>` and each reading one under `cd|rd:<id>`
//! (`codec`: Go field names, `"Readings":null`, binary payload blanked). Sorted sets index
//! them, their members being those keys (`keys`): `cd|evt`, `cd|evt:origin` and
//! `cd|evt:device:name:<d>` by origin; `cd|evt:readings:<id>` by position in the event;
//! `cd|rd` (score 0), `cd|rd:origin`, `cd|rd:deviceName:<d>`, `cd|rd:resourceName:<r>` and
//! `cd|rd:deviceName:resourceName:<d>:<r>` by origin. Origins go out as decimal integers, and
//! Redis keeps scores as doubles: around 1.7e18 ns two origins less than 256 ns apart can
//! share a score, and time bounds compare at that resolution, as in EdgeX.
//!
//! # Command sequences (one pipeline is one round trip, as a redigo `Send … Do` is)
//! - add: `GET cd|evt:<id>` (stored → the stored event's readings are loaded, as EdgeX's
//!   `eventById` does, then [`StoreError::Duplicate`]); then one `MULTI`, `SET` + 3 `ZADD`,
//!   per reading `SET` + 5 `ZADD`, one `ZADD cd|evt:readings:<id> 0 k0 1 k1 …`, `EXEC`.
//! - add a batch (edgebench's; EdgeX adds one event at a time): one pipeline of every event's
//!   `GET cd|evt:<id>`, then one `MULTI … EXEC` of every event's add commands above. A stored
//!   id, or one repeated within the batch, fails it whole.
//! - page: `ZCOUNT key -inf +inf`, `ZREVRANGE key offset offset+limit-1` (`-1` for
//!   [`UNLIMITED`]), `MGET`, nil entries dropped. Limit 0, or nothing counted, stops early.
//! - time range: `ZCOUNT key start end`, `ZREVRANGEBYSCORE key end start LIMIT offset limit`
//!   (`-1` for [`UNLIMITED`]), `MGET`. Both ends inclusive.
//! - readings of an event (every event returned): `ZCOUNT`, `ZRANGE cd|evt:readings:<id> 0
//!   -1`, `MGET`: the N+1 pattern EdgeX has, kept because it is what we measure.
//! - counts: `ZCARD`, or `ZCOUNT key start end` for a time range.
//! - deletes (`delete`): by id as EdgeX's `deleteEventById`; in bulk as its
//!   `DeleteEventsBy{Age,DeviceName}`, whose two goroutines become two phases on this one
//!   connection, before the call returns (readings, then events; `EXEC` every 1000 records).
//!
//! # Decisions
//! - Lists: events on `cd|evt`, `cd|evt:device:name:<d>` or, for a time range,
//!   `cd|evt:origin`; readings on `cd|rd:origin` or the device / resource / device+resource
//!   index, time ranges on the same keys. Counts use the same keys, except that the total
//!   reading count is `ZCARD cd|rd`, as EdgeX's `ReadingTotalCount`.
//! - Events of a device in a time range read the device's index by score. EdgeX has no such
//!   query; it is the same sequence on the narrower key.
//! - An offset past the end is an empty page (EdgeX answers 416 Range Not Satisfiable; the
//!   trait has no such error, and the HTTP layer decides).
//! - Calls on one device and source (EdgeX 4.0's retention; this layout has no source index)
//!   read the device's index and each record's `SourceName`: see `sources`.
//! - `OlderThan { age_ns }` deletes `ZRANGEBYSCORE cd|evt:origin 0 <now_ns - age_ns>`, as
//!   EdgeX: `origin <= now - age`, inclusive (at score resolution), and events with a
//!   negative origin are kept. `Device(d)` deletes `ZRANGEBYSCORE cd|evt:device:name:<d> (0
//!   +inf`, as EdgeX: events of `d` with origin <= 0 are kept.
//! - An id that is not a UUID names nothing: [`StoreError::NotFound`] with the id as given.
//! - Ids are keyed in the lowercase hyphenated form ([`crate::edgex::normalize_uuid`]); events
//!   come in valid (see [`crate::edgex`]), so every reading has an id.
//! - [`EventStore::scrub`] `SCAN`s `MATCH cd|*` and `UNLINK`s each batch: it removes every key
//!   of the layout whatever wrote it, and nothing else.
//! - `ObjectArray` readings decode as object readings, as [`crate::edgex::value_kind`] has
//!   it (the decoder read for the layout doc, edgex-go with contracts v4, tests `Object` only).
//! - A record a bulk delete cannot decode stops the call with [`StoreError::Decode`] naming
//!   its key; EdgeX logs it and goes on. Writing it was not ours, and hiding it helps no one.
//!
//! # On Redis Cluster ([`Redis3Store::partitioned`])
//! EdgeX writes an event with all its index entries in one `MULTI … EXEC`, and some of those
//! keys (`cd|evt`, `cd|rd:origin`, …) every event touches: on a cluster they must share a
//! slot. The cluster form keeps EdgeX's records, values and command sequences, in 16
//! partitions (the hash tags of the 2018 layout's `ClusterKeys`, after `cd|`:
//! `cd|{TAG}evt:<id>`):
//! - an event, its readings and all their index entries live in the partition of the
//!   event's device, so its `MULTI … EXEC` is on one slot; the two per-device index entries
//!   of a reading that names another device live in that device's partition, written by a
//!   second pipeline after the `EXEC`;
//! - ids are the caller's UUIDs and cannot name their partition, so `cd|dir:{<id>}` does
//!   (in the slot of the id itself). EdgeX's duplicate check becomes `SET cd|dir:{<id>} <p>
//!   NX`; an entry that names no stored event (its write never reached `EXEC`) frees the id
//!   again. By-id calls read the entry first; deletes remove it last;
//! - a batch is added event by event, not atomically (its events' `MULTI … EXEC`s are on
//!   their devices' slots);
//! - a read of one device is EdgeX's sequence on its partition; a read that spans devices
//!   asks every partition in one pipeline and merges (`read`); a delete by age runs in each
//!   partition in turn; the scrub scans every primary.

mod codec;
mod delete;
mod keys;
mod read;
mod sources;
#[cfg(test)]
mod tests;
mod write;

use redis::{Cmd, FromRedisValue, Pipeline};

use keys::{Keyspace, Part};
use write::Batch;

use crate::edgex::{now_ns, Event, Reading};
use crate::store::edgex::{
    stored_event_id, Behaviour, DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter,
    StoreError, StoreResult, UNLIMITED,
};
use crate::store::redis::backend;
use crate::transport::StoreConnection;

/// EdgeX 3.1's Redis layout over one connection of any transport.
pub struct Redis3Store<C> {
    conn: C,
    /// One keyspace, or the cluster form's partitions.
    space: Keyspace,
    /// Scratch for one record's JSON; its bytes are copied into the command, so one buffer
    /// serves every record of a write.
    json: Vec<u8>,
}

impl<C: StoreConnection> Redis3Store<C> {
    /// A store that talks over `conn`, to database 0 of a server (or engine) where every key
    /// starting with `cd|` belongs to this layout ([`EventStore::scrub`] removes them all).
    pub fn new(conn: C) -> Self {
        Redis3Store {
            conn,
            space: Keyspace::Single,
            json: Vec::new(),
        }
    }

    /// The cluster form (see the module documentation) over `conn`: a connection to a Redis
    /// Cluster that routes each command by its key's slot (it works on one server too).
    pub fn partitioned(conn: C) -> Self {
        Redis3Store {
            space: Keyspace::Partitioned,
            ..Redis3Store::new(conn)
        }
    }

    /// Gives the connection back.
    pub fn into_inner(self) -> C {
        self.conn
    }

    fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> StoreResult<T> {
        cmd.query(&mut self.conn).map_err(backend)
    }

    fn run<T: FromRedisValue>(&mut self, pipe: &Pipeline) -> StoreResult<T> {
        self.conn.query_pipeline(pipe).map_err(backend)
    }

    /// The index `key` names in each partition a filter's records can be in: the device's,
    /// or all of them.
    fn scoped(&self, device: Option<&str>, key: impl Fn(Part) -> String) -> Vec<String> {
        match device {
            Some(device) => vec![key(self.space.of_device(device))],
            None => self.space.parts().map(key).collect(),
        }
    }

    /// The partition that holds event `id` (stored form): the only one, or the one its
    /// directory entry names; [`StoreError::NotFound`] when it has none.
    fn home_of(&mut self, id: &str) -> StoreResult<Part> {
        if self.space == Keyspace::Single {
            return Ok(Part::SINGLE);
        }
        self.locate(id)?.ok_or_else(|| StoreError::NotFound {
            kind: "event",
            id: id.to_owned(),
        })
    }

    /// `GET cd|dir:{<id>}`: the partition the directory names for event `id`, if any.
    fn locate(&mut self, id: &str) -> StoreResult<Option<Part>> {
        let entry: Option<usize> = self.query(redis::cmd("GET").arg(keys::directory(id)))?;
        Ok(entry
            .filter(|&p| p < self.space.partitions())
            .map(|p| self.space.part(p)))
    }

    /// Sends a write: its `MULTI … EXEC`, then the entries of other partitions.
    fn run_batch(&mut self, batch: &Batch) -> StoreResult<()> {
        self.run::<()>(&batch.main)?;
        if let Some(rest) = batch.rest() {
            self.run::<()>(rest)?;
        }
        Ok(())
    }
}

impl<C: StoreConnection> EventStore for Redis3Store<C> {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        self.add(event)
    }

    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        self.add_all(events)
    }

    /// One `MULTI … EXEC` on one keyspace; the cluster form adds event by event.
    fn adds_batches_whole(&self) -> bool {
        self.space == Keyspace::Single
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = stored_event_id(id)?;
        let home = self.home_of(&id)?;
        self.event(home, &id)
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = stored_event_id(id)?;
        let home = self.home_of(&id)?;
        self.delete_event(home, &id)
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let keys = self.scoped(filter.device, |part| part.event_index(&filter));
        self.count(keys, filter.range)
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let keys = self.scoped(filter.device, |part| part.event_index(&filter));
        let members = self.members(keys, filter.range, page)?;
        self.events_at(members)
    }

    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        match doomed {
            Doomed::Device(device) => {
                let home = self.space.of_device(device);
                self.delete_by_score(home, &home.events_by_device(device), "(0", "+inf")
            }
            Doomed::OlderThan { age_ns } => {
                let max = now_ns().saturating_sub(age_ns).to_string();
                for part in self.space.parts() {
                    self.delete_by_score(part, &part.events_by_origin(), "0", &max)?;
                }
                Ok(())
            }
            Doomed::Source {
                device,
                source,
                up_to_ns,
            } => self.delete_of_source(device, source, up_to_ns),
        }
    }

    /// The device's index and each record's `SourceName` (`sources`).
    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        self.count_of_source(filter, limit)
    }

    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let keys = self.page_of_source(filter, page)?;
        self.events_at(keys)
    }

    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        self.sources()
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let keys = self.scoped(filter.device, |part| {
            match (filter.device, filter.resource, filter.range) {
                (None, None, None) => part.readings().into_owned(),
                _ => part.reading_index(&filter),
            }
        });
        self.count(keys, filter.range)
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        let keys = self.scoped(filter.device, |part| part.reading_index(&filter));
        let members = self.members(keys, filter.range, page)?;
        self.readings_at(members)
    }

    fn scrub(&mut self) -> StoreResult<()> {
        self.unlink_layout()
    }

    /// `used_memory` of `INFO memory`: the whole server's (redis-server's allocator; for the
    /// engine in edgebench's process, the live heap of its counting allocator, which includes
    /// edgebench's own allocations; the resident set size where that is not kept).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        match self.space {
            Keyspace::Single => crate::store::redis::used_memory(&mut self.conn),
            Keyspace::Partitioned => self.used_memory_of_every_node(),
        }
    }

    /// EdgeX 3.1 blanks binary payloads before storing them.
    fn behaviour(&self) -> Behaviour {
        Behaviour {
            keeps_binary_values: false,
            ..Behaviour::FULL
        }
    }
}
