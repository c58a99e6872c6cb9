//! Redis-protocol targets, started: one server at an endpoint ([`RedisTarget`]: a
//! `redis-server` edgebench spawned, one given by URL, the engine served over RESP, or the
//! mini-redis crate's server) and a Redis Cluster ([`ClusterTarget`], spawned or given by
//! URL). Both open the same stores on whatever connection reaches them: [`RedisStore`] or
//! [`ClusterStore`] in the 2018 layout, [`Redis3Store`] in EdgeX 3.1's, with `WAIT N 0`
//! after every write when `--wait N` asks for it.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::cluster_spawn::{ClusterShape, SpawnedCluster};
use super::edgex3::Redis3Store;
use super::mini_redis::{self, MiniRedis};
use super::spawn::{self, Listen, RedisServer, ServerOptions};
use super::{ClusterStore, RedisStore};
use crate::store::backend::{BackendError, RedisProtocol, Started, StoreOpener};
use crate::store::edgex::EventStore;
use crate::store::ycsb::{Setup, YcsbOpener};
use crate::store::{CoreData, StoreError};
use crate::transport::cluster::ClusterConnection;
use crate::transport::{
    check_ping, connect_reason, connect_with, Access, Connector, Endpoint, RedisReach,
    ServerSecurity, WaitConnection,
};

/// How long a connection attempt may take before the target counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a worker's connection attempt may take (perf's workers connect before their
/// group's start time).
const WORKER_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A Redis-protocol server at an endpoint, and what keeps it running.
#[derive(Debug)]
pub struct RedisTarget {
    endpoint: Endpoint,
    /// How every connection gets in (TLS, AUTH).
    access: Access,
    owner: Owner,
    /// `WAIT wait 0` after every write (0: none).
    wait: u32,
}

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
        /// The engine's persistence, as the run header shows it (`None`: none).
        persistence: Option<String>,
        /// Its files' private directory, removed after the server stops.
        _files: Option<tempfile::TempDir>,
    },
    /// The `mini-redis` crate's server (held to keep it running).
    MiniRedis { _server: MiniRedis },
}

impl RedisTarget {
    /// Spawns a private `redis-server` (with its replicas and persistence options).
    pub fn spawn(
        listen: Listen,
        options: &ServerOptions,
        security: &ServerSecurity,
        wait: u32,
    ) -> Result<RedisTarget, BackendError> {
        let server = RedisServer::spawn_secured(listen, options, security)?;
        let target = RedisTarget {
            endpoint: server.endpoint(),
            access: server.access().clone(),
            owner: Owner::Spawned(Box::new(server)),
            wait,
        };
        target.check_replicas_for_wait()?;
        Ok(target)
    }

    /// A server someone else runs; it must answer `PING` now, so a typo fails before any
    /// benchmark runs.
    pub fn at_url(
        endpoint: Endpoint,
        access: Access,
        wait: u32,
    ) -> Result<RedisTarget, BackendError> {
        let target = RedisTarget::unchecked(endpoint, access, wait);
        let mut conn = target.connect()?;
        check_ping(&mut conn).map_err(|reason| BackendError::Ping {
            endpoint: target.endpoint.to_string(),
            reason,
        })?;
        target.check_replicas_for_wait()?;
        Ok(target)
    }

    /// A server someone else runs, not checked (kv's own `-s`/`-p` server, which kv checks
    /// itself).
    pub fn unchecked(endpoint: Endpoint, access: Access, wait: u32) -> RedisTarget {
        RedisTarget {
            endpoint,
            access,
            owner: Owner::Nobody,
            wait,
        }
    }

    /// edgebench's RESP server in front of an in-process engine (`embedded-tcp`,
    /// `embedded-uds`).
    pub fn served(handle: crate::server::ServerHandle) -> RedisTarget {
        RedisTarget::served_persisting(handle, None, None)
    }

    /// An in-process engine behind edgebench's RESP server that persists as `persistence`
    /// says, into `files` (kept until the target goes).
    pub fn served_persisting(
        handle: crate::server::ServerHandle,
        persistence: Option<String>,
        files: Option<tempfile::TempDir>,
    ) -> RedisTarget {
        RedisTarget::served_with(handle, persistence, files, Access::default())
    }

    /// [`RedisTarget::served_persisting`] whose clients get in as `access` says (TLS with
    /// the files in `files`, an ACL user).
    pub fn served_with(
        handle: crate::server::ServerHandle,
        persistence: Option<String>,
        files: Option<tempfile::TempDir>,
        access: Access,
    ) -> RedisTarget {
        RedisTarget {
            endpoint: handle.endpoint().into(),
            access,
            owner: Owner::Served {
                _handle: Box::new(handle),
                persistence,
                _files: files,
            },
            wait: 0,
        }
    }

    /// The mini-redis crate's server on a free 127.0.0.1 port.
    pub fn mini_redis() -> Result<RedisTarget, BackendError> {
        let server = MiniRedis::start().map_err(|e| BackendError::Connect {
            endpoint: "mini-redis on 127.0.0.1".to_string(),
            reason: format!("cannot start it: {e}"),
        })?;
        Ok(RedisTarget {
            endpoint: Endpoint::tcp("127.0.0.1", server.port()),
            access: Access::default(),
            owner: Owner::MiniRedis { _server: server },
            wait: 0,
        })
    }

    /// Where it listens.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The `redis-server` edgebench spawned for it, if it did.
    pub fn spawned(&self) -> Option<&RedisServer> {
        match &self.owner {
            Owner::Spawned(server) => Some(server),
            _ => None,
        }
    }

    /// `--wait`: `WAIT wait 0` after every write.
    pub fn wait(&self) -> u32 {
        self.wait
    }

    /// How connections get in.
    pub fn access(&self) -> &Access {
        &self.access
    }

    fn connect(&self) -> Result<redis::Connection, BackendError> {
        connect_with(&self.endpoint, &self.access, CONNECT_TIMEOUT).map_err(|e| {
            BackendError::Connect {
                endpoint: self.place(),
                reason: connect_reason(&e, &self.endpoint),
            }
        })
    }

    /// Where it listens, as a URL with its scheme (`rediss://` for TLS) and user, never the
    /// password.
    fn place(&self) -> String {
        place(&self.endpoint, &self.access)
    }

    fn refuse_mini_redis(&self) -> Result<(), BackendError> {
        match self.owner {
            Owner::MiniRedis { .. } => Err(BackendError::Unsuitable(
                mini_redis::ONLY_GET_SET.to_string(),
            )),
            _ => Ok(()),
        }
    }

    /// `--wait N` needs N replicas, or every WAIT would block for ever.
    fn check_replicas_for_wait(&self) -> Result<(), BackendError> {
        let wait = self.wait;
        if wait == 0 {
            return Ok(());
        }
        let has = match &self.owner {
            Owner::Spawned(server) => server.replicas().len(),
            Owner::Nobody => connected_replicas(&self.endpoint, &self.access)?,
            Owner::Served { .. } => return Err(BackendError::Unsuitable(in_process_wait(wait))),
            Owner::MiniRedis { .. } => {
                return Err(BackendError::Unsuitable(format!(
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
            return Err(BackendError::Unsuitable(format!(
                "--wait {wait} needs {wait} replicas, this server has {has} (WAIT would block \
                 for ever): use redis-tcp?replicas={wait}, or {or}"
            )));
        }
        Ok(())
    }
}

/// Why the in-process engine takes no `--wait`.
pub fn in_process_wait(wait: u32) -> String {
    format!(
        "--wait {wait} needs replicas, and the in-process engine has none (replication and \
         persistence are out of scope for it): leave it out of this run, or drop --wait"
    )
}

/// `redis://HOST:PORT`, `rediss://USER@HOST:PORT` or `redis+unix:///PATH`: where, over what
/// and as whom, without the password.
pub fn place(endpoint: &Endpoint, access: &Access) -> String {
    let url = endpoint.to_string();
    let Some(rest) = url.strip_prefix("redis://") else {
        return url;
    };
    let user = match access.credentials.as_ref().map(|c| c.user.as_deref()) {
        Some(Some(user)) => format!("{user}@"),
        Some(None) => ":…@".to_string(),
        None => String::new(),
    };
    format!("{}://{user}{rest}", access.scheme())
}

/// `connected_slaves` of `INFO replication`.
fn connected_replicas(endpoint: &Endpoint, access: &Access) -> Result<usize, BackendError> {
    let ping = |reason: String| BackendError::Ping {
        endpoint: endpoint.to_string(),
        reason,
    };
    let mut conn =
        connect_with(endpoint, access, CONNECT_TIMEOUT).map_err(|e| BackendError::Connect {
            endpoint: endpoint.to_string(),
            reason: connect_reason(&e, endpoint),
        })?;
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut conn)
        .map_err(|e| ping(format!("INFO replication failed: {e}")))?;
    Ok(spawn::info_field(&info, "connected_slaves")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0))
}

fn boxed(store: impl EventStore + 'static) -> Box<dyn EventStore> {
    Box::new(store)
}

impl Started for RedisTarget {
    fn describe(&self) -> String {
        let mut place = self.place();
        match &self.owner {
            Owner::Spawned(server) => {
                let mut parts = Vec::new();
                if !server.options().is_default() {
                    parts.push(server.options().to_string());
                }
                if !server.security().is_plain() {
                    parts.push(server.security().to_string());
                }
                if !parts.is_empty() {
                    place = format!("{place} ({})", parts.join(", "));
                }
            }
            Owner::Served {
                persistence: Some(p),
                ..
            } => place = format!("{place} ({p})"),
            _ => {}
        }
        if self.wait > 0 {
            place = format!("{place}, WAIT {} 0 after writes", self.wait);
        }
        place
    }

    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        self.refuse_mini_redis()?;
        let conn = self.connect()?;
        Ok(match self.wait {
            0 => Box::new(RedisStore::new(conn)),
            n => Box::new(RedisStore::new(WaitConnection::new(conn, n))),
        })
    }

    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        self.refuse_mini_redis()?;
        let endpoint = self.endpoint.clone();
        let access = self.access.clone();
        let wait = self.wait;
        Ok(Arc::new(move || {
            connect_with(&endpoint, &access, CONNECT_TIMEOUT)
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

    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        self.refuse_mini_redis()?;
        super::ycsb::opener_of(self, setup)
    }

    fn redis(&self) -> Option<&dyn RedisProtocol> {
        Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl RedisProtocol for RedisTarget {
    fn reach(&self) -> RedisReach {
        RedisReach::Socket(self.endpoint.clone(), self.access.clone())
    }

    fn connector(&self) -> Result<Box<Connector>, BackendError> {
        self.refuse_mini_redis()?;
        let endpoint = self.endpoint.clone();
        let access = self.access.clone();
        let wait = self.wait;
        Ok(Box::new(move || {
            connect_with(&endpoint, &access, WORKER_CONNECT_TIMEOUT)
                .map(|c| match wait {
                    0 => Box::new(c) as Box<dyn redis::ConnectionLike + Send>,
                    n => Box::new(WaitConnection::new(c, n)),
                })
                .map_err(|e| format!("{endpoint}: {e}"))
        }))
    }
}

/// A Redis Cluster: the primaries it had when it started, and the cluster edgebench spawned,
/// if it did (dropping it stops every node).
#[derive(Debug)]
pub struct ClusterTarget {
    seeds: Vec<Endpoint>,
    spawned: Option<Box<SpawnedCluster>>,
    wait: u32,
}

impl ClusterTarget {
    /// Spawns a private cluster of this shape, every node with these persistence options.
    pub fn spawn(
        shape: ClusterShape,
        persistence: &[String],
        wait: u32,
    ) -> Result<ClusterTarget, BackendError> {
        // Refused before any node starts: the shape says how many replicas there will be.
        if wait > u32::from(shape.replicas) {
            return Err(BackendError::Unsuitable(too_few_replicas_for_cluster(
                wait,
                usize::from(shape.replicas),
                None,
            )));
        }
        let cluster = SpawnedCluster::spawn(shape, persistence)?;
        Ok(ClusterTarget {
            seeds: cluster.seeds(),
            spawned: Some(Box::new(cluster)),
            wait,
        })
    }

    /// A cluster someone else runs; checked now, so a typo fails before any benchmark runs.
    /// The primaries it names are where every later connection starts.
    pub fn at(nodes: &[Endpoint], wait: u32) -> Result<ClusterTarget, BackendError> {
        let conn = ClusterConnection::connect(nodes, CONNECT_TIMEOUT)?;
        let seeds = conn.primaries().to_vec();
        for primary in seeds.iter().filter(|_| wait > 0) {
            let has = connected_replicas(primary, &Access::default())?;
            if has < wait as usize {
                return Err(BackendError::Unsuitable(too_few_replicas_for_cluster(
                    wait,
                    has,
                    Some(primary),
                )));
            }
        }
        Ok(ClusterTarget {
            seeds,
            spawned: None,
            wait,
        })
    }

    /// The cluster edgebench spawned, if it did.
    pub fn spawned(&self) -> Option<&SpawnedCluster> {
        self.spawned.as_deref()
    }

    /// A connection over every primary, with `WAIT` after writes when asked.
    pub fn connection(&self) -> Result<ClusterConnection, BackendError> {
        Ok(ClusterConnection::connect(&self.seeds, CONNECT_TIMEOUT)?.with_wait(self.wait))
    }
}

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

impl Started for ClusterTarget {
    fn describe(&self) -> String {
        let nodes: Vec<String> = self
            .seeds
            .iter()
            .map(|s| s.to_string().trim_start_matches("redis://").to_string())
            .collect();
        let url = format!("redis-cluster://{}", nodes.join(","));
        let place = match &self.spawned {
            Some(c) => {
                let (shards, replicas) = (c.shape().shards, c.shape().replicas);
                format!(
                    "{url} (spawned: {shards} primar{}, {replicas} replica{} each)",
                    if shards == 1 { "y" } else { "ies" },
                    if replicas == 1 { "" } else { "s" }
                )
            }
            None => format!("{url} ({} primaries)", self.seeds.len()),
        };
        match self.wait {
            0 => place,
            n => format!("{place}, WAIT {n} 0 after writes"),
        }
    }

    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        Ok(Box::new(ClusterStore::new(self.connection()?)))
    }

    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        let seeds = self.seeds.clone();
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

    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener_of(self, setup)
    }

    fn redis(&self) -> Option<&dyn RedisProtocol> {
        Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl RedisProtocol for ClusterTarget {
    /// kv's load reads the slot map from this node and routes itself.
    fn reach(&self) -> RedisReach {
        RedisReach::Socket(self.seeds[0].clone(), Access::default())
    }

    fn connector(&self) -> Result<Box<Connector>, BackendError> {
        let seeds = self.seeds.clone();
        let wait = self.wait;
        Ok(Box::new(move || {
            ClusterConnection::connect(&seeds, WORKER_CONNECT_TIMEOUT)
                .map(|c| Box::new(c.with_wait(wait)) as Box<dyn redis::ConnectionLike + Send>)
                .map_err(|e| e.to_string())
        }))
    }

    fn is_cluster(&self) -> bool {
        true
    }
}
