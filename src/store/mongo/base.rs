//! What the files of the MongoDB store share: the collections, the layouts and fidelities a
//! target picks, the store's fields, and ids, limits and error texts.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use mongodb::bson::oid::ObjectId as Oid;
use mongodb::bson::{doc, Bson, RawDocumentBuf};
use mongodb::sync::Collection;

use crate::store::rules::key_id;
use crate::store::shared::one_line;
use crate::store::{StoreError, StoreResult, UNLIMITED};
use crate::v2018::ObjectId;

pub(super) const BACKEND: &str = "mongodb";
pub(super) const EVENTS: &str = "event";
pub(super) const READINGS: &str = "reading";

/// How long the driver looks for a usable server before an operation fails (unless the URL
/// sets `serverSelectionTimeoutMS`). The driver's default is 30 s; a benchmark pointed at the
/// wrong URL should say so quickly, and a live server answers in milliseconds.
pub(super) const SERVER_SELECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// Ids per `$in` query. One query per event list is the aim; chunking only keeps the command
/// well under MongoDB's 16 MiB document limit (an ObjectId array element is ~20 bytes, a UUID
/// string one ~50) for lists of more than this many readings.
pub(crate) const IN_CHUNK: usize = 50_000;

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
    pub(super) events: Collection<RawDocumentBuf>,
    pub(super) readings: Collection<RawDocumentBuf>,
    pub(super) layout: MongoLayout,
    pub(super) fidelity: Fidelity,
}

// ---- ids, limits, errors ----

/// The ObjectId of `id`: checked and case-folded by [`key_id`]. Its `to_hex` is the
/// lowercase form every error and record carries.
pub(super) fn object_id(id: &str) -> StoreResult<Oid> {
    let id = key_id(id)?;
    ObjectId::parse(&id)
        .map(|o| Oid::from_bytes(o.bytes()))
        .ok_or_else(|| StoreError::InvalidId(id.into_owned()))
}

pub(super) fn not_found(kind: &'static str, id: &Oid) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_hex(),
    }
}

/// The `limit` to send for a positive `limit`: `None` (no limit) for [`UNLIMITED`] and
/// anything `i64` cannot hold. Callers answer a `limit` of 0 themselves, since MongoDB reads
/// `limit(0)` as "no limit" (and a negative one as "one batch").
pub(crate) fn mongo_limit(limit: usize) -> Option<i64> {
    if limit == UNLIMITED {
        return None;
    }
    i64::try_from(limit).ok()
}

/// The documents' bytes in `collections`, as MongoDB counts them: the sum of each
/// collection's `$collStats` `storageStats.size` (uncompressed BSON, kept current on every
/// write). Indexes and the compressed files are not counted: WiredTiger updates their sizes
/// only at its checkpoints (every 60 s), so they would show a benchmark round's growth late
/// or not at all. `None` when a collection reports no size. Every MongoDB store (this one,
/// the EdgeX 4.0 documents') reports its size with it.
pub(crate) fn documents_bytes(
    collections: &[&Collection<RawDocumentBuf>],
) -> StoreResult<Option<u64>> {
    let mut total: u64 = 0;
    for collection in collections {
        let stats = collection
            .aggregate([doc! { "$collStats": { "storageStats": {} } }])
            .run()
            .map_err(backend)?
            .next()
            .transpose()
            .map_err(backend)?;
        let size = stats
            .as_ref()
            .and_then(|s| match s.get_document("storageStats") {
                Ok(storage) => match storage.get("size") {
                    Some(Bson::Int32(n)) => u64::try_from(*n).ok(),
                    Some(Bson::Int64(n)) => u64::try_from(*n).ok(),
                    Some(Bson::Double(n)) if *n >= 0.0 => Some(*n as u64),
                    _ => None,
                },
                Err(_) => None,
            });
        let Some(size) = size else {
            return Ok(None);
        };
        total = total.saturating_add(size);
    }
    Ok(Some(total))
}

pub(crate) fn backend(e: mongodb::error::Error) -> StoreError {
    backend_error(one_line(&e.to_string(), " "))
}

pub(crate) fn backend_error(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}
