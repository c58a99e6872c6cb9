//! `test_group -db` (reference §4): the groups' factory objects upserted into PostgreSQL or
//! MariaDB/MySQL instead of a Redis target — Customers into `customers`, Orders into
//! `orders`, with PadoGrid's columns and lengths (§4.4) — and `-list`/`-delete` of what the
//! groups write.
//!
//! Data flows: [`DbSettings`] (`--db URL`, `etc/db.properties`) → [`Database`] → [`Pool`] of
//! [`Conn`]s → [`run_db_group_test`] (one thread per `threadCount`, each holding one pooled
//! connection for its whole loop, as PadoGrid's threads hold a Hibernate `Session`) →
//! [`GroupRun`] results files with the `(Dababase)` header.
//!
//! Invariants:
//! - A connection is only ever taken from the [`Pool`], which opens at most `pool_size`
//!   connections; a thread that finds none free blocks until one comes back (HibernatePool's
//!   `ArrayBlockingQueue`).
//! - `put` upserts one entity per transaction and then each ER child in its own (§4.1);
//!   `putall` upserts a batch (ER children included) in one transaction. An upsert keeps
//!   `created_on` and moves `updated_on` (Hibernate's `@CreationTimestamp`/`@UpdateTimestamp`
//!   under `saveOrUpdate`), so writing the same key twice leaves one row.
//! - Every entity is generated from a generator seeded by its operation's `randomSeed` and its
//!   own id, never from shared state, so what a run writes depends only on the configuration
//!   (and the `now` the order dates are anchored to): [`Writer::rows`] is what the runner
//!   writes, and [`written_keys`] is exactly the keys a configuration writes, which is what
//!   `-list` counts and `-delete` removes.
//! - Values travel as typed parameters of prepared statements, never spliced into SQL; only
//!   table and column names (constants here) are.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime};
use mysql::prelude::Queryable;
use postgres::types::ToSql;

use super::config::{GroupTestConfig, Operation, TestCase};
use super::factory::{Customer, Entity, Entry, FactoryKind, Order};
// `perf::db::Writer`: where the writer lived before it moved beside the factories.
pub use super::factory::Writer;
use super::properties::Properties;
use super::random::JavaRandom;
use super::results::GroupRun;
use super::run::{invocation_loop, run_group_threads, GroupContext, PutAllCursor, ThreadOutcome};
use crate::store::postgres::{chain, redact_password};

/// The settings file `-db` reads when it exists (`url=`, `pool_size=`).
pub const DB_PROPERTIES: &str = "etc/db.properties";
/// `pool_size` when nothing sets it: HibernatePool's `connection.pool_size` default.
pub const DEFAULT_POOL_SIZE: usize = 1;
/// How long a connection attempt may take before the run gives up on the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The URL forms `--db` takes, for error messages.
const URL_FORMS: &str = "use postgres://user@127.0.0.1:5432/db, \
                         postgresql:///db?host=/var/run/postgresql or mysql://root@127.0.0.1:3306/db";
/// Keys per `IN` query of `getall` (Hibernate splits long IN lists the same way).
const IN_BATCH: usize = 1000;

/// Why `-db` could not run.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Bad input (a URL, the settings file, a factory): the message names it and the fix.
    #[error("{0}")]
    Input(String),
    /// The database could not be reached or refused a statement.
    #[error("{0}")]
    Database(String),
    /// A results file could not be written.
    #[error("{0}")]
    Write(#[from] std::io::Error),
}

fn input(message: String) -> DbError {
    DbError::Input(message)
}

// ---- settings ----

/// Where `-db` writes: a database URL and the connection pool size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSettings {
    /// `postgres://…`, `postgresql://…`, `mysql://…` or `mariadb://…`.
    pub url: String,
    /// At most this many connections at once (`pool_size`, Hibernate's
    /// `connection.pool_size`).
    pub pool_size: usize,
    /// Where the settings came from, for the printout.
    pub source: String,
}

impl DbSettings {
    /// The settings from `file` (`url=`, `pool_size=`) when it exists, with `url` (from
    /// `--db`) overriding the file's. `file_given` says the user named the file, so its
    /// absence is an error rather than "use the defaults".
    pub fn resolve(file: &Path, file_given: bool, url: Option<&str>) -> Result<Self, DbError> {
        let shown = file.display();
        let props = if file.exists() {
            Some(Properties::load(file).map_err(|e| input(e.to_string()))?)
        } else if file_given {
            return Err(input(format!(
                "cannot read {shown}: no such file (check the --db-prop path)"
            )));
        } else {
            None
        };
        let pool_size = match props.as_ref().and_then(|p| p.get("pool_size")) {
            None => DEFAULT_POOL_SIZE,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    let line = props
                        .as_ref()
                        .and_then(|p| p.line_of("pool_size"))
                        .unwrap_or(0);
                    return Err(input(format!(
                        "{shown}:{line}: pool_size={v:?} is not a whole number >= 1 (the most connections the run opens at once)"
                    )));
                }
            },
        };
        let (url, source) = match (url, props.as_ref().and_then(|p| p.get("url"))) {
            (Some(u), _) => (u.to_string(), "--db".to_string()),
            (None, Some(u)) if !u.trim().is_empty() => (u.trim().to_string(), shown.to_string()),
            (None, _) if props.is_some() => {
                return Err(input(format!(
                    "{shown}: missing url (set url=postgres://user@127.0.0.1:5432/db or url=mysql://root@127.0.0.1:3306/db, or give --db URL)"
                )))
            }
            (None, _) => {
                return Err(input(format!(
                    "-db needs a database: give --db URL or create {DB_PROPERTIES} with url= ({URL_FORMS})"
                )))
            }
        };
        Ok(DbSettings {
            url,
            pool_size,
            source,
        })
    }
}

// ---- the database and its connections ----

/// A database server and database to connect to.
#[derive(Debug, Clone)]
pub enum Database {
    /// PostgreSQL (boxed: its config is large beside the MySQL handle).
    Postgres(Box<postgres::Config>),
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
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(CONNECT_TIMEOUT);
                }
                if config.get_application_name().is_none() {
                    config.application_name("edgebench-perf");
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
                "postgres at {}, database {}, user {}",
                crate::store::postgres::endpoint(c),
                c.get_dbname().unwrap_or("(user name)"),
                c.get_user().unwrap_or("(OS user)")
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
                let client = c.connect(postgres::NoTls).map_err(|e| {
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

/// A table's columns: SQL type and length as PadoGrid's JPA entities declare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    /// `varchar(n)`.
    Text(u32),
    /// `java.util.Date` / `LocalDateTime`: `timestamp` (PostgreSQL), `datetime(6)` (MySQL).
    Time,
    /// `double`.
    Double,
}

struct TableDef {
    name: &'static str,
    columns: &'static [(&'static str, Col)],
}

/// `Customer` (§4.4); the first column is the `@Id`.
const CUSTOMERS: TableDef = TableDef {
    name: "customers",
    columns: &[
        ("customerId", Col::Text(20)),
        ("companyName", Col::Text(50)),
        ("contactName", Col::Text(50)),
        ("contactTitle", Col::Text(50)),
        ("address", Col::Text(100)),
        ("city", Col::Text(50)),
        ("region", Col::Text(10)),
        ("postalCode", Col::Text(10)),
        ("country", Col::Text(100)),
        ("phone", Col::Text(30)),
        ("fax", Col::Text(30)),
    ],
};

/// `Order` (§4.4).
const ORDERS: TableDef = TableDef {
    name: "orders",
    columns: &[
        ("orderId", Col::Text(20)),
        ("customerId", Col::Text(20)),
        ("employeeId", Col::Text(20)),
        ("orderDate", Col::Time),
        ("requiredDate", Col::Time),
        ("shippedDate", Col::Time),
        ("shipVia", Col::Text(50)),
        ("freight", Col::Double),
        ("shipName", Col::Text(50)),
        ("shipAddress", Col::Text(100)),
        ("shipCity", Col::Text(50)),
        ("shipRegion", Col::Text(10)),
        ("shipPostalCode", Col::Text(10)),
        ("shipCountry", Col::Text(100)),
    ],
};

/// `BaseEntity`'s timestamps, after the entity's own columns.
const STAMPS: [&str; 2] = ["created_on", "updated_on"];

fn table_def(kind: FactoryKind) -> &'static TableDef {
    match kind {
        FactoryKind::Customer => &CUSTOMERS,
        FactoryKind::Order => &ORDERS,
    }
}

/// A column value, typed.
#[derive(Debug, Clone, PartialEq)]
enum SqlValue {
    Text(String),
    Time(NaiveDateTime),
    Double(f64),
}

fn time_of(ms: i64) -> NaiveDateTime {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .naive_utc()
}

fn ms_of(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_millis()
}

/// An entity's values in its table's column order.
fn values_of(e: &Entity) -> Vec<SqlValue> {
    use SqlValue::{Double, Text, Time};
    match e {
        Entity::Customer(c) => [
            &c.customer_id,
            &c.company_name,
            &c.contact_name,
            &c.contact_title,
            &c.address,
            &c.city,
            &c.region,
            &c.postal_code,
            &c.country,
            &c.phone,
            &c.fax,
        ]
        .into_iter()
        .map(|s| Text(s.clone()))
        .collect(),
        Entity::Order(o) => vec![
            Text(o.order_id.clone()),
            Text(o.customer_id.clone()),
            Text(o.employee_id.clone()),
            Time(time_of(o.order_date_ms)),
            Time(time_of(o.required_date_ms)),
            Time(time_of(o.shipped_date_ms)),
            Text(o.ship_via.clone()),
            Double(o.freight),
            Text(o.ship_name.clone()),
            Text(o.ship_address.clone()),
            Text(o.ship_city.clone()),
            Text(o.ship_region.clone()),
            Text(o.ship_postal_code.clone()),
            Text(o.ship_country.clone()),
        ],
    }
}

/// The entity a row holds (NULLs read as empty / zero: rows we write have none).
fn entity_of(kind: FactoryKind, values: Vec<SqlValue>) -> Entity {
    let mut it = values.into_iter();
    let mut text = || match it.next() {
        Some(SqlValue::Text(s)) => s,
        _ => String::new(),
    };
    match kind {
        FactoryKind::Customer => Entity::Customer(Customer {
            customer_id: text(),
            company_name: text(),
            contact_name: text(),
            contact_title: text(),
            address: text(),
            city: text(),
            region: text(),
            postal_code: text(),
            country: text(),
            phone: text(),
            fax: text(),
        }),
        FactoryKind::Order => {
            let v: Vec<SqlValue> = it.collect();
            let s = |i: usize| match v.get(i) {
                Some(SqlValue::Text(s)) => s.clone(),
                _ => String::new(),
            };
            let t = |i: usize| match v.get(i) {
                Some(SqlValue::Time(t)) => ms_of(*t),
                _ => 0,
            };
            Entity::Order(Order {
                order_id: s(0),
                customer_id: s(1),
                employee_id: s(2),
                order_date_ms: t(3),
                required_date_ms: t(4),
                shipped_date_ms: t(5),
                ship_via: s(6),
                freight: match v.get(7) {
                    Some(SqlValue::Double(d)) => *d,
                    _ => 0.0,
                },
                ship_name: s(8),
                ship_address: s(9),
                ship_city: s(10),
                ship_region: s(11),
                ship_postal_code: s(12),
                ship_country: s(13),
            })
        }
    }
}

/// The two SQL dialects: placeholders, types and the upsert clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Postgres,
    MySql,
}

impl Dialect {
    fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::MySql => "?".into(),
        }
    }

    fn placeholders(self, from: usize, count: usize) -> String {
        (from..from + count)
            .map(|n| self.placeholder(n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn create_table(self, t: &TableDef) -> String {
        let (time, double, tail) = match self {
            Dialect::Postgres => ("timestamp", "double precision", ""),
            Dialect::MySql => ("datetime(6)", "double", " DEFAULT CHARSET=utf8mb4"),
        };
        let mut cols: Vec<String> = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, col))| {
                let ty = match col {
                    Col::Text(n) => format!("varchar({n})"),
                    Col::Time => time.to_string(),
                    Col::Double => double.to_string(),
                };
                if i == 0 {
                    format!("{name} {ty} NOT NULL PRIMARY KEY")
                } else {
                    format!("{name} {ty}")
                }
            })
            .collect();
        cols.extend(STAMPS.iter().map(|s| format!("{s} {time}")));
        format!(
            "CREATE TABLE IF NOT EXISTS {} ({}){tail}",
            t.name,
            cols.join(", ")
        )
    }

    /// Insert, or on a key conflict update every column but the key and `created_on`.
    fn upsert(self, t: &TableDef) -> String {
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).chain(STAMPS).collect();
        let key = names[0];
        let updated: Vec<&str> = names[1..]
            .iter()
            .copied()
            .filter(|n| *n != "created_on")
            .collect();
        let insert = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            t.name,
            names.join(", "),
            self.placeholders(1, names.len())
        );
        match self {
            Dialect::Postgres => format!(
                "{insert} ON CONFLICT ({key}) DO UPDATE SET {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = EXCLUDED.{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Dialect::MySql => format!(
                "{insert} ON DUPLICATE KEY UPDATE {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = VALUES({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn select(self, t: &TableDef) -> String {
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
        format!("SELECT {} FROM {}", names.join(", "), t.name)
    }

    /// `WHERE key IN (…)` for `n` keys.
    fn key_in(self, t: &TableDef, n: usize) -> String {
        format!("WHERE {} IN ({})", t.columns[0].0, self.placeholders(1, n))
    }

    fn table_exists(self) -> &'static str {
        match self {
            Dialect::Postgres => {
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = $1"
            }
            Dialect::MySql => {
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = ?"
            }
        }
    }
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

// ---- the pool ----

/// At most `size` connections to one database, handed out one per thread; a thread that
/// finds none free waits until one is returned (HibernatePool's `ArrayBlockingQueue`).
/// Connections open lazily, so a run with fewer threads opens fewer.
pub struct Pool {
    database: Database,
    size: usize,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Conn>,
    open: usize,
}

impl Pool {
    /// A pool of at most `size` (>= 1) connections to `database`.
    pub fn new(database: Database, size: usize) -> Pool {
        Pool {
            database,
            size: size.max(1),
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// The pool size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// A connection: an idle one, a new one while fewer than `size` are open, else the next
    /// one returned.
    pub fn take(&self) -> Result<PooledConn<'_>, DbError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(conn) = state.idle.pop() {
                return Ok(PooledConn {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                return match self.database.connect() {
                    Ok(conn) => Ok(PooledConn {
                        pool: self,
                        conn: Some(conn),
                    }),
                    Err(e) => {
                        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
                        state.open -= 1;
                        self.returned.notify_one();
                        Err(e)
                    }
                };
            }
            state = self.returned.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A connection lent by a [`Pool`]; it goes back when dropped.
pub struct PooledConn<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl Deref for PooledConn<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn.as_ref().expect("present until drop")
    }
}

impl DerefMut for PooledConn<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("present until drop")
    }
}

impl Drop for PooledConn<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let mut state = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
            state.idle.push(conn);
            self.pool.returned.notify_one();
        }
    }
}

// ---- what the operations write ----

/// What an operation does in `-db` mode (§4.1: the switch is on the test case only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbOp {
    /// `put` (and `set`, `fastput`): one entity per transaction, then its ER children.
    Put,
    /// `get`: one entity by a random key.
    Get,
    /// `getall`: `batchSize` random keys in `IN` queries.
    GetAll,
    /// `putall` and every other case: `batchSize` entities in one transaction.
    PutAll,
}

impl DbOp {
    /// The `-db` behaviour of a test case. PadoGrid's switch sends `set` to its default
    /// (putall); edgebench follows its documentation (`set` writes one entry, with ER), as on
    /// Redis.
    pub fn of(tc: TestCase) -> DbOp {
        match tc {
            TestCase::Put | TestCase::Set | TestCase::FastPut => DbOp::Put,
            TestCase::Get => DbOp::Get,
            TestCase::GetAll => DbOp::GetAll,
            _ => DbOp::PutAll,
        }
    }
}

/// Every operation the groups run, and every ER child, must have a factory: PadoGrid's
/// one-line error otherwise.
pub fn check_factories(cfg: &GroupTestConfig) -> Result<(), DbError> {
    for stage in &cfg.schedule.stages {
        for g in stage {
            for name in &cfg.groups[g].operations {
                let op = &cfg.operations[name];
                let Some(f) = &op.factory else {
                    return Err(input(format!(
                        "ERROR: data object factory not set for group {g}, operation {name}. \
                         (set {name}.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl or OrderFactoryImpl in {})",
                        cfg.file
                    )));
                };
                if let Some(er) = &f.er {
                    if cfg
                        .operations
                        .get(&er.operation)
                        .and_then(|c| c.factory.as_ref())
                        .is_none()
                    {
                        return Err(input(format!(
                            "ERROR: data object factory not set for group {g}, operation {}. \
                             ({name}.factory.er.operation names it: set {}.factory.class in {})",
                            er.operation, er.operation, cfg.file
                        )));
                    }
                }
            }
        }
    }
    // The id columns are varchar(20) (PadoGrid's lengths): a longer key would fail the run
    // part-way on PostgreSQL, or be cut and merge rows on a non-strict MariaDB.
    for (table, keys) in written_keys(cfg) {
        if let Some(key) = keys.iter().find(|k| k.chars().count() > ID_LENGTH) {
            return Err(input(format!(
                "key {key:?} for table {table} is longer than its {ID_LENGTH}-character id \
                 column: shorten key.prefix or factory.key.length of its operation in {}",
                cfg.file
            )));
        }
    }
    Ok(())
}

/// The length of the `customers`/`orders` id columns (PadoGrid's `length = 20`).
const ID_LENGTH: usize = 20;

/// The tables the groups use (their factories' and their ER children's), in first-use order.
pub fn tables(cfg: &GroupTestConfig) -> Vec<FactoryKind> {
    let mut out = Vec::new();
    for stage in &cfg.schedule.stages {
        for g in stage {
            for name in &cfg.groups[g].operations {
                let Some(w) = Writer::new(cfg, name, 0) else {
                    continue;
                };
                for kind in w.kinds() {
                    if !out.contains(&kind) {
                        out.push(kind);
                    }
                }
            }
        }
    }
    out
}

/// Every key the groups of `cfg` write, per table name: what `-list` counts and `-delete` removes.
/// Reproduces the runner's ids (put: `startNum + i - 1` for every invocation `i`; putall: the
/// cursor of every thread) and [`Writer::rows`] (ER children included).
pub fn written_keys(cfg: &GroupTestConfig) -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    // An operation run again with the same threads and invocations writes the same keys.
    let mut done: BTreeSet<(String, u32, u64)> = BTreeSet::new();
    for stage in &cfg.schedule.stages {
        for g in stage {
            let group = &cfg.groups[g];
            let threads = u64::from(group.thread_count.max(1));
            let per_thread = group.invocation_count_per_thread();
            for name in &group.operations {
                if !done.insert((name.clone(), group.thread_count, per_thread)) {
                    continue;
                }
                let op = &cfg.operations[name];
                let Some(w) = Writer::new(cfg, name, 0) else {
                    continue;
                };
                let mut add = |id: i64| {
                    for (kind, e) in w.rows(id) {
                        out.entry(table_def(kind).name).or_default().insert(e.key);
                    }
                };
                match DbOp::of(op.test_case) {
                    DbOp::Get | DbOp::GetAll => {}
                    DbOp::Put => {
                        for i in 1..=threads * per_thread {
                            add(op.key_start_num + i as i64 - 1);
                        }
                    }
                    DbOp::PutAll => {
                        let mut seen = BTreeSet::new();
                        for t in 1..=threads {
                            let mut cursor = PutAllCursor::new(op, t, threads);
                            'thread: for _ in 0..per_thread {
                                for _ in 0..op.batch_size {
                                    let id = cursor.next_id(op);
                                    if !seen.insert(id) {
                                        // The cursor wrapped: the rest repeats.
                                        break 'thread;
                                    }
                                    add(id);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

// ---- the runner ----

/// Reads that found nothing, per operation: (asked, found).
type Misses = Vec<(AtomicU64, AtomicU64)>;

/// Runs every stage of `cfg` against the pool's database and writes one results file per
/// group (header `Group Test (Dababase)`) into `results_dir`. Creates the tables first when
/// they are missing (one status line per table created). `now_ms` anchors the order dates.
pub fn run_db_group_test(
    cfg: &GroupTestConfig,
    pool: &Pool,
    product: &str,
    results_dir: &Path,
    now_ms: i64,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(GroupRun, PathBuf)>, DbError> {
    check_factories(cfg)?;
    {
        let mut conn = pool.take()?;
        for kind in tables(cfg) {
            if conn.create_table(kind)? {
                let _ = writeln!(status, "created table {}", table_def(kind).name);
            }
        }
    }
    let status = Mutex::new(status);
    crate::perf::run::run_stages(
        cfg,
        results_dir,
        stop,
        || DbError::Database("a group thread panicked".into()),
        |g, stage| run_group(cfg, g, stage, pool, product, now_ms, stop, &status),
    )
}

#[allow(clippy::too_many_arguments)]
fn run_group(
    cfg: &GroupTestConfig,
    group_id: &str,
    stage: &[String],
    pool: &Pool,
    product: &str,
    now_ms: i64,
    stop: &AtomicBool,
    status: &Mutex<&mut (dyn Write + Send)>,
) -> Result<GroupRun, DbError> {
    let ops: Vec<(&Operation, Writer)> = cfg.groups[group_id]
        .operations
        .iter()
        .map(|name| {
            let w = Writer::new(cfg, name, now_ms).expect("check_factories ran");
            (&cfg.operations[name], w)
        })
        .collect();
    let names: Vec<&str> = ops.iter().map(|(op, _)| op.name.as_str()).collect();
    let misses: Misses = ops
        .iter()
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    let group = GroupContext {
        cfg,
        group_id,
        stage,
        product,
        db: true,
        stop,
    };
    let run = run_group_threads(
        &group,
        &names,
        status,
        || DbError::Database("a worker thread panicked".into()),
        // A pooled connection is taken inside each run (PadoGrid: threads block on the
        // HibernatePool until a Session is free, and that wait is timed).
        |_| Ok(()),
        |_, t, threads, per_thread, done| {
            run_thread(
                group_id, &ops, t, threads, per_thread, pool, stop, done, &misses,
            )
        },
    )?;
    if let Ok(mut w) = status.lock() {
        for ((op, _), (asked, found)) in ops.iter().zip(&misses) {
            let (asked, found) = (asked.load(Ordering::Relaxed), found.load(Ordering::Relaxed));
            if found < asked {
                // PadoGrid prints a line per miss; one line per operation says the same.
                let _ = writeln!(
                    w,
                    "[{group_id}.{}.{}] {} of {asked} keys read found no row",
                    op.name,
                    op.test_case,
                    asked - found
                );
            }
        }
    }
    Ok(run)
}

/// One thread: takes a pooled connection (waiting for one, before its clock starts, as
/// PadoGrid's threads take their Session), runs invocations `[(t-1)*cpt+1, t*cpt]`, and
/// returns the connection.
#[allow(clippy::too_many_arguments)]
fn run_thread(
    group: &str,
    ops: &[(&Operation, Writer)],
    t: u64,
    threads: u64,
    per_thread: u64,
    pool: &Pool,
    stop: &AtomicBool,
    done: &AtomicU64,
    misses: &Misses,
) -> Result<ThreadOutcome, DbError> {
    let mut conn = pool.take()?;
    let mut rngs: Vec<JavaRandom> = ops
        .iter()
        .map(|(op, _)| JavaRandom::new(super::run::thread_seed(op.random_seed, t)))
        .collect();
    let mut cursors: Vec<PutAllCursor> = ops
        .iter()
        .map(|(op, _)| PutAllCursor::new(op, t, threads))
        .collect();
    invocation_loop(t, per_thread, ops.len(), stop, done, |i, k| {
        let (op, writer) = &ops[k];
        let fail =
            |e: DbError| DbError::Database(format!("group {group}, operation {}: {e}", op.name));
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        match DbOp::of(op.test_case) {
            DbOp::Put => {
                let rows = writer.rows(op.key_start_num + i as i64 - 1);
                let now = time_now();
                // The entity in its own transaction, then each child in its own (§4.1).
                for row in rows {
                    conn.upsert(std::slice::from_ref(&row), now).map_err(fail)?;
                }
            }
            DbOp::PutAll => {
                let mut rows = Vec::with_capacity(op.batch_size);
                for _ in 0..op.batch_size {
                    rows.extend(writer.rows(cursors[k].next_id(op)));
                }
                conn.upsert(&rows, time_now()).map_err(fail)?;
            }
            DbOp::Get => {
                let v = i64::from(rngs[k].next_int_bound(bound));
                let key = writer.key(op.key_start_num + v);
                let found = conn.get(writer.kind(), &key).map_err(fail)?;
                misses[k].0.fetch_add(1, Ordering::Relaxed);
                misses[k]
                    .1
                    .fetch_add(u64::from(found.is_some()), Ordering::Relaxed);
            }
            DbOp::GetAll => {
                // PadoGrid: a HashSet of batchSize getKey(random) keys, without startNum.
                let keys: BTreeSet<String> = (0..op.batch_size)
                    .map(|_| writer.key(i64::from(rngs[k].next_int_bound(bound))))
                    .collect();
                let keys: Vec<String> = keys.into_iter().collect();
                let found = conn.get_all(writer.kind(), &keys).map_err(fail)?;
                misses[k].0.fetch_add(keys.len() as u64, Ordering::Relaxed);
                misses[k].1.fetch_add(found.len() as u64, Ordering::Relaxed);
            }
        }
        Ok(())
    })
}

/// Now in UTC, to the microsecond both servers store.
fn time_now() -> NaiveDateTime {
    let now = chrono::Utc::now();
    time_of(now.timestamp_millis())
        + chrono::Duration::microseconds(i64::from(now.timestamp_subsec_micros() % 1000))
}

// ---- the command ----

/// `-list`: per table, its rows and how many of the keys the groups write are there.
pub fn list(cfg: &GroupTestConfig, conn: &mut Conn, out: &mut dyn Write) -> Result<(), DbError> {
    let keys = written_keys(cfg);
    for kind in tables(cfg) {
        let name = table_def(kind).name;
        let line = match conn.count(kind)? {
            None => format!("{name}: no table"),
            Some(rows) => {
                let mine = keys.get(name).cloned().unwrap_or_default();
                let present = if mine.is_empty() {
                    0
                } else {
                    conn.count_keys(kind, &mine)?
                };
                format!(
                    "{name}: {rows} rows; the groups write {} keys, {present} present",
                    mine.len()
                )
            }
        };
        let _ = writeln!(out, "{line}");
    }
    Ok(())
}

/// `-delete`: removes the rows of the keys the groups write, one line per table.
pub fn delete(cfg: &GroupTestConfig, conn: &mut Conn, out: &mut dyn Write) -> Result<(), DbError> {
    let keys = written_keys(cfg);
    for kind in tables(cfg) {
        let name = table_def(kind).name;
        if !conn.table_exists(kind)? {
            let _ = writeln!(out, "{name}: no table, nothing to delete");
            continue;
        }
        let mine = keys.get(name).cloned().unwrap_or_default();
        let n = if mine.is_empty() {
            0
        } else {
            conn.delete_keys(kind, &mine)?
        };
        let _ = writeln!(out, "{name}: deleted {n} rows");
    }
    Ok(())
}

/// Flags of `test_group -db`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbFlags {
    /// `-run`.
    pub run: bool,
    /// `-list`.
    pub list: bool,
    /// `-delete`.
    pub delete: bool,
    /// `--db URL`.
    pub url: Option<String>,
    /// `--db-prop FILE` (default [`DB_PROPERTIES`]).
    pub prop: Option<PathBuf>,
}

/// `test_group -db`: without `-run`/`-list`/`-delete` prints where it would write; `-list`
/// and `-delete` act before `-run`. Results go to `results_root/perf_test_<product>/`. Returns
/// the runs (empty without `-run`) and the product.
pub fn test_group_db(
    cfg: &GroupTestConfig,
    flags: &DbFlags,
    results_root: &Path,
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(Vec<(GroupRun, PathBuf)>, String), DbError> {
    check_factories(cfg)?;
    let file = flags
        .prop
        .clone()
        .unwrap_or_else(|| PathBuf::from(DB_PROPERTIES));
    let settings = DbSettings::resolve(&file, flags.prop.is_some(), flags.url.as_deref())?;
    let database = Database::from_url(&settings.url)?;
    let where_ = format!(
        "database: {} (pool_size {}, from {})",
        database.describe(),
        settings.pool_size,
        settings.source
    );
    let table_names: Vec<&str> = tables(cfg).into_iter().map(|k| table_def(k).name).collect();
    if !flags.run && !flags.list && !flags.delete {
        let _ = writeln!(out, "{where_}");
        let _ = writeln!(out, "tables: {}", table_names.join(", "));
        let _ = writeln!(out, "To run the test, specify the '-run' option.");
        return Ok((Vec::new(), String::new()));
    }
    let pool = Pool::new(database, settings.pool_size);
    let product = pool.take()?.product()?;
    let _ = writeln!(out, "{where_}");
    if flags.list || flags.delete {
        let mut conn = pool.take()?;
        if flags.list {
            list(cfg, &mut conn, out)?;
        }
        if flags.delete {
            delete(cfg, &mut conn, out)?;
        }
    }
    if !flags.run {
        return Ok((Vec::new(), product));
    }
    let _ = writeln!(out, "Group Test (Database)");
    let now_ms = chrono::Utc::now().timestamp_millis();
    // The database is this run's PadoGrid app (perf::apps): perf_test_<product>.
    let results_dir = super::apps::app_for(results_root, &product).results_dir;
    let runs = run_db_group_test(cfg, &pool, &product, &results_dir, now_ms, stop, out)?;
    Ok((runs, product))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_sql_keeps_created_on_and_uses_each_dialect() {
        let pg = Dialect::Postgres.upsert(&CUSTOMERS);
        assert!(pg.starts_with("INSERT INTO customers (customerId, companyName,"));
        assert!(pg.contains(
            "$13) ON CONFLICT (customerId) DO UPDATE SET companyName = EXCLUDED.companyName"
        ));
        assert!(pg.ends_with("fax = EXCLUDED.fax, updated_on = EXCLUDED.updated_on"));
        assert!(!pg.contains("created_on = "));
        let my = Dialect::MySql.upsert(&ORDERS);
        assert_eq!(my.matches('?').count(), 16);
        assert!(my.contains("ON DUPLICATE KEY UPDATE customerId = VALUES(customerId)"));
        assert!(!my.contains("created_on = "));
    }

    #[test]
    fn keys_longer_than_the_id_column_are_refused_before_the_run() {
        let cfg = |prefix: &str| {
            let text = format!(
                "groupNames=g1\ng1.threadCount=1\ng1.totalInvocationCount=20\ng1.operations=set1\n\
                 set1.map=nw/customers\nset1.testCase=set\nset1.key.prefix={prefix}\n\
                 set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl\n\
                 set1.factory.key.length=5\nset1.factory.key.isRandom=false\n"
            );
            let props = Properties::parse(&text, "g.properties").expect("parses");
            GroupTestConfig::from_properties(&props, 2).expect("valid")
        };
        // 19 characters + a 1- or 2-digit id: 20 fits, 21 does not.
        assert!(check_factories(&cfg("customer-northwind")).is_ok());
        let err = check_factories(&cfg("customer-northwind-")).expect_err("21 characters");
        assert!(
            err.to_string()
                .contains("longer than its 20-character id column"),
            "{err}"
        );
    }

    #[test]
    fn written_keys_count_every_run_of_an_operation() {
        // set1 runs in g1 (96 invocations) and again in g2 (1000): -list/-delete cover 1000.
        let text = "groupNames=g1,g2\n\
                    g1.threadCount=8\ng1.totalInvocationCount=100\ng1.operations=set1\n\
                    g2.threadCount=8\ng2.totalInvocationCount=1000\ng2.operations=set1\n\
                    set1.map=nw/customers\nset1.testCase=set\n\
                    set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl\n\
                    set1.factory.key.length=10\nset1.factory.key.isRandom=false\n";
        let props = Properties::parse(text, "g.properties").expect("parses");
        let cfg = GroupTestConfig::from_properties(&props, 2).expect("valid");
        assert_eq!(written_keys(&cfg)["customers"].len(), 1000);
    }

    #[test]
    fn create_table_has_padogrid_columns_and_lengths() {
        let pg = Dialect::Postgres.create_table(&ORDERS);
        assert_eq!(
            pg,
            "CREATE TABLE IF NOT EXISTS orders (orderId varchar(20) NOT NULL PRIMARY KEY, \
             customerId varchar(20), employeeId varchar(20), orderDate timestamp, \
             requiredDate timestamp, shippedDate timestamp, shipVia varchar(50), \
             freight double precision, shipName varchar(50), shipAddress varchar(100), \
             shipCity varchar(50), shipRegion varchar(10), shipPostalCode varchar(10), \
             shipCountry varchar(100), created_on timestamp, updated_on timestamp)"
        );
        let my = Dialect::MySql.create_table(&CUSTOMERS);
        assert!(my.contains("customerId varchar(20) NOT NULL PRIMARY KEY, companyName varchar(50)"));
        assert!(
            my.ends_with("created_on datetime(6), updated_on datetime(6)) DEFAULT CHARSET=utf8mb4")
        );
    }

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

    #[test]
    fn values_round_trip_through_the_column_order() {
        let f = crate::perf::factory::Factory::new(
            FactoryKind::Order,
            super::super::config::KeyFormat {
                prefix: "o".into(),
                length: 6,
                is_random: false,
                leading_zeros: true,
            },
            1_700_000_000_123,
        );
        let e = f.create_entry(7, Some("c1"), &mut JavaRandom::new(3));
        assert_eq!(entity_of(FactoryKind::Order, values_of(&e.value)), e.value);
        assert_eq!(values_of(&e.value).len(), ORDERS.columns.len());
    }

    #[test]
    fn settings_come_from_the_flag_or_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db.properties");
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("-db needs a database: give --db URL"), "{e}");
        let e = DbSettings::resolve(&file, true, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such file (check the --db-prop path)"), "{e}");
        let s = DbSettings::resolve(&file, false, Some("mysql://root@h/nw")).unwrap();
        assert_eq!(s.pool_size, DEFAULT_POOL_SIZE);
        std::fs::write(
            &file,
            "# db\nurl = postgres://root@127.0.0.1/nw\npool_size=4\n",
        )
        .unwrap();
        let s = DbSettings::resolve(&file, false, None).unwrap();
        assert_eq!(
            (s.url.as_str(), s.pool_size),
            ("postgres://root@127.0.0.1/nw", 4)
        );
        let s = DbSettings::resolve(&file, false, Some("mysql://root@h/nw")).unwrap();
        assert_eq!((s.url.as_str(), s.pool_size), ("mysql://root@h/nw", 4));
        std::fs::write(&file, "url=postgres:///nw\npool_size=0\n").unwrap();
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(":2: pool_size=\"0\" is not a whole number >= 1 (the most connections the run opens at once)"), "{e}");
        std::fs::write(&file, "pool_size=2\n").unwrap();
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(": missing url (set url="), "{e}");
    }
}
