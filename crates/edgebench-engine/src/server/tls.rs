//! TLS for the RESP server, with rustls (ring): redis-server's `tls-port` and its options.
//!
//! - [`TlsSettings`] holds what redis-server's `tls-*` options say (the files, whether
//!   clients must show a certificate, which protocol versions); [`TlsAcceptor::load`] reads
//!   the files once, at start, and fails with a line that names the file and the fix.
//! - The layer itself is sans-I/O: a [`ServerConnection`] between the socket and the
//!   connection's requests. [`read_plain`] feeds it what the socket holds and takes out the
//!   plaintext, [`write_plain`] encrypts replies and writes what the socket takes; ciphertext
//!   the socket did not take waits in the session (`wants_write`) until it is writable. The
//!   event loop calls them on its mio stream; the task design through [`TlsSocket`], a
//!   [`Socket`](super::connection::Socket) over a tokio stream. A client moves between the
//!   two with its TLS session, as plain clients move with their socket.
//! - Only TCP: redis-server serves TLS on its `tls-port` and its Unix socket stays plain.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};

use bytes::BytesMut;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConnection};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::event_loop::StdStream;

/// The most ciphertext (and plaintext before the handshake ends) a session buffers for a
/// socket that does not take it: a client that stops reading holds this much, then its
/// replies wait in its session's output as a plain client's do.
const TLS_BUFFER_LIMIT: usize = 64 * 1024;

/// `tls-auth-clients`: whether a client must show a certificate the CA signed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuthClients {
    /// Required (redis-server's default).
    #[default]
    Yes,
    /// Not asked for.
    No,
    /// Asked for; a client without one is let in, one with a bad one is refused.
    Optional,
}

impl std::str::FromStr for AuthClients {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "yes" => Ok(AuthClients::Yes),
            "no" => Ok(AuthClients::No),
            "optional" => Ok(AuthClients::Optional),
            _ => Err(format!("{s:?}: expected yes, no or optional")),
        }
    }
}

/// A TLS listener's settings, with redis-server's option names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// `tls-cert-file`: the server's certificate chain (PEM).
    pub cert_file: PathBuf,
    /// `tls-key-file`: its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// `tls-ca-cert-file`: the CA clients' certificates must chain to.
    pub ca_cert_file: Option<PathBuf>,
    /// `tls-auth-clients`.
    pub auth_clients: AuthClients,
    /// `tls-protocols`, as redis.conf spells it: "TLSv1.2 TLSv1.3" (`None`: both).
    pub protocols: Option<String>,
}

/// Why TLS could not be set up; displayed as one line naming the file or option and the
/// fix.
#[derive(Debug)]
pub struct TlsError(String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsError {}

/// A TLS listener's configuration, read from its files once: every accepted client gets a
/// [`ServerConnection`] from it.
#[derive(Clone)]
pub struct TlsAcceptor {
    config: Arc<rustls::ServerConfig>,
}

impl fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsAcceptor").finish_non_exhaustive()
    }
}

/// The protocol versions `tls-protocols` names; rustls speaks 1.2 and 1.3 only.
fn protocol_versions(
    protocols: Option<&str>,
) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, TlsError> {
    let Some(text) = protocols else {
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    };
    let mut versions = Vec::new();
    for word in text.split_whitespace() {
        let version = match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => &rustls::version::TLS12,
            "tlsv1.3" => &rustls::version::TLS13,
            "tlsv1" | "tlsv1.1" => {
                return Err(TlsError(format!(
                    "--tls-protocols {text:?}: {word} is not offered (rustls speaks TLSv1.2 \
                     and TLSv1.3 only, as current OpenSSL does by default); use \"TLSv1.2 \
                     TLSv1.3\""
                )))
            }
            _ => {
                return Err(TlsError(format!(
                    "--tls-protocols {text:?}: unknown protocol {word:?}; expected TLSv1.2, \
                     TLSv1.3 or both, separated by spaces"
                )))
            }
        };
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    if versions.is_empty() {
        return Err(TlsError(
            "--tls-protocols \"\": names no protocol; use \"TLSv1.2 TLSv1.3\"".into(),
        ));
    }
    Ok(versions)
}

fn read_certs(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = std::fs::read(path).map_err(|e| {
        TlsError(format!(
            "{option} {}: cannot read it ({e}); give a readable PEM certificate file",
            path.display()
        ))
    })?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            TlsError(format!(
                "{option} {}: not a PEM certificate file ({e}); give the \
                 -----BEGIN CERTIFICATE----- file",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(TlsError(format!(
            "{option} {}: holds no certificate; give the -----BEGIN CERTIFICATE----- file",
            path.display()
        )));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = std::fs::read(path).map_err(|e| {
        TlsError(format!(
            "--tls-key-file {}: cannot read it ({e}); give a readable PEM private key file",
            path.display()
        ))
    })?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        TlsError(format!(
            "--tls-key-file {}: no private key in it ({e}); give the -----BEGIN PRIVATE \
             KEY----- file that goes with --tls-cert-file",
            path.display()
        ))
    })
}

impl TlsAcceptor {
    /// Reads the certificate, key and CA files and checks them against each other.
    ///
    /// # Errors
    /// A file that cannot be read or holds no certificate or key, a key that does not match
    /// the certificate, `--tls-auth-clients yes|optional` without a CA, an unknown or
    /// unsupported protocol: one line naming the file or option and the fix.
    pub fn load(settings: &TlsSettings) -> Result<TlsAcceptor, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions = protocol_versions(settings.protocols.as_deref())?;
        let certs = read_certs(&settings.cert_file, "--tls-cert-file")?;
        let key = read_key(&settings.key_file)?;
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| TlsError(format!("--tls-protocols: {e}")))?;
        let builder = match (settings.auth_clients, &settings.ca_cert_file) {
            (AuthClients::No, _) => builder.with_no_client_auth(),
            (auth, Some(ca)) => {
                let mut roots = RootCertStore::empty();
                for cert in read_certs(ca, "--tls-ca-cert-file")? {
                    roots.add(cert).map_err(|e| {
                        TlsError(format!(
                            "--tls-ca-cert-file {}: not a usable CA certificate ({e})",
                            ca.display()
                        ))
                    })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
                let verifier = if auth == AuthClients::Optional {
                    verifier.allow_unauthenticated()
                } else {
                    verifier
                };
                let verifier = verifier
                    .build()
                    .map_err(|e| TlsError(format!("--tls-ca-cert-file {}: {e}", ca.display())))?;
                builder.with_client_cert_verifier(verifier)
            }
            (_, None) => {
                return Err(TlsError(
                    "--tls-auth-clients yes (the default) needs --tls-ca-cert-file, the CA \
                     that signs client certificates; give it, or --tls-auth-clients no"
                        .into(),
                ))
            }
        };
        let mut config = builder.with_single_cert(certs, key).map_err(|e| {
            TlsError(format!(
                "--tls-key-file {}: does not go with --tls-cert-file {} ({e}); give the key \
                 the certificate was made for",
                settings.key_file.display(),
                settings.cert_file.display()
            ))
        })?;
        // Redis's clients (redis-cli, redis-rs) resume nothing; no tickets to rotate.
        config.send_tls13_tickets = 0;
        Ok(TlsAcceptor {
            config: Arc::new(config),
        })
    }

    /// The rustls configuration, for a server of the caller's own (edgebench's core-data
    /// service serves HTTPS with it).
    pub fn rustls_config(&self) -> Arc<rustls::ServerConfig> {
        Arc::clone(&self.config)
    }

    /// A session for a client that just connected.
    pub(crate) fn session(&self) -> io::Result<Box<ServerConnection>> {
        let mut conn = ServerConnection::new(self.config.clone()).map_err(io::Error::other)?;
        conn.set_buffer_limit(Some(TLS_BUFFER_LIMIT));
        Ok(Box::new(conn))
    }
}

/// Writes the ciphertext `conn` holds to `sock` as far as it takes it; true when all is out.
pub(super) fn flush_tls(conn: &mut ServerConnection, sock: &mut impl Write) -> io::Result<bool> {
    while conn.wants_write() {
        match conn.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads the plaintext the client sent into `buf`, decrypting what `sock` holds (and
/// answering the handshake on the way) until `buf` is full or the socket is drained.
/// `Ok(0)` is the end of the stream; `WouldBlock` when no plaintext came (a socket drained,
/// or only handshake records). A full `buf` may leave more behind.
///
/// A read from the socket that returns less than it asked for means the socket is drained,
/// as the plain path takes it: plaintext already in hand is returned without a last read
/// that would only answer `WouldBlock` (data that arrives later raises a new readiness edge).
pub(super) fn read_plain(
    conn: &mut ServerConnection,
    sock: &mut (impl Read + Write),
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut got = 0;
    let mut drained = false;
    loop {
        match conn.reader().read(&mut buf[got..]) {
            // close_notify: the client ended the session.
            Ok(0) if got < buf.len() => return Ok(got),
            Ok(n) => {
                got += n;
                if got == buf.len() {
                    return Ok(got);
                }
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // The peer closed without close_notify: the end of the stream all the same.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(got),
            Err(e) => return Err(e),
        }
        if drained && got > 0 {
            return Ok(got);
        }
        let mut reading = ShortRead {
            sock: &mut *sock,
            short: false,
        };
        match conn.read_tls(&mut reading) {
            Ok(0) => return Ok(got),
            Ok(_) => {
                drained = reading.short;
                if let Err(e) = conn.process_new_packets() {
                    // The alert that says why (a plain-text client, a bad certificate)
                    // goes out before the connection closes.
                    let _ = flush_tls(conn, sock);
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
                // Handshake records to answer, or a key update.
                flush_tls(conn, sock)?;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => return Ok(got),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A socket read that notes whether it returned less than it was asked for.
struct ShortRead<'a, S> {
    sock: &'a mut S,
    short: bool,
}

impl<S: Read> Read for ShortRead<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sock.read(buf)?;
        self.short = n < buf.len();
        Ok(n)
    }
}

/// Encrypts as much of `plain` as the session buffers and writes what `sock` takes; returns
/// how many plaintext bytes it took. Ciphertext left from before goes first, and until it
/// is out nothing new is taken (`WouldBlock`), so a client that stops reading costs at most
/// [`TLS_BUFFER_LIMIT`] here.
pub(super) fn write_plain(
    conn: &mut ServerConnection,
    sock: &mut impl Write,
    plain: &[u8],
) -> io::Result<usize> {
    if !flush_tls(conn, sock)? {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    let n = conn.writer().write(plain)?;
    flush_tls(conn, sock)?;
    if n == 0 && !plain.is_empty() {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    Ok(n)
}

/// A tokio TCP stream read and written without waiting, for the sans-I/O calls above.
struct TryIo<'a>(&'a tokio::net::TcpStream);

impl Read for TryIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Write for TryIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A TLS client in the task design: its tokio stream and its session.
pub(crate) struct TlsSocket {
    stream: tokio::net::TcpStream,
    /// Locked per call: `Socket` reads and writes through `&self`. Never contended (one
    /// task uses it), so the lock costs an atomic pair next to the cipher's work.
    state: Mutex<TlsState>,
}

struct TlsState {
    conn: Box<ServerConnection>,
    /// The last read filled its buffer: the session may hold more plaintext, which no
    /// socket readiness will announce.
    more: bool,
}

impl TlsSocket {
    pub(super) fn new(stream: tokio::net::TcpStream, conn: Box<ServerConnection>) -> TlsSocket {
        TlsSocket {
            stream,
            state: Mutex::new(TlsState { conn, more: true }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TlsState> {
        // A panic under the lock cannot leave a half-made session: rustls's calls return.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn read_into(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.state();
        let read = read_plain(&mut state.conn, &mut TryIo(&self.stream), buf);
        state.more = matches!(read, Ok(n) if n == buf.len() && n > 0);
        read
    }
}

impl super::connection::Socket for TlsSocket {
    async fn readable(&self) -> io::Result<()> {
        if self.state().more {
            return Ok(());
        }
        self.stream.readable().await
    }

    fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize> {
        let held = buf.len();
        let room = (buf.capacity() - held).max(super::connection::READ_CHUNK);
        // Zeroed: `Read` takes initialised bytes (what the cipher costs dwarfs it).
        buf.resize(held + room, 0);
        let read = self.read_into(&mut buf[held..]);
        buf.truncate(held + *read.as_ref().unwrap_or(&0));
        read
    }

    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.state();
        write_plain(&mut state.conn, &mut TryIo(&self.stream), buf)
    }

    fn into_std(self) -> io::Result<StdStream> {
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(StdStream::Tls(self.stream.into_std()?, state.conn))
    }
}

impl AsyncRead for TlsSocket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            match self.read_into(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.stream.poll_read_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for TlsSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let written = {
                let mut state = self.state();
                write_plain(&mut state.conn, &mut TryIo(&self.stream), buf)
            };
            match written {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.stream.poll_write_ready(cx))?;
                }
                other => return Poll::Ready(other),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let flushed = {
                let mut state = self.state();
                flush_tls(&mut state.conn, &mut TryIo(&self.stream))
            };
            match flushed {
                Ok(true) => return Poll::Ready(Ok(())),
                Ok(false) => {
                    ready!(self.stream.poll_write_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.state().conn.send_close_notify();
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
