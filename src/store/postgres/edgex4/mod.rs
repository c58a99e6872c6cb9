//! EdgeX 4.0's PostgreSQL layout: the `core_data` schema (`device_info`, `event`, `reading`)
//! and the statements EdgeX 4.0.2's core-data runs on it, as
//! They are edgexfoundry/edgex-go's at v4.0.2 (`internal/pkg/infrastructure/postgres/`, `internal/pkg/db/postgres/`).
//!
//! What is EdgeX's, unchanged: the tables, columns and indexes (and the missing ones: no key
//! on `event` or `reading`, no index on `event.id`); the SQL text of every statement; the
//! device_info rows (one event-level row per device/profile/source/tags, one reading-level
//! row per device/profile/resource/value type/units/media type/tags) and their cache; AddEvent
//! as one transaction of an `INSERT` and a binary `COPY` of the readings; no duplicate-id check
//! (an id added twice is stored twice); no reading ids; values spread over `value`,
//! `numeric_value`, `binaryvalue` and `objectvalue` (§A.4); every list as one query plus one
//! readings query per event (N+1); the deletes' statements and transactions (§A.7); EdgeX
//! 4.0's retention on one device and source (a count that stops at MaxCap, the event at an
//! offset, deletes by age and by pair, the latter with the pair's device_info rows).
//! `device_sources`, the pairs a service's retention walks, is edgebench's: the event-level
//! device_info rows that still have an event, where EdgeX walks its cache of those rows.
//!
//! Where it differs, and why:
//! - **Readings of an event come back `ORDER BY origin DESC, reading.ctid`**: EdgeX's order
//!   is `origin DESC` with no tie-break, and the readings of one event usually share their
//!   origin, so EdgeX returns them in whatever order the plan yields. The [`EventStore`]
//!   trait promises the order they were sent in; the physical row order (`ctid`) is that
//!   order for the rows of one `COPY` as long as it filled fresh pages (a table that only
//!   grows, or a run from an empty database). Once `VACUUM` has freed space in the middle of
//!   the table, the rows of one `COPY` may land on reused pages out of order, and so may come
//!   back out of order. Readings with different origins come back newest first, as in EdgeX,
//!   not in sent order. This is the only change to EdgeX's SQL.
//! - **The deletes run synchronously**: EdgeX answers 202 and deletes in a goroutine; here
//!   the call returns when the transaction has committed. DeleteEventsByDeviceName still runs
//!   EdgeX's `mark_deleted` update first, then its transaction.
//! - **`Doomed::OlderThan` deletes `origin < now − age`**, as the trait says, by passing
//!   `now − age − 1` to EdgeX's `origin <= @end`.
//! - **The device_info cache** is shared by the stores of one [`Pg4Database`] (EdgeX's by the
//!   requests of one service); a [`Pg4Store::new`] has its own. Its key is the fields
//!   themselves, separated, with the tags as canonical JSON, where EdgeX hashes them
//!   concatenated with MD5. Cache misses run in autocommit before the event's transaction
//!   begins, where EdgeX runs the readings' ones from inside the `COPY` callback on a second
//!   pooled connection (also outside the transaction).
//! - **One connection per store**: EdgeX runs the per-event readings query on a second pooled
//!   connection while the outer query's rows are still open; here the outer rows are read
//!   first, then the readings queries run, in the same number of statements.
//! - **Numeric values read back as PostgreSQL prints them** (`numeric_value` as `::text`
//!   would show it): `"42"`, `"1.5"` and `"1.50"` come back as sent, `"1.5e+01"` as `"15"`.
//!   EdgeX returns a float64, uint64 or int64 chosen by the value type.
//! - **EdgeX's NullReading** (all value columns NULL) has no place in edgebench's model; a
//!   row like that is a [`StoreError::Decode`](crate::store::StoreError::Decode).
//!
//! The files, by job: `schema` (the DDL and the SQL texts), `wire` (binary `uuid` and
//! `numeric`), `store` ([`Pg4Store`]), `database` ([`Pg4Database`]), and the tests. What the SQLite port shares with this one
//! (values, device_info keys and cache, filter clauses) is [`crate::store::edgex::sql4`].

mod database;
mod schema;
mod store;
#[cfg(test)]
pub(crate) mod suite;
#[cfg(test)]
mod tests;
mod wire;

pub use database::Pg4Database;
pub use store::Pg4Store;

#[cfg(doc)]
use crate::store::edgex::EventStore;
