//! The PostgreSQL store: events and readings as JSONB documents, over TCP or a Unix socket.
//!
//! Each record is one `jsonb` document with the 2018 field names (a reading
//! `{id, pushed, created, origin, modified, device, name, value}`, an event
//! `{id, pushed, device, created, modified, origin, event}`: its readings are rows of their
//! own). The columns the queries filter and sort on (`id`, `device`, `name`, `created`,
//! `pushed`) are `STORED` generated columns computed from the document, so the document is the
//! only source of truth and the indexed copies cannot disagree with it. An event's readings
//! live in the `reading` table with their event's id and their position (`event_id`, `ord`),
//! so a reading is one row whether it came alone or with an event, and deleting one reading
//! is one `DELETE`. Schema, indexes and the reasons are in `docs/stores/postgres.md`.
//!
//! Invariants:
//! - every statement is prepared once per connection (`Statements`) and listed in
//!   `STATEMENTS`; the EXPLAIN test checks that every read, update and delete among them is
//!   served by an index (no `Seq Scan`), and that none with `ORDER BY ... LIMIT` sorts;
//! - a write that touches several rows is one statement (data-modifying CTEs), hence one
//!   implicit transaction and one round trip: `add_event` inserts the event and all its
//!   readings, `delete_event_by_id` deletes both;
//! - an event list is two queries whatever its length: the events, then all their readings
//!   with `event_id = ANY($1)` (no N+1);
//! - an update reads, merges (`rules::merge_event`, `rules::merge_reading`) and writes back
//!   only if the row is still the version it read (`xmin`), else reads again: two round
//!   trips, and no lost update when workers race on one record.
//!
//! [`PgDatabase`] is the private database of a run (`edgebench_<random>`), created with the
//! schema and dropped (`WITH (FORCE)`) when it drops; [`config_from_url`] and
//! [`config_from_env`] turn what the user gave into a connection config.
//!
//! The files, by job: `schema` (the constants, the schema and the statements), `config` (URLs
//! and the libpq variables), `tls` (`sslmode`, `sslrootcert` and [`PgConfig`], what
//! everything connects with), `errors` (one-line error texts with their fix), `database`
//! ([`PgDatabase`]), `store` ([`PgStore`]), `ycsb` (YCSB's `jdbc` and `postgrenosql`
//! bindings, in the same private database) and the unit tests, `tests`.

pub use crate::redact::redact_password;

pub mod backend;
mod config;
mod database;
pub mod edgex4;
mod errors;
mod schema;
mod store;
#[cfg(test)]
mod tests;
mod tls;
pub(crate) mod ycsb;

pub use crate::store::shared::chain;
pub use config::{
    config_from_env, config_from_lookup, config_from_url, config_from_url_with, endpoint,
    PgTransport,
};
pub use database::PgDatabase;
pub use schema::{DEFAULT_PORT, DEFAULT_SOCKET_DIR, DEFAULT_TCP_HOST};
pub(crate) use store::schema_bytes;
pub use store::PgStore;
pub use tls::{PgConfig, PgConnectError, PgTls, SslMode};
