//! The embedded engine: an in-process, Redis-compatible keyspace.
//!
//! Layers, each knowing only the one below (mini-redis's shape): a command arrives as
//! arguments (`&[&[u8]]`, from the RESP server or from the in-process connection without any
//! encoding) → [`Engine::execute`] finds its [`cmd::Spec`], checks arity, queues it inside
//! MULTI, locks the shards of the keys it declares → the command's `run` parses its
//! arguments and calls typed operations on [`keyspace::Locked`] → a [`Reply`].
//!
//! The typed operations are also the engine's Rust API: a caller can lock a key's shard with
//! [`Engine::db`] and operate on values directly, with no argument parsing at all (the
//! `Embedded_Direct` store does).
//!
//! Concurrency: see [`keyspace`] (sharded mutexes; multi-key commands and transactions lock
//! their shards in ascending order). Time: every command reads the clock once; an engine made
//! with [`Engine::with_clock`] uses a clock the caller moves, so TTL tests are exact.
//!
//! Files: [`handle`] holds the [`Engine`], [`error`] the [`CmdError`], [`types`] what the
//! keyspace is made of (beneath it). This file declares and re-exports only, so a child
//! imports each item from the module that defines it, never through its parent.

pub mod acl;
pub mod client;
pub mod cmd;
#[cfg(feature = "redis-rs")]
pub mod connection;
pub mod error;
pub mod evict;
pub mod feed;
pub mod handle;
pub mod keyevents;
pub mod keyspace;
pub mod lazyfree;
pub mod notify;
pub mod persist;
pub mod tracking;
pub mod types;

pub use crate::resp::Reply;
pub use client::Client;
#[cfg(feature = "redis-rs")]
pub use connection::EngineConnection;
pub use error::CmdError;
pub use handle::{Engine, EngineClock, Stats, DATABASES};
pub use keyspace::{Db, Entry, Key, Locked, Value};
