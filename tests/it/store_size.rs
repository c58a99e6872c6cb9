//! `coredata`'s store growth per op (`store_bytes_per_op`): an AddReading run reports, for the
//! in-process engine and for a spawned redis-server, at least the bytes the data itself holds
//! per reading, computed here from the same readings stored in an engine of our own. This is
//! the store's figure end to end (the binary's counting allocator behind the engine's INFO
//! `used_memory`, redis-server's allocator), not a timing.

use edgebench::engine::{Engine, EngineConnection};
use edgebench::store::redis::RedisStore;
use edgebench::store::CoreData;
use edgebench::v2018::Reading;
use redis::ConnectionLike;

/// Iterations of the measured round.
const N: u64 = 2000;

/// The bytes of every key name, string value and sorted-set member in database 0 (scores and
/// every structure around them left out): what any store of this data holds at least.
fn data_bytes(conn: &mut impl ConnectionLike) -> u64 {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(conn).unwrap();
    let mut total = 0;
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(&key).query(conn).unwrap();
        let value: u64 = match kind.as_str() {
            "string" => redis::cmd("STRLEN").arg(&key).query(conn).unwrap(),
            "zset" => {
                let members: Vec<Vec<u8>> = redis::cmd("ZRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .query(conn)
                    .unwrap();
                members.iter().map(|m| m.len() as u64).sum()
            }
            other => panic!("unexpected {other} key {}", String::from_utf8_lossy(&key)),
        };
        total += key.len() as u64 + value;
    }
    total
}

/// The readings `AddReading`'s iteration `i` adds: `test`+i of `device`+(i/100).
fn add(store: &mut impl CoreData, i: u64) {
    let mut r = Reading {
        name: format!("test{i}"),
        device: format!("device{}", i / 100),
        ..Reading::default()
    };
    store.add_reading(&mut r).unwrap();
}

/// The data's growth per reading over the measured round, as `--benchtime Nx` runs it: a
/// first round of one reading, then the measured round of `N` (whose `i` restarts at 0).
fn data_bytes_per_reading() -> f64 {
    let mut store = RedisStore::new(EngineConnection::new(Engine::new()));
    add(&mut store, 0);
    let mut conn = store.into_inner();
    let before = data_bytes(&mut conn);
    let mut store = RedisStore::new(conn);
    for i in 0..N {
        add(&mut store, i);
    }
    let after = data_bytes(&mut store.into_inner());
    (after - before) as f64 / N as f64
}

#[test]
fn add_reading_reports_at_least_the_data_it_stores_per_reading() {
    let floor = data_bytes_per_reading();
    // A reading's msgpack record, its id as a key and in four indexes: well over 100 bytes.
    assert!(floor > 100.0, "{floor}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run = crate::common::edgebench()
        .args([
            "coredata",
            "--target",
            "embedded-direct,redis-uds",
            "--bench",
            "AddReading",
            "--benchtime",
            &format!("{N}x"),
            "--count",
            "1",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut growth = Vec::new();
    for t in json["targets"].as_array().unwrap() {
        let m = &t["benchmarks"][0]["runs"][0];
        assert_eq!(m["n"], N, "{t}");
        let bytes = m["store_bytes_per_op"]
            .as_f64()
            .unwrap_or_else(|| panic!("no store_bytes_per_op: {t}"));
        // Every byte of the data is held somewhere; the store's own structures come on top.
        // A figure over 16 times the data would be a unit or a bracketing error (the whole
        // store, or two rounds, divided by N), not a store's overhead.
        assert!(
            bytes >= floor && bytes < 16.0 * floor,
            "{}: {bytes} store B/op, data {floor} B per reading",
            t["name"]
        );
        growth.push((t["name"].as_str().unwrap().to_string(), bytes));
    }
    let names: Vec<&str> = growth.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Embedded_Direct", "RedisDB_UDS"]);

    // The same figures in the table on stdout, the Go text, and the CSV's last column.
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.contains("| Benchmark | Embedded_Direct (store B/op) | RedisDB_UDS (store B/op) |"),
        "{stdout}"
    );
    let go = std::fs::read_to_string(out.join("bench.txt")).unwrap();
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let csv_growth: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|row| row.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    for ((name, bytes), from_csv) in growth.iter().zip(csv_growth) {
        assert!(
            (bytes - from_csv).abs() < 0.001,
            "{name}: {bytes} vs {from_csv}"
        );
        let line = go
            .lines()
            .find(|l| l.starts_with(&format!("Benchmark{name}/AddReading")))
            .unwrap_or_else(|| panic!("{go}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        let at = fields.iter().position(|&f| f == "store-B/op").unwrap();
        let printed: f64 = fields[at - 1].parse().unwrap();
        assert!((bytes - printed).abs() <= 0.5, "{line}");
        // Go's place for a custom metric: after ns/op, before B/op.
        assert_eq!(fields[at - 2], "ns/op", "{line}");
        assert_eq!(fields[at + 2], "B/op", "{line}");
    }
}
