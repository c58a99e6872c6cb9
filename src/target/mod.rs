//! What a run talks to, and the one way every command reaches it: `--target` items
//! ([`parse_targets`], the default targets) become [`TargetSpec`]s, and a started [`Target`]
//! gives each consumer what it needs: a core-data store ([`Target::open_store`],
//! [`Target::open_event_store`]), a key-value load's way in ([`Target::redis_reach`]) and a
//! connection per worker ([`Target::connector`]).
//!
//! What a target *is* lives with its backend under `store/` (a spawned `redis-server`, a
//! cluster, the engine, a private PostgreSQL, SQLite or MongoDB database, someone's core-data
//! service): its backend parses the item into a [`crate::store::backend::Kind`], which starts
//! a [`crate::store::backend::Started`], and a [`Target`] dispatches every call through its
//! `Box<dyn Started>`; [`crate::store::BACKENDS`] lists the backends. What this module adds on top: the target's name in every error, its
//! layout (the 2018 calls on an EdgeX layout go through the `As2018` adapter), and
//! `--via http`, edgebench's core-data service started in this process in front of another
//! target ([`served`]).
//!
//! - [`spec`]: `--target` items (`NAME=`, `?…`, unique names) and the default targets, each
//!   read by its backend; [`layout`]: `--layout` and `--via`; `error`: [`TargetError`].

pub mod bused;
mod error;
pub mod layout;
mod served;
mod spec;

use std::sync::Arc;

use crate::service::{ServiceConfig, ServiceHandle};
use crate::store::backend::{BackendError, Started, StoreOpener};
use crate::store::edgex::as2018::{As2018, Counted};
use crate::store::edgex::EventStore;
use crate::store::http::HttpBase;
use crate::store::redis::backend::{ClusterTarget, RedisTarget};
use crate::store::redis::spawn::RedisServer;
use crate::store::redis::SpawnedCluster;
use crate::store::CoreData;
use crate::transport::cluster::ClusterConnection;
pub use crate::transport::{connect, url, Endpoint};
pub use crate::transport::{may_write, Connector, RedisReach, WaitConnection};

use bused::InProcessBus;
pub use bused::{BrokerCount, BusChoice, BusReport, BusSettings, SpawnedBus};
pub use error::TargetError;
pub use layout::{Layout, Via};
use served::InProcessService;
pub use spec::{
    default_targets, parse_targets, redis_server_on_path, set_cluster_shape, TargetKind, TargetSpec,
};

/// A started target: its backend (which owns what it started: a spawned server, a private
/// database, an in-process engine and its RESP server), its name and its layout.
///
/// Stores opened from a target hold their own connections. Drop them before the target: a
/// spawned server stops when its target drops.
#[derive(Debug)]
pub struct Target {
    name: String,
    backend: Box<dyn Started>,
    /// How the store lays out core data (a service target: what the service's store uses).
    layout: Layout,
    /// `WAIT wait 0` after every write (0: none); the backend does the waiting.
    wait: u32,
    /// A core-data service, someone else's or edgebench's own: its store is always in an
    /// EdgeX layout and is counted by the service.
    service: bool,
}

/// Why a document store cannot take a Redis-protocol workload.
const NOT_REDIS: &str = "this workload needs a Redis-protocol target (embedded, embedded-tcp, \
     embedded-uds, redis-tcp, redis-uds, mini-redis for kv, or a redis:// URL)";

impl Target {
    /// Starts what `spec` names: spawns its server, creates its private database, starts the
    /// engine, or checks that a URL answers (a typo fails before any benchmark runs). With
    /// `--via http`, the store in its EdgeX layout and edgebench's core-data service in
    /// front of it.
    pub fn start(spec: &TargetSpec) -> Result<Target, TargetError> {
        if spec.via.is_http() {
            return Target::start_behind_service(spec);
        }
        if spec.via == Via::Bus {
            return Target::start_behind_bus(spec);
        }
        let service = spec.kind.is_service();
        if !spec.has_layout(spec.layout) && !service {
            return Err(TargetError::Unsuitable {
                name: spec.name.clone(),
                why: format!("this target has no {} layout", spec.layout.name()),
            });
        }
        let backend = (spec.kind)
            .start(spec.layout, spec.wait)
            .map_err(|e| TargetError::of(&spec.name, e))?;
        Ok(Target {
            name: spec.name.clone(),
            backend,
            layout: spec.layout,
            wait: spec.wait,
            service,
        })
    }

    /// The store `spec` names in its EdgeX layout, called directly: what a service or a bus
    /// is put in front of (`via` names which, for the error).
    fn start_inner(spec: &TargetSpec, via: &str) -> Result<(Target, Layout), TargetError> {
        let layout = spec.edgex_layout().ok_or_else(|| TargetError::Unsuitable {
            name: spec.name.clone(),
            why: format!(
                "--via {via} needs a store with an EdgeX layout (redis-tcp, redis-uds, redis://, \
                 embedded, embedded-tcp, embedded-uds, sqlite, pg-tcp, pg-uds, postgres://, \
                 mongodb://)"
            ),
        })?;
        let inner = Target::start(&TargetSpec {
            layout,
            via: Via::Direct,
            bus: None,
            ..spec.clone()
        })?;
        Ok((inner, layout))
    }

    fn start_behind_service(spec: &TargetSpec) -> Result<Target, TargetError> {
        let (inner, layout) = Target::start_inner(spec, "http")?;
        let opener = inner.event_store_opener()?;
        let direct = Arc::clone(&opener);
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
            backend: Box::new(InProcessService::new(handle, base, inner, direct, dir)),
            layout,
            wait: 0,
            service: true,
        })
    }

    /// `--via bus`: the store in its EdgeX layout, a bus (spawned, or someone's by URL) and
    /// edgebench's core-data subscriber on it; the target's stores publish their adds.
    fn start_behind_bus(spec: &TargetSpec) -> Result<Target, TargetError> {
        let settings = spec.bus.clone().ok_or_else(|| TargetError::Unsuitable {
            name: spec.name.clone(),
            why: "--via bus needs --bus (which bus)".to_string(),
        })?;
        let (inner, layout) = if spec.kind.is_service() {
            // Someone's core-data service: it is the subscriber, and it is counted.
            let inner = Target::start(&TargetSpec {
                via: Via::Direct,
                bus: None,
                ..spec.clone()
            })?;
            let layout = inner.layout;
            (inner, layout)
        } else {
            Target::start_inner(spec, "bus")?
        };
        let bus = InProcessBus::start(&settings, inner).map_err(|why| TargetError::Connect {
            name: spec.name.clone(),
            endpoint: "the message bus".to_string(),
            reason: why,
        })?;
        Ok(Target {
            name: spec.name.clone(),
            backend: Box::new(bus),
            layout,
            wait: 0,
            // In front of someone's core-data service, whose store is counted by it.
            service: spec.kind.is_service(),
        })
    }

    /// With `--via bus`: waits at most `drain` for the subscriber to handle every event
    /// published so far, then says what the bus did with them; `None` for other targets.
    pub fn settle_bus(&self, drain: std::time::Duration) -> Option<BusReport> {
        self.bus().map(|b| b.settle(drain))
    }

    /// With `--via bus`: commit latencies are recorded from now on for events with an origin
    /// at or after `origin_ns`.
    pub fn record_bus_commits_from(&self, origin_ns: i64) {
        if let Some(b) = self.bus() {
            b.begin(origin_ns);
        }
    }

    /// With `--via bus`: events published so far and those persisted (`None` when a
    /// core-data service did not answer its count); `None` for other targets.
    pub fn bus_progress(&self) -> Option<(u64, Option<u64>)> {
        self.bus().map(InProcessBus::progress)
    }

    /// With `--via bus`: waits (at most `limit`) until the subscriber has taken nothing
    /// for a moment and handled all it took.
    pub fn quiesce_bus(&self, limit: std::time::Duration) {
        if let Some(b) = self.bus() {
            b.quiesce(limit);
        }
    }

    /// Whether a bus carries its adds.
    pub fn is_bus(&self) -> bool {
        self.bus().is_some()
    }

    fn bus(&self) -> Option<&InProcessBus> {
        self.backend.as_any().downcast_ref::<InProcessBus>()
    }

    /// A target for a Redis-protocol server someone else runs, not checked (kv's own
    /// `-s`/`-p` server, which kv checks itself).
    pub fn at(name: &str, endpoint: Endpoint, access: crate::transport::Access) -> Target {
        Target {
            name: name.to_string(),
            backend: Box::new(RedisTarget::unchecked(endpoint, access, 0)),
            layout: Layout::default(),
            wait: 0,
            service: false,
        }
    }

    /// Whether its stores run in this process (the engine): the core-data service then
    /// calls them inline.
    pub fn in_process(&self) -> bool {
        self.backend.in_process()
    }

    /// `--wait N`: `WAIT N 0` after every write.
    pub fn wait(&self) -> u32 {
        self.wait
    }

    /// The column name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it is, for the run header; an EdgeX layout is named after it.
    pub fn endpoint(&self) -> String {
        let place = self.backend.describe();
        if self.layout.is_edgex() && !self.service {
            format!("{place}, layout {}", self.layout.name())
        } else {
            place
        }
    }

    /// A 2018-layout store on a connection of its own: the backend's own, or, on an EdgeX
    /// layout or a service, the EdgeX store behind the `As2018` adapter.
    pub fn open_store(&self) -> Result<Box<dyn CoreData>, TargetError> {
        if self.service {
            let store = self.open_event_store()?;
            return Ok(Box::new(As2018::new(store, Counted::ByService)));
        }
        if self.layout.is_edgex() {
            let store = self.open_event_store()?;
            return Ok(Box::new(As2018::new(store, Counted::ByAdapter)));
        }
        self.backend.open_2018().map_err(|e| self.error(e))
    }

    /// An EdgeX-layout store on a connection of its own.
    pub fn open_event_store(&self) -> Result<Box<dyn EventStore>, TargetError> {
        let open = self.event_store_opener()?;
        open().map_err(|error| TargetError::Store {
            name: self.name.clone(),
            error,
        })
    }

    /// Opens EdgeX-layout stores, one per call (a service's pool, one per worker).
    pub fn event_store_opener(&self) -> Result<StoreOpener, TargetError> {
        if !self.layout.is_edgex() && !self.service {
            return Err(self.unsuitable(
                "EdgeX 3/4 data needs an EdgeX layout: use --layout edgex3 (Redis, the engine) \
                 or edgex4 (PostgreSQL, SQLite, MongoDB)",
            ));
        }
        self.backend.event_store_opener().map_err(|e| self.error(e))
    }

    /// How a key-value load reaches it (Redis-protocol targets only).
    pub fn redis_reach(&self) -> Result<RedisReach, TargetError> {
        match self.backend.redis() {
            Some(redis) => Ok(redis.reach()),
            None => Err(self.unsuitable(NOT_REDIS)),
        }
    }

    /// A source of connections, one per worker (Redis-protocol targets only).
    pub fn connector(&self) -> Result<Box<Connector>, TargetError> {
        match self.backend.redis() {
            Some(redis) => redis.connector().map_err(|e| self.error(e)),
            None => Err(self.unsuitable(NOT_REDIS)),
        }
    }

    /// Opens YCSB stores of `setup`'s binding, the table laid out (one per client thread).
    pub fn ycsb_opener(
        &self,
        setup: &crate::store::ycsb::Setup,
    ) -> Result<crate::store::ycsb::YcsbOpener, TargetError> {
        self.backend.ycsb(setup).map_err(|e| self.error(e))
    }

    fn unsuitable(&self, why: &str) -> TargetError {
        TargetError::Unsuitable {
            name: self.name.clone(),
            why: why.to_string(),
        }
    }

    fn error(&self, error: BackendError) -> TargetError {
        TargetError::of(&self.name, error)
    }

    /// Where a single Redis-protocol server listens (not a cluster, not the engine in
    /// process).
    pub fn redis_endpoint(&self) -> Option<Endpoint> {
        self.backend
            .as_any()
            .downcast_ref::<RedisTarget>()
            .map(|r| r.endpoint().clone())
    }

    /// A connection over a Redis Cluster's primaries.
    pub fn cluster_connection(&self) -> Result<ClusterConnection, TargetError> {
        match self.backend.as_any().downcast_ref::<ClusterTarget>() {
            Some(cluster) => cluster.connection().map_err(|e| self.error(e)),
            None => Err(self.unsuitable("this target is not a Redis Cluster")),
        }
    }

    /// Whether it is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.backend.redis().is_some_and(|r| r.is_cluster())
    }

    /// The cluster edgebench spawned for it, if it did.
    pub fn spawned_cluster(&self) -> Option<&SpawnedCluster> {
        self.backend
            .as_any()
            .downcast_ref::<ClusterTarget>()
            .and_then(ClusterTarget::spawned)
    }

    /// The `redis-server` edgebench spawned for it, if it did.
    pub fn spawned(&self) -> Option<&RedisServer> {
        self.backend
            .as_any()
            .downcast_ref::<RedisTarget>()
            .and_then(RedisTarget::spawned)
    }
}

#[cfg(test)]
mod tests {
    use super::spec::tests::{spec, tcp, unix};
    use super::*;
    use crate::store::redis::spawn::Listen;
    use crate::store::redis::spawn::SpawnError;
    use spec::tests::spawned;

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
            (spawned(Listen::Tcp), "redis://127.0.0.1:"),
            (spawned(Listen::Unix), "redis+unix:///"),
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
            let mut conn = connect(endpoint, crate::store::redis::backend::CONNECT_TIMEOUT)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut cmd = redis::cmd(args[0]);
            cmd.arg(&args[1..]);
            cmd.query(&mut conn)
                .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        };
        let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
        let mut event = crate::v2018::Event {
            device: "d1".into(),
            origin: 1,
            readings: vec![crate::v2018::Reading {
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
            let target =
                Target::start(&spec("T", spawned(Listen::Unix))).unwrap_or_else(|e| panic!("{e}"));
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
