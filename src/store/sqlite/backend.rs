//! SQLite as a target: a private database file in a temp directory (`sqlite`), the user's
//! file (`sqlite:///PATH`) or memory (`sqlite::memory:`), in the 2018 layout or EdgeX 4.0's
//! schema, in this process.

use std::path::PathBuf;
use std::sync::Arc;

use super::edgex4::{Sqlite4Database, Sqlite4Store};
use super::{SqliteDatabase, SqliteStore};
use crate::store::backend::{
    no_wait, Backend, BackendError, Database, InLayout, Kind, ParseError, Started,
};
use crate::store::layout::Layout;
use crate::store::ycsb::{Binding, Setup, YcsbOpener};
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

/// SQLite's `--target` items: `sqlite`, `sqlite:///PATH`, `sqlite::memory:`; `sqlite` is also
/// in a run without `--target`.
pub struct SqliteBackend;

impl Backend for SqliteBackend {
    fn forms(&self) -> &'static str {
        "sqlite, sqlite:///PATH, sqlite::memory:"
    }

    fn urls(&self) -> &'static str {
        "sqlite:///PATH"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let at = match what {
            "sqlite" => Ok(SqliteAt::Temp),
            "sqlite::memory:" | "sqlite://:memory:" => Ok(SqliteAt::Memory),
            _ => {
                let (scheme, rest) = what.split_once("://")?;
                if !scheme.eq_ignore_ascii_case("sqlite") {
                    return None;
                }
                match rest {
                    path if path.starts_with('/') => Ok(SqliteAt::File(path.into())),
                    _ => Err(ParseError::BadUrl(
                        "expected sqlite:///ABSOLUTE/PATH (three slashes), sqlite::memory: or \
                         plain sqlite for a temp file"
                            .to_string(),
                    )),
                }
            }
        };
        Some(at.map(|at| Arc::new(at) as Arc<dyn Kind>))
    }

    fn defaults(&self, _notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        vec![Arc::new(SqliteAt::Temp)]
    }
}

impl Kind for SqliteAt {
    fn column(&self) -> String {
        "SQLite_Embedded".to_string()
    }

    fn layouts(&self) -> &'static [Layout] {
        &[Layout::Y2018, Layout::EdgeX4]
    }

    fn fds_per_connection(&self) -> u8 {
        0
    }

    fn ycsb_bindings(&self) -> &'static [Binding] {
        &[Binding::Jdbc]
    }

    fn start(&self, layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        no_wait(wait)?;
        Ok(Box::new(start(self, layout == Layout::EdgeX4)?))
    }
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
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.connector(), setup)
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
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.connector(), setup)
    }
}
