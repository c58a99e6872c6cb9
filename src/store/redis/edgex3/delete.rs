//! Deletes as EdgeX 3.1 sends them (storage-layouts.md §B.5), and the scrub.
//!
//! - By id (`deleteEventById`): the event and its readings (4 round trips), then per reading
//!   `GET cd|rd:<rid>` and `MULTI; UNLINK; 5 ZREM; EXEC`, then `MULTI; 2 UNLINK; 3 ZREM; EXEC`.
//! - In bulk (`DeleteEventsBy{Age,DeviceName}`): `ZRANGEBYSCORE` of the doomed events, one
//!   `ZRANGE cd|evt:readings:<id> 0 -1` per event, then the two goroutines' work as two phases
//!   on this connection: readings (`MGET`, then `UNLINK` + 5 `ZREM` each), events (`MGET`,
//!   then 2 `UNLINK` + 3 `ZREM` each), each phase in `MULTI … EXEC` batches of
//!   [`BATCH_SIZE`] records. EdgeX logs and skips a record it cannot decode; here it stops the
//!   call with [`StoreError::Decode`], which names the key.
//!
//! In the cluster form each sequence runs in the event's partition (a delete by age, in each
//! partition in turn); the device index entries of a reading whose device lives in another
//! partition are removed in a second pipeline after each `EXEC`, and the deleted events'
//! directory entries last, one `UNLINK` each in one pipeline. The scrub runs its `SCAN` on
//! every primary and unlinks what each finds there, one `UNLINK` per key in one pipeline.

use super::codec::{decode_names, IndexedNames};
use super::keys::{self, Keyspace, Part};
use super::read::Stored;
use super::write::Batch;
use super::{Redis3Store, StoreError, StoreResult};
use crate::store::redis::backend;
use crate::transport::StoreConnection;

/// Records per `MULTI … EXEC` of a bulk delete: EdgeX's `BatchSize`, fixed at 1000 in 3.1.
const BATCH_SIZE: usize = 1000;
/// `SCAN … COUNT` hint for the scrub and the pairs; a throughput knob only, results don't
/// depend on it.
const SCAN_COUNT: usize = 1000;

/// `SCAN 0 MATCH <pattern> COUNT …` on `node` to the end, handing each batch to `each` as it
/// comes (a key may come twice).
pub(super) fn scan_node<T: redis::FromRedisValue>(
    node: &mut dyn redis::ConnectionLike,
    pattern: &str,
    mut each: impl FnMut(&mut dyn redis::ConnectionLike, Vec<T>) -> redis::RedisResult<()>,
) -> redis::RedisResult<()> {
    let mut cursor = 0u64;
    loop {
        let mut scan = redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(SCAN_COUNT);
        let (next, batch): (u64, Vec<T>) = scan.query(node)?;
        each(node, batch)?;
        if next == 0 {
            return Ok(());
        }
        cursor = next;
    }
}

impl<C: StoreConnection> Redis3Store<C> {
    /// Deletes the event stored as `id` (stored form) in partition `home`, and its readings.
    pub(super) fn delete_event(&mut self, home: Part, id: &str) -> StoreResult<()> {
        let event = self.event(home, id)?;
        for reading in &event.readings {
            let key = home.reading(&reading.id);
            let json: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(&key))?;
            let json = json.ok_or_else(|| StoreError::NotFound {
                kind: "reading",
                id: reading.id.clone(),
            })?;
            let names = decode_names(&key, "reading", &json)?;
            let mut batch = Batch::new(home);
            unlink_reading(&mut batch, self.space, &key, &names);
            self.run_batch(&batch)?;
        }
        let names = IndexedNames {
            id: event.id,
            device_name: event.device_name,
            resource_name: String::new(),
        };
        let mut batch = Batch::new(home);
        unlink_event(&mut batch, home, &names);
        let (unlinked, ..): (u64, u64, u64, u64, u64) = self.run(&batch.main)?;
        if unlinked == 0 {
            // Another client deleted it between our read and our EXEC.
            return Err(StoreError::NotFound {
                kind: "event",
                id: id.to_owned(),
            });
        }
        self.forget(&[names.id])
    }

    /// Deletes the events of the origin-scored `index` of partition `home` with `min <= score
    /// <= max` (bounds in `ZRANGEBYSCORE` syntax), and their readings.
    pub(super) fn delete_by_score(
        &mut self,
        home: Part,
        index: &str,
        min: &str,
        max: &str,
    ) -> StoreResult<()> {
        let events: Vec<String> =
            self.query(redis::cmd("ZRANGEBYSCORE").arg(index).arg(min).arg(max))?;
        self.delete_members(home, events)
    }

    /// Deletes the events stored under `events` (keys of partition `home`) and their
    /// readings, in the two phases of a bulk delete.
    pub(super) fn delete_members(&mut self, home: Part, events: Vec<String>) -> StoreResult<()> {
        let mut readings = Vec::new();
        for event in &events {
            let key = home.event_readings(keys::id_of(event));
            let members: Vec<String> = self.query(redis::cmd("ZRANGE").arg(key).arg(0).arg(-1))?;
            readings.extend(members);
        }
        let space = self.space;
        let readings = self.mget(readings)?;
        self.unlink_batches(home, &readings, "reading", |batch, names| {
            unlink_reading(batch, space, &home.reading(&names.id), names)
        })?;
        let events = self.mget(events)?;
        self.unlink_batches(home, &events, "event", |batch, names| {
            unlink_event(batch, home, names)
        })?;
        let ids: Vec<String> = events
            .iter()
            .map(|(key, _)| keys::id_of(key).to_owned())
            .collect();
        self.forget(&ids)
    }

    /// Queues `unlink` for each record of `stored`, [`BATCH_SIZE`] records per `MULTI … EXEC`.
    fn unlink_batches(
        &mut self,
        home: Part,
        stored: &[Stored],
        kind: &'static str,
        unlink: impl Fn(&mut Batch, &IndexedNames),
    ) -> StoreResult<()> {
        for chunk in stored.chunks(BATCH_SIZE) {
            let mut batch = Batch::new(home);
            for (key, json) in chunk {
                unlink(&mut batch, &decode_names(key, kind, json)?);
            }
            self.run_batch(&batch)?;
        }
        Ok(())
    }

    /// Removes the directory entries of deleted events (cluster form only), one `UNLINK`
    /// each ([`BATCH_SIZE`] per pipeline): each entry is in a slot of its own.
    fn forget(&mut self, ids: &[String]) -> StoreResult<()> {
        if self.space == Keyspace::Single {
            return Ok(());
        }
        for chunk in ids.chunks(BATCH_SIZE) {
            let mut pipe = redis::pipe();
            for id in chunk {
                pipe.cmd("UNLINK").arg(keys::directory(id)).ignore();
            }
            self.run::<()>(&pipe)?;
        }
        Ok(())
    }

    /// `SCAN 0 MATCH cd|* COUNT …` to the end, `UNLINK`ing each batch as it comes; on a
    /// cluster, on every primary.
    pub(super) fn unlink_layout(&mut self) -> StoreResult<()> {
        let pattern = format!("{}*", keys::PREFIX);
        let partitioned = self.space == Keyspace::Partitioned;
        self.conn
            .for_each_node(|node| {
                scan_node(node, &pattern, |node, batch: Vec<Vec<u8>>| {
                    if batch.is_empty() {
                        return Ok(());
                    }
                    if partitioned {
                        // The keys of one node span slots: one UNLINK each.
                        let mut pipe = redis::pipe();
                        for key in &batch {
                            pipe.cmd("UNLINK").arg(key).ignore();
                        }
                        pipe.query::<()>(node)
                    } else {
                        redis::cmd("UNLINK").arg(batch).query::<()>(node)
                    }
                })
            })
            .map_err(backend)
    }

    /// The sum of every primary's `used_memory`.
    pub(super) fn used_memory_of_every_node(&mut self) -> StoreResult<Option<u64>> {
        let mut total: Option<u64> = None;
        self.conn
            .for_each_node(|node| {
                let info: String = redis::cmd("INFO").arg("memory").query(node)?;
                if let Some(bytes) = crate::store::redis::used_memory_of(&info) {
                    total = Some(total.unwrap_or(0) + bytes);
                }
                Ok(())
            })
            .map_err(backend)?;
        Ok(total)
    }
}

/// `UNLINK cd|rd:<id>` and `ZREM` from its five indexes (the device's two in its device's
/// partition).
fn unlink_reading(batch: &mut Batch, space: Keyspace, key: &str, r: &IndexedNames) {
    let home = space.of_key(key);
    let device = space.of_device(&r.device_name);
    batch.at(home).cmd("UNLINK").arg(key);
    for (part, index) in [
        (home, home.readings().into_owned()),
        (home, home.readings_by_origin().into_owned()),
        (device, device.readings_by_device(&r.device_name)),
        (home, home.readings_by_resource(&r.resource_name)),
        (
            device,
            device.readings_by_device_resource(&r.device_name, &r.resource_name),
        ),
    ] {
        batch.at(part).cmd("ZREM").arg(index).arg(key);
    }
}

/// `UNLINK cd|evt:<id>`, `UNLINK cd|evt:readings:<id>` and `ZREM` from its three indexes,
/// all in the event's partition `home`.
fn unlink_event(batch: &mut Batch, home: Part, e: &IndexedNames) {
    let key = home.event(&e.id);
    let pipe = batch.at(home);
    pipe.cmd("UNLINK").arg(&key);
    pipe.cmd("UNLINK").arg(home.event_readings(&e.id));
    for index in [
        home.events().into_owned(),
        home.events_by_origin().into_owned(),
        home.events_by_device(&e.device_name),
    ] {
        pipe.cmd("ZREM").arg(index).arg(&key);
    }
}
