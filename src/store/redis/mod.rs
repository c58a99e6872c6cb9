//! Redis, and every server that speaks its protocol (redis-server over TCP or a Unix socket,
//! a Redis Cluster, the embedded engine in process or served): the 2018 layout
//! ([`RedisStore`], partitioned for a cluster as [`ClusterStore`], both on the records of
//! `records2018`) and EdgeX 3.1's ([`edgex3`]). The stores are written against
//! [`crate::transport::StoreConnection`], so the transport is whoever opened the connection.
//!
//! The servers edgebench spawns for a run live here too: a private `redis-server` with its
//! persistence options and replicas ([`spawn`]), and a private Redis Cluster
//! ([`SpawnedCluster`]: `--cluster-shards` primaries with `--cluster-replicas` replicas each,
//! on free 127.0.0.1 ports, stopped when it drops).

pub mod backend;
mod cluster_spawn;
pub mod edgex3;
pub mod kind;
pub mod mini_redis;
pub mod options;
pub(crate) mod records2018;
pub mod spawn;
mod v2018;
mod v2018_cluster;
pub mod ycsb;

pub use cluster_spawn::{ClusterShape, ClusterSpawnError, SpawnedCluster};
pub use v2018::*;
pub use v2018_cluster::*;
