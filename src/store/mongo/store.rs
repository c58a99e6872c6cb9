//! Queries: the [`CoreData`] implementation of [`MongoStore`]. Every reading query reads the
//! `reading` collection only, through an index; an event list is one query in the embedded
//! layout, and one `$in` query ([`Fidelity::Modern`]) or one query per reading
//! ([`Fidelity::Y2018`]) more in the referenced one. A write of several documents is a
//! sequence of single-collection writes ordered so that a reader never sees an event whose
//! readings are not written yet.

use std::collections::HashMap;

use mongodb::bson::oid::ObjectId as Oid;
use mongodb::bson::{self, doc, Document, RawDocumentBuf};
use mongodb::sync::Collection;
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::base::{
    backend, backend_error, documents_bytes, mongo_limit, not_found, object_id, Fidelity,
    MongoLayout, MongoStore, EVENTS, IN_CHUNK, READINGS,
};
use super::documents::{
    decode, encode, EventIn, EventLink, EventOut, IdOnly, ReadingIn, ReadingOut,
};
use crate::store::rules::{merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::shared::one_line;
use crate::store::{CoreData, StoreResult, UNLIMITED};
use crate::v2018::{now_ms, Event, Reading};

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

pub(super) fn decode_reading(raw: &RawDocumentBuf) -> StoreResult<Reading> {
    Ok(decode::<ReadingIn>(READINGS, raw)?.into_reading())
}

pub(super) fn decode_embedded_event(raw: &RawDocumentBuf) -> StoreResult<Event> {
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

    /// The events' and readings' documents ([`documents_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        documents_bytes(&[&self.events, &self.readings])
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
