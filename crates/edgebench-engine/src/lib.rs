//! edgebench-engine: an embedded, Redis-compatible keyspace. Redis's commands run in-process,
//! with Redis 7.0's replies and error texts byte for byte; the same engine can be served to
//! any Redis client over TCP or a Unix socket.
//!
//! A request flows through four layers and its reply flows back (mini-redis's shape):
//!
//! ```text
//! bytes     server          sockets, batches of pipelined requests (feature `server`)
//! frame     resp            requests parsed into argument lists; Reply values encoded
//! command   engine::cmd     one file per command family: parse arguments, run, reply
//! keyspace  engine::keyspace, engine::types    sharded databases, typed values, TTLs
//! ```
//!
//! Imports point one way, `server → engine → resp`: the codec imports nothing of the crate,
//! and the engine nothing of the server.
//!
//! - [`resp`], at the bottom: the RESP codec. Requests are parsed from bytes into frames
//!   (argument lists), replies are values ([`Reply`]) encoded as RESP2 or RESP3 bytes. It
//!   knows nothing of the engine.
//! - [`engine`]: [`Engine::execute`] takes one command's arguments and a [`Client`] (one
//!   connection's state), looks the command up in [`engine::cmd`], locks the shards of its
//!   keys and runs it on the [`engine::keyspace`], giving a [`Reply`]. The typed operations
//!   under the commands are a Rust API too ([`Engine::db`]).
//! - [`server`] (feature `server`), on top: the RESP server, which reads bytes, parses them
//!   with [`resp`], executes on the engine and encodes the replies; it also parks clients
//!   blocked on keys (BLPOP, XREAD BLOCK...) and carries pub/sub between connections. It has
//!   its own address types ([`server::Bind`], [`server::Address`]).
//! - [`keyslot`], beside them and importing nothing: Redis Cluster's key-to-slot rule, for the
//!   cluster clients and stores of the crates above.
//!
//! In-process use:
//!
//! ```
//! use edgebench_engine::{Engine, Reply};
//!
//! let engine = Engine::new(); // cheap to clone; clones share the keyspace
//! let mut client = engine.client(); // one connection's state: SELECT, MULTI, protocol
//! assert_eq!(engine.execute(&mut client, &[&b"SET"[..], b"k", b"v"]), Reply::ok());
//! assert_eq!(engine.execute(&mut client, &[&b"GET"[..], b"k"]), Reply::bulk(b"v"));
//! ```
//!
//! Features:
//!
//! - `redis-rs` (default): [`EngineConnection`], the engine as a `redis::ConnectionLike` and
//!   `redis::aio::ConnectionLike`, so redis-rs code runs in-process unchanged, and
//!   [`Reply::into_redis_value`].
//! - `server` (default): the [`server`] module, with tokio's runtime and sockets.
//! - `scripting` (default): Lua scripting and Redis 7 functions (EVAL, SCRIPT, FUNCTION,
//!   FCALL) on Lua 5.1 built from source (`mlua`); see `engine::cmd::script`.
//!
//! Without default features the crate is the engine and the codec alone: no redis-rs and no
//! tokio runtime or sockets. tokio's `sync` feature stays, for one type: the engine wakes
//! clients blocked on keys through `tokio::sync::Notify` ([`engine::notify`]), whose waiters
//! are futures that any executor can poll. The wakeup belongs to the engine because the write
//! that wakes a client can come from any caller (an in-process client, another connection),
//! not only from the server that parks it.

pub mod engine;
pub mod keyslot;
pub mod resp;
#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "redis-rs")]
pub use engine::EngineConnection;
pub use engine::{Client, CmdError, Engine};
pub use resp::Reply;

/// The README's example, run as a doctest so the front page cannot drift from the code.
#[cfg(all(doctest, feature = "redis-rs"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
