//! YCSB's `jdbc` binding on SQLite, in the target's database: the table and statements of
//! YCSB's `JdbcDBClient` (`CREATE TABLE <table> (YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT,
//! …)`, `SELECT * … WHERE YCSB_KEY = ?1`, `… WHERE YCSB_KEY >= ?1 ORDER BY YCSB_KEY LIMIT
//! ?2`), the same SQL text PostgreSQL runs ([`JdbcSql`], numbered `?N` here), on connections
//! set up as the core-data stores' are (busy timeout, `synchronous=NORMAL`, the file in WAL
//! mode).
//!
//! Statements are kept per connection by rusqlite's statement cache, found by their text;
//! the texts that depend on a field set (insert, update) are built once per set and kept, so
//! a call at steady state builds no SQL. [`YcsbStore::clear`] is `DELETE FROM <table>`,
//! SQLite's truncate.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{CachedStatement, Connection};

use super::v2018::Connector;
use crate::store::backend::{no_ycsb, BackendError};
use crate::store::shared::chain;
use crate::store::ycsb::jdbc::{
    changed, fill_from_columns, invert, text, value_fields, JdbcSql, KEY_COLUMN,
};
use crate::store::ycsb::{
    Binding, Record, Records, Setup, YcsbError, YcsbOpener, YcsbResult, YcsbStore,
};
use crate::store::StoreError;

/// Opens YCSB stores of `setup.binding` (only [`Binding::Jdbc`]) on the database `connector`
/// reaches, having created the table there.
pub(crate) fn opener(connector: Connector, setup: &Setup) -> Result<YcsbOpener, BackendError> {
    if setup.binding != Binding::Jdbc {
        return Err(no_ycsb(setup.binding));
    }
    let sql = Arc::new(JdbcSql::new(setup, '?')?);
    let conn = connector.connect()?;
    conn.execute_batch(&sql.create_table())
        .map_err(|e| store_error("ycsb create table", &e))?;
    // A table of that name laid out otherwise (a core-data table) fails here.
    for check in [sql.read(), sql.insert_all()] {
        conn.prepare(&check).map_err(|e| {
            store_error(
                "ycsb table check (is the table laid out for something else?)",
                &e,
            )
        })?;
    }
    Ok(Arc::new(move || {
        let conn = connector
            .connect()
            .map_err(|e| YcsbError::Backend(e.to_string()))?;
        Ok(Box::new(SqliteJdbcStore::new(conn, Arc::clone(&sql))?) as Box<dyn YcsbStore>)
    }))
}

fn store_error(statement: &str, e: &rusqlite::Error) -> StoreError {
    StoreError::Backend {
        backend: "sqlite",
        message: format!("{statement}: {}", chain(e)),
    }
}

/// A failed statement, as YCSB's call reports it.
fn failed(statement: &str, e: &rusqlite::Error) -> YcsbError {
    YcsbError::Backend(store_error(statement, e).to_string())
}

/// The texts of the statements that do not depend on a field set.
struct Texts {
    read: String,
    scan: String,
    delete: String,
    count: String,
    clear: String,
}

/// YCSB's JDBC binding over one SQLite connection.
struct SqliteJdbcStore {
    conn: Connection,
    sql: Arc<JdbcSql>,
    texts: Texts,
    /// Insert and update texts by field set (indexes, in the order given).
    inserts: HashMap<Vec<usize>, String>,
    updates: HashMap<Vec<usize>, String>,
    /// Each column of `SELECT *`: the field it holds; and each field's column.
    column_field: Vec<Option<usize>>,
    field_column: Vec<Option<usize>>,
    scratch: Vec<usize>,
}

impl SqliteJdbcStore {
    fn new(conn: Connection, sql: Arc<JdbcSql>) -> YcsbResult<SqliteJdbcStore> {
        let texts = Texts {
            read: sql.read(),
            scan: sql.scan(),
            delete: sql.delete(),
            count: sql.count(),
            clear: format!("DELETE FROM {}", sql.table()),
        };
        let column_field = {
            let read = conn
                .prepare_cached(&texts.read)
                .map_err(|e| failed("ycsb read", &e))?;
            sql.fields_of_columns(read.column_names())
        };
        let field_column = invert(&column_field, sql.fields().len());
        Ok(SqliteJdbcStore {
            conn,
            sql,
            texts,
            inserts: HashMap::new(),
            updates: HashMap::new(),
            column_field,
            field_column,
            scratch: Vec::new(),
        })
    }
}

/// The prepared statement of `text`, from the connection's cache.
fn prepared<'c>(conn: &'c Connection, text: &str, name: &str) -> YcsbResult<CachedStatement<'c>> {
    conn.prepare_cached(text).map_err(|e| failed(name, &e))
}

/// The text kept for `fields` in `texts`, built by `build` the first time.
fn text_for<'t>(
    texts: &'t mut HashMap<Vec<usize>, String>,
    fields: &[usize],
    build: impl FnOnce(&[usize]) -> String,
) -> &'t str {
    if !texts.contains_key(fields) {
        texts.insert(fields.to_vec(), build(fields));
    }
    texts.get(fields).map_or("", String::as_str)
}

/// Binds `values` as text from parameter `first` on.
fn bind_values(
    statement: &mut CachedStatement<'_>,
    first: usize,
    values: &[(String, Vec<u8>)],
    name: &str,
) -> YcsbResult<()> {
    for (n, (field, value)) in values.iter().enumerate() {
        statement
            .raw_bind_parameter(first + n, text(field, value)?)
            .map_err(|e| failed(name, &e))?;
    }
    Ok(())
}

/// Column `c` of `row` as text (`None` when NULL).
fn column<'r>(row: &'r rusqlite::Row<'_>, c: usize, name: &str) -> YcsbResult<Option<&'r str>> {
    row.get_ref(c)
        .map_err(|e| failed(name, &e))?
        .as_str_or_null()
        .map_err(|e| YcsbError::Backend(format!("{name}: column {c}: {e}")))
}

impl YcsbStore for SqliteJdbcStore {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        value_fields(self.sql.fields(), values, &mut self.scratch)?;
        let sql = &self.sql;
        let text = text_for(&mut self.inserts, &self.scratch, |f| sql.insert(f));
        let mut statement = prepared(&self.conn, text, "ycsb insert")?;
        statement
            .raw_bind_parameter(1, key)
            .map_err(|e| failed("ycsb insert", &e))?;
        bind_values(&mut statement, 2, values, "ycsb insert")?;
        statement
            .raw_execute()
            .map_err(|e| failed("ycsb insert", &e))?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let mut statement = prepared(&self.conn, &self.texts.read, "ycsb read")?;
        let mut rows = statement
            .query([key])
            .map_err(|e| failed("ycsb read", &e))?;
        let row = rows
            .next()
            .map_err(|e| failed("ycsb read", &e))?
            .ok_or_else(|| YcsbError::NotFound(key.to_string()))?;
        fill_from_columns(
            out,
            self.sql.fields(),
            &self.column_field,
            &self.field_column,
            fields,
            |c| column(row, c, "ycsb read"),
        )
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        value_fields(self.sql.fields(), values, &mut self.scratch)?;
        let sql = &self.sql;
        let text = text_for(&mut self.updates, &self.scratch, |f| sql.update(f));
        let mut statement = prepared(&self.conn, text, "ycsb update")?;
        bind_values(&mut statement, 1, values, "ycsb update")?;
        statement
            .raw_bind_parameter(values.len() + 1, key)
            .map_err(|e| failed("ycsb update", &e))?;
        let rows = statement
            .raw_execute()
            .map_err(|e| failed("ycsb update", &e))?;
        changed(key, rows as u64)
    }

    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()> {
        out.clear();
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let mut statement = prepared(&self.conn, &self.texts.scan, "ycsb scan")?;
        let mut rows = statement
            .query(rusqlite::params![start, limit])
            .map_err(|e| failed("ycsb scan", &e))?;
        while let Some(row) = rows.next().map_err(|e| failed("ycsb scan", &e))? {
            let key = column(row, 0, "ycsb scan")?.ok_or_else(|| {
                YcsbError::Backend(format!("ycsb scan: a row without {KEY_COLUMN}"))
            })?;
            fill_from_columns(
                out.next(key.as_bytes()),
                self.sql.fields(),
                &self.column_field,
                &self.field_column,
                fields,
                |c| column(row, c, "ycsb scan"),
            )?;
        }
        Ok(())
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        let rows = prepared(&self.conn, &self.texts.delete, "ycsb delete")?
            .execute([key])
            .map_err(|e| failed("ycsb delete", &e))?;
        changed(key, rows as u64)
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let n: i64 = prepared(&self.conn, &self.texts.count, "ycsb count")?
            .query_row([], |row| row.get(0))
            .map_err(|e| failed("ycsb count", &e))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn clear(&mut self) -> YcsbResult<()> {
        prepared(&self.conn, &self.texts.clear, "ycsb clear")?
            .execute([])
            .map_err(|e| failed("ycsb clear", &e))?;
        Ok(())
    }
}
