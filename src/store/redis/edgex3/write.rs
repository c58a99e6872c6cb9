//! AddEvent as EdgeX 3.1's `addEvent` and `addReading` send it: a duplicate check, then one
//! `MULTI … EXEC` of 5 + 6R + 2 commands (37 for five readings) in one round trip. A batch
//! (`add_events`) is every check in one pipeline, then one `MULTI … EXEC` of every event's
//! commands, the same ones: two round trips (EdgeX has no batch add).
//!
//! In the cluster form the duplicate check is `SET cd|dir:{<id>} <partition> NX` (see
//! [`super`]), and the `MULTI … EXEC` goes to the partition of the event's device; the index
//! entries of a reading whose device lives in another partition follow in a second pipeline.

use std::collections::HashSet;

use redis::Pipeline;

use super::codec::{StoredEvent, StoredReading};
use super::keys::{self, Keyspace, Part};
use super::{Redis3Store, StoreError, StoreResult};
use crate::edgex::{Event, Reading};
use crate::transport::StoreConnection;

/// The commands of one write: `main`, one `MULTI … EXEC` on the keys of partition `home`;
/// `rest`, the index entries that live in other partitions (sent after `main`, not atomically
/// with it). On a single keyspace everything is `main`.
pub(super) struct Batch {
    home: Part,
    pub(super) main: Pipeline,
    rest: Pipeline,
    rest_len: usize,
}

impl Batch {
    pub(super) fn new(home: Part) -> Batch {
        let mut main = redis::pipe();
        main.atomic();
        Batch {
            home,
            main,
            rest: redis::pipe(),
            rest_len: 0,
        }
    }

    /// The entries of other partitions, if there are any.
    pub(super) fn rest(&self) -> Option<&Pipeline> {
        (self.rest_len > 0).then_some(&self.rest)
    }

    /// The pipeline for a key of partition `part`.
    pub(super) fn at(&mut self, part: Part) -> &mut Pipeline {
        if part == self.home {
            &mut self.main
        } else {
            self.rest_len += 1;
            &mut self.rest
        }
    }
}

impl<C: StoreConnection> Redis3Store<C> {
    /// Stores `event` and its readings; [`StoreError::Duplicate`] when its id is stored.
    pub(super) fn add(&mut self, event: &Event) -> StoreResult<()> {
        let home = self.space.of_device(&event.device_name);
        self.check_new(event, home)?;
        let mut batch = Batch::new(home);
        self.queue(&mut batch, event)?;
        self.run_batch(&batch)
    }

    /// Stores every event of `events` or none: on one keyspace, the duplicate checks of
    /// every event in one pipeline of `GET`s, then every event's commands, as [`Self::add`]
    /// queues them, in one `MULTI … EXEC`: two round trips. An id that is stored, or that an
    /// earlier event of the batch has, is [`StoreError::Duplicate`] and nothing is written
    /// (a stored one's readings loaded first, as `add` does).
    ///
    /// The cluster form adds one event at a time, not atomically: a batch's events live in
    /// the partitions of their devices, and no `MULTI … EXEC` spans two slots.
    pub(super) fn add_all(&mut self, events: &[Event]) -> StoreResult<()> {
        if self.space == Keyspace::Partitioned {
            return events.iter().try_for_each(|event| self.add(event));
        }
        if events.is_empty() {
            return Ok(());
        }
        let home = Part::SINGLE;
        let mut checks = redis::pipe();
        for event in events {
            checks.cmd("GET").arg(home.event(&event.id));
        }
        let stored: Vec<Option<Vec<u8>>> = self.run(&checks)?;
        let mut ids = HashSet::with_capacity(events.len());
        for (event, stored) in events.iter().zip(&stored) {
            let repeated = !ids.insert(event.id.as_str());
            if stored.is_none() && !repeated {
                continue;
            }
            if stored.is_some() {
                self.readings_of_event(home, &event.id)?;
            }
            return Err(StoreError::Duplicate {
                kind: "event",
                id: event.id.clone(),
            });
        }
        let mut batch = Batch::new(home);
        for event in events {
            self.queue(&mut batch, event)?;
        }
        self.run_batch(&batch)
    }

    /// Queues `event`'s commands in `batch`, whose home is the partition of its device:
    /// `SET` and 3 `ZADD` of the event, each reading's ([`Self::add_reading`]), and the
    /// `ZADD` of the readings' positions.
    fn queue(&mut self, batch: &mut Batch, event: &Event) -> StoreResult<()> {
        let home = batch.home;
        let key = home.event(&event.id);
        let pipe = &mut batch.main;
        self.json.clear();
        encode(&mut self.json, &StoredEvent(event))?;
        pipe.cmd("SET").arg(&key).arg(&self.json);
        for index in [home.events(), home.events_by_origin()] {
            pipe.cmd("ZADD").arg(&*index).arg(event.origin).arg(&key);
        }
        pipe.cmd("ZADD")
            .arg(home.events_by_device(&event.device_name))
            .arg(event.origin)
            .arg(&key);
        let mut positions = redis::cmd("ZADD");
        positions.arg(home.event_readings(&event.id));
        for (position, reading) in event.readings.iter().enumerate() {
            let reading_key = home.reading(&reading.id);
            self.add_reading(batch, &reading_key, reading)?;
            positions.arg(position).arg(reading_key);
        }
        if !event.readings.is_empty() {
            batch.main.add_command(positions);
        }
        Ok(())
    }

    /// EdgeX's check that the id is new: `GET cd|evt:<id>`; in the cluster form, claiming the
    /// id in its directory entry. A stored event's readings are loaded before the error, as
    /// EdgeX's `eventById` does.
    fn check_new(&mut self, event: &Event, home: Part) -> StoreResult<()> {
        let duplicate = || StoreError::Duplicate {
            kind: "event",
            id: event.id.clone(),
        };
        if self.space == Keyspace::Single {
            let stored: Option<Vec<u8>> =
                self.query(redis::cmd("GET").arg(home.event(&event.id)))?;
            if stored.is_some() {
                self.readings_of_event(home, &event.id)?;
                return Err(duplicate());
            }
            return Ok(());
        }
        let entry = keys::directory(&event.id);
        let claimed: redis::Value =
            self.query(redis::cmd("SET").arg(&entry).arg(home.index).arg("NX"))?;
        if claimed != redis::Value::Nil {
            return Ok(());
        }
        // Claimed before: by a stored event, or by a write that never reached its EXEC.
        if let Some(part) = self.locate(&event.id)? {
            match self.event(part, &event.id) {
                Ok(_) => return Err(duplicate()),
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.query::<()>(redis::cmd("SET").arg(&entry).arg(home.index))
    }

    /// Queues `SET cd|rd:<id>` and the reading's five index entries (the device's two in its
    /// device's partition).
    fn add_reading(&mut self, batch: &mut Batch, key: &str, r: &Reading) -> StoreResult<()> {
        self.json.clear();
        encode(&mut self.json, &StoredReading(r))?;
        let home = batch.home;
        let pipe = &mut batch.main;
        pipe.cmd("SET").arg(key).arg(&self.json);
        pipe.cmd("ZADD").arg(&*home.readings()).arg(0).arg(key);
        let device = self.space.of_device(&r.device_name);
        for (part, index) in [
            (home, home.readings_by_origin().into_owned()),
            (device, device.readings_by_device(&r.device_name)),
            (home, home.readings_by_resource(&r.resource_name)),
            (
                device,
                device.readings_by_device_resource(&r.device_name, &r.resource_name),
            ),
        ] {
            batch.at(part).cmd("ZADD").arg(index).arg(r.origin).arg(key);
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
