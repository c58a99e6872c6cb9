//! A private Redis Cluster: `shards` primaries, each with `replicas` replicas, every node a
//! [`RedisServer`] on a free 127.0.0.1 port with a cluster bus port of its own.
//!
//! The cluster is assembled with cluster commands, not `redis-cli --cluster create`, so no
//! prompt and no redis-cli are involved: each primary takes an even share of the 16384 slots
//! (`CLUSTER ADDSLOTSRANGE`), every node gets a config epoch of its own (`CLUSTER
//! SET-CONFIG-EPOCH`), every node meets the first (`CLUSTER MEET`), replicas follow
//! their primary (`CLUSTER REPLICATE`), and the cluster is ready when every node says
//! `cluster_state:ok`, knows every other node, and every replica's link to its primary is up.
//!
//! Invariant: dropping a [`SpawnedCluster`] stops every node (each [`RedisServer`] guard stops
//! its own process and removes its directory), on every exit path.

use std::time::{Duration, Instant};

use super::spawn::{free_port, Listen, RedisServer, SpawnError};
use crate::transport::cluster::slots::SLOTS;
use crate::transport::connect;
use crate::transport::Endpoint;

/// The most primaries `--cluster-shards` may ask for: 16 processes per core on this kind of
/// machine is already far past what it can measure, and each node costs a few MB.
pub const MAX_SHARDS: u16 = 32;
/// The most replicas per primary `--cluster-replicas` may ask for.
pub const MAX_REPLICAS: u16 = 4;
/// How long a cluster gets to agree on its slots and replicas.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How often readiness is polled.
const POLL: Duration = Duration::from_millis(50);
/// Connect timeout for the setup commands.
const SETUP_CONNECT: Duration = Duration::from_secs(2);

/// How many primaries and replicas a spawned cluster has, and how fast it fails over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    /// Primaries, each serving an even share of the slots (1..=[`MAX_SHARDS`]).
    pub shards: u16,
    /// Replicas of each primary (0..=[`MAX_REPLICAS`]).
    pub replicas: u16,
    /// `cluster-node-timeout` in ms: how long a silent primary has before its replica takes
    /// over.
    pub node_timeout_ms: u32,
}

impl Default for ClusterShape {
    /// Three primaries with a replica each (what `redis-cli --cluster create
    /// --cluster-replicas 1` makes of six nodes), and a 5 s node timeout: long enough that a
    /// loaded 2-core machine does not fail a busy primary over, short enough for a failover
    /// test.
    fn default() -> Self {
        ClusterShape {
            shards: 3,
            replicas: 1,
            node_timeout_ms: 5000,
        }
    }
}

impl ClusterShape {
    /// Checks the bounds; the error names the flag and the range.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_SHARDS).contains(&self.shards) {
            return Err(format!(
                "--cluster-shards {}: give 1 to {MAX_SHARDS} primaries",
                self.shards
            ));
        }
        if self.replicas > MAX_REPLICAS {
            return Err(format!(
                "--cluster-replicas {}: give 0 to {MAX_REPLICAS} replicas per primary",
                self.replicas
            ));
        }
        Ok(())
    }

    /// The slots primary `i` of this shape serves: `[start, end]`, an even share, in order.
    pub fn slot_range(&self, i: u16) -> (u16, u16) {
        let n = u32::from(self.shards);
        let share = |i: u32| (i * SLOTS as u32 / n) as u16;
        (share(u32::from(i)), share(u32::from(i) + 1) - 1)
    }
}

/// Why a cluster could not be started. Each message is one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterSpawnError {
    /// A node could not be spawned.
    #[error("cluster node {index}: {error}")]
    Node {
        /// The node's index (primaries first).
        index: usize,
        /// Why.
        error: SpawnError,
    },
    /// A setup command failed.
    #[error("cluster setup on {node}: {what} failed: {reason}")]
    Setup {
        /// The node it was sent to.
        node: Endpoint,
        /// The command.
        what: String,
        /// The error.
        reason: String,
    },
    /// The nodes did not agree in time.
    #[error(
        "the spawned cluster was not ready within {}s: {what} (is the machine overloaded? \
         try fewer --cluster-shards or --cluster-replicas)",
        READY_TIMEOUT.as_secs()
    )]
    NotReady {
        /// What was still missing.
        what: String,
    },
}

/// A running private Redis Cluster; dropping it stops every node.
#[derive(Debug)]
pub struct SpawnedCluster {
    shape: ClusterShape,
    /// Primaries first (`shape.shards` of them), then replicas, `shape.replicas` per primary
    /// in primary order.
    nodes: Vec<RedisServer>,
}

impl SpawnedCluster {
    /// Spawns the nodes and assembles the cluster; `extra` goes to every `redis-server` (the
    /// persistence options of `redis-cluster?…`). Returns once the cluster serves every slot.
    pub fn spawn(
        shape: ClusterShape,
        extra: &[String],
    ) -> Result<SpawnedCluster, ClusterSpawnError> {
        shape
            .check()
            .map_err(|what| ClusterSpawnError::NotReady { what })?;
        let total = usize::from(shape.shards) * (1 + usize::from(shape.replicas));
        let mut nodes = Vec::with_capacity(total);
        let mut first_bus = 0;
        for index in 0..total {
            let node_error = |error| ClusterSpawnError::Node { index, error };
            let bus = free_port().map_err(|error| {
                node_error(SpawnError::Prepare {
                    what: "find a free cluster bus port on 127.0.0.1",
                    error,
                })
            })?;
            let mut args: Vec<String> = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            args.push(shape.node_timeout_ms.to_string());
            args.push("--cluster-port".to_string());
            args.push(bus.to_string());
            if index == 0 {
                first_bus = bus;
            }
            args.extend(extra.iter().cloned());
            nodes.push(RedisServer::spawn_with_args(Listen::Tcp, &args).map_err(node_error)?);
        }
        let cluster = SpawnedCluster { shape, nodes };
        cluster.assemble(first_bus)?;
        Ok(cluster)
    }

    /// The primaries' endpoints, in slot order: what a client starts from.
    pub fn seeds(&self) -> Vec<Endpoint> {
        self.primaries().iter().map(RedisServer::endpoint).collect()
    }

    /// The primaries, in slot order (as spawned: a failover may have changed roles since).
    pub fn primaries(&self) -> &[RedisServer] {
        &self.nodes[..usize::from(self.shape.shards)]
    }

    /// Every node, primaries first.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The shape it was spawned with.
    pub fn shape(&self) -> ClusterShape {
        self.shape
    }

    /// Joins the nodes into one cluster; every node meets the first, whose cluster bus port
    /// is `first_bus`.
    fn assemble(&self, first_bus: u16) -> Result<(), ClusterSpawnError> {
        let mut conns = Vec::with_capacity(self.nodes.len());
        let mut ids = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let endpoint = node.endpoint();
            let mut conn =
                connect(&endpoint, SETUP_CONNECT).map_err(|e| setup(&endpoint, "connect", e))?;
            let id: String = redis::cmd("CLUSTER")
                .arg("MYID")
                .query(&mut conn)
                .map_err(|e| setup(&endpoint, "CLUSTER MYID", e))?;
            ids.push(id);
            conns.push((endpoint, conn));
        }
        for i in 0..self.shape.shards {
            let (start, end) = self.shape.slot_range(i);
            let (endpoint, conn) = &mut conns[usize::from(i)];
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(start)
                .arg(end)
                .query::<()>(conn)
                .map_err(|e| setup(endpoint, "CLUSTER ADDSLOTSRANGE", e))?;
        }
        // A distinct config epoch per node before any node meets another, as
        // `redis-cli --cluster create` gives them: left at 0, the nodes settle their epoch
        // collisions by gossip over the next seconds, and a slot moved by `CLUSTER SETSLOT`
        // meanwhile can fall back to its old owner on the node that took it (that node's
        // bumped epoch loses to its donor's fresh one), leaving a slot that every node
        // redirects away from.
        for (epoch, (endpoint, conn)) in (1u64..).zip(conns.iter_mut()) {
            redis::cmd("CLUSTER")
                .arg("SET-CONFIG-EPOCH")
                .arg(epoch)
                .query::<()>(conn)
                .map_err(|e| setup(endpoint, "CLUSTER SET-CONFIG-EPOCH", e))?;
        }
        let Endpoint::Tcp {
            port: first_port, ..
        } = conns[0].0.clone()
        else {
            unreachable!("cluster nodes listen on TCP");
        };
        for (endpoint, conn) in conns.iter_mut().skip(1) {
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(first_port)
                .arg(first_bus)
                .query::<()>(conn)
                .map_err(|e| setup(endpoint, "CLUSTER MEET", e))?;
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        let total = self.nodes.len();
        wait_until(deadline, "every node to know every other", || {
            conns.iter_mut().try_fold(
                true,
                |all, (_, conn)| Ok(all && known_nodes(conn)? == total),
            )
        })?;
        let shards = usize::from(self.shape.shards);
        for r in shards..total {
            let primary = &ids[(r - shards) / usize::from(self.shape.replicas.max(1))];
            let (endpoint, conn) = &mut conns[r];
            // A node learns the others' ids from gossip: REPLICATE may need a moment.
            let mut result = Ok(());
            for _ in 0..100 {
                result = redis::cmd("CLUSTER")
                    .arg("REPLICATE")
                    .arg(primary)
                    .query::<()>(conn);
                if result.is_ok() {
                    break;
                }
                std::thread::sleep(POLL);
            }
            result.map_err(|e| setup(endpoint, "CLUSTER REPLICATE", e))?;
        }
        wait_until(deadline, "cluster_state:ok on every node", || {
            conns.iter_mut().try_fold(true, |all, (_, conn)| {
                let info: String = redis::cmd("CLUSTER").arg("INFO").query(conn)?;
                Ok(all && info.lines().any(|l| l.trim() == "cluster_state:ok"))
            })
        })?;
        wait_until(deadline, "every replica's link to its primary", || {
            conns[shards..].iter_mut().try_fold(true, |all, (_, conn)| {
                let info: String = redis::cmd("INFO").arg("replication").query(conn)?;
                Ok(all && info.lines().any(|l| l.trim() == "master_link_status:up"))
            })
        })?;
        // Every primary must see its replicas too, or a failover could find none.
        let want = usize::from(self.shape.replicas);
        wait_until(deadline, "every primary to see its replicas", || {
            conns[..shards].iter_mut().try_fold(true, |all, (_, conn)| {
                let info: String = redis::cmd("INFO").arg("replication").query(conn)?;
                Ok(all
                    && info
                        .lines()
                        .any(|l| l.trim() == format!("connected_slaves:{want}")))
            })
        })?;
        Ok(())
    }
}

fn setup(node: &Endpoint, what: &str, e: redis::RedisError) -> ClusterSpawnError {
    ClusterSpawnError::Setup {
        node: node.clone(),
        what: what.to_string(),
        reason: e.to_string(),
    }
}

/// How many nodes `CLUSTER NODES` lists as connected (handshakes finished).
fn known_nodes(conn: &mut redis::Connection) -> redis::RedisResult<usize> {
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(conn)?;
    Ok(nodes
        .lines()
        .filter(|l| !l.contains("handshake") && !l.contains("noaddr"))
        .filter(|l| l.split(' ').nth(7) == Some("connected"))
        .count())
}

/// Polls `ready` until it says so, or the deadline passes (an error naming `what`).
fn wait_until(
    deadline: Instant,
    what: &str,
    mut ready: impl FnMut() -> redis::RedisResult<bool>,
) -> Result<(), ClusterSpawnError> {
    loop {
        let last = ready();
        if matches!(last, Ok(true)) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let what = match last {
                Err(e) => format!("waiting for {what}: {e}"),
                _ => format!("waiting for {what}"),
            };
            return Err(ClusterSpawnError::NotReady { what });
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primaries_share_every_slot_evenly_and_in_order() {
        for shards in [1, 2, 3, 6, 7, MAX_SHARDS] {
            let shape = ClusterShape {
                shards,
                ..ClusterShape::default()
            };
            let mut next = 0u32;
            for i in 0..shards {
                let (start, end) = shape.slot_range(i);
                assert_eq!(u32::from(start), next, "{shards} shards, primary {i}");
                assert!(end >= start);
                let size = u32::from(end - start) + 1;
                assert!(size.abs_diff(SLOTS as u32 / u32::from(shards)) <= 1);
                next = u32::from(end) + 1;
            }
            assert_eq!(next, SLOTS as u32);
        }
    }

    #[test]
    fn shapes_out_of_bounds_are_refused_naming_the_flag() {
        let shape = |shards, replicas| ClusterShape {
            shards,
            replicas,
            ..ClusterShape::default()
        };
        assert_eq!(
            shape(0, 1).check().unwrap_err(),
            "--cluster-shards 0: give 1 to 32 primaries"
        );
        assert_eq!(
            shape(3, 5).check().unwrap_err(),
            "--cluster-replicas 5: give 0 to 4 replicas per primary"
        );
        assert!(shape(MAX_SHARDS, MAX_REPLICAS).check().is_ok());
    }
}
