//! PostgreSQL as a target: a private database (`edgebench_<random>`) on the server the PG*
//! environment names (`pg-tcp`, `pg-uds`) or a `postgres://` URL names, made for the run in
//! the 2018 layout or EdgeX 4.0's schema and dropped when the target drops.

use std::sync::Arc;
use std::time::Duration;

use super::edgex4::{Pg4Database, Pg4Store};
use super::{config_from_env, config_from_url, PgConfig, PgDatabase, PgStore, PgTransport};
use crate::store::backend::{
    no_wait, Backend, BackendError, Database, InLayout, Kind, ParseError, Started,
};
use crate::store::layout::Layout;
use crate::store::ycsb::{Binding, Setup, YcsbOpener};
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
    pub fn config(&self) -> Result<PgConfig, StoreError> {
        match self {
            PgAt::Env(transport) => Ok(config_from_env(*transport)),
            PgAt::Url(url) => config_from_url(url).map_err(|message| StoreError::Backend {
                backend: "postgres",
                message,
            }),
        }
    }
}

/// How long a run without `--target` waits for a PostgreSQL server to answer before leaving
/// it out.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// PostgreSQL's `--target` items: `pg-tcp`, `pg-uds`, `postgres://…`; `pg-tcp` and `pg-uds`
/// are also in a run without `--target` when a server answers there.
pub struct PgBackend;

impl Backend for PgBackend {
    fn forms(&self) -> &'static str {
        "pg-tcp, pg-uds, postgres://…"
    }

    fn urls(&self) -> &'static str {
        "postgres://…"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let at = match what {
            "pg-tcp" => PgAt::Env(PgTransport::Tcp),
            "pg-uds" => PgAt::Env(PgTransport::Uds),
            _ => {
                let (scheme, _) = what.split_once("://")?;
                if !scheme.eq_ignore_ascii_case("postgres")
                    && !scheme.eq_ignore_ascii_case("postgresql")
                {
                    return None;
                }
                // Checked now, so a typo fails before any benchmark runs; parsed again at
                // start.
                if let Err(reason) = config_from_url(what) {
                    return Some(Err(ParseError::BadUrl(reason)));
                }
                PgAt::Url(what.to_string())
            }
        };
        Some(Ok(Arc::new(at)))
    }

    fn defaults(&self, notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        let mut kinds: Vec<Arc<dyn Kind>> = Vec::new();
        let mut missing = Vec::new();
        for transport in [PgTransport::Tcp, PgTransport::Uds] {
            let config = config_from_env(transport);
            if answers(&config) {
                kinds.push(Arc::new(PgAt::Env(transport)));
            } else {
                missing.push(super::endpoint(config.config()));
            }
        }
        if !missing.is_empty() {
            notes.push(format!(
                "no PostgreSQL answered at {}: no {} column (start PostgreSQL, set PGHOST/PGPORT/\
                 PGUSER, or give --target postgres://USER@HOST:PORT/DB)",
                missing.join(" or "),
                if missing.len() == 2 {
                    "PostgreSQL_TCP or PostgreSQL_UDS"
                } else if missing[0].starts_with('/') {
                    UDS_COLUMN
                } else {
                    TCP_COLUMN
                }
            ));
        }
        kinds
    }
}

/// Column name of PostgreSQL over TCP.
const TCP_COLUMN: &str = "PostgreSQL_TCP";
/// Column name of PostgreSQL over its Unix socket.
const UDS_COLUMN: &str = "PostgreSQL_UDS";
/// What a column's name gets when its connections are TLS, as `RedisDB_TCP+TLS`.
const TLS_SUFFIX: &str = "+TLS";

/// Whether a PostgreSQL server accepts a connection with `config` within [`PROBE_TIMEOUT`].
fn answers(config: &PgConfig) -> bool {
    let mut config = config.clone();
    config.config_mut().connect_timeout(PROBE_TIMEOUT);
    config.connect().is_ok()
}

impl Kind for PgAt {
    /// `PostgreSQL_TCP`, `PostgreSQL_UDS`, or `PostgreSQL_TCP+TLS` when every connection is
    /// TLS (`sslmode` require, verify-ca or verify-full; `prefer` may or may not encrypt and
    /// keeps the plain name, the run header says so).
    fn column(&self) -> String {
        let (uds, tls) = match self {
            PgAt::Env(transport) => (*transport == PgTransport::Uds, false),
            PgAt::Url(url) => {
                config_from_url(url).map_or((false, false), |c| (c.is_socket(), c.encrypts()))
            }
        };
        let column = if uds { UDS_COLUMN } else { TCP_COLUMN };
        if tls {
            format!("{column}{TLS_SUFFIX}")
        } else {
            column.to_string()
        }
    }

    fn layouts(&self) -> &'static [Layout] {
        &[Layout::Y2018, Layout::EdgeX4]
    }

    fn default_run_layouts(&self) -> &'static [Layout] {
        &[Layout::Y2018, Layout::EdgeX4]
    }

    fn ycsb_bindings(&self) -> &'static [Binding] {
        &[Binding::Jdbc, Binding::PostgreNoSql]
    }

    fn start(&self, layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        no_wait(wait)?;
        Ok(Box::new(start(self, layout == Layout::EdgeX4)?))
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
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.config(), setup)
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
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.config(), setup)
    }
}
