//! A raw RESP connection for the tests that compare `edgebench serve` with redis-server
//! byte for byte, and the two servers started the same way.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{child, edgebench};

/// A port that was free a moment ago: bind port 0, read what the kernel chose, release it.
pub fn free_port() -> io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// A private server for one test, killed when dropped: redis-server (no persistence) or
/// `edgebench serve`, on `port` (0: none) and, if given, a Unix socket, with `extra`
/// options that both take (`--requirepass`, `--maxmemory`...).
pub struct Server {
    proc: Child,
    /// Its TCP port (0 when it listens on the socket only).
    pub port: u16,
}

impl Server {
    pub fn start(redis: bool, port: u16, sock: Option<&Path>, extra: &[&str]) -> Server {
        let port_arg = port.to_string();
        let mut cmd = if redis {
            let mut c = child("redis-server");
            c.args(["--save", "", "--appendonly", "no"]);
            c
        } else {
            let mut c = edgebench();
            c.arg("serve");
            c
        };
        cmd.args(["--port", &port_arg]);
        if let Some(sock) = sock {
            cmd.arg("--unixsocket").arg(sock);
        }
        cmd.args(extra);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        Server {
            proc: cmd.spawn().unwrap(),
            port,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
    }
}

/// A connection that writes commands and reads replies as bytes.
pub struct Raw(BufReader<Box<dyn ReadWrite>>);

/// A stream both servers speak over.
pub trait ReadWrite: Read + Write + Send {}
impl<T: Read + Write + Send> ReadWrite for T {}

impl Raw {
    /// Connects to the socket at `sock`, waiting up to 20 s for the server to listen.
    pub fn unix(sock: &Path) -> Raw {
        Raw::retry(&sock.display().to_string(), || {
            let s = UnixStream::connect(sock)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            Ok(Box::new(s))
        })
    }

    /// Connects to 127.0.0.1:`port`, waiting up to 20 s for the server to listen.
    pub fn tcp(port: u16) -> Raw {
        Raw::retry(&format!("127.0.0.1:{port}"), || {
            let s = TcpStream::connect(("127.0.0.1", port))?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            Ok(Box::new(s))
        })
    }

    fn retry(name: &str, connect: impl Fn() -> io::Result<Box<dyn ReadWrite>>) -> Raw {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match connect() {
                Ok(s) => return Raw(BufReader::new(s)),
                Err(e) => assert!(Instant::now() < deadline, "no server on {name}: {e}"),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends one command.
    pub fn send(&mut self, args: &[&str]) {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.0.get_mut().write_all(out.as_bytes()).unwrap();
    }

    /// Reads exactly `n` bytes.
    pub fn read_n(&mut self, n: usize) -> String {
        let mut got = vec![0u8; n];
        self.0.read_exact(&mut got).unwrap();
        String::from_utf8_lossy(&got).into_owned()
    }

    /// Asserts that the next bytes are `want`.
    pub fn expect(&mut self, want: &str) {
        assert_eq!(self.read_n(want.len()), want);
    }

    /// Sends a command and asserts its reply's bytes.
    pub fn check(&mut self, args: &[&str], want: &str) {
        self.send(args);
        self.expect(want);
    }

    /// Reads until the bytes end with `suffix`.
    pub fn read_through(&mut self, suffix: &str) -> String {
        let mut got = Vec::new();
        while !got.ends_with(suffix.as_bytes()) {
            let mut b = [0u8; 1];
            self.0.read_exact(&mut b).unwrap();
            got.push(b[0]);
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    /// Sends a command and returns its reply's first line without the CRLF, or for a bulk
    /// string its value (the replies these tests read this way are one line or one value).
    pub fn call(&mut self, args: &[&str]) -> String {
        self.send(args);
        let line = self.line();
        if line.starts_with('$') && !line.starts_with("$-1") {
            return self.line();
        }
        line
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.0.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    }

    /// INFO `section`'s text (a bulk string in RESP2, a verbatim string in RESP3).
    pub fn info(&mut self, section: &str) -> String {
        self.send(&["INFO", section]);
        let head = self.line();
        let len: usize = head[1..].parse().unwrap();
        self.read_n(len + 2)
    }
}
