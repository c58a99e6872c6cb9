//! EdgeX 4.0.2's `core_data` schema and the SQL of its statements, as text
//! (storage-layouts.md §A.2–A.7; edgex-go v4.0.2 `internal/core/data/embed/sql/` and
//! `internal/pkg/infrastructure/postgres/`).
//!
//! [`SCHEMA`] is what a fresh 4.0.2 install ends with: `idempotent/00-utils.sql`,
//! `idempotent/01-tables.sql`, then `versions/4.0.2-dev/00-tables.sql` (the `ALTER TABLE`s
//! folded into the tables, the indexes in EdgeX's order). EdgeX's `schema_migrations`
//! bookkeeping table and advisory lock are left out: they guard EdgeX's startup, not a
//! request.

use crate::store::edgex::sql4::Dialect;

/// PostgreSQL's spelling of the shared statements.
pub(super) const DIALECT: Dialect = Dialect {
    schema: "core_data.",
    sigil: '$',
    limit_first: false,
    row_order: "reading.ctid",
};

/// The schema of a private database. Deliberately as EdgeX has it: `device_info.id` is the
/// only key; `event` and `reading` have no primary key, no unique constraint and no foreign
/// key, and `event.id` has no index (so an event by id is a sequential scan, as in EdgeX);
/// `device_info_id` is `SERIAL` in both (EdgeX's quirk: a sequence nothing uses, since the id
/// is always written).
pub(super) const SCHEMA: &str = "
CREATE SCHEMA IF NOT EXISTS core_data;

CREATE TABLE IF NOT EXISTS core_data.device_info (
    id SERIAL PRIMARY KEY,
    devicename TEXT,
    profilename TEXT,
    sourcename TEXT,
    tags JSONB,
    resourcename TEXT,
    valuetype TEXT DEFAULT '',
    units TEXT DEFAULT '',
    mediatype TEXT DEFAULT '',
    mark_deleted BOOLEAN DEFAULT false
);

CREATE TABLE IF NOT EXISTS core_data.event (
    id UUID,
    origin BIGINT,
    device_info_id SERIAL
);

CREATE INDEX IF NOT EXISTS idx_event_origin
    ON core_data.event(origin);

CREATE TABLE IF NOT EXISTS core_data.reading (
    event_id UUID,
    device_info_id SERIAL,
    origin BIGINT,
    value TEXT,
    binaryvalue BYTEA,
    objectvalue JSONB,
    numeric_value NUMERIC
);

CREATE INDEX IF NOT EXISTS idx_reading_origin
    ON core_data.reading(origin);

CREATE INDEX IF NOT EXISTS idx_reading_event_id ON core_data.reading(event_id);
CREATE INDEX IF NOT EXISTS idx_reading_device_info_id ON core_data.reading(device_info_id);
CREATE INDEX IF NOT EXISTS idx_event_device_info_id ON core_data.event(device_info_id);
CREATE INDEX IF NOT EXISTS idx_reading_device_info_origin
    ON core_data.reading(device_info_id, origin DESC);
CREATE INDEX IF NOT EXISTS idx_device_info_device_resource
    ON core_data.device_info(mark_deleted, devicename, resourcename);
";

/// The startup fill of the device_info cache (limit NULL: every row).
pub(super) const ALL_DEVICE_INFOS: &str = "SELECT * FROM core_data.device_info OFFSET $1 LIMIT $2";

/// A device_info id on a cache miss.
pub(super) const DEVICE_INFO_ID: &str = "SELECT id FROM core_data.device_info WHERE \
     devicename = $1 AND profilename = $2 AND sourcename = $3 AND tags = $4 AND \
     resourcename = $5 AND valuetype = $6 AND units = $7 AND mediatype = $8";

/// A new device_info row when [`DEVICE_INFO_ID`] found none.
pub(super) const ADD_DEVICE_INFO: &str = "INSERT INTO core_data.device_info(devicename, \
     profilename, sourcename, tags, resourcename, valuetype, units, mediatype) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";

pub(super) const ADD_EVENT: &str =
    "INSERT INTO core_data.event(id, device_info_id, origin) VALUES ($1, $2, $3)";

/// The events of a batch (`add_events`; EdgeX adds one event at a time) in one statement:
/// [`ADD_EVENT`]'s rows, from three arrays of one length. One text whatever the batch's size,
/// so it is prepared once, and three parameters, so no batch meets the protocol's 65 535.
pub(super) const ADD_EVENTS: &str = "INSERT INTO core_data.event(id, device_info_id, origin) \
     SELECT * FROM UNNEST($1::uuid[], $2::int4[], $3::int8[])";

/// The readings of one event, as pgx's `CopyFrom` sends it.
pub(super) const COPY_READINGS: &str = "copy \"core_data\".\"reading\" ( \"event_id\", \
     \"device_info_id\", \"origin\", \"value\", \"numeric_value\", \"binaryvalue\", \
     \"objectvalue\" ) from stdin binary;";

/// DeleteEventById, first statement: `$1` is the event's origin.
pub(super) const DELETE_READINGS_OF_EVENT: &str =
    "DELETE FROM core_data.reading WHERE origin <= $1 AND event_id = $2";
/// DeleteEventById, second statement.
pub(super) const DELETE_EVENT: &str = "DELETE FROM core_data.event WHERE id = $1";

/// DeleteEventsByAge, first statement: `$1` is the newest origin to delete.
pub(super) const DELETE_READINGS_BY_AGE: &str = "DELETE FROM core_data.reading WHERE \
     event_id = ANY ( SELECT event.id FROM core_data.event JOIN core_data.device_info ON \
     event.device_info_id = device_info.id WHERE origin <= $1 )";
/// DeleteEventsByAge, second statement.
pub(super) const DELETE_EVENTS_BY_AGE: &str = "DELETE FROM core_data.event USING \
     core_data.device_info WHERE event.device_info_id = device_info.id AND origin <= $1";

/// DeleteEventsByDeviceName, the synchronous step: hides the device at once.
pub(super) const MARK_DEVICE_DELETED: &str =
    "UPDATE core_data.device_info SET mark_deleted = true WHERE devicename=$1";
/// DeleteEventsByDeviceName: the rows to delete and evict.
pub(super) const DEVICE_INFOS_OF_DEVICE: &str =
    "SELECT * FROM core_data.device_info WHERE devicename = $1";
pub(super) const DELETE_READINGS_OF_DEVICE: &str = "DELETE FROM core_data.reading WHERE \
     event_id = ANY ( SELECT event.id FROM core_data.event JOIN core_data.device_info ON \
     event.device_info_id = device_info.id WHERE devicename = $1 )";
pub(super) const DELETE_EVENTS_OF_DEVICE: &str = "DELETE FROM core_data.event USING \
     core_data.device_info WHERE event.device_info_id = device_info.id AND devicename = $1";
pub(super) const DELETE_DEVICE_INFO: &str = "DELETE FROM core_data.device_info WHERE id = $1";

/// DeleteEventsByAgeAndDeviceNameAndSourceName (retention), first statement: `$1` is the
/// newest origin to delete.
pub(super) const DELETE_READINGS_OF_SOURCE_UP_TO: &str = "DELETE FROM core_data.reading WHERE \
     event_id = ANY ( SELECT event.id FROM core_data.event JOIN core_data.device_info ON \
     event.device_info_id = device_info.id WHERE origin <= $1 AND devicename = $2 AND \
     sourcename = $3 )";
/// DeleteEventsByAgeAndDeviceNameAndSourceName, second statement.
pub(super) const DELETE_EVENTS_OF_SOURCE_UP_TO: &str = "DELETE FROM core_data.event USING \
     core_data.device_info WHERE event.device_info_id = device_info.id AND origin <= $1 AND \
     devicename = $2 AND sourcename = $3";

/// DeleteEventsByDeviceNameAndSourceName (retention with MinCap <= 0 and no duration): the
/// pair's device_info rows, deleted with its events and evicted, as EdgeX's
/// `deleteEventsByConditions` does.
pub(super) const DEVICE_INFOS_OF_SOURCE: &str =
    "SELECT * FROM core_data.device_info WHERE devicename = $1 AND sourcename = $2";
pub(super) const DELETE_READINGS_OF_SOURCE: &str = "DELETE FROM core_data.reading WHERE \
     event_id = ANY ( SELECT event.id FROM core_data.event JOIN core_data.device_info ON \
     event.device_info_id = device_info.id WHERE devicename = $1 AND sourcename = $2 )";
pub(super) const DELETE_EVENTS_OF_SOURCE: &str = "DELETE FROM core_data.event USING \
     core_data.device_info WHERE event.device_info_id = device_info.id AND devicename = $1 \
     AND sourcename = $2";

/// `scrub`: EdgeX has no such call; benchmarks and tests start from empty tables with it.
pub(super) const SCRUB: &str = "TRUNCATE core_data.event, core_data.reading, core_data.device_info";
