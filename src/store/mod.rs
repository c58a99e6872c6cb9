//! The core-data store: one trait, one implementation per backend.
//!
//! [`CoreData`] carries the event and reading methods of the 2018 EdgeX `DBClient`
//! (RedisLabs/edgex-go, branch `redis_client` at 2e866b8, `core/data/clients/database-client.go`). Every backend (Redis over any transport,
//! the embedded engine, the document stores) implements it, and the same conformance suite
//! (`tests/it/conformance.rs`) checks that the same calls give the same results everywhere.
//!
//! The trait is synchronous and takes `&mut self`: one store value is one client connection,
//! used by one thread. Concurrent runs open one store per worker (a [`crate::target::Target`]
//! opens as many as asked). Blocking calls keep the measured path free of executor wake-ups,
//! and every backend we plan has a blocking client (redis, postgres, mongodb's sync API,
//! rusqlite).
//!
//! # Semantics every backend shares
//! - Ids are assigned by the store on add (a fresh ObjectId, whatever the argument held);
//!   `created` is set to now when it is 0, and kept otherwise (so tests and imports can place
//!   records in time). A reading added with an event gets the event's `created`, and the
//!   event's `device` when its own is empty.
//! - Lists of "all" records (`events`, `readings`, `events_pushed` ties) come back in id order,
//!   which is insertion order.
//! - Lists by device, name or time come back by `created` ascending, ties by id.
//! - `readings_by_names` returns the readings of the first name, then the second, ..., until
//!   `limit` readings have been collected (the 2018 client's loop).
//! - Time ranges are inclusive at both ends.
//! - A `limit` of 0 returns nothing; [`UNLIMITED`] returns everything.
//! - An event comes back with its readings, in the order they were added.
//! - Deleting an event deletes its readings; deleting a reading removes it from its event.
//! - Ids are case-insensitive: a by-id call (`*_by_id`, `delete_*`, and the id inside the
//!   argument of `update_*`) finds the record whatever the case of its hex digits, and records
//!   always come back with the lowercase id the store assigned.
//! - A malformed id is [`StoreError::InvalidId`]; a well-formed id that names nothing is
//!   [`StoreError::NotFound`].
//! - `id` and `created` are immutable: `created` is the time the store accepted the record
//!   and orders it in every by-time list, so an update ignores both fields of its argument.

pub mod backend;
pub mod edgex;
pub mod engine;
pub mod http;
pub mod layout;
pub mod mongo;
pub mod postgres;
pub mod redis;
pub(crate) mod rules;
pub mod shared;
pub mod sqlite;
pub mod ycsb;

use crate::v2018::{Event, Reading};

/// The registry: every backend `--target` knows, in the order a run without `--target` lists
/// their columns and `--target` asks them to read an item. Each backend is a folder here that
/// implements [`backend::Backend`] (its items, its default targets) and [`backend::Kind`]
/// (what an item starts); a new one adds its `mod` line above and one line here.
pub static BACKENDS: &[&dyn backend::Backend] = &[
    &engine::backend::EngineBackend,
    &redis::kind::RedisBackend,
    &sqlite::backend::SqliteBackend,
    &postgres::backend::PgBackend,
    &mongo::backend::MongoBackend,
    &http::backend::ServiceBackend,
];

/// Pass as a `limit` to mean "no limit".
pub const UNLIMITED: usize = usize::MAX;

/// What a store call can fail with. Messages name the input and, where there is one, the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No record has this id.
    #[error("{kind} {id} not found")]
    NotFound {
        /// "event" or "reading".
        kind: &'static str,
        /// The id that was looked up.
        id: String,
    },
    /// A record with this id is already stored (EdgeX answers 409).
    #[error("{kind} {id} already exists: ids must be unique")]
    Duplicate {
        /// "event" or "reading".
        kind: &'static str,
        /// The id.
        id: String,
    },
    /// The store or service has no equivalent of this call (EdgeX's API has no reading by id,
    /// and no reading added on its own). Benchmarks that need it show `—`.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The id is not 24 hex characters.
    #[error("invalid id {0:?}: expected 24 hex characters (an ObjectId)")]
    InvalidId(String),
    /// A stored record could not be decoded (written by something else, or corrupted).
    #[error("cannot decode stored {kind} {id}: {reason}")]
    Decode {
        /// "event" or "reading".
        kind: &'static str,
        /// The key or id of the record.
        id: String,
        /// What the decoder said.
        reason: String,
    },
    /// The backend failed: connection lost, server error, ...
    #[error("{backend}: {message}")]
    Backend {
        /// Which backend, e.g. "redis".
        backend: &'static str,
        /// The backend's own message.
        message: String,
    },
}

/// Shorthand for store results.
pub type StoreResult<T> = Result<T, StoreError>;

/// The EdgeX core-data persistence API (events and readings) of the 2018 `DBClient`.
pub trait CoreData: Send {
    // ---- events ----

    /// Adds an event and its readings in one atomic write; sets `e.id`, `e.created` and the
    /// readings' ids, `created` and (when empty) `device`. Returns the event id.
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String>;
    /// Updates the event's own fields (not its readings), found by `e.id`. `pushed`, `device`,
    /// `origin` and `event` are replaced when non-zero / non-empty in `e` (the 2018
    /// `mergo.Merge`) and kept otherwise; `modified` becomes now whatever `e` holds; `id` and
    /// `created` never change (`e.created` is ignored); `e.readings` is ignored.
    fn update_event(&mut self, e: &Event) -> StoreResult<()>;
    /// The event with this id, with its readings.
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event>;
    /// How many events there are.
    fn event_count(&mut self) -> StoreResult<usize>;
    /// How many events this device has.
    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize>;
    /// Deletes the event and its readings.
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()>;
    /// Every event, in id order, with readings.
    fn events(&mut self) -> StoreResult<Vec<Event>>;
    /// Every event of the device, oldest first.
    fn events_for_device(&mut self, device: &str) -> StoreResult<Vec<Event>> {
        self.events_for_device_limit(device, UNLIMITED)
    }
    /// The device's first `limit` events, oldest first.
    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>>;
    /// Events with `start_ms <= created <= end_ms`, oldest first, at most `limit`.
    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>>;
    /// Events created more than `age_ms` ago (`created < now - age_ms`), oldest first.
    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>>;
    /// Events with `pushed != 0`, by `pushed` ascending, ties by id.
    fn events_pushed(&mut self) -> StoreResult<Vec<Event>>;
    /// Deletes every event and every reading.
    fn scrub_all_events(&mut self) -> StoreResult<()>;

    // ---- readings ----

    /// Adds one reading; sets `r.id` and (when 0) `r.created`. Returns the id.
    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String>;
    /// Updates the reading, found by `r.id`. `pushed`, `origin`, `device`, `name` and `value`
    /// are replaced when non-zero / non-empty in `r` and kept otherwise; `modified` becomes now
    /// whatever `r` holds; `id` and `created` never change (`r.created` is ignored).
    fn update_reading(&mut self, r: &Reading) -> StoreResult<()>;
    /// Every reading, in id order.
    fn readings(&mut self) -> StoreResult<Vec<Reading>>;
    /// The reading with this id.
    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading>;
    /// How many readings there are.
    fn reading_count(&mut self) -> StoreResult<usize>;
    /// Deletes one reading (and its link from its event).
    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()>;
    /// The device's first `limit` readings, oldest first.
    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>>;
    /// The first `limit` readings with this value-descriptor name, oldest first.
    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>>;
    /// Readings of each name in turn (oldest first within a name), at most `limit` in all.
    /// Every backend answers it the 2018 client's way, one name at a time through
    /// `readings_by_name`, so the loop lives here once.
    fn readings_by_names(&mut self, names: &[&str], limit: usize) -> StoreResult<Vec<Reading>> {
        rules::readings_by_names(names, limit, |name, left| self.readings_by_name(name, left))
    }
    /// Readings with `start_ms <= created <= end_ms`, oldest first, at most `limit`.
    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>>;
    /// The device's readings with this name, oldest first, at most `limit`.
    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>>;

    /// How big the store is now, in bytes, as the store itself reports it (each
    /// implementation says what it counts, as [`edgex::EventStore::size_bytes`] does for the
    /// EdgeX layouts, and the two share the code); `None` when it cannot say. The benchmarks
    /// that write report the growth of this figure per op; it is never read while timing.
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        Ok(None)
    }

    /// Why this store has no faithful equivalent of the 2018 call `call` (a method name such as
    /// `"reading_by_id"`), or `None` when it has one. A call without one may still work as the
    /// nearest equivalent (so datasets can be prepared); its benchmark shows `—` with this
    /// reason. Every 2018-layout store has them all.
    fn no_equivalent(&self, _call: &str) -> Option<&'static str> {
        None
    }
}
