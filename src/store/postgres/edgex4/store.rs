//! [`Pg4Store`]: the [`EventStore`] over one PostgreSQL connection to a database with EdgeX
//! 4.0's `core_data` schema, running EdgeX's statements (storage-layouts.md §A.5–A.7) in
//! EdgeX's order.
//!
//! Statements are prepared on first use and kept, keyed by their SQL text: pgx's statement
//! cache (`QueryExecModeCacheStatement`) does the same per connection.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{Json, ToSql, Type};
use postgres::{Client, Row, Statement, Transaction};
use serde_json::Value;

use super::schema::*;
use super::wire::{Numeric, Uuid};
use crate::edgex::{now_ns, Event, Reading};
use crate::store::edgex::sql4::{
    filter_values, stored_key, DeviceInfo, DeviceInfoCache, EventRow, FilterValue, ReadingRow,
    Shape, SharedSql, ValueColumns,
};
use crate::store::edgex::{
    Behaviour, DeviceSource, Doomed, EventStore, Filter, Page, SourceFilter,
};
use crate::store::postgres::schema_bytes;
use crate::store::shared::chain;
use crate::store::{StoreError, StoreResult, UNLIMITED};

/// The backend name in [`StoreError::Backend`].
const BACKEND: &str = "postgres";

/// The column types of [`COPY_READINGS`], in its order. pgx learns them by describing
/// `select "event_id", ... from "core_data"."reading"` once per connection; they are fixed by
/// the schema, so the store states them.
const READING_TYPES: [Type; 7] = [
    Type::UUID,
    Type::INT4,
    Type::INT8,
    Type::TEXT,
    Type::NUMERIC,
    Type::BYTEA,
    Type::JSONB,
];

/// The shared statements in this dialect, built once per process.
fn sql() -> &'static SharedSql {
    static SQL: OnceLock<SharedSql> = OnceLock::new();
    SQL.get_or_init(|| SharedSql::new(DIALECT))
}

/// The [`EventStore`] over one PostgreSQL connection, made by
/// [`Pg4Database::open_store`](super::Pg4Database::open_store) or [`Pg4Store::new`].
pub struct Pg4Store {
    client: Client,
    /// Prepared statements by SQL text.
    statements: HashMap<String, Statement>,
    device_infos: Arc<DeviceInfoCache>,
    /// Scratch space for device_info cache keys.
    key: Vec<u8>,
}

impl std::fmt::Debug for Pg4Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg4Store")
            .field("prepared", &self.statements.len())
            .finish_non_exhaustive()
    }
}

/// A failed statement as one line that names it (and the event, where there is one).
fn failed(statement: &str, e: &postgres::Error) -> StoreError {
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    let fix = if e.is_closed() || io {
        " (connection lost: is PostgreSQL still running?)"
    } else {
        ""
    };
    StoreError::Backend {
        backend: BACKEND,
        message: format!("{statement}: {}{fix}", chain(e)),
    }
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound {
        kind: "event",
        id: id.to_string(),
    }
}

/// A page's `OFFSET` and `LIMIT`: [`UNLIMITED`] (or anything past `i64::MAX`) is
/// `LIMIT NULL`, all rows, as EdgeX sends for a negative limit.
fn offset_limit(page: Page) -> (i64, Option<i64>) {
    let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
    let limit = match page.limit {
        UNLIMITED => None,
        n => i64::try_from(n).ok(),
    };
    (offset, limit)
}

/// A text column that EdgeX always writes but the schema allows NULL in.
fn text(row: &Row, i: usize) -> Result<String, postgres::Error> {
    Ok(row.try_get::<_, Option<String>>(i)?.unwrap_or_default())
}

fn json(row: &Row, i: usize) -> Result<Option<Value>, postgres::Error> {
    Ok(row.try_get::<_, Option<Json<Value>>>(i)?.map(|Json(v)| v))
}

/// An `EV` row.
fn event_row(row: &Row) -> Result<EventRow, postgres::Error> {
    Ok(EventRow {
        id: row.try_get::<_, Uuid>(0)?.text(),
        devicename: text(row, 1)?,
        profilename: text(row, 2)?,
        sourcename: text(row, 3)?,
        origin: row.try_get::<_, Option<i64>>(4)?.unwrap_or_default(),
        tags: json(row, 5)?,
    })
}

/// An `RC` row: the event id, and the reading's columns.
fn reading_row(row: &Row) -> Result<(String, ReadingRow), postgres::Error> {
    let event_id = row
        .try_get::<_, Option<Uuid>>(0)?
        .map(|u| u.text())
        .unwrap_or_default();
    let reading = ReadingRow {
        origin: row.try_get::<_, Option<i64>>(1)?.unwrap_or_default(),
        value: row.try_get(2)?,
        numeric_value: row.try_get::<_, Option<Numeric>>(3)?.map(|n| n.0),
        binaryvalue: row.try_get(4)?,
        objectvalue: json(row, 5)?,
        devicename: text(row, 6)?,
        profilename: text(row, 7)?,
        resourcename: text(row, 8)?,
        valuetype: text(row, 9)?,
        units: text(row, 10)?,
        mediatype: text(row, 11)?,
        tags: json(row, 12)?,
    };
    Ok((event_id, reading))
}

impl Pg4Store {
    /// A store over `client`, whose database has EdgeX 4.0's schema
    /// ([`Pg4Database`](super::Pg4Database) makes one), with a device_info cache of its own,
    /// filled from the table as EdgeX fills its cache at startup.
    pub fn new(client: Client) -> StoreResult<Pg4Store> {
        Pg4Store::with_cache(client, Arc::default())
    }

    /// A store sharing `device_infos` with the other stores of its database; adds the rows
    /// already in the table to it.
    pub(super) fn with_cache(
        client: Client,
        device_infos: Arc<DeviceInfoCache>,
    ) -> StoreResult<Pg4Store> {
        let mut store = Pg4Store {
            client,
            statements: HashMap::new(),
            device_infos,
            key: Vec::new(),
        };
        store.fill_cache()?;
        Ok(store)
    }

    /// How many device_info ids the cache holds.
    #[cfg(test)]
    pub(super) fn cached_device_infos(&self) -> usize {
        self.device_infos.len()
    }

    /// The prepared statement of `sql`, prepared on first use.
    fn statement(&mut self, sql: &str) -> StoreResult<Statement> {
        prepared(&mut self.client, &mut self.statements, sql)
    }

    fn query(
        &mut self,
        name: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        let statement = self.statement(sql)?;
        self.client
            .query(&statement, params)
            .map_err(|e| failed(name, &e))
    }

    fn execute(
        &mut self,
        name: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<u64> {
        let statement = self.statement(sql)?;
        self.client
            .execute(&statement, params)
            .map_err(|e| failed(name, &e))
    }

    /// EdgeX's `AllDeviceInfos` at startup: every row into the cache.
    fn fill_cache(&mut self) -> StoreResult<()> {
        let rows = self.query("all device infos", ALL_DEVICE_INFOS, &[&0i64, &None::<i64>])?;
        let name = "all device infos";
        for row in &rows {
            let id: i32 = row.try_get("id").map_err(|e| failed(name, &e))?;
            let tags = row
                .try_get::<_, Option<Json<Value>>>("tags")
                .map_err(|e| failed(name, &e))?
                .map(|Json(v)| v);
            stored_key(|column| row.try_get(column), &tags, &mut self.key)
                .map_err(|e| failed(name, &e))?;
            self.device_infos.insert(self.key.clone(), i64::from(id));
        }
        Ok(())
    }

    /// The id of `info`'s device_info row: from the cache, else found, else inserted
    /// (each an autocommit statement outside any event transaction, as in EdgeX).
    fn device_info_id(&mut self, info: &DeviceInfo<'_>) -> StoreResult<i32> {
        info.write_key(&mut self.key);
        if let Some(id) = self.device_infos.get(&self.key) {
            // Every cached id came from an int4 column.
            return i32::try_from(id).map_err(|_| StoreError::Backend {
                backend: BACKEND,
                message: format!("device_info id {id} is out of range for int4"),
            });
        }
        let tags = Json(info.tags);
        let params: [&(dyn ToSql + Sync); 8] = [
            &info.devicename,
            &info.profilename,
            &info.sourcename,
            &tags,
            &info.resourcename,
            &info.valuetype,
            &info.units,
            &info.mediatype,
        ];
        let found = self.query("device info id", DEVICE_INFO_ID, &params)?;
        let (name, row) = match found.first() {
            Some(row) => ("device info id", row.clone()),
            None => {
                let added = self.query("add device info", ADD_DEVICE_INFO, &params)?;
                let row = added
                    .into_iter()
                    .next()
                    .ok_or_else(|| StoreError::Backend {
                        backend: BACKEND,
                        message: "add device info: INSERT ... RETURNING id returned no row".into(),
                    })?;
                ("add device info", row)
            }
        };
        let id: i32 = row.try_get(0).map_err(|e| failed(name, &e))?;
        self.device_infos.insert(self.key.clone(), i64::from(id));
        Ok(id)
    }

    /// The device_info ids of `event` and of each of its readings, in order.
    fn device_info_ids(&mut self, event: &Event) -> StoreResult<(i32, Vec<i32>)> {
        let event_info = self.device_info_id(&DeviceInfo::of_event(event))?;
        let reading_infos = event
            .readings
            .iter()
            .map(|r| self.device_info_id(&DeviceInfo::of_reading(r)))
            .collect::<StoreResult<Vec<i32>>>()?;
        Ok((event_info, reading_infos))
    }

    /// `event`'s id checked, then its device_info ids.
    fn resolve(&mut self, event: &Event) -> StoreResult<Resolved> {
        let id = event_uuid(event)?;
        let (event_info, reading_infos) = self.device_info_ids(event)?;
        Ok((id, event_info, reading_infos))
    }

    /// The readings of event `id`: EdgeX's per-event query (one per event of a list, N+1).
    fn readings_of(&mut self, id: &Uuid) -> StoreResult<Vec<Reading>> {
        self.query("readings of event", &sql().readings_of_event, &[id])?
            .iter()
            .map(|row| {
                let (event_id, r) =
                    reading_row(row).map_err(|e| failed("readings of event", &e))?;
                r.into_reading(&event_id)
            })
            .collect()
    }

    /// The event with this id and its readings; EdgeX's EventById, which wants exactly one
    /// row: an id stored twice (the schema allows it) is an error, as in EdgeX.
    fn event_by_uuid(&mut self, id: &Uuid, shown: &str) -> StoreResult<Event> {
        let rows = self.query("event by id", &sql().event_by_id, &[id])?;
        let row = match rows.as_slice() {
            [] => return Err(not_found(shown)),
            [row] => row,
            many => {
                return Err(StoreError::Decode {
                    kind: "event",
                    id: id.text(),
                    reason: format!(
                        "it is stored {} times (EdgeX 4.0's schema has no unique key on \
                         event.id, and its EventById fails on more than one row too)",
                        many.len()
                    ),
                })
            }
        };
        let mut event = event_row(row)
            .map_err(|e| failed("event by id", &e))?
            .into_event()?;
        event.readings = self.readings_of(id)?;
        Ok(event)
    }

    /// Runs the filtered statement `sql` with `filter`'s values, then `extra`.
    fn filtered(
        &mut self,
        name: &str,
        sql: &str,
        values: &[FilterValue<'_>],
        extra: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        let mut params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|v| match v {
                FilterValue::Origin(o) => o as &(dyn ToSql + Sync),
                FilterValue::Name(n) => n as &(dyn ToSql + Sync),
            })
            .collect();
        params.extend_from_slice(extra);
        self.query(name, sql, &params)
    }

    /// Events from `EV` rows, then each one's readings (N+1, as EdgeX).
    fn events_of_rows(&mut self, name: &str, rows: &[Row]) -> StoreResult<Vec<Event>> {
        let mut events = Vec::with_capacity(rows.len());
        for row in rows {
            let mut event = event_row(row).map_err(|e| failed(name, &e))?.into_event()?;
            let id = Uuid::parse(&event.id).ok_or_else(|| not_found(&event.id))?;
            event.readings = self.readings_of(&id)?;
            events.push(event);
        }
        Ok(events)
    }

    /// Runs one of the retention statements `sql` (without, with a range) for `filter`,
    /// then `extra`.
    fn of_source(
        &mut self,
        name: &str,
        sql: &[String; 2],
        filter: SourceFilter<'_>,
        extra: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<Row>> {
        let (start, end) = filter.range.unwrap_or_default();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(6);
        if filter.range.is_some() {
            params.extend([&start as &(dyn ToSql + Sync), &end]);
        }
        params.extend([&filter.device as &(dyn ToSql + Sync), &filter.source]);
        params.extend_from_slice(extra);
        self.query(name, &sql[usize::from(filter.range.is_some())], &params)
    }

    /// EdgeX's `deleteEventsByConditions`: the device_info rows `infos` selects, then one
    /// transaction deleting the readings and events `readings` and `events` select and those
    /// rows; the rows leave the cache once committed. `what` names it in errors.
    fn delete_with_device_infos(
        &mut self,
        what: &str,
        [infos, readings, events]: [&str; 3],
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<()> {
        let found = format!("device infos of {what}");
        let rows = self.query(&found, infos, params)?;
        let ids = rows
            .iter()
            .map(|row| row.try_get::<_, i32>("id"))
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|e| failed(&found, &e))?;
        let readings = self.statement(readings)?;
        let events = self.statement(events)?;
        let info = self.statement(DELETE_DEVICE_INFO)?;
        let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
        tx.execute(&readings, params)
            .map_err(|e| failed(&format!("delete readings of {what}"), &e))?;
        tx.execute(&events, params)
            .map_err(|e| failed(&format!("delete events of {what}"), &e))?;
        for id in &ids {
            tx.execute(&info, &[id])
                .map_err(|e| failed("delete device info", &e))?;
        }
        tx.commit().map_err(|e| failed("commit", &e))?;
        let ids: Vec<i64> = ids.into_iter().map(i64::from).collect();
        self.device_infos.evict(&ids);
        Ok(())
    }

    fn count(&mut self, name: &str, rows: StoreResult<Vec<Row>>) -> StoreResult<u64> {
        let n: i64 = rows?
            .first()
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(|e| failed(name, &e))?
            .unwrap_or(0);
        // COUNT(*) is never negative.
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// An event's id, its event-level device_info id, and its readings' device_info ids.
type Resolved = (Uuid, i32, Vec<i32>);

/// `event`'s id as a UUID: EdgeX's ids are, and the `uuid` column takes nothing else.
fn event_uuid(event: &Event) -> StoreResult<Uuid> {
    Uuid::parse(&event.id).ok_or_else(|| StoreError::Backend {
        backend: BACKEND,
        message: format!("event id {:?} is not a UUID: EdgeX ids are UUIDs", event.id),
    })
}

/// The readings of `events` (with their [`Resolved`] ids, in the same order) by one binary
/// COPY in `tx`, event by event and each event's in the order sent; `what` names it in errors.
fn copy_readings<'a>(
    tx: &mut Transaction<'_>,
    copy: &Statement,
    events: impl IntoIterator<Item = &'a Event>,
    resolved: &[Resolved],
    what: &str,
) -> StoreResult<()> {
    let copying = |e: postgres::Error| failed(what, &e);
    let writer = tx.copy_in(copy).map_err(copying)?;
    let mut writer = BinaryCopyInWriter::new(writer, &READING_TYPES);
    for (event, (id, _, reading_infos)) in events.into_iter().zip(resolved) {
        for (r, info) in event.readings.iter().zip(reading_infos) {
            let v = ValueColumns::of(r);
            writer
                .write(&[
                    id,
                    info,
                    &r.origin,
                    &v.value,
                    &v.numeric_value.map(Numeric),
                    &v.binaryvalue,
                    &v.objectvalue.map(Json),
                ])
                .map_err(copying)?;
        }
    }
    writer.finish().map_err(copying)?;
    Ok(())
}

/// The statement for `sql` from `cache`, prepared on `client` the first time.
fn prepared(
    client: &mut Client,
    cache: &mut HashMap<String, Statement>,
    sql: &str,
) -> StoreResult<Statement> {
    if let Some(statement) = cache.get(sql) {
        return Ok(statement.clone());
    }
    let statement = client
        .prepare(sql)
        .map_err(|e| failed(&format!("prepare {sql:?}"), &e))?;
    cache.insert(sql.to_string(), statement.clone());
    Ok(statement)
}

impl EventStore for Pg4Store {
    /// EdgeX's AddEvent: the device_info ids (cache, else SELECT, else INSERT), then one
    /// transaction: the event row, and the readings by binary COPY. No duplicate-id check.
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let resolved = [self.resolve(event)?];
        let insert = self.statement(ADD_EVENT)?;
        let copy = self.statement(COPY_READINGS)?;
        let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
        let [(id, event_info, _)] = &resolved;
        tx.execute(&insert, &[id, event_info, &event.origin])
            .map_err(|e| failed("add event", &e))?;
        let what = format!("copy readings of event {}", event.id);
        copy_readings(&mut tx, &copy, [event], &resolved, &what)?;
        tx.commit().map_err(|e| failed("commit", &e))
    }

    /// AddEvent for a batch: every id checked a UUID, then every device_info id (as
    /// `add_event`, in autocommit), then one transaction of one `INSERT ... SELECT FROM UNNEST`
    /// of every event row and one binary COPY of every reading: BEGIN, INSERT, COPY (its start
    /// and its data), COMMIT, five round trips whatever the batch's size, as for one event.
    /// No duplicate-id check, as in EdgeX 4.0.
    fn add_events(&mut self, events: &[Event]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        // Every id first: a batch with one bad id writes nothing, not even device_info rows.
        let ids = events
            .iter()
            .map(event_uuid)
            .collect::<StoreResult<Vec<Uuid>>>()?;
        let mut resolved = Vec::with_capacity(events.len());
        for (event, id) in events.iter().zip(ids) {
            let (event_info, reading_infos) = self.device_info_ids(event)?;
            resolved.push((id, event_info, reading_infos));
        }
        let ids: Vec<&Uuid> = resolved.iter().map(|(id, _, _)| id).collect();
        let infos: Vec<i32> = resolved.iter().map(|(_, info, _)| *info).collect();
        let origins: Vec<i64> = events.iter().map(|e| e.origin).collect();
        let insert = self.statement(ADD_EVENTS)?;
        let copy = self.statement(COPY_READINGS)?;
        let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
        tx.execute(&insert, &[&ids, &infos, &origins])
            .map_err(|e| failed(&format!("add {} events", events.len()), &e))?;
        let what = format!("copy readings of {} events", events.len());
        copy_readings(&mut tx, &copy, events, &resolved, &what)?;
        tx.commit().map_err(|e| failed("commit", &e))
    }

    /// One `INSERT` and one COPY in one transaction: the batch is whole or absent.
    fn adds_batches_whole(&self) -> bool {
        true
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let uuid = Uuid::parse(id).ok_or_else(|| not_found(id))?;
        self.event_by_uuid(&uuid, id)
    }

    /// EdgeX's DeleteEventById: EventById, then one transaction deleting the readings with
    /// `origin <=` the event's (none deleted fails it, as in EdgeX) and the event.
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let uuid = Uuid::parse(id).ok_or_else(|| not_found(id))?;
        let event = self.event_by_uuid(&uuid, id)?;
        let readings = self.statement(DELETE_READINGS_OF_EVENT)?;
        let delete = self.statement(DELETE_EVENT)?;
        let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
        let n = tx
            .execute(&readings, &[&event.origin, &uuid])
            .map_err(|e| failed("delete readings of event", &e))?;
        if n == 0 {
            // Dropping `tx` rolls it back.
            return Err(StoreError::Backend {
                backend: BACKEND,
                message: format!(
                    "delete event {}: no reading with origin <= the event's {} was deleted, \
                     so EdgeX 4.0 fails the delete and keeps the event",
                    event.id, event.origin
                ),
            });
        }
        tx.execute(&delete, &[&uuid])
            .map_err(|e| failed("delete event", &e))?;
        tx.commit().map_err(|e| failed("commit", &e))
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let shape = Shape::of(&filter, true);
        let values = filter_values(&filter, shape);
        let text = &sql().event_count[shape.index()];
        let rows = self.filtered("event count", text, &values, &[]);
        self.count("event count", rows)
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let shape = Shape::of(&filter, true);
        let values = filter_values(&filter, shape);
        let (offset, limit) = offset_limit(page);
        let rows = self.filtered(
            "events",
            &sql().events[shape.index()],
            &values,
            &[&offset, &limit],
        )?;
        self.events_of_rows("events", &rows)
    }

    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        match doomed {
            Doomed::OlderThan { age_ns } => {
                // EdgeX deletes `origin <= now - age`; the trait promises `< now - age`.
                let end = now_ns().saturating_sub(age_ns).saturating_sub(1);
                let readings = self.statement(DELETE_READINGS_BY_AGE)?;
                let events = self.statement(DELETE_EVENTS_BY_AGE)?;
                let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
                tx.execute(&readings, &[&end])
                    .map_err(|e| failed("delete readings by age", &e))?;
                tx.execute(&events, &[&end])
                    .map_err(|e| failed("delete events by age", &e))?;
                tx.commit().map_err(|e| failed("commit", &e))
            }
            Doomed::Device(device) => {
                self.execute("mark device deleted", MARK_DEVICE_DELETED, &[&device])?;
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
                let readings = self.statement(DELETE_READINGS_OF_SOURCE_UP_TO)?;
                let events = self.statement(DELETE_EVENTS_OF_SOURCE_UP_TO)?;
                let params: [&(dyn ToSql + Sync); 3] = [&up_to_ns, &device, &source];
                let mut tx = self.client.transaction().map_err(|e| failed("begin", &e))?;
                tx.execute(&readings, &params)
                    .map_err(|e| failed("delete readings of source by age", &e))?;
                tx.execute(&events, &params)
                    .map_err(|e| failed("delete events of source by age", &e))?;
                tx.commit().map_err(|e| failed("commit", &e))
            }
        }
    }

    fn source_event_count(&mut self, filter: SourceFilter<'_>, limit: usize) -> StoreResult<u64> {
        let limit = offset_limit(Page { offset: 0, limit }).1;
        let rows = self.of_source(
            "source event count",
            &sql().source_event_count,
            filter,
            &[&limit],
        );
        self.count("source event count", rows)
    }

    fn source_events(&mut self, filter: SourceFilter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let (offset, limit) = offset_limit(page);
        let rows = self.of_source(
            "source events",
            &sql().source_events,
            filter,
            &[&offset, &limit],
        )?;
        self.events_of_rows("source events", &rows)
    }

    fn device_sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        let name = "device sources";
        let rows = self.query(name, &sql().device_sources, &[])?;
        let mut pairs = rows
            .iter()
            .map(|row| Ok(DeviceSource::new(text(row, 0)?, text(row, 1)?)))
            .collect::<Result<Vec<_>, postgres::Error>>()
            .map_err(|e| failed(name, &e))?;
        // Rust's order, not the database's collation.
        pairs.sort();
        pairs.dedup();
        Ok(pairs)
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        let shape = Shape::of(&filter, false);
        let values = filter_values(&filter, shape);
        let rows = self.filtered(
            "reading count",
            &sql().reading_count[shape.index()],
            &values,
            &[],
        );
        self.count("reading count", rows)
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        let shape = Shape::of(&filter, false);
        let values = filter_values(&filter, shape);
        let (offset, limit) = offset_limit(page);
        let rows = self.filtered(
            "readings",
            &sql().readings[shape.index()],
            &values,
            &[&offset, &limit],
        )?;
        rows.iter()
            .map(|row| {
                let (event_id, r) = reading_row(row).map_err(|e| failed("readings", &e))?;
                r.into_reading(&event_id)
            })
            .collect()
    }

    /// Empties the three tables and the device_info cache.
    fn scrub(&mut self) -> StoreResult<()> {
        self.execute("scrub", SCRUB, &[])?;
        self.device_infos.clear();
        Ok(())
    }

    /// The `core_data` tables with their indexes and TOAST ([`schema_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        schema_bytes(&mut self.client, "core_data").map_err(|e| failed("size", &e))
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
