//! `test_group -db` (reference §4): the groups' factory objects upserted into PostgreSQL or
//! MariaDB/MySQL instead of a Redis target — Customers into `customers`, Orders into
//! `orders`, with PadoGrid's columns and lengths (§4.4) — and `-list`/`-delete` of what the
//! groups write.
//!
//! Data flows: [`DbSettings`] (`--db URL`, `etc/db.properties`) → [`Database`] → [`Pool`] of
//! [`Conn`]s → [`run_db_group_test`] (one thread per `threadCount`, each holding one pooled
//! connection for its whole loop, as PadoGrid's threads hold a Hibernate `Session`) →
//! [`GroupRun`](crate::perf::results::GroupRun) results files with the `(Dababase)` header.
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
//!
//! The files, in the order a run goes through them: `settings` (where to write), `schema`
//! (tables, typed column values and the two dialects' SQL), `connection` ([`Database`],
//! [`Conn`]), `pool`, `writes` (what each operation writes, and so what `-list`/`-delete`
//! cover), `runner` (the timed run) and `command` (`test_group -db` itself); `error` is the
//! error type they share.

mod command;
mod connection;
mod error;
mod pool;
mod runner;
mod schema;
mod settings;
mod writes;

pub use command::{delete, list, test_group_db, DbFlags};
pub use connection::{Conn, Database, PgConn};
pub use error::DbError;
pub use pool::{Pool, PooledConn};
pub use runner::run_db_group_test;
pub use settings::{DbSettings, DB_PROPERTIES, DEFAULT_POOL_SIZE};
pub use writes::{check_factories, tables, written_keys, DbOp};
// `perf::db::Writer`: where the writer lived before it moved beside the factories.
pub use crate::perf::factory::Writer;
