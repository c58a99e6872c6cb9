//! The seam between a run's targets and the stores: how a backend reads its `--target` items
//! and what a started backend gives a run.
//!
//! Each database's folder under `store/` holds its whole backend, in three parts:
//! - a [`Backend`]: which `--target` items are its own (`redis-tcp`, `postgres://…`), parsed
//!   into a [`Kind`], and which targets a run without `--target` gets from it;
//! - a [`Kind`]: one parsed item. It names its column (`RedisDB_TCP`), lists its layouts, and
//!   starts;
//! - a [`Started`]: what the kind started (a private database, a spawned server, a connection
//!   to one that runs). It describes itself for the run header and opens stores on
//!   connections of its own, in the 2018 layout ([`Started::open_2018`]) or in its EdgeX
//!   layout ([`Started::event_store_opener`]), or says in one line why it has no such layout. A
//!   Redis-protocol backend also gives kv and perf their way in ([`Started::redis`]).
//!
//! [`super::BACKENDS`] lists the backends; `target` parses items and starts targets through
//! these traits only, so no code outside a backend's folder matches on what the backend is.
//!
//! The errors are [`BackendError`]s and [`ParseError`]s without the target's name or item;
//! `target` adds them.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::edgex::EventStore;
use super::layout::Layout;
use super::redis::spawn::SpawnError;
use super::redis::ClusterSpawnError;
use super::ycsb::{Binding, Setup, YcsbOpener};
use super::{CoreData, StoreError, StoreResult};
use crate::transport::cluster::ClusterError;
use crate::transport::{Connector, RedisReach};

/// Opens one more EdgeX-layout store, on a connection of its own; called whenever every open
/// store is busy (the core-data service's pool), or once per worker.
pub type StoreOpener = Arc<dyn Fn() -> StoreResult<Box<dyn EventStore>> + Send + Sync>;

/// A started backend: it owns what it started (a spawned server, a private database, an
/// in-process engine) and stops or drops it when it drops.
pub trait Started: fmt::Debug + Send + Sync + Any {
    /// Where and what it is, for the run header (`redis+unix:///…/redis.sock (1 replica)`,
    /// `sqlite /tmp/…/edgebench.db`).
    fn describe(&self) -> String;

    /// A store in the 2018 layout, on a connection of its own.
    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError>;

    /// Opens stores in its EdgeX layout (EdgeX 3.1's on Redis, 4.0's on the SQL and document
    /// stores).
    fn event_store_opener(&self) -> Result<StoreOpener, BackendError>;

    /// Whether its stores run in this process (a service in front then calls them inline).
    fn in_process(&self) -> bool {
        false
    }

    /// How a Redis-protocol workload reaches it; `None` when it does not speak the protocol.
    fn redis(&self) -> Option<&dyn RedisProtocol> {
        None
    }

    /// Opens YCSB stores of `setup.binding` (one of its kind's
    /// [`Kind::ycsb_bindings`]) on connections of their own, having laid out the table.
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        Err(no_ycsb(setup.binding))
    }

    /// Itself, for the few callers that ask for one backend's own handles (a test asking a
    /// spawned server's pid).
    fn as_any(&self) -> &dyn Any;
}

/// What a Redis-protocol backend gives a key-value load and perf's workers.
pub trait RedisProtocol {
    /// How a key-value load reaches it: a socket, or the engine in this process.
    fn reach(&self) -> RedisReach;

    /// One connection per call, for perf's workers (with `WAIT` after writes when asked).
    fn connector(&self) -> Result<Box<Connector>, BackendError>;

    /// Whether it is a Redis Cluster (kv routes by slot itself).
    fn is_cluster(&self) -> bool {
        false
    }
}

/// Why a backend could not start, or could not open what was asked; the message names the
/// input and the fix, and `target` prefixes it with the target's name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// It has no such layout, or cannot serve this workload; the fix is in the message.
    #[error("{0}")]
    Unsuitable(String),
    /// A connection could not be made.
    #[error("({endpoint}): cannot connect: {reason}")]
    Connect {
        /// Where.
        endpoint: String,
        /// Why, with the fix.
        reason: String,
    },
    /// A server answered the connection but not `PING` (or `INFO`).
    #[error("({endpoint}): connected, but PING failed: {reason}")]
    Ping {
        /// Where.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A private `redis-server` did not start.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// A private Redis Cluster did not start.
    #[error(transparent)]
    SpawnCluster(#[from] ClusterSpawnError),
    /// A Redis Cluster did not answer as one.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// A database a target made for one layout, which opens stores on connections of their own.
pub trait Database: Send + Sync + 'static {
    /// The store it opens.
    type Store: 'static;
    /// A store on a connection of its own.
    fn open(&self) -> StoreResult<Self::Store>;
    /// Where and what it is, for the run header.
    fn describe(&self) -> String;
    /// Opens YCSB stores of `setup.binding` in this database (its tables beside the
    /// layout's).
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        Err(no_ycsb(setup.binding))
    }
}

/// A target without `binding`.
pub fn no_ycsb(binding: Binding) -> BackendError {
    BackendError::Unsuitable(format!(
        "this target has no YCSB {} binding: drop -db {} or choose a target that has it",
        binding.name(),
        binding.name()
    ))
}

/// A document store's private database in the layout it was made for: the 2018 layout's
/// (`A`, opening [`CoreData`] stores) or EdgeX 4.0's (`B`, opening [`EventStore`]s; shared
/// with a core-data service's store opener). SQLite, PostgreSQL and MongoDB are each one of
/// these.
pub enum InLayout<A, B> {
    /// Made in the 2018 layout.
    V2018(Box<A>),
    /// Made in EdgeX 4.0's.
    EdgeX4(Arc<B>),
}

impl<A, B> Started for InLayout<A, B>
where
    A: Database,
    A::Store: CoreData,
    B: Database,
    B::Store: EventStore,
{
    fn describe(&self) -> String {
        match self {
            InLayout::V2018(db) => db.describe(),
            InLayout::EdgeX4(db) => db.describe(),
        }
    }

    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        match self {
            InLayout::V2018(db) => Ok(Box::new(db.open()?)),
            InLayout::EdgeX4(_) => Err(BackendError::Unsuitable(
                "this database is in EdgeX 4.0's layout".to_string(),
            )),
        }
    }

    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        match self {
            InLayout::V2018(_) => Err(BackendError::Unsuitable(
                "this database is in a 2018 layout".to_string(),
            )),
            InLayout::EdgeX4(db) => {
                let db = Arc::clone(db);
                Ok(Arc::new(move || {
                    db.open().map(|s| Box::new(s) as Box<dyn EventStore>)
                }))
            }
        }
    }

    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        match self {
            InLayout::V2018(db) => db.ycsb(setup),
            InLayout::EdgeX4(db) => db.ycsb(setup),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl<A: Database, B: Database> fmt::Debug for InLayout<A, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let described = match self {
            InLayout::V2018(db) => db.describe(),
            InLayout::EdgeX4(db) => db.describe(),
        };
        f.write_str(&described)
    }
}

/// One database's way into `--target`: the items it reads and the targets it adds to a run
/// without `--target`. `target` asks each backend of [`super::BACKENDS`] in turn.
pub trait Backend: Sync {
    /// Its item forms, for the message about an unknown item (`sqlite, sqlite:///PATH`).
    fn forms(&self) -> &'static str;

    /// Its URL forms, for the message about an unknown URL scheme (`sqlite:///PATH`); empty
    /// when it has none.
    fn urls(&self) -> &'static str {
        ""
    }

    /// Parses `what` (an item without its `NAME=` and, unless it is a URL, its `?…`) when it
    /// is one of this backend's forms; `None` when it is not.
    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>>;

    /// What a run without `--target` gets from this backend, in column order; a note (what
    /// was left out, and how to get it) for each target it cannot offer on this machine.
    fn defaults(&self, _notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        Vec::new()
    }
}

/// Why an item of a backend's own form does not parse; the message names the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The URL is malformed or asks for what the backend does not support.
    BadUrl(String),
    /// Its `?…` options are unknown, malformed, or on a target that takes none.
    BadOption(String),
}

/// A parsed `--target` item: what to start, with everything its item said (its URL, its
/// server options). Kinds compare equal when they are the same type with the same fields.
pub trait Kind: fmt::Debug + Send + Sync + KindBase {
    /// The column name a target of this kind gets when the user names none.
    fn column(&self) -> String;

    /// The layouts it can keep core data in.
    fn layouts(&self) -> &'static [Layout];

    /// Its layouts in a run without `--target` or `--layout` (PostgreSQL adds EdgeX 4.0's, so
    /// the default table shows what EdgeX stores today).
    fn default_run_layouts(&self) -> &'static [Layout] {
        &[Layout::Y2018]
    }

    /// Why it has no EdgeX layout and what to run instead, when that has an answer worth more
    /// than the list of layouts.
    fn no_edgex_layout(&self) -> Option<&'static str> {
        None
    }

    /// The YCSB bindings it has (`-db`), its own first: what a `ycsb` run without `-db` uses.
    /// Empty when it has none (a core-data service).
    fn ycsb_bindings(&self) -> &'static [Binding] {
        &[]
    }

    /// Whether it is a core-data service: it runs once, in whatever layout its store has.
    fn is_service(&self) -> bool {
        false
    }

    /// Whether it is a Redis Cluster (kv routes by slot itself).
    fn is_cluster(&self) -> bool {
        false
    }

    /// Whether it keeps everything in memory, one copy, whatever is asked (the engine).
    fn memory_only(&self) -> bool {
        false
    }

    /// Whether its item set a server's persistence or replicas.
    fn configures_server(&self) -> bool {
        false
    }

    /// Whether it is a server someone else runs, reached by its address (not started, not
    /// emptied by the run).
    fn is_external(&self) -> bool {
        false
    }

    /// Descriptors a connection to it costs this process: 0 in process, 2 when both ends are
    /// here (the engine served over a socket), 1 otherwise.
    fn fds_per_connection(&self) -> u8 {
        1
    }

    /// The kind with the item's `?…` options (`query`, e.g. `replicas=1&wait=1`) applied,
    /// and the `wait=` they give; the error says why this kind takes no such option.
    fn with_options(&self, _query: &str) -> Result<(Arc<dyn Kind>, u32), String> {
        Err(
            "only targets edgebench spawns (redis-tcp, redis-uds) take options: remove ?… or \
              use redis-tcp?…"
                .to_string(),
        )
    }

    /// The kind with one more item of its list (`redis-cluster://A:1,B:2`: `B:2` is a node),
    /// when `item` is one.
    fn with_item(&self, _item: &str) -> Option<Arc<dyn Kind>> {
        None
    }

    /// The kind reshaped by `--cluster-shards` / `--cluster-replicas` (each `None` when
    /// absent); `None` when those flags mean nothing to it.
    fn with_cluster_shape(
        &self,
        _shards: Option<u16>,
        _replicas: Option<u16>,
    ) -> Option<Result<Arc<dyn Kind>, String>> {
        None
    }

    /// Starts it with its data in `layout` (one of [`Kind::layouts`], or any for a service),
    /// following every write with `WAIT wait 0` (0: none).
    fn start(&self, layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError>;
}

/// What every [`Kind`] gets for free: itself as [`Any`], and equality across the trait object.
pub trait KindBase {
    /// Itself, for the callers that ask for one backend's own kind (kv's mini-redis checks).
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` is the same type with the same fields.
    fn same_as(&self, other: &dyn Kind) -> bool;
}

impl<T: Kind + PartialEq + Any> KindBase for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn same_as(&self, other: &dyn Kind) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

impl PartialEq for dyn Kind {
    fn eq(&self, other: &dyn Kind) -> bool {
        self.same_as(other)
    }
}

impl Eq for dyn Kind {}

/// `--wait` on a target that is no Redis server with replicas.
pub fn no_wait(wait: u32) -> Result<(), BackendError> {
    match wait {
        0 => Ok(()),
        n => Err(BackendError::Unsuitable(format!(
            "--wait {n} needs a Redis server with replicas: use redis-tcp?replicas={n}, a \
             redis:// URL of a primary with replicas, or drop --wait"
        ))),
    }
}
