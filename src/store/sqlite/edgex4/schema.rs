//! EdgeX 4.0.2's `core_data` schema and statements in SQLite's dialect: the tables, columns
//! and index names of [`crate::store::postgres::edgex4`]'s `SCHEMA`, and its statements, with what
//! SQLite spells differently.
//!
//! The type mapping: `UUID` → `TEXT` (lowercase hyphenated, as the store writes it);
//! `BIGINT` → `INTEGER`; `BYTEA` → `BLOB`; `JSONB` → `TEXT` holding JSON (tags canonical, with
//! sorted keys, since `device_info` rows are looked up by `tags = ?`); `SERIAL PRIMARY KEY`
//! → `INTEGER PRIMARY KEY AUTOINCREMENT`, which like a sequence never hands out an id twice,
//! so a cached id of a deleted row points at nothing rather than at a newer row; the other
//! `SERIAL` columns → `INTEGER NOT NULL`; `BOOLEAN` stays (SQLite stores 0 and 1).
//!
//! `numeric_value` is `TEXT`, not `NUMERIC`: SQLite's NUMERIC affinity rewrites what it
//! stores (`"1.50"` becomes the REAL 1.5, `"18446744073709551615"` a rounded REAL), and
//! readings must come back as they were sent. SQLite's arithmetic (`SUM`, `AVG`, as EdgeX's
//! aggregate queries use) still reads numbers out of the text.

use crate::store::edgex::sql4::Dialect;

/// SQLite's spelling of the shared statements.
pub(super) const DIALECT: Dialect = Dialect {
    schema: "",
    sigil: '?',
    limit_first: true,
    // SQLite gives each new row the largest rowid yet plus one, so rowid order is insertion
    // order, and the readings of an event that share its origin come back in sent order.
    row_order: "reading.rowid",
};

/// The tables and indexes, idempotent (a database file may already have them).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS device_info (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    devicename TEXT,
    profilename TEXT,
    sourcename TEXT,
    tags TEXT,
    resourcename TEXT,
    valuetype TEXT DEFAULT '',
    units TEXT DEFAULT '',
    mediatype TEXT DEFAULT '',
    mark_deleted BOOLEAN DEFAULT false
);

CREATE TABLE IF NOT EXISTS event (
    id TEXT,
    origin INTEGER,
    device_info_id INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS idx_event_origin ON event(origin);

CREATE TABLE IF NOT EXISTS reading (
    event_id TEXT,
    device_info_id INTEGER NOT NULL,
    origin INTEGER,
    value TEXT,
    binaryvalue BLOB,
    objectvalue TEXT,
    numeric_value TEXT
);

CREATE INDEX IF NOT EXISTS idx_reading_origin ON reading(origin);

CREATE INDEX IF NOT EXISTS idx_reading_event_id ON reading(event_id);
CREATE INDEX IF NOT EXISTS idx_reading_device_info_id ON reading(device_info_id);
CREATE INDEX IF NOT EXISTS idx_event_device_info_id ON event(device_info_id);
CREATE INDEX IF NOT EXISTS idx_reading_device_info_origin ON reading(device_info_id, origin DESC);
CREATE INDEX IF NOT EXISTS idx_device_info_device_resource
    ON device_info(mark_deleted, devicename, resourcename);
";

/// The startup fill of the device_info cache (LIMIT -1 is SQLite's "no limit").
pub(super) const ALL_DEVICE_INFOS: &str = "SELECT * FROM device_info LIMIT ?2 OFFSET ?1";

pub(super) const DEVICE_INFO_ID: &str = "SELECT id FROM device_info WHERE \
     devicename = ?1 AND profilename = ?2 AND sourcename = ?3 AND tags = ?4 AND \
     resourcename = ?5 AND valuetype = ?6 AND units = ?7 AND mediatype = ?8";

pub(super) const ADD_DEVICE_INFO: &str = "INSERT INTO device_info(devicename, profilename, \
     sourcename, tags, resourcename, valuetype, units, mediatype) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id";

pub(super) const ADD_EVENT: &str =
    "INSERT INTO event(id, device_info_id, origin) VALUES (?1, ?2, ?3)";

/// SQLite has no `COPY`: the readings of an event are this one prepared statement, run once
/// per reading inside the event's transaction.
pub(super) const ADD_READING: &str = "INSERT INTO reading(event_id, device_info_id, origin, \
     value, numeric_value, binaryvalue, objectvalue) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

pub(super) const DELETE_READINGS_OF_EVENT: &str =
    "DELETE FROM reading WHERE origin <= ?1 AND event_id = ?2";
pub(super) const DELETE_EVENT: &str = "DELETE FROM event WHERE id = ?1";

/// `= ANY (subquery)` is `IN (subquery)` in SQLite.
pub(super) const DELETE_READINGS_BY_AGE: &str = "DELETE FROM reading WHERE event_id IN \
     ( SELECT event.id FROM event JOIN device_info ON event.device_info_id = device_info.id \
     WHERE origin <= ?1 )";
/// SQLite has no `DELETE ... USING`: the join to device_info becomes an `IN`.
pub(super) const DELETE_EVENTS_BY_AGE: &str = "DELETE FROM event WHERE origin <= ?1 AND \
     device_info_id IN ( SELECT id FROM device_info )";

pub(super) const MARK_DEVICE_DELETED: &str =
    "UPDATE device_info SET mark_deleted = true WHERE devicename=?1";
pub(super) const DEVICE_INFOS_OF_DEVICE: &str = "SELECT * FROM device_info WHERE devicename = ?1";
pub(super) const DELETE_READINGS_OF_DEVICE: &str = "DELETE FROM reading WHERE event_id IN \
     ( SELECT event.id FROM event JOIN device_info ON event.device_info_id = device_info.id \
     WHERE devicename = ?1 )";
pub(super) const DELETE_EVENTS_OF_DEVICE: &str = "DELETE FROM event WHERE device_info_id IN \
     ( SELECT id FROM device_info WHERE devicename = ?1 )";
pub(super) const DELETE_DEVICE_INFO: &str = "DELETE FROM device_info WHERE id = ?1";

/// DeleteEventsByAgeAndDeviceNameAndSourceName (retention): `?1` is the newest origin.
pub(super) const DELETE_READINGS_OF_SOURCE_UP_TO: &str = "DELETE FROM reading WHERE event_id IN \
     ( SELECT event.id FROM event JOIN device_info ON event.device_info_id = device_info.id \
     WHERE origin <= ?1 AND devicename = ?2 AND sourcename = ?3 )";
pub(super) const DELETE_EVENTS_OF_SOURCE_UP_TO: &str = "DELETE FROM event WHERE origin <= ?1 \
     AND device_info_id IN ( SELECT id FROM device_info WHERE devicename = ?2 AND \
     sourcename = ?3 )";

/// DeleteEventsByDeviceNameAndSourceName: the pair's events, readings and device_info rows.
pub(super) const DEVICE_INFOS_OF_SOURCE: &str =
    "SELECT * FROM device_info WHERE devicename = ?1 AND sourcename = ?2";
pub(super) const DELETE_READINGS_OF_SOURCE: &str = "DELETE FROM reading WHERE event_id IN \
     ( SELECT event.id FROM event JOIN device_info ON event.device_info_id = device_info.id \
     WHERE devicename = ?1 AND sourcename = ?2 )";
pub(super) const DELETE_EVENTS_OF_SOURCE: &str = "DELETE FROM event WHERE device_info_id IN \
     ( SELECT id FROM device_info WHERE devicename = ?1 AND sourcename = ?2 )";

/// `scrub`, SQLite's `TRUNCATE`: a `DELETE` without `WHERE` frees the pages without a scan.
pub(super) const SCRUB: [&str; 3] = [
    "DELETE FROM reading",
    "DELETE FROM event",
    "DELETE FROM device_info",
];
