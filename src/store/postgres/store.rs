//! The store: [`PgStore`], the [`CoreData`] store over one connection, whose statements are
//! prepared once (`Statements`). A write that touches several rows is one statement; an
//! event list is two queries whatever its length; an update reads, merges and writes back
//! only if the row is still the version it read (`xmin`), else reads again.

use std::collections::HashMap;

use postgres::types::{Json, ToSql};
use postgres::{Client, Row, Statement};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::errors::query_error;
use super::schema::Statements;
use crate::store::rules::{key_id, merge_event, merge_reading, stamp_event, stamp_reading};
use crate::store::shared::chain;
use crate::store::shared::{sql_limit, EventDoc};
use crate::store::{CoreData, StoreError, StoreResult};
use crate::v2018::{now_ms, Event, Reading};

/// Picks one prepared statement of a store.
type StatementOf = fn(&Statements) -> &Statement;

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
        .map(|row| decode::<EventDoc<String>>(row, "event", 0, 1).map(EventDoc::into_event))
        .collect()
}

/// `(id, doc)` rows as readings.
fn readings_of(rows: &[Row]) -> StoreResult<Vec<Reading>> {
    rows.iter()
        .map(|row| decode(row, "reading", 0, 1))
        .collect()
}

/// The [`CoreData`] store over one PostgreSQL connection to a database made by
/// [`PgDatabase`](super::PgDatabase) (or one with the same schema).
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
/// The size of the tables of `schema` with their indexes and TOAST, in bytes
/// (`pg_total_relation_size`); `None` when the schema has no table. What PostgreSQL has
/// allocated on disk for them, in whole pages, so it grows in steps of 8 kB pages (and of
/// the free space map's). Every PostgreSQL store (this one, the EdgeX 4.0 schema's) reports
/// its size with it.
pub(crate) fn schema_bytes(
    client: &mut Client,
    schema: &str,
) -> Result<Option<u64>, postgres::Error> {
    let bytes: Option<i64> = client
        .query_one(
            "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1::text AND c.relkind = 'r'",
            &[&schema],
        )?
        .try_get(0)?;
    Ok(bytes.map(|b| b.max(0) as u64))
}

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
                let mut stored = decode::<EventDoc<String>>(row, "event", 0, 1)?.into_event();
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

    /// The private database's tables (in `public`) with their indexes and TOAST
    /// ([`schema_bytes`]).
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        schema_bytes(&mut self.client, "public").map_err(|e| query_error("size", &e))
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
