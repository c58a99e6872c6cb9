//! PostgreSQL as a target: a private database (`edgebench_<random>`) on the server the PG*
//! environment names (`pg-tcp`, `pg-uds`) or a `postgres://` URL names, made for the run in
//! the 2018 layout or EdgeX 4.0's schema and dropped when the target drops.

use std::sync::Arc;

use super::edgex4::{Pg4Database, Pg4Store};
use super::{config_from_env, config_from_url, PgDatabase, PgStore, PgTransport};
use crate::store::backend::{BackendError, Database, InLayout};
use crate::store::{StoreError, StoreResult};

/// Which PostgreSQL server a target uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgAt {
    /// `pg-tcp` / `pg-uds`: the PG* environment variables and libpq's defaults.
    Env(PgTransport),
    /// A `postgres://` or `postgresql://` URL.
    Url(String),
}

impl PgAt {
    /// The connection settings of the server (its admin database).
    pub fn config(&self) -> Result<postgres::Config, StoreError> {
        match self {
            PgAt::Env(transport) => Ok(config_from_env(*transport)),
            PgAt::Url(url) => config_from_url(url).map_err(|message| StoreError::Backend {
                backend: "postgres",
                message,
            }),
        }
    }
}

/// A PostgreSQL target's private database, in the layout it was made for.
pub type PgTarget = InLayout<PgDatabase, Pg4Database>;

/// Creates the private database in EdgeX 4.0's schema (`edgex4`) or the 2018 layout.
pub fn start(at: &PgAt, edgex4: bool) -> Result<PgTarget, BackendError> {
    let config = at.config()?;
    Ok(match edgex4 {
        false => InLayout::V2018(Box::new(PgDatabase::create(&config)?)),
        true => InLayout::EdgeX4(Arc::new(Pg4Database::create(&config)?)),
    })
}

// Both say "postgres at …" themselves.
impl Database for PgDatabase {
    type Store = PgStore;
    fn open(&self) -> StoreResult<PgStore> {
        self.open_store()
    }
    fn describe(&self) -> String {
        PgDatabase::describe(self)
    }
}

impl Database for Pg4Database {
    type Store = Pg4Store;
    fn open(&self) -> StoreResult<Pg4Store> {
        self.open_store()
    }
    fn describe(&self) -> String {
        Pg4Database::describe(self)
    }
}
