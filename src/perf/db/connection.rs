//! One connection to PostgreSQL or MariaDB/MySQL: [`Database`] (parsed from a `--db` URL)
//! opens a [`Conn`], whose methods are everything a run, `-list` and `-delete` ask of the
//! server — create tables, upsert rows in one transaction, read by keys, count and delete.
//!
//! Invariants: a PostgreSQL connection prepares each statement text once and reuses it
//! ([`PgConn`]); every upsert batch is one transaction; an error names the statement (or the
//! server and the fix, for a failed connect) and never shows a URL's password.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use chrono::NaiveDateTime;
use mysql::prelude::Queryable;
use postgres::types::ToSql;

use super::error::{input, DbError, URL_FORMS};
use super::schema::{entity_of, table_def, values_of, Col, Dialect, SqlValue, TableDef};
use crate::perf::factory::{Entity, Entry, FactoryKind};
use crate::store::postgres::{chain, redact_password};

/// How long a connection attempt may take before the run gives up on the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Keys per `IN` query of `getall` (Hibernate splits long IN lists the same way).
const IN_BATCH: usize = 1000;

/// A database server and database to connect to.
#[derive(Debug, Clone)]
pub enum Database {
    /// PostgreSQL (boxed: its config is large beside the MySQL handle).
    Postgres(Box<crate::store::postgres::PgConfig>),
    /// MariaDB or MySQL.
    MySql(mysql::Opts),
}

impl Database {
    /// Parses a `--db` URL; the scheme picks the server kind.
    pub fn from_url(url: &str) -> Result<Self, DbError> {
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
        match scheme {
            "postgres" | "postgresql" => {
                let mut config = crate::store::postgres::config_from_url(url)
                    .map_err(|e| input(format!("--db: {e}")))?;
                let c = config.config_mut();
                if c.get_connect_timeout().is_none() {
                    c.connect_timeout(CONNECT_TIMEOUT);
                }
                if c.get_application_name().is_none() {
                    c.application_name("edgebench-perf");
                }
                Ok(Database::Postgres(Box::new(config)))
            }
            "mysql" | "mariadb" => {
                // The mysql crate knows only `mysql://`; MariaDB speaks the same protocol.
                let url = format!("mysql://{}", &url[scheme.len() + 3..]);
                let opts = mysql::Opts::from_url(&url).map_err(|e| {
                    input(format!(
                        "--db: invalid MySQL URL {:?}: {e}; {URL_FORMS}",
                        redact_password(&url)
                    ))
                })?;
                if opts.get_db_name().is_none_or(str::is_empty) {
                    return Err(input(format!(
                        "--db: {:?} names no database: add one, e.g. mysql://root@127.0.0.1:3306/nw (create it first: CREATE DATABASE nw)",
                        redact_password(&url)
                    )));
                }
                let mut builder = mysql::OptsBuilder::from_opts(opts);
                if !url.contains("prefer_socket=") {
                    // The crate's default reconnects a loopback TCP connection over the Unix
                    // socket, opening a second connection for a moment: the pool's bound
                    // would not be the server's count. `?socket=PATH` picks the socket.
                    builder = builder.prefer_socket(false);
                }
                if builder_timeout_unset(&builder) {
                    builder = builder.tcp_connect_timeout(Some(CONNECT_TIMEOUT));
                }
                Ok(Database::MySql(builder.into()))
            }
            "" => Err(input(format!(
                "--db {:?} is not a URL: {URL_FORMS}",
                redact_password(url)
            ))),
            other => Err(input(format!(
                "--db: unknown database URL scheme {other:?} in {:?}: {URL_FORMS}",
                redact_password(url)
            ))),
        }
    }

    /// Where this is, for the printout: `postgres at /var/run/postgresql:5432, database nw`.
    pub fn describe(&self) -> String {
        match self {
            Database::Postgres(c) => format!(
                "postgres at {}, database {}, user {}{}",
                crate::store::postgres::endpoint(c.config()),
                c.config().get_dbname().unwrap_or("(user name)"),
                c.config().get_user().unwrap_or("(OS user)"),
                c.describe_tls()
            ),
            Database::MySql(o) => format!(
                "mysql at {}:{}, database {}, user {}",
                o.get_ip_or_hostname(),
                o.get_tcp_port(),
                o.get_db_name().unwrap_or(""),
                o.get_user().unwrap_or("(none)")
            ),
        }
    }

    /// Opens one connection.
    pub fn connect(&self) -> Result<Conn, DbError> {
        let fail = |e: &dyn std::error::Error, fix: &str| {
            DbError::Database(format!(
                "cannot connect to {}: {} ({fix})",
                self.describe(),
                chain(e)
            ))
        };
        match self {
            Database::Postgres(c) => {
                let client = c.connect().map_err(|e| {
                    let fix = if e.code() == Some(&postgres::error::SqlState::INVALID_CATALOG_NAME) {
                        "create the database first (createdb NAME) or name an existing one in the URL"
                    } else {
                        "is PostgreSQL running? check the --db URL or url= in etc/db.properties"
                    };
                    fail(&e, fix)
                })?;
                Ok(Conn::Postgres(Box::new(PgConn {
                    client,
                    statements: HashMap::new(),
                })))
            }
            Database::MySql(o) => {
                let conn = mysql::Conn::new(o.clone()).map_err(|e| {
                    let fix = match &e {
                        mysql::Error::MySqlError(m) if m.code == 1049 => {
                            "create the database first (CREATE DATABASE name) or name an existing one in the URL"
                        }
                        _ => "is MariaDB/MySQL running? check the --db URL or url= in etc/db.properties",
                    };
                    fail(&e, fix)
                })?;
                Ok(Conn::MySql(conn))
            }
        }
    }
}

fn builder_timeout_unset(b: &mysql::OptsBuilder) -> bool {
    mysql::Opts::from(b.clone())
        .get_tcp_connect_timeout()
        .is_none()
}

/// A PostgreSQL connection and its prepared statements, by SQL text.
pub struct PgConn {
    client: postgres::Client,
    statements: HashMap<String, postgres::Statement>,
}

impl PgConn {
    fn prepared(&mut self, sql: &str) -> Result<postgres::Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

fn pg_params(values: &[SqlValue]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| match v {
            SqlValue::Text(s) => s as &(dyn ToSql + Sync),
            SqlValue::Time(t) => t,
            SqlValue::Double(d) => d,
        })
        .collect()
}

fn my_params(values: Vec<SqlValue>) -> mysql::Params {
    mysql::Params::Positional(
        values
            .into_iter()
            .map(|v| match v {
                SqlValue::Text(s) => mysql::Value::from(s),
                SqlValue::Time(t) => mysql::Value::from(t),
                SqlValue::Double(d) => mysql::Value::from(d),
            })
            .collect(),
    )
}

fn pg_row(t: &TableDef, row: &postgres::Row) -> Result<Vec<SqlValue>, postgres::Error> {
    t.columns
        .iter()
        .enumerate()
        .map(|(i, (_, col))| {
            Ok(match col {
                Col::Text(_) => {
                    SqlValue::Text(row.try_get::<_, Option<String>>(i)?.unwrap_or_default())
                }
                Col::Time => SqlValue::Time(
                    row.try_get::<_, Option<NaiveDateTime>>(i)?
                        .unwrap_or_default(),
                ),
                Col::Double => SqlValue::Double(row.try_get::<_, Option<f64>>(i)?.unwrap_or(0.0)),
            })
        })
        .collect()
}

fn my_row(t: &TableDef, mut row: mysql::Row) -> Result<Vec<SqlValue>, mysql::FromValueError> {
    let mut out = Vec::with_capacity(t.columns.len());
    for (i, (_, col)) in t.columns.iter().enumerate() {
        let v = row.take::<mysql::Value, _>(i).unwrap_or(mysql::Value::NULL);
        out.push(match col {
            Col::Text(_) => {
                SqlValue::Text(mysql::from_value_opt::<Option<String>>(v)?.unwrap_or_default())
            }
            Col::Time => SqlValue::Time(
                mysql::from_value_opt::<Option<NaiveDateTime>>(v)?.unwrap_or_default(),
            ),
            Col::Double => {
                SqlValue::Double(mysql::from_value_opt::<Option<f64>>(v)?.unwrap_or(0.0))
            }
        });
    }
    Ok(out)
}

/// One database connection.
pub enum Conn {
    /// PostgreSQL (boxed: the client is large beside the MySQL handle).
    Postgres(Box<PgConn>),
    /// MariaDB / MySQL.
    MySql(mysql::Conn),
}

fn sql_error(what: &str, e: &dyn std::error::Error) -> DbError {
    DbError::Database(format!("{what}: {}", chain(e)))
}

impl Conn {
    fn dialect(&self) -> Dialect {
        match self {
            Conn::Postgres(_) => Dialect::Postgres,
            Conn::MySql(_) => Dialect::MySql,
        }
    }

    /// The product string of results files: `postgresql`, `mariadb` or `mysql`.
    pub fn product(&mut self) -> Result<String, DbError> {
        match self {
            Conn::Postgres(_) => Ok("postgresql".into()),
            Conn::MySql(c) => {
                let v: Option<String> = c
                    .query_first("SELECT VERSION()")
                    .map_err(|e| sql_error("SELECT VERSION()", &e))?;
                Ok(if v.unwrap_or_default().contains("MariaDB") {
                    "mariadb".into()
                } else {
                    "mysql".into()
                })
            }
        }
    }

    /// Whether `kind`'s table exists in the connection's database (schema).
    pub fn table_exists(&mut self, kind: FactoryKind) -> Result<bool, DbError> {
        let sql = self.dialect().table_exists();
        let name = table_def(kind).name;
        let n: i64 = match self {
            Conn::Postgres(c) => c
                .client
                .query_one(sql, &[&name])
                .and_then(|r| r.try_get(0))
                .map_err(|e| sql_error(sql, &e))?,
            Conn::MySql(c) => c
                .exec_first(sql, (name,))
                .map_err(|e| sql_error(sql, &e))?
                .unwrap_or(0),
        };
        Ok(n > 0)
    }

    /// Creates `kind`'s table when it is missing; says whether it did.
    pub fn create_table(&mut self, kind: FactoryKind) -> Result<bool, DbError> {
        if self.table_exists(kind)? {
            return Ok(false);
        }
        let sql = self.dialect().create_table(table_def(kind));
        match self {
            Conn::Postgres(c) => c
                .client
                .batch_execute(&sql)
                .map_err(|e| sql_error(&sql, &e))?,
            Conn::MySql(c) => c.query_drop(&sql).map_err(|e| sql_error(&sql, &e))?,
        }
        Ok(true)
    }

    /// Upserts `rows` in one transaction, stamping them with `now`.
    pub fn upsert(
        &mut self,
        rows: &[(FactoryKind, Entry)],
        now: NaiveDateTime,
    ) -> Result<(), DbError> {
        let dialect = self.dialect();
        let with_stamps = |e: &Entry| {
            let mut v = values_of(&e.value);
            v.push(SqlValue::Time(now));
            v.push(SqlValue::Time(now));
            v
        };
        match self {
            Conn::Postgres(c) => {
                let mut statements = Vec::with_capacity(rows.len());
                for (kind, _) in rows {
                    let sql = dialect.upsert(table_def(*kind));
                    statements.push(c.prepared(&sql).map_err(|e| sql_error(&sql, &e))?);
                }
                let mut tx = c.client.transaction().map_err(|e| sql_error("BEGIN", &e))?;
                for ((kind, entry), statement) in rows.iter().zip(&statements) {
                    let values = with_stamps(entry);
                    tx.execute(statement, &pg_params(&values)).map_err(|e| {
                        sql_error(&format!("upsert into {}", table_def(*kind).name), &e)
                    })?;
                }
                tx.commit().map_err(|e| sql_error("COMMIT", &e))
            }
            Conn::MySql(c) => {
                let mut tx = c
                    .start_transaction(mysql::TxOpts::default())
                    .map_err(|e| sql_error("START TRANSACTION", &e))?;
                for (kind, entry) in rows {
                    let sql = dialect.upsert(table_def(*kind));
                    tx.exec_drop(&sql, my_params(with_stamps(entry)))
                        .map_err(|e| {
                            sql_error(&format!("upsert into {}", table_def(*kind).name), &e)
                        })?;
                }
                tx.commit().map_err(|e| sql_error("COMMIT", &e))
            }
        }
    }

    /// The entities stored under `keys` (in the server's order; absent keys are skipped).
    pub fn get_all(&mut self, kind: FactoryKind, keys: &[String]) -> Result<Vec<Entity>, DbError> {
        let t = table_def(kind);
        let dialect = self.dialect();
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(IN_BATCH) {
            let sql = format!("{} {}", dialect.select(t), dialect.key_in(t, chunk.len()));
            let rows = match self {
                Conn::Postgres(c) => {
                    let statement = c.prepared(&sql).map_err(|e| sql_error(&sql, &e))?;
                    let params: Vec<&(dyn ToSql + Sync)> =
                        chunk.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
                    let rows = c
                        .client
                        .query(&statement, &params)
                        .map_err(|e| sql_error(&sql, &e))?;
                    rows.iter()
                        .map(|r| pg_row(t, r))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| sql_error(&sql, &e))?
                }
                Conn::MySql(c) => {
                    let params = mysql::Params::Positional(
                        chunk
                            .iter()
                            .map(|k| mysql::Value::from(k.as_str()))
                            .collect(),
                    );
                    let rows: Vec<mysql::Row> =
                        c.exec(&sql, params).map_err(|e| sql_error(&sql, &e))?;
                    rows.into_iter()
                        .map(|r| my_row(t, r))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| sql_error(&sql, &e))?
                }
            };
            out.extend(rows.into_iter().map(|v| entity_of(kind, v)));
        }
        Ok(out)
    }

    /// The entity stored under `key`, if any.
    pub fn get(&mut self, kind: FactoryKind, key: &str) -> Result<Option<Entity>, DbError> {
        Ok(self.get_all(kind, &[key.to_string()])?.pop())
    }

    /// Rows in `kind`'s table (None when it does not exist).
    pub fn count(&mut self, kind: FactoryKind) -> Result<Option<u64>, DbError> {
        if !self.table_exists(kind)? {
            return Ok(None);
        }
        let sql = format!("SELECT count(*) FROM {}", table_def(kind).name);
        let n: i64 = match self {
            Conn::Postgres(c) => c
                .client
                .query_one(sql.as_str(), &[])
                .and_then(|r| r.try_get(0))
                .map_err(|e| sql_error(&sql, &e))?,
            Conn::MySql(c) => c
                .query_first(&sql)
                .map_err(|e| sql_error(&sql, &e))?
                .unwrap_or(0),
        };
        Ok(Some(n.max(0) as u64))
    }

    /// How many of `keys` have a row; with `delete`, removes those rows (one transaction).
    fn keyed(
        &mut self,
        kind: FactoryKind,
        keys: &BTreeSet<String>,
        delete: bool,
    ) -> Result<u64, DbError> {
        let t = table_def(kind);
        let dialect = self.dialect();
        let keys: Vec<&String> = keys.iter().collect();
        let mut n = 0u64;
        let verb = if delete { "DELETE" } else { "SELECT count(*)" };
        match self {
            Conn::Postgres(c) => {
                let mut tx = c.client.transaction().map_err(|e| sql_error("BEGIN", &e))?;
                for chunk in keys.chunks(IN_BATCH) {
                    let sql = format!("{verb} FROM {} {}", t.name, dialect.key_in(t, chunk.len()));
                    let params: Vec<&(dyn ToSql + Sync)> =
                        chunk.iter().map(|k| *k as &(dyn ToSql + Sync)).collect();
                    n += if delete {
                        tx.execute(sql.as_str(), &params)
                            .map_err(|e| sql_error(&sql, &e))?
                    } else {
                        let c: i64 = tx
                            .query_one(sql.as_str(), &params)
                            .and_then(|r| r.try_get(0))
                            .map_err(|e| sql_error(&sql, &e))?;
                        c as u64
                    };
                }
                tx.commit().map_err(|e| sql_error("COMMIT", &e))?;
            }
            Conn::MySql(c) => {
                let mut tx = c
                    .start_transaction(mysql::TxOpts::default())
                    .map_err(|e| sql_error("START TRANSACTION", &e))?;
                for chunk in keys.chunks(IN_BATCH) {
                    let sql = format!("{verb} FROM {} {}", t.name, dialect.key_in(t, chunk.len()));
                    let params = mysql::Params::Positional(
                        chunk
                            .iter()
                            .map(|k| mysql::Value::from(k.as_str()))
                            .collect(),
                    );
                    n += if delete {
                        tx.exec_drop(&sql, params)
                            .map_err(|e| sql_error(&sql, &e))?;
                        tx.affected_rows()
                    } else {
                        let c: Option<i64> = tx
                            .exec_first(&sql, params)
                            .map_err(|e| sql_error(&sql, &e))?;
                        c.unwrap_or(0) as u64
                    };
                }
                tx.commit().map_err(|e| sql_error("COMMIT", &e))?;
            }
        }
        Ok(n)
    }

    /// How many of `keys` have a row in `kind`'s table.
    pub fn count_keys(
        &mut self,
        kind: FactoryKind,
        keys: &BTreeSet<String>,
    ) -> Result<u64, DbError> {
        self.keyed(kind, keys, false)
    }

    /// Deletes the rows of `keys` from `kind`'s table; returns how many there were.
    pub fn delete_keys(
        &mut self,
        kind: FactoryKind,
        keys: &BTreeSet<String>,
    ) -> Result<u64, DbError> {
        self.keyed(kind, keys, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_pick_the_server_or_say_what_is_wrong() {
        assert!(matches!(
            Database::from_url("postgresql:///nw?host=/var/run/postgresql"),
            Ok(Database::Postgres(_))
        ));
        assert!(matches!(
            Database::from_url("mariadb://root@127.0.0.1:3306/nw"),
            Ok(Database::MySql(_))
        ));
        let e = Database::from_url("redis://127.0.0.1:6379")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--db: unknown database URL scheme \"redis\""),
            "{e}"
        );
        let e = Database::from_url("mysql://root@127.0.0.1:3306")
            .unwrap_err()
            .to_string();
        assert!(e.contains("names no database"), "{e}");
        let e = Database::from_url("mysql://u:secret@h:x/nw")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret") && e.contains("u:***@"), "{e}");
        let e = Database::from_url("nw").unwrap_err().to_string();
        assert!(e.contains("is not a URL"), "{e}");
    }
}
