//! Documents: events and readings as written (`...Out`, borrowing the record) and as read
//! (`...In`), with the 2018 field names and `_id` an ObjectId, plus the projections the
//! queries read ([`IdOnly`], [`EventLink`]) and BSON encoding and decoding (which the EdgeX
//! 4.0 document layout uses too).

use mongodb::bson::oid::ObjectId as Oid;
use std::fmt;

use mongodb::bson::{self, RawBsonRef, RawDocumentBuf};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::base::backend_error;
use crate::store::shared::one_line;
use crate::store::{StoreError, StoreResult};
use crate::v2018::{Event, Reading};

/// A reading document as written: the 2018 field names, `_id` an ObjectId, and (in
/// `reading` only) the event it was added with.
#[derive(Serialize)]
pub(super) struct ReadingOut<'a> {
    #[serde(rename = "_id")]
    pub(super) id: Oid,
    pub(super) pushed: i64,
    pub(super) created: i64,
    pub(super) origin: i64,
    pub(super) modified: i64,
    pub(super) device: &'a str,
    pub(super) name: &'a str,
    pub(super) value: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) event_id: Option<Oid>,
}

impl<'a> ReadingOut<'a> {
    pub(super) fn of(r: &'a Reading, id: Oid, event_id: Option<Oid>) -> Self {
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
pub(super) struct ReadingIn {
    #[serde(rename = "_id")]
    pub(super) id: Oid,
    pub(super) pushed: i64,
    pub(super) created: i64,
    pub(super) origin: i64,
    pub(super) modified: i64,
    pub(super) device: String,
    pub(super) name: String,
    pub(super) value: String,
    #[serde(default)]
    pub(super) event_id: Option<Oid>,
}

impl ReadingIn {
    pub(super) fn into_reading(self) -> Reading {
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
pub(super) struct EventOut<'a, R> {
    #[serde(rename = "_id")]
    pub(super) id: Oid,
    pub(super) pushed: i64,
    pub(super) device: &'a str,
    pub(super) created: i64,
    pub(super) modified: i64,
    pub(super) origin: i64,
    pub(super) event: &'a str,
    pub(super) readings: Vec<R>,
}

impl<'a, R> EventOut<'a, R> {
    pub(super) fn of(e: &'a Event, id: Oid, readings: Vec<R>) -> Self {
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

/// An event document as read; `R` as in [`EventOut`], or
/// [`IgnoredAny`](serde::de::IgnoredAny) when the readings are projected away.
#[derive(Deserialize)]
pub(super) struct EventIn<R> {
    #[serde(rename = "_id")]
    pub(super) id: Oid,
    pub(super) pushed: i64,
    pub(super) device: String,
    pub(super) created: i64,
    pub(super) modified: i64,
    pub(super) origin: i64,
    pub(super) event: String,
    #[serde(default = "Vec::new")]
    pub(super) readings: Vec<R>,
}

impl<R> EventIn<R> {
    /// The event without readings, and what the document held for them.
    pub(super) fn split(self) -> (Event, Vec<R>) {
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
pub(super) struct IdOnly {
    #[serde(rename = "_id")]
    pub(super) id: Oid,
}

/// A reading's link to its event, when only that is projected.
#[derive(Deserialize)]
pub(super) struct EventLink {
    #[serde(default)]
    pub(super) event_id: Option<Oid>,
}

/// `value` as a BSON document; an error names the record (`id` is an ObjectId, or the
/// EdgeX layout's UUID).
pub(crate) fn encode<T: Serialize>(
    kind: &'static str,
    id: &dyn fmt::Display,
    value: &T,
) -> StoreResult<RawDocumentBuf> {
    bson::to_raw_document_buf(value).map_err(|e| {
        backend_error(format!(
            "cannot encode {kind} {id} as BSON: {}",
            one_line(&e.to_string(), " ")
        ))
    })
}

/// A stored document as `T`; an error names the document by its `_id` (an ObjectId, or a
/// string in the EdgeX layout).
pub(crate) fn decode<T: DeserializeOwned>(
    kind: &'static str,
    raw: &RawDocumentBuf,
) -> StoreResult<T> {
    bson::from_slice(raw.as_bytes()).map_err(|e| StoreError::Decode {
        kind,
        id: match raw.get("_id") {
            Ok(Some(RawBsonRef::ObjectId(id))) => id.to_hex(),
            Ok(Some(RawBsonRef::String(id))) => id.to_string(),
            _ => "(no ObjectId or string _id)".to_string(),
        },
        reason: one_line(&e.to_string(), " "),
    })
}
