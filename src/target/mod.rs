//! What a run talks to: a Redis server that edgebench spawns or finds at a URL, the in-process
//! engine, or a document store (PostgreSQL, MongoDB, SQLite), and the one way every command
//! reaches it.
//!
//! Transport is data. An [`Endpoint`] says where a Redis-protocol server is (a TCP host and
//! port, or a Unix socket path). A [`TargetKind`] says how the backend comes to exist
//! (spawned here, started in-process, or given by URL). A started [`Target`] gives each
//! consumer what it needs: a core-data store ([`Target::open_store`]; every Redis-protocol
//! target opens the same [`RedisStore`], over a [`redis::Connection`] or the engine's
//! in-process connection), a key-value load's way in ([`Target::redis_reach`]), and a
//! connection per worker ([`Target::connector`]). A new transport is one more `TargetKind`
//! variant and one more arm in [`Target::start`], not a new store.
//!
//! A document-store target owns a private database for the run (`edgebench_<random>`, or a
//! temp-dir SQLite file) and drops it when the target drops.
//!
//! - [`spec`]: `--target` items and the default targets; [`url`]: the one Redis URL parser;
//! - [`spawn`]: private `redis-server`s, their persistence and replicas ([`spawn::ServerOptions`],
//!   from a target's `?…` options, `options`); `wait`: [`WaitConnection`], `WAIT N 0` after
//!   every write (`--wait N`); `connect`: connections and their errors;
//! - `error`: [`TargetError`].

mod error;
pub mod layout;
pub mod mini_redis;
mod options;
mod served;
mod spec;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::{Engine, EngineConnection};
use crate::service::{ServiceConfig, ServiceHandle, StoreOpener};
use crate::store::edgex::as2018::{As2018, Counted};
use crate::store::edgex::EventStore;
use crate::store::engine::EngineStore;
use crate::store::http::{HttpBase, HttpStore};
use crate::store::mongo::edgex4::Mongo4Database;
use crate::store::mongo::MongoDatabase;
use crate::store::postgres::edgex4::Pg4Database;
use crate::store::postgres::{self as pg, PgDatabase};
use crate::store::redis::edgex3::Redis3Store;
use crate::store::redis::ClusterStore;
use crate::store::redis::RedisStore;
use crate::store::redis::{spawn, SpawnedCluster};
use crate::store::sqlite::edgex4::Sqlite4Database;
use crate::store::sqlite::SqliteDatabase;
use crate::store::{CoreData, StoreError};
use crate::transport::cluster::ClusterConnection;
use crate::transport::{check_ping, connect_reason};
pub use crate::transport::{connect, url, Endpoint};
pub use crate::transport::{may_write, WaitConnection};

pub use error::TargetError;
pub use layout::{Layout, Via};
use mini_redis::MiniRedis;
use served::Served;
use spawn::{Listen, RedisServer};
pub use spec::{
    default_targets, parse_targets, redis_server_on_path, set_cluster_shape, PgAt, SqliteAt,
    TargetKind, TargetSpec,
};

/// How long a connection attempt may take before the target counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A started target: it owns what it started (a spawned server, an in-process engine and
/// its RESP server) and opens stores on it.
///
/// Stores opened from a target hold their own connections. Drop them before the target: a
/// spawned server stops when its target drops.
#[derive(Debug)]
pub struct Target {
    name: String,
    backend: Backend,
    /// How the store lays out core data (a service target: what the service's store uses).
    layout: Layout,
    /// `WAIT wait 0` after every write (0: none); see [`WaitConnection`].
    wait: u32,
}

/// What a started target talks to.
#[derive(Debug)]
enum Backend {
    /// A Redis-protocol server at an endpoint, and what keeps it running.
    Redis { endpoint: Endpoint, owner: Owner },
    /// A Redis Cluster: the primaries it had when it started, and the cluster edgebench
    /// spawned, if it did (dropping it stops every node).
    Cluster {
        seeds: Vec<Endpoint>,
        spawned: Option<Box<SpawnedCluster>>,
    },
    /// The in-process engine; `direct` picks its typed API over its redis-rs connection.
    Engine { engine: Engine, direct: bool },
    /// A document store's private database for the run (dropped with the target).
    Documents(DocumentDb),
    /// A core-data service: someone else's, or edgebench's own in front of another target.
    Service(Box<ServiceBackend>),
}

/// A core-data service target.
#[derive(Debug)]
struct ServiceBackend {
    /// Where it listens.
    base: HttpBase,
    /// The service edgebench started for it, if it did.
    run: Option<InProcessService>,
}

/// edgebench's core-data service, started in this process in front of `inner`.
#[derive(Debug)]
struct InProcessService {
    // Fields drop in order: the service stops (gracefully) before its store's target, and
    // the socket's directory goes last.
    _handle: ServiceHandle,
    inner: Target,
    _dir: Option<tempfile::TempDir>,
}

/// Why a document store cannot take a Redis-protocol workload.
const NOT_REDIS: &str = "this workload needs a Redis-protocol target (embedded, embedded-tcp, \
     embedded-uds, redis-tcp, redis-uds, mini-redis for kv, or a redis:// URL)";

/// How long a worker's connection attempt may take (perf's workers connect before their
/// group's start time).
const WORKER_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How a key-value load reaches a Redis-protocol target.
#[derive(Debug, Clone)]
pub enum RedisReach {
    /// A Redis-protocol server.
    Socket(Endpoint),
    /// The engine in this process: commands run through `Engine::execute`, no RESP.
    InProcess(Engine),
}

/// A source of connections to a target, one per call (one per worker).
pub type Connector = dyn Fn() -> Result<Box<dyn redis::ConnectionLike + Send>, String> + Sync;

/// Who runs a Redis-protocol target's server; dropping the owner stops it.
#[derive(Debug)]
enum Owner {
    /// Someone else (a URL).
    Nobody,
    /// A `redis-server` edgebench spawned.
    Spawned(Box<RedisServer>),
    /// edgebench's own RESP server, serving an in-process engine (held to keep it running).
    Served {
        _handle: Box<crate::server::ServerHandle>,
    },
    /// The `mini-redis` crate's server (held to keep it running).
    MiniRedis { _server: MiniRedis },
}

/// The private database of a document-store target.
enum DocumentDb {
    Sqlite(Box<SqliteDatabase>),
    Postgres(Box<PgDatabase>),
    Mongo(Box<MongoDatabase>),
    /// SQLite in EdgeX 4.0's schema; shared with a service's store opener.
    Sqlite4(Arc<Sqlite4Database>),
    /// PostgreSQL in EdgeX 4.0's schema; shared with a service's store opener.
    Pg4(Arc<Pg4Database>),
    /// MongoDB with EdgeX 4.0's records as documents; shared with a service's store opener.
    Mongo4(Arc<Mongo4Database>),
}

impl DocumentDb {
    /// Where it is, for the run header.
    fn describe(&self) -> String {
        match self {
            DocumentDb::Sqlite(db) => format!("sqlite {}", db.describe()),
            // PgDatabase says "postgres at …" itself.
            DocumentDb::Postgres(db) => db.describe(),
            DocumentDb::Mongo(db) => format!("mongodb {}", db.describe()),
            // The layout is added by `Target::endpoint`.
            DocumentDb::Sqlite4(db) => format!("sqlite {}", db.describe()),
            DocumentDb::Pg4(db) => db.describe(),
            DocumentDb::Mongo4(db) => db.describe(),
        }
    }

    /// A store on a connection of its own.
    fn open_store(&self) -> Result<Box<dyn CoreData>, StoreError> {
        Ok(match self {
            DocumentDb::Sqlite(db) => Box::new(db.open_store()?),
            DocumentDb::Postgres(db) => Box::new(db.open_store()?),
            DocumentDb::Mongo(db) => Box::new(db.open_store()?),
            DocumentDb::Sqlite4(_) | DocumentDb::Pg4(_) | DocumentDb::Mongo4(_) => {
                unreachable!("EdgeX-layout databases open through event_store_opener")
            }
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
        if spec.via.is_http() {
            return Target::start_behind_service(spec);
        }
        let spawn = |listen| {
            RedisServer::spawn_with(listen, &spec.server).map_err(|error| TargetError::Spawn {
                name: spec.name.clone(),
                error,
            })
        };
        let backend = match &spec.kind {
            TargetKind::SpawnRedisTcp => {
                let server = spawn(Listen::Tcp)?;
                Backend::Redis {
                    endpoint: server.endpoint(),
                    owner: Owner::Spawned(Box::new(server)),
                }
            }
            TargetKind::SpawnRedisUds => {
                let server = spawn(Listen::Unix)?;
                Backend::Redis {
                    endpoint: server.endpoint(),
                    owner: Owner::Spawned(Box::new(server)),
                }
            }
            TargetKind::Redis(endpoint) => Backend::Redis {
                endpoint: endpoint.clone(),
                owner: Owner::Nobody,
            },
            TargetKind::SpawnCluster(shape) => {
                // Refused before any node starts: the shape says how many replicas there
                // will be.
                if spec.wait > u32::from(shape.replicas) {
                    return Err(TargetError::Unsuitable {
                        name: spec.name.clone(),
                        why: too_few_replicas_for_cluster(
                            spec.wait,
                            usize::from(shape.replicas),
                            None,
                        ),
                    });
                }
                let persistence = spec.server.persistence_args();
                let cluster = SpawnedCluster::spawn(*shape, &persistence).map_err(|error| {
                    TargetError::SpawnCluster {
                        name: spec.name.clone(),
                        error,
                    }
                })?;
                Backend::Cluster {
                    seeds: cluster.seeds(),
                    spawned: Some(Box::new(cluster)),
                }
            }
            TargetKind::Cluster(nodes) => {
                // Checked now, so a typo fails before any benchmark runs; the primaries it
                // names are where every later connection starts.
                let conn = ClusterConnection::connect(nodes, CONNECT_TIMEOUT).map_err(|error| {
                    TargetError::Cluster {
                        name: spec.name.clone(),
                        error,
                    }
                })?;
                Backend::Cluster {
                    seeds: conn.primaries().to_vec(),
                    spawned: None,
                }
            }
            TargetKind::MiniRedis => {
                let server = MiniRedis::start().map_err(|e| TargetError::Connect {
                    name: spec.name.clone(),
                    endpoint: "mini-redis on 127.0.0.1".to_string(),
                    reason: format!("cannot start it: {e}"),
                })?;
                Backend::Redis {
                    endpoint: Endpoint::tcp("127.0.0.1", server.port()),
                    owner: Owner::MiniRedis { _server: server },
                }
            }
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
                    owner: Owner::Served {
                        _handle: Box::new(handle),
                    },
                }
            }
            TargetKind::Sqlite(_) | TargetKind::Postgres(_) | TargetKind::Mongo { .. } => {
                Backend::Documents(open_documents(&spec.kind, spec.layout).map_err(|error| {
                    TargetError::Store {
                        name: spec.name.clone(),
                        error,
                    }
                })?)
            }
            TargetKind::Service(base) => Backend::Service(Box::new(ServiceBackend {
                base: base.clone(),
                run: None,
            })),
        };
        if !spec.layout.applies_to(&spec.kind) && !matches!(spec.kind, TargetKind::Service(_)) {
            return Err(TargetError::Unsuitable {
                name: spec.name.clone(),
                why: format!("this target has no {} layout", spec.layout.name()),
            });
        }
        let target = Target {
            name: spec.name.clone(),
            backend,
            layout: spec.layout,
            wait: spec.wait,
        };
        // A service someone else runs must answer its ping now, as a Redis URL must.
        if let Backend::Service(service) = &target.backend {
            HttpStore::connect(&service.base).map_err(|e| TargetError::Connect {
                name: target.name.clone(),
                endpoint: service.base.to_string(),
                reason: e.to_string(),
            })?;
        }
        // A spawned server has answered PING already; a URL is checked here, so a typo
        // fails before any benchmark runs.
        if let Backend::Redis {
            endpoint,
            owner: Owner::Nobody,
        } = &target.backend
        {
            let mut conn = target.connect(endpoint)?;
            check_ping(&mut conn).map_err(|reason| TargetError::Ping {
                name: target.name.clone(),
                endpoint: target.endpoint(),
                reason,
            })?;
        }
        if target.wait > 0 {
            target.check_replicas_for_wait()?;
        }
        Ok(target)
    }

    /// Starts the store `spec` names, in its EdgeX layout, and edgebench's core-data service
    /// in front of it (over TCP on 127.0.0.1, or a Unix socket in a temp directory).
    fn start_behind_service(spec: &TargetSpec) -> Result<Target, TargetError> {
        let unsuitable = |why: String| TargetError::Unsuitable {
            name: spec.name.clone(),
            why,
        };
        let layout = Layout::edgex_of(&spec.kind).ok_or_else(|| {
            unsuitable(
                "--via http needs a store with an EdgeX layout (redis-tcp, redis-uds, redis://, \
                 embedded, embedded-tcp, embedded-uds, sqlite, pg-tcp, pg-uds, postgres://, \
                 mongodb://)"
                    .to_string(),
            )
        })?;
        let inner = Target::start(&TargetSpec {
            layout,
            via: Via::Direct,
            ..spec.clone()
        })?;
        let opener = inner.event_store_opener()?;
        let behaviour =
            opener()
                .map(|store| store.behaviour())
                .map_err(|error| TargetError::Store {
                    name: spec.name.clone(),
                    error,
                })?;
        let config = ServiceConfig {
            store: Some(behaviour),
            inline_store_calls: inner.in_process(),
            ..ServiceConfig::default()
        };
        let started = |e: std::io::Error| TargetError::Connect {
            name: spec.name.clone(),
            endpoint: "in-process core-data service".to_string(),
            reason: format!("cannot start it: {e}"),
        };
        let (handle, base, dir) = if spec.via == Via::HttpTcp {
            let any_port = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let handle =
                ServiceHandle::start(opener, config, Some(any_port), None).map_err(started)?;
            let port = handle.tcp_addr().map_or(0, |a| a.port());
            let base = HttpBase::Tcp {
                host: "127.0.0.1".to_string(),
                port,
            };
            (handle, base, None)
        } else {
            let dir = tempfile::Builder::new()
                .prefix("edgebench-core-data-")
                .tempdir()
                .map_err(started)?;
            let path = dir.path().join("core-data.sock");
            let handle =
                ServiceHandle::start(opener, config, None, Some(path.clone())).map_err(started)?;
            (handle, HttpBase::Unix(path), Some(dir))
        };
        Ok(Target {
            name: spec.name.clone(),
            backend: Backend::Service(Box::new(ServiceBackend {
                base,
                run: Some(InProcessService {
                    _handle: handle,
                    inner,
                    _dir: dir,
                }),
            })),
            layout,
            wait: 0,
        })
    }

    /// Refuses a `--wait N` that would block for ever: a target with fewer than N replicas
    /// connected (a spawned server: as many as it was spawned with; a URL: `INFO
    /// replication`'s `connected_slaves`; a cluster: the same, for every primary), or one
    /// that has none to wait for.
    fn check_replicas_for_wait(&self) -> Result<(), TargetError> {
        let wait = self.wait;
        let has = match &self.backend {
            // Checked against its shape before any node started.
            Backend::Cluster {
                spawned: Some(_), ..
            } => return Ok(()),
            Backend::Cluster {
                seeds,
                spawned: None,
            } => {
                for primary in seeds {
                    let has = self.connected_replicas(primary)?;
                    if has < wait as usize {
                        return Err(self.unsuitable(&too_few_replicas_for_cluster(
                            wait,
                            has,
                            Some(primary),
                        )));
                    }
                }
                return Ok(());
            }
            Backend::Redis {
                owner: Owner::Spawned(server),
                ..
            } => server.replicas().len(),
            Backend::Redis {
                endpoint,
                owner: Owner::Nobody,
            } => self.connected_replicas(endpoint)?,
            Backend::Engine { .. }
            | Backend::Redis {
                owner: Owner::Served { .. },
                ..
            } => {
                return Err(self.unsuitable(&format!(
                    "--wait {wait} needs replicas, and the in-process engine has none \
                     (replication and persistence are out of scope for it): leave it out of \
                     this run, or drop --wait"
                )))
            }
            _ => {
                return Err(self.unsuitable(&format!(
                    "--wait {wait} needs a Redis server with replicas: use \
                     redis-tcp?replicas={wait}, a redis:// URL of a primary with replicas, or \
                     drop --wait"
                )))
            }
        };
        if has < wait as usize {
            let or = match has {
                0 => "drop --wait".to_string(),
                n => format!("--wait {n}"),
            };
            return Err(self.unsuitable(&format!(
                "--wait {wait} needs {wait} replicas, this server has {has} (WAIT would block \
                 for ever): use redis-tcp?replicas={wait}, or {or}"
            )));
        }
        Ok(())
    }

    /// How many replicas the server at `endpoint` has connected (`INFO replication`'s
    /// `connected_slaves`).
    fn connected_replicas(&self, endpoint: &Endpoint) -> Result<usize, TargetError> {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(&mut self.connect(endpoint)?)
            .map_err(|e| TargetError::Ping {
                name: self.name.clone(),
                endpoint: endpoint.to_string(),
                reason: format!("INFO replication failed: {e}"),
            })?;
        Ok(spawn::info_field(&info, "connected_slaves")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    }

    /// A Redis-protocol server someone else runs at `endpoint`, not probed: for a consumer
    /// that probes with its own credentials and timeout (`edgebench kv`'s memtier flags).
    pub fn at(name: &str, endpoint: Endpoint) -> Target {
        Target {
            name: name.to_string(),
            backend: Backend::Redis {
                endpoint,
                owner: Owner::Nobody,
            },
            layout: Layout::default(),
            wait: 0,
        }
    }

    /// Whether the store lives in this process and answers from memory (the engine, called
    /// directly or through its redis-rs connection): a service in front of it calls it inline.
    pub fn in_process(&self) -> bool {
        matches!(self.backend, Backend::Engine { .. })
    }

    /// How many replicas each write waits for (`WAIT N 0`); 0: no WAIT.
    pub fn wait(&self) -> u32 {
        self.wait
    }

    /// The column name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the target is, as a URL (`redis://127.0.0.1:40123`, `redis+unix:///…`), or
    /// `in-process` for the engine.
    pub fn endpoint(&self) -> String {
        let place = self.place();
        if self.layout.is_edgex() && !matches!(self.backend, Backend::Service(_)) {
            format!("{place}, layout {}", self.layout.name())
        } else {
            place
        }
    }

    fn place(&self) -> String {
        match &self.backend {
            Backend::Service(s) => match &s.run {
                Some(run) => format!(
                    "{} (edgebench's core-data service, store {})",
                    s.base,
                    run.inner.endpoint()
                ),
                None => s.base.to_string(),
            },
            Backend::Redis { endpoint, owner } => {
                let mut place = endpoint.to_string();
                if let Owner::Spawned(server) = owner {
                    if !server.options().is_default() {
                        place = format!("{place} ({})", server.options());
                    }
                }
                if self.wait > 0 {
                    place = format!("{place}, WAIT {} 0 after writes", self.wait);
                }
                place
            }
            Backend::Cluster { seeds, spawned } => {
                let nodes: Vec<String> = seeds
                    .iter()
                    .map(|s| s.to_string().trim_start_matches("redis://").to_string())
                    .collect();
                let url = format!("redis-cluster://{}", nodes.join(","));
                let place = match spawned {
                    Some(c) => {
                        let (shards, replicas) = (c.shape().shards, c.shape().replicas);
                        format!(
                            "{url} (spawned: {shards} primar{}, {replicas} replica{} each)",
                            if shards == 1 { "y" } else { "ies" },
                            if replicas == 1 { "" } else { "s" }
                        )
                    }
                    None => format!("{url} ({} primaries)", seeds.len()),
                };
                match self.wait {
                    0 => place,
                    n => format!("{place}, WAIT {n} 0 after writes"),
                }
            }
            Backend::Engine { direct: false, .. } => "in-process (redis-rs connection)".into(),
            Backend::Engine { direct: true, .. } => "in-process (typed API)".into(),
            Backend::Documents(db) => db.describe(),
        }
    }

    /// A store on a fresh connection (a fresh engine client in-process); call once per
    /// worker.
    pub fn open_store(&self) -> Result<Box<dyn CoreData>, TargetError> {
        if let Backend::Service(_) = &self.backend {
            let store = self.open_event_store()?;
            return Ok(Box::new(As2018::new(store, Counted::ByService)));
        }
        if self.layout.is_edgex() {
            let store = self.open_event_store()?;
            return Ok(Box::new(As2018::new(store, Counted::ByAdapter)));
        }
        match &self.backend {
            Backend::Redis {
                owner: Owner::MiniRedis { .. },
                ..
            } => Err(self.unsuitable(mini_redis::ONLY_GET_SET)),
            Backend::Redis { endpoint, .. } => {
                let conn = self.connect(endpoint)?;
                Ok(match self.wait {
                    0 => Box::new(RedisStore::new(conn)),
                    n => Box::new(RedisStore::new(WaitConnection::new(conn, n))),
                })
            }
            Backend::Cluster { .. } => Ok(Box::new(ClusterStore::new(self.cluster_connection()?))),
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
            Backend::Service(_) => unreachable!("answered above"),
        }
    }

    /// An EdgeX 3/4 store on a fresh connection (a service target: a client of it). For a
    /// target in an EdgeX layout, or a service.
    pub fn open_event_store(&self) -> Result<Box<dyn EventStore>, TargetError> {
        let open = self.event_store_opener()?;
        open().map_err(|error| TargetError::Store {
            name: self.name.clone(),
            error,
        })
    }

    /// A source of EdgeX 3/4 stores, one connection each, that any thread may call: what a
    /// core-data service in front of this target opens its stores with.
    pub fn event_store_opener(&self) -> Result<StoreOpener, TargetError> {
        fn boxed(store: impl EventStore + 'static) -> Box<dyn EventStore> {
            Box::new(store)
        }
        if let Backend::Service(service) = &self.backend {
            let base = service.base.clone();
            return Ok(match &service.run {
                // edgebench's own service: its store is scrubbed directly (see `served`).
                Some(run) => {
                    let direct = run.inner.event_store_opener()?;
                    Arc::new(move || {
                        let client = HttpStore::connect(&base)?;
                        Ok(boxed(Served::new(client, Arc::clone(&direct))))
                    })
                }
                None => Arc::new(move || HttpStore::connect(&base).map(boxed)),
            });
        }
        if !self.layout.is_edgex() {
            return Err(self.unsuitable(
                "EdgeX 3/4 data needs an EdgeX layout: use --layout edgex3 (Redis, the engine) \
                 or edgex4 (PostgreSQL, SQLite, MongoDB)",
            ));
        }
        match &self.backend {
            Backend::Redis {
                owner: Owner::MiniRedis { .. },
                ..
            } => Err(self.unsuitable(mini_redis::ONLY_GET_SET)),
            Backend::Redis { endpoint, .. } => {
                let endpoint = endpoint.clone();
                let wait = self.wait;
                Ok(Arc::new(move || {
                    connect(&endpoint, CONNECT_TIMEOUT)
                        .map(|c| match wait {
                            0 => boxed(Redis3Store::new(c)),
                            n => boxed(Redis3Store::new(WaitConnection::new(c, n))),
                        })
                        .map_err(|e| StoreError::Backend {
                            backend: "redis",
                            message: format!("{endpoint}: {}", connect_reason(&e, &endpoint)),
                        })
                }))
            }
            Backend::Cluster { seeds, .. } => {
                let seeds = seeds.clone();
                let wait = self.wait;
                Ok(Arc::new(move || {
                    ClusterConnection::connect(&seeds, CONNECT_TIMEOUT)
                        .map(|c| boxed(Redis3Store::partitioned(c.with_wait(wait))))
                        .map_err(|e| StoreError::Backend {
                            backend: "redis",
                            message: e.to_string(),
                        })
                }))
            }
            Backend::Engine { engine, .. } => {
                let engine = engine.clone();
                Ok(Arc::new(move || {
                    Ok(boxed(Redis3Store::new(EngineConnection::new(
                        engine.clone(),
                    ))))
                }))
            }
            Backend::Documents(DocumentDb::Pg4(db)) => {
                let db = Arc::clone(db);
                Ok(Arc::new(move || db.open_store().map(boxed)))
            }
            Backend::Documents(DocumentDb::Sqlite4(db)) => {
                let db = Arc::clone(db);
                Ok(Arc::new(move || db.open_store().map(boxed)))
            }
            Backend::Documents(DocumentDb::Mongo4(db)) => {
                let db = Arc::clone(db);
                Ok(Arc::new(move || db.open_store().map(boxed)))
            }
            Backend::Documents(_) => Err(self.unsuitable("this database is in a 2018 layout")),
            Backend::Service(_) => unreachable!("answered above"),
        }
    }

    /// How a key-value load reaches the target: the in-process engine (commands run through
    /// the engine, no RESP), or the socket of a Redis-protocol server. Document stores are
    /// refused.
    pub fn redis_reach(&self) -> Result<RedisReach, TargetError> {
        match &self.backend {
            Backend::Engine { engine, .. } => Ok(RedisReach::InProcess(engine.clone())),
            Backend::Redis { endpoint, .. } => Ok(RedisReach::Socket(endpoint.clone())),
            // kv's load reads the slot map from this node and routes itself.
            Backend::Cluster { seeds, .. } => Ok(RedisReach::Socket(seeds[0].clone())),
            Backend::Documents(_) | Backend::Service(_) => Err(self.unsuitable(NOT_REDIS)),
        }
    }

    /// A source of connections, one per worker: a socket each, or the engine's in-process
    /// connection. For workloads that use more than GET and SET (so not mini-redis).
    pub fn connector(&self) -> Result<Box<Connector>, TargetError> {
        match &self.backend {
            Backend::Engine { engine, .. } => {
                let engine = engine.clone();
                Ok(Box::new(move || {
                    Ok(Box::new(EngineConnection::new(engine.clone()))
                        as Box<dyn redis::ConnectionLike + Send>)
                }))
            }
            Backend::Redis {
                owner: Owner::MiniRedis { .. },
                ..
            } => Err(self.unsuitable(mini_redis::ONLY_GET_SET)),
            Backend::Redis { endpoint, .. } => {
                let endpoint = endpoint.clone();
                let wait = self.wait;
                Ok(Box::new(move || {
                    connect(&endpoint, WORKER_CONNECT_TIMEOUT)
                        .map(|c| match wait {
                            0 => Box::new(c) as Box<dyn redis::ConnectionLike + Send>,
                            n => Box::new(WaitConnection::new(c, n)),
                        })
                        .map_err(|e| format!("{endpoint}: {e}"))
                }))
            }
            Backend::Cluster { seeds, .. } => {
                let seeds = seeds.clone();
                let wait = self.wait;
                Ok(Box::new(move || {
                    ClusterConnection::connect(&seeds, WORKER_CONNECT_TIMEOUT)
                        .map(|c| {
                            Box::new(c.with_wait(wait)) as Box<dyn redis::ConnectionLike + Send>
                        })
                        .map_err(|e| e.to_string())
                }))
            }
            Backend::Documents(_) | Backend::Service(_) => Err(self.unsuitable(NOT_REDIS)),
        }
    }

    fn unsuitable(&self, why: &str) -> TargetError {
        TargetError::Unsuitable {
            name: self.name.clone(),
            why: why.to_string(),
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

    /// A fresh connection to a Redis Cluster target, routing by hash slot, with this
    /// target's WAIT (`--wait N`, `?wait=N`) after every write on the primary it went to.
    /// What every store on a cluster is opened over.
    pub fn cluster_connection(&self) -> Result<ClusterConnection, TargetError> {
        let Backend::Cluster { seeds, .. } = &self.backend else {
            return Err(self.unsuitable("this target is not a Redis Cluster"));
        };
        ClusterConnection::connect(seeds, CONNECT_TIMEOUT)
            .map(|c| c.with_wait(self.wait))
            .map_err(|error| TargetError::Cluster {
                name: self.name.clone(),
                error,
            })
    }

    /// Whether the target is a Redis Cluster (commands are routed by hash slot).
    pub fn is_cluster(&self) -> bool {
        matches!(self.backend, Backend::Cluster { .. })
    }

    /// The cluster edgebench spawned for this target, if any.
    pub fn spawned_cluster(&self) -> Option<&SpawnedCluster> {
        match &self.backend {
            Backend::Cluster { spawned, .. } => spawned.as_deref(),
            _ => None,
        }
    }

    /// The server edgebench spawned for this target, if any.
    pub fn spawned(&self) -> Option<&RedisServer> {
        match &self.backend {
            Backend::Redis {
                owner: Owner::Spawned(server),
                ..
            } => Some(server),
            _ => None,
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

/// Why a cluster cannot take `--wait wait`: a primary with `has` replicas (`at`: which one,
/// for a cluster someone else runs; `None`: every primary of a spawned one).
fn too_few_replicas_for_cluster(wait: u32, has: usize, at: Option<&Endpoint>) -> String {
    let or = match has {
        0 => "drop --wait".to_string(),
        n => format!("--wait {n}"),
    };
    match at {
        None => format!(
            "--wait {wait} needs {wait} replicas on every primary, this cluster has {has} each \
             (WAIT would block for ever): use --cluster-replicas {wait}, or {or}"
        ),
        Some(primary) => format!(
            "--wait {wait} needs {wait} replicas on every primary, primary {primary} has {has} \
             (WAIT would block for ever): add replicas to it, or {or}"
        ),
    }
}

/// Creates the private database of a document-store target.
fn open_documents(kind: &TargetKind, layout: Layout) -> Result<DocumentDb, StoreError> {
    if layout == Layout::EdgeX4 {
        return open_edgex4(kind);
    }
    Ok(match kind {
        TargetKind::Sqlite(SqliteAt::Temp) => DocumentDb::Sqlite(Box::new(SqliteDatabase::temp()?)),
        TargetKind::Sqlite(SqliteAt::File(path)) => {
            DocumentDb::Sqlite(Box::new(SqliteDatabase::file(path.clone())?))
        }
        TargetKind::Sqlite(SqliteAt::Memory) => {
            DocumentDb::Sqlite(Box::new(SqliteDatabase::memory()?))
        }
        TargetKind::Postgres(at) => {
            DocumentDb::Postgres(Box::new(PgDatabase::create(&pg_config(at)?)?))
        }
        TargetKind::Mongo {
            url,
            layout,
            fidelity,
        } => DocumentDb::Mongo(Box::new(MongoDatabase::create(url, *layout, *fidelity)?)),
        _ => unreachable!("open_documents is called for document-store kinds only"),
    })
}

/// Creates the private database of a document-store target in EdgeX 4.0's schema (MongoDB:
/// EdgeX 4.0's records as documents).
fn open_edgex4(kind: &TargetKind) -> Result<DocumentDb, StoreError> {
    Ok(match kind {
        TargetKind::Sqlite(SqliteAt::Temp) => {
            DocumentDb::Sqlite4(Arc::new(Sqlite4Database::temp()?))
        }
        TargetKind::Sqlite(SqliteAt::File(path)) => {
            DocumentDb::Sqlite4(Arc::new(Sqlite4Database::file(path.clone())?))
        }
        TargetKind::Sqlite(SqliteAt::Memory) => {
            DocumentDb::Sqlite4(Arc::new(Sqlite4Database::memory()?))
        }
        TargetKind::Postgres(at) => {
            DocumentDb::Pg4(Arc::new(Pg4Database::create(&pg_config(at)?)?))
        }
        TargetKind::Mongo { url, .. } => DocumentDb::Mongo4(Arc::new(Mongo4Database::create(url)?)),
        _ => unreachable!("Layout::EdgeX4 applies to SQLite, PostgreSQL and MongoDB only"),
    })
}

/// The PostgreSQL config a target names.
fn pg_config(at: &PgAt) -> Result<postgres::Config, StoreError> {
    match at {
        PgAt::Env(transport) => Ok(pg::config_from_env(*transport)),
        PgAt::Url(url) => pg::config_from_url(url).map_err(|message| StoreError::Backend {
            backend: "postgres",
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::spawn::SpawnError;
    use super::spec::tests::{spec, tcp, unix};
    use super::*;

    #[test]
    fn a_target_can_be_shared_by_worker_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Target>();
        send_sync::<TargetSpec>();
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

    /// Needs redis-server. A replicated Unix-socket target with `wait=1`: the store's writes
    /// and a worker connection's writes reach the replica before they return, WAIT goes to
    /// the primary, and the replicas and their directories go with the target.
    #[test]
    fn a_replicated_target_waits_on_writes_and_its_replicas_stop_with_it() {
        let specs = parse_targets(&["r=redis-uds?replicas=1&wait=1".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        let target = Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target.wait(), 1);
        assert!(
            target
                .endpoint()
                .ends_with("/redis.sock (1 replica), WAIT 1 0 after writes"),
            "{}",
            target.endpoint()
        );
        let server = target.spawned().unwrap_or_else(|| panic!("not spawned"));
        let replica = server.replicas()[0].endpoint();
        let query = |endpoint: &Endpoint, args: &[&str]| -> redis::Value {
            let mut conn = connect(endpoint, CONNECT_TIMEOUT).unwrap_or_else(|e| panic!("{e}"));
            let mut cmd = redis::cmd(args[0]);
            cmd.arg(&args[1..]);
            cmd.query(&mut conn)
                .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        };
        let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
        let mut event = crate::model::Event {
            device: "d1".into(),
            origin: 1,
            readings: vec![crate::model::Reading {
                device: "d1".into(),
                name: "t".into(),
                value: "20".into(),
                origin: 1,
                ..Default::default()
            }],
            ..Default::default()
        };
        store
            .add_event(&mut event)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.event_count().ok(), Some(1));
        assert_eq!(
            query(&replica, &["ZCARD", "event"]),
            redis::Value::Int(1),
            "the replica has the event as soon as the write returned"
        );
        let mut worker = (target.connector().unwrap_or_else(|e| panic!("{e}")))()
            .unwrap_or_else(|e| panic!("{e}"));
        let reply: String = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query(&mut *worker)
            .unwrap();
        assert_eq!(reply, "OK", "callers see SET's reply, not WAIT's");
        let got: Option<String> = redis::cmd("GET").arg("k").query(&mut *worker).unwrap();
        assert_eq!(got.as_deref(), Some("v"));
        assert_eq!(
            query(&replica, &["GET", "k"]),
            redis::Value::BulkString(b"v".to_vec())
        );
        let stats = match query(&target.redis_endpoint().unwrap(), &["INFO", "commandstats"]) {
            redis::Value::VerbatimString { text, .. } => text,
            redis::Value::BulkString(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        };
        // One WAIT for the event's transaction, one for the SET; none for the reads.
        assert!(stats.contains("cmdstat_wait:calls=2,"), "{stats}");
        drop((store, worker));
        let kept: Vec<_> = std::iter::once(server)
            .chain(server.replicas())
            .map(|s| (s.pid(), s.dir().to_path_buf()))
            .collect();
        drop(target);
        for (pid, dir) in kept {
            assert!(!dir.exists(), "{} left behind", dir.display());
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
