//! Redis Cluster as a target of every Redis workload: `--target redis-cluster` (a private
//! cluster edgebench spawns) and `redis-cluster://HOST:PORT,…` (one that runs already).
//! Where the core-data layout puts its keys is checked against the server's own
//! `CLUSTER KEYSLOT`; kv, perf and coredata run on a spawned cluster; a primary killed in
//! the middle of a run is failed over and the run completes; bad URLs and unreachable nodes
//! are one line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use edgebench::store::redis::{ClusterShape, SpawnedCluster};
use edgebench::target::{connect, parse_targets, set_cluster_shape, Endpoint, Target};
use edgebench::transport::cluster::slots::hash_slot;
use edgebench::v2018::{Event, Reading};

use crate::common;

fn edgebench(dir: &Path) -> Command {
    let mut cmd = crate::common::edgebench();
    cmd.current_dir(dir);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn succeeded(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// A spawned-cluster target of `shards` primaries and no replicas.
fn cluster_target(shards: u16) -> Target {
    common::require_redis_server();
    let mut specs = parse_targets(&["redis-cluster".to_string()]).unwrap();
    set_cluster_shape(&mut specs, Some(shards), Some(0)).unwrap();
    Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"))
}

fn conn(node: &Endpoint) -> redis::Connection {
    connect(node, Duration::from_secs(2)).unwrap_or_else(|e| panic!("{node}: {e}"))
}

#[test]
fn core_data_keys_land_in_the_slots_cluster_keyslot_names() {
    let target = cluster_target(3);
    let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
    let mut events = Vec::new();
    for d in 0..24 {
        let mut e = Event {
            device: format!("device{d}"),
            readings: (0..3)
                .map(|i| Reading {
                    name: format!("name{i}"),
                    value: "1".into(),
                    ..Reading::default()
                })
                .collect(),
            ..Event::default()
        };
        store.add_event(&mut e).unwrap();
        events.push(e);
    }
    drop(store);
    let primaries: Vec<Endpoint> = target.spawned_cluster().expect("a spawned cluster").seeds();
    let mut conns: Vec<redis::Connection> = primaries.iter().map(conn).collect();
    // Every key: where the server says it hashes is where edgebench routed it.
    let mut slot_of: BTreeMap<String, u16> = BTreeMap::new();
    let mut per_node = Vec::new();
    for c in &mut conns {
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(c).unwrap();
        per_node.push(keys.len());
        for key in keys {
            let slot: u16 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(&key)
                .query(c)
                .unwrap();
            assert_eq!(hash_slot(key.as_bytes()), slot, "{key}");
            slot_of.insert(key, slot);
        }
    }
    assert!(
        per_node.iter().all(|&n| n > 0),
        "the devices' partitions spread over every primary: {per_node:?}"
    );
    // What one MULTI … EXEC wrote shares one slot: the event's record, its links, its
    // readings' records and its device's index.
    for e in &events {
        let slot = |suffix: &str| {
            let found: Vec<u16> = slot_of
                .iter()
                .filter(|(k, _)| k.ends_with(suffix))
                .map(|(_, s)| *s)
                .collect();
            assert_eq!(found.len(), 1, "one key ends with {suffix}: {found:?}");
            found[0]
        };
        let home = slot(&format!("}}{}", e.id));
        assert_eq!(slot(&format!("event:readings:{}", e.id)), home);
        assert_eq!(slot(&format!("event:device:{}", e.device)), home);
        assert_eq!(slot(&format!("reading:device:{}", e.device)), home);
        for r in &e.readings {
            assert_eq!(slot(&format!("}}{}", r.id)), home, "reading {}", r.id);
        }
    }
    let partitions: BTreeSet<u16> = slot_of.values().map(|s| s / 1024).collect();
    assert!(partitions.len() > 3, "24 devices use several partitions");
}

#[test]
fn kv_perf_and_coredata_run_on_a_spawned_cluster() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("kv.json");
    let out = edgebench(dir.path())
        .args([
            "kv",
            "--target",
            "redis-cluster",
            "--cluster-shards",
            "3",
            "--cluster-replicas",
            "0",
            "-n",
            "300",
            "-c",
            "2",
            "-t",
            "1",
            "--hide-histogram",
        ])
        .arg(format!("--json-out-file={}", json.display()))
        .output()
        .unwrap();
    succeeded(&out);
    assert!(
        text(&out.stderr).contains("RedisCluster at redis-cluster://127.0.0.1:"),
        "{}",
        text(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"].as_u64(), Some(600), "{totals}");
    assert_eq!(totals["MOVED/sec"].as_f64(), Some(0.0), "{totals}");

    let out = edgebench(dir.path())
        .args([
            "coredata",
            "--target",
            "redis-cluster",
            "--cluster-shards",
            "2",
            "--cluster-replicas",
            "0",
            "--benchtime",
            "20x",
            "--bench",
            "AddEvent|EventCount|Events$",
            "--out",
        ])
        .arg(dir.path().join("coredata"))
        .output()
        .unwrap();
    succeeded(&out);
    let md = std::fs::read_to_string(dir.path().join("coredata/results.md")).unwrap();
    for row in ["| AddEvent |", "| EventCount |", "| Events |"] {
        assert!(md.contains(row), "{row} in\n{md}");
    }
    assert!(md.contains("RedisCluster"), "{md}");

    // perf reads its properties from ./etc, as PadoGrid's apps do.
    std::fs::create_dir(dir.path().join("etc")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("etc/ingestion.properties"),
        dir.path().join("etc/ingestion.properties"),
    )
    .unwrap();
    let out = edgebench(dir.path())
        .args([
            "perf",
            "test_ingestion",
            "-run",
            "--target",
            "redis-cluster",
            "--cluster-replicas",
            "0",
        ])
        .output()
        .unwrap();
    succeeded(&out);
    assert!(
        text(&out.stdout).contains("Data ingestion complete"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_cluster_urls_and_unreachable_nodes_are_one_line() {
    common::require_redis_server();
    let single = common::start("redis-tcp");
    let Some(Endpoint::Tcp { port, .. }) = single.redis_endpoint() else {
        panic!("redis-tcp has a TCP endpoint");
    };
    let dir = tempfile::tempdir().unwrap();
    // A target that does not answer is reported, and the run goes on without it (exit 1);
    // a URL that does not parse stops the run before it starts (exit 2).
    for (target, code, want) in [
        (
            "redis-cluster://127.0.0.1:1".to_string(),
            1,
            "edgebench: target RedisCluster: no node of the cluster answered \
             (redis://127.0.0.1:1): redis://127.0.0.1:1: Connection refused (is a Redis \
             server listening there?)"
                .to_string(),
        ),
        (
            format!("redis-cluster://127.0.0.1:1,127.0.0.1:{port}"),
            1,
            format!(
                "edgebench: target RedisCluster: redis://127.0.0.1:{port} is not a \
                 usable Redis Cluster node: CLUSTER SLOTS answered: ERR This instance has \
                 cluster support disabled (for a single server, use redis://HOST:PORT)"
            ),
        ),
        (
            "redis-cluster://127.0.0.1".to_string(),
            2,
            "edgebench: --target: bad target URL \"redis-cluster://127.0.0.1\": \"127.0.0.1\" \
             in redis-cluster://127.0.0.1 is not HOST:PORT (a cluster's nodes are reached \
             over TCP, with their port): use redis-cluster://HOST:PORT[,HOST:PORT…]"
                .to_string(),
        ),
    ] {
        let out = edgebench(dir.path())
            .args(["coredata", "--benchtime", "1x", "--target", &target])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{target}: {stderr}");
        assert_eq!(stderr.lines().next(), Some(want.as_str()), "{target}");
        if code == 2 {
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
        }
    }
}

/// Each primary of a freshly spawned cluster has a config epoch of its own from the start (as
/// `redis-cli --cluster create` sets them), so a slot moved right away stays moved: with
/// epochs left to settle by gossip, the node that took a slot could hand it back.
#[test]
fn a_spawned_clusters_primaries_have_distinct_config_epochs_at_once() {
    common::require_redis_server();
    let shape = ClusterShape {
        shards: 3,
        replicas: 0,
        ..ClusterShape::default()
    };
    let cluster = SpawnedCluster::spawn(shape, &[]).unwrap_or_else(|e| panic!("{e}"));
    let epochs: Vec<u64> = cluster
        .primaries()
        .iter()
        .map(|node| {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query(&mut conn(&node.endpoint()))
                .unwrap();
            info.lines()
                .find_map(|l| l.trim().strip_prefix("cluster_my_epoch:"))
                .and_then(|e| e.parse().ok())
                .unwrap_or_else(|| panic!("no cluster_my_epoch in {info}"))
        })
        .collect();
    assert_eq!(epochs, [1, 2, 3]);
}

/// A primary is killed while `edgebench kv` runs on the cluster: its replica takes over, the
/// requests that were in flight on it are counted as errors, the run reports the failover
/// window and ends on time.
#[test]
fn a_primary_killed_mid_run_fails_over_and_the_run_completes() {
    common::require_redis_server();
    let shape = ClusterShape {
        shards: 3,
        replicas: 1,
        node_timeout_ms: 1000,
    };
    let cluster = SpawnedCluster::spawn(shape, &[]).unwrap_or_else(|e| panic!("{e}"));
    let nodes: Vec<String> = cluster
        .seeds()
        .iter()
        .map(|s| s.to_string().trim_start_matches("redis://").to_string())
        .collect();
    let url = format!("redis-cluster://{}", nodes.join(","));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("kv.json");
    let mut child = edgebench(dir.path())
        .args([
            "kv",
            "--target",
            &url,
            "--test-time",
            "8",
            "-c",
            "2",
            "-t",
            "1",
            "--hide-histogram",
        ])
        .arg(format!("--json-out-file={}", json.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the victim serves the load, kill it outright.
    let victim = &cluster.primaries()[0];
    let mut c = conn(&victim.endpoint());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stats: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut c)
            .unwrap();
        if stats.contains("cmdstat_get:") || stats.contains("cmdstat_set:") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the load never reached {}",
            victim.endpoint()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) on a child this process spawned and has not reaped.
    assert_eq!(
        unsafe { libc::kill(victim.pid() as libc::pid_t, libc::SIGKILL) },
        0
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("edgebench kv did not end within 60 s of an 8 s run");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("edgebench kv: failover: a primary stopped answering")
            && stderr.contains("the slot map named a new primary"),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failover = &doc["ALL STATS"]["Exact Figures"]["Failover"];
    let window = failover["Window ns"]
        .as_u64()
        .unwrap_or_else(|| panic!("{failover}"));
    assert!(window > 0, "{failover}");
    assert!(failover["Lost Requests"].as_u64().is_some(), "{failover}");
    // The cluster now serves every slot without the victim: its replica took over.
    let survivor = &cluster.primaries()[1];
    let slots: Vec<Vec<redis::Value>> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(&mut conn(&survivor.endpoint()))
        .unwrap();
    let Endpoint::Tcp { port: dead, .. } = victim.endpoint() else {
        panic!("cluster nodes listen on TCP");
    };
    let served: i64 = slots
        .iter()
        .map(|range| match (&range[0], &range[1], &range[2]) {
            (redis::Value::Int(a), redis::Value::Int(b), redis::Value::Array(master)) => {
                assert_ne!(master[1], redis::Value::Int(i64::from(dead)), "{range:?}");
                b - a + 1
            }
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(served, 16384);
}

/// `redis-cluster?…` gives every node the persistence options; `replicas=` is refused there
/// in one line (`wait=` is checked against `--cluster-replicas`: see the WAIT tests below).
#[test]
fn a_spawned_cluster_takes_persistence_options_for_every_node() {
    common::require_redis_server();
    let mut specs =
        parse_targets(&["redis-cluster?appendonly=yes&appendfsync=always&save=60:1000".into()])
            .unwrap_or_else(|e| panic!("{e}"));
    set_cluster_shape(&mut specs, Some(2), Some(1)).unwrap();
    let target = Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"));
    let cluster = target.spawned_cluster().expect("a spawned cluster");
    assert_eq!(cluster.nodes().len(), 4);
    for node in cluster.nodes() {
        let mut c = conn(&node.endpoint());
        for (name, want) in [
            ("appendonly", "yes"),
            ("appendfsync", "always"),
            ("save", "60 1000"),
            ("cluster-enabled", "yes"),
        ] {
            let got: Vec<String> = redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query(&mut c)
                .unwrap();
            assert_eq!(got, [name, want], "{}", node.endpoint());
        }
    }
    for item in [
        "redis-cluster?replicas=1",
        "redis-cluster?replicas=1&wait=1",
    ] {
        let message = parse_targets(&[item.to_string()]).unwrap_err().to_string();
        assert!(
            message.contains("its replicas come from --cluster-replicas")
                && !message.contains('\n'),
            "{message}"
        );
    }
}

/// The replica of `primary` among `cluster`'s nodes (the one whose `master_port` is its).
fn replica_of(cluster: &SpawnedCluster, primary: &Endpoint) -> Endpoint {
    let Endpoint::Tcp { port, .. } = primary else {
        panic!("cluster nodes listen on TCP");
    };
    let want = format!("master_port:{port}");
    cluster
        .nodes()
        .iter()
        .map(|n| n.endpoint())
        .find(|n| {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut conn(n))
                .unwrap();
            info.lines().any(|l| l.trim() == want)
        })
        .unwrap_or_else(|| panic!("no replica of {primary}"))
}

/// `GET key` on a replica (after `READONLY`, which a cluster replica needs to answer).
fn replica_get(replica: &Endpoint, key: &str) -> Option<String> {
    let mut c = conn(replica);
    redis::cmd("READONLY").query::<()>(&mut c).unwrap();
    redis::cmd("GET").arg(key).query(&mut c).unwrap()
}

/// `CONFIG RESETSTAT` on every node given.
fn reset_stats(nodes: &[Endpoint]) {
    for n in nodes {
        redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query::<()>(&mut conn(n))
            .unwrap();
    }
}

/// The `redis-cluster://…` URL of a cluster's primaries.
fn cluster_url(cluster: &SpawnedCluster) -> String {
    let nodes: Vec<String> = cluster
        .seeds()
        .iter()
        .map(|s| s.to_string().trim_start_matches("redis://").to_string())
        .collect();
    format!("redis-cluster://{}", nodes.join(","))
}

/// `redis-cluster?wait=1`: the cluster connection follows each write with WAIT on the
/// primary it went to: one after a command, one per part of a scattered pipeline that
/// writes, one per slot of a split MSET, one after EXEC; none after reads. The replicas
/// hold each write once it returned.
#[test]
fn the_cluster_connection_waits_on_the_primary_each_write_went_to() {
    use crate::replication::calls;
    use redis::ConnectionLike as _;
    common::require_redis_server();
    let mut specs = parse_targets(&["redis-cluster?wait=1".to_string()]).unwrap();
    set_cluster_shape(&mut specs, Some(2), Some(1)).unwrap();
    let target = Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        target
            .endpoint()
            .ends_with("(spawned: 2 primaries, 1 replica each), WAIT 1 0 after writes"),
        "{}",
        target.endpoint()
    );
    let cluster = target.spawned_cluster().expect("a spawned cluster");
    let primaries = cluster.seeds();
    // The primary that serves a key: the other one answers -MOVED.
    let owner = |key: &str| {
        primaries
            .iter()
            .position(|p| {
                redis::cmd("GET")
                    .arg(key)
                    .query::<Option<String>>(&mut conn(p))
                    .is_ok()
            })
            .unwrap()
    };
    let keys_of = |node: usize| -> Vec<String> {
        (0..)
            .map(|i| format!("k{i}"))
            .filter(|k| owner(k) == node)
            .take(2)
            .collect()
    };
    let (a, b) = (keys_of(0), keys_of(1));
    let t = owner("{t}x");
    let mut c = target
        .cluster_connection()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.wait(), 1);
    reset_stats(&primaries);

    let ok: String = redis::cmd("SET").arg(&a[0]).arg("1").query(&mut c).unwrap();
    assert_eq!(ok, "OK", "callers see SET's reply, not WAIT's");
    let got: Option<String> = redis::cmd("GET").arg(&a[0]).query(&mut c).unwrap();
    assert_eq!(got.as_deref(), Some("1"));
    // Scattered, both parts write: a WAIT on each primary.
    let (_, _, got): ((), (), Option<String>) = redis::pipe()
        .cmd("SET")
        .arg(&a[1])
        .arg("2")
        .cmd("SET")
        .arg(&b[0])
        .arg("3")
        .cmd("GET")
        .arg(&a[0])
        .query(&mut c)
        .unwrap();
    assert_eq!(got.as_deref(), Some("1"));
    // Scattered, only B's part writes: a WAIT on B only.
    let (got, ()): (Option<String>, ()) = redis::pipe()
        .cmd("GET")
        .arg(&a[1])
        .cmd("SET")
        .arg(&b[1])
        .arg("4")
        .query(&mut c)
        .unwrap();
    assert_eq!(got.as_deref(), Some("2"));
    // A transaction: WAIT after EXEC, on its slot's primary.
    let ((), ()): ((), ()) = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("{t}x")
        .arg("5")
        .cmd("SET")
        .arg("{t}y")
        .arg("6")
        .query(&mut c)
        .unwrap();
    // An MSET over both primaries is split per slot, a WAIT after each part.
    redis::cmd("MSET")
        .arg(&a[0])
        .arg("7")
        .arg(&b[0])
        .arg("8")
        .query::<()>(&mut c)
        .unwrap();
    // Reads on both: no WAIT.
    let (x, y): (Option<String>, Option<String>) = redis::pipe()
        .cmd("GET")
        .arg(&a[0])
        .cmd("GET")
        .arg(&b[0])
        .query(&mut c)
        .unwrap();
    assert_eq!((x.as_deref(), y.as_deref()), (Some("7"), Some("8")));
    assert!(c.check_connection());

    let on = |node: usize| usize::from(t == node) as u64;
    assert_eq!(calls(&primaries[0], "wait"), 3 + on(0), "primary A");
    assert_eq!(calls(&primaries[1], "wait"), 3 + on(1), "primary B");
    assert_eq!(calls(&primaries[t], "exec"), 1);
    for (node, key, value) in [
        (0, &a[0], "7"),
        (1, &b[0], "8"),
        (t, &"{t}y".to_string(), "6"),
    ] {
        let replica = replica_of(cluster, &primaries[node]);
        assert_eq!(replica_get(&replica, key).as_deref(), Some(value), "{key}");
    }
}

/// On a cluster with a replica per primary (spawned here, given by URL, so its primaries
/// can be asked): `kv --wait 1` sends WAIT after every SET to the primary the SET went to and
/// none after a GET; `coredata --wait 1` follows every EXEC with a WAIT and sends no WAIT
/// without a write; `--wait 2` is refused naming the primary.
#[test]
fn kv_and_coredata_wait_on_every_primary_of_a_cluster() {
    use crate::replication::calls;
    common::require_redis_server();
    let shape = ClusterShape {
        shards: 2,
        replicas: 1,
        ..ClusterShape::default()
    };
    let cluster = SpawnedCluster::spawn(shape, &[]).unwrap_or_else(|e| panic!("{e}"));
    let primaries = cluster.seeds();
    let url = cluster_url(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("kv.json");
    let out = edgebench(dir.path())
        .args([
            "kv",
            "--target",
            &url,
            "--wait",
            "1",
            "-t",
            "1",
            "-c",
            "2",
            "--ratio",
            "1:1",
            "-n",
            "100",
            "--pipeline",
            "2",
            "--hide-histogram",
        ])
        .arg(format!("--json-out-file={}", json.display()))
        .output()
        .unwrap();
    succeeded(&out);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["ALL STATS"]["Sets"]["Count"].as_u64(), Some(100));
    let mut sets = 0;
    for p in &primaries {
        let set = calls(p, "set");
        assert!(set > 0, "the SETs spread over both primaries");
        assert_eq!(
            calls(p, "wait"),
            set,
            "{p}: a WAIT after each SET it served"
        );
        sets += set;
        let replica = replica_of(&cluster, p);
        let dbsize = |n: &Endpoint| -> i64 { redis::cmd("DBSIZE").query(&mut conn(n)).unwrap() };
        assert_eq!(dbsize(&replica), dbsize(p), "{p}'s replica holds every key");
    }
    assert_eq!(sets, 100);

    reset_stats(&primaries);
    let out = edgebench(dir.path())
        .args([
            "coredata",
            "--target",
            &url,
            "--wait",
            "1",
            "--benchtime",
            "10x",
            "--bench",
            "AddEvent|AddReading|EventCount",
            "--out",
        ])
        .arg(dir.path().join("coredata"))
        .output()
        .unwrap();
    succeeded(&out);
    let md = std::fs::read_to_string(dir.path().join("coredata/results.md")).unwrap();
    for row in ["| AddEvent |", "| AddReading |", "| EventCount |"] {
        assert!(md.contains(row), "{row} in\n{md}");
    }
    let mut waits = 0;
    for p in &primaries {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut conn(p))
            .unwrap();
        // Calls of commands that write, other than the cluster's and replication's own.
        let writes: u64 = info
            .lines()
            .filter_map(|l| l.strip_prefix("cmdstat_")?.split_once(":calls="))
            .filter(|(name, _)| {
                edgebench::target::may_write(name.as_bytes())
                    && !["cluster", "replconf", "psync"].contains(name)
            })
            .map(|(_, rest)| rest.split(',').next().unwrap().parse::<u64>().unwrap())
            .sum();
        let (exec, wait) = (calls(p, "exec"), calls(p, "wait"));
        assert!(exec > 0, "{p}: transactions on every primary");
        // Every EXEC has its WAIT; every WAIT follows at least one write.
        assert!(
            exec <= wait && wait <= writes,
            "{p}: {exec} EXEC, {wait} WAIT, {writes} writes"
        );
        waits += wait;
    }
    assert!(waits > 0);

    let out = edgebench(dir.path())
        .args([
            "coredata",
            "--target",
            &url,
            "--wait",
            "2",
            "--bench",
            "EventCount",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let first = &primaries[0];
    assert_eq!(
        text(&out.stderr).lines().next(),
        Some(
            format!(
                "edgebench: target RedisCluster: --wait 2 needs 2 replicas on every primary, \
                 primary {first} has 1 (WAIT would block for ever): add replicas to it, or \
                 --wait 1"
            )
            .as_str()
        )
    );
}

/// A spawned cluster with fewer replicas than `--wait` (or `?wait=`) asks for is refused
/// (before any node starts: the shape says it), by kv and coredata alike; memtier's `--wait-ratio` is refused in
/// cluster mode as memtier refuses it.
#[test]
fn wait_beyond_a_spawned_clusters_replicas_is_refused_before_it_starts() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], i32, &str); 4] = [
        (
            &[
                "kv",
                "--target",
                "redis-cluster",
                "--cluster-replicas",
                "0",
                "--wait",
                "1",
            ],
            1,
            "edgebench: target RedisCluster: --wait 1 needs 1 replicas on every primary, this \
             cluster has 0 each (WAIT would block for ever): use --cluster-replicas 1, or drop \
             --wait",
        ),
        (
            &[
                "coredata",
                "--target",
                "redis-cluster?wait=2",
                "--bench",
                "EventCount",
            ],
            1,
            "edgebench: target RedisCluster: --wait 2 needs 2 replicas on every primary, this \
             cluster has 1 each (WAIT would block for ever): use --cluster-replicas 2, or \
             --wait 1",
        ),
        (
            &["kv", "--target", "redis-cluster", "--wait-ratio", "1:1"],
            2,
            "edgebench: --cluster-mode with --wait-ratio: cluster mode does not support it \
             (memtier): its WAITs name no key, so no primary; use --wait N, which follows each \
             write with WAIT N 0 on the primary the write went to",
        ),
        (
            &["kv", "--target", "redis-cluster?replicas=1"],
            2,
            "edgebench: --target: bad target option in \"redis-cluster?replicas=1\": a spawned \
             cluster takes no replicas=: its replicas come from --cluster-replicas (each \
             primary gets that many): drop replicas=",
        ),
    ];
    for (args, code, want) in cases {
        let out = edgebench(dir.path()).args(args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().next(), Some(want), "{args:?}");
    }
}
