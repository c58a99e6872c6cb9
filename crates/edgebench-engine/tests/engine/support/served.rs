//! The RESP server started inside a test's runtime (on `127.0.0.1:0` or a socket in a temp
//! dir), and a raw connection to it that asserts exact reply bytes: shared by
//! [`crate::resp_server`] and [`crate::resp_server_blocking`].
//!
//! `EDGEBENCH_SERVER_IO=tasks` (or `loop`) runs every server these tests start on that I/O
//! model instead of the default, the event loop ([`io_model`]), so one suite covers both.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use edgebench_engine::engine::Engine;
use edgebench_engine::server::{self, Address, IoModel, Listener, ServerConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long a test waits for bytes that must come; only a failing test waits this long.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a test waits to be sure nothing comes.
pub const QUIET: Duration = Duration::from_millis(100);

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The I/O model the tests' servers use: `EDGEBENCH_SERVER_IO=loop` or `tasks`; the
/// default model otherwise.
pub fn io_model() -> IoModel {
    match std::env::var("EDGEBENCH_SERVER_IO").as_deref() {
        Ok("loop") => IoModel::Loop,
        Ok("tasks") => IoModel::Tasks,
        Ok(other) => panic!("EDGEBENCH_SERVER_IO={other}: expected loop or tasks"),
        Err(_) => IoModel::default(),
    }
}

/// [`server::spawn_in_background`] on the I/O model [`io_model`] says.
pub fn spawn_in_background(bind: server::Bind, engine: Engine) -> io::Result<server::ServerHandle> {
    let config = ServerConfig {
        io: io_model(),
        ..ServerConfig::default()
    };
    server::spawn_in_background_with(bind, engine, config)
}

/// A raw connection to the server under test.
pub struct Conn(pub Box<dyn Io>);

impl Conn {
    pub async fn send(&mut self, bytes: &[u8]) {
        self.0.write_all(bytes).await.expect("write to the server");
        // A TLS client (tokio-rustls) keeps the ciphertext its socket did not take until it is
        // flushed: without this, the end of a large request could stay in the client while
        // the test waits for the reply (a TCP stream's flush does nothing).
        self.0.flush().await.expect("flush to the server");
    }

    /// Reads exactly `n` bytes.
    pub async fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        tokio::time::timeout(REPLY_TIMEOUT, self.0.read_exact(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no reply of {n} bytes within {REPLY_TIMEOUT:?}"))
            .expect("read from the server");
        buf
    }

    /// Reads `n` bytes, or what came before the timeout (for a diff to show).
    pub async fn read_up_to(&mut self, n: usize) -> Vec<u8> {
        let mut got = vec![0; n];
        let mut filled = 0;
        while filled < n {
            match tokio::time::timeout(REPLY_TIMEOUT, self.0.read(&mut got[filled..])).await {
                Ok(Ok(read)) if read > 0 => filled += read,
                _ => break,
            }
        }
        got.truncate(filled);
        got
    }

    /// Reads until the bytes received end with `suffix` (for replies whose exact bytes
    /// belong to another module, such as HELLO's).
    pub async fn read_through(&mut self, suffix: &[u8]) -> Vec<u8> {
        let mut got = Vec::new();
        while !got.ends_with(suffix) {
            let mut byte = [0u8; 1];
            tokio::time::timeout(REPLY_TIMEOUT, self.0.read_exact(&mut byte))
                .await
                .unwrap_or_else(|_| panic!("{suffix:?} never came; got {got:?}"))
                .expect("read from the server");
            got.push(byte[0]);
        }
        got
    }

    /// Sends `request` and asserts the reply is exactly `expected`.
    pub async fn check(&mut self, request: &[u8], expected: &[u8]) {
        self.send(request).await;
        self.expect(expected).await;
    }

    /// Asserts the next bytes are exactly `expected`.
    pub async fn expect(&mut self, expected: &[u8]) {
        let got = self.read_n(expected.len()).await;
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(expected)
        );
    }

    /// Asserts nothing arrives for a while.
    pub async fn expect_quiet(&mut self) {
        let mut byte = [0u8; 1];
        if let Ok(read) = tokio::time::timeout(QUIET, self.0.read(&mut byte)).await {
            panic!("expected silence, got {read:?} ({byte:?})");
        }
    }

    /// Asserts the server closed the connection (after the bytes already checked).
    pub async fn expect_closed(&mut self) {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(REPLY_TIMEOUT, self.0.read_to_end(&mut rest))
            .await
            .expect("the server did not close the connection");
        // A reset is a close too (the server may close with unread input pending).
        if let Ok(n) = read {
            assert_eq!(
                n,
                0,
                "unexpected bytes {:?}",
                String::from_utf8_lossy(&rest)
            );
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Loopback TCP.
    Tcp,
    /// A Unix socket.
    Unix,
}

pub const TRANSPORTS: [Transport; 2] = [Transport::Tcp, Transport::Unix];

/// A server running inside the test's runtime.
pub struct TestServer {
    pub endpoint: Address,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
    _dir: tempfile::TempDir,
    pub engine: Engine,
    /// How clients of a TLS server connect.
    tls_client: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl TestServer {
    /// A server on a TLS port with `settings`, whose [`TestServer::connect`] connects as
    /// `client` says.
    pub async fn start_tls(
        config: ServerConfig,
        settings: &server::tls::TlsSettings,
        client: std::sync::Arc<rustls::ClientConfig>,
    ) -> TestServer {
        let acceptor = server::tls::TlsAcceptor::load(settings).expect("TLS settings");
        let listener = Listener::bind_tls("127.0.0.1:0", acceptor)
            .await
            .expect("bind");
        let mut server = TestServer::on(listener, config, tempfile::tempdir().expect("temp dir"));
        server.tls_client = Some(client);
        server
    }

    /// Serves a fresh engine on `listener` in the test's runtime; `dir` (a Unix socket's)
    /// goes with the server.
    fn on(listener: Listener, config: ServerConfig, dir: tempfile::TempDir) -> TestServer {
        let endpoint = listener.endpoint().expect("endpoint");
        let engine = Engine::new();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(server::run(listener, engine.clone(), config, async {
            let _ = rx.await;
        }));
        TestServer {
            endpoint,
            shutdown: Some(tx),
            task: Some(task),
            _dir: dir,
            engine,
            tls_client: None,
        }
    }

    /// A server with `config`, on the I/O model [`io_model`] says unless `config` asks for
    /// a model other than the default.
    pub async fn start(transport: Transport, mut config: ServerConfig) -> TestServer {
        if config.io == IoModel::default() {
            config.io = io_model();
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let listener = match transport {
            Transport::Tcp => Listener::bind_tcp("127.0.0.1:0").await,
            Transport::Unix => Listener::bind_unix(&dir.path().join("s.sock")),
        }
        .expect("bind");
        TestServer::on(listener, config, dir)
    }

    pub async fn new(transport: Transport) -> TestServer {
        TestServer::start(transport, ServerConfig::default()).await
    }

    pub async fn try_connect(&self) -> io::Result<Conn> {
        Ok(match &self.endpoint {
            Address::Tcp(addr) => Conn(Box::new(TcpStream::connect(addr).await?)),
            Address::Unix(path) => Conn(Box::new(UnixStream::connect(path).await?)),
            Address::Tls(addr) => {
                let client = self
                    .tls_client
                    .clone()
                    .expect("a TLS server's client config");
                super::tls::connect(*addr, client).await?
            }
        })
    }

    pub async fn connect(&self) -> Conn {
        self.try_connect().await.expect("connect")
    }

    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.endpoint {
            Address::Unix(path) => Some(path.clone()),
            Address::Tcp(_) | Address::Tls(_) => None,
        }
    }

    /// Fires the shutdown future and waits for `run` to return.
    pub async fn stop(&mut self) -> io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let task = self.task.take().expect("server already stopped");
        tokio::time::timeout(REPLY_TIMEOUT, task)
            .await
            .expect("run did not return after shutdown")
            .expect("server task panicked")
    }
}

/// `*N\r\n$..` for the arguments.
pub fn resp(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend(format!("${}\r\n", a.len()).bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl TestServer {
    /// A handle on a server running elsewhere (e.g. a real redis-server), to connect to it
    /// the same way; there is nothing to stop.
    pub fn elsewhere(endpoint: Address) -> TestServer {
        TestServer {
            endpoint,
            shutdown: None,
            task: None,
            _dir: tempfile::tempdir().expect("temp dir"),
            engine: Engine::new(),
            tls_client: None,
        }
    }

    /// Over loopback TCP, with the default configuration.
    pub async fn tcp() -> TestServer {
        TestServer::new(Transport::Tcp).await
    }

    /// Waits until exactly `n` calls are blocked in the engine.
    pub async fn until_blocked(&self, n: usize) {
        let waiting = async {
            while self.engine.blocked_clients() != n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        tokio::time::timeout(REPLY_TIMEOUT, waiting)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{} blocked clients, expected {n}",
                    self.engine.blocked_clients()
                )
            });
    }
}

/// The servers a differential scenario runs on: the engine on each transport, then the
/// test's redis-server; each with the name to report a difference under.
pub async fn every_server(
    redis: &crate::support::redis_server::RedisServer,
) -> Vec<(String, TestServer)> {
    let mut out = Vec::new();
    for t in TRANSPORTS {
        out.push((format!("serve {t:?}"), TestServer::new(t).await));
    }
    out.push((
        "redis-server".into(),
        TestServer::elsewhere(redis.address()),
    ));
    out
}
