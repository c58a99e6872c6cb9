//! EdgeX 4.0's PostgreSQL schema and statements ported to SQLite, in process.
//!
//! EdgeX has no SQLite layout. This is its 4.0.2 `core_data` schema
//! (edgexfoundry/edgex-go at v4.0.2, `internal/pkg/infrastructure/postgres/`) with the same tables, columns,
//! indexes and statements as [`crate::store::postgres::edgex4`], spelled in SQLite's dialect, so
//! the in-process SQL column of a benchmark does the work EdgeX 4.0 asks of PostgreSQL:
//! device_info rows and their cache, the event and its readings in one transaction, no
//! duplicate-id check, no reading ids, values spread over the value columns, one readings
//! query per listed event, the same deletes, and EdgeX 4.0's retention queries on one device
//! and source. `schema` says how each type is ported and why `numeric_value` is `TEXT`.
//!
//! What differs from [`crate::store::postgres::edgex4`], besides the dialect:
//! - readings go in by one prepared `INSERT` per reading inside the event's transaction,
//!   since SQLite has no `COPY`;
//! - the readings of an event are ordered `origin DESC, reading.rowid`: rowid order is
//!   insertion order in SQLite, so readings that share their event's origin always come back
//!   in the order they were sent (PostgreSQL's `ctid` only mostly is);
//! - writes take the write lock up front (`BEGIN IMMEDIATE`), as the 2018 SQLite store's do,
//!   so concurrent writers queue on the busy timeout instead of deadlocking.
//!
//! [`Sqlite4Database`] is where the data lives, as [`crate::store::sqlite::SqliteDatabase`]
//! is for the 2018 store (it is one underneath: WAL mode for files, the `memdb` VFS for
//! memory, the same busy timeout and statement cache), plus the device_info cache its stores
//! share.

mod schema;
mod store;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::store::edgex::sql4::DeviceInfoCache;
use crate::store::sqlite::SqliteDatabase;
use crate::store::StoreResult;
pub use store::Sqlite4Store;

/// Where a run's SQLite data lives, with the ported EdgeX 4.0 schema, created once per run.
/// Stores opened from it ([`Self::open_store`]) share its data and its device_info cache;
/// drop them before it.
pub struct Sqlite4Database {
    database: SqliteDatabase,
    device_infos: Arc<DeviceInfoCache>,
}

impl Sqlite4Database {
    fn with(database: SqliteDatabase) -> Sqlite4Database {
        Sqlite4Database {
            database,
            device_infos: Arc::default(),
        }
    }

    /// A database file (`edgebench.db`) in a fresh temp directory, in WAL mode; the
    /// directory is deleted when this value drops.
    pub fn temp() -> StoreResult<Sqlite4Database> {
        SqliteDatabase::temp_with_schema(schema::SCHEMA).map(Sqlite4Database::with)
    }

    /// The database file at `path`, created when missing, switched to WAL mode; the schema is
    /// added if it is not there. The file stays when this value drops.
    pub fn file(path: impl Into<PathBuf>) -> StoreResult<Sqlite4Database> {
        SqliteDatabase::file_with_schema(path, schema::SCHEMA).map(Sqlite4Database::with)
    }

    /// A private in-memory database (SQLite's `memdb` VFS), shared by every store opened from
    /// this value and freed when it drops.
    pub fn memory() -> StoreResult<Sqlite4Database> {
        SqliteDatabase::memory_with_schema(schema::SCHEMA).map(Sqlite4Database::with)
    }

    /// Where the data lives, for the run header: the file's path, or `:memory:`.
    /// What opens connections to this database (YCSB's openers).
    pub(crate) fn connector(&self) -> super::v2018::Connector {
        self.database.connector()
    }

    pub fn describe(&self) -> String {
        self.database.describe()
    }

    /// A store on its own connection to this database (one per worker).
    pub fn open_store(&self) -> StoreResult<Sqlite4Store> {
        Sqlite4Store::new(
            self.database.connect()?,
            Arc::clone(&self.device_infos),
            self.describe(),
        )
    }
}

impl fmt::Debug for Sqlite4Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sqlite4Database")
            .field("location", &self.describe())
            .finish()
    }
}
