//! A broker this process starts, owns and stops: Mosquitto (MQTT, a TCP listener and a
//! Unix-socket listener) or nats-server (TCP; NATS has no Unix socket), each on a free port
//! with a private directory, as spawned redis-servers are.
//!
//! Mosquitto runs with a private config equal to EdgeX's `mosquitto-no-auth.conf` (anonymous
//! clients, Mosquitto's defaults otherwise) plus the two listeners, no persistence and
//! `sys_interval 1`, so its `$SYS` counters ([`super::stats`]) are fresh; nats-server with
//! its defaults on a free port, and its HTTP monitoring (`/varz`, for the same counters) on
//! another. [`Broker::spawn`] returns once the broker answers its protocol's handshake
//! (CONNACK, INFO) on every listener. Dropping the guard stops it (SIGTERM, then SIGKILL
//! after 2 s) and removes the directory.
//!
//! [`Broker::spawn_secure`] starts Mosquitto as EdgeX's secure bus: one TLS listener (a
//! private CA and server certificate made for it, [`crate::transport::certs`]) and
//! `allow_anonymous false` with a password file made by `mosquitto_passwd`; [`Broker::url`]
//! is then the `mqtts://USER:PASSWORD@…?cacert=…` a client needs.
//!
//! Invariants: a broker never outlives edgebench (`PR_SET_PDEATHSIG`, and its own process
//! group so a terminal's Ctrl-C reaches edgebench alone, which stops it in order).

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::mqtt;
use super::stream::{Addr, Stream};
use super::BusUrl;
use crate::transport::certs::PrivateCa;
use crate::transport::child::{die_with_parent, find_on_path, free_port, stop};

/// How long a spawned broker gets to answer.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stopping broker gets after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Attempts on a fresh free port (another process can take it between probe and bind).
const ATTEMPTS: usize = 3;

/// Which broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerKind {
    /// Eclipse Mosquitto, EdgeX 4.0's default bus (MQTT 3.1.1).
    Mosquitto,
    /// nats-server (core NATS).
    Nats,
}

impl BrokerKind {
    /// The binary's name.
    pub fn program(self) -> &'static str {
        match self {
            BrokerKind::Mosquitto => "mosquitto",
            BrokerKind::Nats => "nats-server",
        }
    }

    /// The Debian package that brings the binary.
    fn package(self) -> &'static str {
        match self {
            BrokerKind::Mosquitto => "mosquitto",
            BrokerKind::Nats => "nats-server",
        }
    }
}

/// Why a broker could not be started.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The binary is not installed.
    #[error("{program} not found on PATH or in /usr/sbin: install it (Debian: apt-get install {package}) or give the bus by URL")]
    NotFound {
        /// The binary.
        program: &'static str,
        /// Its Debian package.
        package: &'static str,
    },
    /// It could not be started or did not answer.
    #[error("cannot start {program}: {reason}")]
    Start {
        /// The binary.
        program: &'static str,
        /// What went wrong, with the broker's own last words when it printed any.
        reason: String,
    },
}

/// A running broker; dropping it stops it.
#[derive(Debug)]
pub struct Broker {
    kind: BrokerKind,
    child: Child,
    tcp: Addr,
    unix: Option<Addr>,
    monitor_port: Option<u16>,
    /// TLS and the user a client needs (a secure Mosquitto's); plain and anonymous otherwise.
    security: mqtt::Security,
    dir: TempDir,
}

impl Broker {
    /// Starts a private broker of `kind` and waits until it answers on every listener.
    pub fn spawn(kind: BrokerKind) -> Result<Broker, BrokerError> {
        Broker::spawn_with(kind, "")
    }

    /// [`Broker::spawn`] with `extra_config` appended to the broker's config file, in its own
    /// syntax: a test lowers a limit this way (Mosquitto: `max_queued_messages 10`;
    /// nats-server: `write_deadline: "200ms"`). The listeners stay edgebench's: nats-server's
    /// command-line flags override its file, and a Mosquitto `listener` added here is one more.
    pub fn spawn_with(kind: BrokerKind, extra_config: &str) -> Result<Broker, BrokerError> {
        Broker::start(kind, extra_config, None)
    }

    /// Mosquitto as EdgeX's secure bus: a TLS listener only, with a certificate from a private
    /// CA made now, and `username` / `password` the only way in (`allow_anonymous false`).
    pub fn spawn_secure(username: &str, password: &str) -> Result<Broker, BrokerError> {
        let credentials = mqtt::Credentials {
            username: username.into(),
            password: password.into(),
        };
        Broker::start(BrokerKind::Mosquitto, "", Some(credentials))
    }

    fn start(
        kind: BrokerKind,
        extra_config: &str,
        secure: Option<mqtt::Credentials>,
    ) -> Result<Broker, BrokerError> {
        let program = find(kind)?;
        let start = |reason: String| BrokerError::Start {
            program: kind.program(),
            reason,
        };
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let dir = tempfile::Builder::new()
                .prefix("edgebench-broker-")
                .tempdir()
                .map_err(|e| start(format!("cannot make its directory: {e}")))?;
            let port = free_port().map_err(|e| start(format!("no free port: {e}")))?;
            let tcp = Addr::Tcp {
                host: "127.0.0.1".into(),
                port,
            };
            let mut cmd = Command::new(&program);
            let mut security = mqtt::Security::default();
            let (unix, monitor_port) = match (kind, &secure) {
                (BrokerKind::Mosquitto, Some(credentials)) => {
                    let conf = dir.path().join("mosquitto.conf");
                    let (text, ca_file) =
                        secure_conf(dir.path(), port, credentials).map_err(&start)?;
                    std::fs::write(&conf, format!("{text}{extra_config}\n"))
                        .map_err(|e| start(format!("cannot write its config: {e}")))?;
                    cmd.arg("-c").arg(&conf);
                    security = mqtt::Security {
                        tls: Some(mqtt::Tls {
                            ca_file: Some(ca_file),
                        }),
                        credentials: Some(credentials.clone()),
                    };
                    (None, None)
                }
                (BrokerKind::Mosquitto, None) => {
                    let socket = dir.path().join("mosquitto.sock");
                    let conf = dir.path().join("mosquitto.conf");
                    let text = format!("{}{extra_config}\n", mosquitto_conf(port, &socket));
                    std::fs::write(&conf, text)
                        .map_err(|e| start(format!("cannot write its config: {e}")))?;
                    cmd.arg("-c").arg(&conf);
                    (Some(Addr::Unix(socket)), None)
                }
                (BrokerKind::Nats, _) => {
                    let monitor = free_port()
                        .ok()
                        .filter(|m| *m != port)
                        .ok_or_else(|| start("no second free port for its monitoring".into()))?;
                    let conf = dir.path().join("nats.conf");
                    std::fs::write(
                        &conf,
                        format!("# edgebench's private broker\n{extra_config}\n"),
                    )
                    .map_err(|e| start(format!("cannot write its config: {e}")))?;
                    cmd.arg("-c").arg(&conf).args([
                        "-a",
                        "127.0.0.1",
                        "-p",
                        &port.to_string(),
                        "-m",
                        &monitor.to_string(),
                    ]);
                    (None, Some(monitor))
                }
            };
            // Its log goes to a file, not a pipe: a pipe nobody drains would stall it.
            let log = std::fs::File::create(dir.path().join("broker.log"))
                .map_err(|e| start(format!("cannot make its log file: {e}")))?;
            cmd.current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .process_group(0);
            die_with_parent(&mut cmd);
            let child = cmd
                .spawn()
                .map_err(|e| start(format!("{}: {e}", program.display())))?;
            let mut broker = Broker {
                kind,
                child,
                tcp,
                unix,
                monitor_port,
                security,
                dir,
            };
            match broker.wait_ready() {
                Ok(()) => return Ok(broker),
                Err(reason) => last = reason,
            }
        }
        Err(start(last))
    }

    /// Which broker this is.
    pub fn kind(&self) -> BrokerKind {
        self.kind
    }

    /// Its TCP listener (a secure Mosquitto's TLS listener).
    pub fn tcp(&self) -> &Addr {
        &self.tcp
    }

    /// The URL of its TCP listener, with the TLS and credentials a client needs when it is
    /// secure (`mqtts://USER:PASSWORD@127.0.0.1:PORT?cacert=DIR/ca.crt`).
    pub fn url(&self) -> BusUrl {
        match self.kind {
            BrokerKind::Mosquitto => BusUrl::Mqtt(self.tcp.clone(), self.security.clone()),
            BrokerKind::Nats => BusUrl::Nats(self.tcp.clone()),
        }
    }

    /// Its Unix-socket listener (Mosquitto's; nats-server has none).
    pub fn unix(&self) -> Option<&Addr> {
        self.unix.as_ref()
    }

    /// nats-server's HTTP monitoring port (`/varz`) on 127.0.0.1; Mosquitto has none (its
    /// counters are `$SYS` topics on its listeners).
    pub fn monitor_port(&self) -> Option<u16> {
        self.monitor_port
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls every listener until the broker answers its handshake, or it exits, or time is
    /// up; on failure the broker is stopped and its stderr tail is the reason.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        let addrs: Vec<Addr> = std::iter::once(self.tcp.clone())
            .chain(self.unix.clone())
            .collect();
        let mut last;
        for addr in &addrs {
            loop {
                if let Ok(Some(status)) = self.child.try_wait() {
                    return Err(format!("it exited ({status}): {}", self.stderr_tail()));
                }
                match handshake(self.kind, addr, &self.security) {
                    Ok(()) => break,
                    Err(e) => last = format!("{addr}: {e}"),
                }
                if Instant::now() >= deadline {
                    self.stop();
                    return Err(format!(
                        "no answer within {START_TIMEOUT:?} ({last}): {}",
                        self.stderr_tail()
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }

    /// The last 5 lines the broker logged.
    fn stderr_tail(&mut self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("broker.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(5).collect();
        if lines.is_empty() {
            "no message".into()
        } else {
            lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
        }
    }

    fn stop(&mut self) {
        stop(&mut self.child, STOP_TIMEOUT);
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The broker's binary: on `PATH`, else in `/usr/sbin` (where Debian puts both, and which a
/// user's `PATH` often lacks).
fn find(kind: BrokerKind) -> Result<PathBuf, BrokerError> {
    find_in(kind, find_on_path, Path::new("/usr/sbin"))
}

/// [`find`] with the `PATH` search and the fallback directory given.
fn find_in(
    kind: BrokerKind,
    on_path: impl FnOnce(&Path) -> Option<PathBuf>,
    sbin: &Path,
) -> Result<PathBuf, BrokerError> {
    let name = Path::new(kind.program());
    on_path(name)
        .or_else(|| {
            let p = sbin.join(name);
            crate::transport::child::is_executable(&p).then_some(p)
        })
        .ok_or(BrokerError::NotFound {
            program: kind.program(),
            package: kind.package(),
        })
}

/// EdgeX's `mosquitto-no-auth.conf` (anonymous clients, defaults otherwise), on a private
/// TCP port and a Unix socket, keeping nothing on disk. Started as root, Mosquitto would
/// switch to its own `mosquitto` user, which cannot bind a socket in our private directory:
/// it stays root then (`user root`). `sys_interval 1` (default 10) keeps the `$SYS` counters
/// [`super::stats`] reads fresh; Mosquitto 2.0 republishes once `now - sys_interval >
/// last` in whole seconds, so in practice every 2 s.
fn mosquitto_conf(port: u16, socket: &Path) -> String {
    format!(
        "{}listener {port} 127.0.0.1\n\
         listener 0 {}\n",
        mosquitto_settings(true),
        socket.display()
    )
}

/// What every private Mosquitto's config starts with: who it runs as, whether anonymous
/// clients get in, no persistence, errors and warnings on stderr, fresh `$SYS` counters.
fn mosquitto_settings(allow_anonymous: bool) -> String {
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    format!(
        "# edgebench's private broker\n\
         {}\
         per_listener_settings false\n\
         allow_anonymous {allow_anonymous}\n\
         persistence false\n\
         log_dest stderr\n\
         log_type error\n\
         log_type warning\n\
         sys_interval 1\n",
        if as_root { "user root\n" } else { "" },
    )
}

/// A secure Mosquitto's config, certificates and password file, written into `dir`: the
/// config's text and the CA file a client trusts. Its one listener is TLS on `port`;
/// `per_listener_settings false` makes `allow_anonymous false` and the password file hold
/// for it.
fn secure_conf(
    dir: &Path,
    port: u16,
    credentials: &mqtt::Credentials,
) -> Result<(String, PathBuf), String> {
    let certs = PrivateCa::new()
        .and_then(|ca| ca.write_files(dir))
        .map_err(|e| format!("cannot make its certificates: {e}"))?;
    let passwords = dir.join("passwords");
    password_file(&passwords, credentials)?;
    let text = format!(
        "{}password_file {}\n\
         listener {port} 127.0.0.1\n\
         cafile {}\n\
         certfile {}\n\
         keyfile {}\n",
        mosquitto_settings(false),
        passwords.display(),
        certs.ca_cert.display(),
        certs.server_cert.display(),
        certs.server_key.display(),
    );
    Ok((text, certs.ca_cert))
}

/// Writes Mosquitto's password file for one user with `mosquitto_passwd` (Mosquitto's own
/// hashing, whatever its version prefers), readable by its owner only.
fn password_file(path: &Path, credentials: &mqtt::Credentials) -> Result<(), String> {
    let program = find_on_path(Path::new("mosquitto_passwd"))
        .or_else(|| {
            let p = Path::new("/usr/bin/mosquitto_passwd");
            crate::transport::child::is_executable(p).then(|| p.to_path_buf())
        })
        .ok_or("mosquitto_passwd not found: it comes with Mosquitto (Debian: apt-get install mosquitto)")?;
    std::fs::File::create(path)
        .and_then(|f| f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600)))
        .map_err(|e| format!("cannot make its password file: {e}"))?;
    let out = Command::new(&program)
        .arg("-b")
        .arg(path)
        .args([&credentials.username, &credentials.password])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!(
            "mosquitto_passwd failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// One handshake: an MQTT CONNECT (with `security`'s TLS and user) answered by CONNACK, or
/// NATS's INFO line.
fn handshake(kind: BrokerKind, addr: &Addr, security: &mqtt::Security) -> io::Result<()> {
    match kind {
        BrokerKind::Mosquitto => {
            let options = mqtt::Options {
                client_id: "edgebench-probe".into(),
                keep_alive: Duration::ZERO,
                connect_timeout: Duration::from_millis(500),
                security: security.clone(),
            };
            mqtt::Client::connect(addr, &options)?.disconnect();
            Ok(())
        }
        BrokerKind::Nats => {
            let mut stream = Stream::connect(addr, Duration::from_millis(500))?;
            stream.set_read_timeout(Some(Duration::from_millis(500)))?;
            let mut head = [0u8; 5];
            stream.read_exact(&mut head)?;
            if &head == b"INFO " {
                Ok(())
            } else {
                Err(io::Error::other("not a NATS server (no INFO)"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker installed nowhere is one line naming the binary, the package and the way round.
    #[test]
    fn a_missing_broker_binary_names_its_package() {
        let empty = tempfile::tempdir().unwrap();
        for (kind, says) in [
            (
                BrokerKind::Mosquitto,
                "mosquitto not found on PATH or in /usr/sbin: install it (Debian: apt-get \
                 install mosquitto) or give the bus by URL",
            ),
            (
                BrokerKind::Nats,
                "nats-server not found on PATH or in /usr/sbin: install it (Debian: apt-get \
                 install nats-server) or give the bus by URL",
            ),
        ] {
            let error = find_in(kind, |_| None, empty.path()).unwrap_err();
            assert_eq!(error.to_string(), says);
        }
        // Found in the fallback directory when PATH lacks it.
        let program = empty.path().join("mosquitto");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        assert_eq!(
            find_in(BrokerKind::Mosquitto, |_| None, empty.path()).unwrap(),
            program
        );
    }
}
