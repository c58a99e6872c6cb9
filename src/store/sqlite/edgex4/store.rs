//! [`Sqlite4Store`]: the [`EventStore`] over one SQLite connection to a database with the
//! SQLite port of EdgeX 4.0's schema, running the ported statements in EdgeX's order.
//! Statements go through rusqlite's per-connection statement cache (`prepare_cached`).

use std::sync::{Arc, OnceLock};

use rusqlite::{params, Connection, Params, Row, ToSql, TransactionBehavior};
use serde_json::Value;

use super::schema::*;
use crate::edgex::{normalize_uuid, now_ns, Event, Reading};
use crate::store::edgex::sql4::{
    filter_values, stored_key, DeviceInfo, DeviceInfoCache, EventRow, FilterValue, ReadingRow,
    Shape, SharedSql, ValueColumns,
};
use crate::store::edgex::{
    Behaviour, DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter,
};
use crate::store::sqlite::{backend_error, database_bytes, fix_for, one_line};
use crate::store::{StoreError, StoreResult, UNLIMITED};

/// The shared statements in this dialect, built once per process.
fn sql() -> &'static SharedSql {
    static SQL: OnceLock<SharedSql> = OnceLock::new();
    SQL.get_or_init(|| SharedSql::new(DIALECT))
}

/// A failed statement, as one line that names it.
fn failed(statement: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| backend_error(format!("{statement}: {}{}", one_line(&e), fix_for(&e)))
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound {
        kind: "event",
        id: id.to_string(),
    }
}

/// A page's `OFFSET` and `LIMIT`: [`UNLIMITED`] (or anything past `i64::MAX`) is SQLite's
/// `LIMIT -1`, all rows (EdgeX's `LIMIT NULL`, which SQLite does not take).
fn offset_limit(page: Page) -> (i64, i64) {
    let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
    let limit = match page.limit {
        UNLIMITED => -1,
        n => i64::try_from(n).unwrap_or(-1),
    };
    (offset, limit)
}

/// A JSON column (`tags`, `objectvalue`): its text parsed, NULL as none. `what` names the
/// record in the error.
fn json(text: Option<String>, kind: &'static str, what: &str) -> StoreResult<Option<Value>> {
    text.map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| StoreError::Decode {
            kind,
            id: what.to_string(),
            reason: format!("a JSON column holds invalid JSON: {e}"),
        })
}

fn text(row: &Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(row.get::<_, Option<String>>(i)?.unwrap_or_default())
}

/// An `EV` row; the tags are still text.
fn event_row(row: &Row<'_>) -> rusqlite::Result<(EventRow, Option<String>)> {
    let event = EventRow {
        id: text(row, 0)?,
        devicename: text(row, 1)?,
        profilename: text(row, 2)?,
        sourcename: text(row, 3)?,
        origin: row.get::<_, Option<i64>>(4)?.unwrap_or_default(),
        tags: None,
    };
    Ok((event, row.get(5)?))
}

/// The JSON text of an `RC` row's `objectvalue` and `tags`.
type JsonTexts = (Option<String>, Option<String>);

/// An `RC` row: the event id, and the reading's columns; the JSON ones are still text.
fn reading_row(row: &Row<'_>) -> rusqlite::Result<(String, ReadingRow, JsonTexts)> {
    let reading = ReadingRow {
        origin: row.get::<_, Option<i64>>(1)?.unwrap_or_default(),
        value: row.get(2)?,
        numeric_value: row.get(3)?,
        binaryvalue: row.get(4)?,
        objectvalue: None,
        devicename: text(row, 6)?,
        profilename: text(row, 7)?,
        resourcename: text(row, 8)?,
        valuetype: text(row, 9)?,
        units: text(row, 10)?,
        mediatype: text(row, 11)?,
        tags: None,
    };
    Ok((text(row, 0)?, reading, (row.get(5)?, row.get(12)?)))
}

/// The readings of `rows` from a statement that selects `RC`.
fn readings_of_rows(name: &str, mut rows: rusqlite::Rows<'_>) -> StoreResult<Vec<Reading>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(failed(name))? {
        let (event_id, mut r, (object, tags)) = reading_row(row).map_err(failed(name))?;
        let what = format!("{} of event {event_id}", r.resourcename);
        r.objectvalue = json(object, "reading", &what)?;
        r.tags = json(tags, "reading", &what)?;
        out.push(r.into_reading(&event_id)?);
    }
    Ok(out)
}

/// The [`EventStore`] over one SQLite connection, made by
/// [`Sqlite4Database::open_store`](super::Sqlite4Database::open_store).
pub struct Sqlite4Store {
    conn: Connection,
    device_infos: Arc<DeviceInfoCache>,
    /// Scratch space for device_info cache keys.
    key: Vec<u8>,
    /// The database's description, for `Debug`.
    name: String,
}

impl std::fmt::Debug for Sqlite4Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite4Store")
            .field("database", &self.name)
            .finish_non_exhaustive()
    }
}

impl Sqlite4Store {
    /// A store over `conn` sharing `device_infos` with the other stores of its database; adds
    /// the rows already in the table to it, as EdgeX fills its cache at startup.
    pub(super) fn new(
        conn: Connection,
        device_infos: Arc<DeviceInfoCache>,
        name: String,
    ) -> StoreResult<Sqlite4Store> {
        let mut store = Sqlite4Store {
            conn,
            device_infos,
            key: Vec::new(),
            name,
        };
        store.fill_cache()?;
        Ok(store)
    }

    /// How many device_info ids the cache holds.
    #[cfg(test)]
    pub(super) fn cached_device_infos(&self) -> usize {
        self.device_infos.len()
    }

    /// The connection, for tests that look at the tables.
    #[cfg(test)]
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    fn execute(&self, name: &str, sql: &str, params: impl Params) -> StoreResult<usize> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params))
            .map_err(failed(name))
    }

    /// EdgeX's `AllDeviceInfos` at startup: every row into the cache.
    fn fill_cache(&mut self) -> StoreResult<()> {
        let name = "all device infos";
        let mut stmt = self
            .conn
            .prepare_cached(ALL_DEVICE_INFOS)
            .map_err(failed(name))?;
        let mut rows = stmt.query(params![0i64, -1i64]).map_err(failed(name))?;
        while let Some(row) = rows.next().map_err(failed(name))? {
            let id: i64 = row.get("id").map_err(failed(name))?;
            let tags = row.get::<_, Option<String>>("tags").map_err(failed(name))?;
            let tags = json(tags, "device_info", &format!("row {id}"))?;
            stored_key(|column| row.get(column), &tags, &mut self.key).map_err(failed(name))?;
            self.device_infos.insert(self.key.clone(), id);
        }
        Ok(())
    }

    /// The id of `info`'s device_info row: from the cache, else found, else inserted (each
    /// in autocommit, outside the event's transaction, as in EdgeX).
    fn device_info_id(&mut self, info: &DeviceInfo<'_>) -> StoreResult<i64> {
        info.write_key(&mut self.key);
        if let Some(id) = self.device_infos.get(&self.key) {
            return Ok(id);
        }
        let tags = info.tags_text();
        let params = params![
            info.devicename,
            info.profilename,
            info.sourcename,
            tags,
            info.resourcename,
            info.valuetype,
            info.units,
            info.mediatype,
        ];
        let found: Option<i64> = self
            .conn
            .prepare_cached(DEVICE_INFO_ID)
            .and_then(|mut s| {
                let mut rows = s.query(params)?;
                rows.next()?.map(|row| row.get(0)).transpose()
            })
            .map_err(failed("device info id"))?;
        let id = match found {
            Some(id) => id,
            None => self
                .conn
                .prepare_cached(ADD_DEVICE_INFO)
                .and_then(|mut s| s.query_row(params, |row| row.get(0)))
                .map_err(failed("add device info"))?,
        };
        self.device_infos.insert(self.key.clone(), id);
        Ok(id)
    }

    /// The rows' values of `event`, stored as `id`: its device_info ids (cache, else
    /// found, else inserted) and its object values as JSON text.
    fn rows_of(&mut self, event: &Event, id: String) -> StoreResult<EventRows> {
        let event_info = self.device_info_id(&DeviceInfo::of_event(event))?;
        let readings = event
            .readings
            .iter()
            .map(|r| {
                let info = self.device_info_id(&DeviceInfo::of_reading(r))?;
                Ok((info, ValueColumns::of(r).objectvalue.map(Value::to_string)))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(EventRows {
            id,
            event_info,
            readings,
        })
    }

    /// The readings of event `id` (lowercase): EdgeX's per-event query.
    fn readings_of(&self, id: &str) -> StoreResult<Vec<Reading>> {
        let name = "readings of event";
        let mut stmt = self
            .conn
            .prepare_cached(&sql().readings_of_event)
            .map_err(failed(name))?;
        let rows = stmt.query([id]).map_err(failed(name))?;
        readings_of_rows(name, rows)
    }

    /// Events from `EV` rows, then each one's readings (N+1, as EdgeX).
    fn events_of(&self, name: &str, sql: &str, params: &[&dyn ToSql]) -> StoreResult<Vec<Event>> {
        let mut found = Vec::new();
        {
            let mut stmt = self.conn.prepare_cached(sql).map_err(failed(name))?;
            let mut rows = stmt.query(params).map_err(failed(name))?;
            while let Some(row) = rows.next().map_err(failed(name))? {
                let (mut event, tags) = event_row(row).map_err(failed(name))?;
                event.tags = json(tags, "event", &event.id)?;
                found.push(event.into_event()?);
            }
        }
        for event in &mut found {
            event.readings = self.readings_of(&event.id)?;
        }
        Ok(found)
    }

    /// EdgeX's EventById, which wants exactly one row.
    fn event_by_lowercase_id(&self, id: &str) -> StoreResult<Event> {
        let mut events = self.events_of("event by id", &sql().event_by_id, &[&id])?;
        match events.len() {
            0 => Err(not_found(id)),
            1 => Ok(events.remove(0)),
            n => Err(StoreError::Decode {
                kind: "event",
                id: id.to_string(),
                reason: format!(
                    "it is stored {n} times (EdgeX 4.0's schema has no unique key on event.id, \
                     and its EventById fails on more than one row too)"
                ),
            }),
        }
    }

    /// The `COUNT(*)` of `sql` with `values` as its parameters.
    fn count(&self, name: &str, sql: &str, values: &[FilterValue<'_>]) -> StoreResult<u64> {
        let params = bind(values, &[]);
        let n: i64 = self
            .conn
            .prepare_cached(sql)
            .and_then(|mut s| s.query_row(params.as_slice(), |row| row.get(0)))
            .map_err(failed(name))?;
        // COUNT(*) is never negative.
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// EdgeX's `deleteEventsByConditions`: the device_info rows `infos` selects, then one
    /// transaction deleting the readings and events `readings` and `events` select and those
    /// rows; the rows leave the cache once committed. `what` names it in errors.
    fn delete_with_device_infos(
        &mut self,
        what: &str,
        [infos, readings, events]: [&str; 3],
        params: &[&dyn ToSql],
    ) -> StoreResult<()> {
        let found = format!("device infos of {what}");
        let ids = self
            .conn
            .prepare_cached(infos)
            .and_then(|mut s| {
                s.query_map(params, |row| row.get::<_, i64>("id"))?
                    .collect::<rusqlite::Result<Vec<i64>>>()
            })
            .map_err(failed(&found))?;
        let tx = self.begin()?;
        for (name, sql) in [
            (format!("delete readings of {what}"), readings),
            (format!("delete events of {what}"), events),
        ] {
            tx.prepare_cached(sql)
                .and_then(|mut s| s.execute(params))
                .map_err(failed(&name))?;
        }
        {
            let mut delete = tx
                .prepare_cached(DELETE_DEVICE_INFO)
                .map_err(failed("delete device info"))?;
            for id in &ids {
                delete.execute([id]).map_err(failed("delete device info"))?;
            }
        }
        tx.commit().map_err(failed("commit"))?;
        self.device_infos.evict(&ids);
        Ok(())
    }

    fn begin(&mut self) -> StoreResult<rusqlite::Transaction<'_>> {
        // IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading.
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed("begin"))
    }
}

/// What an event's rows hold besides the event: its stored id, its event-level device_info
/// id, and each reading's device_info id and `objectvalue` text.
struct EventRows {
    id: String,
    event_info: i64,
    readings: Vec<(i64, Option<String>)>,
}

/// `event`'s id as stored (lowercase, hyphenated); an id that is not a UUID is refused.
fn stored_id(event: &Event) -> StoreResult<String> {
    normalize_uuid(&event.id).ok_or_else(|| {
        backend_error(format!(
            "event id {:?} is not a UUID: EdgeX ids are UUIDs",
            event.id
        ))
    })
}

/// Inserts `event`'s row and one row per reading in `tx`.
fn insert(tx: &rusqlite::Transaction<'_>, event: &Event, rows: &EventRows) -> StoreResult<()> {
    let id = &rows.id;
    tx.prepare_cached(ADD_EVENT)
        .and_then(|mut s| s.execute(params![id, rows.event_info, event.origin]))
        .map_err(failed("add event"))?;
    let adding = format!("add readings of event {id}");
    let mut add = tx.prepare_cached(ADD_READING).map_err(failed(&adding))?;
    for (r, (info, object)) in event.readings.iter().zip(&rows.readings) {
        let v = ValueColumns::of(r);
        add.execute(params![
            id,
            info,
            r.origin,
            v.value,
            v.numeric_value,
            v.binaryvalue,
            object
        ])
        .map_err(failed(&adding))?;
    }
    Ok(())
}

/// A retention statement's parameters for `filter` (the range's ends if any, the device, the
/// source), then `extra`.
fn source_params<'a>(filter: &'a SourceFilter<'a>, extra: &[&'a dyn ToSql]) -> Vec<&'a dyn ToSql> {
    let mut params: Vec<&dyn ToSql> = Vec::with_capacity(6);
    if let Some((start, end)) = &filter.range {
        params.extend([start as &dyn ToSql, end]);
    }
    params.extend([&filter.device as &dyn ToSql, &filter.source]);
    params.extend_from_slice(extra);
    params
}

/// `values` as SQLite parameters, then `extra`.
fn bind<'a>(values: &'a [FilterValue<'a>], extra: &[&'a dyn ToSql]) -> Vec<&'a dyn ToSql> {
    let mut params: Vec<&dyn ToSql> = values
        .iter()
        .map(|v| match v {
            FilterValue::Origin(o) => o as &dyn ToSql,
            FilterValue::Name(n) => n as &dyn ToSql,
        })
        .collect();
    params.extend_from_slice(extra);
    params
}

impl EventStore for Sqlite4Store {
    /// AddEvent as EdgeX 4.0 runs it on PostgreSQL: the device_info ids, then one
    /// transaction with the event row and one `INSERT` per reading. No duplicate-id check.
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let id = stored_id(event)?;
        let rows = self.rows_of(event, id)?;
        let tx = self.begin()?;
        insert(&tx, event, &rows)?;
        tx.commit().map_err(failed("commit"))
    }

    /// AddEvent for a batch: every id checked a UUID, then every device_info id (as
    /// `add_event`, in autocommit), then one transaction with every event's rows. No
    /// duplicate-id check, as in EdgeX 4.0.
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        // Every id first: a batch with one bad id writes nothing, not even device_info rows.
        let ids = events
            .iter()
            .map(stored_id)
            .collect::<StoreResult<Vec<String>>>()?;
        let rows = events
            .iter()
            .zip(ids)
            .map(|(event, id)| self.rows_of(event, id))
            .collect::<StoreResult<Vec<EventRows>>>()?;
        let tx = self.begin()?;
        for (event, rows) in events.iter().zip(&rows) {
            insert(&tx, event, rows)?;
        }
        tx.commit().map_err(failed("commit"))
    }

    /// One transaction: the batch is whole or absent.
    fn adds_batches_whole(&self) -> bool {
        true
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let lowercase = normalize_uuid(id).ok_or_else(|| not_found(id))?;
        self.event_by_lowercase_id(&lowercase).map_err(|e| match e {
            StoreError::NotFound { kind, .. } => StoreError::NotFound {
                kind,
                id: id.to_string(),
            },
            other => other,
        })
    }

    /// EdgeX's DeleteEventById: EventById, then one transaction deleting the readings with
    /// `origin <=` the event's (none deleted fails it, as in EdgeX) and the event.
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let event = self.event_by_id(id)?;
        let tx = self.begin()?;
        let n = tx
            .prepare_cached(DELETE_READINGS_OF_EVENT)
            .and_then(|mut s| s.execute(params![event.origin, event.id]))
            .map_err(failed("delete readings of event"))?;
        if n == 0 {
            // Dropping `tx` rolls it back.
            return Err(backend_error(format!(
                "delete event {}: no reading with origin <= the event's {} was deleted, so \
                 EdgeX 4.0 fails the delete and keeps the event",
                event.id, event.origin
            )));
        }
        tx.prepare_cached(DELETE_EVENT)
            .and_then(|mut s| s.execute([&event.id]))
            .map_err(failed("delete event"))?;
        tx.commit().map_err(failed("commit"))
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let shape = Shape::of(&filter, true);
        let values = filter_values(&filter, shape);
        self.count("event count", &sql().event_count[shape.index()], &values)
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let shape = Shape::of(&filter, true);
        let values = filter_values(&filter, shape);
        let (offset, limit) = offset_limit(page);
        let params = bind(&values, &[&offset, &limit]);
        self.events_of("events", &sql().events[shape.index()], &params)
    }

    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        match doomed {
            Doomed::OlderThan { age_ns } => {
                // EdgeX deletes `origin <= now - age`; the trait promises `< now - age`.
                let end = now_ns().saturating_sub(age_ns).saturating_sub(1);
                let tx = self.begin()?;
                for (name, sql) in [
                    ("delete readings by age", DELETE_READINGS_BY_AGE),
                    ("delete events by age", DELETE_EVENTS_BY_AGE),
                ] {
                    tx.prepare_cached(sql)
                        .and_then(|mut s| s.execute([end]))
                        .map_err(failed(name))?;
                }
                tx.commit().map_err(failed("commit"))
            }
            Doomed::Device(device) => {
                self.execute("mark device deleted", MARK_DEVICE_DELETED, [device])?;
                self.delete_with_device_infos(
                    "device",
                    [
                        DEVICE_INFOS_OF_DEVICE,
                        DELETE_READINGS_OF_DEVICE,
                        DELETE_EVENTS_OF_DEVICE,
                    ],
                    &[&device],
                )
            }
            Doomed::Source {
                device,
                source,
                up_to_ns: i64::MAX,
            } => self.delete_with_device_infos(
                "source",
                [
                    DEVICE_INFOS_OF_SOURCE,
                    DELETE_READINGS_OF_SOURCE,
                    DELETE_EVENTS_OF_SOURCE,
                ],
                &[&device, &source],
            ),
            Doomed::Source {
                device,
                source,
                up_to_ns,
            } => {
                let tx = self.begin()?;
                for (name, sql) in [
                    (
                        "delete readings of source by age",
                        DELETE_READINGS_OF_SOURCE_UP_TO,
                    ),
                    (
                        "delete events of source by age",
                        DELETE_EVENTS_OF_SOURCE_UP_TO,
                    ),
                ] {
                    tx.prepare_cached(sql)
                        .and_then(|mut s| s.execute(params![up_to_ns, device, source]))
                        .map_err(failed(name))?;
                }
                tx.commit().map_err(failed("commit"))
            }
        }
    }

    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        let name = "source event count";
        let limit = offset_limit(Page { offset: 0, limit }).1;
        let params = source_params(&filter, &[&limit]);
        let n: i64 = self
            .conn
            .prepare_cached(&sql().source_event_count[usize::from(filter.range.is_some())])
            .and_then(|mut s| s.query_row(params.as_slice(), |row| row.get(0)))
            .map_err(failed(name))?;
        // COUNT(*) is never negative.
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let (offset, limit) = offset_limit(page);
        let params = source_params(&filter, &[&offset, &limit]);
        let sql = &sql().source_events[usize::from(filter.range.is_some())];
        self.events_of("source events", sql, &params)
    }

    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        let name = "device sources";
        let mut pairs = self
            .conn
            .prepare_cached(&sql().device_sources)
            .and_then(|mut s| {
                s.query_map([], |row| {
                    Ok(DeviceSource::new(text(row, 0)?, text(row, 1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(failed(name))?;
        pairs.sort();
        pairs.dedup();
        Ok(pairs)
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let shape = Shape::of(&filter, false);
        let values = filter_values(&filter, shape);
        self.count(
            "reading count",
            &sql().reading_count[shape.index()],
            &values,
        )
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        let shape = Shape::of(&filter, false);
        let values = filter_values(&filter, shape);
        let (offset, limit) = offset_limit(page);
        let params = bind(&values, &[&offset, &limit]);
        let name = "readings";
        let mut stmt = self
            .conn
            .prepare_cached(&sql().readings[shape.index()])
            .map_err(failed(name))?;
        let rows = stmt.query(params.as_slice()).map_err(failed(name))?;
        readings_of_rows(name, rows)
    }

    /// Empties the three tables (one transaction) and the device_info cache.
    fn scrub(&mut self) -> StoreResult<()> {
        let tx = self.begin()?;
        for sql in SCRUB {
            tx.prepare_cached(sql)
                .and_then(|mut s| s.execute([]))
                .map_err(failed("scrub"))?;
        }
        tx.commit().map_err(failed("commit"))?;
        self.device_infos.clear();
        Ok(())
    }

    /// The database's pages ([`database_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        database_bytes(&self.conn).map(Some).map_err(failed("size"))
    }

    /// EdgeX 4.0 checks no event ids and keeps no reading ids.
    fn behaviour(&self) -> Behaviour {
        Behaviour {
            checks_duplicate_ids: false,
            keeps_reading_ids: false,
            ..Behaviour::FULL
        }
    }
}
