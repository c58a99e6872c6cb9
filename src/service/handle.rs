//! Listening: binding the TCP and Unix listeners with errors that name the address and the
//! fix, and [`ServiceHandle`], a service running on its own thread and tokio runtime for the
//! benchmark harness and tests, stopped gracefully on [`ServiceHandle::stop`] or drop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use tokio::net::{TcpListener, UnixListener};
use tokio::sync::oneshot;

use super::{serve, ServiceConfig, StoreOpener};

/// Where a service listens: a TCP listener, a Unix socket listener, or both.
#[derive(Debug, Default)]
pub struct Listeners {
    /// `HOST:PORT`.
    pub tcp: Option<TcpListener>,
    /// A socket file.
    pub unix: Option<UnixListener>,
    /// Serve the TCP listener over TLS with this certificate (`--tls-cert-file`).
    pub tls: Option<crate::server::tls::TlsAcceptor>,
}

impl Listeners {
    /// Binds the given addresses (in a tokio runtime). Errors name the address and the fix.
    pub async fn bind(tcp: Option<SocketAddr>, unix: Option<&Path>) -> io::Result<Listeners> {
        if tcp.is_none() && unix.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a core-data service needs somewhere to listen: give a TCP address \
                 (--listen HOST:PORT) or a Unix socket path",
            ));
        }
        let tcp = match tcp {
            Some(addr) => Some(TcpListener::bind(addr).await.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot listen on {addr} (is another core-data service running? use \
                         --listen HOST:PORT): {e}"
                    ),
                )
            })?),
            None => None,
        };
        let unix = match unix {
            Some(path) => Some(bind_unix(path)?),
            None => None,
        };
        Ok(Listeners {
            tcp,
            unix,
            tls: None,
        })
    }
}

/// Binds a Unix socket, replacing a stale socket file (one nothing answers on) as
/// redis-server does; a socket something answers on is an error, and so is any other file.
fn bind_unix(path: &Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::FileTypeExt;
    let is_socket = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket());
    if is_socket {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "cannot listen on unix socket {}: a server already answers there (stop it, \
                     or give another --unixsocket)",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    UnixListener::bind(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot listen on unix socket {} (does its directory exist and is it \
                 writable?): {e}",
                path.display()
            ),
        )
    })
}

/// A running service. Dropping it stops it as [`ServiceHandle::stop`] does.
#[derive(Debug)]
pub struct ServiceHandle {
    tcp_addr: Option<SocketAddr>,
    unix_path: Option<PathBuf>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl ServiceHandle {
    /// Binds the addresses (port 0 picks a free port) and serves on a thread of its own with
    /// a multi-threaded runtime. Returns once the listeners are bound, so a client may connect
    /// at once.
    pub fn start(
        stores: StoreOpener,
        cfg: ServiceConfig,
        tcp: Option<SocketAddr>,
        unix: Option<PathBuf>,
    ) -> io::Result<ServiceHandle> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("core-data")
            .build()?;
        let listeners = runtime.block_on(Listeners::bind(tcp, unix.as_deref()))?;
        let tcp_addr = listeners.tcp.as_ref().map(|l| l.local_addr()).transpose()?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let signal = async move {
            // A dropped sender is a stop too.
            let _ = stopped.await;
        };
        let thread = std::thread::Builder::new()
            .name("core-data".to_string())
            .spawn(move || runtime.block_on(serve(listeners, stores, cfg, signal)))?;
        Ok(ServiceHandle {
            tcp_addr,
            unix_path: unix,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The bound TCP address (with the port the system chose for port 0).
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp_addr
    }

    /// The Unix socket's path.
    pub fn unix_path(&self) -> Option<&Path> {
        self.unix_path.as_deref()
    }

    /// Stops accepting, lets the requests in flight finish, and waits for the service's
    /// thread; removes the socket file.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The service's own error (none is expected once bound) has nowhere to go but
            // stderr here: stop() is called from harnesses and drops.
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => eprintln!("core-data service stopped with an error: {e}"),
                Err(_) => eprintln!("core-data service thread panicked"),
            }
        }
        if let Some(path) = &self.unix_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for ServiceHandle {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Resolves when `stop` is sent (used by [`serve`] to fan one shutdown out to each listener).
pub(crate) fn fan_out(
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> tokio::sync::watch::Receiver<bool> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    rx
}
