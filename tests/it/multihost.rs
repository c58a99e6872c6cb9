//! Several load hosts, one result, over a real network: three network namespaces of this
//! test's own, each a load host running the built `edgebench kv` (`ip netns exec`), reach a
//! private redis-server in a fourth namespace over veth pairs and a bridge; the hosts share a
//! `--run-id` and a `--start-at`; `edgebench report merge` makes one result of theirs.
//!
//! Namespaces need root and iproute2: where they cannot be made, the test says so in one
//! line and returns. They are named after this process's id and deleted by a guard, on panic
//! too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;

use crate::common;

const HOSTS: usize = 3;
const SERVER_IP: &str = "10.99.0.1";
const PORT: &str = "6390";

/// The namespaces made so far; deleted on drop.
struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    fn add(&mut self, name: &str) -> Result<(), String> {
        ip(&["netns", "add", name])?;
        self.names.push(name.to_string());
        ip(&["netns", "exec", name, "ip", "link", "set", "lo", "up"])
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in self.names.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// A child process killed on drop (the redis-server).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `ip ARGS`; its stderr's first line on failure.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ))
    }
}

/// The server namespace with a bridge at [`SERVER_IP`], and `HOSTS` host namespaces each
/// linked to it by a veth pair (host i at 10.99.0.(10+i)).
fn network(ns: &mut Namespaces, server: &str, hosts: &[String]) -> Result<(), String> {
    ns.add(server)?;
    let in_server = |args: &[&str]| {
        let mut all = vec!["netns", "exec", server, "ip"];
        all.extend_from_slice(args);
        ip(&all)
    };
    in_server(&["link", "add", "br0", "type", "bridge"])?;
    in_server(&["addr", "add", &format!("{SERVER_IP}/24"), "dev", "br0"])?;
    in_server(&["link", "set", "br0", "up"])?;
    for (i, host) in hosts.iter().enumerate() {
        ns.add(host)?;
        let peer = format!("p{i}");
        ip(&[
            "link", "add", "eth0", "netns", host, "type", "veth", "peer", "name", &peer, "netns",
            server,
        ])?;
        in_server(&["link", "set", &peer, "master", "br0"])?;
        in_server(&["link", "set", &peer, "up"])?;
        let addr = format!("10.99.0.{}/24", 10 + i);
        ip(&[
            "netns", "exec", host, "ip", "addr", "add", &addr, "dev", "eth0",
        ])?;
        ip(&["netns", "exec", host, "ip", "link", "set", "eth0", "up"])?;
    }
    Ok(())
}

/// A histogram as results.json keeps it.
fn decode(b64: &str) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .expect("a V2 histogram")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read JSON")).expect("JSON")
}

/// Waits until the redis-server in `server` answers PING from host `host`.
fn wait_for_redis(host: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                host,
                "redis-cli",
                "-h",
                SERVER_IP,
                "-p",
                PORT,
                "ping",
            ])
            .output()
            .expect("run redis-cli");
        if String::from_utf8_lossy(&out.stdout).trim() == "PONG" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "redis-server never answered in its namespace"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn load_hosts_in_network_namespaces_merge_into_one_exact_result() {
    common::require_redis_server();
    let pid = std::process::id();
    let server = format!("ebm{pid}s");
    let hosts: Vec<String> = (0..HOSTS).map(|i| format!("ebm{pid}h{i}")).collect();
    let mut ns = Namespaces { names: Vec::new() };
    if let Err(e) = network(&mut ns, &server, &hosts) {
        println!("skipped: cannot make network namespaces here ({e}); run as root with iproute2");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _redis = Killed(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &server,
                "redis-server",
                "--bind",
                SERVER_IP,
            ])
            .args(["--port", PORT, "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "no"])
            .arg("--dir")
            .arg(tmp.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("start redis-server in its namespace"),
    );
    wait_for_redis(&hosts[0]);

    let start = chrono::Utc::now() + chrono::Duration::seconds(3);
    let start_at = start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let docs: Vec<PathBuf> = (0..HOSTS)
        .map(|i| tmp.path().join(format!("host{i}.json")))
        .collect();
    let children: Vec<Child> = hosts
        .iter()
        .zip(&docs)
        .map(|(host, doc)| {
            let dir = tmp.path().join(host);
            std::fs::create_dir_all(&dir).unwrap();
            Command::new("ip")
                .args(["netns", "exec", host])
                .arg(cargo_bin("edgebench"))
                .args([
                    "kv", "-s", SERVER_IP, "-p", PORT, "-t", "1", "-c", "2", "-n", "400",
                ])
                .args([
                    "--ratio",
                    "1:1",
                    "--key-maximum",
                    "1000",
                    "--hide-histogram",
                ])
                .args(["--run-id", "netns-test", "--start-at", &start_at])
                .arg("--json-out-file")
                .arg(doc)
                .current_dir(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start edgebench kv in its namespace")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a load host failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let merged_dir = tmp.path().join("merged");
    let out = crate::common::edgebench()
        .args(["report", "merge"])
        .args(&docs)
        .arg("--out")
        .arg(&merged_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = json(&merged_dir.join("results.json"));
    let total = &merged[&format!("MERGED RESULTS ({HOSTS} HOSTS)")];
    assert_eq!(merged["run information"]["Run id"], "netns-test");

    // Counts: each host sent exactly 1 thread × 2 connections × 400 requests.
    let start_ms = start.timestamp_millis() as u64;
    let mut all = edgebench::runner::stats::latency_histogram();
    let mut sum = 0;
    let mut rates = 0.0;
    for doc in &docs {
        let host = json(doc);
        assert_eq!(host["run information"]["Run id"], "netns-test");
        let stats = &host["ALL STATS"];
        // The barrier held: no host's measured load began before --start-at.
        assert!(stats["Runtime"]["Start time"].as_u64().unwrap() >= start_ms);
        let count = stats["Totals"]["Count"].as_u64().unwrap();
        assert_eq!(count, 800);
        sum += count;
        rates += stats["Totals"]["Ops/sec"].as_f64().unwrap();
        for row in stats["Exact Figures"]["Rows"].as_array().unwrap() {
            // Every value the host recorded, recorded again into one histogram.
            for v in decode(row["Latency Histogram ns"].as_str().unwrap()).iter_recorded() {
                all.record_n(v.value_iterated_to(), v.count_at_value())
                    .unwrap();
            }
        }
    }
    assert_eq!(total["Totals"]["Count"].as_u64(), Some(sum));
    assert_eq!(
        total["Sets"]["Count"].as_u64().unwrap() + total["Gets"]["Count"].as_u64().unwrap(),
        sum
    );
    // Throughputs add (memtier's Ops/sec rounds to 2 decimals per host).
    let merged_rate = total["Totals"]["Ops/sec"].as_f64().unwrap();
    assert!(
        (merged_rate - rates).abs() <= 0.01 * HOSTS as f64,
        "{merged_rate} vs {rates}"
    );
    // Percentiles: those of the one histogram of every host's values, exactly.
    let mut merged_hist = edgebench::runner::stats::latency_histogram();
    for row in total["Exact Figures"]["Rows"].as_array().unwrap() {
        merged_hist
            .add(decode(row["Latency Histogram ns"].as_str().unwrap()))
            .unwrap();
    }
    assert_eq!(merged_hist.len(), sum);
    // Every request is in one second of the merged series.
    let per_second: u64 = total["Totals"]["Time-Serie"]
        .as_object()
        .unwrap()
        .values()
        .map(|s| s["Count"].as_u64().unwrap())
        .sum();
    assert_eq!(per_second, sum);
    for (key, q) in [("p50.00", 0.5), ("p99.00", 0.99), ("p99.90", 0.999)] {
        assert_eq!(
            merged_hist.value_at_quantile(q),
            all.value_at_quantile(q),
            "{key}"
        );
        let shown = total["Totals"]["Percentile Latencies"][key]
            .as_f64()
            .unwrap();
        let expected = all.value_at_quantile(q) as f64 / 1e6;
        assert_eq!(format!("{shown:.3}"), format!("{expected:.3}"), "{key}");
    }
    // Each host's own section is kept beside the total.
    for (i, doc) in docs.iter().enumerate() {
        let host = &merged[&format!("HOST host{i}.json RESULTS")];
        assert_eq!(
            host["Totals"]["Count"],
            json(doc)["ALL STATS"]["Totals"]["Count"]
        );
    }
    let md = std::fs::read_to_string(merged_dir.join("results.md")).unwrap();
    assert!(md.contains("| **Total** | 2400 |"), "{md}");

    // Another run's result is refused in one line, unless --force.
    let mut odd = json(&docs[2]);
    odd["run information"]["Run id"] = Value::from("other-run");
    let odd_path = tmp.path().join("odd.json");
    std::fs::write(&odd_path, serde_json::to_vec(&odd).unwrap()).unwrap();
    let refused = crate::common::edgebench()
        .args(["report", "merge"])
        .arg(&docs[0])
        .arg(&odd_path)
        .arg("--out")
        .arg(tmp.path().join("refused"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("\"other-run\"") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(!tmp.path().join("refused").exists());
}

use crate::common::edgebench_ok;

#[test]
fn coredata_and_fleet_hosts_merge_into_results_every_exporter_and_report_html_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Two coredata hosts (each its own in-process engine), one run id, one barrier.
    let start = (chrono::Utc::now() + chrono::Duration::seconds(2))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let hosts: Vec<Child> = ["a", "b"]
        .iter()
        .map(|h| {
            crate::common::edgebench()
                .args([
                    "coredata",
                    "--target",
                    "embedded",
                    "--bench",
                    "AddReading|EventCount",
                ])
                .args(["--benchtime", "300x", "--count", "2", "--run-id", "cd"])
                .args(["--start-at", &start, "--out", &format!("cd-{h}")])
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut h in hosts {
        assert!(h.wait().unwrap().success());
    }
    edgebench_ok(
        dir,
        &["report", "merge", "cd-a", "cd-b", "--out", "cd-merged"],
    );
    let merged: edgebench::results::RunResults =
        serde_json::from_value(json(&dir.join("cd-merged/results.json"))).unwrap();
    assert_eq!(merged.meta.run_id.as_deref(), Some("cd"));
    assert_eq!(merged.meta.hosts, ["cd-a", "cd-b"]);
    let columns: Vec<String> = merged.targets.iter().map(|t| t.column()).collect();
    assert_eq!(
        columns,
        [
            "RedisDB_Embedded",
            "RedisDB_Embedded@cd-a",
            "RedisDB_Embedded@cd-b"
        ]
    );
    for bench in ["AddReading", "EventCount"] {
        let total = merged.targets[0].bench(bench).unwrap();
        assert_eq!(total.runs.len(), 2);
        for (k, m) in total.runs.iter().enumerate() {
            let mut all = edgebench::runner::stats::latency_histogram();
            let mut ops_per_sec = 0.0;
            for host in &merged.targets[1..] {
                let h = &host.bench(bench).unwrap().runs[k];
                ops_per_sec += h.ops_per_sec();
                all.add(decode(&h.histogram)).unwrap();
            }
            assert_eq!(m.n, 600, "{bench}");
            assert!((m.ops_per_sec() - ops_per_sec).abs() < 1e-6 * ops_per_sec);
            assert_eq!(
                [m.p50_ns, m.p90_ns, m.p99_ns, m.p999_ns, m.max_ns],
                [
                    all.value_at_quantile(0.5),
                    all.value_at_quantile(0.9),
                    all.value_at_quantile(0.99),
                    all.value_at_quantile(0.999),
                    all.max()
                ],
                "{bench}"
            );
        }
    }
    let md = std::fs::read_to_string(dir.join("cd-merged/results.md")).unwrap();
    assert!(md.contains("| RedisDB_Embedded@cd-a "), "{md}");
    let bench_txt = std::fs::read_to_string(dir.join("cd-merged/bench.txt")).unwrap();
    assert_eq!(
        bench_txt
            .matches("BenchmarkRedisDB_Embedded@cd-b/AddReading")
            .count(),
        2
    );
    edgebench_ok(dir, &["report", "html", "cd-merged"]);

    // Two fleet hosts, each its own engine; then a fleet and a coredata result do not mix.
    for h in ["a", "b"] {
        edgebench_ok(
            dir,
            &[
                "fleet",
                "--devices",
                "5",
                "--events-per-second",
                "50",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--run-id",
                "fl",
                "--out",
                &format!("fl-{h}"),
            ],
        );
    }
    edgebench_ok(
        dir,
        &["report", "merge", "fl-a", "fl-b", "--out", "fl-merged"],
    );
    let fleet = json(&dir.join("fl-merged/fleet.json"));
    assert_eq!(fleet["hosts"], serde_json::json!(["fl-a", "fl-b"]));
    let sent = |i: usize| fleet["targets"][i]["summary"]["sent"].as_u64().unwrap();
    let unsent = |i: usize| fleet["targets"][i]["summary"]["unsent"].as_u64().unwrap();
    assert_eq!(fleet["targets"][0]["name"], "RedisDB_Embedded_EdgeX3");
    assert_eq!(sent(0), sent(1) + sent(2));
    assert_eq!(unsent(0), unsent(1) + unsent(2));
    // Every event due in the two hosts' runs is accounted for: sent, or (a writer that a
    // loaded machine held past the lateness allowance at the end) reported as unsent.
    assert_eq!(sent(0) + unsent(0), 100);
    edgebench_ok(dir, &["report", "html", "fl-merged"]);
    let mixed = crate::common::edgebench()
        .args(["report", "merge", "fl-a", "cd-a"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(mixed.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        stderr.contains("fl-a is fleet results but cd-a is coredata"),
        "{stderr}"
    );
}
