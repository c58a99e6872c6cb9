//! MongoDB as a target: a private database on the server a `mongodb://` URL names, made for
//! the run in one of the 2018 layouts (readings embedded or referenced, with the 2018
//! client's fidelity or not) or as EdgeX 4.0's records, and dropped when the target drops.

use std::sync::Arc;

use super::edgex4::{Mongo4Database, Mongo4Store};
use super::{Fidelity, MongoDatabase, MongoLayout, MongoStore};
use crate::store::backend::{BackendError, Database, InLayout};
use crate::store::StoreResult;

/// A MongoDB target's private database, in the layout it was made for.
pub type MongoTarget = InLayout<MongoDatabase, Mongo4Database>;

/// Creates the private database at `url`: EdgeX 4.0's records (`edgex4`), or the 2018 layout
/// `layout` with `fidelity`.
pub fn start(
    url: &str,
    layout: MongoLayout,
    fidelity: Fidelity,
    edgex4: bool,
) -> Result<MongoTarget, BackendError> {
    Ok(match edgex4 {
        false => InLayout::V2018(Box::new(MongoDatabase::create(url, layout, fidelity)?)),
        true => InLayout::EdgeX4(Arc::new(Mongo4Database::create(url)?)),
    })
}

impl Database for MongoDatabase {
    type Store = MongoStore;
    fn open(&self) -> StoreResult<MongoStore> {
        self.open_store()
    }
    fn describe(&self) -> String {
        format!("mongodb {}", MongoDatabase::describe(self))
    }
}

impl Database for Mongo4Database {
    type Store = Mongo4Store;
    fn open(&self) -> StoreResult<Mongo4Store> {
        self.open_store()
    }
    fn describe(&self) -> String {
        Mongo4Database::describe(self)
    }
}
