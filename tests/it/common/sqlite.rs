//! Openers for the SQLite store: a fresh database per test, a file in a temp directory
//! (WAL mode) or a private in-memory database, each dropped with its backend.

use edgebench::store::sqlite::SqliteDatabase;

use super::Backend;

/// A store on a fresh database file in its own temp directory, deleted when the backend drops.
pub fn file() -> Backend {
    open(SqliteDatabase::temp().unwrap_or_else(|e| panic!("{e}")))
}

/// A store on a fresh private in-memory database, freed when the backend drops.
pub fn memory() -> Backend {
    open(SqliteDatabase::memory().unwrap_or_else(|e| panic!("{e}")))
}

fn open(database: SqliteDatabase) -> Backend {
    let store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    Backend::new(Box::new(store), database)
}
