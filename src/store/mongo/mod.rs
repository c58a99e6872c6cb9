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
//! part uses; `database` is [`MongoDatabase`] (and the private database it shares with
//! [`crate::store::mongo::edgex4`]), `documents` the BSON documents, `store` the queries, and
//! `tests` the unit tests; `ycsb` is YCSB's `mongodb` binding, a collection of the same
//! private database.

pub mod backend;
mod base;
mod database;
mod documents;
pub mod edgex4;
mod store;
#[cfg(test)]
mod tests;
mod ycsb;

pub use base::{Fidelity, MongoLayout, MongoStore};
pub use database::MongoDatabase;
// What the EdgeX 4.0 document layout (`store::mongo::edgex4`) shares with this store.
pub(crate) use base::{backend, backend_error, documents_bytes, mongo_limit, IN_CHUNK};
pub(crate) use database::PrivateDatabase;
pub(crate) use documents::{decode, encode};
