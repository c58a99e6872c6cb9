//! A real Redis Cluster for tests: `N` `redis-server --cluster-enabled yes` masters on free
//! ports, each in its own temporary directory, the 16384 slots split evenly between them
//! (`CLUSTER ADDSLOTSRANGE`), joined with `CLUSTER MEET`, and ready once every node reports
//! `cluster_state:ok` and the same slot map. Dropping it kills the servers and removes their
//! directories; they also die with the test process (`die_with_parent`).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use edgebench::target::spawn::die_with_parent;

/// How long a cluster gets to start and agree on its slot map.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// One master of a [`RedisCluster`].
pub struct ClusterNode {
    /// Its client port on 127.0.0.1 (its cluster bus is port + 10000).
    pub port: u16,
    /// Its node id (`CLUSTER MYID`).
    pub id: String,
    /// The first and last slot it was given.
    pub slots: (u16, u16),
    child: Child,
    _dir: tempfile::TempDir,
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
}

fn connect(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("connect to cluster node 127.0.0.1:{port}: {e}"))
}

/// A port that is free, and whose cluster bus port (+10000) is free too.
fn free_port_pair() -> u16 {
    for _ in 0..100 {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local address").port();
        if port < 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free port pair (port, port + 10000) on 127.0.0.1");
}

/// Starts one cluster-enabled `redis-server` on a free port pair and waits until it answers
/// with its own pid. Picking a free port and binding it are two steps, so another test may
/// take the port (or its bus port) in between: then the server exits, or another server
/// answers, and a new pair is tried.
fn spawn_node(binary: &str, deadline: Instant) -> (u16, Child, tempfile::TempDir) {
    'attempt: for _ in 0..10 {
        let dir = tempfile::Builder::new()
            .prefix("edgebench-cluster-")
            .tempdir()
            .expect("temporary directory");
        let port = free_port_pair();
        let mut cmd = Command::new(binary);
        cmd.args(["--port", &port.to_string()])
            .args(["--cluster-enabled", "yes"])
            .arg("--cluster-config-file")
            .arg(dir.path().join("nodes.conf"))
            .args(["--cluster-node-timeout", "5000"])
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(dir.path().join("redis.log"))
            .args(["--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut cmd);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                continue 'attempt; // the port or its bus port was taken
            }
            let answered = redis::Client::open(format!("redis://127.0.0.1:{port}"))
                .and_then(|c| c.get_connection())
                .and_then(|mut con| redis::cmd("INFO").arg("server").query::<String>(&mut con));
            if let Ok(info) = answered {
                let pid = info
                    .lines()
                    .find_map(|l| l.strip_prefix("process_id:"))
                    .and_then(|p| p.trim().parse::<u32>().ok());
                if pid == Some(child.id()) {
                    return (port, child, dir);
                }
                // Another server holds the port: ours cannot bind it.
                let _ = child.kill();
                let _ = child.wait();
                continue 'attempt;
            }
            assert!(
                Instant::now() < deadline,
                "cluster node on port {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("no cluster node could bind a free port pair in 10 attempts");
}

impl RedisCluster {
    /// Starts `masters` nodes and waits until the cluster serves every slot.
    pub fn start(masters: usize) -> RedisCluster {
        super::require_redis_server();
        let binary = std::env::var("EDGEBENCH_REDIS_SERVER")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "redis-server".to_string());
        let per = 16384 / masters;
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut nodes = Vec::new();
        for i in 0..masters {
            let (port, child, dir) = spawn_node(&binary, deadline);
            let first = (i * per) as u16;
            let last = if i + 1 == masters {
                16383
            } else {
                ((i + 1) * per - 1) as u16
            };
            nodes.push(ClusterNode {
                port,
                id: String::new(),
                slots: (first, last),
                child,
                _dir: dir,
            });
        }
        let mut cluster = RedisCluster { nodes };
        for node in &mut cluster.nodes {
            let mut con = node.connection();
            node.id = redis::cmd("CLUSTER")
                .arg("MYID")
                .query(&mut con)
                .expect("CLUSTER MYID");
            let _: () = redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(node.slots.0)
                .arg(node.slots.1)
                .query(&mut con)
                .expect("CLUSTER ADDSLOTSRANGE");
        }
        let mut first = cluster.nodes[0].connection();
        for node in &cluster.nodes[1..] {
            let _: () = redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port)
                .query(&mut first)
                .expect("CLUSTER MEET");
        }
        cluster.wait_until_agreed(deadline);
        cluster
    }

    /// Waits until every node says `cluster_state:ok` and knows every master's slots.
    pub fn wait_until_agreed(&self, deadline: Instant) {
        loop {
            let agreed = self.nodes.iter().all(|n| {
                let mut con = n.connection();
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut con)
                    .unwrap_or_default();
                let slots: Vec<redis::Value> = redis::cmd("CLUSTER")
                    .arg("SLOTS")
                    .query(&mut con)
                    .unwrap_or_default();
                info.contains("cluster_state:ok") && slots.len() == self.nodes.len()
            });
            if agreed {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster did not reach cluster_state:ok in {READY_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
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

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.child.kill();
            let _ = node.child.wait();
        }
    }
}
