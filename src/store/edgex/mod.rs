//! Core data as EdgeX 3.x and 4.x store it: the [`EventStore`] trait (the part of EdgeX's
//! `internal/core/data/infrastructure/interfaces/db.go` that the `/api/v3` routes call) and its
//! layouts.
//!
//! - [`redis3`]: EdgeX 3.1's Redis layout (`cd|evt:<uuid>` JSON records and sorted-set indexes),
//!   over any redis-rs connection: a `redis-server` over TCP or a Unix socket, and the embedded
//!   engine in process or served over RESP.
//! - [`pg4`]: EdgeX 4.0's PostgreSQL schema (`core_data.event`, `reading`, `device_info`) and its
//!   statements.
//! - [`sqlite4`]: the same schema and statements in SQLite's dialect. EdgeX has no SQLite
//!   layout; this is the nearest thing for the in-process SQL column.
//! - [`mongo4`]: EdgeX 4.0's records as MongoDB documents. EdgeX 2.0 and later have no
//!   MongoDB layout; this is the natural one (an event document with its readings embedded,
//!   and a document per reading for the reading queries).
//! - [`as2018`]: the 2018 calls (the ten benchmarks') on top of any of these.
//! - [`retention`]: what one purge of EdgeX core data's retention does (3.1's reading
//!   watermark, 4.0's per device and source), over any of these.
//! - [`http`]: any core-data service, reached over HTTP on TCP or a Unix socket; the same trait,
//!   so the conformance suite and the benchmarks run through a service as they run on a store.
//!
//! Every layout follows edgexfoundry/edgex-go's own storage code: `internal/pkg/infrastructure/postgres/` at v4.0.2 and `internal/pkg/infrastructure/redis/` at v3.1.1.
//!
//! # Semantics every implementation shares (the conformance suite checks them)
//! - Lists are newest first: origin descending. Ties are in no fixed order (EdgeX's are not).
//! - A page skips `offset` records and returns at most `limit`; [`UNLIMITED`] means all.
//! - Time ranges are inclusive at both ends, in ns.
//! - An event comes back with its readings in the order they were sent.
//! - Deleting events deletes their readings.
//! - Adding an event whose id is already stored is [`StoreError::Duplicate`] where the layout
//!   checks (EdgeX 3.1's Redis layout does, EdgeX 4.0's PostgreSQL schema does not: it stores
//!   the event twice, and [`EventStore::checks_duplicate_ids`] says which).
//! - An id that names nothing is [`StoreError::NotFound`].
//! - The calls on one device's events from one source ([`SourceFilter`],
//!   [`Doomed::Source`], [`EventStore::device_sources`]) answer what the same filter over
//!   the device's whole list would: the source is compared exactly, an empty source names
//!   no pair.
//! - [`EventStore::add_events`] stores what the same [`EventStore::add_event`]s store; a store
//!   that overrides it stores a batch whole or not at all ([`EventStore::adds_batches_whole`]).

pub mod as2018;
pub mod retention;
mod scan;
pub(crate) mod sql4;

use crate::edgex::{normalize_uuid, Event, Reading};
pub use crate::store::{StoreError, StoreResult, UNLIMITED};

/// The stored form of an event id (lowercase, hyphenated); an id that is not a UUID names no
/// event, so it is [`StoreError::NotFound`] with the id as given.
pub(crate) fn stored_event_id(id: &str) -> StoreResult<String> {
    normalize_uuid(id).ok_or_else(|| StoreError::NotFound {
        kind: "event",
        id: id.to_owned(),
    })
}

/// Which records a list or a count covers. Every field narrows; `Default` is everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filter<'a> {
    /// Only this device's records.
    pub device: Option<&'a str>,
    /// Only readings of this resource (ignored for events).
    pub resource: Option<&'a str>,
    /// Only records with `start <= origin <= end`, ns.
    pub range: Option<(i64, i64)>,
}

impl<'a> Filter<'a> {
    /// Everything.
    pub fn all() -> Self {
        Filter::default()
    }

    /// One device's records.
    pub fn device(device: &'a str) -> Self {
        Filter {
            device: Some(device),
            ..Filter::default()
        }
    }

    /// One resource's readings.
    pub fn resource(resource: &'a str) -> Self {
        Filter {
            resource: Some(resource),
            ..Filter::default()
        }
    }

    /// Narrowed to a time range.
    pub fn between(self, start: i64, end: i64) -> Self {
        Filter {
            range: Some((start, end)),
            ..self
        }
    }
}

/// One device's events from one source: the pair EdgeX 4.0's retention counts and purges
/// (`device_info`'s `devicename` and `sourcename`; an AutoEvent's device and `sourceName`).
///
/// It is not a field of [`Filter`] because EdgeX's API has no source in any list or count
/// (the REST routes, and every call but retention's), so no other caller needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceFilter<'a> {
    /// The event's `deviceName`.
    pub device: &'a str,
    /// The event's `sourceName`.
    pub source: &'a str,
    /// Only events with `start <= origin <= end`, ns.
    pub range: Option<(i64, i64)>,
}

impl<'a> SourceFilter<'a> {
    /// Every event of `device` from `source`.
    pub fn new(device: &'a str, source: &'a str) -> Self {
        SourceFilter {
            device,
            source,
            range: None,
        }
    }

    /// Narrowed to a time range.
    pub fn between(self, start: i64, end: i64) -> Self {
        SourceFilter {
            range: Some((start, end)),
            ..self
        }
    }

    /// Whether `event` is one of the events this filter covers.
    pub fn matches(&self, event: &Event) -> bool {
        event.device_name == self.device
            && event.source_name == self.source
            && self
                .range
                .is_none_or(|(start, end)| (start..=end).contains(&event.origin))
    }
}

/// A device and one source it has events from ([`EventStore::device_sources`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceSource {
    /// `deviceName`.
    pub device: String,
    /// `sourceName`.
    pub source: String,
}

impl DeviceSource {
    /// The pair `(device, source)`.
    pub fn new(device: impl Into<String>, source: impl Into<String>) -> Self {
        DeviceSource {
            device: device.into(),
            source: source.into(),
        }
    }

    /// Every event of this pair.
    pub fn filter(&self) -> SourceFilter<'_> {
        SourceFilter::new(&self.device, &self.source)
    }
}

/// A page of a newest-first list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Records to skip.
    pub offset: usize,
    /// Records to return at most; [`UNLIMITED`] for all.
    pub limit: usize,
}

impl Page {
    /// Everything.
    pub const ALL: Page = Page {
        offset: 0,
        limit: UNLIMITED,
    };

    /// The first `limit` records.
    pub fn first(limit: usize) -> Self {
        Page { offset: 0, limit }
    }
}

/// Which events a bulk delete removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doomed<'a> {
    /// Every event of this device (`DELETE /event/device/name/{name}`).
    Device(&'a str),
    /// Every event with `origin < now - age_ns` (`DELETE /event/age/{age}`): age 0 removes every
    /// event that is not from the future.
    OlderThan {
        /// ns.
        age_ns: i64,
    },
    /// Every event of `device` from `source` with `origin <= up_to_ns`, however old
    /// (EdgeX 4.0's retention: `DeleteEventsByAgeAndDeviceNameAndSourceName`, whose `origin
    /// <= now - age` this is with the age resolved to an origin, so that a purge can name
    /// the newest event it removes; `i64::MAX` is `DeleteEventsByDeviceNameAndSourceName`,
    /// all of them). EdgeX's REST API has no such route ([`crate::store::http`] refuses it).
    Source {
        /// `deviceName`.
        device: &'a str,
        /// `sourceName`.
        source: &'a str,
        /// The newest origin deleted, inclusive, ns.
        up_to_ns: i64,
    },
}

/// What an [`EventStore`] keeps and checks, where EdgeX's layouts differ
/// ([`EventStore::behaviour`]); edgebench's service publishes it in its `/config` so a client
/// can report it for the store behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviour {
    /// See [`EventStore::checks_duplicate_ids`].
    pub checks_duplicate_ids: bool,
    /// See [`EventStore::keeps_reading_ids`].
    pub keeps_reading_ids: bool,
    /// See [`EventStore::keeps_binary_values`].
    pub keeps_binary_values: bool,
}

impl Behaviour {
    /// What a store that keeps and checks everything does (the trait's defaults).
    pub const FULL: Behaviour = Behaviour {
        checks_duplicate_ids: true,
        keeps_reading_ids: true,
        keeps_binary_values: true,
    };
}

/// EdgeX's core-data persistence, as the `/api/v3` routes use it.
///
/// One value is one client (one connection, or one service), used by one thread, as
/// [`crate::store::CoreData`] is.
pub trait EventStore: Send {
    /// Adds an event and its readings in one write.
    fn add_event(&mut self, event: &Event) -> StoreResult<()>;
    /// Adds every event of `events` in one transaction where the store has them (one round
    /// trip where it can): all are stored or none is. An event that [`EventStore::add_event`]
    /// would refuse (an id already stored where the layout checks ids, an id that is not a
    /// UUID where the layout needs one) fails the whole batch with the error `add_event` gives,
    /// and so does an id repeated within the batch where the layout checks ids (where it does
    /// not, the event is stored twice, as two `add_event`s store it). An empty batch is `Ok`
    /// and stores nothing. Events are stored as `add_event` stores them, record for record:
    /// a message-bus subscriber that buffers events (edgex-go issue #5185) writes them with it.
    ///
    /// The default is a loop over `add_event`, and it is **not atomic**: it stops at the first
    /// error, and the events before it stay stored. EdgeX 4.0's schema on PostgreSQL and on
    /// SQLite, the MongoDB layout and EdgeX 3.1's Redis layout (one keyspace; not its cluster
    /// form) override it; [`EventStore::adds_batches_whole`] says which a store does.
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        events.iter().try_for_each(|event| self.add_event(event))
    }
    /// Whether [`EventStore::add_events`] stores a batch whole or not at all when one of its
    /// events fails (`false`: the default loop, which leaves the events before the failed one
    /// stored). A store says it where it overrides `add_events`; a wrapper that forwards
    /// `add_events` forwards this too.
    fn adds_batches_whole(&self) -> bool {
        false
    }
    /// The event with this id (a UUID, any case), with its readings.
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event>;
    /// Deletes the event and its readings.
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()>;
    /// How many events match (`resource` is ignored).
    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64>;
    /// One page of the matching events, newest first, with their readings.
    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>>;
    /// Deletes the events (and their readings) that `doomed` names.
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()>;
    /// How many events `filter` covers, counting no further than `limit` ([`UNLIMITED`]:
    /// all). EdgeX 4.0's retention asks whether a pair holds MaxCap events this way
    /// (`EventCountByDeviceNameAndSourceNameAndLimit`), so the database stops counting there.
    ///
    /// The default pages through the device's events ([`EventStore::events`]) and counts the
    /// source's: right on any store, and what a client of EdgeX's REST API can do (its lists
    /// have no source); every store with a layout of its own overrides it.
    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        scan::source_event_count(self, filter, limit)
    }
    /// One page of the events `filter` covers, newest first, with their readings (EdgeX
    /// 4.0's `LatestEventByDeviceNameAndSourceName[AndAge]AndOffset` is a page of one). The
    /// default pages through the device's events, as [`EventStore::source_event_count`]'s.
    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        scan::source_events(self, filter, page)
    }
    /// Every (device, source) pair the store holds at least one event of, sorted, each once;
    /// events with an empty source name none (EdgeX 4.0's retention walks the same pairs: its
    /// device_info cache, rows with a source name). The default pages through every event.
    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        scan::device_sources(self)
    }
    /// How many readings match.
    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64>;
    /// One page of the matching readings, newest first.
    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>>;
    /// Removes every event and reading, whatever their origin (tests and benchmarks start
    /// from an empty store with it).
    fn scrub(&mut self) -> StoreResult<()>;
    /// What this store keeps and checks where EdgeX's layouts differ. Implementations say it
    /// here, once; the three questions below read it.
    fn behaviour(&self) -> Behaviour {
        Behaviour::FULL
    }
    /// How big the store is now, in bytes, as the store itself reports it (each
    /// implementation says what it counts); `None` when it cannot say (a core-data service).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        Ok(None)
    }
    /// Whether adding an event whose id is already stored fails with
    /// [`StoreError::Duplicate`] (EdgeX 3.1 on Redis) or stores it again (EdgeX 4.0 on
    /// PostgreSQL).
    fn checks_duplicate_ids(&self) -> bool {
        self.behaviour().checks_duplicate_ids
    }
    /// Whether readings come back with the id they were stored with (EdgeX 4.0's schema keeps
    /// none, so its readings come back with an empty id).
    fn keeps_reading_ids(&self) -> bool {
        self.behaviour().keeps_reading_ids
    }
    /// Whether binary readings come back with their bytes (EdgeX 3.1's Redis layout blanks
    /// them before storing, to save memory; they come back with an empty `binaryValue`).
    fn keeps_binary_values(&self) -> bool {
        self.behaviour().keeps_binary_values
    }
}

/// Boxed stores are stores.
impl<S: EventStore + ?Sized> EventStore for Box<S> {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        (**self).add_event(event)
    }
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        (**self).add_events(events)
    }
    fn adds_batches_whole(&self) -> bool {
        (**self).adds_batches_whole()
    }
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        (**self).event_by_id(id)
    }
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        (**self).delete_event_by_id(id)
    }
    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        (**self).event_count(filter)
    }
    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        (**self).events(filter, page)
    }
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        (**self).delete_events(doomed)
    }
    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        (**self).source_event_count(filter, limit)
    }
    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        (**self).source_events(filter, page)
    }
    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        (**self).device_sources()
    }
    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        (**self).reading_count(filter)
    }
    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        (**self).readings(filter, page)
    }
    fn scrub(&mut self) -> StoreResult<()> {
        (**self).scrub()
    }
    fn behaviour(&self) -> Behaviour {
        (**self).behaviour()
    }
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        (**self).size_bytes()
    }
}
