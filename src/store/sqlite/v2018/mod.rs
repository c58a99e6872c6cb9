//! The SQLite store: events and readings as JSON documents, in-process, with indexed
//! generated columns (`SQLite_Embedded`).
//!
//! A [`SqliteDatabase`] is where a run keeps its data: a file in a fresh temp directory
//! ([`SqliteDatabase::temp`], WAL mode), a user's file ([`SqliteDatabase::file`]) or a
//! private in-memory database ([`SqliteDatabase::memory`]). It creates the schema once;
//! [`SqliteDatabase::open_store`] then opens one connection per worker, and every connection
//! of one database sees every other's committed writes.
//!
//! Each record is one row whose `doc` column holds the record as a JSON object with the 2018
//! field names (`docs/stores/sqlite.md`). The columns the queries filter and sort on (`id`,
//! `device`, `name`, `created`, `pushed`) are `GENERATED ALWAYS AS (json_extract(doc, ...))
//! VIRTUAL` and indexed, so the document is the only copy of the data and every query is an
//! index range. A reading that came with an event carries the link in two plain columns,
//! `event_id` and `position` (the reading's place in its event).
//!
//! Invariants:
//! - Every statement the store runs is declared in the `statements!` block, and a unit test
//!   checks with `EXPLAIN QUERY PLAN` that none scans a table without an index or sorts in a
//!   temp b-tree.
//! - A write of more than one row (an event with its readings, a cascading delete, a
//!   read-merge-write update) is one `BEGIN IMMEDIATE` transaction: it takes the write lock
//!   up front, so two workers never both hold a read lock and then deadlock upgrading it.
//! - A read of more than one statement (an event and its readings) is one transaction, so an
//!   event always comes back with the readings it had at one point in time.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{
    params, CachedStatement, Connection, ErrorCode, OptionalExtension, Params, TransactionBehavior,
};
use serde::Serialize;
use tempfile::TempDir;

use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::shared::{self, private_name, sql_limit, EventDoc};
use crate::store::{CoreData, StoreError, StoreResult};
use crate::v2018::{now_ms, Event, Reading};

const BACKEND: &str = "sqlite";

/// How long a connection waits for another's write lock before failing with "database is
/// locked". Workers of a concurrent run queue on the one writer lock; a benchmark would
/// rather measure that wait than fail, so this is far longer than any single write takes.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Prepared statements kept per connection: room for every statement below, so
/// `prepare_cached` never re-prepares in a run.
const STATEMENT_CACHE: usize = 64;

/// The tables and indexes. Each index is named after the query it serves (see
/// `docs/stores/sqlite.md`); `id` is last in the composite ones so "by created, ties by id"
/// is the index order and needs no sort.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS event (
    doc     TEXT NOT NULL,
    id      TEXT    GENERATED ALWAYS AS (json_extract(doc, '$.id')) VIRTUAL,
    device  TEXT    GENERATED ALWAYS AS (json_extract(doc, '$.device')) VIRTUAL,
    created INTEGER GENERATED ALWAYS AS (json_extract(doc, '$.created')) VIRTUAL,
    pushed  INTEGER GENERATED ALWAYS AS (json_extract(doc, '$.pushed')) VIRTUAL
);
CREATE UNIQUE INDEX IF NOT EXISTS event_id ON event (id);
CREATE INDEX IF NOT EXISTS event_device_created ON event (device, created, id);
CREATE INDEX IF NOT EXISTS event_created ON event (created, id);
CREATE INDEX IF NOT EXISTS event_pushed ON event (pushed, id);

CREATE TABLE IF NOT EXISTS reading (
    doc      TEXT NOT NULL,
    event_id TEXT,
    position INTEGER,
    id       TEXT    GENERATED ALWAYS AS (json_extract(doc, '$.id')) VIRTUAL,
    device   TEXT    GENERATED ALWAYS AS (json_extract(doc, '$.device')) VIRTUAL,
    name     TEXT    GENERATED ALWAYS AS (json_extract(doc, '$.name')) VIRTUAL,
    created  INTEGER GENERATED ALWAYS AS (json_extract(doc, '$.created')) VIRTUAL
);
CREATE UNIQUE INDEX IF NOT EXISTS reading_id ON reading (id);
CREATE INDEX IF NOT EXISTS reading_event ON reading (event_id, position)
    WHERE event_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS reading_device_created ON reading (device, created, id);
CREATE INDEX IF NOT EXISTS reading_name_created ON reading (name, created, id);
CREATE INDEX IF NOT EXISTS reading_device_name_created ON reading (device, name, created, id);
CREATE INDEX IF NOT EXISTS reading_created ON reading (created, id);
";

/// Declares the statements as consts, and `STATEMENTS`, the list the query-plan test walks:
/// a statement cannot be added without the test covering it.
macro_rules! statements {
    ($($(#[$doc:meta])* $name:ident = $sql:expr;)*) => {
        $($(#[$doc])* const $name: &str = $sql;)*

        /// Every statement the store runs, by name.
        #[cfg(test)]
        const STATEMENTS: &[(&str, &str)] = &[$((stringify!($name), $name)),*];
    };
}

statements! {
    INSERT_EVENT = "INSERT INTO event (doc) VALUES (?1)";
    UPDATE_EVENT = "UPDATE event SET doc = ?2 WHERE id = ?1";
    DELETE_EVENT = "DELETE FROM event WHERE id = ?1";
    /// The cascade of [`DELETE_EVENT`].
    DELETE_EVENT_READINGS = "DELETE FROM reading WHERE event_id = ?1";
    EVENT_BY_ID = "SELECT rowid, doc FROM event WHERE id = ?1";
    EVENT_COUNT = "SELECT count(*) FROM event";
    EVENT_COUNT_BY_DEVICE = "SELECT count(*) FROM event WHERE device = ?1";
    EVENTS = "SELECT rowid, doc FROM event ORDER BY id";
    EVENTS_FOR_DEVICE =
        "SELECT rowid, doc FROM event WHERE device = ?1 ORDER BY created, id LIMIT ?2";
    EVENTS_BY_CREATED = "SELECT rowid, doc FROM event WHERE created BETWEEN ?1 AND ?2 \
                         ORDER BY created, id LIMIT ?3";
    EVENTS_OLDER = "SELECT rowid, doc FROM event WHERE created < ?1 ORDER BY created, id";
    /// `pushed` is never negative, so `> 0` is exactly "pushed != 0", as an index range.
    EVENTS_PUSHED = "SELECT rowid, doc FROM event WHERE pushed > 0 ORDER BY pushed, id";
    /// The readings of one event, in the order they were added.
    READINGS_OF_EVENT =
        "SELECT rowid, doc FROM reading WHERE event_id = ?1 ORDER BY position";
    /// The readings of a list of events (a JSON array of ids): one query for the whole list.
    READINGS_OF_EVENTS = "SELECT rowid, doc, event_id FROM reading \
                          WHERE event_id IN (SELECT value FROM json_each(?1)) \
                          ORDER BY event_id, position";
    /// A `DELETE` without `WHERE` is SQLite's truncate: it frees the pages, scanning nothing.
    SCRUB_READINGS = "DELETE FROM reading";
    SCRUB_EVENTS = "DELETE FROM event";

    INSERT_READING = "INSERT INTO reading (doc, event_id, position) VALUES (?1, ?2, ?3)";
    UPDATE_READING = "UPDATE reading SET doc = ?2 WHERE id = ?1";
    DELETE_READING = "DELETE FROM reading WHERE id = ?1";
    READING_BY_ID = "SELECT rowid, doc FROM reading WHERE id = ?1";
    READING_COUNT = "SELECT count(*) FROM reading";
    READINGS = "SELECT rowid, doc FROM reading ORDER BY id";
    READINGS_BY_DEVICE =
        "SELECT rowid, doc FROM reading WHERE device = ?1 ORDER BY created, id LIMIT ?2";
    READINGS_BY_NAME =
        "SELECT rowid, doc FROM reading WHERE name = ?1 ORDER BY created, id LIMIT ?2";
    READINGS_BY_CREATED = "SELECT rowid, doc FROM reading WHERE created BETWEEN ?1 AND ?2 \
                           ORDER BY created, id LIMIT ?3";
    READINGS_BY_DEVICE_AND_NAME = "SELECT rowid, doc FROM reading \
                                   WHERE device = ?1 AND name = ?2 \
                                   ORDER BY created, id LIMIT ?3";
}

/// Where a run's SQLite database lives, created (with its schema) once per run. Stores opened
/// from it ([`Self::open_store`]) share its data; drop them before it.
pub struct SqliteDatabase {
    kind: Kind,
    /// The temp directory of [`Self::temp`]; declared after `kind` so it is deleted after
    /// everything in it is closed.
    _dir: Option<TempDir>,
}

enum Kind {
    File(PathBuf),
    /// A `memdb` database: `uri` names it; `_keeper` is a connection that keeps it alive
    /// between stores (SQLite frees it when its last connection closes). The mutex is only
    /// there to make the database `Sync`; nothing locks it.
    Memory {
        uri: String,
        _keeper: Mutex<Connection>,
    },
}

impl SqliteDatabase {
    /// A database file (`edgebench.db`) in a fresh temp directory, in WAL mode; the directory
    /// is deleted when this value drops.
    pub fn temp() -> StoreResult<SqliteDatabase> {
        SqliteDatabase::temp_with_schema(SCHEMA)
    }

    /// [`Self::temp`] with another schema (`CREATE ... IF NOT EXISTS` statements): the EdgeX
    /// 4.0 port ([`crate::store::sqlite::edgex4`]) makes its databases with it.
    pub(crate) fn temp_with_schema(schema: &str) -> StoreResult<SqliteDatabase> {
        let dir = tempfile::Builder::new()
            .prefix("edgebench-sqlite-")
            .tempdir()
            .map_err(|e| {
                backend_error(format!(
                    "cannot create a temp directory in {}: {e} (is TMPDIR writable?)",
                    std::env::temp_dir().display()
                ))
            })?;
        let path = dir.path().join("edgebench.db");
        let mut db = SqliteDatabase::file_with_schema(path, schema)?;
        db._dir = Some(dir);
        Ok(db)
    }

    /// The database file at `path`, created when missing, switched to WAL mode; the schema is
    /// added if it is not there. The file stays when this value drops.
    pub fn file(path: impl Into<PathBuf>) -> StoreResult<SqliteDatabase> {
        SqliteDatabase::file_with_schema(path, SCHEMA)
    }

    /// [`Self::file`] with another schema.
    pub(crate) fn file_with_schema(
        path: impl Into<PathBuf>,
        schema: &str,
    ) -> StoreResult<SqliteDatabase> {
        let path = path.into();
        let conn = open_file(&path)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(|e| open_error(&path, &e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(backend_error(format!(
                "cannot switch {} to WAL mode (it stays in {mode} mode): is it on a \
                 filesystem without shared memory, such as a network share?",
                path.display()
            )));
        }
        create_schema(&conn, &path.display().to_string(), schema)?;
        Ok(SqliteDatabase {
            kind: Kind::File(path),
            _dir: None,
        })
    }

    /// A private in-memory database, `edgebench_<random>`, shared by every store opened from
    /// this value and freed when it drops.
    ///
    /// It uses SQLite's `memdb` VFS (`file:/edgebench_<random>?vfs=memdb`), not a
    /// `mode=memory&cache=shared` database: shared-cache connections fail at once with
    /// `SQLITE_LOCKED` when another holds a conflicting lock (the busy timeout does not
    /// apply to it), so concurrent workers would fail instead of waiting. `memdb` locks the
    /// whole database, as a file does, and waiting works.
    pub fn memory() -> StoreResult<SqliteDatabase> {
        SqliteDatabase::memory_with_schema(SCHEMA)
    }

    /// [`Self::memory`] with another schema.
    pub(crate) fn memory_with_schema(schema: &str) -> StoreResult<SqliteDatabase> {
        let uri = format!("file:/{}?vfs=memdb", private_name());
        let keeper = open_memory(&uri)?;
        create_schema(&keeper, ":memory:", schema)?;
        Ok(SqliteDatabase {
            kind: Kind::Memory {
                uri,
                _keeper: Mutex::new(keeper),
            },
            _dir: None,
        })
    }

    /// Where the data lives, for the run header: the file's path, or `:memory:`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::File(path) => path.display().to_string(),
            Kind::Memory { .. } => ":memory:".to_string(),
        }
    }

    /// A store on its own connection to this database (one per worker).
    pub fn open_store(&self) -> StoreResult<SqliteStore> {
        Ok(SqliteStore {
            conn: self.connect()?,
            name: self.describe(),
        })
    }

    /// A new connection to this database, set up as every store's is (busy timeout, a
    /// statement cache with room for every statement of a store).
    pub(crate) fn connect(&self) -> StoreResult<Connection> {
        self.connector().connect()
    }

    /// What opens connections to this database without borrowing it (YCSB's openers). It
    /// does not keep the database: once this value drops, its connections fail.
    pub(crate) fn connector(&self) -> Connector {
        match &self.kind {
            Kind::File(path) => Connector::File(path.clone()),
            Kind::Memory { uri, .. } => Connector::Memory(uri.clone()),
        }
    }
}

/// Where [`SqliteDatabase::connect`] opens its connections, as an owned value.
#[derive(Debug, Clone)]
pub(crate) enum Connector {
    File(PathBuf),
    Memory(String),
}

impl Connector {
    /// A new connection, set up as every store's is.
    pub(crate) fn connect(&self) -> StoreResult<Connection> {
        let conn = match self {
            Connector::File(path) => open_file(path)?,
            Connector::Memory(uri) => open_memory(uri)?,
        };
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(conn)
    }
}

impl fmt::Debug for SqliteDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteDatabase")
            .field("location", &self.describe())
            .finish()
    }
}

/// Opens the file at `path` as every connection to it is set up: waiting on locks, and
/// `synchronous=NORMAL`, which in WAL mode syncs at checkpoints rather than at every commit.
/// A commit survives the process crashing; a power loss or OS crash can lose the last
/// commits, never corrupt the file (see `docs/stores/sqlite.md`).
fn open_file(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path).map_err(|e| open_error(path, &e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
        .map_err(|e| open_error(path, &e))?;
    Ok(conn)
}

/// Opens the `memdb` database `uri`. Its rollback journal is kept in memory: the default
/// would be a real file next to the database's name, at the root of the filesystem.
fn open_memory(uri: &str) -> StoreResult<Connection> {
    let failed = |e: rusqlite::Error| {
        backend_error(format!(
            "cannot open the in-memory database {uri}: {}",
            one_line(&e)
        ))
    };
    let conn = Connection::open(uri).map_err(failed)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
    conn.pragma_update(None, "journal_mode", "MEMORY")
        .map_err(failed)?;
    Ok(conn)
}

fn create_schema(conn: &Connection, name: &str, schema: &str) -> StoreResult<()> {
    conn.execute_batch(schema).map_err(|e| {
        backend_error(format!(
            "cannot create the edgebench tables in {name}: {}{}",
            one_line(&e),
            fix_for(&e)
        ))
    })
}

fn open_error(path: &Path, e: &rusqlite::Error) -> StoreError {
    let fix = match e.sqlite_error_code() {
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            " (does the directory exist and is it writable?)"
        }
        _ => fix_for(e),
    };
    // SQLite's own message may end with the path; the message names it once, up front.
    let path = path.display().to_string();
    let reason = one_line(e).replace(&format!(": {path}"), "");
    backend_error(format!("cannot open {path}: {reason}{fix}"))
}

/// A record of one kind, as its `doc` column holds it.
trait Doc: Sized {
    const KIND: &'static str;
    fn from_json(doc: &str) -> serde_json::Result<Self>;
}

impl Doc for Event {
    const KIND: &'static str = "event";
    fn from_json(doc: &str) -> serde_json::Result<Self> {
        serde_json::from_str::<EventDoc<String>>(doc).map(EventDoc::into_event)
    }
}

impl Doc for Reading {
    const KIND: &'static str = "reading";
    fn from_json(doc: &str) -> serde_json::Result<Self> {
        serde_json::from_str(doc)
    }
}

fn to_json(kind: &'static str, id: &str, value: &impl Serialize) -> StoreResult<String> {
    // Structs of strings and integers always serialize; this maps the impossible error.
    serde_json::to_string(value)
        .map_err(|e| backend_error(format!("cannot encode {kind} {id} as JSON: {e}")))
}

/// Decodes the record in columns 0 (`rowid`) and 1 (`doc`) of `row`.
fn decode_row<T: Doc>(row: &rusqlite::Row<'_>) -> StoreResult<T> {
    let rowid: i64 = row.get(0).map_err(sql)?;
    let doc = row.get_ref(1).map_err(sql)?;
    let doc = doc.as_str().map_err(|e| decode_error::<T>(rowid, "", e))?;
    T::from_json(doc).map_err(|e| decode_error::<T>(rowid, doc, e))
}

/// A `Decode` error naming the record by the id in its document when there is one, by its
/// rowid otherwise.
fn decode_error<T: Doc>(rowid: i64, doc: &str, reason: impl fmt::Display) -> StoreError {
    let id = serde_json::from_str::<serde_json::Value>(doc)
        .ok()
        .and_then(|v| v.get("id")?.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("at rowid {rowid}"));
    StoreError::Decode {
        kind: T::KIND,
        id,
        reason: format!("{reason}"),
    }
}

/// Runs `stmt` and decodes every row.
fn collect<T: Doc>(mut stmt: CachedStatement<'_>, params: impl Params) -> StoreResult<Vec<T>> {
    let mut rows = stmt.query(params).map_err(sql)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql)? {
        out.push(decode_row(row)?);
    }
    Ok(out)
}

/// A `Backend` error of the SQLite stores.
pub(crate) fn backend_error(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}

/// A failed statement, as a one-line `Backend` error with the fix where there is one.
fn sql(e: rusqlite::Error) -> StoreError {
    backend_error(format!("{}{}", one_line(&e), fix_for(&e)))
}

/// SQLite's message for `e`, on one line.
pub(crate) fn one_line(e: &rusqlite::Error) -> String {
    shared::one_line(&e.to_string(), " ")
}

/// What to check after `e`, as a parenthesized clause to append, or nothing.
pub(crate) fn fix_for(e: &rusqlite::Error) -> &'static str {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) => {
            " (another connection held the write lock for longer than the 30 s busy timeout)"
        }
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            " (are the database file and its directory writable?)"
        }
        Some(ErrorCode::DiskFull) => " (the disk is full)",
        Some(ErrorCode::NotADatabase) => " (is it an SQLite database?)",
        _ => "",
    }
}

/// The database's size as SQLite counts it, `page_count × page_size`: the pages of the file
/// (or of the in-memory database) as this connection sees them, the write-ahead log's pages
/// not yet checkpointed included, the log file's own size not. Every SQLite store (this one,
/// the EdgeX 4.0 schema's) reports its size with it.
pub(crate) fn database_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok((pages.max(0) as u64).saturating_mul(page.max(0) as u64))
}

/// The [`CoreData`] store over one SQLite connection.
pub struct SqliteStore {
    conn: Connection,
    /// The database's [`SqliteDatabase::describe`], for `Debug`.
    name: String,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("database", &self.name)
            .finish()
    }
}

impl SqliteStore {
    fn begin(&mut self, behavior: TransactionBehavior) -> StoreResult<rusqlite::Transaction<'_>> {
        self.conn.transaction_with_behavior(behavior).map_err(sql)
    }

    fn count(&mut self, statement: &str, params: impl Params) -> StoreResult<usize> {
        let n: i64 = self
            .conn
            .prepare_cached(statement)
            .and_then(|mut s| s.query_row(params, |row| row.get(0)))
            .map_err(sql)?;
        // count(*) is never negative.
        Ok(usize::try_from(n).unwrap_or(0))
    }

    fn readings_where(
        &mut self,
        statement: &str,
        params: impl Params,
    ) -> StoreResult<Vec<Reading>> {
        collect(self.conn.prepare_cached(statement).map_err(sql)?, params)
    }

    /// The events `statement` selects, each with its readings: two queries in one read
    /// transaction, whatever the number of events.
    fn events_where(&mut self, statement: &str, params: impl Params) -> StoreResult<Vec<Event>> {
        let tx = self.begin(TransactionBehavior::Deferred)?;
        let mut events: Vec<Event> = collect(tx.prepare_cached(statement).map_err(sql)?, params)?;
        if !events.is_empty() {
            load_readings_of(&tx, &mut events)?;
        }
        tx.commit().map_err(sql)?;
        Ok(events)
    }
}

/// The event `id` (checked, lowercase) without its readings, or `NotFound`.
fn event_row(conn: &Connection, id: &str) -> StoreResult<Event> {
    let mut stmt = conn.prepare_cached(EVENT_BY_ID).map_err(sql)?;
    let found = stmt
        .query_row([id], |row| Ok(decode_row::<Event>(row)))
        .optional()
        .map_err(sql)?;
    found.unwrap_or_else(|| not_found("event", id))
}

/// The reading `id` (checked, lowercase), or `NotFound`.
fn reading_row(conn: &Connection, id: &str) -> StoreResult<Reading> {
    let mut stmt = conn.prepare_cached(READING_BY_ID).map_err(sql)?;
    let found = stmt
        .query_row([id], |row| Ok(decode_row::<Reading>(row)))
        .optional()
        .map_err(sql)?;
    found.unwrap_or_else(|| not_found("reading", id))
}

fn not_found<T>(kind: &'static str, id: &str) -> StoreResult<T> {
    Err(StoreError::NotFound {
        kind,
        id: id.to_string(),
    })
}

/// Fills in the readings of `events` with one query ([`READINGS_OF_EVENTS`]).
fn load_readings_of(conn: &Connection, events: &mut [Event]) -> StoreResult<()> {
    if let [e] = events {
        e.readings = collect(
            conn.prepare_cached(READINGS_OF_EVENT).map_err(sql)?,
            [&e.id],
        )?;
        return Ok(());
    }
    // The rows come by event id, so walking the events in id order pairs them up without a
    // map: `by_id[k]` is the k-th event in id order (SQLite's BINARY order is byte order,
    // as Rust's `str` order is).
    let mut by_id: Vec<usize> = (0..events.len()).collect();
    by_id.sort_unstable_by(|&a, &b| events[a].id.cmp(&events[b].id));
    let ids: Vec<&str> = by_id.iter().map(|&i| events[i].id.as_str()).collect();
    let ids = to_json("event", "(the list of event ids)", &ids)?;
    let mut stmt = conn.prepare_cached(READINGS_OF_EVENTS).map_err(sql)?;
    let mut rows = stmt.query([ids]).map_err(sql)?;
    let mut next = by_id.iter().peekable();
    while let Some(row) = rows.next().map_err(sql)? {
        let r: Reading = decode_row(row)?;
        let event_id = row.get_ref(2).map_err(sql)?;
        let event_id = event_id.as_str().map_err(|e| StoreError::Decode {
            kind: "reading",
            id: r.id.clone(),
            reason: format!("its event_id is not text: {e}"),
        })?;
        while next
            .next_if(|&&i| events[i].id.as_str() < event_id)
            .is_some()
        {}
        // The query selects only readings of these events: the next event is the reading's.
        if let Some(&&i) = next.peek().filter(|&&&i| events[i].id == event_id) {
            events[i].readings.push(r);
        }
    }
    Ok(())
}

impl CoreData for SqliteStore {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        stamp_event(e);
        let doc = to_json("event", &e.id, &EventDoc::of(e))?;
        let readings = e
            .readings
            .iter()
            .map(|r| to_json("reading", &r.id, r))
            .collect::<StoreResult<Vec<String>>>()?;
        let tx = self.begin(TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare_cached(INSERT_EVENT).map_err(sql)?;
            insert.execute([&doc]).map_err(sql)?;
            let mut insert = tx.prepare_cached(INSERT_READING).map_err(sql)?;
            for (position, doc) in readings.iter().enumerate() {
                // Positions fit in i64: a Vec holds fewer than i64::MAX readings.
                insert
                    .execute(params![doc, &e.id, position as i64])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(e.id.clone())
    }

    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        let id = key_id(&e.id)?;
        let tx = self.begin(TransactionBehavior::Immediate)?;
        let mut stored = event_row(&tx, &id)?;
        merge_event(&mut stored, e);
        let doc = to_json("event", &id, &EventDoc::of(&stored))?;
        tx.prepare_cached(UPDATE_EVENT)
            .and_then(|mut s| s.execute([&*id, &doc]))
            .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let id = key_id(id)?;
        let tx = self.begin(TransactionBehavior::Deferred)?;
        let mut e = event_row(&tx, &id)?;
        load_readings_of(&tx, std::slice::from_mut(&mut e))?;
        tx.commit().map_err(sql)?;
        Ok(e)
    }

    fn event_count(&mut self) -> StoreResult<usize> {
        self.count(EVENT_COUNT, [])
    }

    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.count(EVENT_COUNT_BY_DEVICE, [device])
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        let tx = self.begin(TransactionBehavior::Immediate)?;
        let deleted = tx
            .prepare_cached(DELETE_EVENT)
            .and_then(|mut s| s.execute([&*id]))
            .map_err(sql)?;
        if deleted == 0 {
            return not_found("event", &id);
        }
        tx.prepare_cached(DELETE_EVENT_READINGS)
            .and_then(|mut s| s.execute([&*id]))
            .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    fn events(&mut self) -> StoreResult<Vec<Event>> {
        self.events_where(EVENTS, [])
    }

    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        self.events_where(EVENTS_FOR_DEVICE, params![device, sql_limit(limit)])
    }

    fn events_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        self.events_where(
            EVENTS_BY_CREATED,
            params![start_ms, end_ms, sql_limit(limit)],
        )
    }

    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        self.events_where(EVENTS_OLDER, [now_ms().saturating_sub(age_ms)])
    }

    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        self.events_where(EVENTS_PUSHED, [])
    }

    fn scrub_all_events(&mut self) -> StoreResult<()> {
        let tx = self.begin(TransactionBehavior::Immediate)?;
        for statement in [SCRUB_READINGS, SCRUB_EVENTS] {
            tx.prepare_cached(statement)
                .and_then(|mut s| s.execute([]))
                .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// The database's pages ([`database_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        database_bytes(&self.conn).map(Some).map_err(sql)
    }

    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        stamp_reading(r);
        let doc = to_json("reading", &r.id, r)?;
        // One row: the statement is its own transaction.
        self.conn
            .prepare_cached(INSERT_READING)
            .and_then(|mut s| s.execute(params![doc, None::<&str>, None::<i64>]))
            .map_err(sql)?;
        Ok(r.id.clone())
    }

    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        let id = key_id(&r.id)?;
        let tx = self.begin(TransactionBehavior::Immediate)?;
        let mut stored = reading_row(&tx, &id)?;
        merge_reading(&mut stored, r);
        let doc = to_json("reading", &id, &stored)?;
        tx.prepare_cached(UPDATE_READING)
            .and_then(|mut s| s.execute([&*id, &doc]))
            .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        self.readings_where(READINGS, [])
    }

    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        reading_row(&self.conn, &key_id(id)?)
    }

    fn reading_count(&mut self) -> StoreResult<usize> {
        self.count(READING_COUNT, [])
    }

    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        let id = key_id(id)?;
        // The link to its event is on the reading's own row: one statement deletes both.
        let deleted = self
            .conn
            .prepare_cached(DELETE_READING)
            .and_then(|mut s| s.execute([&*id]))
            .map_err(sql)?;
        if deleted == 0 {
            return not_found("reading", &id);
        }
        Ok(())
    }

    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.readings_where(READINGS_BY_DEVICE, params![device, sql_limit(limit)])
    }

    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.readings_where(READINGS_BY_NAME, params![name, sql_limit(limit)])
    }

    fn readings_by_creation_time(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.readings_where(
            READINGS_BY_CREATED,
            params![start_ms, end_ms, sql_limit(limit)],
        )
    }

    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.readings_where(
            READINGS_BY_DEVICE_AND_NAME,
            params![device, name, sql_limit(limit)],
        )
    }
}

#[cfg(test)]
mod tests;
