//! The RESP server: the engine served over TCP and Unix sockets to any Redis client.
//!
//! Shape (mini-redis's `server.rs`): [`run`] takes its listener and its shutdown future, so
//! the `serve` command binds what the user asked for and a test binds `127.0.0.1:0` or a
//! socket in a temp dir. Each accepted stream gets a task running one [`connection`]
//! handler, generic over the stream, so TCP and Unix sockets share every line of it.
//!
//! - `maxclients`: a semaphore holds one permit per connection; a client over the limit gets
//!   Redis's `-ERR max number of clients reached` and is closed.
//! - Shutdown: when the shutdown future resolves, the listener is dropped (no new clients), a
//!   broadcast tells every connection to stop after its current batch, and each connection
//!   task holds a clone of an mpsc sender: when the last one drops, `recv()` returns `None`,
//!   meaning all connections are done. A Unix socket file is removed on the way out, as
//!   redis-server does.
//! - Pub/sub lives here ([`pubsub`]), not in the engine: it is the one feature where one
//!   connection's command reaches other connections.
//! - [`spawn_in_background`] runs a server on its own runtime and thread, for a program that
//!   serves its engine to clients in the same process (edgebench's `embedded-tcp` /
//!   `embedded-uds` targets).
//! - Two I/O models, chosen by [`ServerConfig::io`]: [`IoModel::Tasks`], one tokio task per
//!   connection ([`connection`]), and [`IoModel::Loop`], readiness event loops on threads of
//!   their own that serve many connections in one pass each, as redis-server does
//!   ([`event_loop`]), handing a connection to the task design when it has to wait
//!   (blocked, paused, subscribed, monitor) or may run long (scripts). Accepting stays on
//!   tokio in both.
//! - Addresses are this module's own: [`Bind`] says where to listen, [`Address`] where a
//!   listener is reached; a caller converts them to and from its own address types.

mod blocking;
mod connection;
mod event_loop;
pub mod pubsub;
pub mod tls;

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc, oneshot, Semaphore};

use crate::engine::Engine;
use crate::resp::DEFAULT_MAX_BULK_LEN;
use connection::{Connection, Session};
use event_loop::{Accepted, LoopContext, Loops, StdStream};
use pubsub::Broker;
use tls::{TlsAcceptor, TlsSocket};

/// Redis's default `maxclients`.
pub const DEFAULT_MAX_CLIENTS: usize = 10_000;

/// [`ServerConfig::busy_poll`]'s default: 50 µs, the value Linux's own `busy_poll` sysctl
/// is usually given. At `-P 1` with 50 clients it took `serve` from 0.94–1.04× redis-server's
/// ops/s to 1.06–1.21× (both pinned; docs/PERFORMANCE.md), for 0.9 of a core instead of 0.6
/// while clients keep it busy; an idle loop polls 50 µs after its last request, then sleeps.
pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(50);

/// How long [`run`] waits, after shutdown, for connections to finish their batch. A client
/// that stops reading can block a write forever; shutdown must not wait on it.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest wait between two accept attempts after errors (out of file descriptors...).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// `sun_path` holds 108 bytes, NUL included.
const MAX_SOCKET_PATH: usize = 107;

/// Reply to a client over `maxclients`, as redis-server sends it.
const MAX_CLIENTS_REPLY: &[u8] = b"-ERR max number of clients reached\r\n";

/// What the server enforces, with redis-server's names and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `maxclients`: connections served at once.
    pub maxclients: usize,
    /// `proto-max-bulk-len`: the longest bulk string a request may carry, in bytes.
    pub proto_max_bulk_len: u64,
    /// `requirepass`: clients must AUTH with it before anything else (handed to the
    /// engine, which checks AUTH; `None` leaves the engine's setting alone).
    pub requirepass: Option<String>,
    /// How connections are served.
    pub io: IoModel,
    /// Event-loop threads under [`IoModel::Loop`]; `None` = one, as redis-server runs every
    /// command on one thread (more threads take cores from the clients on a small machine:
    /// see docs/PERFORMANCE.md, "third session").
    pub loop_threads: Option<usize>,
    /// Under [`IoModel::Loop`]: how long a loop that just served requests polls for more
    /// before it sleeps in `epoll_wait` ([`DEFAULT_BUSY_POLL`]; zero: sleep at once).
    pub busy_poll: Duration,
}

/// How the server runs its connections' I/O.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IoModel {
    /// One tokio task per connection, on the caller's runtime.
    Tasks,
    /// Readiness event loops, each on a thread of its own serving many connections per pass
    /// (see the `event_loop` module); connections that wait move to tasks. The default: at
    /// `-P 1` it is nearer redis-server than tasks are, and at `-P 16` ahead of it
    /// (docs/PERFORMANCE.md).
    #[default]
    Loop,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            maxclients: DEFAULT_MAX_CLIENTS,
            proto_max_bulk_len: DEFAULT_MAX_BULK_LEN,
            requirepass: None,
            io: IoModel::default(),
            loop_threads: None,
            busy_poll: DEFAULT_BUSY_POLL,
        }
    }
}

/// The listen queue's length: Redis's `tcp-backlog` default (the kernel caps it at
/// `net.core.somaxconn`). Rust's standard library listens with 128: a burst of new clients
/// that arrives while the accept loop is busy for a few milliseconds fills that, and the
/// kernel then drops their SYNs, so each of those clients waits a full second for its
/// retransmission (10,000 clients opened one after the other took 9 s instead of 0.5 s).
const LISTEN_BACKLOG: u32 = 511;

/// A TCP listener on `addr` with [`LISTEN_BACKLOG`] and `SO_REUSEADDR` (as redis-server sets
/// it: a restarted server can bind while old connections linger in TIME_WAIT). Needs a
/// tokio runtime.
fn listen_tcp(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Turns transparent huge pages off for this whole process, as redis-server does at start
/// (its `disable-thp yes` default). A server program calls it first thing; a program that
/// serves its engine beside other work (edgebench's in-process targets) should not.
///
/// Why: the allocator asks for huge pages, and a region touched anywhere becomes 2 MiB of
/// resident memory. Thousands of connections, each a few small allocations scattered over
/// such regions, then cost ~22 KB of RSS each instead of ~9 KB (measured with 5,000 idle
/// connections; docs/PERFORMANCE.md). Nothing changes on systems without THP.
///
/// # Errors
/// When the kernel refuses (it predates Linux 3.15); the server runs on regardless.
pub fn disable_transparent_huge_pages() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and touches no memory of
        // ours; it only sets a flag on this process.
        let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Where [`spawn_in_background`] listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    /// A TCP address; port 0 picks a free one.
    Tcp(SocketAddr),
    /// A Unix socket at this path (a stale socket file there is replaced).
    Unix(PathBuf),
    /// A Unix socket in a new temporary directory, removed when the server stops.
    TempUnixSocket,
    /// A TCP address served over TLS (redis-server's `tls-port`); port 0 picks a free one.
    Tls(SocketAddr, tls::TlsSettings),
}

/// Where clients reach a listener. Displayed as a Redis URL: `redis://127.0.0.1:6379`,
/// `redis+unix:///tmp/redis.sock`, `rediss://127.0.0.1:6380`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
    /// A TCP address that speaks TLS.
    Tls(SocketAddr),
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // An IPv6 socket address displays in brackets, as the URL needs it.
            Address::Tcp(addr) => write!(f, "redis://{addr}"),
            Address::Unix(path) => write!(f, "redis+unix://{}", path.display()),
            Address::Tls(addr) => write!(f, "rediss://{addr}"),
        }
    }
}

/// What the server listens on.
#[derive(Debug)]
pub enum Listener {
    /// A bound TCP socket.
    Tcp(TcpListener),
    /// A bound Unix socket.
    Unix(UnixListener),
    /// A bound TCP socket whose clients speak TLS.
    Tls(TcpListener, TlsAcceptor),
}

impl Listener {
    /// Binds a TCP address (`127.0.0.1:6379`; port 0 picks a free one). Needs a tokio
    /// runtime.
    pub async fn bind_tcp(addr: &str) -> io::Result<Listener> {
        let mut last = None;
        for addr in tokio::net::lookup_host(addr).await? {
            match listen_tcp(addr) {
                Ok(l) => return Ok(Listener::Tcp(l)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the address resolves to nothing",
            )
        }))
    }

    /// Binds a TCP address whose clients speak TLS, with `acceptor`'s certificate. Needs a
    /// tokio runtime.
    pub async fn bind_tls(addr: &str, acceptor: TlsAcceptor) -> io::Result<Listener> {
        match Listener::bind_tcp(addr).await? {
            Listener::Tcp(l) => Ok(Listener::Tls(l, acceptor)),
            other => Ok(other),
        }
    }

    /// Binds a Unix socket at `path`, replacing a stale socket file left there by a server
    /// that did not clean up (redis-server does the same). Needs a tokio runtime.
    pub fn bind_unix(path: &Path) -> io::Result<Listener> {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if meta.file_type().is_socket() {
                std::fs::remove_file(path)?;
            }
        }
        let socket = tokio::net::UnixSocket::new_stream()?;
        socket.bind(path)?;
        Ok(Listener::Unix(socket.listen(LISTEN_BACKLOG)?))
    }

    /// Where clients reach this listener.
    pub fn endpoint(&self) -> io::Result<Address> {
        match self {
            Listener::Tcp(l) => Ok(Address::Tcp(l.local_addr()?)),
            Listener::Tls(l, _) => Ok(Address::Tls(l.local_addr()?)),
            Listener::Unix(l) => {
                let addr = l.local_addr()?;
                let path = addr.as_pathname().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "unnamed unix socket")
                })?;
                Ok(Address::Unix(path.to_path_buf()))
            }
        }
    }

    /// The next client, with its address and the local one as CLIENT LIST shows them.
    async fn accept(&self) -> io::Result<(Stream, String, String)> {
        match self {
            Listener::Tcp(l) => {
                let (stream, peer) = l.accept().await?;
                // Replies are small and latency-bound: Nagle would hold some back.
                stream.set_nodelay(true)?;
                let local = stream.local_addr()?;
                Ok((Stream::Tcp(stream), peer.to_string(), local.to_string()))
            }
            Listener::Tls(l, acceptor) => {
                let (stream, peer) = l.accept().await?;
                stream.set_nodelay(true)?;
                let local = stream.local_addr()?;
                // The handshake runs where the client's requests will: on its loop or task,
                // without waiting, so a client that never finishes it holds nothing here.
                let session = acceptor.session()?;
                Ok((
                    Stream::Tls(stream, session),
                    peer.to_string(),
                    local.to_string(),
                ))
            }
            Listener::Unix(l) => {
                let (stream, _) = l.accept().await?;
                // Redis shows a Unix socket client as `<socket path>:0`, both ways.
                let path = self
                    .socket_path()
                    .map_or_else(String::new, |p| p.display().to_string());
                let addr = format!("{path}:0");
                Ok((Stream::Unix(stream), addr.clone(), addr))
            }
        }
    }

    fn socket_path(&self) -> Option<PathBuf> {
        match self {
            Listener::Tcp(_) | Listener::Tls(..) => None,
            Listener::Unix(l) => l.local_addr().ok()?.as_pathname().map(Path::to_path_buf),
        }
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(TcpStream, Box<rustls::ServerConnection>),
}

impl Stream {
    /// The socket's descriptor (CLIENT LIST's `fd`).
    fn raw_fd(&self) -> i64 {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) | Stream::Tls(s, _) => i64::from(s.as_raw_fd()),
            Stream::Unix(s) => i64::from(s.as_raw_fd()),
        }
    }

    /// The stream taken off tokio, for an event loop.
    fn into_std(self) -> io::Result<StdStream> {
        Ok(match self {
            Stream::Tcp(s) => StdStream::Tcp(s.into_std()?),
            Stream::Unix(s) => StdStream::Unix(s.into_std()?),
            Stream::Tls(s, session) => StdStream::Tls(s.into_std()?, session),
        })
    }
}

/// What every connection of one server shares.
pub(crate) struct Shared {
    pub(crate) broker: Arc<Broker>,
    pub(crate) config: ServerConfig,
}

/// Serves `engine` on `listener` until `shutdown` resolves, then lets every connection
/// finish the batch it is running (for up to 5 s) and returns.
///
/// # Errors
/// Only when accepting fails persistently; a failing connection ends that connection alone.
pub async fn run(
    listener: Listener,
    engine: Engine,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    run_many(vec![listener], engine, config, shutdown).await
}

/// [`run`] on several listeners at once (`edgebench serve` on a TCP port and a Unix
/// socket): one engine, one pub/sub broker and one `maxclients` budget for all of them.
///
/// # Errors
/// Only when accepting fails persistently on one of the listeners.
pub async fn run_many(
    listeners: Vec<Listener>,
    engine: Engine,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    run_sharing(listeners, engine, config, Arc::new(Broker::new()), shutdown).await
}

/// [`run_many`] with a pub/sub `broker` the caller shares: what clients of this server
/// PUBLISH reaches the caller's own [`pubsub::Subscriptions`] on that broker, in process,
/// and what the caller publishes on it reaches this server's subscribers.
///
/// # Errors
/// Only when accepting fails persistently on one of the listeners.
pub async fn run_sharing(
    listeners: Vec<Listener>,
    engine: Engine,
    config: ServerConfig,
    broker: Arc<Broker>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let (notify_shutdown, _) = broadcast::channel(1);
    let (shutdown_complete_tx, mut shutdown_complete_rx) = mpsc::channel::<()>(1);
    let socket_paths: Vec<PathBuf> = listeners.iter().filter_map(|l| l.socket_path()).collect();
    // The engine keeps the password (AUTH, HELLO AUTH and CONFIG SET requirepass work on
    // it); without one configured here, the engine's setting is left as it is.
    if config.requirepass.is_some() {
        engine.set_requirepass(config.requirepass.clone());
    }
    // Keyspace notifications reach this server's subscribers, delivered before the writing
    // command's reply (the broker only queues them). Held weakly: once the broker is gone,
    // the engine publishes to nobody rather than keep it alive.
    let publish_to = Arc::downgrade(&broker);
    engine.set_publisher(Arc::new(move |channel: &[u8], message: &[u8]| {
        if let Some(broker) = publish_to.upgrade() {
            broker.publish(channel, message);
        }
    }));
    let loops = match config.io {
        IoModel::Tasks => None,
        IoModel::Loop => {
            let threads = config.loop_threads.unwrap_or(1);
            let context = LoopContext {
                runtime: tokio::runtime::Handle::current(),
                shutdown: notify_shutdown.subscribe(),
                done: shutdown_complete_tx.clone(),
                max_bulk_len: config.proto_max_bulk_len,
                busy_poll: config.busy_poll,
            };
            Some(Loops::start(threads, context)?)
        }
    };
    let server = Server {
        listeners,
        loops,
        engine,
        limit: Arc::new(Semaphore::new(config.maxclients)),
        shared: Arc::new(Shared { broker, config }),
        notify_shutdown,
        shutdown_complete_tx,
    };
    let result = {
        let accepting = futures_util::future::try_join_all(
            server.listeners.iter().map(|l| server.accept_loop(l)),
        );
        tokio::pin!(accepting);
        let engine = server.engine.clone();
        tokio::select! {
            result = &mut accepting => result.map(drop),
            () = shutdown => Ok(()),
            () = engine.shutdown_requested() => Ok(()),
        }
    };
    // A script that runs would hold its connection (and the keyspace) past the drain's
    // bound: stop it, as SHUTDOWN NOSAVE does on redis-server.
    #[cfg(feature = "scripting")]
    server.engine.stop_script_for_shutdown();
    // Dropping the server drops the listener, the broadcast sender (every connection's
    // `recv` returns), the event loops' channels (each loop closes its connections and
    // ends) and our mpsc sender: what is left are the loops' and connections' clones.
    drop(server);
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, shutdown_complete_rx.recv()).await;
    for path in socket_paths {
        let _ = std::fs::remove_file(path);
    }
    result
}

struct Server {
    listeners: Vec<Listener>,
    /// The event loops under [`IoModel::Loop`].
    loops: Option<Loops>,
    engine: Engine,
    limit: Arc<Semaphore>,
    shared: Arc<Shared>,
    notify_shutdown: broadcast::Sender<()>,
    shutdown_complete_tx: mpsc::Sender<()>,
}

impl Server {
    async fn accept_loop(&self, listener: &Listener) -> io::Result<()> {
        loop {
            let (stream, addr, laddr) = self.accept(listener).await?;
            let permit = match (&self.loops, Arc::clone(&self.limit).try_acquire_owned()) {
                (Some(loops), Ok(permit)) => {
                    let engine = self.engine.clone();
                    let session = Session::new(engine, &self.shared.broker, addr, laddr);
                    session.set_fd(stream.raw_fd());
                    // A stream tokio cannot let go of is dropped: that client sees a close.
                    if let Ok(stream) = stream.into_std() {
                        loops.assign(Accepted {
                            stream,
                            session,
                            permit,
                        });
                    }
                    continue;
                }
                (_, permit) => permit,
            };
            let shutdown = self.notify_shutdown.subscribe();
            let done = self.shutdown_complete_tx.clone();
            let engine = self.engine.clone();
            let shared = Arc::clone(&self.shared);
            tokio::spawn(async move {
                match permit {
                    Ok(_permit) => {
                        let session = Session::new(engine, &shared.broker, addr, laddr);
                        session.set_fd(stream.raw_fd());
                        let max_bulk_len = shared.config.proto_max_bulk_len;
                        // A connection's I/O error ends that connection; nothing to report.
                        let _ = match stream {
                            Stream::Tcp(s) => {
                                Connection::new(s, session, max_bulk_len)
                                    .serve(shutdown)
                                    .await
                            }
                            Stream::Unix(s) => {
                                Connection::new(s, session, max_bulk_len)
                                    .serve(shutdown)
                                    .await
                            }
                            Stream::Tls(s, tls) => {
                                Connection::new(TlsSocket::new(s, tls), session, max_bulk_len)
                                    .serve(shutdown)
                                    .await
                            }
                        };
                    }
                    Err(_) => {
                        let _ = match stream {
                            Stream::Tcp(s) => refuse(s).await,
                            Stream::Unix(s) => refuse(s).await,
                            // Before its handshake a TLS client can be told nothing:
                            // closed, as redis-server closes it.
                            Stream::Tls(..) => Ok(()),
                        };
                    }
                }
                drop(done);
            });
        }
    }

    /// The next connection. Errors that concern one connection (it was reset before we took
    /// it) are skipped; others (out of file descriptors) are retried with a growing pause,
    /// and returned only when they persist, as mini-redis does.
    async fn accept(&self, listener: &Listener) -> io::Result<(Stream, String, String)> {
        let mut backoff = Duration::from_millis(1);
        let mut waited = Duration::ZERO;
        loop {
            match listener.accept().await {
                Ok(stream) => return Ok(stream),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => {
                    if waited > Duration::from_secs(64) {
                        return Err(e);
                    }
                    tokio::time::sleep(backoff).await;
                    waited += backoff;
                    backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                }
            }
        }
    }
}

async fn refuse<S: tokio::io::AsyncWrite + Unpin>(mut stream: S) -> io::Result<()> {
    use tokio::io::AsyncWriteExt;
    stream.write_all(MAX_CLIENTS_REPLY).await?;
    stream.shutdown().await
}

/// A server running on its own runtime and thread; dropping it shuts the server down and
/// waits for it.
#[derive(Debug)]
pub struct ServerHandle {
    endpoint: Address,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<io::Result<()>>>,
    // Holds the Unix socket; removed after the server stopped.
    _dir: Option<tempfile::TempDir>,
}

impl ServerHandle {
    /// Where the server listens.
    pub fn endpoint(&self) -> Address {
        self.endpoint.clone()
    }

    /// Stops the server, waits for it, and returns how it ended.
    pub fn shutdown(mut self) -> io::Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Serves `engine` inside this process, where `bind` says (a TCP address, a Unix socket, or a
/// Unix socket in a new temporary directory), with the default [`ServerConfig`], on a
/// runtime of its own (one worker thread per core) in a thread of its own.
///
/// # Errors
/// When the runtime, the socket or the thread cannot be created.
pub fn spawn_in_background(bind: Bind, engine: Engine) -> io::Result<ServerHandle> {
    spawn_in_background_with(bind, engine, ServerConfig::default())
}

/// [`spawn_in_background`] with `config` (an I/O model, limits, a password).
///
/// # Errors
/// When the runtime, the socket or the thread cannot be created.
pub fn spawn_in_background_with(
    bind: Bind,
    engine: Engine,
    config: ServerConfig,
) -> io::Result<ServerHandle> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("edgebench-server")
        .build()?;
    let (listener, dir) = {
        let _context = runtime.enter();
        match bind {
            Bind::Tcp(addr) => (Listener::Tcp(listen_tcp(addr)?), None),
            Bind::Tls(addr, settings) => {
                let acceptor = TlsAcceptor::load(&settings)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                (Listener::Tls(listen_tcp(addr)?, acceptor), None)
            }
            Bind::Unix(path) => {
                check_socket_path(&path, "use a shorter path")?;
                (Listener::bind_unix(&path)?, None)
            }
            Bind::TempUnixSocket => {
                let dir = tempfile::Builder::new().prefix("edgebench-").tempdir()?;
                let path = dir.path().join("edgebench.sock");
                check_socket_path(&path, "set TMPDIR to a shorter directory")?;
                (Listener::bind_unix(&path)?, Some(dir))
            }
        }
    };
    let endpoint = listener.endpoint()?;
    let (tx, rx) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("edgebench-server".into())
        .spawn(move || {
            runtime.block_on(run(listener, engine, config, async {
                let _ = rx.await;
            }))
        })?;
    Ok(ServerHandle {
        endpoint,
        shutdown: Some(tx),
        thread: Some(thread),
        _dir: dir,
    })
}

/// Fails, naming `fix`, when `path` does not fit in `sun_path`.
fn check_socket_path(path: &Path, fix: &str) -> io::Result<()> {
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "unix socket path {} is longer than {MAX_SOCKET_PATH} bytes: {fix}",
                path.display()
            ),
        ));
    }
    Ok(())
}
