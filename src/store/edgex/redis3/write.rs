//! AddEvent as EdgeX 3.1's `addEvent` and `addReading` send it: a duplicate check, then one
//! `MULTI … EXEC` of 5 + 6R + 2 commands (37 for five readings) in one round trip.

use redis::Pipeline;

use super::codec::{StoredEvent, StoredReading};
use super::{keys, Redis3Store, StoreError, StoreResult};
use crate::edgex::{Event, Reading};
use crate::store::redis::StoreConnection;

impl<C: StoreConnection> Redis3Store<C> {
    /// Stores `event` and its readings; [`StoreError::Duplicate`] when its id is stored.
    pub(super) fn add(&mut self, event: &Event) -> StoreResult<()> {
        let key = keys::event(&event.id);
        let stored: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(&key))?;
        if stored.is_some() {
            // EdgeX's check is `eventById`, which loads the readings before it can fail.
            self.readings_of_event(&event.id)?;
            return Err(StoreError::Duplicate {
                kind: "event",
                id: event.id.clone(),
            });
        }
        let mut pipe = redis::pipe();
        pipe.atomic();
        self.json.clear();
        encode(&mut self.json, &StoredEvent(event))?;
        pipe.cmd("SET").arg(&key).arg(&self.json);
        for index in [keys::EVENTS, keys::EVENTS_BY_ORIGIN] {
            pipe.cmd("ZADD").arg(index).arg(event.origin).arg(&key);
        }
        pipe.cmd("ZADD")
            .arg(keys::events_by_device(&event.device_name))
            .arg(event.origin)
            .arg(&key);
        let mut positions = redis::cmd("ZADD");
        positions.arg(keys::event_readings(&event.id));
        for (position, reading) in event.readings.iter().enumerate() {
            let reading_key = keys::reading(&reading.id);
            self.add_reading(&mut pipe, &reading_key, reading)?;
            positions.arg(position).arg(reading_key);
        }
        if !event.readings.is_empty() {
            pipe.add_command(positions);
        }
        self.run(&pipe)
    }

    /// Queues `SET cd|rd:<id>` and the reading's five index entries.
    fn add_reading(&mut self, pipe: &mut Pipeline, key: &str, r: &Reading) -> StoreResult<()> {
        self.json.clear();
        encode(&mut self.json, &StoredReading(r))?;
        pipe.cmd("SET").arg(key).arg(&self.json);
        pipe.cmd("ZADD").arg(keys::READINGS).arg(0).arg(key);
        for index in [
            keys::READINGS_BY_ORIGIN.to_owned(),
            keys::readings_by_device(&r.device_name),
            keys::readings_by_resource(&r.resource_name),
            keys::readings_by_device_resource(&r.device_name, &r.resource_name),
        ] {
            pipe.cmd("ZADD").arg(index).arg(r.origin).arg(key);
        }
        Ok(())
    }
}

/// Appends `record`'s JSON to `out`.
fn encode(out: &mut Vec<u8>, record: &impl serde::Serialize) -> StoreResult<()> {
    // Only a map with non-string keys fails to encode, and `serde_json::Map` has none.
    serde_json::to_writer(out, record).map_err(|e| StoreError::Backend {
        backend: "redis",
        message: format!("cannot encode a record as JSON: {e}"),
    })
}
