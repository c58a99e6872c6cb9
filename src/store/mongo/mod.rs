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
//!
//! This file holds the layouts, the store's fields and the ids, limits and errors every
//! part uses; `database` is [`MongoDatabase`], `documents` the BSON documents, `store` the
//! queries, and `tests` the unit tests.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use mongodb::bson::oid::ObjectId as Oid;
use mongodb::bson::RawDocumentBuf;
use mongodb::sync::Collection;

use crate::model::ObjectId;
use crate::store::rules::key_id;
use crate::store::shared::{one_line, private_name, redact_password};
use crate::store::{StoreError, StoreResult, UNLIMITED};

mod database;
mod documents;
mod store;
#[cfg(test)]
mod tests;

pub use database::MongoDatabase;

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

/// The [`CoreData`](crate::store::CoreData) store over one MongoDB database (one per worker;
/// see [`MongoDatabase`]).
pub struct MongoStore {
    events: Collection<RawDocumentBuf>,
    readings: Collection<RawDocumentBuf>,
    layout: MongoLayout,
    fidelity: Fidelity,
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
