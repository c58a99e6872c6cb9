//! SQLite as a target: a private database file in a temp directory (`sqlite`), the user's
//! file (`sqlite:///PATH`) or memory (`sqlite::memory:`), in the 2018 layout or EdgeX 4.0's
//! schema, in this process.

use std::path::PathBuf;
use std::sync::Arc;

use super::edgex4::{Sqlite4Database, Sqlite4Store};
use super::{SqliteDatabase, SqliteStore};
use crate::store::backend::{BackendError, Database, InLayout};
use crate::store::StoreResult;

/// Where a SQLite target keeps its database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqliteAt {
    /// A file in a fresh temp directory, removed after the run (`sqlite`).
    Temp,
    /// The user's file (`sqlite:///PATH`), kept.
    File(PathBuf),
    /// In memory (`sqlite::memory:`).
    Memory,
}

/// A SQLite target's database, in the layout it was made for.
pub type SqliteTarget = InLayout<SqliteDatabase, Sqlite4Database>;

/// Opens (or creates) the database at `at` in EdgeX 4.0's schema (`edgex4`) or the 2018
/// layout.
pub fn start(at: &SqliteAt, edgex4: bool) -> Result<SqliteTarget, BackendError> {
    Ok(match (edgex4, at) {
        (false, SqliteAt::Temp) => InLayout::V2018(Box::new(SqliteDatabase::temp()?)),
        (false, SqliteAt::File(path)) => {
            InLayout::V2018(Box::new(SqliteDatabase::file(path.clone())?))
        }
        (false, SqliteAt::Memory) => InLayout::V2018(Box::new(SqliteDatabase::memory()?)),
        (true, SqliteAt::Temp) => InLayout::EdgeX4(Arc::new(Sqlite4Database::temp()?)),
        (true, SqliteAt::File(path)) => {
            InLayout::EdgeX4(Arc::new(Sqlite4Database::file(path.clone())?))
        }
        (true, SqliteAt::Memory) => InLayout::EdgeX4(Arc::new(Sqlite4Database::memory()?)),
    })
}

impl Database for SqliteDatabase {
    type Store = SqliteStore;
    fn open(&self) -> StoreResult<SqliteStore> {
        self.open_store()
    }
    fn describe(&self) -> String {
        format!("sqlite {}", SqliteDatabase::describe(self))
    }
}

impl Database for Sqlite4Database {
    type Store = Sqlite4Store;
    fn open(&self) -> StoreResult<Sqlite4Store> {
        self.open_store()
    }
    fn describe(&self) -> String {
        format!("sqlite {}", Sqlite4Database::describe(self))
    }
}
