//! The seam between a run's targets and the stores: what a started backend gives a run.
//!
//! Each database's folder under `store/` starts its own targets (a private database, a
//! spawned server, a connection to one that runs) and hands back a [`Started`]: it describes
//! itself for the run header and opens stores on connections of its own, in the 2018 layout
//! ([`Started::open_2018`]) or in its EdgeX layout ([`Started::event_store_opener`]), or says
//! in one line why it has no such layout. A Redis-protocol backend also gives kv and perf
//! their way in ([`Started::redis`]). `target::Target` holds one `Box<dyn Started>` and
//! dispatches through it, so no code outside a backend's folder matches on what the backend
//! is.
//!
//! The errors are [`BackendError`]s without the target's name; `target` adds the name.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::edgex::EventStore;
use super::redis::spawn::SpawnError;
use super::redis::ClusterSpawnError;
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
