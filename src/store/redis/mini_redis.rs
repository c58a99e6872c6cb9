//! The `mini-redis` crate's server (tokio's teaching Redis) as a target: on a free 127.0.0.1
//! port, on its own thread and single-threaded runtime; stopped (shutdown signal, thread
//! joined) when dropped. It answers GET, SET, PUBLISH and SUBSCRIBE only, so it serves
//! `edgebench kv` loads of those commands and nothing else.

use std::io;

/// The commands the `mini-redis` crate's server answers (`mini_redis::cmd::Command`).
pub const COMMANDS: [&str; 3] = ["GET", "SET", "PUBLISH"];

/// mini-redis's own connection limit (`MAX_CONNECTIONS` in its `server.rs`): more would wait
/// forever for a permit.
pub const MAX_CONNECTIONS: u64 = 250;

/// Why a workload other than a GET/SET load cannot run on it.
pub const ONLY_GET_SET: &str = "the mini-redis server knows only GET, SET, PUBLISH and \
     SUBSCRIBE: use it with edgebench kv, or use another target";

/// A running mini-redis server.
#[derive(Debug)]
pub struct MiniRedis {
    port: u16,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MiniRedis {
    /// Binds a free port on 127.0.0.1 and serves on it.
    pub fn start() -> io::Result<MiniRedis> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mini-redis".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                        let _ = mini_redis::server::run(listener, rx).await;
                    }
                });
            })?;
        Ok(MiniRedis {
            port,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for MiniRedis {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
