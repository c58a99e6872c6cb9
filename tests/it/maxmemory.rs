//! `maxmemory` on `edgebench serve` and redis-server side by side, byte for byte: over the
//! limit, a key goes by the policy before the next command runs (and a client tracking it
//! is told before that command's reply, as Redis's own tracking test checks), and under
//! `noeviction` commands that may grow memory get Redis's OOM error while reads still run.
//! Only the served engine evicts: it measures the heap through edgebench's allocator.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{child, edgebench, require_redis_server};

fn start(redis: bool, sock: &Path) -> Child {
    let mut cmd = if redis {
        let mut c = child("redis-server");
        c.args([
            "--port",
            "0",
            "--save",
            "",
            "--appendonly",
            "no",
            "--unixsocket",
        ])
        .arg(sock);
        c
    } else {
        let mut c = edgebench();
        c.args(["serve", "--port", "0", "--unixsocket"]).arg(sock);
        c
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd.spawn().unwrap()
}

/// A raw connection that asserts exact reply bytes.
struct Raw(UnixStream);

impl Raw {
    fn connect(sock: &Path) -> Raw {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(s) = UnixStream::connect(sock) {
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                return Raw(s);
            }
            assert!(Instant::now() < deadline, "no server on {}", sock.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, args: &[&str]) {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.0.write_all(out.as_bytes()).unwrap();
    }

    fn expect(&mut self, want: &str) {
        let mut got = vec![0u8; want.len()];
        self.0.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), want);
    }

    fn check(&mut self, args: &[&str], want: &str) {
        self.send(args);
        self.expect(want);
    }

    /// Reads until the bytes end with `suffix`.
    fn read_through(&mut self, suffix: &str) -> String {
        let mut got = Vec::new();
        while !got.ends_with(suffix.as_bytes()) {
            let mut b = [0u8; 1];
            self.0.read_exact(&mut b).unwrap();
            got.push(b[0]);
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    /// INFO's `used_memory` (RESP3: a verbatim string).
    fn used_memory(&mut self) -> u64 {
        self.send(&["INFO", "memory"]);
        let head = self.read_through("\r\n");
        let len: usize = head[1..head.len() - 2].parse().unwrap();
        let mut body = vec![0u8; len + 2];
        self.0.read_exact(&mut body).unwrap();
        let text = String::from_utf8_lossy(&body);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .unwrap_or_else(|| panic!("no used_memory in {text}"));
        line.trim().parse().unwrap()
    }
}

fn scenario(redis: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("s.sock");
    let mut server = start(redis, &sock);
    let mut c = Raw::connect(&sock);
    c.send(&["HELLO", "3"]);
    c.read_through("modules\r\n*0\r\n");
    // What a fresh redis-server allocates on first use (the expires table, the tracking
    // table) is allocated before the heap is measured.
    c.check(&["SETEX", "warm", "10000", "x"], "+OK\r\n");
    c.check(&["PERSIST", "warm"], ":1\r\n");
    c.check(&["CLIENT", "TRACKING", "on"], "+OK\r\n");
    c.check(&["GET", "warm"], "$1\r\nx\r\n");
    let limit = c.used_memory() + 100 * 1024;
    c.check(
        &["CONFIG", "SET", "maxmemory", &limit.to_string()],
        "+OK\r\n",
    );
    c.check(
        &["CONFIG", "SET", "maxmemory-policy", "volatile-random"],
        "+OK\r\n",
    );
    c.check(&["SETEX", "volatile-key", "10000", "x"], "+OK\r\n");
    c.check(&["SET", "kept", "y"], "+OK\r\n");
    c.check(&["GET", "volatile-key"], "$1\r\nx\r\n");
    // About 200 kB: over the limit after this command. The volatile key goes before the
    // next command runs (redis-server may count a buffer of its own and go one command
    // sooner); its invalidation comes before that command's reply, never inside one.
    c.send(&["SETBIT", "big-key", "1600000", "0"]);
    c.send(&["GETBIT", "big-key", "0"]);
    let push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$12\r\nvolatile-key\r\n";
    let mut got = vec![0u8; push.len() + 8];
    c.0.read_exact(&mut got).unwrap();
    let got = String::from_utf8_lossy(&got).into_owned();
    let at_getbit = format!(":0\r\n{push}:0\r\n");
    let at_setbit = format!("{push}:0\r\n:0\r\n");
    assert!(
        got == at_getbit || (redis && got == at_setbit),
        "redis={redis}: {got:?}"
    );
    c.check(&["EXISTS", "volatile-key", "kept"], ":1\r\n");
    // Nothing left that volatile-random may take, and noeviction takes nothing: writes
    // that may grow memory are refused, reads and deletions run.
    for policy in ["volatile-random", "noeviction"] {
        c.check(&["CONFIG", "SET", "maxmemory-policy", policy], "+OK\r\n");
        c.check(
            &["SET", "more", "z"],
            "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
        );
        c.check(&["GET", "kept"], "$1\r\ny\r\n");
    }
    c.check(&["CONFIG", "SET", "maxmemory", "0"], "+OK\r\n");
    c.check(&["SET", "more", "z"], "+OK\r\n");
    c.send(&["INFO", "stats"]);
    let head = c.read_through("\r\n");
    let len: usize = head[1..head.len() - 2].parse().unwrap();
    let mut body = vec![0u8; len + 2];
    c.0.read_exact(&mut body).unwrap();
    assert!(
        String::from_utf8_lossy(&body).contains("evicted_keys:1\r\n"),
        "redis={redis}: one key evicted"
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn over_maxmemory_keys_go_by_policy_before_the_command_and_noeviction_refuses_writes() {
    require_redis_server();
    scenario(true);
    scenario(false);
}
