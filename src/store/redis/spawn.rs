//! A `redis-server` that this process starts, owns and stops.
//!
//! [`RedisServer::spawn`] runs `redis-server` from `PATH` (or from `EDGEBENCH_REDIS_SERVER`,
//! see [`REDIS_SERVER_ENV`]) with persistence off, a private temporary directory for its
//! files, and either a free TCP port on 127.0.0.1 or a Unix socket in that directory. It
//! returns once the server answers `PING` and `INFO server` names the spawned process: a free
//! port can be taken by another Redis between our probe and the child's bind, and that server
//! must not be benchmarked (the benchmarks scrub its keys). Dropping the guard stops the server (SIGTERM, then
//! SIGKILL after 2 s) and removes the directory.
//!
//! [`RedisServer::spawn_with`] takes [`ServerOptions`]: persistence (`appendonly`,
//! `appendfsync`, `save`) and replicas. Replicas are more `redis-server`s, spawned the same
//! way (private directory, free port or own socket, stopped with the primary), started with
//! `--replicaof` the primary's TCP port, and waited for until the replica reports
//! `master_link_status:up` and the primary lists it `online`. Redis 7.0 cannot replicate over
//! a Unix socket, so a Unix-socket primary with replicas also listens on a free 127.0.0.1
//! port, which only its replicas use; the benchmarks still go through the socket.
//!
//! Invariants: the server never outlives edgebench. It runs in its own process group, so a
//! terminal's Ctrl-C reaches edgebench alone, and edgebench stops the server in order. It
//! also gets `PR_SET_PDEATHSIG = SIGKILL`, so it dies if edgebench is killed outright.

use std::fs::{self, File};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::transport::certs::{write_private, PrivateCa};
pub use crate::transport::child::{die_with_parent, free_port};
use crate::transport::child::{find_on_path, is_executable};
use crate::transport::{Access, Credentials, Endpoint, ServerSecurity, TlsOptions};

/// Environment variable naming the `redis-server` binary to spawn, instead of the one on
/// `PATH`. Its value is a path (anything containing `/`, e.g. `/opt/redis-7.2/bin/redis-server`)
/// or a program name looked up on `PATH` (e.g. `redis-server-7.2`). Unset or empty means
/// `redis-server`.
pub const REDIS_SERVER_ENV: &str = "EDGEBENCH_REDIS_SERVER";

/// How long a spawned server gets to answer PING. Startup without persistence takes a few ms;
/// 5 s leaves room for a loaded CI machine.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the startup loop polls; small against the startup time, so it costs little.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// Per-attempt connect timeout while polling.
const PING_TIMEOUT: Duration = Duration::from_millis(200);
/// How long a stopping server gets after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Attempts to start on a TCP port: another process can take the free port between our
/// probe and redis-server's bind (then the child exits, or another server answers).
const TCP_ATTEMPTS: usize = 3;
/// `sun_path` holds 108 bytes, NUL included.
const MAX_SOCKET_PATH: usize = 107;

/// What a spawned server listens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// A free TCP port on 127.0.0.1.
    Tcp,
    /// A Unix socket in the server's temporary directory (no TCP port).
    Unix,
}

/// The same choice for edgebench's own RESP server: a free TCP port on 127.0.0.1, or a Unix
/// socket in a temporary directory of its own.
impl From<Listen> for crate::server::Bind {
    fn from(listen: Listen) -> crate::server::Bind {
        match listen {
            Listen::Tcp => crate::server::Bind::Tcp(([127, 0, 0, 1], 0).into()),
            Listen::Unix => crate::server::Bind::TempUnixSocket,
        }
    }
}

/// Most replicas a spawned target takes: each is another redis-server on this machine.
pub const MAX_REPLICAS: u8 = 5;
/// How long replicas get to finish their first sync with the primary (an empty dataset:
/// milliseconds; the margin is for a loaded CI machine).
const REPLICA_SYNC_TIMEOUT: Duration = Duration::from_secs(10);

/// When a server with `appendonly yes` calls fsync on its append-only file (redis.conf's
/// `appendfsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppendFsync {
    /// After every write command.
    Always,
    /// Once a second (Redis's default).
    #[default]
    EverySec,
    /// Never; the OS flushes when it likes.
    No,
}

impl AppendFsync {
    /// The redis.conf value.
    pub fn as_str(self) -> &'static str {
        match self {
            AppendFsync::Always => "always",
            AppendFsync::EverySec => "everysec",
            AppendFsync::No => "no",
        }
    }
}

/// One redis.conf `save <seconds> <changes>` point: snapshot (RDB) after `seconds` if at least
/// `changes` keys changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavePoint {
    /// Seconds since the last save.
    pub seconds: u32,
    /// Changes since the last save.
    pub changes: u32,
}

/// How a spawned `redis-server` is configured beyond where it listens. The default is what a
/// spawned server always was: persistence off, no replicas.
///
/// [`ServerOptions::persistence_args`] says nothing about listening or replication, so any
/// spawner (single servers here, cluster nodes) can pass it to its servers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerOptions {
    /// `appendonly yes`: log every write to the append-only file.
    pub appendonly: bool,
    /// When the append-only file is fsynced (only with `appendonly`).
    pub appendfsync: AppendFsync,
    /// RDB snapshot points; empty means no snapshots (`save ""`).
    pub save: Vec<SavePoint>,
    /// Replicas of the server, at most [`MAX_REPLICAS`].
    pub replicas: u8,
}

impl ServerOptions {
    /// The `redis-server` arguments for the persistence settings: `--save`, `--appendonly`
    /// and `--appendfsync` (always all three, so the server's own config file cannot
    /// turn persistence on behind the run's back).
    pub fn persistence_args(&self) -> Vec<String> {
        let save = self
            .save
            .iter()
            .map(|p| format!("{} {}", p.seconds, p.changes))
            .collect::<Vec<_>>()
            .join(" ");
        let appendonly = if self.appendonly { "yes" } else { "no" };
        [
            "--save",
            &save,
            "--appendonly",
            appendonly,
            "--appendfsync",
            self.appendfsync.as_str(),
        ]
        .map(str::to_string)
        .to_vec()
    }

    /// Whether these are the defaults (persistence off, no replicas).
    pub fn is_default(&self) -> bool {
        *self == ServerOptions::default()
    }
}

/// As the run header shows it, e.g. `1 replica, appendonly (fsync always), save 60:1000`.
impl std::fmt::Display for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        match self.replicas {
            0 => {}
            1 => parts.push("1 replica".to_string()),
            n => parts.push(format!("{n} replicas")),
        }
        if self.appendonly {
            parts.push(format!("appendonly (fsync {})", self.appendfsync.as_str()));
        }
        if !self.save.is_empty() {
            let points: Vec<String> = self
                .save
                .iter()
                .map(|p| format!("{}:{}", p.seconds, p.changes))
                .collect();
            parts.push(format!("save {}", points.join("+")));
        }
        if parts.is_empty() {
            parts.push("no persistence, no replicas".to_string());
        }
        f.write_str(&parts.join(", "))
    }
}

/// Why a server could not be spawned. Each message is one line that names the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No `redis-server` on `PATH`, and `EDGEBENCH_REDIS_SERVER` unset.
    #[error(
        "redis-server not found on PATH: install it (apt-get install redis-server) or pass \
         --target redis://HOST:PORT"
    )]
    NotFound,
    /// `EDGEBENCH_REDIS_SERVER` names no executable.
    #[error(
        "EDGEBENCH_REDIS_SERVER={value} is not an executable file: point it at a redis-server \
         binary, or unset it to use redis-server from PATH"
    )]
    BadEnvBinary {
        /// The variable's value.
        value: String,
    },
    /// Setting up the server's directory, port or log files failed.
    #[error("cannot prepare redis-server: {what}: {error}")]
    Prepare {
        /// What was being done, e.g. "create a temporary directory".
        what: &'static str,
        /// The OS error.
        error: io::Error,
    },
    /// The process could not be started.
    #[error("cannot start {binary}: {error}")]
    Start {
        /// The binary that was run.
        binary: String,
        /// The OS error.
        error: io::Error,
    },
    /// The server exited before answering PING.
    #[error("redis-server on {endpoint} exited during startup ({status}): {last_log_line}")]
    Exited {
        /// Where it was to listen.
        endpoint: Endpoint,
        /// How it exited.
        status: ExitStatus,
        /// The last line it logged, which usually says why.
        last_log_line: String,
    },
    /// Another server answers on the endpoint: it took the port before the child bound it.
    #[error(
        "redis-server on {endpoint}: another server answers there (process_id {}, not the \
         spawned pid {pid}), it took the port first; run again (if EDGEBENCH_REDIS_SERVER is a \
         wrapper script, make it exec redis-server)",
        answered.map_or_else(|| "unknown".to_string(), |p| p.to_string())
    )]
    PortTaken {
        /// Where the child was to listen.
        endpoint: Endpoint,
        /// The spawned child's pid.
        pid: u32,
        /// The `process_id` the answering server reported, if any.
        answered: Option<u32>,
    },
    /// A replica did not finish its first sync with the primary in time.
    #[error(
        "replica on {endpoint} did not finish its first sync with the primary within {}s \
         ({state}); run again, or use fewer replicas",
        REPLICA_SYNC_TIMEOUT.as_secs()
    )]
    ReplicaSync {
        /// Where the replica listens.
        endpoint: Endpoint,
        /// What the replica and primary last said about the link.
        state: String,
    },
    /// The server did not answer PING in time.
    #[error(
        "redis-server on {endpoint} did not answer PING within {}s (last log line: \
         {last_log_line})",
        START_TIMEOUT.as_secs()
    )]
    Timeout {
        /// Where it was to listen.
        endpoint: Endpoint,
        /// The last line it logged.
        last_log_line: String,
    },
}

/// A running `redis-server` owned by this process; dropping it stops the server.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    endpoint: Endpoint,
    /// How clients get in (TLS, an ACL user).
    access: Access,
    /// The TCP port replicas reach it on (its endpoint's port, or the extra port of a
    /// Unix-socket primary with replicas).
    tcp_port: Option<u16>,
    /// Its replicas; each stops when this guard's fields drop, after the primary.
    replicas: Vec<RedisServer>,
    /// What it was spawned with.
    options: ServerOptions,
    /// What it requires of clients (TLS, a user).
    security: ServerSecurity,
    // Dropped after `Drop::drop` has stopped the server, which removes the directory.
    dir: TempDir,
}

impl RedisServer {
    /// Starts a server listening on `listen` and waits until it answers PING (itself, not
    /// another server on the same port).
    ///
    /// PDEATHSIG follows the *thread* that spawns the server, not the process: if that
    /// thread exits, the kernel kills the server even though edgebench still runs. Spawn
    /// from a thread that outlives the guard (main, or the test's own thread).
    pub fn spawn(listen: Listen) -> Result<RedisServer, SpawnError> {
        RedisServer::spawn_with(listen, &ServerOptions::default())
    }

    /// Starts a server listening on `listen`, configured by `options`, and its replicas
    /// (each on a free TCP port, or a Unix socket of its own when `listen` is `Unix`, with
    /// the same persistence settings). Returns once the primary answers PING and every
    /// replica has finished its first sync. The same thread rule as [`RedisServer::spawn`].
    pub fn spawn_with(listen: Listen, options: &ServerOptions) -> Result<RedisServer, SpawnError> {
        RedisServer::spawn_secured(listen, options, &ServerSecurity::default())
    }

    /// [`RedisServer::spawn_with`], and the servers require what `security` says: TLS only
    /// (certificates of a private CA made now, one CA for the primary and its replicas, which
    /// replicate over TLS), and an ACL user (the replicas authenticate as it to the primary).
    /// [`RedisServer::access`] says how to get in.
    pub fn spawn_secured(
        listen: Listen,
        options: &ServerOptions,
        security: &ServerSecurity,
    ) -> Result<RedisServer, SpawnError> {
        let binary = redis_server_binary()?;
        if security.tls && listen == Listen::Unix {
            return Err(SpawnError::Prepare {
                what: "listen with TLS",
                error: io::Error::other(
                    "TLS is spoken on TCP only (redis-server's Unix socket is plain text): use \
                     redis-tcp?tls=yes",
                ),
            });
        }
        let ca = match security.tls {
            true => Some(PrivateCa::new().map_err(|error| SpawnError::Prepare {
                what: "make a private CA",
                error,
            })?),
            false => None,
        };
        let mut secured = Secured {
            ca: ca.as_ref(),
            user: security.user.as_ref(),
            replica: false,
        };
        let mut args = options.persistence_args();
        let with_replicas = options.replicas > 0;
        if with_replicas {
            // Diskless sync starts after a 5 s delay by default (to wait for more replicas);
            // ours are all started at once and wait for each other's sync anyway.
            args.extend(["--repl-diskless-sync-delay", "0"].map(str::to_string));
        }
        let mut primary = Self::spawn_retrying(&binary, listen, with_replicas, &args, &secured)?;
        primary.options = options.clone();
        primary.security = security.clone();
        let Some(port) = primary.tcp_port.filter(|_| with_replicas) else {
            return Ok(primary);
        };
        let mut replica_args = options.persistence_args();
        replica_args.extend(["--replicaof", "127.0.0.1", &port.to_string()].map(str::to_string));
        secured.replica = true;
        for _ in 0..options.replicas {
            let mut replica =
                Self::spawn_retrying(&binary, listen, false, &replica_args, &secured)?;
            replica.options = ServerOptions {
                replicas: 0,
                ..options.clone()
            };
            replica.security = security.clone();
            // Pushed first, so an error below still stops the replica with the primary.
            primary.replicas.push(replica);
        }
        primary.wait_replicas_online()?;
        Ok(primary)
    }

    /// One server (no replicas) with `args` after edgebench's own defaults (a later
    /// `--name value` wins): a Redis Cluster node's settings, say, with
    /// [`ServerOptions::persistence_args`] among them.
    pub fn spawn_with_args(listen: Listen, args: &[String]) -> Result<RedisServer, SpawnError> {
        Self::spawn_retrying(
            &redis_server_binary()?,
            listen,
            false,
            args,
            &Secured::default(),
        )
    }

    /// How a client gets in: the TLS files of its private CA and its ACL user, if any.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// What the server was spawned with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// What it requires of clients.
    pub fn security(&self) -> &ServerSecurity {
        &self.security
    }

    /// The replicas, in the order they were started.
    pub fn replicas(&self) -> &[RedisServer] {
        &self.replicas
    }

    /// One server, retried on another port when a TCP port was taken before it bound it.
    fn spawn_retrying(
        binary: &Path,
        listen: Listen,
        extra_tcp: bool,
        args: &[String],
        secured: &Secured<'_>,
    ) -> Result<RedisServer, SpawnError> {
        let attempts = match listen {
            Listen::Unix if !extra_tcp => 1,
            _ => TCP_ATTEMPTS,
        };
        let mut attempt = 1;
        loop {
            match Self::spawn_once(binary, listen, extra_tcp, args, secured) {
                // Most likely the port was taken before redis-server bound it: try another.
                Err(SpawnError::Exited { .. } | SpawnError::PortTaken { .. })
                    if attempt < attempts =>
                {
                    attempt += 1
                }
                result => return result,
            }
        }
    }

    /// Where the server listens.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint.clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's private directory (log, socket); removed when the guard drops.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A server on `listen`; a Unix-socket one also on a free TCP port when `extra_tcp`.
    fn spawn_once(
        binary: &Path,
        listen: Listen,
        extra_tcp: bool,
        args: &[String],
        secured: &Secured<'_>,
    ) -> Result<RedisServer, SpawnError> {
        let port = match listen {
            Listen::Unix if !extra_tcp => None,
            _ => Some(free_port().map_err(|error| SpawnError::Prepare {
                what: "find a free port on 127.0.0.1",
                error,
            })?),
        };
        Self::spawn_at(binary, port, listen, args, secured)
    }

    /// Starts a server on TCP `port` (`listen` is `Tcp`), or on a Unix socket (`listen` is
    /// `Unix`; then also on `port` if given), with `args` after edgebench's own. `args` comes
    /// last, so its settings win over the defaults set here. With `secured`, its TLS
    /// certificates and ACL file are written into its private directory first.
    fn spawn_at(
        binary: &Path,
        port: Option<u16>,
        listen: Listen,
        args: &[String],
        secured: &Secured<'_>,
    ) -> Result<RedisServer, SpawnError> {
        let prepare = |what| move |error| SpawnError::Prepare { what, error };
        let mut dir = temp_dir().map_err(prepare("create a temporary directory"))?;
        if listen == Listen::Unix
            && dir.path().join("redis.sock").as_os_str().len() > MAX_SOCKET_PATH
        {
            // $TMPDIR is too deep for a socket path; /tmp is always short enough.
            dir = tempfile::Builder::new()
                .prefix("edgebench-redis-")
                .tempdir_in("/tmp")
                .map_err(prepare("create a temporary directory in /tmp"))?;
        }
        let mut cmd = Command::new(binary);
        // A config file comes first on redis-server's command line; it holds what must not
        // show in `ps` (the ACL file's path, the password replicas authenticate with).
        let (access, secure_args) = secured
            .prepare(dir.path(), &mut cmd)
            .map_err(prepare("write its TLS certificates and ACL files"))?;
        let endpoint = match (listen, port) {
            (Listen::Tcp, Some(port)) if access.tls.is_some() => {
                cmd.args(["--port", "0", "--tls-port"])
                    .arg(port.to_string());
                Endpoint::Tcp {
                    host: "127.0.0.1".to_string(),
                    port,
                }
            }
            (Listen::Tcp, Some(port)) => {
                cmd.arg("--port").arg(port.to_string());
                Endpoint::Tcp {
                    host: "127.0.0.1".to_string(),
                    port,
                }
            }
            (Listen::Tcp, None) => unreachable!("a TCP server is spawned with a port"),
            (Listen::Unix, _) => {
                let socket = dir.path().join("redis.sock");
                cmd.arg("--port")
                    .arg(port.unwrap_or(0).to_string())
                    .arg("--unixsocket")
                    .arg(&socket)
                    .args(["--unixsocketperm", "700"]);
                Endpoint::Unix(socket)
            }
        };
        cmd.args(secure_args);
        // `--save ""` and `--appendonly no`: a benchmark store is scratch, and a background
        // save would disturb the timings.
        cmd.args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(dir.path().join("redis.log"))
            .args(["--daemonize", "no"])
            .args(args);
        // Config errors are printed before the log file is opened, so keep stderr too.
        let stderr = File::create(dir.path().join("stderr.log"))
            .map_err(prepare("create its stderr file"))?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0);
        // PDEATHSIG fires when the spawning *thread* exits (see `spawn`).
        die_with_parent(&mut cmd);
        let child = cmd.spawn().map_err(|error| SpawnError::Start {
            binary: binary.display().to_string(),
            error,
        })?;
        // From here on, returning drops `server`, which stops the process and removes `dir`.
        let mut server = RedisServer {
            child,
            endpoint,
            access,
            tcp_port: port,
            replicas: Vec::new(),
            options: ServerOptions::default(),
            security: ServerSecurity::default(),
            dir,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), SpawnError> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(SpawnError::Exited {
                    endpoint: self.endpoint.clone(),
                    status,
                    last_log_line: self.last_log_line(),
                });
            }
            // Any server that answers is ours only if it reports the child's pid.
            if let Ok(answered) =
                crate::transport::ping_pid(&self.endpoint, &self.access, PING_TIMEOUT)
            {
                let pid = self.child.id();
                if answered == Some(pid) {
                    return Ok(());
                }
                return Err(SpawnError::PortTaken {
                    endpoint: self.endpoint.clone(),
                    pid,
                    answered,
                });
            }
            if Instant::now() >= deadline {
                return Err(SpawnError::Timeout {
                    endpoint: self.endpoint.clone(),
                    last_log_line: self.last_log_line(),
                });
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Waits until every replica says `master_link_status:up` and the primary lists as many
    /// replicas `online` (a replica is up before the primary has moved it from
    /// `wait_bgsave` to `online`).
    fn wait_replicas_online(&self) -> Result<(), SpawnError> {
        let deadline = Instant::now() + REPLICA_SYNC_TIMEOUT;
        for replica in &self.replicas {
            loop {
                let state = replication_info(&replica.endpoint, &replica.access);
                if state
                    .as_deref()
                    .is_ok_and(|info| info_field(info, "master_link_status") == Some("up"))
                {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(SpawnError::ReplicaSync {
                        endpoint: replica.endpoint.clone(),
                        state: state.map_or_else(
                            |e| e,
                            |info| {
                                format!(
                                    "master_link_status:{}",
                                    info_field(&info, "master_link_status").unwrap_or("?")
                                )
                            },
                        ),
                    });
                }
                std::thread::sleep(POLL_INTERVAL);
            }
        }
        loop {
            let online = replication_info(&self.endpoint, &self.access)
                .map(|info| online_replicas(&info))
                .unwrap_or(0);
            if online >= self.replicas.len() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(SpawnError::ReplicaSync {
                    endpoint: self.endpoint.clone(),
                    state: format!(
                        "the primary lists {online} of {} replicas online",
                        self.replicas.len()
                    ),
                });
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// The last non-empty line of the server's log, or of its stderr when the log is empty.
    fn last_log_line(&self) -> String {
        ["redis.log", "stderr.log"]
            .iter()
            .filter_map(|file| fs::read_to_string(self.dir.path().join(file)).ok())
            .find_map(|text| {
                text.lines()
                    .rev()
                    .map(str::trim)
                    .find(|line| !line.is_empty())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "(nothing logged)".to_string())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // SIGTERM lets redis-server shut down cleanly; SIGKILL after STOP_TIMEOUT.
        crate::transport::child::stop(&mut self.child, STOP_TIMEOUT);
    }
}

/// What one server of a secured target is given: certificates from the target's CA (each
/// server its own, signed by the one CA, so replicas and primary trust each other), and the
/// ACL user; a replica also authenticates to its primary.
#[derive(Default)]
struct Secured<'a> {
    ca: Option<&'a PrivateCa>,
    user: Option<&'a Credentials>,
    replica: bool,
}

impl Secured<'_> {
    /// Writes the server's TLS files and ACL file into `dir` and, when there are users, a
    /// config file (its path is `cmd`'s first argument, as redis-server wants it). Returns how
    /// clients get in and the TLS arguments.
    ///
    /// The `default` user is protected as EdgeX's secure mode protects it (security-bootstrapper
    /// writes `user default on allkeys allchannels +@all -@dangerous #<sha256 of the password>`):
    /// the same password as edgebench's user, without the dangerous commands. edgebench's own
    /// user has every key, channel and command: the benchmarks scrub with SCAN and DEL and read
    /// INFO, which `-@dangerous` would refuse.
    fn prepare(&self, dir: &Path, cmd: &mut Command) -> io::Result<(Access, Vec<String>)> {
        let mut access = Access::default();
        let mut args = Vec::new();
        if let Some(user) = self.user {
            let name = user.user.as_deref().unwrap_or("default");
            let password = &user.password;
            let acl = dir.join("users.acl");
            write_private(
                &acl,
                &format!(
                    "user default on allkeys allchannels +@all -@dangerous >{password}\n\
                     user {name} on allkeys allchannels +@all >{password}\n"
                ),
            )?;
            let mut conf = format!("aclfile {}\n", acl.display());
            if self.replica {
                conf.push_str(&format!("masteruser {name}\nmasterauth {password}\n"));
            }
            let conf_path = dir.join("secure.conf");
            write_private(&conf_path, &conf)?;
            cmd.arg(&conf_path);
            access.credentials = Some(user.clone());
        }
        if let Some(ca) = self.ca {
            let files = ca.write_files(dir)?;
            let path = |p: &Path| p.display().to_string();
            args = vec![
                "--tls-cert-file".to_string(),
                path(&files.server_cert),
                "--tls-key-file".to_string(),
                path(&files.server_key),
                "--tls-ca-cert-file".to_string(),
                path(&files.ca_cert),
                // A replica is the primary's client: it shows the client certificate (the
                // server one is for serverAuth only), and replicates over TLS.
                "--tls-client-cert-file".to_string(),
                path(&files.client_cert),
                "--tls-client-key-file".to_string(),
                path(&files.client_key),
                "--tls-replication".to_string(),
                "yes".to_string(),
            ];
            access.tls = Some(TlsOptions::private(
                &files.ca_cert,
                &files.client_cert,
                &files.client_key,
            ));
        }
        Ok((access, args))
    }
}

/// `INFO replication` of the server at `endpoint`.
fn replication_info(endpoint: &Endpoint, access: &Access) -> Result<String, String> {
    let mut conn = crate::transport::connect_with(endpoint, access, PING_TIMEOUT)
        .map_err(|e| e.to_string())?;
    redis::cmd("INFO")
        .arg("replication")
        .query(&mut conn)
        .map_err(|e| e.to_string())
}

/// The value of `name:` in an `INFO` reply.
pub(crate) fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    })
}

/// How many `slaveN:` lines of a primary's `INFO replication` say `state=online`.
pub(crate) fn online_replicas(info: &str) -> usize {
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("state=online"))
        .count()
}

/// The `redis-server` to run: `EDGEBENCH_REDIS_SERVER`, or `redis-server` on `PATH`.
pub(crate) fn redis_server_binary() -> Result<PathBuf, SpawnError> {
    match std::env::var_os(REDIS_SERVER_ENV).filter(|v| !v.is_empty()) {
        Some(value) => {
            let found = if value.as_encoded_bytes().contains(&b'/') {
                Some(PathBuf::from(&value)).filter(|p| is_executable(p))
            } else {
                find_on_path(Path::new(&value))
            };
            found.ok_or_else(|| SpawnError::BadEnvBinary {
                value: value.to_string_lossy().into_owned(),
            })
        }
        None => find_on_path(Path::new("redis-server")).ok_or(SpawnError::NotFound),
    }
}

fn temp_dir() -> io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix("edgebench-redis-")
        .tempdir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_get(conn: &mut redis::Connection, name: &str) -> String {
        let reply: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query(conn)
            .unwrap_or_else(|e| panic!("CONFIG GET {name}: {e}"));
        assert_eq!(reply.len(), 2, "{reply:?}");
        reply[1].clone()
    }

    fn connect(server: &RedisServer) -> redis::Connection {
        crate::transport::connect(&server.endpoint(), PING_TIMEOUT)
            .unwrap_or_else(|e| panic!("{}: {e}", server.endpoint()))
    }

    #[test]
    fn persistence_args_are_the_three_settings_with_defaults_off() {
        assert_eq!(
            ServerOptions::default().persistence_args(),
            [
                "--save",
                "",
                "--appendonly",
                "no",
                "--appendfsync",
                "everysec"
            ]
        );
        let options = ServerOptions {
            appendonly: true,
            appendfsync: AppendFsync::Always,
            save: vec![
                SavePoint {
                    seconds: 900,
                    changes: 1,
                },
                SavePoint {
                    seconds: 60,
                    changes: 1000,
                },
            ],
            replicas: 2,
        };
        assert_eq!(
            options.persistence_args(),
            [
                "--save",
                "900 1 60 1000",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always"
            ]
        );
        assert_eq!(
            options.to_string(),
            "2 replicas, appendonly (fsync always), save 900:1+60:1000"
        );
        assert_eq!(
            ServerOptions::default().to_string(),
            "no persistence, no replicas"
        );
    }

    /// Needs redis-server, like the conformance suite: fails, not skips, without it.
    #[test]
    fn persistence_options_are_what_the_spawned_server_runs_with() {
        let defaults = RedisServer::spawn(Listen::Unix).unwrap_or_else(|e| panic!("{e}"));
        let mut conn = connect(&defaults);
        assert_eq!(config_get(&mut conn, "appendonly"), "no");
        assert_eq!(config_get(&mut conn, "save"), "");
        for (listen, fsync) in [
            (Listen::Tcp, AppendFsync::Always),
            (Listen::Unix, AppendFsync::No),
        ] {
            let options = ServerOptions {
                appendonly: true,
                appendfsync: fsync,
                save: vec![SavePoint {
                    seconds: 60,
                    changes: 1000,
                }],
                replicas: 0,
            };
            let server =
                RedisServer::spawn_with(listen, &options).unwrap_or_else(|e| panic!("{e}"));
            let mut conn = connect(&server);
            assert_eq!(config_get(&mut conn, "appendonly"), "yes");
            assert_eq!(config_get(&mut conn, "appendfsync"), fsync.as_str());
            assert_eq!(config_get(&mut conn, "save"), "60 1000");
            // The append-only file is in the server's private directory.
            assert_eq!(config_get(&mut conn, "dir"), server.dir().to_string_lossy());
        }
    }

    /// Needs redis-server. A replica holds what was written to its primary, on both
    /// transports, and every replica and its directory are gone after the guard drops.
    #[test]
    fn replicas_sync_from_the_primary_and_stop_with_it() {
        for listen in [Listen::Tcp, Listen::Unix] {
            let options = ServerOptions {
                replicas: 2,
                ..ServerOptions::default()
            };
            let primary =
                RedisServer::spawn_with(listen, &options).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(primary.replicas().len(), 2);
            let mut conn = connect(&primary);
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut conn)
                .unwrap();
            assert_eq!(info_field(&info, "connected_slaves"), Some("2"), "{info}");
            assert_eq!(online_replicas(&info), 2, "{info}");
            redis::cmd("SET").arg("k").arg("v").exec(&mut conn).unwrap();
            // WAIT returns once both replicas acknowledged the write.
            let acked: i64 = redis::cmd("WAIT")
                .arg(2)
                .arg(5000)
                .query(&mut conn)
                .unwrap();
            assert_eq!(acked, 2);
            let mut kept = vec![(primary.pid(), primary.dir().to_path_buf())];
            for replica in primary.replicas() {
                assert_eq!(
                    replica.endpoint().to_string().starts_with("redis://"),
                    listen == Listen::Tcp
                );
                let mut conn = connect(replica);
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut conn)
                    .unwrap();
                assert_eq!(info_field(&info, "role"), Some("slave"), "{info}");
                let value: Option<String> = redis::cmd("GET").arg("k").query(&mut conn).unwrap();
                assert_eq!(value.as_deref(), Some("v"));
                kept.push((replica.pid(), replica.dir().to_path_buf()));
            }
            drop(conn);
            drop(primary);
            for (pid, dir) in kept {
                assert!(!dir.exists(), "{} left behind", dir.display());
                let status = fs::read_to_string(format!("/proc/{pid}/status"));
                assert!(
                    status.map_or(true, |s| !s.contains("redis-server")),
                    "redis-server {pid} still running"
                );
            }
        }
    }

    /// Needs redis-server, like the conformance suite: fails, not skips, without it.
    #[test]
    fn a_port_answered_by_another_server_is_not_taken_for_the_spawned_one() {
        let first = RedisServer::spawn(Listen::Tcp).unwrap_or_else(|e| panic!("{e}"));
        let Endpoint::Tcp { port, .. } = first.endpoint() else {
            panic!("a TCP server on {}", first.endpoint());
        };
        let binary = redis_server_binary().unwrap_or_else(|e| panic!("{e}"));
        // The second child cannot bind the port; whether it exits before the first server
        // answers our PING is a race, and either way the spawn must fail.
        match RedisServer::spawn_at(&binary, Some(port), Listen::Tcp, &[], &Secured::default()) {
            Err(e @ SpawnError::PortTaken { .. }) => {
                let message = e.to_string();
                assert!(!message.contains('\n'), "{message}");
                assert!(
                    message.contains(&format!("process_id {}", first.pid())),
                    "{message}"
                );
            }
            Err(SpawnError::Exited { .. }) => {}
            Err(e) => panic!("unexpected error: {e}"),
            Ok(second) => panic!(
                "spawned pid {} accepted the server of pid {}",
                second.pid(),
                first.pid()
            ),
        }
        // The first server is untouched.
        assert_eq!(
            crate::transport::ping_pid(&first.endpoint(), first.access(), PING_TIMEOUT),
            Ok(Some(first.pid()))
        );
    }
}
