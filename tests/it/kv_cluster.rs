//! `edgebench kv --cluster-mode` against a real Redis Cluster of three masters that each test
//! starts (tests/it/common/cluster.rs): every key lands on its slot's master, hash tags pin keys
//! to one master, `-ASK` is followed with `ASKING`, `-MOVED` refreshes the slot map, and a
//! target that is not a cluster is one clear line.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::cluster::{ClusterNode, RedisCluster};

fn edgebench(dir: &Path) -> Command {
    let mut cmd = crate::common::edgebench();
    cmd.current_dir(dir);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn count(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn info(node: &ClusterNode, section: &str) -> String {
    redis::cmd("INFO")
        .arg(section)
        .query(&mut node.connection())
        .unwrap()
}

/// The node's `INFO commandstats` figure `field` (calls, rejected_calls, failed_calls) of
/// `command`.
fn stat(node: &ClusterNode, command: &str, field: &str) -> u64 {
    let stats = info(node, "commandstats");
    let Some(line) = stats
        .lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:")))
    else {
        return 0;
    };
    line.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .map_or(0, |n| n.parse().unwrap())
}

/// The node's count of calls of `command`.
fn calls(node: &ClusterNode, command: &str) -> u64 {
    stat(node, command, "calls")
}

fn keys(node: &ClusterNode) -> BTreeSet<String> {
    redis::cmd("KEYS")
        .arg("*")
        .query(&mut node.connection())
        .unwrap()
}

fn dbsize(node: &ClusterNode) -> u64 {
    redis::cmd("DBSIZE").query(&mut node.connection()).unwrap()
}

fn keys_in_slot(node: &ClusterNode, slot: u16) -> u64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query(&mut node.connection())
        .unwrap()
}

/// `edgebench kv --cluster-mode -s 127.0.0.1 -p PORT …` with a JSON file; its output and JSON.
fn kv(cluster: &RedisCluster, args: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.json");
    let port = cluster.nodes[0].port.to_string();
    let json_arg = format!("--json-out-file={}", file.display());
    let mut argv = vec![
        "kv",
        "--cluster-mode",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--hide-histogram",
        &json_arg,
    ];
    argv.extend_from_slice(args);
    let out = edgebench(dir.path()).args(&argv).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = json(&file);
    (out, doc)
}

#[test]
fn every_key_lands_on_the_master_of_its_slot() {
    let cluster = RedisCluster::start(3);
    let (out, doc) = kv(
        &cluster,
        &[
            "--key-pattern=P:P",
            "--ratio=1:0",
            "-n",
            "allkeys",
            "-d",
            "100",
            "--key-minimum=1",
            "--key-maximum=2000",
            "-c",
            "2",
            "-t",
            "2",
            "--pipeline=4",
        ],
    );
    let stdout = text(&out.stdout);
    // memtier's cluster-mode table has MOVED/sec and ASK/sec columns.
    assert!(stdout.contains("MOVED/sec      ASK/sec"), "{stdout}");
    // Where each key belongs, as the cluster itself computes it.
    let mut want: Vec<BTreeSet<String>> = vec![BTreeSet::new(); 3];
    let all: Vec<String> = (1..=2000).map(|i| format!("memtier-{i}")).collect();
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    for (key, slot) in all.iter().zip(cluster.keyslots(&names)) {
        let owner = cluster.owner(slot).port;
        let n = cluster.nodes.iter().position(|n| n.port == owner).unwrap();
        want[n].insert(key.clone());
    }
    for (node, want) in cluster.nodes.iter().zip(&want) {
        assert!(!want.is_empty(), "every master owns some of the keys");
        assert_eq!(keys(node), *want, "keys on node {}", node.port);
        // Each key written exactly once, on its master, none refused (a redirection is a
        // rejected call) or failed.
        assert_eq!(
            calls(node, "set"),
            want.len() as u64,
            "SETs on {}",
            node.port
        );
        assert_eq!(stat(node, "set", "rejected_calls"), 0);
        assert_eq!(stat(node, "set", "failed_calls"), 0);
    }
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(count(&totals["Count"]), 2000);
    assert_eq!(count(&totals["MOVED"]), 0);
    assert_eq!(count(&totals["ASK"]), 0);
}

#[test]
fn a_hash_tag_keeps_every_key_on_the_tags_master() {
    let cluster = RedisCluster::start(3);
    kv(
        &cluster,
        &[
            "--key-prefix={edge}:",
            "--key-pattern=P:P",
            "--ratio=1:0",
            "-n",
            "allkeys",
            "--key-minimum=1",
            "--key-maximum=300",
            "-c",
            "3",
            "-t",
            "1",
        ],
    );
    let owner = cluster.owner(cluster.keyslot("edge")).port;
    for node in &cluster.nodes {
        let want = if node.port == owner { 300 } else { 0 };
        assert_eq!(dbsize(node), want, "keys on {}", node.port);
        assert_eq!(calls(node, "set"), want, "SETs on {}", node.port);
    }
}

#[test]
fn an_ask_redirection_is_followed_once_with_asking() {
    let cluster = RedisCluster::start(3);
    // Migrate the slot of memtier-7 from its master to the next one: new keys of that slot
    // are refused by the source with -ASK and belong on the target.
    let slot = cluster.keyslot("memtier-7");
    let source = cluster.owner(slot);
    let target = cluster
        .nodes
        .iter()
        .find(|n| n.port != source.port)
        .unwrap();
    cluster.setslot(target, slot, "IMPORTING", &source.id);
    cluster.setslot(source, slot, "MIGRATING", &target.id);
    let all: Vec<String> = (1..=500).map(|i| format!("memtier-{i}")).collect();
    let names: Vec<&str> = all.iter().map(String::as_str).collect();
    let in_slot = cluster
        .keyslots(&names)
        .into_iter()
        .filter(|&s| s == slot)
        .count() as u64;
    assert!(in_slot >= 1);
    let (_, doc) = kv(
        &cluster,
        &[
            "--key-pattern=P:P",
            "--ratio=1:0",
            "-n",
            "allkeys",
            "--key-minimum=1",
            "--key-maximum=500",
            "-c",
            "2",
            "-t",
            "1",
            "--pipeline=8",
        ],
    );
    assert_eq!(keys_in_slot(target, slot), in_slot);
    assert_eq!(keys_in_slot(source, slot), 0);
    assert_eq!(cluster.nodes.iter().map(dbsize).sum::<u64>(), 500);
    assert_eq!(calls(target, "asking"), in_slot);
    let sets = &doc["ALL STATS"]["Sets"];
    assert_eq!(
        count(&sets["Count"]),
        500,
        "each redirected SET counts once"
    );
    assert_eq!(count(&sets["ASK"]), in_slot);
    assert_eq!(count(&sets["MOVED"]), 0);
}

#[test]
fn a_moved_slot_refreshes_the_slot_map_once_per_client() {
    let cluster = RedisCluster::start(3);
    let slot = cluster.keyslot("memtier-3");
    let source = cluster.owner(slot);
    let target = cluster
        .nodes
        .iter()
        .find(|n| n.port != source.port)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("moved.json");
    let port = cluster.nodes[0].port.to_string();
    // GETs only (no key is ever written, so the slot can move without migrating keys), one
    // request in flight per client, over keys 1-5: memtier-3 is asked for all the time. The
    // run lasts long enough for the move below to finish inside it on a loaded machine.
    let child = edgebench(dir.path())
        .args([
            "kv",
            "--cluster-mode",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--ratio=0:1",
            "--key-minimum=1",
            "--key-maximum=5",
            "--test-time=6",
            "-c",
            "2",
            "-t",
            "1",
            "--hide-histogram",
            &format!("--json-out-file={}", file.display()),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Move the slot once the load runs (the slot map has been read by then).
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls(source, "get") == 0 {
        assert!(Instant::now() < deadline, "no GET reached {}", source.port);
        std::thread::sleep(Duration::from_millis(10));
    }
    cluster.setslot(target, slot, "IMPORTING", &source.id);
    cluster.setslot(source, slot, "MIGRATING", &target.id);
    // The target first, so that a client sent to it by -MOVED reads the new owner there.
    for node in
        std::iter::once(target).chain(cluster.nodes.iter().filter(|n| n.port != target.port))
    {
        cluster.setslot(node, slot, "NODE", &target.id);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let gets = &json(&file)["ALL STATS"]["Gets"];
    // Each client gets one -MOVED, reads the slot map again and never hears -MOVED again.
    assert_eq!(count(&gets["MOVED"]), 2, "{gets}");
    assert!(count(&gets["Count"]) > 2);
}

#[test]
fn a_server_that_is_not_a_cluster_is_one_line() {
    common::require_redis_server();
    let target = common::start("redis-tcp");
    let Some(edgebench::target::Endpoint::Tcp { port, .. }) = target.redis_endpoint() else {
        panic!("redis-tcp has a TCP endpoint");
    };
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec![
                "kv".to_string(),
                "--cluster-mode".into(),
                "-s".into(),
                "127.0.0.1".into(),
                "-p".into(),
                port.to_string(),
                "-n".into(),
                "10".into(),
            ],
            format!(
                "edgebench: --cluster-mode: redis://127.0.0.1:{port} is not a usable Redis \
                 Cluster node (CLUSTER SLOTS answered: ERR This instance has cluster support \
                 disabled); drop --cluster-mode"
            ),
        ),
        (
            ["kv", "--cluster-mode", "--target", "embedded", "-n", "10"]
                .map(String::from)
                .to_vec(),
            "edgebench: --cluster-mode needs a Redis Cluster".to_string(),
        ),
    ] {
        let out = edgebench(dir.path()).args(&args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with(&want), "{args:?}: {stderr}");
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("edgebench: "))
                .count(),
            1,
            "{stderr}"
        );
    }
}
