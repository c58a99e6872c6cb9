//! How edgebench talks to a Redis-protocol server, below every store: where a server is
//! ([`Endpoint`], from the one Redis URL parser in [`url`]), a connection to it ([`connect`]),
//! `WAIT N 0` after every write ([`WaitConnection`]), Redis Cluster's routing ([`cluster`]:
//! the slot map and a [`cluster::ClusterConnection`] over one connection per primary), and
//! the connection trait the Redis stores are written against ([`StoreConnection`]), how a
//! connection gets in ([`access`]: TLS and credentials), and the processes edgebench starts
//! beside itself ([`child`]: PDEATHSIG, free ports, binaries).
//!
//! Stores build on this module and targets open these connections; nothing here knows of
//! either, so a store never imports `target` and a new transport (a message bus, TLS) lands
//! here beside the others.

pub mod access;
pub mod bus;
pub mod certs;
pub mod child;
pub mod cluster;
mod connect;
mod endpoint;
pub mod resp_client;
pub mod url;
mod wait;

use redis::{ConnectionLike, FromRedisValue, Pipeline, RedisResult};

use crate::engine::EngineConnection;
pub use access::{Access, Credentials, ServerSecurity, TlsOptions};
pub use connect::{check_ping, connect, connect_reason, connect_with, ping_pid, process_id};
pub use endpoint::Endpoint;
pub(crate) use wait::Wait;
pub use wait::{may_write, WaitConnection, MAX_WAIT};

/// How a key-value load reaches a Redis-protocol target.
#[derive(Debug, Clone)]
pub enum RedisReach {
    /// A Redis-protocol server, and how to get in (TLS, AUTH).
    Socket(Endpoint, Access),
    /// The engine in this process: commands run through `Engine::execute`, no RESP.
    InProcess(crate::engine::Engine),
}

/// A source of connections to a target, one per call (one per worker).
pub type Connector = dyn Fn() -> Result<Box<dyn ConnectionLike + Send>, String> + Send + Sync;

/// A connection a Redis store runs on: any [`redis::ConnectionLike`] that is `Send`, with two
/// hooks a transport may override.
///
/// Why: redis-rs's sync `Pipeline::query` packs the commands into RESP for the connection,
/// which is what a socket needs, but the in-process engine would parse those bytes straight
/// back. The engine runs the pipeline's commands as they are instead (the same commands in the
/// same order, the same replies); every other connection keeps redis-rs's own path.
pub trait StoreConnection: ConnectionLike + Send + Sized {
    /// `pipe.query(self)`.
    fn query_pipeline<T: FromRedisValue>(&mut self, pipe: &Pipeline) -> RedisResult<T> {
        pipe.query(self)
    }

    /// Runs `f` on a connection to each node that holds keys: this connection's server, or
    /// each primary of a cluster (what `SCAN` and `INFO` need: each answers for one node).
    fn for_each_node(
        &mut self,
        mut f: impl FnMut(&mut dyn ConnectionLike) -> RedisResult<()>,
    ) -> RedisResult<()> {
        f(self)
    }
}

impl StoreConnection for redis::Connection {}

impl StoreConnection for EngineConnection {
    fn query_pipeline<T: FromRedisValue>(&mut self, pipe: &Pipeline) -> RedisResult<T> {
        EngineConnection::query_pipeline(self, pipe)
    }
}
