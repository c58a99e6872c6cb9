//! The private database of a run (`edgebench_<random>`): created with the schema and
//! dropped (`WITH (FORCE)`) when [`PgDatabase`] drops.

use postgres::error::SqlState;
use postgres::Client;

use super::config::endpoint;
use super::errors::{backend_error, connect_error};
use super::schema::{ADMIN_DATABASE, DROP_CONNECT_TIMEOUT, SCHEMA};
use super::store::PgStore;
use super::tls::PgConfig;
use crate::store::shared::chain;
use crate::store::shared::private_name;
use crate::store::StoreResult;

/// The private database of a run: `edgebench_<random>` on the server of an admin config,
/// with the store's schema. Dropping it drops the database (`WITH (FORCE)`, so connections
/// still open do not keep it), through a fresh admin connection; a failure there is ignored.
pub struct PgDatabase {
    /// How to reach the server for `CREATE`/`DROP DATABASE`.
    admin: PgConfig,
    /// How to reach the private database.
    config: PgConfig,
    name: String,
}

impl PgDatabase {
    /// Creates a fresh database on the server `admin` points at (connecting to `admin`'s
    /// database, or `postgres` when it names none) and the store's schema in it.
    pub fn create(admin: &PgConfig) -> StoreResult<PgDatabase> {
        PgDatabase::create_with_schema(admin, SCHEMA)
    }

    /// [`Self::create`] with another schema: `schema` is run (as one batch) in the fresh
    /// database. The EdgeX 4.0 layout ([`crate::store::postgres::edgex4`]) makes its private
    /// databases with it; [`Self::open_store`] is only for databases with the 2018 schema.
    pub(crate) fn create_with_schema(admin: &PgConfig, schema: &str) -> StoreResult<PgDatabase> {
        let mut admin = admin.clone();
        if admin.config().get_dbname().is_none() {
            admin.config_mut().dbname(ADMIN_DATABASE);
        }
        let mut client = admin.connect().map_err(|e| connect_error(&admin, &e))?;
        let name = private_name();
        // `name` is ours: lowercase letters, digits and `_`, no quoting needed.
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| {
                let fix = if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                    format!(
                        " (the role needs CREATEDB: ALTER ROLE {} CREATEDB)",
                        admin.config().get_user().unwrap_or("<user>")
                    )
                } else {
                    String::new()
                };
                backend_error(format!(
                    "cannot create database {name} at {}: {}{fix}",
                    endpoint(admin.config()),
                    chain(&e)
                ))
            })?;
        drop(client);
        let mut config = admin.clone();
        config.config_mut().dbname(&name);
        // From here on, `Drop` removes the database whatever fails next.
        let database = PgDatabase {
            admin,
            config,
            name,
        };
        let mut client = database.connect()?;
        client.batch_execute(schema).map_err(|e| {
            backend_error(format!(
                "cannot create the schema in {}: {}",
                database.name,
                chain(&e)
            ))
        })?;
        Ok(database)
    }

    /// A store on this database: one connection, for one worker.
    pub fn open_store(&self) -> StoreResult<PgStore> {
        PgStore::new(self.connect()?)
    }

    /// Where and what this database is, for the run header, e.g.
    /// `postgres at /var/run/postgresql:5432, database edgebench_0123456789ab, user root`.
    pub fn describe(&self) -> String {
        format!(
            "postgres at {}, database {}, user {}{}",
            endpoint(self.config.config()),
            self.name,
            self.config.config().get_user().unwrap_or("(OS user)"),
            self.config.describe_tls()
        )
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The config that connects to this database.
    pub fn config(&self) -> &PgConfig {
        &self.config
    }

    /// A fresh connection to this database.
    pub(crate) fn connect(&self) -> StoreResult<Client> {
        self.config
            .connect()
            .map_err(|e| connect_error(&self.config, &e))
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let mut admin = self.admin.clone();
        if admin.config().get_connect_timeout().is_none() {
            admin.config_mut().connect_timeout(DROP_CONNECT_TIMEOUT);
        }
        if let Ok(mut client) = admin.connect() {
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            let _ = client.batch_execute(&sql);
        }
    }
}
