//! `edgebench kv`: a memtier_benchmark-compatible key-value load generator against
//! Redis-protocol targets (a server over TCP or a Unix socket, a Redis Cluster, or the
//! engine in this process). This module holds only declarations and re-exports; each
//! submodule is one stage, and data flows one way through them:
//!
//! ```text
//! argv → options::reject_unsupported → clap (KvArgs) → KvConfig::from_args (typed, checked,
//!      refused when its connections cannot fit) → ConnGen per connection (conn_gen, keys,
//!      data, command, rng) → load::run (threads driving sockets, cluster routing or the
//!      in-process engine; stats) → LoadResult → report (memtier's text, markdown) and
//!      export (memtier's JSON, HDR files)
//! ```
//!
//! The generation half (`options`, `conn_gen`, `keys`, `data`, `command`, `rng`) is pure: no
//! I/O, no clock. I/O lives in `load` (routing with `crate::target::cluster`); `report` and
//! `export` only format a finished [`load::LoadResult`]. No module imports one above it in
//! that order, so `src/kv` has no import cycle.
//!
//! Invariants:
//! - Every random choice comes from a per-connection [`Rng`] seeded from one `u64`
//!   ([`KvConfig::connection_seed`]), so a run is reproducible from its seed. The key stream
//!   and the value-size stream use separate generators, so changing value sizes never changes
//!   which keys are sent.
//! - The hot path does not allocate: keys are formatted into the caller's buffer, values are
//!   slices of one [`ValueBuffer`] made before the run, and [`RequestBuf`] is reused.
//! - Semantics follow memtier_benchmark's source (`obj_gen.cpp`, `client.cpp`,
//!   `memtier_benchmark.cpp`, `config_types.cpp`, `protocol.cpp`); where edgebench differs,
//!   the item says so and `docs/kv-options.md` lists it.

pub mod command;
pub mod conn_gen;
pub mod data;
pub mod error;
pub mod export;
pub mod html;
pub mod keys;
pub mod load;
pub mod merge;
pub mod options;
pub mod report;
pub mod results;
pub mod rng;
pub mod slice;

pub use command::{ArbitraryCommand, CommandArg, CommandMix, Op, OpMix, RequestBuf};
pub use conn_gen::{ConnGen, RequestKind, GET_STREAM, SET_STREAM};
pub use data::{DataGen, DataSize, ExpiryRange, SizePattern, SizeWeight, ValueBuffer};
pub use error::KvConfigError;
pub use keys::{parallel_slice, KeyGen, KeyPattern, KeySpace};
pub use options::{
    reject_unsupported, CommandFlag, CommandFlags, KvArgs, KvCommandLine, KvConfig, Protocol,
    Ratio, Requests,
};
pub use rng::{splitmix64, Rng};
pub use slice::Kv;
