//! A byte stream to a broker: TCP, TLS over TCP (rustls, ring) or a Unix socket, read into a
//! buffer that a protocol's framing consumes, with a bound on how much one frame may make it
//! hold.
//!
//! TLS is blocking rustls over the same `TcpStream` ([`rustls::StreamOwned`]): the handshake
//! is done in [`Stream::connect_tls`], under the connect timeout, so a server that never
//! answers (or a plain one that does not speak TLS) cannot hang a caller; after it, reads and
//! writes go through rustls with the socket's own timeouts, and every write is flushed to the
//! socket before it returns, as a plain socket's is.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

/// Where a broker listens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Addr {
    /// `HOST:PORT`.
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// A Unix socket's path.
    Unix(PathBuf),
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Tcp { host, port } => write!(f, "{host}:{port}"),
            Addr::Unix(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A connected stream.
#[derive(Debug)]
pub enum Stream {
    /// Over TCP, Nagle off (a bus sends many small messages).
    Tcp(TcpStream),
    /// Over a Unix socket.
    Unix(UnixStream),
    /// TLS over TCP (boxed: rustls's connection state is large beside a socket).
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects, giving up after `timeout` on TCP.
    pub fn connect(addr: &Addr, timeout: Duration) -> io::Result<Stream> {
        match addr {
            Addr::Tcp { host, port } => connect_tcp(host, *port, timeout).map(Stream::Tcp),
            Addr::Unix(path) => UnixStream::connect(path).map(Stream::Unix),
        }
    }

    /// Connects over TCP and completes a TLS handshake with `config`, checking the server's
    /// certificate against the address's host name; both within `timeout`.
    pub fn connect_tls(
        addr: &Addr,
        config: Arc<ClientConfig>,
        timeout: Duration,
    ) -> io::Result<Stream> {
        let Addr::Tcp { host, port } = addr else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "TLS is over TCP: a Unix socket URL cannot be mqtts://",
            ));
        };
        let name = ServerName::try_from(host.clone()).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{host} is not a host name TLS can check: {e}"),
            )
        })?;
        let deadline = Instant::now() + timeout;
        let mut sock = connect_tcp(host, *port, timeout)?;
        let mut conn = ClientConnection::new(config, name).map_err(io::Error::other)?;
        while conn.is_handshaking() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(no_answer("the TLS handshake"));
            }
            sock.set_read_timeout(Some(left))?;
            sock.set_write_timeout(Some(left))?;
            conn.complete_io(&mut sock).map_err(|e| {
                if is_timeout(&e) {
                    no_answer("the TLS handshake")
                } else {
                    io::Error::new(e.kind(), format!("TLS handshake: {e}"))
                }
            })?;
        }
        sock.set_read_timeout(None)?;
        sock.set_write_timeout(None)?;
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
    }

    /// Sets how long a read waits (`None`: for ever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
            Stream::Tls(s) => s.sock.set_read_timeout(timeout),
        }
    }

    /// Reads what has arrived, without waiting: `WouldBlock` when nothing has ([`recv_now`];
    /// over TLS, what rustls has decrypted, else what one such `recv` brings it).
    pub fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => recv_now(s, buf),
            Stream::Unix(s) => recv_now(s, buf),
            Stream::Tls(s) => {
                // What rustls decrypted already, else one record's worth from the socket.
                match s.conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    done => return done,
                }
                let mut sock = NowReader(&s.sock);
                if s.conn.read_tls(&mut sock)? == 0 {
                    return Ok(0);
                }
                s.conn
                    .process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                s.conn.reader().read(buf)
            }
        }
    }

    /// Closes both directions, waking a reader blocked on the other handle.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Tls(s) => s.sock.shutdown(std::net::Shutdown::Both),
        };
    }
}

/// A TCP connection to the first of `host`'s addresses that answers within `timeout`, Nagle
/// off (a bus sends many small messages).
fn connect_tcp(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for a in std::net::ToSocketAddrs::to_socket_addrs(&(host, port))? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// One `recv` with `MSG_DONTWAIT`: what has arrived, or `WouldBlock`, whatever the socket's
/// timeout (a timeout rounds up to the kernel's tick, milliseconds, however short it is set).
fn recv_now(socket: &impl std::os::fd::AsRawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and the descriptor is the
    // socket's, open for the duration of the call.
    let n = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A socket read that never waits, for rustls to read TLS records from.
struct NowReader<'a>(&'a TcpStream);

impl Read for NowReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        recv_now(self.0, buf)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => {
                let n = s.write(buf)?;
                s.flush()?;
                Ok(n)
            }
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
            // rustls buffers what it encrypts: flushed here, so a publish is on the wire when
            // this returns, as it is over a plain socket.
            Stream::Tls(s) => {
                s.write_all(buf)?;
                s.flush()
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a framing function says of the bytes read so far.
pub enum Framed<T> {
    /// A whole frame, and how many bytes it took.
    Frame(T, usize),
    /// Not yet whole: read more.
    Incomplete,
}

/// The reading half: a buffer that grows as frames need and is consumed from the front.
/// `input[start..end]` holds what was read and not yet framed; the rest is room to read into
/// (zeroed once, when the buffer grows, not on every read).
#[derive(Debug)]
pub struct Reader {
    input: Vec<u8>,
    start: usize,
    end: usize,
}

/// `who did not answer in time`, as a timeout.
pub fn no_answer(who: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{who} did not answer in time"),
    )
}

/// A read that timed out, as opposed to a broken connection.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            input: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        }
    }
}

impl Reader {
    /// [`Reader::next`] until `deadline`: `Ok(None)` once it has passed with no whole frame.
    /// A frame already read is returned without a system call.
    pub fn next_before<T>(
        &mut self,
        stream: &mut Stream,
        deadline: Instant,
        mut frame: impl FnMut(&[u8]) -> io::Result<Framed<T>>,
    ) -> io::Result<Option<T>> {
        if let Some(value) = self.buffered(&mut frame)? {
            return Ok(Some(value));
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            stream.set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))?;
            if let Some(value) = self.next(stream, &mut frame)? {
                return Ok(Some(value));
            }
        }
    }

    /// A whole frame already in the buffer, if there is one; reads nothing.
    fn buffered<T>(
        &mut self,
        frame: &mut impl FnMut(&[u8]) -> io::Result<Framed<T>>,
    ) -> io::Result<Option<T>> {
        if self.start < self.end {
            if let Framed::Frame(value, used) = frame(&self.input[self.start..self.end])? {
                self.start += used;
                if self.start == self.end {
                    self.start = 0;
                    self.end = 0;
                }
                return Ok(Some(value));
            }
        }
        Ok(None)
    }

    /// The next frame that `frame` finds in the buffer, reading more from `stream` as needed.
    /// `Ok(None)` when a read timed out before a whole frame arrived (the bytes read so far
    /// stay for the next call). A closed connection is `UnexpectedEof`. `frame` bounds a
    /// frame's size (it errs on one too large), so the buffer stays bounded too.
    pub fn next<T>(
        &mut self,
        stream: &mut Stream,
        frame: impl FnMut(&[u8]) -> io::Result<Framed<T>>,
    ) -> io::Result<Option<T>> {
        self.next_with(stream, frame, Stream::read)
    }

    /// [`Reader::next`] without waiting: a frame already read or arrived, else `Ok(None)`.
    pub fn next_now<T>(
        &mut self,
        stream: &mut Stream,
        frame: impl FnMut(&[u8]) -> io::Result<Framed<T>>,
    ) -> io::Result<Option<T>> {
        self.next_with(stream, frame, Stream::read_now)
    }

    fn next_with<T>(
        &mut self,
        stream: &mut Stream,
        mut frame: impl FnMut(&[u8]) -> io::Result<Framed<T>>,
        read: fn(&mut Stream, &mut [u8]) -> io::Result<usize>,
    ) -> io::Result<Option<T>> {
        loop {
            if let Some(value) = self.buffered(&mut frame)? {
                return Ok(Some(value));
            }
            if self.end == self.input.len() {
                if self.start > 0 {
                    self.input.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    let len = self.input.len();
                    self.input.resize(len * 2, 0);
                }
            }
            match read(stream, &mut self.input[self.end..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the broker closed the connection",
                    ))
                }
                Ok(n) => self.end += n,
                Err(e) if is_timeout(&e) => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
