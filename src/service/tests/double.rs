//! An in-memory [`EventStore`] for the HTTP-layer tests: it checks request parsing and
//! response building, not storage (the real stores have their own conformance suite). Every
//! store the opener makes shares one list of events, as the connections of one database do.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::edgex::{Event, Reading};
use crate::service::StoreOpener;
use crate::store::edgex::{Doomed, EventStore, Filter, Page};
use crate::store::{StoreError, StoreResult};

/// What every store of one opener shares.
#[derive(Default)]
pub struct Shared {
    /// The events, in the order they were added.
    pub events: Mutex<Vec<Event>>,
    /// How long `add_event` sleeps before it stores (to hold a request in flight).
    pub add_delay: Mutex<Duration>,
    /// How many stores the opener has opened.
    pub opened: Mutex<usize>,
}

/// One store: a view of the shared events.
pub struct MemStore(Arc<Shared>);

/// An opener of [`MemStore`]s over `shared`.
pub fn opener(shared: &Arc<Shared>) -> StoreOpener {
    let shared = Arc::clone(shared);
    Arc::new(move || {
        *shared.opened.lock().unwrap() += 1;
        Ok(Box::new(MemStore(Arc::clone(&shared))) as Box<dyn EventStore>)
    })
}

fn in_range(origin: i64, range: Option<(i64, i64)>) -> bool {
    range.is_none_or(|(s, e)| s <= origin && origin <= e)
}

fn page_of<T>(mut all: Vec<T>, page: Page) -> Vec<T> {
    all.drain(..).skip(page.offset).take(page.limit).collect()
}

impl MemStore {
    fn matching_events(&self, filter: Filter<'_>) -> Vec<Event> {
        let mut events: Vec<Event> = self
            .0
            .events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| filter.device.is_none_or(|d| e.device_name == d))
            .filter(|e| in_range(e.origin, filter.range))
            .cloned()
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.origin));
        events
    }

    fn matching_readings(&self, filter: Filter<'_>) -> Vec<Reading> {
        let mut readings: Vec<Reading> = self
            .0
            .events
            .lock()
            .unwrap()
            .iter()
            .flat_map(|e| e.readings.iter())
            .filter(|r| filter.device.is_none_or(|d| r.device_name == d))
            .filter(|r| filter.resource.is_none_or(|n| r.resource_name == n))
            .filter(|r| in_range(r.origin, filter.range))
            .cloned()
            .collect();
        readings.sort_by_key(|r| std::cmp::Reverse(r.origin));
        readings
    }
}

impl EventStore for MemStore {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let delay = *self.0.add_delay.lock().unwrap();
        std::thread::sleep(delay);
        let mut events = self.0.events.lock().unwrap();
        if events.iter().any(|e| e.id == event.id) {
            return Err(StoreError::Duplicate {
                kind: "event",
                id: event.id.clone(),
            });
        }
        events.push(event.clone());
        Ok(())
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let events = self.0.events.lock().unwrap();
        events
            .iter()
            .find(|e| e.id == id)
            .cloned()
            .ok_or_else(|| StoreError::NotFound {
                kind: "event",
                id: id.to_string(),
            })
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let mut events = self.0.events.lock().unwrap();
        let before = events.len();
        events.retain(|e| e.id != id);
        if events.len() == before {
            return Err(StoreError::NotFound {
                kind: "event",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        Ok(self.matching_events(filter).len() as u64)
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        Ok(page_of(self.matching_events(filter), page))
    }

    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        let now = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX);
        let mut events = self.0.events.lock().unwrap();
        match doomed {
            Doomed::Device(d) => events.retain(|e| e.device_name != d),
            Doomed::OlderThan { age_ns } => {
                events.retain(|e| e.origin >= now.saturating_sub(age_ns))
            }
            Doomed::Source {
                device,
                source,
                up_to_ns,
            } => events.retain(|e| {
                e.device_name != device || e.source_name != source || e.origin > up_to_ns
            }),
        }
        Ok(())
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        Ok(self.matching_readings(filter).len() as u64)
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        Ok(page_of(self.matching_readings(filter), page))
    }

    fn scrub(&mut self) -> StoreResult<()> {
        self.0.events.lock().unwrap().clear();
        Ok(())
    }
}
