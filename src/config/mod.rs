//! Stage two of the command line: strings from [`crate::cli`] become typed configuration.
//! Every error names the flag, the value and the fix, on one line ([`ConfigError`], shared by
//! every command). What several commands share lives here (`--wait`, lists of names,
//! `--format`), with `serve`'s and `coredata-service`'s configs; each workload's own config is
//! in its slice (`coredata::config`, `fleet::config`, `kv::options`, `perf::args`).

use std::path::PathBuf;

use crate::cli::{CoreDataServiceArgs, ServeArgs, ServeIo};
use crate::report::Format;
use crate::target::layout::{LAYOUT_NAMES, VIA_NAMES};
use crate::target::{self, TargetSpec};

/// A flag's value was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `--target`.
    #[error("--target: {0}")]
    Target(#[from] target::TargetError),
    /// `--benchtime`.
    #[error("--benchtime: {0}")]
    BenchTime(#[from] crate::runner::DurationError),
    /// `--count`.
    #[error("--count {0:?}: expected a whole number from 1 to 1000")]
    Count(String),
    /// `--wait`.
    #[error("--wait {0:?}: expected a number of replicas from 1 to 100")]
    Wait(String),
    /// `--bench`.
    #[error("--bench {pattern:?}: not a regular expression ({reason}); e.g. --bench 'Count|ById'")]
    Bench {
        /// The pattern.
        pattern: String,
        /// What the regex parser said (first line).
        reason: String,
    },
    /// `serve --user` or `--aclfile` (the message names the flag, the line and the fix).
    #[error("{0}")]
    Acl(String),
    /// `serve --tls-*` (the message names the flag or file and the fix).
    #[error("{0}")]
    Tls(String),
    /// A `serve` flag.
    #[error("--{flag} {value:?}: {fix}")]
    Serve {
        /// The flag, without dashes.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is expected.
        fix: &'static str,
    },
    /// `--bus` or `--qos` (the message names the flag and the fix).
    #[error("{0}")]
    Bus(String),
    /// A fleet setting that is not what it should be: where it came from, its value, the fix.
    #[error("{0}")]
    FleetSetting(String),
    /// `--run-id` or `--start-at` (the message names the flag).
    #[error("{0}")]
    MultiHost(String),
    /// A fleet file that cannot be read.
    #[error("--config {0}")]
    FleetFile(String),
    /// A fleet setting out of bounds: `FleetSpec::check`'s message starts with the
    /// setting's flag name.
    #[error("--{0}")]
    FleetSpec(String),
    /// `coredata-service --store`.
    #[error("--store {value:?}: {reason}")]
    Store {
        /// The value given.
        value: String,
        /// Why it is not a target.
        reason: String,
    },
    /// `--baseline` names no column of the run.
    #[error("--baseline {name:?}: no such column; use one of {columns}")]
    Baseline {
        /// The name given.
        name: String,
        /// The run's columns, comma-separated.
        columns: String,
    },
    /// `--mongo-layout`.
    #[error("--mongo-layout {0:?}: use --layout 2018 (embedded) or --layout 2018-referenced")]
    MongoLayout(String),
    /// `--fidelity`.
    #[error("--fidelity {0:?}: use --layout 2018-exact (2018) or --layout 2018-referenced")]
    Fidelity(String),
    /// `--fidelity 2018` with `--mongo-layout embedded`.
    #[error(
        "--fidelity 2018 with --mongo-layout embedded: the 2018 client kept readings in their \
         own collection; use --layout 2018-exact"
    )]
    FidelityLayout,
    /// `--mongo-layout`/`--fidelity` with `--layout`.
    #[error("--mongo-layout and --fidelity are the old spellings of --layout; give --layout only")]
    OldAndNewLayout,
    /// `--layout`.
    #[error("--layout {0:?}: use a comma-separated list of {names}", names = LAYOUT_NAMES)]
    Layout(String),
    /// `--via`.
    #[error("--via {0:?}: use a comma-separated list of {names}", names = VIA_NAMES)]
    Via(String),
    /// The one kind of target asked for has no EdgeX layout, and EdgeX data was asked for.
    #[error("--layout {layout} --via {via}: {why}")]
    NoEdgexLayout {
        /// `--layout`.
        layout: String,
        /// `--via`.
        via: String,
        /// Which target has none, and the one to use instead.
        why: &'static str,
    },
    /// No target has any of the layouts asked for.
    #[error(
        "--layout {layout} --via {via}: no target has that layout; edgex3 takes Redis targets \
         and the engine (redis-tcp, embedded, ...), edgex4 takes pg-tcp, pg-uds, postgres://, \
         sqlite and mongodb://, and --via http serves those"
    )]
    NoColumns {
        /// `--layout`.
        layout: String,
        /// `--via`.
        via: String,
    },
    /// `--format`.
    #[error(
        "--format {0:?}: unknown format; use a comma-separated list of md, go, pct, csv, json"
    )]
    Format(String),
    /// `--parallel`.
    #[error("--parallel {value:?}: {reason}; e.g. --parallel 4 or --parallel 1,2,4,8")]
    Parallel {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

pub use crate::transport::MAX_WAIT;

/// `--wait N` on every target without its own `?wait=`; a note when the run compares
/// persistence or replication and also has in-process engine columns (whose persistence is
/// out of scope).
pub fn apply_wait(
    mut targets: Vec<TargetSpec>,
    wait: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetSpec>, ConfigError> {
    if let Some(value) = wait {
        let n = value
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_WAIT).contains(n))
            .ok_or_else(|| ConfigError::Wait(value.to_string()))?;
        for spec in targets.iter_mut().filter(|s| s.wait == 0) {
            spec.wait = n;
        }
    }
    let compares = targets
        .iter()
        .any(|s| s.wait > 0 || s.kind.configures_server());
    let engines: Vec<&str> = targets
        .iter()
        .filter(|s| s.kind.memory_only())
        .map(|s| s.name.as_str())
        .collect();
    if compares && !engines.is_empty() {
        notes.push(format!(
            "{}: run without persistence (add ?appendonly=yes&appendfsync=… to compare \
             under the same durability), and the engine has no replicas: its figures are \
             in-memory, single-copy",
            engines.join(", ")
        ));
    }
    Ok(targets)
}

/// A comma-separated list of names, each standing for one or more values, in order, without
/// repeats; `None` when a name is unknown.
pub fn parse_list<T: Copy + PartialEq + 'static>(
    list: &str,
    parse: fn(&str) -> Option<&'static [T]>,
) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        for &value in parse(name)? {
            if !out.contains(&value) {
                out.push(value);
            }
        }
    }
    Some(out)
}

/// `md,go,...` → formats, in the order given, without repeats.
pub fn parse_formats(list: &str) -> Result<Vec<Format>, ConfigError> {
    let mut formats = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let f = Format::from_name(name).ok_or_else(|| ConfigError::Format(name.to_string()))?;
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    Ok(formats)
}

/// The most `--threads` `edgebench serve` takes.
pub const MAX_SERVE_THREADS: usize = 1024;

/// The longest `serve --busy-poll-us`: 10 ms, a tenth of the loop's tick.
const MAX_BUSY_POLL_US: u64 = 10_000;

/// The largest `--maxclients`.
const MAX_CLIENTS_LIMIT: usize = 1_000_000;

/// Everything `edgebench serve` needs, typed.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// `ADDR:PORT` to listen on, if any.
    pub tcp: Option<String>,
    /// The Unix socket to listen on, if any.
    pub unixsocket: Option<PathBuf>,
    /// `ADDR:PORT` to listen on for TLS clients, and the certificate they get (read and
    /// checked already).
    pub tls: Option<(String, crate::server::tls::TlsAcceptor)>,
    /// Limits and the password.
    pub server: crate::server::ServerConfig,
    /// Worker threads of the server's runtime (`--threads`); `None` = one per core.
    pub threads: Option<usize>,
    /// Persistence settings, as CONFIG names and values for the engine (`--dir`, `--save`…),
    /// checked already.
    pub persistence: Vec<(&'static str, String)>,
    /// ACL users (`--user` lines, checked already) and the ACL file (`--aclfile`, loaded
    /// once already to check it).
    pub acl_users: Vec<String>,
    pub aclfile: Option<PathBuf>,
}

impl ServeConfig {
    /// Checks and types the flags of `edgebench serve`.
    pub fn from_args(args: &ServeArgs) -> Result<Self, ConfigError> {
        let bad = |flag, value: &str, fix| ConfigError::Serve {
            flag,
            value: value.to_string(),
            fix,
        };
        let port: u16 = args
            .port
            .parse()
            .map_err(|_| bad("port", &args.port, "expected a TCP port from 0 to 65535"))?;
        let tls = tls_flags(args)?;
        if port == 0 && args.unixsocket.is_none() && tls.is_none() {
            return Err(bad(
                "port",
                &args.port,
                "nothing to listen on: give a TCP port, --tls-port or --unixsocket PATH",
            ));
        }
        // A bound well under tokio's semaphore limit (which panics above usize::MAX >> 3) and
        // above any file-descriptor limit a machine will have.
        let maxclients = match args.maxclients.parse::<usize>() {
            Ok(n) if (1..=MAX_CLIENTS_LIMIT).contains(&n) => n,
            _ => {
                return Err(bad(
                    "maxclients",
                    &args.maxclients,
                    "expected a whole number from 1 to 1000000",
                ))
            }
        };
        let proto_max_bulk_len = parse_memory(&args.proto_max_bulk_len).ok_or_else(|| {
            bad(
                "proto-max-bulk-len",
                &args.proto_max_bulk_len,
                "expected bytes, e.g. 1048576, 512mb or 1gb (at least 1mb, as redis-server)",
            )
        })?;
        let threads = match &args.threads {
            None => None,
            Some(t) => match t.parse::<usize>() {
                Ok(n) if (1..=MAX_SERVE_THREADS).contains(&n) => Some(n),
                _ => {
                    return Err(bad(
                        "threads",
                        t,
                        "expected a whole number of threads from 1 to 1024",
                    ))
                }
            },
        };
        let busy_poll = match &args.busy_poll_us {
            None => crate::server::DEFAULT_BUSY_POLL,
            Some(us) => match us.parse::<u64>() {
                Ok(n) if n <= MAX_BUSY_POLL_US => std::time::Duration::from_micros(n),
                _ => {
                    return Err(bad(
                        "busy-poll-us",
                        us,
                        "expected microseconds from 0 to 10000",
                    ))
                }
            },
        };
        let persistence = persistence_flags(args)?;
        check_acl_flags(args)?;
        let at = |port: u16| {
            if args.bind.contains(':') {
                format!("[{}]:{port}", args.bind)
            } else {
                format!("{}:{port}", args.bind)
            }
        };
        let tcp = (port != 0).then(|| at(port));
        Ok(ServeConfig {
            tcp,
            unixsocket: args.unixsocket.clone(),
            tls: tls.map(|(port, acceptor)| (at(port), acceptor)),
            server: crate::server::ServerConfig {
                maxclients,
                proto_max_bulk_len,
                requirepass: args.requirepass.clone(),
                io: match args.io {
                    ServeIo::Tasks => crate::server::IoModel::Tasks,
                    ServeIo::Loop => crate::server::IoModel::Loop,
                },
                loop_threads: threads,
                busy_poll,
            },
            threads,
            persistence,
            acl_users: args.users.clone(),
            aclfile: args.aclfile.clone(),
        })
    }
}

/// `--tls-port` and the files it needs, read and checked now: a missing file or a key that
/// does not go with its certificate stops `serve` before it starts.
fn tls_flags(
    args: &ServeArgs,
) -> Result<Option<(u16, crate::server::tls::TlsAcceptor)>, ConfigError> {
    use crate::server::tls::{AuthClients, TlsAcceptor, TlsSettings};
    let Some(port_text) = &args.tls_port else {
        let stray = [
            ("tls-cert-file", args.tls_cert_file.is_some()),
            ("tls-key-file", args.tls_key_file.is_some()),
            ("tls-ca-cert-file", args.tls_ca_cert_file.is_some()),
            ("tls-auth-clients", args.tls_auth_clients.is_some()),
            ("tls-protocols", args.tls_protocols.is_some()),
        ];
        if let Some((flag, _)) = stray.iter().find(|(_, given)| *given) {
            return Err(ConfigError::Tls(format!(
                "--{flag} without --tls-port: give --tls-port PORT to serve TLS clients"
            )));
        }
        return Ok(None);
    };
    let port = match port_text.parse::<u16>() {
        Ok(0) => return Ok(None),
        Ok(port) => port,
        Err(_) => {
            return Err(ConfigError::Tls(format!(
                "--tls-port {port_text:?}: expected a TCP port from 1 to 65535 (0: no TLS port)"
            )))
        }
    };
    let auth_clients = match &args.tls_auth_clients {
        None => AuthClients::default(),
        Some(text) => text
            .parse()
            .map_err(|e| ConfigError::Tls(format!("--tls-auth-clients {e}")))?,
    };
    let (Some(cert_file), Some(key_file)) = (&args.tls_cert_file, &args.tls_key_file) else {
        return Err(ConfigError::Tls(
            "--tls-port needs --tls-cert-file and --tls-key-file (the server's certificate \
             and its key, PEM)"
                .into(),
        ));
    };
    let settings = TlsSettings {
        cert_file: cert_file.clone(),
        key_file: key_file.clone(),
        ca_cert_file: args.tls_ca_cert_file.clone(),
        auth_clients,
        protocols: args.tls_protocols.clone(),
    };
    let acceptor = TlsAcceptor::load(&settings).map_err(|e| ConfigError::Tls(e.to_string()))?;
    Ok(Some((port, acceptor)))
}

/// Checks `--user` lines and the `--aclfile` on a scratch engine, so a bad rule or file
/// line stops `serve` before it starts, with one line naming the flag, the line and the fix.
fn check_acl_flags(args: &ServeArgs) -> Result<(), ConfigError> {
    if args.aclfile.is_some() && !args.users.is_empty() {
        return Err(ConfigError::Acl(
            "--aclfile and --user: users come from the ACL file or from --user lines, not \
             both (as redis-server refuses `user` lines beside `aclfile`); move the --user \
             lines into the file"
                .into(),
        ));
    }
    if args.aclfile.is_some() && args.requirepass.is_some() {
        return Err(ConfigError::Acl(
            "--requirepass and --aclfile: the ACL file's default user decides (redis-server \
             ignores requirepass beside an aclfile); give the password in the file (user \
             default on >PASSWORD ~* &* +@all) and drop --requirepass"
                .into(),
        ));
    }
    let checker = crate::engine::Engine::with_clock(Default::default());
    for line in &args.users {
        checker.acl_define_user(line).map_err(|e| {
            ConfigError::Acl(format!(
                "--user {line:?}: {e} (rules as ACL SETUSER takes them, e.g. \
                 \"alice on >secret ~* +@all\")"
            ))
        })?;
    }
    if let Some(path) = &args.aclfile {
        checker
            .acl_load_file(&path.to_string_lossy())
            .map_err(|e| {
                ConfigError::Acl(format!(
                    "--aclfile {}: {e} (each line: user <name> <rules...>, as ACL SAVE \
                     writes)",
                    path.display()
                ))
            })?;
    }
    Ok(())
}

/// `serve`'s persistence flags as engine CONFIG pairs, each checked by the rule the engine
/// applies (so a bad value is refused before anything starts, naming the flag).
fn persistence_flags(args: &ServeArgs) -> Result<Vec<(&'static str, String)>, ConfigError> {
    let mut out = Vec::new();
    let checker = crate::engine::Engine::with_clock(Default::default());
    let mut put = |name: &'static str, value: String, fix: &'static str| match checker
        .configure(name, &value)
    {
        Ok(()) => {
            out.push((name, value));
            Ok(())
        }
        Err(_) => Err(ConfigError::Serve {
            flag: name,
            value,
            fix,
        }),
    };
    if let Some(dir) = &args.dir {
        put(
            "dir",
            dir.to_string_lossy().into_owned(),
            "expected an existing directory (create it first)",
        )?;
    }
    if let Some(v) = &args.dbfilename {
        put(
            "dbfilename",
            v.clone(),
            "expected a file name without a directory (use --dir for that)",
        )?;
    }
    if let Some(v) = &args.appendonly {
        put("appendonly", v.clone(), "expected yes or no")?;
    }
    if let Some(v) = &args.appendfilename {
        put(
            "appendfilename",
            v.clone(),
            "expected a file name without a directory (use --dir for that)",
        )?;
    }
    if let Some(v) = &args.appendfsync {
        put("appendfsync", v.clone(), "expected always, everysec or no")?;
    }
    if let Some(v) = &args.save {
        put(
            "save",
            v.clone(),
            "expected \"SECONDS CHANGES [SECONDS CHANGES ...]\", e.g. \"3600 1 300 100\", or \"\" for none",
        )?;
    }
    Ok(out)
}

/// The largest `--max-result-count`: a list request's page is built in memory.
const MAX_RESULT_COUNT_LIMIT: usize = 1_000_000;

/// The largest `--max-event-size`, KB (1 GiB): a body is buffered before it is decoded.
const MAX_EVENT_SIZE_LIMIT_KB: u64 = 1024 * 1024;
/// The most buses one core-data service subscribes to (one thread and connection each).
const MAX_BUSES: usize = 16;

/// Everything `edgebench coredata-service` needs, typed.
#[derive(Debug, Clone)]
pub struct CoreDataServiceConfig {
    /// The store, in its EdgeX layout.
    pub store: TargetSpec,
    /// `HOST:PORT` to serve on, if any.
    pub tcp: Option<std::net::SocketAddr>,
    /// The Unix socket to serve on, if any.
    pub unixsocket: Option<PathBuf>,
    /// HTTPS on the TCP listener (`--tls-cert-file`, `--tls-key-file`), files read already.
    pub tls: Option<crate::server::tls::TlsAcceptor>,
    /// What the service answers with.
    pub service: crate::service::ServiceConfig,
    /// The message buses to take events from (`--bus`); empty: REST only.
    pub bus: Vec<crate::transport::bus::BusUrl>,
    /// The MQTT QoS of the bus subscriptions (`--qos`).
    pub qos: crate::transport::bus::mqtt::Qos,
    /// How the bus subscriber handles events (`--subscriber`).
    pub subscriber: crate::service::bus::SubscriberMode,
    /// Core data's own retention (`--retention-interval` above 0s), if on.
    pub retention: Option<crate::service::retention::RetentionConfig>,
    /// `--bus embedded`: where publishers reach the engine's broker, if it is on.
    pub embedded_bus: Option<EmbeddedBus>,
}

/// `coredata-service --bus embedded`: the engine's Pub/Sub broker in the service's process,
/// which its subscriber reads without a socket, served to publishers over RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedBus {
    /// `--bus-listen`.
    pub tcp: Option<std::net::SocketAddr>,
    /// `--bus-unixsocket`.
    pub unixsocket: Option<PathBuf>,
}

impl CoreDataServiceConfig {
    /// `--bus embedded` with `--bus-listen`/`--bus-unixsocket`: both or neither.
    fn embedded_bus(
        args: &CoreDataServiceArgs,
        embedded: bool,
    ) -> Result<Option<EmbeddedBus>, ConfigError> {
        let tcp = match &args.bus_listen {
            None => None,
            Some(addr) => Some(addr.parse().map_err(|_| ConfigError::Serve {
                flag: "bus-listen",
                value: addr.clone(),
                fix: "expected HOST:PORT with an IP address (127.0.0.1:6380; port 0 picks one)",
            })?),
        };
        let unixsocket = args.bus_unixsocket.clone();
        match (embedded, tcp.is_some() || unixsocket.is_some()) {
            (true, true) => Ok(Some(EmbeddedBus { tcp, unixsocket })),
            (false, false) => Ok(None),
            (true, false) => Err(ConfigError::Bus(
                "--bus embedded: device services need an address to publish to: give \
                 --bus-listen HOST:PORT and/or --bus-unixsocket PATH"
                    .into(),
            )),
            (false, true) => Err(ConfigError::Bus(
                "--bus-listen and --bus-unixsocket serve the embedded broker: add --bus embedded"
                    .into(),
            )),
        }
    }

    /// Checks and types the flags of `edgebench coredata-service`.
    pub fn from_args(args: &CoreDataServiceArgs) -> Result<Self, ConfigError> {
        let bad = |flag, value: &str, fix| ConfigError::Serve {
            flag,
            value: value.to_string(),
            fix,
        };
        let mut specs = target::parse_targets(std::slice::from_ref(&args.store)).map_err(|e| {
            ConfigError::Store {
                value: args.store.clone(),
                reason: e.to_string(),
            }
        })?;
        if specs.len() != 1 {
            return Err(bad("store", &args.store, "give one store"));
        }
        let mut store = specs.remove(0);
        store.layout = store.edgex_layout().ok_or_else(|| {
            bad(
                "store",
                &args.store,
                "the service keeps data in EdgeX's layouts, which exist for Redis targets, the \
                 engine, PostgreSQL, SQLite and MongoDB: use embedded, redis-tcp, redis-uds, \
                 redis://…, sqlite, pg-tcp, pg-uds, postgres://… or mongodb://…",
            )
        })?;
        let tcp = match args.listen.as_str() {
            "none" => None,
            addr => Some(addr.parse().map_err(|_| {
                bad(
                    "listen",
                    addr,
                    "expected HOST:PORT with an IP address (127.0.0.1:59880, [::1]:59880) or none",
                )
            })?),
        };
        if tcp.is_none() && args.unixsocket.is_none() {
            return Err(bad(
                "listen",
                &args.listen,
                "nothing to serve on: give --listen HOST:PORT or --unixsocket PATH",
            ));
        }
        let persist = match args.persist.as_str() {
            "true" => true,
            "false" => false,
            other => return Err(bad("persist", other, "expected true or false")),
        };
        let max_result_count = match args.max_result_count.parse::<usize>() {
            Ok(n) if (1..=MAX_RESULT_COUNT_LIMIT).contains(&n) => n,
            _ => {
                return Err(bad(
                    "max-result-count",
                    &args.max_result_count,
                    "expected a whole number from 1 to 1000000",
                ))
            }
        };
        let max_event_size_kb = match args.max_event_size.parse::<u64>() {
            Ok(n) if n <= MAX_EVENT_SIZE_LIMIT_KB => n,
            _ => {
                return Err(bad(
                    "max-event-size",
                    &args.max_event_size,
                    "expected KB from 0 (no limit) to 1048576",
                ))
            }
        };
        let mut embedded = false;
        let bus = match &args.bus {
            None => Vec::new(),
            Some(list) => {
                let mut urls = Vec::new();
                for item in list.split(',').map(str::trim) {
                    if item == "embedded" {
                        if embedded {
                            return Err(ConfigError::Bus(
                                "--bus: embedded is named twice; name it once".into(),
                            ));
                        }
                        embedded = true;
                    } else {
                        urls.push(
                            crate::transport::bus::BusUrl::parse(item).map_err(ConfigError::Bus)?,
                        );
                    }
                }
                if urls.len() > MAX_BUSES {
                    return Err(ConfigError::Bus(format!(
                        "--bus: {} buses; give at most {MAX_BUSES}",
                        urls.len()
                    )));
                }
                urls
            }
        };
        let embedded_bus = Self::embedded_bus(args, embedded)?;
        let qos = crate::transport::bus::mqtt::Qos::parse(&args.qos).map_err(ConfigError::Bus)?;
        let subscriber = crate::service::bus::SubscriberMode::parse(&args.subscriber)
            .map_err(ConfigError::Bus)?;
        let retention = Self::retention(args)?;
        let tls = Self::tls(args, tcp.is_some())?;
        Ok(CoreDataServiceConfig {
            tls,
            embedded_bus,
            retention,
            subscriber,
            store,
            tcp,
            unixsocket: args.unixsocket.clone(),
            bus,
            qos,
            service: crate::service::ServiceConfig {
                persist,
                max_result_count,
                max_event_size_kb,
                ..crate::service::ServiceConfig::default()
            },
        })
    }

    /// `coredata-service --tls-cert-file --tls-key-file`: the files read and checked now, as
    /// `serve` reads its own (the same messages). Clients are not asked for certificates.
    fn tls(
        args: &CoreDataServiceArgs,
        has_tcp: bool,
    ) -> Result<Option<crate::server::tls::TlsAcceptor>, ConfigError> {
        use crate::server::tls::{AuthClients, TlsAcceptor, TlsSettings};
        let (cert_file, key_file) = match (&args.tls_cert_file, &args.tls_key_file) {
            (None, None) => return Ok(None),
            (Some(cert), Some(key)) => (cert.clone(), key.clone()),
            (Some(_), None) => {
                return Err(ConfigError::Tls(
                    "--tls-cert-file without --tls-key-file: give the certificate's key too".into(),
                ))
            }
            (None, Some(_)) => {
                return Err(ConfigError::Tls(
                    "--tls-key-file without --tls-cert-file: give the certificate too".into(),
                ))
            }
        };
        if !has_tcp {
            return Err(ConfigError::Tls(
                "--tls-cert-file with --listen none: HTTPS is served on --listen HOST:PORT \
                 (the Unix socket stays plain); give --listen"
                    .into(),
            ));
        }
        let settings = TlsSettings {
            cert_file,
            key_file,
            ca_cert_file: None,
            auth_clients: AuthClients::No,
            protocols: None,
        };
        TlsAcceptor::load(&settings)
            .map(Some)
            .map_err(|e| ConfigError::Tls(e.to_string()))
    }

    /// `coredata-service --retention*`: `None` when `--retention-interval` is 0s.
    fn retention(
        args: &CoreDataServiceArgs,
    ) -> Result<Option<crate::service::retention::RetentionConfig>, ConfigError> {
        use crate::service::retention::{
            RetentionConfig, RetentionPolicy, EDGEX3_MAX_CAP, EDGEX3_MIN_CAP,
        };
        use crate::store::edgex::retention::EventRetention;
        let bad = |flag, value: &str, fix| ConfigError::Serve {
            flag,
            value: value.to_string(),
            fix,
        };
        let duration = |flag, value: &str| {
            crate::runner::parse_duration(value)
                .map_err(|_| bad(flag, value, "expected a duration such as 10m, 30s or 500ms"))
        };
        let interval = duration("retention-interval", &args.retention_interval)?;
        let given = [
            ("retention-max-cap", &args.retention_max_cap),
            ("retention-min-cap", &args.retention_min_cap),
            ("retention-duration", &args.retention_duration),
        ];
        if interval.is_zero() {
            return match given
                .iter()
                .find_map(|(flag, v)| Some((*flag, v.as_ref()?)))
            {
                Some((flag, value)) => Err(bad(
                    flag,
                    value,
                    "retention is off (--retention-interval 0s): give --retention-interval too, \
                     e.g. 10m",
                )),
                None => Ok(None),
            };
        }
        let policy = match args.retention.as_str() {
            "edgex3" => {
                if let Some(value) = &args.retention_duration {
                    return Err(bad(
                        "retention-duration",
                        value,
                        "EdgeX 3.1's retention has no duration: give --retention edgex4, or leave \
                         it out",
                    ));
                }
                let readings = |flag, value: &Option<String>, default: u64| match value {
                    None => Ok(default),
                    Some(v) => v.parse::<u64>().map_err(|_| {
                        bad(
                            flag,
                            v,
                            "with --retention edgex3, give a whole number of readings",
                        )
                    }),
                };
                let max_cap =
                    readings("retention-max-cap", &args.retention_max_cap, EDGEX3_MAX_CAP)?;
                let min_cap =
                    readings("retention-min-cap", &args.retention_min_cap, EDGEX3_MIN_CAP)?;
                if max_cap == 0 || min_cap >= max_cap {
                    return Err(bad(
                        "retention-min-cap",
                        &min_cap.to_string(),
                        "with --retention edgex3, give 0 < --retention-min-cap < \
                         --retention-max-cap (readings; EdgeX 3.1's defaults are 8000 and 10000)",
                    ));
                }
                RetentionPolicy::Edgex3 { max_cap, min_cap }
            }
            "edgex4" => {
                let defaults = EventRetention::EDGEX_DEFAULTS;
                let events = |flag, value: &Option<String>, default: i64| match value {
                    None => Ok(default),
                    Some(v) => match v.parse::<i64>() {
                        Ok(n) if (-1..=1_000_000_000_000).contains(&n) => Ok(n),
                        _ => Err(bad(
                            flag,
                            v,
                            "with --retention edgex4, give -1 (none) or a number of events from 0 \
                             to 1000000000000",
                        )),
                    },
                };
                let policy = EventRetention {
                    max_cap: events(
                        "retention-max-cap",
                        &args.retention_max_cap,
                        defaults.max_cap,
                    )?,
                    min_cap: events(
                        "retention-min-cap",
                        &args.retention_min_cap,
                        defaults.min_cap,
                    )?,
                    duration: match &args.retention_duration {
                        Some(v) => duration("retention-duration", v)?,
                        None => defaults.duration,
                    },
                };
                if policy.max_cap > 0 && policy.min_cap >= policy.max_cap {
                    return Err(bad(
                        "retention-min-cap",
                        &policy.min_cap.to_string(),
                        "give a --retention-min-cap below --retention-max-cap (events of one device \
                         and source), or --retention-max-cap -1 for no threshold",
                    ));
                }
                RetentionPolicy::Edgex4(policy)
            }
            other => {
                return Err(bad(
                    "retention",
                    other,
                    "give edgex4 (EdgeX 4.0's, per device and source) or edgex3 (EdgeX 3.1's \
                     reading watermark)",
                ))
            }
        };
        Ok(Some(RetentionConfig { interval, policy }))
    }
}

/// A redis.conf memory value: bytes, or with k/kb/m/mb/g/gb (k = 1000, kb = 1024, as
/// redis.conf reads them); at least 1 MiB, as redis-server requires of proto-max-bulk-len.
fn parse_memory(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let scale: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1_000_000,
        "mb" => 1024 * 1024,
        "g" => 1_000_000_000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(scale).filter(|&b| b >= 1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_read_as_redis_conf_reads_them() {
        assert_eq!(parse_memory("512mb"), Some(512 * 1024 * 1024));
        assert_eq!(parse_memory("1GB"), Some(1024 * 1024 * 1024));
        assert_eq!(parse_memory("2m"), Some(2_000_000));
        assert_eq!(parse_memory("1048576"), Some(1_048_576));
        assert_eq!(parse_memory("1kb"), None, "below 1 MiB");
        assert_eq!(parse_memory("12xb"), None);
        assert_eq!(parse_memory(""), None);
    }
}
