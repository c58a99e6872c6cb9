//! What the two ports of EdgeX 4.0's schema share ([`crate::store::postgres::edgex4`] on PostgreSQL,
//! [`crate::store::sqlite::edgex4`] on SQLite): how a reading's value is spread over the value
//! columns and read back (storage-layouts.md §A.4), the `device_info` rows and the cache that
//! resolves them to ids (§A.5), and the `WHERE` clauses of the filtered counts and lists
//! (§A.6), written once with the dialect as a parameter so both stores run the same queries.
//!
//! Invariant: a [`DeviceInfo`] is written to the table and keyed in the cache with the same
//! canonical tags (object keys sorted, as EdgeX's `fmt %v` of a Go map sorts them), so a row
//! read back at startup and the same metadata from an event give the same key.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::edgex::{is_numeric, Event, Reading, ReadingValue};
use crate::store::edgex::Filter;
use crate::store::{StoreError, StoreResult};

// ---- values (§A.4) ----

/// A reading's value as EdgeX 4.0 writes it: exactly one of the value columns is set, and a
/// binary reading's media type goes to its `device_info` row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ValueColumns<'a> {
    /// `value`: every simple reading whose type is not numeric (String, Bool, arrays, ...).
    pub value: Option<&'a str>,
    /// `numeric_value`: Int*, Uint* and Float* simple readings, as the decimal text sent.
    pub numeric_value: Option<&'a str>,
    /// `binaryvalue`: the whole payload of a binary reading.
    pub binaryvalue: Option<&'a [u8]>,
    /// `objectvalue`: an Object / ObjectArray reading's JSON.
    pub objectvalue: Option<&'a Value>,
    /// `device_info.mediatype`: a binary reading's media type, else empty.
    pub mediatype: &'a str,
}

impl<'a> ValueColumns<'a> {
    /// The columns `r`'s value goes to.
    pub fn of(r: &'a Reading) -> Self {
        let none = ValueColumns {
            value: None,
            numeric_value: None,
            binaryvalue: None,
            objectvalue: None,
            mediatype: "",
        };
        match &r.value {
            ReadingValue::Simple(text) if is_numeric(&r.value_type) => ValueColumns {
                numeric_value: Some(text),
                ..none
            },
            ReadingValue::Simple(text) => ValueColumns {
                value: Some(text),
                ..none
            },
            ReadingValue::Binary { data, media_type } => ValueColumns {
                binaryvalue: Some(data),
                mediatype: media_type,
                ..none
            },
            ReadingValue::Object(json) => ValueColumns {
                objectvalue: Some(json),
                ..none
            },
        }
    }
}

/// One row of the per-event readings query or a readings list (the `RC` columns after
/// `event_id`), decoded by the store into plain values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadingRow {
    pub origin: i64,
    pub value: Option<String>,
    /// The numeric value as decimal text.
    pub numeric_value: Option<String>,
    pub binaryvalue: Option<Vec<u8>>,
    pub objectvalue: Option<Value>,
    pub devicename: String,
    pub profilename: String,
    pub resourcename: String,
    pub valuetype: String,
    pub units: String,
    pub mediatype: String,
    pub tags: Option<Value>,
}

impl ReadingRow {
    /// The reading, with an empty id (the schema keeps none). The variant is the first
    /// non-NULL column in EdgeX's order: binaryvalue, objectvalue, value, numeric_value; a row
    /// with none is EdgeX's NullReading, which this model has no variant for. `event_id`
    /// names the reading in errors.
    pub fn into_reading(self, event_id: &str) -> StoreResult<Reading> {
        let failed = |reason: String| StoreError::Decode {
            kind: "reading",
            id: format!("{} of event {event_id}", self.resourcename),
            reason,
        };
        let value = if let Some(data) = self.binaryvalue {
            ReadingValue::Binary {
                data,
                media_type: self.mediatype,
            }
        } else if let Some(json) = self.objectvalue {
            ReadingValue::Object(json)
        } else if let Some(text) = self.value.or(self.numeric_value) {
            ReadingValue::Simple(text)
        } else {
            return Err(failed(
                "every value column is NULL (an EdgeX NullReading, which edgebench's model \
                 cannot hold)"
                    .into(),
            ));
        };
        let tags = tags_of(self.tags).map_err(failed)?;
        Ok(Reading {
            id: String::new(),
            origin: self.origin,
            device_name: self.devicename,
            resource_name: self.resourcename,
            profile_name: self.profilename,
            value_type: self.valuetype,
            units: self.units,
            tags,
            value,
        })
    }
}

/// One row of an event query (the `EV` columns), decoded by the store into plain values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventRow {
    pub id: String,
    pub devicename: String,
    pub profilename: String,
    pub sourcename: String,
    pub origin: i64,
    pub tags: Option<Value>,
}

impl EventRow {
    /// The event, without its readings (the per-event query loads them).
    pub fn into_event(self) -> StoreResult<Event> {
        let tags = tags_of(self.tags).map_err(|reason| StoreError::Decode {
            kind: "event",
            id: self.id.clone(),
            reason,
        })?;
        Ok(Event {
            id: self.id,
            device_name: self.devicename,
            profile_name: self.profilename,
            source_name: self.sourcename,
            origin: self.origin,
            readings: Vec::new(),
            tags,
        })
    }
}

/// Stored tags as the model holds them: JSON `null` (EdgeX's nil map) or SQL NULL is none.
fn tags_of(tags: Option<Value>) -> Result<Option<Map<String, Value>>, String> {
    match tags {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(format!("its tags are not a JSON object: {other}")),
    }
}

// ---- device_info (§A.5) ----

/// The metadata of one `device_info` row: an event-level row (device, profile, source, event
/// tags; resource, value type, units and media type empty) or a reading-level row (source
/// empty).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DeviceInfo<'a> {
    pub devicename: &'a str,
    pub profilename: &'a str,
    pub sourcename: &'a str,
    pub resourcename: &'a str,
    pub valuetype: &'a str,
    pub units: &'a str,
    pub mediatype: &'a str,
    pub tags: Option<&'a Map<String, Value>>,
}

impl<'a> DeviceInfo<'a> {
    /// The event-level row of `e`.
    pub fn of_event(e: &'a Event) -> Self {
        DeviceInfo {
            devicename: &e.device_name,
            profilename: &e.profile_name,
            sourcename: &e.source_name,
            resourcename: "",
            valuetype: "",
            units: "",
            mediatype: "",
            tags: e.tags.as_ref(),
        }
    }

    /// The reading-level row of `r`.
    pub fn of_reading(r: &'a Reading) -> Self {
        DeviceInfo {
            devicename: &r.device_name,
            profilename: &r.profile_name,
            sourcename: "",
            resourcename: &r.resource_name,
            valuetype: &r.value_type,
            units: &r.units,
            mediatype: ValueColumns::of(r).mediatype,
            tags: r.tags.as_ref(),
        }
    }

    /// The tags as stored and compared: canonical JSON text, `null` for none.
    pub fn tags_text(&self) -> String {
        let mut out = Vec::new();
        self.write_tags(&mut out);
        // `canonical_json` writes only what serde_json writes: UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }

    fn write_tags(&self, out: &mut Vec<u8>) {
        match self.tags {
            Some(map) => canonical_object(map, out),
            None => out.extend_from_slice(b"null"),
        }
    }

    /// The cache key, into `key` (cleared first): every field, then the canonical tags.
    /// EdgeX hashes the same fields, concatenated, with MD5; the fields are separated here
    /// (by a byte no name contains in practice) so that `("ab", "c")` and `("a", "bc")`
    /// cannot share a key, and the key is kept whole rather than hashed.
    pub fn write_key(&self, key: &mut Vec<u8>) {
        key.clear();
        for field in [
            self.devicename,
            self.profilename,
            self.sourcename,
            self.resourcename,
            self.valuetype,
            self.units,
            self.mediatype,
        ] {
            key.extend_from_slice(field.as_bytes());
            key.push(0x1f);
        }
        self.write_tags(key);
    }
}

/// `value` as JSON with the keys of every object sorted, so equal tags give equal text
/// whatever order they were sent or stored in (JSONB reorders keys).
pub(crate) fn canonical_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        // Writing to a Vec cannot fail, and scalars always serialize.
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

fn canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, key);
        let _ = out.write_all(b":");
        canonical_json(value, out);
    }
    out.push(b'}');
}

/// The text columns of a `device_info` row that make its cache key, in key order (the tags
/// come last).
const KEY_COLUMNS: [&str; 7] = [
    "devicename",
    "profilename",
    "sourcename",
    "resourcename",
    "valuetype",
    "units",
    "mediatype",
];

/// The key of a stored `device_info` row, rebuilt from its columns (the startup fill):
/// `column` reads a text column by name (NULL as empty), `tags` is the parsed tags column.
pub(crate) fn stored_key<E>(
    column: impl Fn(&str) -> Result<Option<String>, E>,
    tags: &Option<Value>,
    key: &mut Vec<u8>,
) -> Result<(), E> {
    key.clear();
    for name in KEY_COLUMNS {
        key.extend_from_slice(column(name)?.unwrap_or_default().as_bytes());
        key.push(0x1f);
    }
    match tags {
        Some(tags) => canonical_json(tags, key),
        None => key.extend_from_slice(b"null"),
    }
    Ok(())
}

/// EdgeX's device_info cache: key ([`DeviceInfo::write_key`]) → id. EdgeX keeps one per
/// core-data service; here a database value ([`super::Pg4Database`],
/// [`crate::store::sqlite::edgex4::Sqlite4Database`]) keeps one that all its stores share, so
/// a device deleted through one store is evicted for all of them, as in the service. The
/// mutex is held only for one map operation.
#[derive(Debug, Default)]
pub(crate) struct DeviceInfoCache {
    ids: Mutex<HashMap<Vec<u8>, i64>>,
}

impl DeviceInfoCache {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, i64>> {
        // A panic while holding the lock cannot leave the map half-updated: every use is one
        // map call.
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn get(&self, key: &[u8]) -> Option<i64> {
        self.ids().get(key).copied()
    }

    pub fn insert(&self, key: Vec<u8>, id: i64) {
        self.ids().insert(key, id);
    }

    /// Forgets the rows with these ids (their device was deleted).
    pub fn evict(&self, ids: &[i64]) {
        self.ids().retain(|_, id| !ids.contains(id));
    }

    pub fn clear(&self) {
        self.ids().clear();
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids().len()
    }
}

// ---- filtered statements (§A.6) ----

/// How one SQL dialect spells what differs between the ports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    /// The schema prefix of table names: `core_data.` on PostgreSQL, none on SQLite.
    pub schema: &'static str,
    /// The placeholder sigil: `$` (`$1`) on PostgreSQL, `?` (`?1`) on SQLite.
    pub sigil: char,
    /// SQLite's grammar has only `LIMIT n OFFSET m`; PostgreSQL takes EdgeX's
    /// `OFFSET m LIMIT n`.
    pub limit_first: bool,
    /// The physical row order that breaks ties among an event's readings (the one addition
    /// to EdgeX's SQL): `reading.ctid` on PostgreSQL, `reading.rowid` on SQLite.
    pub row_order: &'static str,
}

/// Which filter fields are set: the shape of a filtered statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub device: bool,
    pub resource: bool,
    pub range: bool,
}

impl Shape {
    /// The shape of `filter`; `for_events` drops the resource (events have none).
    pub fn of(filter: &Filter<'_>, for_events: bool) -> Shape {
        Shape {
            device: filter.device.is_some(),
            resource: filter.resource.is_some() && !for_events,
            range: filter.range.is_some(),
        }
    }

    /// An index in `0..8`.
    pub fn index(self) -> usize {
        usize::from(self.device) | usize::from(self.resource) << 1 | usize::from(self.range) << 2
    }

    /// Every shape, by [`Self::index`].
    pub fn all() -> [Shape; 8] {
        std::array::from_fn(|i| Shape {
            device: i & 1 != 0,
            resource: i & 2 != 0,
            range: i & 4 != 0,
        })
    }

    /// How many parameters the `WHERE` clause takes.
    pub fn params(self) -> usize {
        usize::from(self.device) + usize::from(self.resource) + 2 * usize::from(self.range)
    }
}

/// The filter terms after `WHERE mark_deleted = false`, numbered from 1 in EdgeX's order
/// (pgx numbers named arguments by first appearance): `origin >= start AND origin <= end`
/// first when there is a range, then `devicename`, then `resourcename`. The caller binds its
/// values in that order ([`filter_values`]).
fn filter_terms(shape: Shape, d: Dialect) -> String {
    let s = d.sigil;
    let mut terms = String::new();
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    if shape.range {
        let (a, b) = (next(), next());
        terms.push_str(&format!(" AND origin >= {s}{a} AND origin <= {s}{b}"));
    }
    if shape.device {
        terms.push_str(&format!(" AND devicename = {s}{}", next()));
    }
    if shape.resource {
        terms.push_str(&format!(" AND resourcename = {s}{}", next()));
    }
    terms
}

/// A filter's values in the order [`filter_terms`] numbers them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FilterValue<'a> {
    Origin(i64),
    Name(&'a str),
}

/// The values of `filter`'s terms for `shape` (the resource is skipped when the shape has
/// none, as for events).
pub(crate) fn filter_values<'a>(filter: &Filter<'a>, shape: Shape) -> Vec<FilterValue<'a>> {
    let mut values = Vec::with_capacity(shape.params());
    if let (true, Some((start, end))) = (shape.range, filter.range) {
        values.extend([FilterValue::Origin(start), FilterValue::Origin(end)]);
    }
    if let (true, Some(device)) = (shape.device, filter.device) {
        values.push(FilterValue::Name(device));
    }
    if let (true, Some(resource)) = (shape.resource, filter.resource) {
        values.push(FilterValue::Name(resource));
    }
    values
}

/// `EV`: the columns of an event query.
const EV: &str = "event.id, devicename, profilename, sourcename, origin, tags";
/// `RC`: the columns of a reading query.
const RC: &str = "event_id, origin, value, numeric_value, binaryvalue, objectvalue, \
     devicename, profilename, resourcename, valuetype, units, mediatype, tags";

/// `EJ`: events joined to their device_info rows.
fn ej(d: Dialect) -> String {
    let p = d.schema;
    format!("{p}event JOIN {p}device_info ON event.device_info_id = device_info.id")
}

/// `RJ`: readings joined to their device_info rows.
fn rj(d: Dialect) -> String {
    let p = d.schema;
    format!("{p}reading JOIN {p}device_info ON reading.device_info_id = device_info.id")
}

/// `SELECT EV FROM EJ WHERE ...`, the start of every event query.
fn select_events(d: Dialect) -> String {
    format!("SELECT {EV} FROM {}", ej(d))
}

/// The statements of one dialect built from the shared column lists and filter clauses: the
/// filtered counts and lists by [`Shape::index`], EventById and the per-event readings query.
#[derive(Debug, Clone)]
pub(crate) struct SharedSql {
    pub event_count: [String; 8],
    pub events: [String; 8],
    pub reading_count: [String; 8],
    pub readings: [String; 8],
    /// EventById: no `mark_deleted` filter, as in EdgeX.
    pub event_by_id: String,
    /// The readings of one event: EdgeX's query, `ORDER BY origin DESC`, plus the tie-break
    /// [`Dialect::row_order`].
    pub readings_of_event: String,
    /// EventCountByDeviceNameAndSourceNameAndLimit, without and with a time range (index:
    /// whether there is one): `COUNT(*)` of a subquery that stops at the limit. Parameters:
    /// the range's two ends if any, then the device, the source, the limit.
    pub source_event_count: [String; 2],
    /// LatestEventByDeviceNameAndSourceName[AndAge]AndOffset as a page, without and with a
    /// time range (EdgeX's age query is the range `..= now − age`). Parameters: the range's
    /// ends if any, the device, the source, then the page's offset and limit.
    pub source_events: [String; 2],
    /// The (device, source) pairs with at least one event: the event-level device_info rows
    /// (EdgeX's cache of them is what its retention walks) that still have an event, by
    /// `idx_event_device_info_id`, so the cost follows the device_info rows, not the events.
    pub device_sources: String,
}

impl SharedSql {
    /// Every shared statement of `d`. Event statements ignore the resource bit (their
    /// entries with it set repeat the ones without).
    pub fn new(d: Dialect) -> Self {
        let s = d.sigil;
        let page = |shape: Shape| {
            let (offset, limit) = (shape.params() + 1, shape.params() + 2);
            if d.limit_first {
                format!(" ORDER BY origin DESC LIMIT {s}{limit} OFFSET {s}{offset}")
            } else {
                format!(" ORDER BY origin DESC OFFSET {s}{offset} LIMIT {s}{limit}")
            }
        };
        let event_shape = |shape: Shape| Shape {
            resource: false,
            ..shape
        };
        let (ej, rj) = (ej(d), rj(d));
        let shapes = Shape::all();
        // The retention queries: the range first (as EdgeX numbers `origin <= @end` before
        // the names), then devicename and sourcename.
        let source_terms = |range: bool| {
            let (device, source) = if range { (3, 4) } else { (1, 2) };
            let range = if range {
                format!(" AND origin >= {s}1 AND origin <= {s}2")
            } else {
                String::new()
            };
            format!("{range} AND devicename = {s}{device} AND sourcename = {s}{source}")
        };
        let next = |range: bool| if range { 5 } else { 3 };
        SharedSql {
            source_event_count: [false, true].map(|range| {
                format!(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM {ej} WHERE mark_deleted = false{} \
                     LIMIT {s}{}) limited_count",
                    source_terms(range),
                    next(range)
                )
            }),
            source_events: [false, true].map(|range| {
                let (offset, limit) = (next(range), next(range) + 1);
                let page = if d.limit_first {
                    format!(" ORDER BY origin DESC LIMIT {s}{limit} OFFSET {s}{offset}")
                } else {
                    format!(" ORDER BY origin DESC OFFSET {s}{offset} LIMIT {s}{limit}")
                };
                format!(
                    "{} WHERE mark_deleted = false{}{page}",
                    select_events(d),
                    source_terms(range)
                )
            }),
            device_sources: format!(
                "SELECT DISTINCT devicename, sourcename FROM {p}device_info WHERE \
                 mark_deleted = false AND sourcename <> '' AND EXISTS (SELECT 1 FROM {p}event \
                 WHERE event.device_info_id = device_info.id)",
                p = d.schema
            ),
            event_by_id: format!("{} WHERE {}event.id={s}1", select_events(d), d.schema),
            readings_of_event: format!(
                "SELECT {RC} FROM {rj} WHERE mark_deleted = false AND event_id = {s}1 \
                 ORDER BY origin DESC, {}",
                d.row_order
            ),
            event_count: shapes.map(|sh| {
                let sh = event_shape(sh);
                format!(
                    "SELECT COUNT(*) FROM {ej} WHERE mark_deleted = false{}",
                    filter_terms(sh, d)
                )
            }),
            events: shapes.map(|sh| {
                let sh = event_shape(sh);
                format!(
                    "{} WHERE mark_deleted = false{}{}",
                    select_events(d),
                    filter_terms(sh, d),
                    page(sh)
                )
            }),
            reading_count: shapes.map(|sh| {
                format!(
                    "SELECT COUNT(*) FROM {rj} WHERE mark_deleted = false{}",
                    filter_terms(sh, d)
                )
            }),
            readings: shapes.map(|sh| {
                format!(
                    "SELECT {RC} FROM {rj} WHERE mark_deleted = false{}{}",
                    filter_terms(sh, d),
                    page(sh)
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PG: Dialect = Dialect {
        schema: "core_data.",
        sigil: '$',
        limit_first: false,
        row_order: "reading.ctid",
    };

    #[test]
    fn filtered_statements_number_parameters_in_edgex_order() {
        let sql = SharedSql::new(PG);
        let all = Shape::all();
        let both = all[3].index();
        assert_eq!(
            sql.reading_count[both],
            "SELECT COUNT(*) FROM core_data.reading JOIN core_data.device_info ON \
             reading.device_info_id = device_info.id WHERE mark_deleted = false \
             AND devicename = $1 AND resourcename = $2"
        );
        assert_eq!(
            sql.events[5],
            "SELECT event.id, devicename, profilename, sourcename, origin, tags FROM \
             core_data.event JOIN core_data.device_info ON event.device_info_id = \
             device_info.id WHERE mark_deleted = false AND origin >= $1 AND origin <= $2 \
             AND devicename = $3 ORDER BY origin DESC OFFSET $4 LIMIT $5"
        );
        // Events have no resource: the shape with it is the shape without.
        assert_eq!(sql.events[7], sql.events[5]);
        assert_eq!(
            sql.readings_of_event,
            "SELECT event_id, origin, value, numeric_value, binaryvalue, objectvalue, \
             devicename, profilename, resourcename, valuetype, units, mediatype, tags FROM \
             core_data.reading JOIN core_data.device_info ON reading.device_info_id = \
             device_info.id WHERE mark_deleted = false AND event_id = $1 \
             ORDER BY origin DESC, reading.ctid"
        );
        assert!(sql.event_by_id.ends_with(" WHERE core_data.event.id=$1"));
        assert_eq!(
            sql.source_event_count[0],
            "SELECT COUNT(*) FROM (SELECT 1 FROM core_data.event JOIN core_data.device_info ON \
             event.device_info_id = device_info.id WHERE mark_deleted = false AND devicename = \
             $1 AND sourcename = $2 LIMIT $3) limited_count"
        );
        assert!(
            sql.source_events[1].ends_with(
                "WHERE mark_deleted = false AND origin >= $1 AND origin <= $2 AND devicename = \
                 $3 AND sourcename = $4 ORDER BY origin DESC OFFSET $5 LIMIT $6"
            ),
            "{}",
            sql.source_events[1]
        );
        let lite = SharedSql::new(Dialect {
            schema: "",
            sigil: '?',
            limit_first: true,
            row_order: "reading.rowid",
        });
        assert!(
            lite.readings[0]
                .ends_with("mark_deleted = false ORDER BY origin DESC LIMIT ?2 OFFSET ?1"),
            "{}",
            lite.readings[0]
        );
        assert!(
            lite.source_events[0].ends_with(
                "AND devicename = ?1 AND sourcename = ?2 ORDER BY origin DESC LIMIT ?4 OFFSET ?3"
            ),
            "{}",
            lite.source_events[0]
        );
        let f = Filter::device("d").between(1, 2);
        assert_eq!(
            filter_values(&f, Shape::of(&f, true)),
            [
                FilterValue::Origin(1),
                FilterValue::Origin(2),
                FilterValue::Name("d")
            ]
        );
    }

    #[test]
    fn device_info_keys_ignore_tag_order_and_match_stored_rows() {
        let tags_ab = json!({"a": 1, "b": {"y": [1, {"q": 2, "p": 1}], "x": null}});
        let tags_ba = json!({"b": {"x": null, "y": [1, {"p": 1, "q": 2}]}, "a": 1});
        let (Value::Object(ab), Value::Object(ba)) = (&tags_ab, &tags_ba) else {
            panic!("objects")
        };
        let info = |tags| DeviceInfo {
            devicename: "d",
            profilename: "p",
            sourcename: "s",
            resourcename: "",
            valuetype: "",
            units: "",
            mediatype: "",
            tags,
        };
        let (mut k1, mut k2, mut k3) = (Vec::new(), Vec::new(), Vec::new());
        info(Some(ab)).write_key(&mut k1);
        info(Some(ba)).write_key(&mut k2);
        let columns = |name: &str| -> Result<Option<String>, ()> {
            Ok(match name {
                "devicename" => Some("d".into()),
                "profilename" => Some("p".into()),
                "sourcename" => Some("s".into()),
                "resourcename" => None,
                _ => Some(String::new()),
            })
        };
        assert_eq!(stored_key(columns, &Some(tags_ba.clone()), &mut k3), Ok(()));
        assert_eq!(k1, k2);
        assert_eq!(k1, k3);
        assert_eq!(
            info(Some(ba)).tags_text(),
            r#"{"a":1,"b":{"x":null,"y":[1,{"p":1,"q":2}]}}"#
        );
        // No tags is JSON null, and differs from empty tags.
        info(None).write_key(&mut k1);
        assert_eq!(stored_key(columns, &None, &mut k2), Ok(()));
        assert_eq!(k1, k2);
        let empty = Map::new();
        info(Some(&empty)).write_key(&mut k2);
        assert_ne!(k1, k2);
        // Fields are separated: moving a character between fields changes the key.
        let mut moved = info(None);
        (moved.devicename, moved.profilename) = ("dp", "");
        moved.write_key(&mut k2);
        assert_ne!(k1, k2);
    }

    #[test]
    fn rows_decode_in_edgex_column_order() {
        let row = ReadingRow {
            origin: 5,
            value: Some("text".into()),
            numeric_value: Some("1.5".into()),
            binaryvalue: None,
            objectvalue: Some(json!({"k": 1})),
            devicename: "d".into(),
            profilename: "p".into(),
            resourcename: "r".into(),
            valuetype: "Object".into(),
            units: String::new(),
            mediatype: String::new(),
            tags: Some(Value::Null),
        };
        let r = row
            .clone()
            .into_reading("e")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.value, ReadingValue::Object(json!({"k": 1})));
        assert_eq!((r.id.as_str(), r.tags), ("", None));
        let numeric = ReadingRow {
            value: None,
            objectvalue: None,
            ..row.clone()
        };
        let r = numeric.into_reading("e").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.value, ReadingValue::Simple("1.5".into()));
        let null = ReadingRow {
            value: None,
            numeric_value: None,
            objectvalue: None,
            ..row
        };
        match null.into_reading("e") {
            Err(StoreError::Decode { kind, id, reason }) => {
                assert_eq!((kind, id.as_str()), ("reading", "r of event e"));
                assert!(reason.contains("NullReading"), "{reason}");
            }
            other => panic!("expected a Decode error, got {other:?}"),
        }
    }
}
