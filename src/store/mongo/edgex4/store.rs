//! [`Mongo4Store`]: the [`EventStore`] over one database in the layout (see the module doc
//! for the writes' order and what a concurrent reader sees).

use mongodb::bson::{doc, Document, RawDocumentBuf};
use mongodb::error::{Error, ErrorKind, WriteFailure};
use mongodb::sync::Collection;
use serde::de::DeserializeOwned;

use super::documents::{EventIn, EventOut, IdOnly, ReadingIn, ReadingOut, StoredIds};
use super::{EVENTS, READINGS};
use crate::edgex::{now_ns, Event, Reading};
use crate::store::edgex::{
    stored_event_id, Behaviour, DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter,
};
use crate::store::mongo::{
    backend, backend_error, decode, documents_bytes, encode, mongo_limit, IN_CHUNK,
};
use crate::store::shared::one_line;
use crate::store::{StoreError, StoreResult, UNLIMITED};

/// MongoDB's error code for a duplicate key.
const DUPLICATE_KEY: i32 = 11000;

/// The order of every list: newest first, ties by id. Every list index ends in these keys.
fn newest_first() -> Document {
    doc! { "origin": -1, "_id": -1 }
}

/// The [`EventStore`] over one database in this layout, made by
/// [`Mongo4Database::open_store`](super::Mongo4Database::open_store).
pub struct Mongo4Store {
    events: Collection<RawDocumentBuf>,
    readings: Collection<RawDocumentBuf>,
}

impl std::fmt::Debug for Mongo4Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mongo4Store")
            .field("database", &self.events.namespace().db)
            .finish()
    }
}

/// The query a filter makes: `deviceName`, `resourceName` (readings only) and an inclusive
/// `origin` range (an equality when it is one instant), each when given.
pub(super) fn query(filter: &Filter<'_>, readings: bool) -> Document {
    let mut query = Document::new();
    if let Some(device) = filter.device {
        query.insert("deviceName", device);
    }
    if let (true, Some(resource)) = (readings, filter.resource) {
        query.insert("resourceName", resource);
    }
    match filter.range {
        // The same records as the range. SecantusDB 0.7 (the CI's server) finds nothing for
        // `$gte: x, $lte: x` on a compound index's middle field, and finds equality.
        Some((start, end)) if start == end => {
            query.insert("origin", start);
        }
        Some((start, end)) => {
            query.insert("origin", doc! { "$gte": start, "$lte": end });
        }
        None => {}
    }
    query
}

/// The query of one device's events from one source: the device (its index orders them), the
/// source, and the range as [`query`] writes it.
pub(super) fn source_query(filter: &SourceFilter<'_>) -> Document {
    let device = Filter {
        range: filter.range,
        ..Filter::device(filter.device)
    };
    let mut found = query(&device, false);
    found.insert("sourceName", filter.source);
    found
}

/// The position of the first write a duplicate key refused (0 for a one-document write).
fn duplicate_key(e: &Error) -> Option<usize> {
    match &*e.kind {
        ErrorKind::Write(WriteFailure::WriteError(w)) if w.code == DUPLICATE_KEY => Some(0),
        ErrorKind::InsertMany(many) => many
            .write_errors
            .as_ref()?
            .iter()
            .find(|w| w.code == DUPLICATE_KEY)
            .map(|w| w.index),
        ErrorKind::Command(c) if c.code == DUPLICATE_KEY => Some(0),
        _ => None,
    }
}

/// The first document an ordered `insert_many` refused, and whether for a duplicate key: the
/// documents before it went in, none after. `None` when the error names no document (a lost
/// connection), and so says nothing of what went in.
fn first_refused(e: &Error) -> Option<(usize, bool)> {
    match &*e.kind {
        ErrorKind::InsertMany(many) => many
            .write_errors
            .as_ref()?
            .iter()
            .map(|w| (w.index, w.code == DUPLICATE_KEY))
            .min_by_key(|&(index, _)| index),
        _ => None,
    }
}

/// An event's documents, every one encoded before the first write.
struct Encoded {
    ids: StoredIds,
    event: RawDocumentBuf,
    readings: Vec<RawDocumentBuf>,
}

impl Encoded {
    /// `event`'s document (its readings embedded) and its readings' documents.
    fn of(event: &Event) -> StoreResult<Encoded> {
        let ids = StoredIds::of(event)?;
        let doc = encode(EVENTS, &ids.event, &EventOut::of(event, &ids))?;
        let readings = event
            .readings
            .iter()
            .zip(&ids.readings)
            .map(|(r, id)| encode(READINGS, id, &ReadingOut::of(r, id, Some(&ids.event))))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(Encoded {
            ids,
            event: doc,
            readings,
        })
    }
}

impl Mongo4Store {
    pub(super) fn new(
        events: Collection<RawDocumentBuf>,
        readings: Collection<RawDocumentBuf>,
    ) -> Mongo4Store {
        Mongo4Store { events, readings }
    }

    /// One page of `coll`'s documents matching `query`, newest first, each decoded as `D`
    /// (a `kind`) and made a record by `record`. No query for a limit of 0 (MongoDB reads
    /// `limit(0)` as no limit).
    fn list<D: DeserializeOwned, R>(
        coll: &Collection<RawDocumentBuf>,
        kind: &'static str,
        query: Document,
        page: Page,
        record: fn(D) -> StoreResult<R>,
    ) -> StoreResult<Vec<R>> {
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        let mut find = coll.find(query).sort(newest_first());
        if page.offset > 0 {
            // The server takes a non-negative int64.
            let skip =
                u64::try_from(page.offset).map_or(i64::MAX as u64, |s| s.min(i64::MAX as u64));
            find = find.skip(skip);
        }
        if let Some(limit) = mongo_limit(page.limit) {
            find = find.limit(limit);
        }
        find.run()
            .map_err(backend)?
            .map(|raw| record(decode::<D>(kind, &raw.map_err(backend)?)?))
            .collect()
    }

    /// How many of `coll`'s documents match `query`: the collection's count when every
    /// document does.
    fn count(coll: &Collection<RawDocumentBuf>, query: Document) -> StoreResult<u64> {
        if query.is_empty() {
            coll.estimated_document_count().run()
        } else {
            coll.count_documents(query).run()
        }
        .map_err(backend)
    }

    /// Deletes the readings of the events `ids`, then the events; how many events went.
    fn remove_events(&mut self, ids: &[String]) -> StoreResult<u64> {
        self.readings
            .delete_many(doc! { "event": { "$in": ids } })
            .run()
            .map_err(backend)?;
        let deleted = self
            .events
            .delete_many(doc! { "_id": { "$in": ids } })
            .run()
            .map_err(backend)?;
        Ok(deleted.deleted_count)
    }

    /// The readings' documents (`docs`, whose ids are `readings`) of the events `events`,
    /// whose own documents are written: one ordered `insert_many`. On failure the events are
    /// removed again, so the add fails whole.
    fn add_readings(
        &mut self,
        events: &[String],
        readings: &[String],
        docs: Vec<RawDocumentBuf>,
    ) -> StoreResult<()> {
        let Err(e) = self.readings.insert_many(docs).ordered(true).run() else {
            return Ok(());
        };
        let failed = match duplicate_key(&e).and_then(|i| readings.get(i)) {
            Some(id) => StoreError::Duplicate {
                kind: "reading",
                id: id.clone(),
            },
            None => backend(e),
        };
        self.undo(events, failed)
    }

    /// Removes the events `added` (and their readings) that a failed add wrote, and returns
    /// `failed`, the add's error.
    fn undo(&mut self, added: &[String], failed: StoreError) -> StoreResult<()> {
        let removed = added
            .chunks(IN_CHUNK)
            .try_for_each(|chunk| self.remove_events(chunk).map(drop));
        match removed {
            Ok(()) => Err(failed),
            Err(undo) => Err(backend_error(format!(
                "{failed}; and removing event {} again failed too ({undo}): delete it by id",
                added.join(", ")
            ))),
        }
    }
}

impl EventStore for Mongo4Store {
    /// `insert_one` of the event (its readings embedded), then `insert_many` of the reading
    /// documents; every document is encoded before the first write.
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let Encoded {
            ids,
            event: doc,
            readings,
        } = Encoded::of(event)?;
        if let Err(e) = self.events.insert_one(doc).run() {
            return Err(match duplicate_key(&e) {
                Some(_) => StoreError::Duplicate {
                    kind: "event",
                    id: ids.event,
                },
                None => backend(e),
            });
        }
        if readings.is_empty() {
            return Ok(());
        }
        self.add_readings(std::slice::from_ref(&ids.event), &ids.readings, readings)
    }

    /// One ordered `insert_many` of the events' documents, then one of all their readings'
    /// (two round trips while a batch fits in one `insert` command: 100 000 documents, 48 MB);
    /// every document is encoded before the first write. No transactions (see the module
    /// documentation): a batch is whole or absent as `add_event`'s two writes are, by
    /// removing what went in when a write is refused. An event id that is stored, or that an
    /// earlier event of the batch has, is [`StoreError::Duplicate`]. A write that fails
    /// without naming a document (a lost connection) cannot say which events went in: the
    /// error says so, and leaves them.
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut ids = Vec::with_capacity(events.len());
        let mut docs = Vec::with_capacity(events.len());
        let (mut reading_ids, mut readings) = (Vec::new(), Vec::new());
        for event in events {
            let encoded = Encoded::of(event)?;
            ids.push(encoded.ids.event);
            docs.push(encoded.event);
            reading_ids.extend(encoded.ids.readings);
            readings.extend(encoded.readings);
        }
        if let Err(e) = self.events.insert_many(docs).ordered(true).run() {
            let Some((refused, duplicate)) = first_refused(&e) else {
                return Err(backend_error(format!(
                    "adding {} events: {} (some of them may be stored: delete them by id)",
                    ids.len(),
                    one_line(&e.to_string(), " ")
                )));
            };
            let failed = match duplicate {
                true => StoreError::Duplicate {
                    kind: "event",
                    id: ids[refused].clone(),
                },
                false => backend(e),
            };
            // Ordered: the events before the refused one went in, and only they.
            return self.undo(&ids[..refused], failed);
        }
        if readings.is_empty() {
            return Ok(());
        }
        self.add_readings(&ids, &reading_ids, readings)
    }

    /// A refused write removes what the batch wrote before it.
    fn adds_batches_whole(&self) -> bool {
        true
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = stored_event_id(id)?;
        let raw = self
            .events
            .find_one(doc! { "_id": &id })
            .run()
            .map_err(backend)?
            .ok_or(StoreError::NotFound { kind: "event", id })?;
        decode::<EventIn>(EVENTS, &raw)?.into_event()
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = stored_event_id(id)?;
        match self.remove_events(std::slice::from_ref(&id))? {
            0 => Err(StoreError::NotFound { kind: "event", id }),
            _ => Ok(()),
        }
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        Self::count(&self.events, query(&filter, false))
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let query = query(&filter, false);
        Self::list(&self.events, EVENTS, query, page, EventIn::into_event)
    }

    /// The doomed events' ids, `IN_CHUNK` (50 000) at a time, their readings deleted, then them.
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        let doomed = match doomed {
            Doomed::Device(device) => doc! { "deviceName": device },
            Doomed::OlderThan { age_ns } => {
                doc! { "origin": { "$lt": now_ns().saturating_sub(age_ns) } }
            }
            Doomed::Source {
                device,
                source,
                up_to_ns,
            } => source_query(&SourceFilter::new(device, source).between(i64::MIN, up_to_ns)),
        };
        // IN_CHUNK is 50 000, well within i64.
        let chunk = i64::try_from(IN_CHUNK).unwrap_or(i64::MAX);
        loop {
            let ids = self
                .events
                .find(doomed.clone())
                .projection(doc! { "_id": 1 })
                .limit(chunk)
                .run()
                .map_err(backend)?
                .map(|raw| Ok(decode::<IdOnly>(EVENTS, &raw.map_err(backend)?)?.id))
                .collect::<StoreResult<Vec<String>>>()?;
            if !ids.is_empty() {
                self.remove_events(&ids)?;
            }
            if ids.len() < IN_CHUNK {
                return Ok(());
            }
        }
    }

    /// `count_documents` with a `limit`, over the device's index.
    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        if limit == 0 {
            return Ok(0);
        }
        let mut count = self.events.count_documents(source_query(&filter));
        if limit != UNLIMITED {
            count = count.limit(u64::try_from(limit).unwrap_or(u64::MAX));
        }
        count.run().map_err(backend)
    }

    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let query = source_query(&filter);
        Self::list(&self.events, EVENTS, query, page, EventIn::into_event)
    }

    /// One `aggregate`: a `$group` by device and source over every event (a collection scan:
    /// the layout indexes no source).
    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        let pipeline = [
            doc! { "$match": { "sourceName": { "$ne": "" } } },
            doc! { "$group": { "_id": { "device": "$deviceName", "source": "$sourceName" } } },
        ];
        let mut pairs = Vec::new();
        for group in self.events.aggregate(pipeline).run().map_err(backend)? {
            let group = group.map_err(backend)?;
            let pair = group
                .get_document("_id")
                .and_then(|id| {
                    Ok(DeviceSource::new(
                        id.get_str("device")?,
                        id.get_str("source")?,
                    ))
                })
                .map_err(|e| backend_error(format!("a device/source group: {e}")))?;
            pairs.push(pair);
        }
        pairs.sort();
        pairs.dedup();
        Ok(pairs)
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        Self::count(&self.readings, query(&filter, true))
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        let query = query(&filter, true);
        Self::list(
            &self.readings,
            READINGS,
            query,
            page,
            ReadingIn::into_reading,
        )
    }

    fn scrub(&mut self) -> StoreResult<()> {
        for coll in [&self.readings, &self.events] {
            coll.delete_many(doc! {}).run().map_err(backend)?;
        }
        Ok(())
    }

    /// Event ids checked (by the unique `_id`), reading ids and binary payloads kept.
    fn behaviour(&self) -> Behaviour {
        Behaviour::FULL
    }

    /// The events' and readings' documents ([`documents_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        documents_bytes(&[&self.events, &self.readings])
    }
}
