//! YCSB's two PostgreSQL bindings as [`YcsbStore`]s, in the target's private database:
//!
//! - [`Binding::Jdbc`] (YCSB's `JdbcDBClient` with its `DefaultDBFlavor`): one column per
//!   field, `CREATE TABLE <table> (YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT, …)` as YCSB's
//!   `JdbcDBCreateTable` lays it out; `INSERT … VALUES ($1, …)`, `SELECT * … WHERE YCSB_KEY =
//!   $1` (YCSB reads every column and keeps the asked ones), `UPDATE … SET FIELDx = $1, …`,
//!   `SELECT * … WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2`, `DELETE … WHERE YCSB_KEY =
//!   $1`. The SQL text is [`JdbcSql`], which the SQLite binding shares.
//! - [`Binding::PostgreNoSql`] (YCSB's `PostgreNoSQLDBClient`): one JSONB document per record,
//!   `(YCSB_KEY VARCHAR(255) PRIMARY KEY NOT NULL, YCSB_VALUE JSONB NOT NULL)`; an update is
//!   `YCSB_VALUE = YCSB_VALUE || $1`, a read of every field `(jsonb_each_text(YCSB_VALUE)).*`
//!   (a row per field), a read or scan of some fields projects `YCSB_VALUE->>'field'`.
//!
//! JDBC's client names columns by the field names, unquoted, so the server folds their case:
//! here a field's column is its name uppercased (`field0` → `FIELD0`, which PostgreSQL keeps
//! as `field0`), and table and field names must be plain SQL identifiers, checked at setup.
//! Values are text, as YCSB's `setString` sends them: YCSB's values are printable ASCII, and
//! a value that is not UTF-8 fails its call.
//!
//! Every statement is prepared once per connection: the fixed ones when the store opens, the
//! ones that depend on a field set (JDBC's insert and update, PostgreNoSQL's projections) on
//! first use, kept by the field set in the order given, as YCSB's `cachedStatements` are.
//! The table is created with `IF NOT EXISTS`, so a second setup on one database (a reload)
//! keeps its records; a table left by another binding fails setup with the server's message.

use std::collections::HashMap;
use std::sync::Arc;

use postgres::types::{Json, ToSql};
use postgres::{Client, Row, Statement};
use serde::ser::{Serialize, SerializeMap, Serializer};

use super::errors::{connect_error, query_error};
use super::tls::PgConfig;
use crate::store::backend::{no_ycsb, BackendError};
use crate::store::ycsb::{
    Binding, Record, Records, Setup, YcsbError, YcsbOpener, YcsbResult, YcsbStore,
};
use crate::store::StoreError;

/// JDBC's key column (`JdbcDBClient.PRIMARY_KEY`), also PostgreNoSQL's.
pub(crate) const KEY_COLUMN: &str = "YCSB_KEY";
/// PostgreNoSQL's document column.
const VALUE_COLUMN: &str = "YCSB_VALUE";

/// Opens YCSB stores of `setup.binding` on the database `config` connects to, having created
/// the binding's table there.
pub(crate) fn opener(config: &PgConfig, setup: &Setup) -> Result<YcsbOpener, BackendError> {
    match setup.binding {
        Binding::Jdbc => {
            let sql = Arc::new(JdbcSql::new(setup, '$')?);
            lay_out(
                config,
                &sql.create_table(),
                &[&sql.read(), &sql.insert_all()],
            )?;
            let config = config.clone();
            Ok(Arc::new(move || {
                let client = connect(&config)?;
                Ok(Box::new(PgJdbcStore::new(client, Arc::clone(&sql))?) as Box<dyn YcsbStore>)
            }))
        }
        Binding::PostgreNoSql => {
            let sql = Arc::new(NoSqlSql::new(setup)?);
            lay_out(config, &sql.create_table(), &[&sql.insert, &sql.update])?;
            let config = config.clone();
            Ok(Arc::new(move || {
                let client = connect(&config)?;
                Ok(Box::new(PgNoSqlStore::new(client, Arc::clone(&sql))?) as Box<dyn YcsbStore>)
            }))
        }
        other => Err(no_ycsb(other)),
    }
}

/// Creates the table (`create`) and prepares `checks`, so a table of the same name laid out
/// otherwise (another binding's, or a core-data table) fails here, with the server's words.
fn lay_out(config: &PgConfig, create: &str, checks: &[&str]) -> Result<(), BackendError> {
    let mut client = config.connect().map_err(|e| connect_error(config, &e))?;
    client
        .batch_execute(create)
        .map_err(|e| query_error("ycsb create table", &e))?;
    for check in checks {
        client.prepare(check).map_err(|e| {
            query_error(
                "ycsb table check (is the table laid out for another binding?)",
                &e,
            )
        })?;
    }
    Ok(())
}

fn connect(config: &PgConfig) -> YcsbResult<Client> {
    config
        .connect()
        .map_err(|e| YcsbError::Backend(connect_error(config, &e).to_string()))
}

/// A failed statement, as YCSB's call reports it.
fn failed(statement: &str, e: &postgres::Error) -> YcsbError {
    store_failed(query_error(statement, e))
}

fn store_failed(e: StoreError) -> YcsbError {
    YcsbError::Backend(e.to_string())
}

/// A value as the text column or JSON string holds it.
pub(crate) fn text<'a>(field: &str, value: &'a [u8]) -> YcsbResult<&'a str> {
    std::str::from_utf8(value).map_err(|e| {
        YcsbError::Backend(format!(
            "the value of {field} is not UTF-8 text ({e}): the SQL bindings store values as \
             text, as YCSB's printable-ASCII values are"
        ))
    })
}

// ---- the JDBC table's SQL, shared with SQLite ----

/// YCSB's JDBC table and its statements as SQL text, for one [`Setup`]; parameters are
/// numbered with `mark` (`$1` for PostgreSQL, `?1` for SQLite).
pub(crate) struct JdbcSql {
    table: String,
    /// The field names, in setup order.
    fields: Vec<String>,
    /// Each field's column: its name uppercased.
    columns: Vec<String>,
    mark: char,
}

impl JdbcSql {
    /// Checks that the table and the fields are SQL identifiers, distinct as columns.
    pub(crate) fn new(setup: &Setup, mark: char) -> Result<JdbcSql, BackendError> {
        let sql = JdbcSql {
            table: identifier("table", &setup.table)?.to_string(),
            fields: setup.fields.clone(),
            columns: columns(&setup.fields)?,
            mark,
        };
        Ok(sql)
    }

    /// `CREATE TABLE IF NOT EXISTS <table> (YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT, …)`.
    pub(crate) fn create_table(&self) -> String {
        let mut sql = format!(
            "CREATE TABLE IF NOT EXISTS {} ({KEY_COLUMN} VARCHAR PRIMARY KEY",
            self.table
        );
        for column in &self.columns {
            sql.push_str(&format!(", {column} TEXT"));
        }
        sql.push(')');
        sql
    }

    /// `INSERT INTO <table> (YCSB_KEY, FIELDa, …) VALUES ($1, $2, …)` for the fields at
    /// `fields` (indexes into the setup's fields), in that order.
    pub(crate) fn insert(&self, fields: &[usize]) -> String {
        let mut names = KEY_COLUMN.to_string();
        let mut marks = format!("{}1", self.mark);
        for (n, &f) in fields.iter().enumerate() {
            names.push_str(&format!(", {}", self.columns[f]));
            marks.push_str(&format!(", {}{}", self.mark, n + 2));
        }
        format!("INSERT INTO {} ({names}) VALUES ({marks})", self.table)
    }

    /// [`Self::insert`] of every field.
    pub(crate) fn insert_all(&self) -> String {
        self.insert(&(0..self.fields.len()).collect::<Vec<_>>())
    }

    /// `UPDATE <table> SET FIELDa = $1, … WHERE YCSB_KEY = $n`.
    pub(crate) fn update(&self, fields: &[usize]) -> String {
        let set: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(n, &f)| format!("{} = {}{}", self.columns[f], self.mark, n + 1))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {KEY_COLUMN} = {}{}",
            self.table,
            set.join(", "),
            self.mark,
            fields.len() + 1
        )
    }

    /// `SELECT * FROM <table> WHERE YCSB_KEY = $1`: YCSB reads every column whatever it asks.
    pub(crate) fn read(&self) -> String {
        format!(
            "SELECT * FROM {} WHERE {KEY_COLUMN} = {}1",
            self.table, self.mark
        )
    }

    /// `SELECT * FROM <table> WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2`.
    pub(crate) fn scan(&self) -> String {
        format!(
            "SELECT * FROM {} WHERE {KEY_COLUMN} >= {m}1 ORDER BY {KEY_COLUMN} LIMIT {m}2",
            self.table,
            m = self.mark
        )
    }

    /// `DELETE FROM <table> WHERE YCSB_KEY = $1`.
    pub(crate) fn delete(&self) -> String {
        format!(
            "DELETE FROM {} WHERE {KEY_COLUMN} = {}1",
            self.table, self.mark
        )
    }

    /// `SELECT count(*) FROM <table>`.
    pub(crate) fn count(&self) -> String {
        format!("SELECT count(*) FROM {}", self.table)
    }

    /// The table's name.
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The setup's field names.
    pub(crate) fn fields(&self) -> &[String] {
        &self.fields
    }

    /// For each column of a `SELECT *` named `names` (as the server spells them), the field
    /// it holds (`None` for the key).
    pub(crate) fn fields_of_columns<'a>(
        &self,
        names: impl Iterator<Item = &'a str>,
    ) -> Vec<Option<usize>> {
        names
            .map(|name| {
                self.columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
            })
            .collect()
    }
}

/// `name` when it is a plain SQL identifier (letters, digits, `_`, not first a digit), which
/// every statement can name unquoted.
fn identifier<'a>(what: &str, name: &'a str) -> Result<&'a str, BackendError> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ok(name)
    } else {
        Err(BackendError::Unsuitable(format!(
            "the YCSB {what} name {name:?} is not a plain SQL identifier: the SQL bindings \
             name it unquoted, as YCSB's JDBC does; use letters, digits and _"
        )))
    }
}

/// The fields' columns (uppercased names), checked as identifiers and distinct.
fn columns(fields: &[String]) -> Result<Vec<String>, BackendError> {
    let mut columns: Vec<String> = Vec::with_capacity(fields.len());
    for field in fields {
        let column = identifier("field", field)?.to_ascii_uppercase();
        if column.eq_ignore_ascii_case(KEY_COLUMN)
            || column.eq_ignore_ascii_case(VALUE_COLUMN)
            || columns.contains(&column)
        {
            return Err(BackendError::Unsuitable(format!(
                "the YCSB field {field:?} names column {column} twice: give fields whose \
                 names differ in more than case, and not {KEY_COLUMN}"
            )));
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The index of field `name` among `fields`.
pub(crate) fn field_index(fields: &[String], name: &str) -> YcsbResult<usize> {
    fields.iter().position(|f| f == name).ok_or_else(|| {
        YcsbError::Backend(format!(
            "no field {name} in the table (its fields: {})",
            fields.join(", ")
        ))
    })
}

/// Fills `out` with the indexes of the fields named in `values`, in their order.
pub(crate) fn value_fields(
    fields: &[String],
    values: &[(String, Vec<u8>)],
    out: &mut Vec<usize>,
) -> YcsbResult<()> {
    out.clear();
    for (name, _) in values {
        out.push(field_index(fields, name)?);
    }
    Ok(())
}

/// Fills `out` from one `SELECT *` row: every field (`asked` is `None`) in column order, or
/// the asked ones in their order. `value(c)` is column `c`'s text; a NULL column (a field
/// never set) is left out.
pub(crate) fn fill_from_columns<'r>(
    out: &mut Record,
    fields: &[String],
    column_field: &[Option<usize>],
    field_column: &[Option<usize>],
    asked: Option<&[String]>,
    mut value: impl FnMut(usize) -> YcsbResult<Option<&'r str>>,
) -> YcsbResult<()> {
    out.clear();
    match asked {
        None => {
            for (c, field) in column_field.iter().enumerate() {
                if let Some(f) = field {
                    if let Some(v) = value(c)? {
                        out.push(fields[*f].as_bytes(), v.as_bytes());
                    }
                }
            }
        }
        Some(asked) => {
            for name in asked {
                let f = field_index(fields, name)?;
                let Some(c) = field_column[f] else {
                    return Err(YcsbError::Backend(format!(
                        "the table has no column for {name}"
                    )));
                };
                if let Some(v) = value(c)? {
                    out.push(name.as_bytes(), v.as_bytes());
                }
            }
        }
    }
    Ok(())
}

/// The inverse of a column → field map: each field's column.
pub(crate) fn invert(column_field: &[Option<usize>], fields: usize) -> Vec<Option<usize>> {
    let mut field_column = vec![None; fields];
    for (c, f) in column_field.iter().enumerate() {
        if let Some(f) = f {
            field_column[*f] = Some(c);
        }
    }
    field_column
}

/// Statements that depend on a field set, prepared on first use and kept by the set.
#[derive(Default)]
struct ByFields(HashMap<Vec<usize>, Statement>);

impl ByFields {
    /// The statement for `fields`, prepared from `sql(fields)` the first time.
    fn get(
        &mut self,
        client: &mut Client,
        fields: &[usize],
        name: &str,
        sql: impl FnOnce(&[usize]) -> String,
    ) -> YcsbResult<Statement> {
        if let Some(statement) = self.0.get(fields) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(&sql(fields)).map_err(|e| failed(name, &e))?;
        self.0.insert(fields.to_vec(), statement.clone());
        Ok(statement)
    }
}

/// A scan's `LIMIT`.
fn limit(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// `count(*)`'s one row.
fn count_of(row: &Row) -> YcsbResult<u64> {
    let n: i64 = row.try_get(0).map_err(|e| failed("ycsb count", &e))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Not found when no row changed, as YCSB's MongoDB binding answers (its JDBC one says
/// `UNEXPECTED_STATE`).
fn changed(key: &str, rows: u64) -> YcsbResult<()> {
    match rows {
        0 => Err(YcsbError::NotFound(key.to_string())),
        _ => Ok(()),
    }
}

// ---- JDBC ----

/// YCSB's JDBC binding over one PostgreSQL connection.
struct PgJdbcStore {
    client: Client,
    sql: Arc<JdbcSql>,
    read: Statement,
    scan: Statement,
    delete: Statement,
    count: Statement,
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
    fn new(mut client: Client, sql: Arc<JdbcSql>) -> YcsbResult<PgJdbcStore> {
        let mut prepare =
            |name: &str, text: String| client.prepare(&text).map_err(|e| failed(name, &e));
        let read = prepare("ycsb read", sql.read())?;
        let scan = prepare("ycsb scan", sql.scan())?;
        let delete = prepare("ycsb delete", sql.delete())?;
        let count = prepare("ycsb count", sql.count())?;
        let column_field = sql.fields_of_columns(read.columns().iter().map(|c| c.name()));
        let field_column = invert(&column_field, sql.fields().len());
        Ok(PgJdbcStore {
            client,
            sql,
            read,
            scan,
            delete,
            count,
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
        self.client
            .execute(statement, &params)
            .map_err(|e| failed(name, &e))
    }
}

impl YcsbStore for PgJdbcStore {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        value_fields(self.sql.fields(), values, &mut self.scratch)?;
        let sql = &self.sql;
        let statement = self
            .inserts
            .get(&mut self.client, &self.scratch, "ycsb insert", |f| {
                sql.insert(f)
            })?;
        self.write(&statement, "ycsb insert", key, values, true)?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let row = self
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
        let statement = self
            .updates
            .get(&mut self.client, &self.scratch, "ycsb update", |f| {
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
        let rows = self
            .client
            .execute(&self.delete, &[&key])
            .map_err(|e| failed("ycsb delete", &e))?;
        changed(key, rows)
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let row = self
            .client
            .query_one(&self.count, &[])
            .map_err(|e| failed("ycsb count", &e))?;
        count_of(&row)
    }

    fn clear(&mut self) -> YcsbResult<()> {
        truncate(&mut self.client, self.sql.table())
    }
}

/// `TRUNCATE <table>`.
fn truncate(client: &mut Client, table: &str) -> YcsbResult<()> {
    client
        .batch_execute(&format!("TRUNCATE {table}"))
        .map_err(|e| failed("ycsb clear", &e))
}

// ---- PostgreNoSQL ----

/// YCSB's PostgreNoSQL table and its fixed statements.
struct NoSqlSql {
    table: String,
    fields: Vec<String>,
    insert: String,
    update: String,
    read_all: String,
    delete: String,
    count: String,
}

impl NoSqlSql {
    fn new(setup: &Setup) -> Result<NoSqlSql, BackendError> {
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
            delete: format!("DELETE FROM {table} WHERE {KEY_COLUMN} = $1"),
            count: format!("SELECT count(*) FROM {table}"),
            fields: setup.fields.clone(),
            table,
        })
    }

    fn create_table(&self) -> String {
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
struct PgNoSqlStore {
    client: Client,
    sql: Arc<NoSqlSql>,
    insert: Statement,
    update: Statement,
    read_all: Statement,
    delete: Statement,
    count: Statement,
    reads: ByFields,
    scans: ByFields,
    /// Every field's index, for a scan of every field.
    all: Vec<usize>,
    scratch: Vec<usize>,
}

impl PgNoSqlStore {
    fn new(mut client: Client, sql: Arc<NoSqlSql>) -> YcsbResult<PgNoSqlStore> {
        let mut prepare =
            |name: &str, text: &str| client.prepare(text).map_err(|e| failed(name, &e));
        let insert = prepare("ycsb insert", &sql.insert)?;
        let update = prepare("ycsb update", &sql.update)?;
        let read_all = prepare("ycsb read", &sql.read_all)?;
        let delete = prepare("ycsb delete", &sql.delete)?;
        let count = prepare("ycsb count", &sql.count)?;
        Ok(PgNoSqlStore {
            all: (0..sql.fields.len()).collect(),
            client,
            sql,
            insert,
            update,
            read_all,
            delete,
            count,
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
        self.client
            .execute(&self.insert, &[&key, &Json(doc)])
            .map_err(|e| failed("ycsb insert", &e))?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let Some(asked) = fields else {
            // YCSB's read of every field: one row per field, `(key, field, value)`.
            let rows = self
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
        let statement = self
            .reads
            .get(&mut self.client, &self.scratch, "ycsb read", |f| {
                sql.read(f)
            })?;
        let row = self
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
        let statement = self
            .scans
            .get(&mut self.client, &self.scratch, "ycsb scan", |f| {
                sql.scan(f)
            })?;
        let rows = self
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
        let rows = self
            .client
            .execute(&self.delete, &[&key])
            .map_err(|e| failed("ycsb delete", &e))?;
        changed(key, rows)
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let row = self
            .client
            .query_one(&self.count, &[])
            .map_err(|e| failed("ycsb count", &e))?;
        count_of(&row)
    }

    fn clear(&mut self) -> YcsbResult<()> {
        truncate(&mut self.client, &self.sql.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(fields: &[&str]) -> Setup {
        Setup {
            binding: Binding::Jdbc,
            table: "usertable".to_string(),
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn jdbc_statements_are_ycsbs_with_numbered_parameters() {
        let sql = JdbcSql::new(&setup(&["field0", "field1", "field2"]), '$').unwrap();
        assert_eq!(
            sql.create_table(),
            "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR PRIMARY KEY, \
             FIELD0 TEXT, FIELD1 TEXT, FIELD2 TEXT)"
        );
        assert_eq!(
            sql.insert(&[2, 0]),
            "INSERT INTO usertable (YCSB_KEY, FIELD2, FIELD0) VALUES ($1, $2, $3)"
        );
        assert_eq!(
            sql.update(&[1, 2]),
            "UPDATE usertable SET FIELD1 = $1, FIELD2 = $2 WHERE YCSB_KEY = $3"
        );
        assert_eq!(sql.read(), "SELECT * FROM usertable WHERE YCSB_KEY = $1");
        let sqlite = JdbcSql::new(&setup(&["field0"]), '?').unwrap();
        assert_eq!(
            sqlite.scan(),
            "SELECT * FROM usertable WHERE YCSB_KEY >= ?1 ORDER BY YCSB_KEY LIMIT ?2"
        );
        assert_eq!(sqlite.delete(), "DELETE FROM usertable WHERE YCSB_KEY = ?1");
    }

    #[test]
    fn names_that_are_not_plain_identifiers_are_refused() {
        assert!(JdbcSql::new(&setup(&["field0; DROP TABLE x"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["0field"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["f", "F"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["ycsb_key"]), '$').is_err());
        let mut bad_table = setup(&["field0"]);
        bad_table.table = "user table".to_string();
        assert!(NoSqlSql::new(&bad_table).is_err());
    }

    #[test]
    fn nosql_projections_name_the_fields_asked() {
        let sql = NoSqlSql::new(&setup(&["field0", "field1"])).unwrap();
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
