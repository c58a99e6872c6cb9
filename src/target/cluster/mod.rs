//! Redis Cluster targets: a private cluster edgebench spawns (`--target redis-cluster`), or
//! one someone else runs (`redis-cluster://HOST:PORT[,HOST:PORT…]`), and the routing every
//! workload goes through.
//!
//! - [`slots`]: hash slots, the slot map (`CLUSTER SLOTS`) and redirections: the one routing
//!   implementation. `edgebench kv`'s socket load uses it directly; the other workloads use
//!   it through [`ClusterConnection`].
//! - [`ClusterConnection`]: a `redis::ConnectionLike` over one connection per primary, so the
//!   core-data stores and perf's workers run on a cluster with the code they run elsewhere.
//! - [`SpawnedCluster`]: `--cluster-shards` primaries with `--cluster-replicas` replicas
//!   each, on free 127.0.0.1 ports, stopped when it drops.

mod conn;
pub mod slots;
mod spawn;

pub use conn::{ClusterConnection, ClusterError};
pub use spawn::{ClusterShape, ClusterSpawnError, SpawnedCluster};
