//! [`Pg4Database`]: the private database of a run with EdgeX 4.0's schema, made and dropped
//! by the 2018 store's [`PgDatabase`] (`edgebench_<random>`, `DROP ... WITH (FORCE)` on drop),
//! and the device_info cache its stores share.

use std::sync::Arc;

use super::schema::SCHEMA;
use super::store::Pg4Store;
use crate::store::edgex::sql4::DeviceInfoCache;
use crate::store::postgres::{PgConfig, PgDatabase};
use crate::store::StoreResult;

/// A private database (`edgebench_<random>`) with EdgeX 4.0's `core_data` schema, dropped
/// when this value drops. Its stores share one device_info cache, as the requests of one
/// EdgeX core-data service do.
pub struct Pg4Database {
    database: PgDatabase,
    device_infos: Arc<DeviceInfoCache>,
}

impl Pg4Database {
    /// Creates a fresh database on the server `admin` points at (connecting to `admin`'s
    /// database, or `postgres` when it names none) with the schema in it. `admin` comes from
    /// [`crate::store::postgres::config_from_url`] or
    /// [`crate::store::postgres::config_from_env`].
    pub fn create(admin: &PgConfig) -> StoreResult<Pg4Database> {
        Ok(Pg4Database {
            database: PgDatabase::create_with_schema(admin, SCHEMA)?,
            device_infos: Arc::default(),
        })
    }

    /// A store on this database: one connection, for one worker.
    pub fn open_store(&self) -> StoreResult<Pg4Store> {
        Pg4Store::with_cache(self.database.connect()?, Arc::clone(&self.device_infos))
    }

    /// Where and what this database is, for the run header, e.g. `postgres at
    /// /var/run/postgresql:5432, database edgebench_0123456789ab, user root` (the target adds
    /// the layout).
    pub fn describe(&self) -> String {
        self.database.describe()
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        self.database.name()
    }

    /// The config that connects to this database.
    pub fn config(&self) -> &PgConfig {
        self.database.config()
    }
}
