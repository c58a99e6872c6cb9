//! `edgebench kv --rate` against a server that stalls: its terminal table (memtier's ALL
//! STATS) must lead with the coordinated-omission-corrected latency, which charges the stall
//! to every request that should have gone out during it, and show the latency from the
//! actual send beside it. A private redis-server is stalled for 0.5 s by `DEBUG SLEEP 0.5`
//! from a second connection in the middle of a 5 s run at 2,000 requests/s.

use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A redis-server on a free 127.0.0.1 port with DEBUG allowed from local connections (Redis
/// 7 refuses DEBUG by default, and edgebench's own spawner does not enable it), killed on
/// drop.
struct DebuggableRedis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl DebuggableRedis {
    fn start() -> DebuggableRedis {
        let binary =
            std::env::var("EDGEBENCH_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = tempfile::tempdir().unwrap();
        let child = crate::common::child(&binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {binary}: {e} (install redis-server or set \
                     EDGEBENCH_REDIS_SERVER; this test fails rather than skips without it)"
                )
            });
        let server = DebuggableRedis {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.connection().is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server on {port} never answered"
            );
            sleep(Duration::from_millis(20));
        }
        server
    }

    fn connection(&self) -> redis::RedisResult<redis::Connection> {
        let mut c =
            redis::Client::open(format!("redis://127.0.0.1:{}", self.port))?.get_connection()?;
        redis::cmd("PING").query::<String>(&mut c)?;
        Ok(c)
    }
}

impl Drop for DebuggableRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Totals row of an ALL STATS table, by column name: the header's names are separated
/// by two or more spaces, the row's values by whitespace.
fn totals(stdout: &str) -> Vec<(String, f64)> {
    let header = stdout
        .lines()
        .find(|l| l.starts_with("Type "))
        .unwrap_or_else(|| panic!("no header in:\n{stdout}"));
    let names = header
        .split("  ")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("Totals"))
        .unwrap_or_else(|| panic!("no Totals row in:\n{stdout}"));
    let values = row
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(f64::NAN));
    names.zip(values).collect()
}

#[test]
fn a_stalled_server_shows_in_the_open_loop_table() {
    let server = DebuggableRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let child = crate::common::edgebench()
        .current_dir(dir.path())
        .args(["kv", "-s", "127.0.0.1", "-p", &server.port.to_string()])
        .args(["--rate", "2000", "--test-time", "5", "-c", "2", "-t", "1"])
        .args(["--ratio", "1:1", "--key-maximum", "100", "--hide-histogram"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run edgebench");
    // Mid-run, stall the server for half a second from a second connection.
    sleep(Duration::from_secs(2));
    let mut admin = server.connection().expect("a second connection");
    let stalled = Instant::now();
    redis::cmd("DEBUG")
        .arg("SLEEP")
        .arg("0.5")
        .query::<()>(&mut admin)
        .expect("DEBUG SLEEP 0.5");
    assert!(stalled.elapsed() >= Duration::from_millis(450));
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let t = totals(&stdout);
    let col = |name: &str| {
        t.iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} column in:\n{stdout}"))
            .1
    };
    // 2,000 requests/s over 5 s: the stall held back ~1,000 of ~10,000 requests by up to
    // 500 ms each, so the corrected p99 (memtier's column name) lands in the stall...
    let p99 = col("p99 Latency");
    assert!(p99 >= 400.0, "corrected p99 {p99} ms\n{stdout}");
    assert!(col("p99.9 Latency") >= p99, "{stdout}");
    // ...while from the actual send only the few requests in flight at its start waited.
    let from_send = col("p99 from send");
    assert!(from_send < 100.0, "p99 from send {from_send} ms\n{stdout}");
    assert!(col("Avg. Latency") > col("Avg. from send"), "{stdout}");
    // The line under the table says which is which.
    assert!(
        stderr.contains("coordinated omission corrected"),
        "{stderr}"
    );
    eprintln!(
        "corrected p99 {p99} ms, avg {} ms; from send p99 {from_send} ms, avg {} ms",
        col("Avg. Latency"),
        col("Avg. from send")
    );
}
