//! YCSB's Redis layouts as the stores write them, read back with raw commands: YCSB's Jedis
//! binding (a hash per key, every key in `_indices` scored by Java's `String.hashCode()`) and
//! go-ycsb's (`usertable/<key>` hashes, no index), on a spawned redis-server, the engine
//! through redis-rs, the engine's typed API and a Redis Cluster.

use edgebench::store::ycsb::{java_string_hash, Binding, Record, Records, Setup};
use edgebench::target::Target;

use crate::common::{require_redis_server, start};

fn setup(binding: Binding) -> Setup {
    Setup {
        binding,
        table: "usertable".to_string(),
        fields: (0..3).map(|i| format!("field{i}")).collect(),
    }
}

fn values(tag: &str) -> Vec<(String, Vec<u8>)> {
    (0..3)
        .map(|i| (format!("field{i}"), format!("{tag}-{i}").into_bytes()))
        .collect()
}

/// Inserts three records through the binding, then checks what the server holds.
fn stored_as_the_binding_stores_them(target: &Target, binding: Binding) {
    let opener = target.ycsb_opener(&setup(binding)).unwrap();
    let mut store = opener().unwrap();
    for key in ["user1", "user2", "user30"] {
        store.insert(key, &values(key)).unwrap();
    }
    store
        .update("user2", &[("field1".to_string(), b"changed".to_vec())])
        .unwrap();
    let mut raw = (target.connector().unwrap())().unwrap();
    let stored = |key: &str| match binding {
        Binding::GoYcsb => format!("usertable/{key}"),
        _ => key.to_string(),
    };
    let mut hash: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg(stored("user2"))
        .query(&mut *raw)
        .unwrap();
    hash.sort();
    assert_eq!(
        hash,
        vec![
            ("field0".to_string(), "user2-0".to_string()),
            ("field1".to_string(), "changed".to_string()),
            ("field2".to_string(), "user2-2".to_string()),
        ]
    );
    let index: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg("_indices")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut *raw)
        .unwrap();
    match binding {
        Binding::Redis => {
            let mut want: Vec<(String, f64)> = ["user1", "user2", "user30"]
                .iter()
                .map(|k| (k.to_string(), f64::from(java_string_hash(k))))
                .collect();
            want.sort_by(|a, b| a.1.total_cmp(&b.1));
            assert_eq!(index, want);
            assert_eq!(store.count().unwrap(), 3);
            // A scan walks the index by hash from the start key's hash.
            let mut found = Records::default();
            store.scan("user2", 10, None, &mut found).unwrap();
            let keys: Vec<&[u8]> = found.iter().map(|(k, _)| k).collect();
            let from = f64::from(java_string_hash("user2"));
            let want: Vec<&[u8]> = want
                .iter()
                .filter(|(_, s)| *s >= from)
                .map(|(k, _)| k.as_bytes())
                .collect();
            assert_eq!(keys, want);
        }
        _ => {
            assert!(index.is_empty(), "go-ycsb's layout has no index");
            let mut found = Records::default();
            assert!(store.scan("user1", 10, None, &mut found).is_err());
        }
    }
    let mut record = Record::default();
    store
        .read("user30", Some(&["field2".to_string()]), &mut record)
        .unwrap();
    assert_eq!(
        record.to_sorted(),
        vec![("field2".to_string(), b"user30-2".to_vec())]
    );
    store.delete("user1").unwrap();
    assert!(store.read("user1", None, &mut record).is_err());
    let exists: u64 = redis::cmd("EXISTS")
        .arg(stored("user1"))
        .query(&mut *raw)
        .unwrap();
    assert_eq!(exists, 0);
    store.clear().unwrap();
    let left: u64 = redis::cmd("DBSIZE").query(&mut *raw).unwrap();
    assert_eq!(left, 0, "clear leaves nothing of the table");
}

#[test]
fn the_engines_ways_in_store_ycsbs_and_go_ycsbs_layouts() {
    for item in ["embedded", "embedded-direct", "embedded-uds"] {
        for binding in [Binding::Redis, Binding::GoYcsb] {
            let target = start(item);
            stored_as_the_binding_stores_them(&target, binding);
        }
    }
}

#[test]
fn redis_server_stores_ycsbs_and_go_ycsbs_layouts() {
    require_redis_server();
    let target = start("redis-uds");
    for binding in [Binding::Redis, Binding::GoYcsb] {
        stored_as_the_binding_stores_them(&target, binding);
    }
}

#[test]
fn a_redis_cluster_takes_ycsbs_layout() {
    let cluster = crate::common::cluster::SharedCluster::take();
    let target = start(&cluster.item());
    let opener = target.ycsb_opener(&setup(Binding::Redis)).unwrap();
    let mut store = opener().unwrap();
    for i in 0..50 {
        let key = format!("user{i}");
        store.insert(&key, &values(&key)).unwrap();
    }
    assert_eq!(store.count().unwrap(), 50);
    let mut record = Record::default();
    for i in 0..50 {
        store.read(&format!("user{i}"), None, &mut record).unwrap();
        assert_eq!(record.len(), 3);
    }
    let mut found = Records::default();
    store.scan("user0", 1000, None, &mut found).unwrap();
    let from = java_string_hash("user0");
    let want = (0..50)
        .filter(|i| java_string_hash(&format!("user{i}")) >= from)
        .count();
    assert_eq!(found.len(), want);
    // The records spread over the primaries; the index is one key on one of them.
    let mut holding = 0;
    for node in cluster.seeds() {
        let mut conn = edgebench::target::connect(node, std::time::Duration::from_secs(5)).unwrap();
        let keys: u64 = redis::cmd("DBSIZE").query(&mut conn).unwrap();
        holding += usize::from(keys > 0);
    }
    assert!(holding > 1, "records on {holding} primaries");
}

#[test]
fn a_target_without_a_binding_says_so_in_one_line() {
    let target = start("embedded");
    let e = target
        .ycsb_opener(&setup(Binding::Jdbc))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("has no YCSB jdbc binding: drop -db jdbc or choose a target that has it"),
        "{e}"
    );
}
