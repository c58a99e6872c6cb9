//! The PostgreSQL store's constants, its schema (tables, generated columns, indexes) and its
//! prepared statements: every statement is prepared once per connection ([`Statements`]) and
//! listed in [`STATEMENTS`], which the EXPLAIN test walks.

use std::time::Duration;

use postgres::types::Type;
use postgres::{Client, Statement};

use super::errors::query_error;
use crate::store::StoreResult;

/// The backend name in [`StoreError::Backend`](crate::store::StoreError::Backend).
pub(super) const BACKEND: &str = "postgres";

/// Where Debian's (and most distributions') PostgreSQL puts its socket: libpq's default host.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
/// libpq's default port.
pub const DEFAULT_PORT: u16 = 5432;
/// The host of `pg-tcp` when `PGHOST` names no TCP host.
pub const DEFAULT_TCP_HOST: &str = "127.0.0.1";
/// The database the admin connection uses when the config names none; it always exists.
pub(super) const ADMIN_DATABASE: &str = "postgres";
/// How long the drop of a private database waits for a connection: `Drop` must not hang on a
/// server that stopped answering.
pub(super) const DROP_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What every connection error ends with: what to check and how to point us elsewhere.
pub(super) const CONNECT_FIX: &str =
    "is PostgreSQL running? set PGHOST/PGPORT or give a postgres:// URL";
/// The URL forms [`config_from_url`] takes, for its error message.
pub(super) const URL_FORMS: &str = "expected postgres://user@127.0.0.1:5432/db or \
                         postgresql:///db?host=/var/run/postgresql";

/// The tables and indexes of a private database. Text columns use the "C" collation: ids and
/// names compare as bytes, the same on every server whatever its locale, and faster.
pub(super) const SCHEMA: &str = r#"
CREATE TABLE event (
    doc     jsonb  NOT NULL,
    id      text   COLLATE "C" GENERATED ALWAYS AS (doc->>'id') STORED PRIMARY KEY,
    device  text   COLLATE "C" GENERATED ALWAYS AS (doc->>'device') STORED NOT NULL,
    created bigint GENERATED ALWAYS AS ((doc->>'created')::bigint) STORED NOT NULL,
    pushed  bigint GENERATED ALWAYS AS ((doc->>'pushed')::bigint) STORED NOT NULL
);
CREATE INDEX event_device_created ON event (device, created, id);
CREATE INDEX event_created ON event (created, id);
CREATE INDEX event_pushed ON event (pushed, id) WHERE pushed <> 0;

CREATE TABLE reading (
    doc      jsonb  NOT NULL,
    id       text   COLLATE "C" GENERATED ALWAYS AS (doc->>'id') STORED PRIMARY KEY,
    device   text   COLLATE "C" GENERATED ALWAYS AS (doc->>'device') STORED NOT NULL,
    name     text   COLLATE "C" GENERATED ALWAYS AS (doc->>'name') STORED NOT NULL,
    created  bigint GENERATED ALWAYS AS ((doc->>'created')::bigint) STORED NOT NULL,
    event_id text   COLLATE "C",
    ord      integer
);
CREATE INDEX reading_device_created ON reading (device, created, id);
CREATE INDEX reading_name_created ON reading (name, created, id);
CREATE INDEX reading_device_name_created ON reading (device, name, created, id);
CREATE INDEX reading_created ON reading (created, id);
CREATE INDEX reading_event ON reading (event_id, ord);
"#;

/// Declares every statement once: the [`Statements`] struct (one prepared statement per
/// field) and the `STATEMENTS` list the EXPLAIN test walks.
macro_rules! statements {
    ($($(#[doc = $doc:literal])* $name:ident($($ty:ident),*) = $sql:literal;)*) => {
        /// The store's statements, prepared once per connection.
        pub(super) struct Statements {
            $($(#[doc = $doc])* pub(super) $name: Statement,)*
        }

        impl Statements {
            pub(super) fn prepare(client: &mut Client) -> StoreResult<Statements> {
                Ok(Statements {
                    $($name: client
                        .prepare_typed($sql, &[$(Type::$ty),*])
                        .map_err(|e| query_error(stringify!($name), &e))?,)*
                })
            }
        }

        /// Every statement of the store: name, SQL, parameter types.
        #[cfg(test)]
        pub(super) const STATEMENTS: &[(&str, &str, &[Type])] =
            &[$((stringify!($name), $sql, &[$(Type::$ty),*]),)*];
    };
}

statements! {
    /// `$1` is the whole event, readings included: the event row gets the document without
    /// them, each reading its own row with its position.
    add_event(JSONB) = "WITH e AS (INSERT INTO event (doc) VALUES ($1 - 'readings')) \
        INSERT INTO reading (doc, event_id, ord) \
        SELECT r.doc, $1->>'id', (r.ord - 1)::integer \
        FROM jsonb_array_elements($1->'readings') WITH ORDINALITY AS r(doc, ord)";
    event_by_id(TEXT) = "SELECT id, doc FROM event WHERE id = $1";
    /// The row version (`xmin`) is what `update_event` checks before it writes.
    event_for_update(TEXT) = "SELECT id, doc, xmin::text FROM event WHERE id = $1";
    /// `$2` is the whole merged event (its readings empty).
    update_event(TEXT, JSONB, TEXT) =
        "UPDATE event SET doc = $2 - 'readings' WHERE id = $1 AND xmin::text = $3";
    /// No `ORDER BY`: with it the generic plan can be a bitmap scan plus a `Sort`; the caller
    /// sorts the few rows by `ord`.
    readings_of_event(TEXT) = "SELECT ord, id, doc FROM reading WHERE event_id = $1";
    /// Rows come in no particular order; the caller groups them by event and sorts by `ord`.
    readings_of_events(TEXT_ARRAY) =
        "SELECT event_id, ord, id, doc FROM reading WHERE event_id = ANY($1)";
    event_count() = "SELECT count(*) FROM event";
    event_count_by_device(TEXT) = "SELECT count(*) FROM event WHERE device = $1";
    delete_event(TEXT) = "WITH r AS (DELETE FROM reading WHERE event_id = $1) \
        DELETE FROM event WHERE id = $1";
    events() = "SELECT id, doc FROM event ORDER BY id";
    events_by_device(TEXT, INT8) =
        "SELECT id, doc FROM event WHERE device = $1 ORDER BY created, id LIMIT $2";
    events_by_created(INT8, INT8, INT8) = "SELECT id, doc FROM event \
        WHERE created BETWEEN $1 AND $2 ORDER BY created, id LIMIT $3";
    events_created_before(INT8) =
        "SELECT id, doc FROM event WHERE created < $1 ORDER BY created, id";
    events_pushed() = "SELECT id, doc FROM event WHERE pushed <> 0 ORDER BY pushed, id";
    scrub() = "TRUNCATE event, reading";
    add_reading(JSONB) = "INSERT INTO reading (doc) VALUES ($1)";
    readings() = "SELECT id, doc FROM reading ORDER BY id";
    reading_by_id(TEXT) = "SELECT id, doc FROM reading WHERE id = $1";
    reading_for_update(TEXT) = "SELECT id, doc, xmin::text FROM reading WHERE id = $1";
    update_reading(TEXT, JSONB, TEXT) =
        "UPDATE reading SET doc = $2 WHERE id = $1 AND xmin::text = $3";
    reading_count() = "SELECT count(*) FROM reading";
    delete_reading(TEXT) = "DELETE FROM reading WHERE id = $1";
    readings_by_device(TEXT, INT8) =
        "SELECT id, doc FROM reading WHERE device = $1 ORDER BY created, id LIMIT $2";
    readings_by_name(TEXT, INT8) =
        "SELECT id, doc FROM reading WHERE name = $1 ORDER BY created, id LIMIT $2";
    readings_by_created(INT8, INT8, INT8) = "SELECT id, doc FROM reading \
        WHERE created BETWEEN $1 AND $2 ORDER BY created, id LIMIT $3";
    readings_by_device_and_name(TEXT, TEXT, INT8) = "SELECT id, doc FROM reading \
        WHERE device = $1 AND name = $2 ORDER BY created, id LIMIT $3";
}
