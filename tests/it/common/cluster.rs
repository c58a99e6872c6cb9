//! A real Redis Cluster for tests: `N` primaries without replicas, spawned the way
//! `--target redis-cluster` spawns them ([`SpawnedCluster`]: free ports, a temporary directory
//! each, the slots split evenly, ready once every node says `cluster_state:ok`), with what the
//! kv cluster tests need to look at it. Dropping it stops the servers.
//!
//! And [`SharedCluster`]: the one cluster of the process that the checks needing only an
//! empty cluster take turns on, instead of spawning one each.

use std::sync::{mpsc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

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

// ---- the shared cluster ----

/// The cluster the conformance checks share: spawning one takes seconds (six `redis-server`s
/// assembled and waited for), and the checks that need a cluster only need an empty one.
/// One check holds it at a time ([`TURN`]), and it is emptied and found empty before each.
///
/// Its nodes are spawned by a keeper thread that lives as long as the process, because
/// PDEATHSIG follows the spawning thread (a test's thread ends with its test); an `atexit`
/// hook stops them and removes their directories, and a killed test process takes them
/// with it.
static KEPT: Mutex<Option<SpawnedCluster>> = Mutex::new(None);
/// The shared cluster's primaries, once spawned, or why it could not be.
static SEEDS: OnceLock<Result<Vec<Endpoint>, String>> = OnceLock::new();
/// Held by the one check using the shared cluster.
static TURN: Mutex<()> = Mutex::new(());

/// A turn on the shared cluster (three primaries, no replicas): empty when it is handed out,
/// and the caller's alone until it drops.
pub struct SharedCluster {
    seeds: Vec<Endpoint>,
    _turn: MutexGuard<'static, ()>,
}

impl SharedCluster {
    /// Waits for the shared cluster (starting it on first use), empties every primary and
    /// checks that each holds no key, so a check cannot pass on another's data.
    pub fn take() -> SharedCluster {
        super::require_redis_server();
        let seeds = match SEEDS.get_or_init(spawn_kept) {
            Ok(seeds) => seeds.clone(),
            Err(e) => panic!("{e}"),
        };
        // A check that failed holding the turn poisoned it; the next one scrubs anyway.
        let turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
        for node in &seeds {
            let mut conn = edgebench::target::connect(node, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("{node}: {e}"));
            let _: () = redis::cmd("FLUSHALL")
                .query(&mut conn)
                .unwrap_or_else(|e| panic!("FLUSHALL on {node}: {e}"));
            let keys: u64 = redis::cmd("DBSIZE")
                .query(&mut conn)
                .unwrap_or_else(|e| panic!("DBSIZE on {node}: {e}"));
            assert_eq!(keys, 0, "{node} still holds keys after FLUSHALL");
        }
        SharedCluster { seeds, _turn: turn }
    }

    /// The primaries, in slot order.
    pub fn seeds(&self) -> &[Endpoint] {
        &self.seeds
    }

    /// The `--target` item that names it: `redis-cluster://127.0.0.1:P1,…`.
    pub fn item(&self) -> String {
        let nodes: Vec<String> = self
            .seeds
            .iter()
            .map(|s| s.to_string().trim_start_matches("redis://").to_string())
            .collect();
        format!("redis-cluster://{}", nodes.join(","))
    }
}

/// Spawns the shared cluster from its keeper thread and returns its primaries.
fn spawn_kept() -> Result<Vec<Endpoint>, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("redis-cluster-keeper".into())
        .spawn(move || {
            let shape = ClusterShape {
                shards: 3,
                replicas: 0,
                ..ClusterShape::default()
            };
            match SpawnedCluster::spawn(shape, &[]) {
                Ok(cluster) => {
                    let seeds = cluster.seeds();
                    *KEPT.lock().unwrap_or_else(PoisonError::into_inner) = Some(cluster);
                    // SAFETY: registers a plain `extern "C" fn()`; it runs once, at exit.
                    unsafe {
                        libc::atexit(stop_at_exit);
                    }
                    let _ = tx.send(Ok(seeds));
                    loop {
                        std::thread::park();
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot spawn the shared cluster: {e}")));
                }
            }
        })
        .map_err(|e| format!("cannot start the cluster keeper thread: {e}"))?;
    rx.recv()
        .map_err(|_| "the cluster keeper thread ended before reporting".to_string())?
}

/// `atexit` hook: stops the shared cluster's nodes and removes their directories.
extern "C" fn stop_at_exit() {
    let cluster = KEPT.lock().unwrap_or_else(PoisonError::into_inner).take();
    drop(cluster);
}
