//! EdgeX 4.0's records as MongoDB documents. EdgeX 2.0 and later have no MongoDB layout (only
//! Redis, then PostgreSQL); this is the natural one, so MongoDB can sit behind the core-data
//! service and run the EdgeX columns. `docs/stores/mongo.md` has the documents, the indexes and
//! the query behind each call.
//!
//! # Layout
//! - `event`: one document per event, `_id` = its UUID (lowercase, hyphenated), `deviceName`,
//!   `profileName`, `sourceName`, `origin` (ns), `tags` when sent, and `readings`: the
//!   readings, embedded in the order sent. `event_by_id` is one `find` by `_id`, an event list
//!   one `find` sorted by an index: no per-event readings query (EdgeX 4.0's N+1 on
//!   PostgreSQL), and the order sent comes for free.
//! - `reading`: one document per reading, `_id` = its UUID, `event` = its event's `_id`, the
//!   same fields as the embedded copy. Reading lists and counts read this collection only.
//! - A reading's value is `value` (text), `binaryValue` (BSON binary, subtype 0) with
//!   `mediaType`, or `objectValue` (the JSON value as BSON: a document, an array, ...), so an
//!   object is queryable where the value is. BSON has no unsigned 64-bit integer: an object or
//!   tag holding an integer above `i64::MAX` is refused with a one-line error naming the
//!   event.
//! - Indexes, each in the order a list returns, so a page is an index walk without a sort:
//!   `event {origin: -1, _id: -1}` and `{deviceName: 1, origin: -1, _id: -1}`; `reading` the
//!   same two and `{resourceName: 1, origin: -1, _id: -1}`, `{deviceName: 1, resourceName: 1,
//!   origin: -1, _id: -1}`, and `{event: 1}` for deleting an event's readings. Time ranges are
//!   `origin: {$gte, $lte}` on the same indexes.
//!
//! # Writes (no transactions: a standalone `mongod` has none)
//! The event document is the record; the `reading` documents are a projection of it for the
//! reading queries, written after it and deleted before it.
//! - add: `insert_one` of the event (a duplicate `_id` is [`StoreError::Duplicate`] and nothing
//!   is written), then one ordered `insert_many` of the readings. If that fails (a reading id
//!   already stored is [`StoreError::Duplicate`] of kind `reading`), the event and the readings
//!   that went in are deleted again, so the call fails whole.
//! - delete by id: `delete_many` of the readings `{event: id}`, then `delete_one` of the event
//!   (none deleted: [`StoreError::NotFound`]). Bulk deletes find the doomed events' ids (at
//!   50 000 at a time) and delete their readings, then them, chunk by chunk.
//! - scrub: `delete_many({})` of `reading`, then of `event`; the collections keep their indexes.
//!
//! A concurrent reader sees every event whole (its readings are inside it), but the reading
//! lists and counts lag the events by one write: between an add's two writes, an event is
//! listed whose readings are not yet in `reading`, and between a delete's two writes, an event
//! is still listed whose readings are gone from it. A crash between the two leaves the same
//! state; deleting the event repairs it (and an add retried is a duplicate).
//!
//! # Decisions
//! - Lists are newest first, ties broken by `_id` descending: deterministic, so pages never
//!   overlap, but not the order sent (the trait leaves ties unordered).
//! - Counts without a filter are the `count` command without a query
//!   (`estimated_document_count`: collection metadata, no scan, exact on a standalone server
//!   after a clean shutdown), the 2018 MongoDB store's choice; filtered counts are
//!   `count_documents` over the list's index.
//! - Ids come in any case ([`crate::edgex::normalize_uuid`]); an id that is not a UUID names
//!   nothing ([`StoreError::NotFound`]), as on EdgeX 3.1's Redis layout. An event or reading
//!   id that is not a UUID cannot be added (a one-line [`StoreError::Backend`] naming it).
//! - `Doomed::OlderThan` deletes `origin < now − age` ([`crate::edgex::now_ns`]);
//!   `Doomed::Device` every event of the device, whatever its origin; `Doomed::Source` the
//!   source's events of the device up to an origin.
//! - The calls on one device and source (EdgeX 4.0's retention) query `deviceName`,
//!   `sourceName` and the range, walking the device's index (no index on `sourceName`: the
//!   layout's writes stay what they were); a count stops at its limit (`count_documents`
//!   with `limit`). The pairs are one `aggregate` `$group` over every event.
//! - [`Behaviour::FULL`](super::Behaviour::FULL): event ids are checked (by the unique `_id`,
//!   not a read first), reading ids and binary payloads kept. Reading ids are unique too, which
//!   no EdgeX layout checks (EdgeX 3.1 overwrites the reading's key).
//!
//! The files: `documents` (the BSON documents), `store` ([`Mongo4Store`]), and the unit
//! tests; [`Mongo4Database`] is here. The connection, the private database and its drop are
//! the 2018 MongoDB store's ([`crate::store::mongo`]).

mod documents;
mod store;
#[cfg(test)]
mod tests;

use mongodb::bson::doc;
use mongodb::options::ClientOptions;
use mongodb::sync::Client;

use crate::store::mongo::PrivateDatabase;
use crate::store::StoreResult;
pub use store::Mongo4Store;

#[cfg(doc)]
use crate::store::StoreError;

/// The events collection.
const EVENTS: &str = "event";
/// The readings collection.
const READINGS: &str = "reading";

/// A private database (`edgebench_<random>`) with the layout's collections and indexes,
/// dropped when this value drops. Its stores share one client's connection pool.
pub struct Mongo4Database {
    database: PrivateDatabase,
}

impl Mongo4Database {
    /// Connects to `url` (`mongodb://HOST:PORT`) and creates a fresh database with the
    /// collections' indexes. Fails within about 5 s (unless the URL sets
    /// `serverSelectionTimeoutMS`) when no server answers.
    pub fn create(url: &str) -> StoreResult<Mongo4Database> {
        Mongo4Database::with_indexes(PrivateDatabase::create(url)?)
    }

    /// [`Mongo4Database::create`] with options built by the caller (a command monitor in
    /// tests, TLS, credentials), used as given.
    pub fn create_with_options(options: ClientOptions) -> StoreResult<Mongo4Database> {
        Mongo4Database::with_indexes(PrivateDatabase::create_with_options(options)?)
    }

    fn with_indexes(database: PrivateDatabase) -> StoreResult<Mongo4Database> {
        // `_id` is indexed by MongoDB itself: by-id calls, and deleting events by id.
        database.create_indexes(
            EVENTS,
            &[
                doc! { "origin": -1, "_id": -1 },
                doc! { "deviceName": 1, "origin": -1, "_id": -1 },
            ],
        )?;
        database.create_indexes(
            READINGS,
            &[
                doc! { "origin": -1, "_id": -1 },
                doc! { "deviceName": 1, "origin": -1, "_id": -1 },
                doc! { "resourceName": 1, "origin": -1, "_id": -1 },
                doc! { "deviceName": 1, "resourceName": 1, "origin": -1, "_id": -1 },
                doc! { "event": 1 },
            ],
        )?;
        Ok(Mongo4Database { database })
    }

    /// A store on this database: one per worker, on a clone of the one client.
    pub fn open_store(&self) -> StoreResult<Mongo4Store> {
        Ok(Mongo4Store::new(
            self.database.collection(EVENTS),
            self.database.collection(READINGS),
        ))
    }

    /// Where and what this database is, for the run header, e.g. `MongoDB at
    /// mongodb://127.0.0.1:27017, database edgebench_0123456789ab` (the target adds the
    /// layout).
    pub fn describe(&self) -> String {
        format!(
            "MongoDB at {}, database {}",
            self.database.server(),
            self.database.name()
        )
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        self.database.name()
    }

    /// The client, e.g. to inspect the database in a test.
    pub fn client(&self) -> &Client {
        self.database.client()
    }
}

impl std::fmt::Debug for Mongo4Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}
