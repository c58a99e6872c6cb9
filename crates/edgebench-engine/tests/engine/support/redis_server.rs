//! A private `redis-server` for differential tests: the real thing the engine must agree with.
//!
//! It listens on a Unix socket in a temporary directory of its own (no port to race another
//! test for), with persistence off and `bind 127.0.0.1`, and is killed, and its directory
//! removed, when the guard drops. [`RedisServer::spawn_with`] adds configuration after those
//! defaults (a later directive wins), e.g. its own `--dir` and `--appendonly yes` for the
//! persistence tests. The binary is `redis-server` from `PATH`, or `EDGEBENCH_REDIS_SERVER` (a path or a
//! program name), as for edgebench's own tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use edgebench_engine::server::Address;
use tempfile::TempDir;

/// The variable naming the binary to run instead of `redis-server`.
const REDIS_SERVER_ENV: &str = "EDGEBENCH_REDIS_SERVER";
/// How long the server gets to answer PING; a loaded CI machine may need a few seconds.
const START_TIMEOUT: Duration = Duration::from_secs(5);
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// A running `redis-server`; dropping it kills the server.
pub struct RedisServer {
    child: Child,
    socket: PathBuf,
    dir: TempDir,
    /// Where it keeps its files (`--dir`): its own temp dir unless given one.
    data_dir: PathBuf,
}

impl RedisServer {
    /// Starts a server and waits until it answers PING.
    ///
    /// # Panics
    /// When the server cannot be started or does not answer: these tests fail, not skip,
    /// without a redis-server.
    pub fn spawn() -> RedisServer {
        RedisServer::spawn_with(&[])
    }

    /// Starts a server with `extra` arguments after the defaults (`--dir /x`,
    /// `--appendonly yes`, ...), and waits until it answers PING, which it does once it has
    /// loaded its files.
    ///
    /// # Panics
    /// As [`RedisServer::spawn`], and when it exits instead (a file it refused to load).
    pub fn spawn_with(extra: &[&str]) -> RedisServer {
        let binary = std::env::var(REDIS_SERVER_ENV)
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| "redis-server".to_string());
        // sun_path holds 108 bytes: /tmp keeps the path short whatever $TMPDIR is.
        let dir = tempfile::Builder::new()
            .prefix("edgebench-engine-redis-")
            .tempdir_in("/tmp")
            .expect("a temporary directory in /tmp");
        let socket = dir.path().join("redis.sock");
        let child = Command::new(&binary)
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--unixsocketperm", "700"])
            // `bind 127.0.0.1`, as edgebench's spawned servers have it and as the engine
            // reports by default: CONFIG GET compares the two.
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(dir.path().join("redis.log"))
            .args(["--daemonize", "no"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {binary}: {e} (install redis-server, e.g. apt-get install \
                     redis-server, or set {REDIS_SERVER_ENV} to its path; these tests fail \
                     rather than skip without it)"
                )
            });
        let data_dir = extra
            .iter()
            .rposition(|a| *a == "--dir")
            .and_then(|i| extra.get(i + 1))
            .map_or_else(|| dir.path().to_path_buf(), PathBuf::from);
        let mut server = RedisServer {
            child,
            socket,
            dir,
            data_dir,
        };
        server.wait_ready();
        server
    }

    /// Where the server listens.
    pub fn address(&self) -> Address {
        Address::Unix(self.socket.clone())
    }

    /// Where the server keeps its RDB file and append-only directory (`--dir`).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// A new redis-rs connection to the server.
    pub fn connect(&self) -> redis::Connection {
        super::connect(&self.address(), Duration::from_secs(5)).unwrap_or_else(|e| {
            panic!(
                "cannot connect to redis-server at {}: {e}",
                self.socket.display()
            )
        })
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "redis-server exited with {status} before answering; its log: {}",
                    self.log()
                );
            }
            let pong = super::connect(&self.address(), POLL_INTERVAL * 10)
                .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
            if matches!(pong.as_deref(), Ok("PONG")) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING on {} within {START_TIMEOUT:?}; its log: {}",
                self.socket.display(),
                self.log()
            );
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log"))
            .unwrap_or_else(|_| "(nothing logged)".to_string())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // Scratch data only: no need for a clean shutdown.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
