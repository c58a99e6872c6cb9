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

use std::collections::HashMap;
use std::time::Duration;

use postgres::config::Host;
use postgres::error::SqlState;
use postgres::types::{Json, ToSql, Type};
use postgres::{Client, Config, NoTls, Row, Statement};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::model::{now_ms, Event, Reading};
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
/// Kept here too: `perf -db` names PostgreSQL URLs in its messages.
pub use crate::store::shared::redact_password;
use crate::store::shared::{one_line, private_name, sql_limit};
use crate::store::{CoreData, StoreError, StoreResult};

/// The backend name in [`StoreError::Backend`].
const BACKEND: &str = "postgres";

/// Where Debian's (and most distributions') PostgreSQL puts its socket: libpq's default host.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
/// libpq's default port.
pub const DEFAULT_PORT: u16 = 5432;
/// The host of `pg-tcp` when `PGHOST` names no TCP host.
pub const DEFAULT_TCP_HOST: &str = "127.0.0.1";
/// The database the admin connection uses when the config names none; it always exists.
const ADMIN_DATABASE: &str = "postgres";
/// How long the drop of a private database waits for a connection: `Drop` must not hang on a
/// server that stopped answering.
const DROP_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What every connection error ends with: what to check and how to point us elsewhere.
const CONNECT_FIX: &str = "is PostgreSQL running? set PGHOST/PGPORT or give a postgres:// URL";
/// The URL forms [`config_from_url`] takes, for its error message.
const URL_FORMS: &str = "expected postgres://user@127.0.0.1:5432/db or \
                         postgresql:///db?host=/var/run/postgresql";

/// The tables and indexes of a private database. Text columns use the "C" collation: ids and
/// names compare as bytes, the same on every server whatever its locale, and faster.
const SCHEMA: &str = r#"
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
        struct Statements {
            $($(#[doc = $doc])* $name: Statement,)*
        }

        impl Statements {
            fn prepare(client: &mut Client) -> StoreResult<Statements> {
                Ok(Statements {
                    $($name: client
                        .prepare_typed($sql, &[$(Type::$ty),*])
                        .map_err(|e| query_error(stringify!($name), &e))?,)*
                })
            }
        }

        /// Every statement of the store: name, SQL, parameter types.
        #[cfg(test)]
        const STATEMENTS: &[(&str, &str, &[Type])] =
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

// ---- configuration ----

/// Which transport a `pg-tcp` / `pg-uds` shortcut uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgTransport {
    /// TCP: `PGHOST` when it names a TCP host, else 127.0.0.1.
    Tcp,
    /// The Unix socket: `PGHOST` when it is a socket directory, else /var/run/postgresql.
    Uds,
}

/// The config of a `postgres://` or `postgresql://` URL, e.g.
/// `postgres://user@127.0.0.1:5432/db` or `postgresql:///db?host=/var/run/postgresql`.
/// A URL without a host uses the socket directory [`DEFAULT_SOCKET_DIR`], without a port
/// 5432, and without a user the OS user (libpq's defaults); a URL without a database leaves
/// it unset ([`PgDatabase::create`] then uses `postgres`).
pub fn config_from_url(url: &str) -> Result<Config, String> {
    let shown = redact_password(url);
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!("invalid PostgreSQL URL {shown:?}: {URL_FORMS}"));
    }
    let mut config: Config = url.parse().map_err(|e| {
        format!(
            "invalid PostgreSQL URL {shown:?}: {}; {URL_FORMS}",
            chain(&e)
        )
    })?;
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        config.host(DEFAULT_SOCKET_DIR);
    }
    if config.get_user().is_none() {
        if let Some(user) = os_user(&|name| std::env::var(name).ok()) {
            config.user(&user);
        }
    }
    Ok(config)
}

/// The config of the `pg-tcp` / `pg-uds` shortcuts, from the process environment: see
/// [`config_from_lookup`].
pub fn config_from_env(transport: PgTransport) -> Config {
    config_from_lookup(transport, |name| std::env::var(name).ok())
}

/// The config of the `pg-tcp` / `pg-uds` shortcuts from the standard libpq variables, read
/// through `env` (so tests need not change the process environment):
/// - host: the first entry of `PGHOST` (a comma-separated list, as in libpq) of the
///   transport's kind, a socket directory (starting with `/`) for [`PgTransport::Uds`] and
///   anything else for [`PgTransport::Tcp`]; when there is none, [`DEFAULT_SOCKET_DIR`] or
///   [`DEFAULT_TCP_HOST`];
/// - port: the first `PGPORT` entry, else 5432 (an unparsable `PGPORT` also means 5432; the
///   run header shows the port used);
/// - user: `PGUSER`, else the OS user (`USER`, else the password database);
/// - `PGPASSWORD`, `PGDATABASE` (unset: [`PgDatabase::create`] uses `postgres`),
///   `PGCONNECT_TIMEOUT` (seconds) and `PGAPPNAME` (default `edgebench`) when set.
///
/// Empty variables count as unset, as in libpq.
pub fn config_from_lookup(transport: PgTransport, env: impl Fn(&str) -> Option<String>) -> Config {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let mut config = Config::new();
    let pghost = var("PGHOST").unwrap_or_default();
    let wanted =
        |h: &&str| !h.is_empty() && (h.starts_with('/') == (transport == PgTransport::Uds));
    let host = pghost.split(',').map(str::trim).find(wanted);
    config.host(host.unwrap_or(match transport {
        PgTransport::Tcp => DEFAULT_TCP_HOST,
        PgTransport::Uds => DEFAULT_SOCKET_DIR,
    }));
    let port = var("PGPORT")
        .and_then(|p| p.split(',').next().and_then(|p| p.trim().parse().ok()))
        .unwrap_or(DEFAULT_PORT);
    config.port(port);
    if let Some(user) = var("PGUSER").or_else(|| os_user(&var)) {
        config.user(&user);
    }
    if let Some(password) = var("PGPASSWORD") {
        config.password(password);
    }
    if let Some(dbname) = var("PGDATABASE") {
        config.dbname(&dbname);
    }
    if let Some(secs) = var("PGCONNECT_TIMEOUT").and_then(|s| s.trim().parse::<u64>().ok()) {
        // libpq: 0 (or negative) means wait forever.
        if secs > 0 {
            config.connect_timeout(Duration::from_secs(secs));
        }
    }
    config.application_name(&var("PGAPPNAME").unwrap_or_else(|| "edgebench".into()));
    config
}

/// The OS user, libpq's default role name: `USER`, else the password database's name for the
/// effective uid.
fn os_user(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    env("USER").filter(|u| !u.is_empty()).or_else(passwd_user)
}

/// The user name of the effective uid, from the password database (`getpwuid_r`).
fn passwd_user() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: a zeroed `passwd` is a valid value (null pointers, zero ids) for getpwuid_r to
    // fill in.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; `buf` outlives the uses of `pwd`'s strings,
    // which point into it.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so `pw_name` is a NUL-terminated string inside `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    name.to_str().ok().map(str::to_owned)
}

/// Where `config` connects, for messages and the run header: `host:port` for each host,
/// e.g. `127.0.0.1:5432` or `/var/run/postgresql:5432`.
pub fn endpoint(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| match ports {
        [] => DEFAULT_PORT,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(DEFAULT_PORT),
    };
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            Host::Unix(dir) => format!("{}:{}", dir.display(), port(i)),
        })
        .collect();
    if hosts.is_empty() {
        let addrs: Vec<String> = config
            .get_hostaddrs()
            .iter()
            .enumerate()
            .map(|(i, addr)| format!("{addr}:{}", port(i)))
            .collect();
        return addrs.join(",");
    }
    hosts.join(",")
}

// ---- errors ----

/// `e` and its sources, joined by `: `, on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    one_line(&message, "; ")
}

fn backend_error(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}

/// A failed statement of the store, named by its [`Statements`] field.
fn query_error(statement: &str, e: &postgres::Error) -> StoreError {
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    let fix = if e.is_closed() || io {
        " (connection lost: is PostgreSQL still running?)"
    } else {
        ""
    };
    backend_error(format!("{statement}: {}{fix}", chain(e)))
}

/// A connection to `config` that failed, with the fix that fits what the server said.
fn connect_error(config: &Config, e: &postgres::Error) -> StoreError {
    let user = config.get_user().unwrap_or("(OS user)");
    let fix = match e.code() {
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            "check the role and its password: set PGUSER/PGPASSWORD or put user:password in the URL"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            "the database does not exist: set PGDATABASE or the URL's /db to an existing one"
        }
        _ => CONNECT_FIX,
    };
    backend_error(format!(
        "cannot connect to the server at {} as {user}: {} ({fix})",
        endpoint(config),
        chain(e)
    ))
}

// ---- the private database ----

/// The private database of a run: `edgebench_<random>` on the server of an admin config,
/// with the store's schema. Dropping it drops the database (`WITH (FORCE)`, so connections
/// still open do not keep it), through a fresh admin connection; a failure there is ignored.
pub struct PgDatabase {
    /// How to reach the server for `CREATE`/`DROP DATABASE`.
    admin: Config,
    /// How to reach the private database.
    config: Config,
    name: String,
}

impl PgDatabase {
    /// Creates a fresh database on the server `admin` points at (connecting to `admin`'s
    /// database, or `postgres` when it names none) and the store's schema in it.
    pub fn create(admin: &Config) -> StoreResult<PgDatabase> {
        let mut admin = admin.clone();
        if admin.get_dbname().is_none() {
            admin.dbname(ADMIN_DATABASE);
        }
        let mut client = admin
            .connect(NoTls)
            .map_err(|e| connect_error(&admin, &e))?;
        let name = private_name();
        // `name` is ours: lowercase letters, digits and `_`, no quoting needed.
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| {
                let fix = if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                    format!(
                        " (the role needs CREATEDB: ALTER ROLE {} CREATEDB)",
                        admin.get_user().unwrap_or("<user>")
                    )
                } else {
                    String::new()
                };
                backend_error(format!(
                    "cannot create database {name} at {}: {}{fix}",
                    endpoint(&admin),
                    chain(&e)
                ))
            })?;
        drop(client);
        let mut config = admin.clone();
        config.dbname(&name);
        // From here on, `Drop` removes the database whatever fails next.
        let database = PgDatabase {
            admin,
            config,
            name,
        };
        let mut client = database.connect()?;
        client.batch_execute(SCHEMA).map_err(|e| {
            backend_error(format!(
                "cannot create the schema in {}: {}",
                database.name,
                chain(&e)
            ))
        })?;
        Ok(database)
    }

    /// A store on this database: one connection, for one worker.
    pub fn open_store(&self) -> StoreResult<PgStore> {
        PgStore::new(self.connect()?)
    }

    /// Where and what this database is, for the run header, e.g.
    /// `postgres at /var/run/postgresql:5432, database edgebench_0123456789ab, user root`.
    pub fn describe(&self) -> String {
        format!(
            "postgres at {}, database {}, user {}",
            endpoint(&self.config),
            self.name,
            self.config.get_user().unwrap_or("(OS user)")
        )
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The config that connects to this database.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn connect(&self) -> StoreResult<Client> {
        self.config
            .connect(NoTls)
            .map_err(|e| connect_error(&self.config, &e))
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let mut admin = self.admin.clone();
        if admin.get_connect_timeout().is_none() {
            admin.connect_timeout(DROP_CONNECT_TIMEOUT);
        }
        if let Ok(mut client) = admin.connect(NoTls) {
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            let _ = client.batch_execute(&sql);
        }
    }
}

// ---- the store ----

/// Picks one prepared statement of a store.
type StatementOf = fn(&Statements) -> &Statement;

/// An event row's document: the event without its readings.
#[derive(Deserialize)]
struct EventDoc {
    id: String,
    pushed: i64,
    device: String,
    created: i64,
    modified: i64,
    origin: i64,
    event: String,
}

impl From<EventDoc> for Event {
    fn from(d: EventDoc) -> Event {
        Event {
            id: d.id,
            pushed: d.pushed,
            device: d.device,
            created: d.created,
            modified: d.modified,
            origin: d.origin,
            event: d.event,
            readings: Vec::new(),
        }
    }
}

/// The document in column `doc` of `row`, whose column `id` names it in errors.
fn decode<T: DeserializeOwned>(
    row: &Row,
    kind: &'static str,
    id: usize,
    doc: usize,
) -> StoreResult<T> {
    row.try_get::<_, Json<T>>(doc)
        .map(|Json(value)| value)
        .map_err(|e| StoreError::Decode {
            kind,
            id: row.try_get::<_, String>(id).unwrap_or_default(),
            reason: chain(&e),
        })
}

/// `(id, doc)` rows as events (without readings).
fn events_of(rows: &[Row]) -> StoreResult<Vec<Event>> {
    rows.iter()
        .map(|row| decode::<EventDoc>(row, "event", 0, 1).map(Event::from))
        .collect()
}

/// `(id, doc)` rows as readings.
fn readings_of(rows: &[Row]) -> StoreResult<Vec<Reading>> {
    rows.iter()
        .map(|row| decode(row, "reading", 0, 1))
        .collect()
}

/// The [`CoreData`] store over one PostgreSQL connection to a database made by
/// [`PgDatabase`] (or one with the same schema).
pub struct PgStore {
    client: Client,
    statements: Statements,
}

impl PgStore {
    /// A store over `client`, whose database has the schema: prepares every statement.
    pub fn new(mut client: Client) -> StoreResult<PgStore> {
        let statements = Statements::prepare(&mut client)?;
        Ok(PgStore { client, statements })
    }

    fn query(
        &mut self,
        name: &str,
        statement: StatementOf,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        self.client
            .query(statement(&self.statements), params)
            .map_err(|e| query_error(name, &e))
    }

    fn execute(
        &mut self,
        name: &str,
        statement: StatementOf,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<u64> {
        self.client
            .execute(statement(&self.statements), params)
            .map_err(|e| query_error(name, &e))
    }

    fn count(
        &mut self,
        name: &str,
        statement: StatementOf,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<usize> {
        let n: i64 = self
            .client
            .query_one(statement(&self.statements), params)
            .and_then(|row| row.try_get(0))
            .map_err(|e| query_error(name, &e))?;
        // count(*) is never negative.
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The events of `(id, doc)` rows from `statement`, each with its readings, loaded by one
    /// more query for all of them.
    fn events_with_readings(
        &mut self,
        name: &str,
        statement: StatementOf,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Event>> {
        let rows = self.query(name, statement, params)?;
        let mut events = events_of(&rows)?;
        self.attach_readings(&mut events)?;
        Ok(events)
    }

    /// Loads the readings of `events` with one `event_id = ANY($1)` query, in added order.
    fn attach_readings(&mut self, events: &mut [Event]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
        let rows = self.query("readings_of_events", |s| &s.readings_of_events, &[&ids])?;
        let position: HashMap<&str, usize> =
            ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let mut found: Vec<(usize, i32, Reading)> = Vec::with_capacity(rows.len());
        for row in &rows {
            let owner: &str = row
                .try_get(0)
                .map_err(|e| query_error("readings_of_events", &e))?;
            let ord: i32 = row
                .try_get(1)
                .map_err(|e| query_error("readings_of_events", &e))?;
            let reading = decode(row, "reading", 2, 3)?;
            if let Some(&i) = position.get(owner) {
                found.push((i, ord, reading));
            }
        }
        found.sort_unstable_by_key(|&(i, ord, _)| (i, ord));
        for (i, _, reading) in found {
            events[i].readings.push(reading);
        }
        Ok(())
    }

    /// Updates the `kind` record with the (checked, lowercase) `id`: `read` gives its
    /// `(id, doc, xmin)`, `merge` the new document from that row, and `write`
    /// (`$1` id, `$2` document, `$3` xmin) stores it if the row is still the version read.
    /// When another writer got there first, reads and merges again, so no update is lost.
    fn update_doc<T: Serialize + std::fmt::Debug + Sync>(
        &mut self,
        kind: &'static str,
        id: &str,
        (read_name, read): (&str, StatementOf),
        (write_name, write): (&str, StatementOf),
        merge: impl Fn(&Row) -> StoreResult<T>,
    ) -> StoreResult<()> {
        loop {
            let rows = self.query(read_name, read, &[&id])?;
            let row = rows.first().ok_or_else(|| not_found(kind, id))?;
            let version: String = row.try_get(2).map_err(|e| query_error(read_name, &e))?;
            let doc = Json(merge(row)?);
            // 0 rows: the record changed (or went) since it was read.
            if self.execute(write_name, write, &[&id, &doc, &version])? == 1 {
                return Ok(());
            }
        }
    }

    /// The event with the (checked, lowercase) `id`, without its readings.
    fn event_row(&mut self, id: &str) -> StoreResult<Event> {
        let rows = self.query("event_by_id", |s| &s.event_by_id, &[&id])?;
        events_of(&rows)?
            .pop()
            .ok_or_else(|| not_found("event", id))
    }

    /// A readings list with a `LIMIT` (0 returns nothing without asking the server).
    fn readings_limited(
        &mut self,
        name: &str,
        statement: StatementOf,
        params: &[&(dyn ToSql + Sync)],
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = self.query(name, statement, params)?;
        readings_of(&rows)
    }
}

/// `NotFound` for the (checked, lowercase) id of a by-id call.
fn not_found(kind: &'static str, id: &str) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_string(),
    }
}

impl CoreData for PgStore {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        let doc = Json(&*e);
        self.execute("add_event", |s| &s.add_event, &[&doc])?;
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = key_id(&e.id)?;
        self.update_doc(
            "event",
            &id,
            ("event_for_update", |s| &s.event_for_update),
            ("update_event", |s| &s.update_event),
            |row| {
                let mut stored = Event::from(decode::<EventDoc>(row, "event", 0, 1)?);
                merge_event(&mut stored, e);
                Ok(stored)
            },
        )
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = key_id(id)?;
        let id = &*id;
        let mut e = self.event_row(id)?;
        let rows = self.query("readings_of_event", |s| &s.readings_of_event, &[&id])?;
        let mut found = Vec::with_capacity(rows.len());
        for row in &rows {
            let ord: i32 = row
                .try_get(0)
                .map_err(|e| query_error("readings_of_event", &e))?;
            found.push((ord, decode::<Reading>(row, "reading", 1, 2)?));
        }
        found.sort_unstable_by_key(|&(ord, _)| ord);
        e.readings = found.into_iter().map(|(_, r)| r).collect();
        Ok(e)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.count("event_count", |s| &s.event_count, &[])
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.count(
            "event_count_by_device",
            |s| &s.event_count_by_device,
            &[&device],
        )
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        match self.execute("delete_event", |s| &s.delete_event, &[&id])? {
            0 => Err(not_found("event", id)),
            _ => Ok(()),
        }
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        self.events_with_readings("events", |s| &s.events, &[])
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let limit = sql_limit(limit);
        self.events_with_readings(
            "events_by_device",
            |s| &s.events_by_device,
            &[&device, &limit],
        )
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let limit = sql_limit(limit);
        self.events_with_readings(
            "events_by_created",
            |s| &s.events_by_created,
            &[&start_ms, &end_ms, &limit],
        )
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        let cutoff = now_ms().saturating_sub(age_ms);
        self.events_with_readings(
            "events_created_before",
            |s| &s.events_created_before,
            &[&cutoff],
        )
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        self.events_with_readings("events_pushed", |s| &s.events_pushed, &[])
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        self.execute("scrub", |s| &s.scrub, &[]).map(drop)
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let doc = Json(&*r);
        self.execute("add_reading", |s| &s.add_reading, &[&doc])?;
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = key_id(&r.id)?;
        self.update_doc(
            "reading",
            &id,
            ("reading_for_update", |s| &s.reading_for_update),
            ("update_reading", |s| &s.update_reading),
            |row| {
                let mut stored: Reading = decode(row, "reading", 0, 1)?;
                merge_reading(&mut stored, r);
                Ok(stored)
            },
        )
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        let rows = self.query("readings", |s| &s.readings, &[])?;
        readings_of(&rows)
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        let id = key_id(id)?;
        let id = &*id;
        let rows = self.query("reading_by_id", |s| &s.reading_by_id, &[&id])?;
        readings_of(&rows)?
            .pop()
            .ok_or_else(|| not_found("reading", id))
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        self.count("reading_count", |s| &s.reading_count, &[])
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let id = &*id;
        match self.execute("delete_reading", |s| &s.delete_reading, &[&id])? {
            0 => Err(not_found("reading", id)),
            _ => Ok(()),
        }
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let n = sql_limit(limit);
        self.readings_limited(
            "readings_by_device",
            |s| &s.readings_by_device,
            &[&device, &n],
            limit,
        )
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        let n = sql_limit(limit);
        self.readings_limited(
            "readings_by_name",
            |s| &s.readings_by_name,
            &[&name, &n],
            limit,
        )
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        let n = sql_limit(limit);
        self.readings_limited(
            "readings_by_created",
            |s| &s.readings_by_created,
            &[&start_ms, &end_ms, &n],
            limit,
        )
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        let n = sql_limit(limit);
        self.readings_limited(
            "readings_by_device_and_name",
            |s| &s.readings_by_device_and_name,
            &[&device, &name, &n],
            limit,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn tcp(name: &str) -> Host {
        Host::Tcp(name.into())
    }

    fn unix(dir: &str) -> Host {
        Host::Unix(dir.into())
    }

    fn message(e: StoreError) -> String {
        match e {
            StoreError::Backend { backend, message } => {
                assert_eq!(backend, "postgres");
                assert!(!message.contains('\n'), "one line: {message:?}");
                message
            }
            other => panic!("expected a postgres Backend error, got {other:?}"),
        }
    }

    // ---- pure parts ----

    #[test]
    fn tcp_url_gives_host_port_user_and_database() {
        let c =
            config_from_url("postgres://bob@127.0.0.1:5433/db1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.get_hosts(), [tcp("127.0.0.1")]);
        assert_eq!(c.get_ports(), [5433]);
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_dbname(), Some("db1"));
        assert_eq!(endpoint(&c), "127.0.0.1:5433");
    }

    #[test]
    fn socket_url_gives_the_socket_directory_and_default_port() {
        let c = config_from_url("postgresql:///db2?host=/var/run/postgresql")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.get_hosts(), [unix("/var/run/postgresql")]);
        assert_eq!(c.get_dbname(), Some("db2"));
        assert!(c.get_user().is_some(), "the OS user by default");
        assert_eq!(endpoint(&c), "/var/run/postgresql:5432");

        // No host at all: libpq's default socket directory; no database: left unset.
        let c = config_from_url("postgresql://").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.get_hosts(), [unix(DEFAULT_SOCKET_DIR)]);
        assert_eq!(c.get_dbname(), None);
    }

    #[test]
    fn bad_urls_name_the_url_and_the_forms_without_the_password() {
        let e = config_from_url("mysql://u@h/db").err();
        assert_eq!(
            e.as_deref(),
            Some(
                "invalid PostgreSQL URL \"mysql://u@h/db\": expected \
                 postgres://user@127.0.0.1:5432/db or postgresql:///db?host=/var/run/postgresql"
            )
        );
        let e = config_from_url("postgres://u:secret@h:notaport/db")
            .err()
            .unwrap_or_default();
        assert!(
            e.starts_with("invalid PostgreSQL URL \"postgres://u:***@h:notaport/db\": "),
            "{e}"
        );
        assert!(e.ends_with(URL_FORMS), "{e}");
        assert!(!e.contains("secret") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn env_defaults_are_libpqs_with_the_transports_host() {
        let env = lookup(&[("USER", "alice")]);
        let c = config_from_lookup(PgTransport::Tcp, &env);
        assert_eq!(c.get_hosts(), [tcp("127.0.0.1")]);
        assert_eq!(c.get_ports(), [5432]);
        assert_eq!(c.get_user(), Some("alice"));
        assert_eq!(c.get_password(), None);
        assert_eq!(c.get_dbname(), None);
        assert_eq!(c.get_connect_timeout(), None);
        assert_eq!(c.get_application_name(), Some("edgebench"));
        let c = config_from_lookup(PgTransport::Uds, &env);
        assert_eq!(c.get_hosts(), [unix("/var/run/postgresql")]);
        assert_eq!(endpoint(&c), "/var/run/postgresql:5432");

        // No USER: the password database's name for our uid.
        let c = config_from_lookup(PgTransport::Tcp, lookup(&[]));
        assert_eq!(c.get_user().map(str::to_owned), passwd_user());
        assert!(c.get_user().is_some());
    }

    #[test]
    fn env_variables_take_precedence_and_pghost_is_picked_by_kind() {
        let env = lookup(&[
            ("PGHOST", "/tmp/pgsock, db.example"),
            ("PGPORT", "6543"),
            ("PGUSER", "bob"),
            ("USER", "alice"),
            ("PGPASSWORD", "pw"),
            ("PGDATABASE", "mydb"),
            ("PGCONNECT_TIMEOUT", "3"),
            ("PGAPPNAME", "bench"),
        ]);
        let c = config_from_lookup(PgTransport::Tcp, &env);
        assert_eq!(c.get_hosts(), [tcp("db.example")]);
        assert_eq!(c.get_ports(), [6543]);
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
        assert_eq!(c.get_dbname(), Some("mydb"));
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(c.get_application_name(), Some("bench"));
        let c = config_from_lookup(PgTransport::Uds, &env);
        assert_eq!(c.get_hosts(), [unix("/tmp/pgsock")]);

        // A PGHOST of the other kind is not used; empty and unparsable values are unset.
        let env = lookup(&[
            ("PGHOST", "db.example"),
            ("PGPORT", "bogus"),
            ("PGUSER", ""),
            ("USER", "alice"),
            ("PGCONNECT_TIMEOUT", "0"),
        ]);
        let c = config_from_lookup(PgTransport::Uds, &env);
        assert_eq!(c.get_hosts(), [unix(DEFAULT_SOCKET_DIR)]);
        assert_eq!(c.get_ports(), [5432]);
        assert_eq!(c.get_user(), Some("alice"));
        assert_eq!(c.get_connect_timeout(), None);
        let c = config_from_lookup(PgTransport::Tcp, lookup(&[("PGHOST", "/tmp/pgsock")]));
        assert_eq!(c.get_hosts(), [tcp(DEFAULT_TCP_HOST)]);
    }

    #[test]
    fn no_server_fails_with_the_endpoint_and_the_fix() {
        // Port 1 on the loopback: nothing listens there, the connection is refused at once.
        let c = config_from_lookup(PgTransport::Tcp, lookup(&[("PGPORT", "1"), ("USER", "u")]));
        let m = message(
            PgDatabase::create(&c)
                .err()
                .unwrap_or_else(|| panic!("connected to port 1")),
        );
        assert_eq!(
            m,
            "cannot connect to the server at 127.0.0.1:1 as u: error connecting to server: \
             Connection refused (os error 111) (is PostgreSQL running? set PGHOST/PGPORT or \
             give a postgres:// URL)"
        );

        let env = lookup(&[("PGHOST", "/nonexistent/edgebench"), ("USER", "u")]);
        let c = config_from_lookup(PgTransport::Uds, env);
        let m = message(
            PgDatabase::create(&c)
                .err()
                .unwrap_or_else(|| panic!("connected")),
        );
        assert!(
            m.starts_with("cannot connect to the server at /nonexistent/edgebench:5432 as u: "),
            "{m}"
        );
        assert!(m.ends_with(&format!("({CONNECT_FIX})")), "{m}");
    }

    // ---- against the machine's server ----

    /// A private database on the server the PG* variables name (the socket by default).
    fn private_database() -> PgDatabase {
        PgDatabase::create(&config_from_env(PgTransport::Uds)).unwrap_or_else(|e| {
            panic!(
                "{e}; this test needs a PostgreSQL server and fails rather than skip without one"
            )
        })
    }

    fn admin_client() -> Client {
        let mut admin = config_from_env(PgTransport::Uds);
        if admin.get_dbname().is_none() {
            admin.dbname(ADMIN_DATABASE);
        }
        admin
            .connect(NoTls)
            .unwrap_or_else(|e| panic!("{}", connect_error(&admin, &e)))
    }

    fn database_exists(client: &mut Client, name: &str) -> bool {
        let row = client
            .query_one(
                "SELECT count(*) FROM pg_database WHERE datname = $1",
                &[&name],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        row.get::<_, i64>(0) == 1
    }

    #[test]
    fn dropping_the_private_database_drops_it_on_the_server() {
        let database = private_database();
        let name = database.name().to_string();
        assert!(
            name.starts_with("edgebench_") && name.len() == "edgebench_".len() + 12,
            "{name}"
        );
        assert!(
            database
                .describe()
                .contains(&format!(", database {name}, user ")),
            "{}",
            database.describe()
        );
        let mut admin = admin_client();
        assert!(database_exists(&mut admin, &name));
        // An open store does not keep the database alive.
        let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
        store.event_count().unwrap_or_else(|e| panic!("{e}"));
        drop(database);
        assert!(!database_exists(&mut admin, &name), "{name} is still there");
        assert!(
            store.event_count().is_err(),
            "the store's connection was closed"
        );
    }

    #[test]
    fn racing_updates_of_one_reading_lose_no_field() {
        let database = private_database();
        let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
        let mut r = Reading {
            device: "d".into(),
            name: "n".into(),
            value: "v0".into(),
            ..Reading::default()
        };
        let id = store.add_reading(&mut r).unwrap_or_else(|e| panic!("{e}"));
        const ROUNDS: i64 = 200;
        // One worker sets `value`, the other `origin`: a write based on a stale read would put
        // back the other worker's old value.
        std::thread::scope(|scope| {
            for worker in 0..2 {
                let (id, database) = (id.clone(), &database);
                scope.spawn(move || {
                    let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
                    for i in 1..=ROUNDS {
                        let mut update = Reading {
                            id: id.clone(),
                            ..Reading::default()
                        };
                        if worker == 0 {
                            update.value = format!("v{i}");
                        } else {
                            update.origin = i;
                        }
                        store
                            .update_reading(&update)
                            .unwrap_or_else(|e| panic!("{e}"));
                    }
                });
            }
        });
        let got = store.reading_by_id(&id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((got.value.as_str(), got.origin), ("v200", ROUNDS));
    }

    /// Sample arguments of each read, update and delete, as the `EXECUTE` argument list.
    fn sample_arguments(statement: &str) -> &'static str {
        const ID: &str = "'5b4f00000000000000000001'";
        match statement {
            "event_by_id" | "event_for_update" | "readings_of_event" | "delete_event"
            | "reading_by_id" | "reading_for_update" | "delete_reading" => {
                "('5b4f00000000000000000001')"
            }
            "update_event" => {
                "('5b4f00000000000000000001', '{\"id\":\"5b4f00000000000000000001\",\
                 \"device\":\"d1\",\"created\":5,\"pushed\":0,\"readings\":[]}', '1')"
            }
            "update_reading" => {
                "('5b4f00000000000000000001', '{\"id\":\"5b4f00000000000000000001\",\
                 \"device\":\"d1\",\"name\":\"n1\",\"created\":5}', '1')"
            }
            "readings_of_events" => {
                "(ARRAY['5b4f00000000000000000001', '5b4f00000000000000000002'])"
            }
            "event_count_by_device" => "('d1')",
            "events_by_device" | "readings_by_device" | "readings_by_name" => "('d1', 10)",
            "events_by_created" | "readings_by_created" => "(3, 7, 10)",
            "events_created_before" => "(7)",
            "readings_by_device_and_name" => "('d1', 'n1', 10)",
            "event_count" | "events" | "events_pushed" | "readings" | "reading_count" => "",
            other => panic!("add sample arguments for statement {other} ({ID} is an id)"),
        }
    }

    /// Every node type of an `EXPLAIN (FORMAT JSON)` plan, depth first.
    fn node_types(plan: &serde_json::Value, out: &mut Vec<String>) {
        if let Some(node) = plan.get("Node Type").and_then(|n| n.as_str()) {
            out.push(node.to_string());
        }
        for child in plan
            .get("Plans")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
        {
            node_types(child, out);
        }
    }

    #[test]
    fn every_read_update_and_delete_is_served_by_an_index_without_a_sort() {
        let database = private_database();
        let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
        // 1000 events of 50 devices, 5000 readings of 50 names, a few events pushed: each
        // sample argument selects a small part of a table, as in a benchmark's dataset.
        for i in 0..1000_i64 {
            let mut e = Event {
                device: format!("d{}", i % 50),
                created: i,
                pushed: if i % 20 == 0 { i } else { 0 },
                readings: (0..5)
                    .map(|n| Reading {
                        name: format!("n{n}"),
                        ..Reading::default()
                    })
                    .collect(),
                ..Event::default()
            };
            store.add_event(&mut e).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut client = database.connect().unwrap_or_else(|e| panic!("{e}"));
        // Tables this small would be read whole: forbid that, so the plan shows the index the
        // planner would use on a big table.
        client
            .batch_execute("ANALYZE; SET enable_seqscan = off")
            .unwrap_or_else(|e| panic!("{e}"));
        let explained: Vec<&str> = STATEMENTS
            .iter()
            .filter(|(_, sql, _)| {
                ["SELECT", "UPDATE", "DELETE", "WITH"]
                    .iter()
                    .any(|k| sql.starts_with(k))
                    && !sql.contains("INSERT")
            })
            .map(|(name, _, _)| *name)
            .collect();
        assert_eq!(
            explained.len(),
            STATEMENTS.len() - 3,
            "all but 2 inserts and TRUNCATE"
        );
        for &(name, sql, types) in STATEMENTS {
            if !explained.contains(&name) {
                continue;
            }
            // An ORDER BY without a LIMIT returns every match. When the planner expects many
            // (a generic plan of `created < $1` guesses a third of the table), a bitmap scan
            // and a Sort can cost less than walking the index in order, and it may choose
            // that; with a LIMIT the index order must do (docs/stores/postgres.md).
            let may_sort = sql.contains("ORDER BY") && !sql.contains("LIMIT");
            let types: Vec<&str> = types.iter().map(Type::name).collect();
            let prepare = if types.is_empty() {
                format!("PREPARE {name} AS {sql}")
            } else {
                format!("PREPARE {name}({}) AS {sql}", types.join(", "))
            };
            client
                .batch_execute(&prepare)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // Custom plans for the first executions of a prepared statement, then usually a
            // generic one: both must use the indexes.
            for mode in ["force_custom_plan", "force_generic_plan"] {
                client
                    .batch_execute(&format!("SET plan_cache_mode = {mode}"))
                    .unwrap_or_else(|e| panic!("{e}"));
                let explain = format!(
                    "EXPLAIN (FORMAT JSON) EXECUTE {name}{}",
                    sample_arguments(name)
                );
                let row = client
                    .query_one(&explain, &[])
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let plan: serde_json::Value = row.get(0);
                let mut nodes = Vec::new();
                for root in plan.as_array().into_iter().flatten() {
                    if let Some(p) = root.get("Plan") {
                        node_types(p, &mut nodes);
                    }
                }
                assert!(!nodes.is_empty(), "{name}: no plan in {plan}");
                assert!(
                    !nodes.iter().any(|n| n == "Seq Scan"),
                    "{name} ({mode}) has a Seq Scan: {nodes:?}\n{plan:#}"
                );
                assert!(
                    may_sort || !nodes.iter().any(|n| n == "Sort"),
                    "{name} ({mode}) sorts: {nodes:?}\n{plan:#}"
                );
            }
        }
    }
}
