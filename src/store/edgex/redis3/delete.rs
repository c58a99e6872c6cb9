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

use redis::Pipeline;

use super::codec::{decode_names, IndexedNames};
use super::read::Stored;
use super::{keys, Redis3Store, StoreError, StoreResult};
use crate::store::redis::StoreConnection;

/// Records per `MULTI … EXEC` of a bulk delete: EdgeX's `BatchSize`, fixed at 1000 in 3.1.
const BATCH_SIZE: usize = 1000;
/// `SCAN … COUNT` hint for the scrub; a throughput knob only, results don't depend on it.
const SCAN_COUNT: usize = 1000;

impl<C: StoreConnection> Redis3Store<C> {
    /// Deletes the event stored as `id` (stored form) and its readings.
    pub(super) fn delete_event(&mut self, id: &str) -> StoreResult<()> {
        let event = self.event(id)?;
        for reading in &event.readings {
            let key = keys::reading(&reading.id);
            let json: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(&key))?;
            let json = json.ok_or_else(|| StoreError::NotFound {
                kind: "reading",
                id: reading.id.clone(),
            })?;
            let names = decode_names(&key, "reading", &json)?;
            let mut pipe = redis::pipe();
            unlink_reading(pipe.atomic(), &key, &names);
            self.run::<()>(&pipe)?;
        }
        let names = IndexedNames {
            id: event.id,
            device_name: event.device_name,
            resource_name: String::new(),
        };
        let mut pipe = redis::pipe();
        unlink_event(pipe.atomic(), &names);
        let (unlinked, ..): (u64, u64, u64, u64, u64) = self.run(&pipe)?;
        if unlinked == 0 {
            // Another client deleted it between our read and our EXEC.
            return Err(StoreError::NotFound {
                kind: "event",
                id: id.to_owned(),
            });
        }
        Ok(())
    }

    /// Deletes the events of the origin-scored `index` with `min <= score <= max` (bounds in
    /// `ZRANGEBYSCORE` syntax), and their readings.
    pub(super) fn delete_by_score(
        &mut self,
        index: &str,
        min: &str,
        max: String,
    ) -> StoreResult<()> {
        let events: Vec<String> =
            self.query(redis::cmd("ZRANGEBYSCORE").arg(index).arg(min).arg(max))?;
        let mut readings = Vec::new();
        for event in &events {
            let key = keys::event_readings(keys::id_of(event));
            let members: Vec<String> = self.query(redis::cmd("ZRANGE").arg(key).arg(0).arg(-1))?;
            readings.extend(members);
        }
        let readings = self.mget(readings)?;
        self.unlink_batches(&readings, "reading", |pipe, names| {
            unlink_reading(pipe, &keys::reading(&names.id), names)
        })?;
        let events = self.mget(events)?;
        self.unlink_batches(&events, "event", unlink_event)
    }

    /// Queues `unlink` for each record of `stored`, [`BATCH_SIZE`] records per `MULTI … EXEC`.
    fn unlink_batches(
        &mut self,
        stored: &[Stored],
        kind: &'static str,
        unlink: impl Fn(&mut Pipeline, &IndexedNames),
    ) -> StoreResult<()> {
        for batch in stored.chunks(BATCH_SIZE) {
            let mut pipe = redis::pipe();
            pipe.atomic();
            for (key, json) in batch {
                unlink(&mut pipe, &decode_names(key, kind, json)?);
            }
            self.run::<()>(&pipe)?;
        }
        Ok(())
    }

    /// `SCAN 0 MATCH cd|* COUNT …` to the end, `UNLINK`ing each batch as it comes.
    pub(super) fn unlink_layout(&mut self) -> StoreResult<()> {
        let pattern = format!("{}*", keys::PREFIX);
        let mut cursor = 0u64;
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(SCAN_COUNT);
            let (next, batch): (u64, Vec<Vec<u8>>) = self.query(&scan)?;
            if !batch.is_empty() {
                self.query::<()>(redis::cmd("UNLINK").arg(batch))?;
            }
            if next == 0 {
                return Ok(());
            }
            cursor = next;
        }
    }
}

/// `UNLINK cd|rd:<id>` and `ZREM` from its five indexes.
fn unlink_reading(pipe: &mut Pipeline, key: &str, r: &IndexedNames) {
    pipe.cmd("UNLINK").arg(key);
    for index in [
        keys::READINGS.to_owned(),
        keys::READINGS_BY_ORIGIN.to_owned(),
        keys::readings_by_device(&r.device_name),
        keys::readings_by_resource(&r.resource_name),
        keys::readings_by_device_resource(&r.device_name, &r.resource_name),
    ] {
        pipe.cmd("ZREM").arg(index).arg(key);
    }
}

/// `UNLINK cd|evt:<id>`, `UNLINK cd|evt:readings:<id>` and `ZREM` from its three indexes.
fn unlink_event(pipe: &mut Pipeline, e: &IndexedNames) {
    let key = keys::event(&e.id);
    pipe.cmd("UNLINK").arg(&key);
    pipe.cmd("UNLINK").arg(keys::event_readings(&e.id));
    for index in [
        keys::EVENTS.to_owned(),
        keys::EVENTS_BY_ORIGIN.to_owned(),
        keys::events_by_device(&e.device_name),
    ] {
        pipe.cmd("ZREM").arg(index).arg(&key);
    }
}
