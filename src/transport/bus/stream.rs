//! A byte stream to a broker: TCP or a Unix socket, read into a buffer that a protocol's
//! framing consumes, with a bound on how much one frame may make it hold.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
}

impl Stream {
    /// Connects, giving up after `timeout` on TCP.
    pub fn connect(addr: &Addr, timeout: Duration) -> io::Result<Stream> {
        match addr {
            Addr::Tcp { host, port } => {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                for a in std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port))? {
                    match TcpStream::connect_timeout(&a, timeout) {
                        Ok(s) => {
                            s.set_nodelay(true)?;
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
            Addr::Unix(path) => UnixStream::connect(path).map(Stream::Unix),
        }
    }

    /// Sets how long a read waits (`None`: for ever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }

    /// Reads what has arrived, without waiting: `WouldBlock` when nothing has (one `recv`
    /// with `MSG_DONTWAIT`, whatever the socket's timeout: a timeout rounds up to the
    /// kernel's tick, milliseconds, however short it is set).
    pub fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        };
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and `fd` is this stream's
        // open socket for the duration of the call.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Closes both directions, waking a reader blocked on the other handle.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
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
