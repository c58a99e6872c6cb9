//! YCSB's JDBC binding over one PostgreSQL connection: `SELECT *` for reads and scans (YCSB
//! reads every column and keeps the asked ones), insert and update statements kept by field
//! set.

use std::sync::Arc;

use postgres::types::ToSql;
use postgres::{Client, Statement};

use super::{failed, limit, ByFields, PgTable};
use crate::store::ycsb::jdbc::changed;
use crate::store::ycsb::jdbc::{fill_from_columns, invert, text, value_fields, JdbcSql};
use crate::store::ycsb::{Record, Records, YcsbError, YcsbResult, YcsbStore};

/// YCSB's JDBC binding over one PostgreSQL connection.
pub(super) struct PgJdbcStore {
    table: PgTable,
    sql: Arc<JdbcSql>,
    read: Statement,
    scan: Statement,
    inserts: ByFields,
    updates: ByFields,
    /// Each column of `SELECT *`: the field it holds.
    column_field: Vec<Option<usize>>,
    /// Each field's column in `SELECT *`.
    field_column: Vec<Option<usize>>,
    /// The field indexes of the call at hand (kept, so a call allocates none).
    scratch: Vec<usize>,
}

impl PgJdbcStore {
    pub(super) fn new(client: Client, sql: Arc<JdbcSql>) -> YcsbResult<PgJdbcStore> {
        let mut table = PgTable::new(client, sql.table())?;
        let read = table.prepare("ycsb read", &sql.read())?;
        let scan = table.prepare("ycsb scan", &sql.scan())?;
        let column_field = sql.fields_of_columns(read.columns().iter().map(|c| c.name()));
        let field_column = invert(&column_field, sql.fields().len());
        Ok(PgJdbcStore {
            table,
            sql,
            read,
            scan,
            inserts: ByFields::default(),
            updates: ByFields::default(),
            column_field,
            field_column,
            scratch: Vec::new(),
        })
    }

    /// Runs `statement` with the key first (`key_first`, an insert) or last (an update) and
    /// the values of `values` between or before.
    fn write(
        &mut self,
        statement: &Statement,
        name: &str,
        key: &str,
        values: &[(String, Vec<u8>)],
        key_first: bool,
    ) -> YcsbResult<u64> {
        let mut texts: Vec<&str> = Vec::with_capacity(values.len() + 1);
        for (field, value) in values {
            texts.push(text(field, value)?);
        }
        if key_first {
            texts.insert(0, key);
        } else {
            texts.push(key);
        }
        let params: Vec<&(dyn ToSql + Sync)> =
            texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
        self.table
            .client
            .execute(statement, &params)
            .map_err(|e| failed(name, &e))
    }
}

impl YcsbStore for PgJdbcStore {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        value_fields(self.sql.fields(), values, &mut self.scratch)?;
        let sql = &self.sql;
        let statement =
            self.inserts
                .get(&mut self.table.client, &self.scratch, "ycsb insert", |f| {
                    sql.insert(f)
                })?;
        self.write(&statement, "ycsb insert", key, values, true)?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let row = self
            .table
            .client
            .query_opt(&self.read, &[&key])
            .map_err(|e| failed("ycsb read", &e))?
            .ok_or_else(|| YcsbError::NotFound(key.to_string()))?;
        fill_from_columns(
            out,
            self.sql.fields(),
            &self.column_field,
            &self.field_column,
            fields,
            |c| row.try_get(c).map_err(|e| failed("ycsb read", &e)),
        )
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        value_fields(self.sql.fields(), values, &mut self.scratch)?;
        let sql = &self.sql;
        let statement =
            self.updates
                .get(&mut self.table.client, &self.scratch, "ycsb update", |f| {
                    sql.update(f)
                })?;
        let rows = self.write(&statement, "ycsb update", key, values, false)?;
        changed(key, rows)
    }

    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()> {
        out.clear();
        let rows = self
            .table
            .client
            .query(&self.scan, &[&start, &limit(count)])
            .map_err(|e| failed("ycsb scan", &e))?;
        for row in &rows {
            let key: &str = row.try_get(0).map_err(|e| failed("ycsb scan", &e))?;
            fill_from_columns(
                out.next(key.as_bytes()),
                self.sql.fields(),
                &self.column_field,
                &self.field_column,
                fields,
                |c| row.try_get(c).map_err(|e| failed("ycsb scan", &e)),
            )?;
        }
        Ok(())
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        self.table.delete(key)
    }

    fn count(&mut self) -> YcsbResult<u64> {
        self.table.count()
    }

    fn clear(&mut self) -> YcsbResult<()> {
        self.table.clear()
    }
}
