//! The engine's integration tests, in one binary (ripgrep's shape: every integration binary
//! links the whole dependency tree, and linking is most of CI's time).
//!
//! - One module per command family (`bits`, `geo`, `hash`, `hll`, `keys`, `list`, `script`
//!   (Lua scripts and functions), `functions` (the load and run sandboxes of Redis 7
//!   functions), `set`, `stream`, `strings`, `tx`, `zset`, and `server` for connection and
//!   server commands): the engine's typed API, and the same commands sent to a
//!   real `redis-server`, to the engine in-process and to the engine behind the RESP server,
//!   whose replies must be equal ([`support::diff`]).
//! - `replicas`: `min-replicas-to-write` refusing writes (NOREPLICAS) at top level, in
//!   MULTI and in scripts, against redis-server.
//! - `keyevents`: keyspace notifications on the wire, every family against redis-server,
//!   and in process.
//! - `list_props`: list commands against a model, by proptest.
//! - `resp_server` and `resp_server_blocking`: the RESP server on the wire, exact reply bytes
//!   on the default I/O model, the event loop (`EDGEBENCH_SERVER_IO=tasks` runs them on the
//!   task design); `resp_server_loop`: both models explicitly, and the loop's hand-offs.
//!
//! They need `redis-server` on `PATH` (or `EDGEBENCH_REDIS_SERVER`), and fail without it.
//! proptest keeps the failures it found in `tests/proptest-regressions/` (its default place
//! for a test binary with a `main.rs`).

mod support;

mod acl;
mod bits;
mod dump;
mod encodings;
mod errorstats;
mod functions;
mod geo;
mod hash;
mod hll;
mod keyevents;
mod keys;
mod list;
mod list_props;
mod object;
mod persist;
mod pubsub_order;
mod replicas;
mod resp_server;
mod resp_server_blocking;
mod resp_server_loop;
mod script;
mod server;
mod set;
mod sort;
mod stream;
mod strings;
mod tls;
mod tracking;
mod tx;
mod zset;
