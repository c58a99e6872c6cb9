//! HTTPS for the core-data service: `coredata-service --tls-cert-file --tls-key-file` serves
//! its TCP listener over TLS (rustls, ring), as EdgeX's secure mode puts TLS in front of
//! core-data (its API gateway terminates it); the Unix socket stays plain.
//!
//! [`TlsListener`] is an `axum::serve::Listener` that hands axum connections whose handshake
//! is done. Each handshake runs in a task of its own, bounded by [`HANDSHAKE_TIMEOUT`]: a
//! client that connects and never finishes its handshake holds one task for a while, never
//! the accept loop, so the clients behind it are served (1,000 half-open handshakes are in
//! the tests). The certificate files are read by the engine's
//! [`TlsAcceptor`](crate::server::tls::TlsAcceptor), so `serve` and `coredata-service` say
//! the same thing about a bad file.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;

/// How long a client has to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections whose handshake is done, waiting for axum to take them.
const READY_QUEUE: usize = 128;

/// A TCP listener whose connections speak TLS.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `tcp` (in the current runtime), each client's handshake with
    /// `config`.
    pub fn new(tcp: TcpListener, config: Arc<rustls::ServerConfig>) -> io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(READY_QUEUE);
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    // Out of descriptors, a reset before accept: as axum's own listener,
                    // pause and go on.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                    // A failed or slow handshake (a plain-text client, a client that stops)
                    // closes that connection alone.
                    if let Ok(Ok(tls)) = handshake.await {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            local,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        // The listener's socket closes with its task.
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accept task ended (it does not, but for its abort): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
