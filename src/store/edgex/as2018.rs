//! The 2018 [`CoreData`] calls on top of an [`EventStore`]: how the ten benchmarks of the 2018
//! PoC run on EdgeX's current layouts and through the `/api/v3` service.
//!
//! Each benchmark's call maps onto what EdgeX 3.x/4.x does for the nearest API request
//! (EdgeX's calls as edgexfoundry/edgex-go makes them at v4.0.2 and v3.1.1; `docs/service.md` has the table):
//!
//! | 2018 call | EdgeX request | store calls |
//! |---|---|---|
//! | `add_event` | `POST /event/{svc}/{profile}/{device}/{source}` | add_event |
//! | `event_by_id` | `GET /event/id/{id}` | event_by_id |
//! | `event_count` | `GET /event/count` | event_count |
//! | `events` | `GET /event/all?limit=-1` | events, then the count EdgeX adds |
//! | `events_for_device` | `GET /event/device/name/{d}?limit=-1` | events, then the count |
//! | `reading_count` | `GET /reading/count` | reading_count |
//! | `readings` | `GET /reading/all?limit=-1` | readings, then the count |
//! | `readings_by_device` | `GET /reading/device/name/{d}?limit=N` | readings, then the count |
//! | `add_reading` | none: readings arrive inside events | a one-reading event (for datasets) |
//! | `reading_by_id` | none | — |
//!
//! "Then the count": every EdgeX list request runs its list query and then a count query for
//! `totalCount`. On a store the adapter makes that second call itself, so a store column costs
//! what EdgeX's service costs the store; through the service ([`Counted::ByService`]) the service
//! makes it.
//!
//! Events get a fresh UUID, profile `edgebench-profile`, source `edgebench-source`, and an
//! origin that is now in ns, at least 1 µs after the last within a process, so newest-first lists have
//! no ties. Readings are `Int64` values (EdgeX's device-virtual kind), named as in 2018.

use std::sync::atomic::{AtomicI64, Ordering};

use super::{EventStore, Filter, Page};
use crate::edgex::{self, ReadingValue};
use crate::store::{CoreData, StoreError, StoreResult};
use crate::v2018::{Event, Reading};

/// The profile of every event the benchmarks send.
pub const PROFILE: &str = "edgebench-profile";
/// The source of every event the benchmarks send.
pub const SOURCE: &str = "edgebench-source";

/// Why `reading_by_id` has no equivalent.
const NO_READING_BY_ID: &str =
    "EdgeX's API has no reading-by-id call (and EdgeX 4.0's schema keeps no reading ids)";
/// Why `add_reading` has no equivalent.
const NO_ADD_READING: &str = "EdgeX's API has no call that adds a reading on its own: readings \
     arrive inside events";

/// Who runs the count that follows every EdgeX list request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The store is called directly: the adapter runs the count, as EdgeX's application layer
    /// would.
    ByAdapter,
    /// The store is a service that counts for itself.
    ByService,
}

/// The 2018 calls over an EdgeX store. See the module doc for the mapping.
pub struct As2018<S> {
    store: S,
    counted: Counted,
}

impl<S: EventStore> As2018<S> {
    /// Wraps `store`.
    pub fn new(store: S, counted: Counted) -> Self {
        As2018 { store, counted }
    }

    /// The count EdgeX runs after a list, when this adapter is the one to run it.
    fn app_count(&mut self, events: bool, filter: Filter<'_>) -> StoreResult<()> {
        if self.counted == Counted::ByAdapter {
            if events {
                self.store.event_count(filter)?;
            } else {
                self.store.reading_count(filter)?;
            }
        }
        Ok(())
    }
}

/// Now in ns, at least 1 µs after the previous call's in this process: EdgeX 3.1 keeps
/// origins as sorted-set scores (doubles, 256 ns apart near 1.7e18), so closer origins would
/// tie there and lists would lose their newest-first order.
fn next_origin() -> i64 {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = edgex::now_ns();
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1_000);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn v3_reading(device: &str, name: &str, origin: i64, value: i64) -> edgex::Reading {
    edgex::Reading {
        id: edgex::new_uuid(),
        origin,
        device_name: device.to_string(),
        resource_name: name.to_string(),
        profile_name: PROFILE.to_string(),
        value_type: "Int64".to_string(),
        units: String::new(),
        tags: None,
        value: ReadingValue::Simple(value.to_string()),
    }
}

fn v3_event(device: &str, names: impl Iterator<Item = String>) -> edgex::Event {
    let origin = next_origin();
    edgex::Event {
        id: edgex::new_uuid(),
        device_name: device.to_string(),
        profile_name: PROFILE.to_string(),
        source_name: SOURCE.to_string(),
        origin,
        readings: names
            .enumerate()
            .map(|(i, name)| v3_reading(device, &name, origin, i as i64))
            .collect(),
        tags: None,
    }
}

/// A stored EdgeX reading as a 2018 one: ms times, the resource as the name.
fn old_reading(r: edgex::Reading) -> Reading {
    let value = match r.value {
        ReadingValue::Simple(v) => v,
        ReadingValue::Binary { media_type, .. } => media_type,
        ReadingValue::Object(v) => v.to_string(),
    };
    Reading {
        id: r.id,
        created: r.origin / 1_000_000,
        origin: r.origin / 1_000_000,
        device: r.device_name,
        name: r.resource_name,
        value,
        ..Reading::default()
    }
}

fn old_event(e: edgex::Event) -> Event {
    Event {
        id: e.id,
        device: e.device_name,
        created: e.origin / 1_000_000,
        origin: e.origin / 1_000_000,
        readings: e.readings.into_iter().map(old_reading).collect(),
        ..Event::default()
    }
}

fn unsupported<T>(why: &'static str) -> StoreResult<T> {
    Err(StoreError::Unsupported(why))
}

const NOT_IN_BENCHMARKS: &str = "not one of the benchmarks' calls on an EdgeX layout";

impl<S: EventStore> CoreData for As2018<S> {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        let event = v3_event(&e.device, e.readings.iter().map(|r| r.name.clone()));
        self.store.add_event(&event)?;
        e.id.clone_from(&event.id);
        Ok(event.id)
    }

    fn update_event(&mut self, _: &Event) -> StoreResult<()> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        self.store.event_by_id(id).map(old_event)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.store.event_count(Filter::all()).map(|n| n as usize)
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.store
            .event_count(Filter::device(device))
            .map(|n| n as usize)
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.store.delete_event_by_id(id)
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        let events = self.store.events(Filter::all(), Page::ALL)?;
        self.app_count(true, Filter::all())?;
        Ok(events.into_iter().map(old_event).collect())
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        let filter = Filter::device(device);
        let events = self.store.events(filter, Page::first(limit))?;
        self.app_count(true, filter)?;
        Ok(events.into_iter().map(old_event).collect())
    }

    fn events_by_creation_time(&mut self, _: i64, _: i64, _: usize) -> StoreResult<Vec<Event>> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn events_older_than_age(&mut self, _: i64) -> StoreResult<Vec<Event>> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        self.store.scrub()
    }

    /// The nearest equivalent: an event with this one reading (so datasets can be prepared);
    /// [`CoreData::no_equivalent`] keeps the AddReading benchmark out.
    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        let event = v3_event(&r.device, std::iter::once(r.name.clone()));
        self.store.add_event(&event)?;
        r.id.clone_from(&event.readings[0].id);
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, _: &Reading) -> StoreResult<()> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        let readings = self.store.readings(Filter::all(), Page::ALL)?;
        self.app_count(false, Filter::all())?;
        Ok(readings.into_iter().map(old_reading).collect())
    }

    fn reading_by_id(&mut self, _: &str) -> StoreResult<Reading> {
        unsupported(NO_READING_BY_ID)
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        self.store.reading_count(Filter::all()).map(|n| n as usize)
    }

    fn delete_reading_by_id(&mut self, _: &str) -> StoreResult<()> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let filter = Filter::device(device);
        let readings = self.store.readings(filter, Page::first(limit))?;
        self.app_count(false, filter)?;
        Ok(readings.into_iter().map(old_reading).collect())
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let filter = Filter::resource(name);
        let readings = self.store.readings(filter, Page::first(limit))?;
        self.app_count(false, filter)?;
        Ok(readings.into_iter().map(old_reading).collect())
    }

    fn readings_by_creation_time(&mut self, _: i64, _: i64, _: usize) -> StoreResult<Vec<Reading>> {
        unsupported(NOT_IN_BENCHMARKS)
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        let filter = Filter {
            device: Some(device),
            resource: Some(name),
            range: None,
        };
        let readings = self.store.readings(filter, Page::first(limit))?;
        self.app_count(false, filter)?;
        Ok(readings.into_iter().map(old_reading).collect())
    }

    /// The EdgeX layout's own size ([`EventStore::size_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        self.store.size_bytes()
    }

    fn no_equivalent(&self, call: &str) -> Option<&'static str> {
        match call {
            "add_reading" => Some(NO_ADD_READING),
            "reading_by_id" => Some(NO_READING_BY_ID),
            _ => None,
        }
    }
}
