//! What a run talks to: a Redis server that edgebench spawns or finds at a URL, the in-process
//! engine, or a document store (PostgreSQL, MongoDB, SQLite).
//!
//! Transport is data. An [`Endpoint`] says where a Redis-protocol server is (a TCP host and
//! port, or a Unix socket path). A [`TargetKind`] says how the backend comes to exist
//! (spawned here, started in-process, or given by URL). Every Redis-protocol target opens the
//! same [`RedisStore`], over a [`redis::Connection`] or the engine's in-process connection, so
//! a workload written once against [`CoreData`] runs on every transport. The document stores
//! are one store each, and their transports (PostgreSQL over TCP or its Unix socket) are
//! again data. A new transport is one more `TargetKind` variant and one more arm in
//! [`Target::start`] and [`Target::open_store`], not a new store.
//!
//! A document-store target owns a private database for the run (`edgebench_<random>`, or a
//! temp-dir SQLite file) and drops it when the target drops.
//!
//! Each target has a column name (`RedisDB_TCP`, `RedisDB_UDS`, or the user's `NAME=`). It
//! becomes part of Go benchmark names such as `BenchmarkRedisDB_TCP/AddEvent-2`, so it is
//! restricted to `[A-Za-z0-9_.]` and unique within a run.
//!
//! Connections have `TCP_NODELAY` on. Every benchmark is a sequence of single small round
//! trips, and Nagle's algorithm would hold some of them back.

pub mod spawn;

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use redis::io::tcp::TcpSettings;
use redis::{ConnectionAddr, IntoConnectionInfo, RedisError};

use crate::engine::{Engine, EngineConnection};
use crate::store::engine::EngineStore;
use crate::store::mongo::{Fidelity, MongoDatabase, MongoLayout};
use crate::store::postgres::{self as pg, PgDatabase, PgTransport};
use crate::store::redis::RedisStore;
use crate::store::sqlite::SqliteDatabase;
use crate::store::{CoreData, StoreError};
use spawn::{Listen, RedisServer, SpawnError};

/// How long a connection attempt may take before the target counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Column name of the Redis-over-TCP targets (the 2018 `BenchmarkRedisDB_TCP`).
const TCP_COLUMN: &str = "RedisDB_TCP";
/// Column name of the Redis-over-Unix-socket targets (the 2018 `BenchmarkRedisDB_UDS`).
const UDS_COLUMN: &str = "RedisDB_UDS";
/// The Redis store on the in-process engine through its redis-rs connection (the 2018
/// eredis column was `BenchmarkRedisDB_Embedded`).
const EMBEDDED_COLUMN: &str = "RedisDB_Embedded";
/// The engine's typed API, called directly.
const DIRECT_COLUMN: &str = "Embedded_Direct";
/// The engine served by edgebench's RESP server over TCP.
const EMBEDDED_TCP_COLUMN: &str = "Embedded_TCP";
/// The engine served by edgebench's RESP server over a Unix socket.
const EMBEDDED_UDS_COLUMN: &str = "Embedded_UDS";
/// SQLite, in-process, as a document store.
const SQLITE_COLUMN: &str = "SQLite_Embedded";
/// PostgreSQL (JSONB) over TCP.
const PG_TCP_COLUMN: &str = "PostgreSQL_TCP";
/// PostgreSQL (JSONB) over its Unix socket.
const PG_UDS_COLUMN: &str = "PostgreSQL_UDS";
/// MongoDB (the seed's document-store column was `BenchmarkMongoDB`).
const MONGO_COLUMN: &str = "MongoDB";
/// How long the default run waits for a PostgreSQL server to answer before leaving it out.
const PG_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP; `host` is a name or an IP address (IPv6 without brackets).
    Tcp {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// A Unix domain socket (absolute path).
    Unix(PathBuf),
}

/// Where edgebench's own RESP server listens, as a target's endpoint.
impl From<crate::server::Address> for Endpoint {
    fn from(address: crate::server::Address) -> Endpoint {
        match address {
            crate::server::Address::Tcp(addr) => Endpoint::Tcp {
                host: addr.ip().to_string(),
                port: addr.port(),
            },
            crate::server::Address::Unix(path) => Endpoint::Unix(path),
        }
    }
}

impl fmt::Display for Endpoint {
    /// As a URL that [`parse_targets`] accepts: `redis://HOST:PORT` or `redis+unix:///PATH`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => {
                write!(f, "redis://[{host}]:{port}")
            }
            Endpoint::Tcp { host, port } => write!(f, "redis://{host}:{port}"),
            Endpoint::Unix(path) => write!(f, "redis+unix://{}", path.display()),
        }
    }
}

/// How a target's server comes to exist.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetKind {
    /// A `redis-server` spawned for the run, on a free 127.0.0.1 port.
    SpawnRedisTcp,
    /// A `redis-server` spawned for the run, on a Unix socket in a temporary directory.
    SpawnRedisUds,
    /// A Redis server already running at this endpoint.
    Redis(Endpoint),
    /// The in-process engine, through its redis-rs connection (no socket).
    Embedded,
    /// The in-process engine's typed API, called directly by its own store.
    EmbeddedDirect,
    /// The engine served over TCP by edgebench's RESP server, inside this process.
    EmbeddedTcp,
    /// The engine served over a Unix socket by edgebench's RESP server, inside this process.
    EmbeddedUds,
    /// SQLite in this process, as a document store.
    Sqlite(SqliteAt),
    /// A PostgreSQL server (JSONB documents) in which the run creates a private database.
    Postgres(PgAt),
    /// A MongoDB server in which the run creates a private database.
    Mongo {
        /// The `mongodb://` URL.
        url: String,
        /// Readings inside their event, or in their own collection.
        layout: MongoLayout,
        /// The 2018 client's one-query-per-reading loads, or one `$in` query.
        fidelity: Fidelity,
    },
}

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

/// Which PostgreSQL server a target uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgAt {
    /// `pg-tcp` / `pg-uds`: the PG* environment variables and libpq's defaults.
    Env(PgTransport),
    /// A `postgres://` or `postgresql://` URL.
    Url(String),
}

impl TargetKind {
    /// The column name a target of this kind gets when the user names none.
    fn default_column(&self) -> &'static str {
        match self {
            TargetKind::SpawnRedisUds | TargetKind::Redis(Endpoint::Unix(_)) => UDS_COLUMN,
            TargetKind::SpawnRedisTcp | TargetKind::Redis(Endpoint::Tcp { .. }) => TCP_COLUMN,
            TargetKind::Embedded => EMBEDDED_COLUMN,
            TargetKind::EmbeddedDirect => DIRECT_COLUMN,
            TargetKind::EmbeddedTcp => EMBEDDED_TCP_COLUMN,
            TargetKind::EmbeddedUds => EMBEDDED_UDS_COLUMN,
            TargetKind::Sqlite(_) => SQLITE_COLUMN,
            TargetKind::Postgres(PgAt::Env(PgTransport::Tcp)) => PG_TCP_COLUMN,
            TargetKind::Postgres(PgAt::Env(PgTransport::Uds)) => PG_UDS_COLUMN,
            TargetKind::Postgres(PgAt::Url(url)) => match pg::config_from_url(url) {
                Ok(c) if is_pg_socket(&c) => PG_UDS_COLUMN,
                _ => PG_TCP_COLUMN,
            },
            TargetKind::Mongo { .. } => MONGO_COLUMN,
        }
    }
}

/// Whether a PostgreSQL config connects through a Unix socket (its first host is a socket
/// directory).
fn is_pg_socket(config: &postgres::Config) -> bool {
    matches!(
        config.get_hosts().first(),
        Some(postgres::config::Host::Unix(_))
    )
}

/// A named target, as parsed from the command line; [`Target::start`] brings it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    /// Column name in results, `[A-Za-z0-9_.]+`, unique within a run.
    pub name: String,
    /// What to talk to.
    pub kind: TargetKind,
}

/// Why a target could not be parsed, started or reached. Each message is one line that names
/// the input and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// An empty item in a comma-separated list.
    #[error("empty target in {value:?}: remove the extra comma")]
    Empty {
        /// The whole value the item came from.
        value: String,
    },
    /// Neither a known target name nor a URL.
    #[error(
        "unknown target {item:?}: use embedded, embedded-direct, embedded-tcp, embedded-uds, \
         redis-tcp, redis-uds, redis://HOST:PORT, redis+unix:///PATH, sqlite, \
         sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, mongodb://HOST:PORT \
         or NAME=any of these"
    )]
    Unknown {
        /// The item as given.
        item: String,
    },
    /// A URL that does not parse.
    #[error("bad target URL {url:?}: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it, and the fix.
        reason: String,
    },
    /// A `NAME=` that would break Go benchmark names.
    #[error(
        "bad target name {name:?} in {item:?}: use only letters, digits, '_' and '.' (the \
         name becomes part of Go benchmark names)"
    )]
    BadName {
        /// The name as given.
        name: String,
        /// The item it came from.
        item: String,
    },
    /// The server could not be spawned.
    #[error("target {name}: {error}")]
    Spawn {
        /// The target's column name.
        name: String,
        /// Why.
        error: SpawnError,
    },
    /// The server could not be reached.
    #[error("target {name} ({endpoint}): cannot connect: {reason}")]
    Connect {
        /// The target's column name.
        name: String,
        /// The endpoint URL.
        endpoint: String,
        /// The OS or client error, with a hint.
        reason: String,
    },
    /// A document store could not be opened (unreachable, refused, no rights to create a
    /// database, ...).
    #[error("target {name}: {error}")]
    Store {
        /// The target's column name.
        name: String,
        /// What the store said (it names the server and the fix).
        error: StoreError,
    },
    /// Something answered, but not as a Redis server that we can use.
    #[error("target {name} ({endpoint}): connected, but PING failed: {reason}")]
    Ping {
        /// The target's column name.
        name: String,
        /// The endpoint URL.
        endpoint: String,
        /// The server's reply or error, with a hint.
        reason: String,
    },
}

/// Parses `--target` values into specs, in order.
///
/// Each value is a comma-separated list of items:
/// - `redis-tcp` / `redis-uds`: spawn a `redis-server` (columns `RedisDB_TCP` / `RedisDB_UDS`);
/// - `redis://HOST[:PORT]` (port 6379 by default; column `RedisDB_TCP`);
/// - `redis+unix:///PATH` or `unix:///PATH` (column `RedisDB_UDS`);
/// - `NAME=ITEM`: any of the above, in column `NAME` (`[A-Za-z0-9_.]+`).
///
/// A column name given twice gets `_2`, `_3`, ... appended from its second use on.
pub fn parse_targets(values: &[String]) -> Result<Vec<TargetSpec>, TargetError> {
    let mut specs = Vec::new();
    for value in values {
        for item in value.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(TargetError::Empty {
                    value: value.clone(),
                });
            }
            specs.push(parse_item(item)?);
        }
    }
    dedupe_names(&mut specs);
    Ok(specs)
}

/// The targets of a run without `--target`: every embedded transport; `redis-tcp` and
/// `redis-uds` when a `redis-server` can be spawned; `SQLite_Embedded`; and `pg-tcp`, `pg-uds`
/// when a PostgreSQL server answers there (the PG* variables and libpq's defaults). The notes
/// say what was left out and how to get it (one line each).
pub fn default_targets() -> (Vec<TargetSpec>, Vec<String>) {
    let mut kinds = vec![
        TargetKind::EmbeddedDirect,
        TargetKind::Embedded,
        TargetKind::EmbeddedTcp,
        TargetKind::EmbeddedUds,
    ];
    let mut notes = Vec::new();
    if redis_server_on_path() {
        kinds.extend([TargetKind::SpawnRedisTcp, TargetKind::SpawnRedisUds]);
    } else {
        notes.push(
            "redis-server is not on PATH: no RedisDB_TCP and RedisDB_UDS columns (install \
             redis-server, or set EDGEBENCH_REDIS_SERVER to its path)"
                .to_string(),
        );
    }
    kinds.push(TargetKind::Sqlite(SqliteAt::Temp));
    let mut missing = Vec::new();
    for transport in [PgTransport::Tcp, PgTransport::Uds] {
        let config = pg::config_from_env(transport);
        if pg_answers(&config) {
            kinds.push(TargetKind::Postgres(PgAt::Env(transport)));
        } else {
            missing.push(pg::endpoint(&config));
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
                PG_UDS_COLUMN
            } else {
                PG_TCP_COLUMN
            }
        ));
    }
    let specs = kinds
        .into_iter()
        .map(|kind| TargetSpec {
            name: kind.default_column().to_string(),
            kind,
        })
        .collect();
    (specs, notes)
}

/// Whether a PostgreSQL server accepts a connection with `config` within
/// [`PG_PROBE_TIMEOUT`].
fn pg_answers(config: &postgres::Config) -> bool {
    let mut config = config.clone();
    config.connect_timeout(PG_PROBE_TIMEOUT);
    config.connect(postgres::NoTls).is_ok()
}

/// Whether [`TargetKind::SpawnRedisTcp`] and [`TargetKind::SpawnRedisUds`] can start a
/// server: `redis-server` is on `PATH`, or [`spawn::REDIS_SERVER_ENV`] names one.
pub fn redis_server_on_path() -> bool {
    spawn::redis_server_binary().is_ok()
}

/// A started target: it owns what it started (a spawned server, an in-process engine and
/// its RESP server) and opens stores on it.
///
/// Stores opened from a target hold their own connections. Drop them before the target: a
/// spawned server stops when its target drops.
#[derive(Debug)]
pub struct Target {
    name: String,
    backend: Backend,
}

/// What a started target talks to.
#[derive(Debug)]
enum Backend {
    /// A Redis-protocol server at an endpoint; `server` is set when edgebench spawned it
    /// (and keeps it running; dropping it stops the server).
    Redis {
        endpoint: Endpoint,
        server: Option<Box<RedisServer>>,
        /// Set when the server is edgebench's own RESP server serving an in-process engine
        /// (dropping it shuts the server down).
        served: Option<Box<crate::server::ServerHandle>>,
    },
    /// The in-process engine; `direct` picks its typed API over its redis-rs connection.
    Engine { engine: Engine, direct: bool },
    /// A document store's private database for the run (dropped with the target).
    Documents(DocumentDb),
}

/// The private database of a document-store target.
enum DocumentDb {
    Sqlite(Box<SqliteDatabase>),
    Postgres(Box<PgDatabase>),
    Mongo(Box<MongoDatabase>),
}

impl DocumentDb {
    /// Where it is, for the run header.
    fn describe(&self) -> String {
        match self {
            DocumentDb::Sqlite(db) => format!("sqlite {}", db.describe()),
            DocumentDb::Postgres(db) => format!("postgres {}", db.describe()),
            DocumentDb::Mongo(db) => format!("mongodb {}", db.describe()),
        }
    }

    /// A store on a connection of its own.
    fn open_store(&self) -> Result<Box<dyn CoreData>, StoreError> {
        Ok(match self {
            DocumentDb::Sqlite(db) => Box::new(db.open_store()?),
            DocumentDb::Postgres(db) => Box::new(db.open_store()?),
            DocumentDb::Mongo(db) => Box::new(db.open_store()?),
        })
    }
}

impl fmt::Debug for DocumentDb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Target {
    /// Brings the target up: spawns the server (waiting until it answers PING), starts the
    /// engine (and its RESP server), or connects to the URL and PINGs it.
    pub fn start(spec: &TargetSpec) -> Result<Target, TargetError> {
        let spawn = |listen| {
            RedisServer::spawn(listen).map_err(|error| TargetError::Spawn {
                name: spec.name.clone(),
                error,
            })
        };
        let backend = match &spec.kind {
            TargetKind::SpawnRedisTcp => {
                let server = spawn(Listen::Tcp)?;
                Backend::Redis {
                    endpoint: server.endpoint(),
                    server: Some(Box::new(server)),
                    served: None,
                }
            }
            TargetKind::SpawnRedisUds => {
                let server = spawn(Listen::Unix)?;
                Backend::Redis {
                    endpoint: server.endpoint(),
                    server: Some(Box::new(server)),
                    served: None,
                }
            }
            TargetKind::Redis(endpoint) => Backend::Redis {
                endpoint: endpoint.clone(),
                server: None,
                served: None,
            },
            TargetKind::Embedded => Backend::Engine {
                engine: Engine::new(),
                direct: false,
            },
            TargetKind::EmbeddedDirect => Backend::Engine {
                engine: Engine::new(),
                direct: true,
            },
            TargetKind::EmbeddedTcp | TargetKind::EmbeddedUds => {
                let listen = if spec.kind == TargetKind::EmbeddedTcp {
                    Listen::Tcp
                } else {
                    Listen::Unix
                };
                let handle = crate::server::spawn_in_background(listen.into(), Engine::new())
                    .map_err(|e| TargetError::Connect {
                        name: spec.name.clone(),
                        endpoint: "in-process RESP server".to_string(),
                        reason: format!("cannot start it: {e}"),
                    })?;
                Backend::Redis {
                    endpoint: handle.endpoint().into(),
                    server: None,
                    served: Some(Box::new(handle)),
                }
            }
            TargetKind::Sqlite(_) | TargetKind::Postgres(_) | TargetKind::Mongo { .. } => {
                Backend::Documents(open_documents(&spec.kind).map_err(|error| {
                    TargetError::Store {
                        name: spec.name.clone(),
                        error,
                    }
                })?)
            }
        };
        let target = Target {
            name: spec.name.clone(),
            backend,
        };
        // A spawned server has answered PING already; a URL is checked here, so a typo
        // fails before any benchmark runs.
        if let Backend::Redis {
            endpoint,
            server: None,
            served: None,
        } = &target.backend
        {
            let mut conn = target.connect(endpoint)?;
            check_ping(&mut conn).map_err(|reason| TargetError::Ping {
                name: target.name.clone(),
                endpoint: target.endpoint(),
                reason,
            })?;
        }
        Ok(target)
    }

    /// The column name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the target is, as a URL (`redis://127.0.0.1:40123`, `redis+unix:///…`), or
    /// `in-process` for the engine.
    pub fn endpoint(&self) -> String {
        match &self.backend {
            Backend::Redis { endpoint, .. } => endpoint.to_string(),
            Backend::Engine { direct: false, .. } => "in-process (redis-rs connection)".into(),
            Backend::Engine { direct: true, .. } => "in-process (typed API)".into(),
            Backend::Documents(db) => db.describe(),
        }
    }

    /// A store on a fresh connection (a fresh engine client in-process); call once per
    /// worker.
    pub fn open_store(&self) -> Result<Box<dyn CoreData>, TargetError> {
        match &self.backend {
            Backend::Redis { endpoint, .. } => {
                Ok(Box::new(RedisStore::new(self.connect(endpoint)?)))
            }
            Backend::Engine {
                engine,
                direct: false,
            } => Ok(Box::new(RedisStore::new(EngineConnection::new(
                engine.clone(),
            )))),
            Backend::Engine {
                engine,
                direct: true,
            } => Ok(Box::new(EngineStore::new(engine.clone(), 0))),
            Backend::Documents(db) => db.open_store().map_err(|error| TargetError::Store {
                name: self.name.clone(),
                error,
            }),
        }
    }

    /// Where a Redis-protocol target listens (a spawned server, edgebench's own RESP
    /// server, or a URL); `None` for the in-process engine and document stores.
    pub fn redis_endpoint(&self) -> Option<Endpoint> {
        match &self.backend {
            Backend::Redis { endpoint, .. } => Some(endpoint.clone()),
            _ => None,
        }
    }

    /// The in-process engine of an `embedded` / `embedded-direct` target.
    pub fn engine(&self) -> Option<Engine> {
        match &self.backend {
            Backend::Engine { engine, .. } => Some(engine.clone()),
            _ => None,
        }
    }

    /// The server edgebench spawned for this target, if any.
    pub fn spawned(&self) -> Option<&RedisServer> {
        match &self.backend {
            Backend::Redis { server, .. } => server.as_deref(),
            Backend::Engine { .. } | Backend::Documents(_) => None,
        }
    }

    fn connect(&self, endpoint: &Endpoint) -> Result<redis::Connection, TargetError> {
        connect(endpoint, CONNECT_TIMEOUT).map_err(|e| TargetError::Connect {
            name: self.name.clone(),
            endpoint: endpoint.to_string(),
            reason: connect_reason(&e, endpoint),
        })
    }
}

/// Creates the private database of a document-store target.
fn open_documents(kind: &TargetKind) -> Result<DocumentDb, StoreError> {
    Ok(match kind {
        TargetKind::Sqlite(SqliteAt::Temp) => DocumentDb::Sqlite(Box::new(SqliteDatabase::temp()?)),
        TargetKind::Sqlite(SqliteAt::File(path)) => {
            DocumentDb::Sqlite(Box::new(SqliteDatabase::file(path.clone())?))
        }
        TargetKind::Sqlite(SqliteAt::Memory) => {
            DocumentDb::Sqlite(Box::new(SqliteDatabase::memory()?))
        }
        TargetKind::Postgres(at) => {
            let config = match at {
                PgAt::Env(transport) => pg::config_from_env(*transport),
                PgAt::Url(url) => {
                    pg::config_from_url(url).map_err(|message| StoreError::Backend {
                        backend: "postgres",
                        message,
                    })?
                }
            };
            DocumentDb::Postgres(Box::new(PgDatabase::create(&config)?))
        }
        TargetKind::Mongo {
            url,
            layout,
            fidelity,
        } => DocumentDb::Mongo(Box::new(MongoDatabase::create(url, *layout, *fidelity)?)),
        _ => unreachable!("open_documents is called for document-store kinds only"),
    })
}

fn parse_item(item: &str) -> Result<TargetSpec, TargetError> {
    // `NAME=` only when the part before `=` cannot be the start of a URL.
    let (name, what) = match item.split_once('=') {
        Some((name, what)) if !name.contains([':', '/']) => {
            if !is_valid_name(name) {
                return Err(TargetError::BadName {
                    name: name.to_string(),
                    item: item.to_string(),
                });
            }
            (Some(name), what.trim())
        }
        _ => (None, item),
    };
    let kind = parse_kind(what)?;
    let name = name.unwrap_or(kind.default_column());
    Ok(TargetSpec {
        name: name.to_string(),
        kind,
    })
}

fn parse_kind(what: &str) -> Result<TargetKind, TargetError> {
    match what {
        "redis-tcp" => return Ok(TargetKind::SpawnRedisTcp),
        "redis-uds" => return Ok(TargetKind::SpawnRedisUds),
        "embedded" => return Ok(TargetKind::Embedded),
        "embedded-direct" => return Ok(TargetKind::EmbeddedDirect),
        "embedded-tcp" => return Ok(TargetKind::EmbeddedTcp),
        "embedded-uds" => return Ok(TargetKind::EmbeddedUds),
        "sqlite" => return Ok(TargetKind::Sqlite(SqliteAt::Temp)),
        "sqlite::memory:" | "sqlite://:memory:" => return Ok(TargetKind::Sqlite(SqliteAt::Memory)),
        "pg-tcp" => return Ok(TargetKind::Postgres(PgAt::Env(PgTransport::Tcp))),
        "pg-uds" => return Ok(TargetKind::Postgres(PgAt::Env(PgTransport::Uds))),
        _ => {}
    }
    let Some((scheme, rest)) = what.split_once("://") else {
        return Err(TargetError::Unknown {
            item: what.to_string(),
        });
    };
    let bad = |reason: String| TargetError::BadUrl {
        url: what.to_string(),
        reason,
    };
    if scheme.eq_ignore_ascii_case("sqlite") {
        return match rest {
            path if path.starts_with('/') => Ok(TargetKind::Sqlite(SqliteAt::File(path.into()))),
            _ => Err(bad(
                "expected sqlite:///ABSOLUTE/PATH (three slashes), sqlite::memory: or plain \
                 sqlite for a temp file"
                    .to_string(),
            )),
        };
    }
    if scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql") {
        // Checked now, so a typo fails before any benchmark runs; parsed again at start.
        pg::config_from_url(what).map_err(|reason| TargetError::BadUrl {
            url: what.to_string(),
            reason,
        })?;
        return Ok(TargetKind::Postgres(PgAt::Url(what.to_string())));
    }
    if scheme.eq_ignore_ascii_case("mongodb") {
        if rest.trim_end_matches('/').is_empty() {
            return Err(bad("expected mongodb://HOST:PORT".to_string()));
        }
        return Ok(TargetKind::Mongo {
            url: what.to_string(),
            layout: MongoLayout::default(),
            fidelity: Fidelity::default(),
        });
    }
    if scheme.eq_ignore_ascii_case("mongodb+srv") {
        return Err(bad(
            "mongodb+srv:// needs DNS SRV lookups, which this build leaves out: give the \
             hosts as mongodb://HOST:PORT[,HOST:PORT]"
                .to_string(),
        ));
    }
    let endpoint = if scheme.eq_ignore_ascii_case("redis") {
        parse_tcp(rest).map_err(bad)?
    } else if scheme.eq_ignore_ascii_case("redis+unix") || scheme.eq_ignore_ascii_case("unix") {
        parse_unix(rest).map_err(bad)?
    } else {
        return Err(bad(format!(
            "unsupported scheme {scheme:?}: use redis://HOST:PORT, redis+unix:///PATH, \
             unix:///PATH, sqlite:///PATH, postgres://… or mongodb://HOST:PORT"
        )));
    };
    Ok(TargetKind::Redis(endpoint))
}

/// `HOST[:PORT][/]` after `redis://`; HOST may be `[IPv6]`.
fn parse_tcp(rest: &str) -> Result<Endpoint, String> {
    if rest.contains('@') {
        return Err("user names and passwords are not supported: use redis://HOST:PORT".into());
    }
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    if !tail.is_empty() && tail != "/" {
        return Err(format!(
            "unexpected {tail:?} after HOST:PORT (database numbers and options are not \
             supported): use redis://HOST:PORT"
        ));
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or("missing ']' after the IPv6 address")?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("unexpected {after:?} after ']'")),
            },
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("missing host: use redis://HOST:PORT".into());
    }
    // The 2018 configs said 0.0.0.0; that is where a server listens, not where to connect.
    if host == "0.0.0.0" || host == "::" {
        return Err(format!(
            "{host} is a listen-on-all address, not one to connect to: use 127.0.0.1 (or ::1)"
        ));
    }
    let port = match port {
        None => 6379,
        Some(text) => match text.parse::<u16>() {
            Ok(port) if port != 0 => port,
            _ => return Err(format!("invalid port {text:?}")),
        },
    };
    Ok(Endpoint::Tcp {
        host: host.to_string(),
        port,
    })
}

/// `/PATH` after `redis+unix://` or `unix://`.
fn parse_unix(rest: &str) -> Result<Endpoint, String> {
    if !rest.starts_with('/') {
        return Err("the socket path must be absolute, e.g. unix:///tmp/redis.sock".into());
    }
    if rest.contains(['?', '#']) {
        return Err("options are not supported: use redis+unix:///PATH".into());
    }
    if rest.ends_with('/') {
        return Err("missing socket file name, e.g. unix:///tmp/redis.sock".into());
    }
    Ok(Endpoint::Unix(PathBuf::from(rest)))
}

fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Renames the second and later uses of a name to `NAME_2`, `NAME_3`, ... (skipping names
/// already taken), so every column is distinct.
fn dedupe_names(specs: &mut [TargetSpec]) {
    let mut taken = HashSet::new();
    for spec in specs {
        if !taken.contains(&spec.name) {
            taken.insert(spec.name.clone());
            continue;
        }
        let mut n = 2;
        let unique = loop {
            let candidate = format!("{}_{n}", spec.name);
            if !taken.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        taken.insert(unique.clone());
        spec.name = unique;
    }
}

/// A new connection to `endpoint`, with `TCP_NODELAY` on.
pub fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<redis::Connection, RedisError> {
    let addr = match endpoint {
        Endpoint::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
        Endpoint::Unix(path) => ConnectionAddr::Unix(path.clone()),
    };
    // redis-rs leaves TCP_NODELAY off by default.
    let info = addr
        .into_connection_info()?
        .set_tcp_settings(TcpSettings::default().set_nodelay(true));
    redis::Client::open(info)?.get_connection_with_timeout(timeout)
}

/// The `process_id` of the server that answers PING on `endpoint` (`None` if its `INFO server`
/// has none); used while a spawned server starts, to tell it from another server on the port.
pub(crate) fn ping_pid(endpoint: &Endpoint, timeout: Duration) -> Result<Option<u32>, String> {
    let mut conn = connect(endpoint, timeout).map_err(|e| e.to_string())?;
    check_ping(&mut conn)?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut conn)
        .map_err(|e| e.to_string())?;
    Ok(process_id(&info))
}

/// The `process_id:` field of an `INFO` reply.
fn process_id(info: &str) -> Option<u32> {
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
}

fn check_ping(conn: &mut redis::Connection) -> Result<(), String> {
    match redis::cmd("PING").query::<String>(conn) {
        Ok(reply) if reply == "PONG" => Ok(()),
        Ok(reply) => Err(format!(
            "unexpected reply {reply:?} (is it a Redis server?)"
        )),
        Err(e) => Err(format!(
            "{e} (is it a Redis server without a password? passwords are not supported)"
        )),
    }
}

/// The error without the `(os error N)` suffix, plus where to look.
fn connect_reason(e: &RedisError, endpoint: &Endpoint) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => &text[..at],
        _ => &text,
    };
    match endpoint {
        Endpoint::Tcp { .. } => format!("{text} (is a Redis server listening there?)"),
        Endpoint::Unix(path) => format!(
            "{text} (is redis-server running with --unixsocket {}?)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Vec<TargetSpec>, TargetError> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        parse_targets(&values)
    }

    fn names(values: &[&str]) -> Vec<String> {
        parse(values)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    fn error(values: &[&str]) -> String {
        match parse(values) {
            Ok(specs) => panic!("{values:?} parsed as {specs:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn tcp(host: &str, port: u16) -> TargetKind {
        TargetKind::Redis(Endpoint::Tcp {
            host: host.to_string(),
            port,
        })
    }

    fn unix(path: &str) -> TargetKind {
        TargetKind::Redis(Endpoint::Unix(PathBuf::from(path)))
    }

    fn spec(name: &str, kind: TargetKind) -> TargetSpec {
        TargetSpec {
            name: name.to_string(),
            kind,
        }
    }

    #[test]
    fn parses_every_item_form_with_its_default_column() {
        let specs = parse(&[
            "redis-tcp",
            "redis-uds",
            "redis://db.local:6380",
            "redis://10.0.0.1",
            "redis://[::1]:7000/",
            "redis+unix:///tmp/r.sock",
            "unix:///var/run/redis.sock",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            specs,
            vec![
                spec("RedisDB_TCP", TargetKind::SpawnRedisTcp),
                spec("RedisDB_UDS", TargetKind::SpawnRedisUds),
                spec("RedisDB_TCP_2", tcp("db.local", 6380)),
                spec("RedisDB_TCP_3", tcp("10.0.0.1", 6379)),
                spec("RedisDB_TCP_4", tcp("::1", 7000)),
                spec("RedisDB_UDS_2", unix("/tmp/r.sock")),
                spec("RedisDB_UDS_3", unix("/var/run/redis.sock")),
            ]
        );
    }

    #[test]
    fn parses_the_document_store_forms_with_their_default_columns() {
        let specs = parse(&[
            "sqlite",
            "sqlite:///tmp/eb.db",
            "sqlite::memory:",
            "pg-tcp",
            "pg-uds",
            "postgres://me@127.0.0.1:5432/db",
            "postgresql:///db?host=/var/run/postgresql",
            "mongodb://127.0.0.1:27017",
            "mongo=mongodb://db.local:27018/",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let mongo = |url: &str| TargetKind::Mongo {
            url: url.into(),
            layout: MongoLayout::Embedded,
            fidelity: Fidelity::Modern,
        };
        assert_eq!(
            specs,
            vec![
                spec("SQLite_Embedded", TargetKind::Sqlite(SqliteAt::Temp)),
                spec(
                    "SQLite_Embedded_2",
                    TargetKind::Sqlite(SqliteAt::File("/tmp/eb.db".into()))
                ),
                spec("SQLite_Embedded_3", TargetKind::Sqlite(SqliteAt::Memory)),
                spec(
                    "PostgreSQL_TCP",
                    TargetKind::Postgres(PgAt::Env(PgTransport::Tcp))
                ),
                spec(
                    "PostgreSQL_UDS",
                    TargetKind::Postgres(PgAt::Env(PgTransport::Uds))
                ),
                spec(
                    "PostgreSQL_TCP_2",
                    TargetKind::Postgres(PgAt::Url("postgres://me@127.0.0.1:5432/db".into()))
                ),
                spec(
                    "PostgreSQL_UDS_2",
                    TargetKind::Postgres(PgAt::Url(
                        "postgresql:///db?host=/var/run/postgresql".into()
                    ))
                ),
                spec("MongoDB", mongo("mongodb://127.0.0.1:27017")),
                spec("mongo", mongo("mongodb://db.local:27018/")),
            ]
        );
    }

    #[test]
    fn bad_document_store_items_name_the_item_and_the_fix() {
        assert_eq!(
            error(&["sqlite://rel.db"]),
            "bad target URL \"sqlite://rel.db\": expected sqlite:///ABSOLUTE/PATH (three \
             slashes), sqlite::memory: or plain sqlite for a temp file"
        );
        assert_eq!(
            error(&["mongodb://"]),
            "bad target URL \"mongodb://\": expected mongodb://HOST:PORT"
        );
        assert!(error(&["mongodb+srv://c.example.net"]).contains("give the hosts as mongodb://"));
        let pg = error(&["postgres://me@h:notaport/db"]);
        assert!(
            pg.starts_with(
                "bad target URL \"postgres://me@h:notaport/db\": invalid PostgreSQL URL"
            ),
            "{pg}"
        );
    }

    #[test]
    fn values_are_comma_separated_lists_and_names_are_kept() {
        let specs = parse(&[
            "redis-tcp, local=redis://127.0.0.1:6379",
            "v7.2=unix:///tmp/r.sock,uds_spawned=redis-uds",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            specs,
            vec![
                spec("RedisDB_TCP", TargetKind::SpawnRedisTcp),
                spec("local", tcp("127.0.0.1", 6379)),
                spec("v7.2", unix("/tmp/r.sock")),
                spec("uds_spawned", TargetKind::SpawnRedisUds),
            ]
        );
    }

    #[test]
    fn duplicate_names_get_numbered_suffixes() {
        assert_eq!(
            names(&["redis-tcp,redis-tcp", "redis-tcp"]),
            ["RedisDB_TCP", "RedisDB_TCP_2", "RedisDB_TCP_3"]
        );
        assert_eq!(names(&["a=redis-tcp,a=redis-uds"]), ["a", "a_2"]);
        // A generated suffix skips a name the user took.
        assert_eq!(
            names(&["a=redis-tcp,a_2=redis-tcp,a=redis-tcp"]),
            ["a", "a_2", "a_3"]
        );
    }

    #[test]
    fn bad_items_name_the_item_and_the_fix() {
        assert_eq!(
            error(&["foo"]),
            "unknown target \"foo\": use embedded, embedded-direct, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds, redis://HOST:PORT, redis+unix:///PATH, sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT or NAME=any of these"
        );
        assert_eq!(
            error(&["redis://h:xx"]),
            "bad target URL \"redis://h:xx\": invalid port \"xx\""
        );
        assert_eq!(
            error(&["redis://h:0"]),
            "bad target URL \"redis://h:0\": invalid port \"0\""
        );
        assert_eq!(
            error(&["redis://h:70000"]),
            "bad target URL \"redis://h:70000\": invalid port \"70000\""
        );
        assert_eq!(
            error(&["redis://:6379"]),
            "bad target URL \"redis://:6379\": missing host: use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["redis://h:1/2"]),
            "bad target URL \"redis://h:1/2\": unexpected \"/2\" after HOST:PORT (database \
             numbers and options are not supported): use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["redis://u:p@h:1"]),
            "bad target URL \"redis://u:p@h:1\": user names and passwords are not supported: \
             use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["rediss://h:1"]),
            "bad target URL \"rediss://h:1\": unsupported scheme \"rediss\": use \
             redis://HOST:PORT, redis+unix:///PATH, unix:///PATH, sqlite:///PATH, \
             postgres://… or mongodb://HOST:PORT"
        );
        assert_eq!(
            error(&["unix://r.sock"]),
            "bad target URL \"unix://r.sock\": the socket path must be absolute, e.g. \
             unix:///tmp/redis.sock"
        );
        assert_eq!(
            error(&["my-db=redis-tcp"]),
            "bad target name \"my-db\" in \"my-db=redis-tcp\": use only letters, digits, '_' \
             and '.' (the name becomes part of Go benchmark names)"
        );
        assert_eq!(
            error(&["=redis-tcp"]),
            "bad target name \"\" in \"=redis-tcp\": use only letters, digits, '_' and '.' \
             (the name becomes part of Go benchmark names)"
        );
        assert_eq!(
            error(&["db=nope"]),
            "unknown target \"nope\": use embedded, embedded-direct, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds, redis://HOST:PORT, redis+unix:///PATH, sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT or NAME=any of these"
        );
        assert_eq!(
            error(&["redis-tcp,"]),
            "empty target in \"redis-tcp,\": remove the extra comma"
        );
    }

    #[test]
    fn wildcard_listen_addresses_are_refused_with_the_fix() {
        assert_eq!(
            error(&["redis://0.0.0.0:6379"]),
            "bad target URL \"redis://0.0.0.0:6379\": 0.0.0.0 is a listen-on-all address, not \
             one to connect to: use 127.0.0.1 (or ::1)"
        );
        assert_eq!(
            error(&["redis://[::]"]),
            "bad target URL \"redis://[::]\": :: is a listen-on-all address, not one to \
             connect to: use 127.0.0.1 (or ::1)"
        );
    }

    #[test]
    fn process_id_is_read_from_info_server() {
        let info = "# Server\r\nredis_version:7.2.4\r\nprocess_id:4242\r\ntcp_port:6379\r\n";
        assert_eq!(process_id(info), Some(4242));
        assert_eq!(process_id("# Server\r\nredis_version:7.2.4\r\n"), None);
    }

    #[test]
    fn a_target_can_be_shared_by_worker_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Target>();
        send_sync::<TargetSpec>();
    }

    #[test]
    fn every_error_message_is_one_line() {
        for bad in [
            "foo",
            "redis://h:xx",
            "a b=redis-tcp",
            "x|y=redis-uds",
            ",",
            "unix://x",
        ] {
            let message = error(&[bad]);
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn endpoint_displays_as_a_url_that_parses_back() {
        let endpoints = [
            (
                Endpoint::Tcp {
                    host: "127.0.0.1".into(),
                    port: 6379,
                },
                "redis://127.0.0.1:6379",
            ),
            (
                Endpoint::Tcp {
                    host: "::1".into(),
                    port: 7000,
                },
                "redis://[::1]:7000",
            ),
            (
                Endpoint::Unix(PathBuf::from("/tmp/redis.sock")),
                "redis+unix:///tmp/redis.sock",
            ),
        ];
        for (endpoint, url) in endpoints {
            assert_eq!(endpoint.to_string(), url);
            let parsed = parse(&[url]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(parsed[0].kind, TargetKind::Redis(endpoint));
        }
    }

    #[test]
    fn missing_redis_server_message_names_the_fixes() {
        assert_eq!(
            SpawnError::NotFound.to_string(),
            "redis-server not found on PATH: install it (apt-get install redis-server) or \
             pass --target redis://HOST:PORT"
        );
    }

    #[test]
    fn unreachable_url_is_a_one_line_connect_error() {
        // Port 1 (tcpmux) is privileged and never a Redis server on a test machine.
        let spec = spec("RedisDB_TCP", tcp("127.0.0.1", 1));
        let message = match Target::start(&spec) {
            Ok(_) => panic!("connected to 127.0.0.1:1"),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            message,
            "target RedisDB_TCP (redis://127.0.0.1:1): cannot connect: Connection refused (is \
             a Redis server listening there?)"
        );
        let missing = spec_unix("/nonexistent/edgebench.sock");
        let message = match Target::start(&missing) {
            Ok(_) => panic!("connected to a missing socket"),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            message,
            "target RedisDB_UDS (redis+unix:///nonexistent/edgebench.sock): cannot connect: No \
             such file or directory (is redis-server running with --unixsocket \
             /nonexistent/edgebench.sock?)"
        );
    }

    fn spec_unix(path: &str) -> TargetSpec {
        spec("RedisDB_UDS", unix(path))
    }

    /// Needs redis-server, like the conformance suite: fails, not skips, without it.
    #[test]
    fn spawned_servers_answer_and_are_stopped_and_cleaned_up_on_drop() {
        for (kind, scheme) in [
            (TargetKind::SpawnRedisTcp, "redis://127.0.0.1:"),
            (TargetKind::SpawnRedisUds, "redis+unix:///"),
        ] {
            let target = Target::start(&spec("T", kind)).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                target.endpoint().starts_with(scheme),
                "{}",
                target.endpoint()
            );
            let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(store.event_count().ok(), Some(0));
            drop(store);
            let server = target.spawned().map(|s| (s.pid(), s.dir().to_path_buf()));
            let (pid, dir) = server.unwrap_or_else(|| panic!("spawned target without server"));
            assert!(dir.exists());
            drop(target);
            assert!(!dir.exists(), "{} left behind", dir.display());
            // The child was reaped, so its pid is gone (or, rarely, reused by another).
            let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
            assert!(
                status.map_or(true, |s| !s.contains("redis-server")),
                "redis-server {pid} still running"
            );
        }
    }

    /// A panic while a spawned server runs unwinds through the guard, which stops it.
    #[test]
    fn a_panic_stops_the_spawned_server() {
        let pid = std::sync::Mutex::new(None);
        let result = std::panic::catch_unwind(|| {
            let target = Target::start(&spec("T", TargetKind::SpawnRedisUds))
                .unwrap_or_else(|e| panic!("{e}"));
            *pid.lock().unwrap() = target.spawned().map(|s| s.pid());
            panic!("a benchmark panicked");
        });
        assert!(result.is_err());
        let pid = pid
            .lock()
            .unwrap()
            .unwrap_or_else(|| panic!("no server was spawned"));
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
        assert!(
            status.map_or(true, |s| !s.contains("redis-server")),
            "redis-server {pid} still running after the panic"
        );
    }
}
