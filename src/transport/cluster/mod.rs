//! Redis Cluster's routing, the one implementation every workload goes through.
//!
//! - [`slots`]: hash slots, the slot map (`CLUSTER SLOTS`) and redirections. `edgebench kv`'s
//!   socket load uses it directly; the other workloads use it through [`ClusterConnection`].
//! - [`ClusterConnection`]: a `redis::ConnectionLike` over one connection per primary, so the
//!   core-data stores and perf's workers run on a cluster with the code they run elsewhere.
//!
//! A cluster edgebench spawns for a run lives with the Redis backend.

mod conn;
pub mod slots;

pub use conn::{ClusterConnection, ClusterError};
