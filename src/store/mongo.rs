//! The MongoDB store: events and readings as BSON documents in collections `event` and
//! `reading`, over the official driver's blocking (`sync`) API.
//!
//! [`MongoDatabase`] is the private database of one run: it connects, creates
//! `edgebench_<random>` with its indexes, hands out one [`MongoStore`] per worker (clones of
//! one `Client`, so workers share its connection pool), and drops the database when it drops.
//! Schema, indexes and the query each one serves are in `docs/stores/mongo.md`.
//!
//! Invariants:
//! - Every reading, lone or added with an event, is a document of `reading` (`_id` = its
//!   ObjectId, the 2018 field names, plus `event_id` when it was added with an event). Every
//!   reading query reads that collection only, through an index.
//! - [`MongoLayout::Embedded`] also keeps a copy of each event's readings inside the event
//!   document, in the order they were added, so an event list is one query. The copy is kept
//!   equal to the `reading` document by every write that touches a reading (update, delete).
//! - [`MongoLayout::Referenced`] keeps the readings' ids in the event document instead (the
//!   2018 client's layout, reference §4); [`Fidelity`] says whether an event list loads them
//!   with one `$in` query ([`Fidelity::Modern`]) or one query per reading
//!   ([`Fidelity::Y2018`], the 2018 N+1).
//! - Ids are BSON ObjectIds made from the store-assigned hex ids; their byte order is their
//!   hex order, hence creation order, so "all" lists sort by `_id`.
//! - No transactions (a standalone `mongod` has none): a write of several documents is a
//!   sequence of single-collection writes ordered so that a reader never sees an event whose
//!   readings are not written yet (see `add_event` and the doc).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use mongodb::bson::oid::ObjectId as Oid;
use mongodb::bson::{self, doc, Document, RawDocumentBuf};
use mongodb::options::ClientOptions;
use mongodb::sync::{Client, Collection, Database};
use mongodb::IndexModel;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};

use crate::model::{now_ms, Event, ObjectId, Reading};
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::shared::{one_line, private_name, redact_password};
use crate::store::{CoreData, StoreError, StoreResult, UNLIMITED};

const BACKEND: &str = "mongodb";
const EVENTS: &str = "event";
const READINGS: &str = "reading";

/// How long the driver looks for a usable server before an operation fails (unless the URL
/// sets `serverSelectionTimeoutMS`). The driver's default is 30 s; a benchmark pointed at the
/// wrong URL should say so quickly, and a live server answers in milliseconds.
const SERVER_SELECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// Ids per `$in` query. One query per event list is the aim; chunking only keeps the command
/// well under MongoDB's 16 MiB document limit (an ObjectId array element is ~20 bytes) for
/// lists of more than this many readings.
const IN_CHUNK: usize = 50_000;

/// Where an event's readings live (`--mongo-layout`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MongoLayout {
    /// Readings inside their event document (and in `reading`, for the reading queries): an
    /// event list is one query. What a modern user would do; the default.
    #[default]
    Embedded,
    /// Readings only in `reading`; the event holds their ids, as the 2018 client did.
    Referenced,
}

impl MongoLayout {
    /// The name `--mongo-layout` takes.
    pub fn name(self) -> &'static str {
        match self {
            MongoLayout::Embedded => "embedded",
            MongoLayout::Referenced => "referenced",
        }
    }
}

impl fmt::Display for MongoLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MongoLayout {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "embedded" => Ok(MongoLayout::Embedded),
            "referenced" => Ok(MongoLayout::Referenced),
            _ => Err(format!(
                "unknown MongoDB layout {s:?}: expected embedded or referenced"
            )),
        }
    }
}

/// How events load their readings in the [`MongoLayout::Referenced`] layout (`--fidelity`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fidelity {
    /// All readings of an event list in one `$in` query.
    #[default]
    Modern,
    /// One query per reading, as the 2018 client's `MongoEvent.SetBSON` did (N+1). The
    /// embedded layout has no per-reading query to make, so there it reads like `Modern`.
    Y2018,
}

impl Fidelity {
    /// The name `--fidelity` takes.
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Modern => "modern",
            Fidelity::Y2018 => "2018",
        }
    }
}

impl fmt::Display for Fidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The private database of one run: created with its indexes by [`MongoDatabase::create`],
/// dropped when this value drops.
pub struct MongoDatabase {
    client: Client,
    db: Database,
    /// The server, as messages name it (the URL without its password).
    server: String,
    layout: MongoLayout,
    fidelity: Fidelity,
}

impl MongoDatabase {
    /// Connects to `url` (`mongodb://HOST:PORT`), creates a fresh database
    /// `edgebench_<random>` with the collections' indexes. Fails within about 5 s (unless the
    /// URL sets `serverSelectionTimeoutMS`) when no server answers.
    pub fn create(url: &str, layout: MongoLayout, fidelity: Fidelity) -> StoreResult<Self> {
        let server = redact_password(url);
        let mut options = ClientOptions::parse(url).run().map_err(|e| {
            backend_error(format!(
                "invalid MongoDB URL {server}: {} (expected mongodb://HOST:PORT)",
                one_line(&e.to_string(), " ")
            ))
        })?;
        if options.server_selection_timeout.is_none() {
            options.server_selection_timeout = Some(SERVER_SELECTION_TIMEOUT);
        }
        if options.connect_timeout.is_none() {
            options.connect_timeout = Some(SERVER_SELECTION_TIMEOUT);
        }
        Self::connect(options, server, layout, fidelity)
    }

    /// [`MongoDatabase::create`] with options built by the caller (TLS, credentials, a
    /// command monitor, ...), used as given.
    pub fn create_with_options(
        options: ClientOptions,
        layout: MongoLayout,
        fidelity: Fidelity,
    ) -> StoreResult<Self> {
        let hosts: Vec<String> = options.hosts.iter().map(|h| h.to_string()).collect();
        Self::connect(
            options,
            format!("mongodb://{}", hosts.join(",")),
            layout,
            fidelity,
        )
    }

    fn connect(
        options: ClientOptions,
        server: String,
        layout: MongoLayout,
        fidelity: Fidelity,
    ) -> StoreResult<Self> {
        let client = Client::with_options(options).map_err(|e| {
            backend_error(format!(
                "cannot set up a MongoDB client for {server}: {}",
                one_line(&e.to_string(), " ")
            ))
        })?;
        // The client connects lazily: ping first, so an unreachable server is reported as
        // such and not as a failed index creation.
        client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .run()
            .map_err(|e| {
                backend_error(format!(
                    "cannot reach MongoDB at {server}: {} (start mongod there, or point the \
                     mongo target at a running server: mongo=mongodb://HOST:PORT)",
                    one_line(&e.to_string(), " ")
                ))
            })?;
        let db = client.database(&private_name());
        // From here on, an error drops `database`, which drops whatever was created.
        let database = MongoDatabase {
            client,
            db,
            server,
            layout,
            fidelity,
        };
        database.create_indexes()?;
        Ok(database)
    }

    fn create_indexes(&self) -> StoreResult<()> {
        let index = |keys: Document| IndexModel::builder().keys(keys).build();
        // `_id` is indexed by MongoDB itself: by-id calls, "all" lists, `$in` loads and
        // deletes by id. The rest serve one query family each (see docs/stores/mongo.md).
        let events = [
            index(doc! { "device": 1, "created": 1, "_id": 1 }),
            index(doc! { "created": 1, "_id": 1 }),
            index(doc! { "pushed": 1, "_id": 1 }),
        ];
        let readings = [
            index(doc! { "device": 1, "created": 1, "_id": 1 }),
            index(doc! { "name": 1, "created": 1, "_id": 1 }),
            index(doc! { "device": 1, "name": 1, "created": 1, "_id": 1 }),
            index(doc! { "created": 1, "_id": 1 }),
        ];
        for (collection, indexes) in [(EVENTS, &events[..]), (READINGS, &readings[..])] {
            self.db
                .collection::<Document>(collection)
                .create_indexes(indexes.to_vec())
                .run()
                .map_err(|e| {
                    backend_error(format!(
                        "cannot create the indexes of {}.{collection} at {}: {}",
                        self.db.name(),
                        self.server,
                        one_line(&e.to_string(), " ")
                    ))
                })?;
        }
        Ok(())
    }

    /// A store on this database: one per worker. Stores share the client's connection pool.
    pub fn open_store(&self) -> StoreResult<MongoStore> {
        Ok(MongoStore {
            events: self.db.collection(EVENTS),
            readings: self.db.collection(READINGS),
            layout: self.layout,
            fidelity: self.fidelity,
        })
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        self.db.name()
    }

    /// One line for reports: server, database, layout, fidelity.
    pub fn describe(&self) -> String {
        let fidelity = match (self.layout, self.fidelity) {
            (MongoLayout::Embedded, Fidelity::Y2018) => {
                "2018 (no effect: embedded readings need no per-reading query)".to_string()
            }
            (_, fidelity) => fidelity.to_string(),
        };
        format!(
            "MongoDB {}, database {}, layout {}, fidelity {fidelity}",
            self.server,
            self.db.name(),
            self.layout
        )
    }

    /// The client, e.g. to inspect the database in a test.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

impl Drop for MongoDatabase {
    fn drop(&mut self) {
        // Best effort: a server that is gone took the database with it, or its owner drops it.
        let _ = self.db.drop().run();
    }
}

/// The [`CoreData`] store over one MongoDB database (one per worker; see [`MongoDatabase`]).
pub struct MongoStore {
    events: Collection<RawDocumentBuf>,
    readings: Collection<RawDocumentBuf>,
    layout: MongoLayout,
    fidelity: Fidelity,
}

// ---- documents ----

/// A reading document as written: the 2018 field names, `_id` an ObjectId, and (in
/// `reading` only) the event it was added with.
#[derive(Serialize)]
struct ReadingOut<'a> {
    #[serde(rename = "_id")]
    id: Oid,
    pushed: i64,
    created: i64,
    origin: i64,
    modified: i64,
    device: &'a str,
    name: &'a str,
    value: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    event_id: Option<Oid>,
}

impl<'a> ReadingOut<'a> {
    fn of(r: &'a Reading, id: Oid, event_id: Option<Oid>) -> Self {
        ReadingOut {
            id,
            pushed: r.pushed,
            created: r.created,
            origin: r.origin,
            modified: r.modified,
            device: &r.device,
            name: &r.name,
            value: &r.value,
            event_id,
        }
    }
}

/// A reading document as read.
#[derive(Deserialize)]
struct ReadingIn {
    #[serde(rename = "_id")]
    id: Oid,
    pushed: i64,
    created: i64,
    origin: i64,
    modified: i64,
    device: String,
    name: String,
    value: String,
    #[serde(default)]
    event_id: Option<Oid>,
}

impl ReadingIn {
    fn into_reading(self) -> Reading {
        Reading {
            id: self.id.to_hex(),
            pushed: self.pushed,
            created: self.created,
            origin: self.origin,
            modified: self.modified,
            device: self.device,
            name: self.name,
            value: self.value,
        }
    }
}

/// An event document as written; `R` is a [`ReadingOut`] (embedded) or an [`Oid`]
/// (referenced).
#[derive(Serialize)]
struct EventOut<'a, R> {
    #[serde(rename = "_id")]
    id: Oid,
    pushed: i64,
    device: &'a str,
    created: i64,
    modified: i64,
    origin: i64,
    event: &'a str,
    readings: Vec<R>,
}

impl<'a, R> EventOut<'a, R> {
    fn of(e: &'a Event, id: Oid, readings: Vec<R>) -> Self {
        EventOut {
            id,
            pushed: e.pushed,
            device: &e.device,
            created: e.created,
            modified: e.modified,
            origin: e.origin,
            event: &e.event,
            readings,
        }
    }
}

/// An event document as read; `R` as in [`EventOut`], or [`IgnoredAny`] when the readings
/// are projected away.
#[derive(Deserialize)]
struct EventIn<R> {
    #[serde(rename = "_id")]
    id: Oid,
    pushed: i64,
    device: String,
    created: i64,
    modified: i64,
    origin: i64,
    event: String,
    #[serde(default = "Vec::new")]
    readings: Vec<R>,
}

impl<R> EventIn<R> {
    /// The event without readings, and what the document held for them.
    fn split(self) -> (Event, Vec<R>) {
        let e = Event {
            id: self.id.to_hex(),
            pushed: self.pushed,
            device: self.device,
            created: self.created,
            modified: self.modified,
            origin: self.origin,
            event: self.event,
            readings: Vec::new(),
        };
        (e, self.readings)
    }
}

/// `{_id}` of an embedded reading, when only the ids are projected.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(rename = "_id")]
    id: Oid,
}

/// A reading's link to its event, when only that is projected.
#[derive(Deserialize)]
struct EventLink {
    #[serde(default)]
    event_id: Option<Oid>,
}

fn encode<T: Serialize>(kind: &'static str, id: &Oid, value: &T) -> StoreResult<RawDocumentBuf> {
    bson::to_raw_document_buf(value).map_err(|e| {
        backend_error(format!(
            "cannot encode {kind} {} as BSON: {}",
            id.to_hex(),
            one_line(&e.to_string(), " ")
        ))
    })
}

fn decode<T: DeserializeOwned>(kind: &'static str, raw: &RawDocumentBuf) -> StoreResult<T> {
    bson::from_slice(raw.as_bytes()).map_err(|e| StoreError::Decode {
        kind,
        id: raw
            .get_object_id("_id")
            .map_or_else(|_| "(no ObjectId _id)".to_string(), |id| id.to_hex()),
        reason: one_line(&e.to_string(), " "),
    })
}

// ---- ids, limits, errors ----

/// The ObjectId of `id`: checked and case-folded by [`key_id`]. Its `to_hex` is the
/// lowercase form every error and record carries.
fn object_id(id: &str) -> StoreResult<Oid> {
    let id = key_id(id)?;
    ObjectId::parse(&id)
        .map(|o| Oid::from_bytes(o.bytes()))
        .ok_or_else(|| StoreError::InvalidId(id.into_owned()))
}

fn not_found(kind: &'static str, id: &Oid) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_hex(),
    }
}

/// The `limit` to send for a positive `limit`: `None` (no limit) for [`UNLIMITED`] and
/// anything `i64` cannot hold. Callers answer a `limit` of 0 themselves, since MongoDB reads
/// `limit(0)` as "no limit" (and a negative one as "one batch").
fn mongo_limit(limit: usize) -> Option<i64> {
    if limit == UNLIMITED {
        return None;
    }
    i64::try_from(limit).ok()
}

fn backend(e: mongodb::error::Error) -> StoreError {
    backend_error(one_line(&e.to_string(), " "))
}

fn backend_error(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}

// ---- queries ----

impl MongoStore {
    /// The documents of `coll` matching `filter`, by `sort`, at most `limit` (> 0).
    fn find(
        coll: &Collection<RawDocumentBuf>,
        filter: Document,
        sort: Document,
        limit: usize,
    ) -> StoreResult<mongodb::sync::Cursor<RawDocumentBuf>> {
        let find = coll.find(filter).sort(sort);
        match mongo_limit(limit) {
            Some(n) => find.limit(n).run(),
            None => find.run(),
        }
        .map_err(backend)
    }

    /// Readings matching `filter`, by `created` then id, at most `limit`.
    fn readings_where(&mut self, filter: Document, limit: usize) -> StoreResult<Vec<Reading>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let sort = doc! { "created": 1, "_id": 1 };
        Self::find(&self.readings, filter, sort, limit)?
            .map(|raw| decode_reading(&raw.map_err(backend)?))
            .collect()
    }

    /// Events matching `filter`, by `sort`, at most `limit`, each with its readings.
    fn events_where(
        &mut self,
        filter: Document,
        sort: Document,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let cursor = Self::find(&self.events, filter, sort, limit)?;
        match self.layout {
            MongoLayout::Embedded => cursor
                .map(|raw| decode_embedded_event(&raw.map_err(backend)?))
                .collect(),
            MongoLayout::Referenced => {
                let heads = cursor
                    .map(|raw| {
                        let raw = raw.map_err(backend)?;
                        Ok(decode::<EventIn<Oid>>(EVENTS, &raw)?.split())
                    })
                    .collect::<StoreResult<Vec<_>>>()?;
                self.with_referenced_readings(heads)
            }
        }
    }

    /// Events of the referenced layout with their readings loaded, in the order of their ids.
    fn with_referenced_readings(
        &mut self,
        heads: Vec<(Event, Vec<Oid>)>,
    ) -> StoreResult<Vec<Event>> {
        match self.fidelity {
            Fidelity::Modern => {
                let ids: Vec<Oid> = heads
                    .iter()
                    .flat_map(|(_, ids)| ids.iter().copied())
                    .collect();
                let mut by_id = self.readings_by_ids(&ids)?;
                Ok(heads
                    .into_iter()
                    .map(|(mut e, ids)| {
                        // An id whose reading is gone (deleted between our two queries) is
                        // skipped, as a deleted reading leaves its event.
                        e.readings = ids.iter().filter_map(|id| by_id.remove(id)).collect();
                        e
                    })
                    .collect())
            }
            Fidelity::Y2018 => heads
                .into_iter()
                .map(|(mut e, ids)| {
                    for id in ids {
                        // The 2018 `FindId(id).One()`: one round trip per reading.
                        if let Some(raw) = self
                            .readings
                            .find_one(doc! { "_id": id })
                            .run()
                            .map_err(backend)?
                        {
                            e.readings.push(decode_reading(&raw)?);
                        }
                    }
                    Ok(e)
                })
                .collect(),
        }
    }

    /// The readings of `ids`, by id: one `$in` query per [`IN_CHUNK`] ids.
    fn readings_by_ids(&mut self, ids: &[Oid]) -> StoreResult<HashMap<Oid, Reading>> {
        let mut by_id = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(IN_CHUNK) {
            let cursor = self
                .readings
                .find(doc! { "_id": { "$in": chunk } })
                .run()
                .map_err(backend)?;
            for raw in cursor {
                let r = decode::<ReadingIn>(READINGS, &raw.map_err(backend)?)?;
                by_id.insert(r.id, r.into_reading());
            }
        }
        Ok(by_id)
    }

    /// Deletes the readings of `ids` from `reading`.
    fn delete_readings(&mut self, ids: &[Oid]) -> StoreResult<()> {
        for chunk in ids.chunks(IN_CHUNK) {
            self.readings
                .delete_many(doc! { "_id": { "$in": chunk } })
                .run()
                .map_err(backend)?;
        }
        Ok(())
    }
}

fn decode_reading(raw: &RawDocumentBuf) -> StoreResult<Reading> {
    Ok(decode::<ReadingIn>(READINGS, raw)?.into_reading())
}

fn decode_embedded_event(raw: &RawDocumentBuf) -> StoreResult<Event> {
    let (mut e, readings) = decode::<EventIn<ReadingIn>>(EVENTS, raw)?.split();
    e.readings = readings.into_iter().map(ReadingIn::into_reading).collect();
    Ok(e)
}

impl CoreData for MongoStore {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        let id = object_id(&e.id)?;
        let reading_ids = e
            .readings
            .iter()
            .map(|r| object_id(&r.id))
            .collect::<StoreResult<Vec<_>>>()?;
        // Readings first, in one ordered insert_many, then the event: a reader that finds the
        // event finds its readings (2018 did the same two writes in the same order).
        if !e.readings.is_empty() {
            let docs = e
                .readings
                .iter()
                .zip(&reading_ids)
                .map(|(r, rid)| encode(READINGS, rid, &ReadingOut::of(r, *rid, Some(id))))
                .collect::<StoreResult<Vec<_>>>()?;
            self.readings
                .insert_many(docs)
                .ordered(true)
                .run()
                .map_err(backend)?;
        }
        let doc = match self.layout {
            MongoLayout::Embedded => {
                let embedded = e
                    .readings
                    .iter()
                    .zip(&reading_ids)
                    .map(|(r, rid)| ReadingOut::of(r, *rid, None))
                    .collect();
                encode(EVENTS, &id, &EventOut::of(e, id, embedded))?
            }
            MongoLayout::Referenced => encode(EVENTS, &id, &EventOut::of(e, id, reading_ids))?,
        };
        self.events.insert_one(doc).run().map_err(backend)?;
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = object_id(&e.id)?;
        let raw = self
            .events
            .find_one(doc! { "_id": id })
            .projection(doc! { "readings": 0 })
            .run()
            .map_err(backend)?
            .ok_or_else(|| not_found(EVENTS, &id))?;
        let (mut stored, _) = decode::<EventIn<IgnoredAny>>(EVENTS, &raw)?.split();
        merge_event(&mut stored, e);
        // `$set` of the event's own fields: the readings (embedded or ids) stay as they are.
        let result = self
            .events
            .update_one(
                doc! { "_id": id },
                doc! { "$set": {
                    "pushed": stored.pushed,
                    "device": &stored.device,
                    "origin": stored.origin,
                    "event": &stored.event,
                    "modified": stored.modified,
                } },
            )
            .run()
            .map_err(backend)?;
        if result.matched_count == 0 {
            return Err(not_found(EVENTS, &id));
        }
        Ok(())
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = object_id(id)?;
        let mut events = self.events_where(doc! { "_id": id }, doc! { "_id": 1 }, 1)?;
        events.pop().ok_or_else(|| not_found(EVENTS, &id))
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        // The `count` command without a filter (2018's `Find(nil).Count()`): collection
        // metadata, not a scan.
        let n = self
            .events
            .estimated_document_count()
            .run()
            .map_err(backend)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        let n = self
            .events
            .count_documents(doc! { "device": device })
            .run()
            .map_err(backend)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = object_id(id)?;
        let projection = match self.layout {
            MongoLayout::Embedded => doc! { "readings._id": 1 },
            MongoLayout::Referenced => doc! { "readings": 1 },
        };
        let raw = self
            .events
            .find_one_and_delete(doc! { "_id": id })
            .projection(projection)
            .run()
            .map_err(backend)?
            .ok_or_else(|| not_found(EVENTS, &id))?;
        // The event first, then its readings: no reader sees the event without them.
        #[derive(Deserialize)]
        struct Links<R> {
            #[serde(default = "Vec::new")]
            readings: Vec<R>,
        }
        let reading_ids: Vec<Oid> = match self.layout {
            MongoLayout::Embedded => decode::<Links<IdOnly>>(EVENTS, &raw)?
                .readings
                .into_iter()
                .map(|r| r.id)
                .collect(),
            MongoLayout::Referenced => decode::<Links<Oid>>(EVENTS, &raw)?.readings,
        };
        self.delete_readings(&reading_ids)
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        self.events_where(doc! {}, doc! { "_id": 1 }, UNLIMITED)
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        self.events_where(
            doc! { "device": device },
            doc! { "created": 1, "_id": 1 },
            limit,
        )
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        self.events_where(
            doc! { "created": { "$gte": start_ms, "$lte": end_ms } },
            doc! { "created": 1, "_id": 1 },
            limit,
        )
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        let cutoff = now_ms().saturating_sub(age_ms);
        self.events_where(
            doc! { "created": { "$lt": cutoff } },
            doc! { "created": 1, "_id": 1 },
            UNLIMITED,
        )
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        // pushed is never negative, so `$gt: 0` is exactly pushed != 0.
        self.events_where(
            doc! { "pushed": { "$gt": 0_i64 } },
            doc! { "pushed": 1, "_id": 1 },
            UNLIMITED,
        )
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        // Events first, as in a single delete: no reader sees an event without its readings.
        // delete_many, not drop: the collections keep their indexes.
        for coll in [&self.events, &self.readings] {
            coll.delete_many(doc! {}).run().map_err(backend)?;
        }
        Ok(())
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let id = object_id(&r.id)?;
        let doc = encode(READINGS, &id, &ReadingOut::of(r, id, None))?;
        self.readings.insert_one(doc).run().map_err(backend)?;
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = object_id(&r.id)?;
        let raw = self
            .readings
            .find_one(doc! { "_id": id })
            .run()
            .map_err(backend)?
            .ok_or_else(|| not_found(READINGS, &id))?;
        let stored = decode::<ReadingIn>(READINGS, &raw)?;
        let event_id = stored.event_id;
        let mut stored = stored.into_reading();
        merge_reading(&mut stored, r);
        let doc = encode(READINGS, &id, &ReadingOut::of(&stored, id, event_id))?;
        let result = self
            .readings
            .replace_one(doc! { "_id": id }, doc)
            .run()
            .map_err(backend)?;
        if result.matched_count == 0 {
            return Err(not_found(READINGS, &id));
        }
        // The embedded copy follows; the positional `$` is the element whose `_id` matched.
        if let (MongoLayout::Embedded, Some(event_id)) = (self.layout, event_id) {
            let copy = bson::to_bson(&ReadingOut::of(&stored, id, None)).map_err(|e| {
                backend_error(format!(
                    "cannot encode reading {} as BSON: {}",
                    id.to_hex(),
                    one_line(&e.to_string(), " ")
                ))
            })?;
            self.events
                .update_one(
                    doc! { "_id": event_id, "readings._id": id },
                    doc! { "$set": { "readings.$": copy } },
                )
                .run()
                .map_err(backend)?;
        }
        Ok(())
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        Self::find(&self.readings, doc! {}, doc! { "_id": 1 }, UNLIMITED)?
            .map(|raw| decode_reading(&raw.map_err(backend)?))
            .collect()
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        let id = object_id(id)?;
        let raw = self
            .readings
            .find_one(doc! { "_id": id })
            .run()
            .map_err(backend)?
            .ok_or_else(|| not_found(READINGS, &id))?;
        decode_reading(&raw)
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        let n = self
            .readings
            .estimated_document_count()
            .run()
            .map_err(backend)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = object_id(id)?;
        let raw = self
            .readings
            .find_one_and_delete(doc! { "_id": id })
            .projection(doc! { "event_id": 1 })
            .run()
            .map_err(backend)?
            .ok_or_else(|| not_found(READINGS, &id))?;
        // Then out of its event; the `event_id` link saves a search of every event.
        if let Some(event_id) = decode::<EventLink>(READINGS, &raw)?.event_id {
            let pull = match self.layout {
                MongoLayout::Embedded => doc! { "$pull": { "readings": { "_id": id } } },
                MongoLayout::Referenced => doc! { "$pull": { "readings": id } },
            };
            self.events
                .update_one(doc! { "_id": event_id }, pull)
                .run()
                .map_err(backend)?;
        }
        Ok(())
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.readings_where(doc! { "device": device }, limit)
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.readings_where(doc! { "name": name }, limit)
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.readings_where(
            doc! { "created": { "$gte": start_ms, "$lte": end_ms } },
            limit,
        )
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.readings_where(doc! { "device": device, "name": name }, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_map_to_mongo_limits() {
        assert_eq!(mongo_limit(1), Some(1));
        assert_eq!(mongo_limit(500), Some(500));
        assert_eq!(mongo_limit(UNLIMITED), None);
        assert_eq!(mongo_limit(usize::MAX - 1), None, "beyond i64: no limit");
    }

    #[test]
    fn ids_are_checked_and_case_folded() {
        let id = object_id("5B4F0000000000000000000A").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(id.to_hex(), "5b4f0000000000000000000a");
        assert!(matches!(object_id("5b4f"), Err(StoreError::InvalidId(i)) if i == "5b4f"));
        // ObjectId byte order is hex order: sorting by `_id` is sorting by hex id.
        let a = ObjectId::new();
        let b = ObjectId::new();
        let (oa, ob) = (Oid::from_bytes(a.bytes()), Oid::from_bytes(b.bytes()));
        assert_eq!(oa.cmp(&ob), a.to_hex_string().cmp(&b.to_hex_string()));
        assert_eq!(oa.to_hex(), a.to_hex_string());
    }

    /// Needs no server: nothing listens on port 1.
    #[test]
    fn an_unreachable_server_fails_fast_with_the_url_and_the_fix() {
        let url = "mongodb://u:s3cr3t@127.0.0.1:1/?serverSelectionTimeoutMS=300";
        let started = std::time::Instant::now();
        let message = match MongoDatabase::create(url, MongoLayout::Embedded, Fidelity::Modern) {
            Err(StoreError::Backend { backend, message }) => {
                assert_eq!(backend, "mongodb");
                message
            }
            Err(e) => panic!("expected a backend error, got {e}"),
            Ok(db) => panic!("connected to {}", db.describe()),
        };
        assert!(started.elapsed() < Duration::from_secs(5), "{message}");
        assert!(!message.contains('\n'), "{message}");
        assert!(!message.contains("s3cr3t"), "{message}");
        assert!(
            message.starts_with(
                "cannot reach MongoDB at mongodb://u:***@127.0.0.1:1/?serverSelectionTimeoutMS=300: "
            ),
            "{message}"
        );
        assert!(message.ends_with("mongo=mongodb://HOST:PORT)"), "{message}");

        match MongoDatabase::create("http://x", MongoLayout::Embedded, Fidelity::Modern) {
            Err(StoreError::Backend { message, .. }) => assert!(
                message.starts_with("invalid MongoDB URL http://x: ")
                    && message.ends_with("(expected mongodb://HOST:PORT)"),
                "{message}"
            ),
            Err(e) => panic!("expected a backend error, got {e}"),
            Ok(db) => panic!("connected to {}", db.describe()),
        }
    }

    #[test]
    fn layouts_parse_their_names() {
        for layout in [MongoLayout::Embedded, MongoLayout::Referenced] {
            assert_eq!(layout.name().parse::<MongoLayout>(), Ok(layout));
        }
        let e = "nested".parse::<MongoLayout>().err().unwrap_or_default();
        assert!(
            e.contains("\"nested\"") && e.contains("embedded or referenced"),
            "{e}"
        );
    }

    /// What add writes is what a read gives back, every field, for both layouts.
    #[test]
    fn documents_round_trip_through_bson() {
        let r = Reading {
            id: ObjectId::new().to_hex_string(),
            pushed: 1,
            created: 2,
            origin: 3,
            modified: 4,
            device: "d ü".into(),
            name: "n".into(),
            value: "v \"q\"".into(),
        };
        let rid = object_id(&r.id).unwrap_or_else(|e| panic!("{e}"));
        let e = Event {
            id: ObjectId::new().to_hex_string(),
            pushed: 5,
            device: "d".into(),
            created: 6,
            modified: 7,
            origin: 8,
            event: "s".into(),
            readings: vec![r.clone()],
        };
        let eid = object_id(&e.id).unwrap_or_else(|e| panic!("{e}"));

        let raw = encode(READINGS, &rid, &ReadingOut::of(&r, rid, Some(eid)))
            .unwrap_or_else(|e| panic!("{e}"));
        let back: ReadingIn = decode(READINGS, &raw).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.event_id, Some(eid));
        assert_eq!(back.into_reading(), r);
        let raw = encode(READINGS, &rid, &ReadingOut::of(&r, rid, None))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(raw.get("event_id").ok().flatten().is_none());

        let embedded = vec![ReadingOut::of(&r, rid, None)];
        let raw = encode(EVENTS, &eid, &EventOut::of(&e, eid, embedded))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            decode_embedded_event(&raw).unwrap_or_else(|e| panic!("{e}")),
            e
        );

        let raw = encode(EVENTS, &eid, &EventOut::of(&e, eid, vec![rid]))
            .unwrap_or_else(|e| panic!("{e}"));
        let (head, ids) = decode::<EventIn<Oid>>(EVENTS, &raw)
            .unwrap_or_else(|e| panic!("{e}"))
            .split();
        assert_eq!(ids, vec![rid]);
        assert_eq!(
            head,
            Event {
                readings: Vec::new(),
                ..e
            }
        );
    }

    #[test]
    fn undecodable_documents_name_their_id() {
        let id = Oid::from_bytes([1; 12]);
        let raw = encode(READINGS, &id, &doc! { "_id": id, "pushed": "not a number" })
            .unwrap_or_else(|e| panic!("{e}"));
        match decode::<ReadingIn>(READINGS, &raw) {
            Err(StoreError::Decode { kind, id: got, .. }) => {
                assert_eq!((kind, got.as_str()), (READINGS, "010101010101010101010101"));
            }
            Err(e) => panic!("expected Decode, got {e}"),
            Ok(_) => panic!("expected Decode, got a reading"),
        }
    }
}
