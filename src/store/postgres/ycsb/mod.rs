//! YCSB's two PostgreSQL bindings as [`YcsbStore`]s, in the target's private database:
//!
//! - [`Binding::Jdbc`] (YCSB's `JdbcDBClient` with its `DefaultDBFlavor`): one column per
//!   field, `CREATE TABLE <table> (YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT, …)` as YCSB's
//!   `JdbcDBCreateTable` lays it out; `INSERT … VALUES ($1, …)`, `SELECT * … WHERE YCSB_KEY =
//!   $1` (YCSB reads every column and keeps the asked ones), `UPDATE … SET FIELDx = $1, …`,
//!   `SELECT * … WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2`, `DELETE … WHERE YCSB_KEY =
//!   $1`. The SQL text is [`JdbcSql`] (`sql.rs`), which the SQLite binding shares.
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
//!
//! The files: this one opens stores and holds what both share ([`PgTable`]: the delete,
//! count and truncate; statements kept by field set); `sql` the JDBC table's SQL text and
//! the row helpers SQLite shares; `jdbc` and `nosql` the two stores.

mod jdbc;
mod nosql;

use std::collections::HashMap;
use std::sync::Arc;

use postgres::{Client, Statement};

use super::errors::{connect_error, query_error};
use super::tls::PgConfig;
use crate::store::backend::{no_ycsb, BackendError};
use crate::store::ycsb::jdbc::{self as sql, changed, JdbcSql};
use crate::store::ycsb::{Binding, Setup, YcsbError, YcsbOpener, YcsbResult, YcsbStore};
use jdbc::PgJdbcStore;
use nosql::{NoSqlSql, PgNoSqlStore};

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
    YcsbError::Backend(query_error(statement, e).to_string())
}

/// Statements that depend on a field set, prepared on first use and kept by the set.
#[derive(Default)]
pub(super) struct ByFields(HashMap<Vec<usize>, Statement>);

impl ByFields {
    /// The statement for `fields`, prepared from `sql(fields)` the first time.
    pub(super) fn get(
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
pub(super) fn limit(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// What both stores do alike on one connection: delete a record, count, truncate.
pub(super) struct PgTable {
    pub(super) client: Client,
    delete: Statement,
    count: Statement,
    truncate: String,
}

impl PgTable {
    /// Prepares the delete and the count of `table`.
    fn new(mut client: Client, table: &str) -> YcsbResult<PgTable> {
        let delete = prepare(&mut client, "ycsb delete", &sql::delete_sql(table, '$'))?;
        let count = prepare(&mut client, "ycsb count", &sql::count_sql(table))?;
        Ok(PgTable {
            client,
            delete,
            count,
            truncate: format!("TRUNCATE {table}"),
        })
    }

    pub(super) fn prepare(&mut self, name: &str, text: &str) -> YcsbResult<Statement> {
        prepare(&mut self.client, name, text)
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        let rows = self
            .client
            .execute(&self.delete, &[&key])
            .map_err(|e| failed("ycsb delete", &e))?;
        changed(key, rows)
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let n: i64 = self
            .client
            .query_one(&self.count, &[])
            .and_then(|row| row.try_get(0))
            .map_err(|e| failed("ycsb count", &e))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn clear(&mut self) -> YcsbResult<()> {
        self.client
            .batch_execute(&self.truncate)
            .map_err(|e| failed("ycsb clear", &e))
    }
}

fn prepare(client: &mut Client, name: &str, text: &str) -> YcsbResult<Statement> {
    client.prepare(text).map_err(|e| failed(name, &e))
}
