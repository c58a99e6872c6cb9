//! A real Redis Cluster for tests: `N` primaries without replicas, spawned the way
//! `--target redis-cluster` spawns them ([`SpawnedCluster`]: free ports, a temporary directory
//! each, the slots split evenly, ready once every node says `cluster_state:ok`), with what the
//! kv cluster tests need to look at it. Dropping it stops the servers.

use edgebench::store::redis::{ClusterShape, SpawnedCluster};
use edgebench::target::Endpoint;

/// One master of a [`RedisCluster`].
pub struct ClusterNode {
    /// Its client port on 127.0.0.1.
    pub port: u16,
    /// Its node id (`CLUSTER MYID`).
    pub id: String,
    /// The first and last slot it was given.
    pub slots: (u16, u16),
}

impl ClusterNode {
    /// A new connection to this node.
    pub fn connection(&self) -> redis::Connection {
        connect(self.port)
    }
}

/// A running cluster of masters without replicas.
pub struct RedisCluster {
    /// The masters, in slot order.
    pub nodes: Vec<ClusterNode>,
    _cluster: SpawnedCluster,
}

fn connect(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("connect to cluster node 127.0.0.1:{port}: {e}"))
}

impl RedisCluster {
    /// Starts `masters` nodes and waits until the cluster serves every slot.
    pub fn start(masters: usize) -> RedisCluster {
        super::require_redis_server();
        let shape = ClusterShape {
            shards: u16::try_from(masters).expect("a few masters"),
            replicas: 0,
            ..ClusterShape::default()
        };
        let cluster = SpawnedCluster::spawn(shape, &[]).unwrap_or_else(|e| panic!("{e}"));
        let nodes = cluster
            .primaries()
            .iter()
            .zip(0..)
            .map(|(server, i)| {
                let Endpoint::Tcp { port, .. } = server.endpoint() else {
                    panic!("cluster nodes listen on TCP");
                };
                let id = redis::cmd("CLUSTER")
                    .arg("MYID")
                    .query(&mut connect(port))
                    .expect("CLUSTER MYID");
                ClusterNode {
                    port,
                    id,
                    slots: shape.slot_range(i),
                }
            })
            .collect();
        RedisCluster {
            nodes,
            _cluster: cluster,
        }
    }

    /// The node whose slot range holds `slot`.
    pub fn owner(&self, slot: u16) -> &ClusterNode {
        self.nodes
            .iter()
            .find(|n| (n.slots.0..=n.slots.1).contains(&slot))
            .expect("every slot has an owner")
    }

    /// The slot of `key`, as the cluster computes it (`CLUSTER KEYSLOT`).
    pub fn keyslot(&self, key: &str) -> u16 {
        self.keyslots(&[key])[0]
    }

    /// The slots of `keys`, asked on one connection.
    pub fn keyslots(&self, keys: &[&str]) -> Vec<u16> {
        let mut con = self.nodes[0].connection();
        keys.iter()
            .map(|key| {
                redis::cmd("CLUSTER")
                    .arg("KEYSLOT")
                    .arg(key)
                    .query(&mut con)
                    .expect("CLUSTER KEYSLOT")
            })
            .collect()
    }

    /// `CLUSTER SETSLOT` on `node`.
    pub fn setslot(&self, node: &ClusterNode, slot: u16, state: &str, id: &str) {
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(state)
            .arg(id)
            .query(&mut node.connection())
            .unwrap_or_else(|e| panic!("CLUSTER SETSLOT {slot} {state} {id}: {e}"));
    }
}
