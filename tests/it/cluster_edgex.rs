//! EdgeX 3.1's Redis layout on Redis Cluster (the cluster form of `store::redis::edgex3`):
//! where its keys land, checked against the server's own `CLUSTER KEYSLOT`; a reading of
//! another device's partition; a directory entry left behind by a write that never reached
//! its `EXEC`; and `coredata --layout edgex3` and a core-data service on a spawned cluster.
//! The layout's answers themselves are the conformance suite's (`edgex_conformance::
//! redis3_cluster`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use edgebench::edgex::testing;
use edgebench::edgex::{Event, Reading};
use edgebench::store::edgex::{EventStore, Filter, Page};
use edgebench::target::{connect, parse_targets, set_cluster_shape, Endpoint, Layout, Target};
use edgebench::transport::cluster::slots::{hash_slot, SLOTS};

use crate::common;
use crate::common::cluster::SharedCluster;

/// EdgeX 3.1's layout on the shared cluster (three primaries without replicas, empty), and
/// the turn on it, held until it drops.
fn cluster_edgex3() -> (Target, SharedCluster) {
    let cluster = SharedCluster::take();
    let mut specs = parse_targets(&[cluster.item()]).unwrap();
    specs[0].layout = Layout::EdgeX3;
    let target = Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"));
    (target, cluster)
}

fn conn(node: &Endpoint) -> redis::Connection {
    connect(node, Duration::from_secs(2)).unwrap_or_else(|e| panic!("{node}: {e}"))
}

/// An Int64 reading with value 1.
fn reading(device: &str, resource: &str, origin: i64) -> Reading {
    testing::reading(device, resource, origin, testing::simple("1"))
}

/// Every key of the cluster with its slot as the node holding it computes it.
fn keys_and_slots(cluster: &SharedCluster) -> BTreeMap<String, u16> {
    let mut slot_of = BTreeMap::new();
    for node in cluster.seeds() {
        let mut c = conn(node);
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
        for key in keys {
            let slot: u16 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(&key)
                .query(&mut c)
                .unwrap();
            assert_eq!(hash_slot(key.as_bytes()), slot, "{key}");
            slot_of.insert(key, slot);
        }
    }
    slot_of
}

/// Two device names whose partitions (sixteenths of the slot space) differ.
fn devices_in_two_partitions() -> (String, String) {
    let partition = |d: &str| usize::from(hash_slot(d.as_bytes())) * 16 / SLOTS;
    let a = "device-a".to_string();
    let b = (0..)
        .map(|i| format!("device-b{i}"))
        .find(|b| partition(b) != partition(&a))
        .unwrap();
    (a, b)
}

#[test]
fn edgex3_keys_of_one_event_share_the_slot_of_its_device() {
    let (target, cluster) = cluster_edgex3();
    let mut store = target.open_event_store().unwrap_or_else(|e| panic!("{e}"));
    store.scrub().unwrap();
    let mut events = Vec::new();
    for d in 0..24 {
        let device = format!("device{d}");
        let readings = (0..3)
            .map(|i| reading(&device, &format!("r{i}"), 1_000 + d))
            .collect();
        let e = testing::event(&device, 1_000 + d, readings);
        store.add_event(&e).unwrap();
        events.push(e);
    }
    let slot_of = keys_and_slots(&cluster);
    let slot = |name: &str| -> u16 {
        let found: Vec<u16> = slot_of
            .iter()
            .filter(|(k, _)| k.ends_with(name))
            .map(|(_, s)| *s)
            .collect();
        assert_eq!(found.len(), 1, "one key ends with {name}: {found:?}");
        found[0]
    };
    for e in &events {
        // What the event's MULTI … EXEC wrote: one slot, its device's partition.
        let home = slot(&format!("evt:{}", e.id));
        assert_eq!(slot(&format!("evt:readings:{}", e.id)), home);
        assert_eq!(slot(&format!("evt:device:name:{}", e.device_name)), home);
        assert_eq!(slot(&format!("rd:deviceName:{}", e.device_name)), home);
        for r in &e.readings {
            assert_eq!(slot(&format!("rd:{}", r.id)), home, "reading {}", r.id);
            let both = format!(
                "rd:deviceName:resourceName:{}:{}",
                e.device_name, r.resource_name
            );
            assert_eq!(slot(&both), home);
        }
        // The directory entry: in the id's own slot, naming the partition.
        let entry = format!("cd|dir:{{{}}}", e.id);
        assert_eq!(
            slot_of.get(&entry),
            Some(&hash_slot(e.id.as_bytes())),
            "{entry}"
        );
        assert!(
            slot_of.keys().all(|k| k.starts_with("cd|")),
            "every key starts with cd|"
        );
    }
    // The partitions are sixteenths of the slot space: 24 devices use several of them.
    let partitions: std::collections::BTreeSet<u16> = events
        .iter()
        .map(|e| slot(&format!("evt:{}", e.id)) / 1024)
        .collect();
    assert!(partitions.len() > 3, "{partitions:?}");
    store.scrub().unwrap();
    assert!(
        keys_and_slots(&cluster).is_empty(),
        "the scrub leaves nothing"
    );
}

#[test]
fn edgex3_on_a_cluster_finds_a_reading_of_another_partitions_device() {
    let (target, cluster) = cluster_edgex3();
    let mut store = target.open_event_store().unwrap_or_else(|e| panic!("{e}"));
    store.scrub().unwrap();
    let (a, b) = devices_in_two_partitions();
    let e = testing::event(
        &a,
        5_000,
        vec![reading(&a, "temp", 5_000), reading(&b, "temp", 5_000)],
    );
    store.add_event(&e).unwrap();
    let of_b = store.readings(Filter::device(&b), Page::ALL).unwrap();
    assert_eq!(
        of_b.iter().map(|r| &r.id).collect::<Vec<_>>(),
        vec![&e.readings[1].id]
    );
    assert_eq!(store.reading_count(Filter::device(&b)).unwrap(), 1);
    assert_eq!(store.reading_count(Filter::device(&a)).unwrap(), 1);
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 2);
    let both = Filter {
        device: Some(&b),
        resource: Some("temp"),
        range: None,
    };
    assert_eq!(store.reading_count(both).unwrap(), 1);
    store.delete_event_by_id(&e.id).unwrap();
    assert_eq!(store.reading_count(Filter::device(&b)).unwrap(), 0);
    assert_eq!(store.reading_count(both).unwrap(), 0);
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 0);
    assert!(
        keys_and_slots(&cluster).is_empty(),
        "nothing is left behind"
    );
}

#[test]
fn edgex3_on_a_cluster_takes_an_id_whose_directory_entry_names_no_event() {
    let (target, cluster) = cluster_edgex3();
    let mut store = target.open_event_store().unwrap_or_else(|e| panic!("{e}"));
    store.scrub().unwrap();
    let e = testing::event("device-x", 7_000, vec![reading("device-x", "temp", 7_000)]);
    // What an add leaves when it claimed the id and then lost its connection before EXEC.
    let mut any = edgebench::transport::cluster::ClusterConnection::connect(
        cluster.seeds(),
        Duration::from_secs(2),
    )
    .unwrap();
    redis::cmd("SET")
        .arg(format!("cd|dir:{{{}}}", e.id))
        .arg(9)
        .query::<()>(&mut any)
        .unwrap();
    assert!(matches!(
        store.event_by_id(&e.id),
        Err(edgebench::store::StoreError::NotFound { .. })
    ));
    store.add_event(&e).unwrap();
    assert_eq!(store.event_by_id(&e.id).unwrap().readings.len(), 1);
    assert!(matches!(
        store.add_event(&e),
        Err(edgebench::store::StoreError::Duplicate { .. })
    ));
    store.delete_event_by_id(&e.id).unwrap();
    assert!(
        keys_and_slots(&cluster).is_empty(),
        "nothing is left behind"
    );
}

fn edgebench(dir: &Path) -> Command {
    let mut cmd = crate::common::edgebench();
    cmd.current_dir(dir);
    cmd
}

#[test]
fn coredata_runs_the_ten_benchmarks_in_edgex3_on_a_spawned_cluster() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let out = edgebench(dir.path())
        .args([
            "coredata",
            "--target",
            "redis-cluster",
            "--cluster-replicas",
            "0",
            "--layout",
            "edgex3",
            "--benchtime",
            "20x",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let md = std::fs::read_to_string(dir.path().join("out/results.md")).unwrap();
    // The first table: one row per benchmark, "—" where EdgeX has no such call.
    let rows: Vec<&str> = md
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Benchmark"))
        .collect();
    assert_eq!(rows.len(), 10, "{md}");
    let measured = rows.iter().filter(|r| !r.ends_with("| — |")).count();
    assert_eq!(
        measured, 8,
        "AddReading and ReadingById have no EdgeX 3 call: {md}"
    );
    assert!(md.contains("RedisCluster"), "{md}");
}

/// `redis-cluster?wait=1` in EdgeX 3.1's layout: each add claims its id (`SET … NX`, a write)
/// and runs its `MULTI … EXEC`, each followed by a WAIT on its own primary; reads wait for
/// nothing.
#[test]
fn edgex3_on_a_cluster_with_wait_waits_after_each_write() {
    use crate::replication::calls;
    common::require_redis_server();
    let mut specs = parse_targets(&["redis-cluster?wait=1".to_string()]).unwrap();
    set_cluster_shape(&mut specs, Some(2), Some(1)).unwrap();
    specs[0].layout = Layout::EdgeX3;
    let target = Target::start(&specs[0]).unwrap_or_else(|e| panic!("{e}"));
    let primaries = target.spawned_cluster().unwrap().seeds();
    let mut store = target.open_event_store().unwrap_or_else(|e| panic!("{e}"));
    store.scrub().unwrap();
    for p in &primaries {
        redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query::<()>(&mut conn(p))
            .unwrap();
    }
    let events: Vec<Event> = (0..10)
        .map(|d| {
            let device = format!("device{d}");
            testing::event(&device, 100 + d, vec![reading(&device, "r", 100 + d)])
        })
        .collect();
    for e in &events {
        store.add_event(e).unwrap();
    }
    for e in &events {
        assert_eq!(store.event_by_id(&e.id).unwrap().id, e.id);
    }
    assert_eq!(store.event_count(Filter::all()).unwrap(), 10);
    let sum = |name: &str| primaries.iter().map(|p| calls(p, name)).sum::<u64>();
    assert_eq!(sum("exec"), 10, "one MULTI … EXEC per event");
    assert_eq!(
        sum("set"),
        10 + 10 * 2,
        "a directory claim and 2 records per event"
    );
    assert_eq!(
        sum("wait"),
        10 + 10,
        "a WAIT after each claim and each EXEC"
    );
}
