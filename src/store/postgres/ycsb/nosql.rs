//! YCSB's PostgreNoSQL binding over one PostgreSQL connection: a JSONB document per record;
//! a read of every field is YCSB's `(jsonb_each_text(YCSB_VALUE)).*`, a row per field; reads
//! of some fields and scans project `YCSB_VALUE->>'field'`, statements kept by field set.

use std::sync::Arc;

use postgres::types::Json;
use postgres::{Client, Row, Statement};
use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{failed, limit, ByFields, PgTable};
use crate::store::backend::BackendError;
use crate::store::ycsb::jdbc::changed;
use crate::store::ycsb::jdbc::{columns, field_index, identifier, text, KEY_COLUMN, VALUE_COLUMN};
use crate::store::ycsb::{Record, Records, Setup, YcsbError, YcsbResult, YcsbStore};

/// YCSB's PostgreNoSQL table and its fixed statements.
pub(super) struct NoSqlSql {
    table: String,
    fields: Vec<String>,
    pub(super) insert: String,
    pub(super) update: String,
    read_all: String,
}

impl NoSqlSql {
    pub(super) fn new(setup: &Setup) -> Result<NoSqlSql, BackendError> {
        let table = identifier("table", &setup.table)?.to_string();
        // The fields are named in string literals and as column aliases.
        columns(&setup.fields)?;
        Ok(NoSqlSql {
            insert: format!("INSERT INTO {table} ({KEY_COLUMN}, {VALUE_COLUMN}) VALUES ($1, $2)"),
            update: format!(
                "UPDATE {table} SET {VALUE_COLUMN} = {VALUE_COLUMN} || $1 WHERE {KEY_COLUMN} = $2"
            ),
            read_all: format!(
                "SELECT {KEY_COLUMN} AS {KEY_COLUMN}, (jsonb_each_text({VALUE_COLUMN})).* \
                 FROM {table} WHERE {KEY_COLUMN} = $1"
            ),
            fields: setup.fields.clone(),
            table,
        })
    }

    pub(super) fn create_table(&self) -> String {
        format!(
            "CREATE TABLE IF NOT EXISTS {} ({KEY_COLUMN} VARCHAR(255) PRIMARY KEY NOT NULL, \
             {VALUE_COLUMN} JSONB NOT NULL)",
            self.table
        )
    }

    /// `SELECT YCSB_KEY AS YCSB_KEY, YCSB_VALUE->>'f' AS f, … FROM <table> WHERE …`: the
    /// key, then the fields at `fields`; `rest` is the `WHERE` and what follows.
    fn projection(&self, fields: &[usize], rest: &str) -> String {
        let mut sql = format!("SELECT {KEY_COLUMN} AS {KEY_COLUMN}");
        for &f in fields {
            let name = &self.fields[f];
            sql.push_str(&format!(", {VALUE_COLUMN}->>'{name}' AS {name}"));
        }
        format!("{sql} FROM {} {rest}", self.table)
    }

    fn read(&self, fields: &[usize]) -> String {
        self.projection(fields, &format!("WHERE {KEY_COLUMN} = $1"))
    }

    fn scan(&self, fields: &[usize]) -> String {
        self.projection(
            fields,
            &format!("WHERE {KEY_COLUMN} >= $1 ORDER BY {KEY_COLUMN} LIMIT $2"),
        )
    }
}

/// A record's values as the JSON object `{"field0": "…", …}` of YCSB's PostgreNoSQL, checked
/// as text before it is sent.
#[derive(Debug)]
struct JsonFields<'a>(&'a [(String, Vec<u8>)]);

impl JsonFields<'_> {
    fn check(&self) -> YcsbResult<()> {
        for (field, value) in self.0 {
            text(field, value)?;
        }
        Ok(())
    }
}

impl Serialize for JsonFields<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (field, value) in self.0 {
            // Checked by `check` before any statement runs.
            let value = std::str::from_utf8(value).map_err(serde::ser::Error::custom)?;
            map.serialize_entry(field, value)?;
        }
        map.end()
    }
}

/// YCSB's PostgreNoSQL binding over one PostgreSQL connection.
pub(super) struct PgNoSqlStore {
    table: PgTable,
    sql: Arc<NoSqlSql>,
    insert: Statement,
    update: Statement,
    read_all: Statement,
    reads: ByFields,
    scans: ByFields,
    /// Every field's index, for a scan of every field.
    all: Vec<usize>,
    scratch: Vec<usize>,
}

impl PgNoSqlStore {
    pub(super) fn new(client: Client, sql: Arc<NoSqlSql>) -> YcsbResult<PgNoSqlStore> {
        let mut table = PgTable::new(client, &sql.table)?;
        let insert = table.prepare("ycsb insert", &sql.insert)?;
        let update = table.prepare("ycsb update", &sql.update)?;
        let read_all = table.prepare("ycsb read", &sql.read_all)?;
        Ok(PgNoSqlStore {
            all: (0..sql.fields.len()).collect(),
            table,
            sql,
            insert,
            update,
            read_all,
            reads: ByFields::default(),
            scans: ByFields::default(),
            scratch: Vec::new(),
        })
    }

    /// The indexes of the asked fields into `scratch`, or every field's.
    fn asked(&mut self, fields: Option<&[String]>) -> YcsbResult<()> {
        self.scratch.clear();
        match fields {
            None => self.scratch.extend_from_slice(&self.all),
            Some(names) => {
                for name in names {
                    self.scratch.push(field_index(&self.sql.fields, name)?);
                }
            }
        }
        Ok(())
    }
}

/// Fills `out` from a projection row: the key in column 0, then the fields at `fields`.
fn fill_projected(
    out: &mut Record,
    row: &Row,
    names: &[String],
    fields: &[usize],
    name: &str,
) -> YcsbResult<()> {
    out.clear();
    for (n, &f) in fields.iter().enumerate() {
        let value: Option<&str> = row.try_get(n + 1).map_err(|e| failed(name, &e))?;
        if let Some(value) = value {
            out.push(names[f].as_bytes(), value.as_bytes());
        }
    }
    Ok(())
}

impl YcsbStore for PgNoSqlStore {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        let doc = JsonFields(values);
        doc.check()?;
        self.table
            .client
            .execute(&self.insert, &[&key, &Json(doc)])
            .map_err(|e| failed("ycsb insert", &e))?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let Some(asked) = fields else {
            // YCSB's read of every field: one row per field, `(key, field, value)`.
            let rows = self
                .table
                .client
                .query(&self.read_all, &[&key])
                .map_err(|e| failed("ycsb read", &e))?;
            if rows.is_empty() {
                return Err(YcsbError::NotFound(key.to_string()));
            }
            out.clear();
            for row in &rows {
                let field: &str = row.try_get(1).map_err(|e| failed("ycsb read", &e))?;
                let value: &str = row.try_get(2).map_err(|e| failed("ycsb read", &e))?;
                out.push(field.as_bytes(), value.as_bytes());
            }
            return Ok(());
        };
        self.asked(Some(asked))?;
        let sql = &self.sql;
        let statement =
            self.reads
                .get(&mut self.table.client, &self.scratch, "ycsb read", |f| {
                    sql.read(f)
                })?;
        let row = self
            .table
            .client
            .query_opt(&statement, &[&key])
            .map_err(|e| failed("ycsb read", &e))?
            .ok_or_else(|| YcsbError::NotFound(key.to_string()))?;
        fill_projected(out, &row, &self.sql.fields, &self.scratch, "ycsb read")
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        let doc = JsonFields(values);
        doc.check()?;
        let rows = self
            .table
            .client
            .execute(&self.update, &[&Json(doc), &key])
            .map_err(|e| failed("ycsb update", &e))?;
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
        self.asked(fields)?;
        let sql = &self.sql;
        let statement =
            self.scans
                .get(&mut self.table.client, &self.scratch, "ycsb scan", |f| {
                    sql.scan(f)
                })?;
        let rows = self
            .table
            .client
            .query(&statement, &[&start, &limit(count)])
            .map_err(|e| failed("ycsb scan", &e))?;
        for row in &rows {
            let key: &str = row.try_get(0).map_err(|e| failed("ycsb scan", &e))?;
            fill_projected(
                out.next(key.as_bytes()),
                row,
                &self.sql.fields,
                &self.scratch,
                "ycsb scan",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ycsb::Binding;

    #[test]
    fn nosql_projections_name_the_fields_asked() {
        let sql = NoSqlSql::new(&Setup {
            binding: Binding::PostgreNoSql,
            table: "usertable".to_string(),
            fields: vec!["field0".to_string(), "field1".to_string()],
        })
        .unwrap();
        assert_eq!(
            sql.read(&[1]),
            "SELECT YCSB_KEY AS YCSB_KEY, YCSB_VALUE->>'field1' AS field1 FROM usertable \
             WHERE YCSB_KEY = $1"
        );
        assert_eq!(
            sql.update,
            "UPDATE usertable SET YCSB_VALUE = YCSB_VALUE || $1 WHERE YCSB_KEY = $2"
        );
    }
}
