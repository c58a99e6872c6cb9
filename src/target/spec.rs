//! What `--target` says: a [`TargetSpec`] (a column name and a [`TargetKind`]) per item,
//! parsed from the command line, and the default targets of a run without `--target`.
//!
//! Each target has a column name (`RedisDB_TCP`, `RedisDB_UDS`, or the user's `NAME=`). It
//! becomes part of Go benchmark names such as `BenchmarkRedisDB_TCP/AddEvent-2`, so it is
//! restricted to `[A-Za-z0-9_.]` and unique within a run. Redis URLs are read by the one
//! parser, [`super::url`].

use std::collections::HashSet;
use std::time::Duration;

use super::error::TargetError;
use super::layout::{Layout, Via};
use super::options;
use crate::store::http::HttpBase;
use crate::store::mongo::{Fidelity, MongoLayout};
use crate::store::postgres::{self as pg, PgTransport};
use crate::store::redis::spawn::{self, ServerOptions};
use crate::store::redis::ClusterShape;
use crate::transport::url::{RedisUrl, UrlAt, UrlError};
use crate::transport::Endpoint;

/// Column name of the Redis Cluster targets, spawned or given by URL.
const CLUSTER_COLUMN: &str = "RedisCluster";
/// Column name of the Redis-over-TCP targets (the 2018 `BenchmarkRedisDB_TCP`).
const TCP_COLUMN: &str = "RedisDB_TCP";
/// Column name of the Redis-over-Unix-socket targets (the 2018 `BenchmarkRedisDB_UDS`).
const UDS_COLUMN: &str = "RedisDB_UDS";
/// The Redis store on the in-process engine through its redis-rs connection (the 2018
/// eredis column was `BenchmarkRedisDB_Embedded`).
const EMBEDDED_COLUMN: &str = "RedisDB_Embedded";
/// The `mini-redis` crate's server.
const MINI_REDIS_COLUMN: &str = "MiniRedis";
/// The engine's typed API, called directly.
const DIRECT_COLUMN: &str = "Embedded_Direct";
/// The engine served by edgebench's RESP server over TCP.
const EMBEDDED_TCP_COLUMN: &str = "Embedded_TCP";
/// The engine served by edgebench's RESP server over a Unix socket.
const EMBEDDED_UDS_COLUMN: &str = "Embedded_UDS";
/// SQLite, in-process, as a document store.
const SQLITE_COLUMN: &str = "SQLite_Embedded";
/// PostgreSQL (JSONB) over TCP.
const PG_TCP_COLUMN: &str = "PostgreSQL_TCP";
/// PostgreSQL (JSONB) over its Unix socket.
const PG_UDS_COLUMN: &str = "PostgreSQL_UDS";
/// MongoDB (the seed's document-store column was `BenchmarkMongoDB`).
const MONGO_COLUMN: &str = "MongoDB";
/// A core-data service over HTTP on TCP.
const SERVICE_TCP_COLUMN: &str = "EdgeX_HTTP_TCP";
/// A core-data service over HTTP on a Unix socket.
const SERVICE_UDS_COLUMN: &str = "EdgeX_HTTP_UDS";
/// How long the default run waits for a PostgreSQL server to answer before leaving it out.
const PG_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// How a target's server comes to exist.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetKind {
    /// A `redis-server` spawned for the run, on a free 127.0.0.1 port.
    SpawnRedisTcp,
    /// A `redis-server` spawned for the run, on a Unix socket in a temporary directory.
    SpawnRedisUds,
    /// A Redis server already running at this endpoint.
    Redis(Endpoint),
    /// A private Redis Cluster spawned for the run, on free 127.0.0.1 ports.
    SpawnCluster(ClusterShape),
    /// A Redis Cluster already running; the nodes given (`redis-cluster://HOST:PORT,…`), of
    /// which any one that answers is enough.
    Cluster(Vec<Endpoint>),
    /// The `mini-redis` crate's server on a free 127.0.0.1 port, in this process (GET and
    /// SET loads of `edgebench kv` only).
    MiniRedis,
    /// The in-process engine, through its redis-rs connection (no socket).
    Embedded,
    /// The in-process engine's typed API, called directly by its own store.
    EmbeddedDirect,
    /// The engine served over TCP by edgebench's RESP server, inside this process.
    EmbeddedTcp,
    /// The engine served over a Unix socket by edgebench's RESP server, inside this process.
    EmbeddedUds,
    /// SQLite in this process, as a document store.
    Sqlite(SqliteAt),
    /// A PostgreSQL server (JSONB documents) in which the run creates a private database.
    Postgres(PgAt),
    /// A core-data service already running (edgebench's `coredata-service` or EdgeX's), at
    /// `http://HOST:PORT` or `http+unix:///PATH`; the benchmarks go through its API.
    Service(HttpBase),
    /// A MongoDB server in which the run creates a private database.
    Mongo {
        /// The `mongodb://` URL.
        url: String,
        /// Readings inside their event, or in their own collection.
        layout: MongoLayout,
        /// The 2018 client's one-query-per-reading loads, or one `$in` query.
        fidelity: Fidelity,
    },
}

pub use crate::store::postgres::backend::PgAt;
pub use crate::store::sqlite::backend::SqliteAt;

impl TargetKind {
    /// The column name a target of this kind gets when the user names none.
    fn default_column(&self) -> &'static str {
        match self {
            TargetKind::SpawnRedisUds | TargetKind::Redis(Endpoint::Unix(_)) => UDS_COLUMN,
            TargetKind::SpawnRedisTcp | TargetKind::Redis(Endpoint::Tcp { .. }) => TCP_COLUMN,
            TargetKind::SpawnCluster(_) | TargetKind::Cluster(_) => CLUSTER_COLUMN,
            TargetKind::Embedded => EMBEDDED_COLUMN,
            TargetKind::MiniRedis => MINI_REDIS_COLUMN,
            TargetKind::EmbeddedDirect => DIRECT_COLUMN,
            TargetKind::EmbeddedTcp => EMBEDDED_TCP_COLUMN,
            TargetKind::EmbeddedUds => EMBEDDED_UDS_COLUMN,
            TargetKind::Sqlite(_) => SQLITE_COLUMN,
            TargetKind::Postgres(PgAt::Env(PgTransport::Tcp)) => PG_TCP_COLUMN,
            TargetKind::Postgres(PgAt::Env(PgTransport::Uds)) => PG_UDS_COLUMN,
            TargetKind::Postgres(PgAt::Url(url)) => match pg::config_from_url(url) {
                Ok(c) if is_pg_socket(&c) => PG_UDS_COLUMN,
                _ => PG_TCP_COLUMN,
            },
            TargetKind::Mongo { .. } => MONGO_COLUMN,
            TargetKind::Service(HttpBase::Tcp { .. }) => SERVICE_TCP_COLUMN,
            TargetKind::Service(HttpBase::Unix(_)) => SERVICE_UDS_COLUMN,
        }
    }
}

/// Whether a PostgreSQL config connects through a Unix socket (its first host is a socket
/// directory).
fn is_pg_socket(config: &postgres::Config) -> bool {
    matches!(
        config.get_hosts().first(),
        Some(postgres::config::Host::Unix(_))
    )
}

/// A named target, as parsed from the command line; [`Target::start`] brings it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    /// Column name in results, `[A-Za-z0-9_.]+`, unique within a run.
    pub name: String,
    /// What to talk to.
    pub kind: TargetKind,
    /// How its store lays out the data (`--layout`).
    pub layout: Layout,
    /// How the benchmarks reach the store (`--via`).
    pub via: Via,
    /// A spawned server's persistence and replicas (`redis-tcp?…`); the default otherwise.
    pub server: ServerOptions,
    /// Follow every write with `WAIT wait 0` (`?wait=N`, `--wait N`); 0: no WAIT.
    pub wait: u32,
}

impl TargetSpec {
    /// A target in column `name`, in the 2018 layout, called directly.
    pub fn new(name: &str, kind: TargetKind) -> TargetSpec {
        TargetSpec {
            name: name.to_string(),
            kind,
            layout: Layout::default(),
            via: Via::default(),
            server: ServerOptions::default(),
            wait: 0,
        }
    }
}

/// Parses `--target` values into specs, in order.
///
/// Each value is a comma-separated list of items:
/// - `redis-tcp` / `redis-uds`: spawn a `redis-server` (columns `RedisDB_TCP` / `RedisDB_UDS`);
/// - `redis://HOST[:PORT]` (port 6379 by default; column `RedisDB_TCP`);
/// - `redis+unix:///PATH` or `unix:///PATH` (column `RedisDB_UDS`);
/// - `redis-cluster`: spawn a private Redis Cluster (column `RedisCluster`; its shape from
///   [`set_cluster_shape`]);
/// - `redis-cluster://HOST:PORT[,HOST:PORT…]`: a Redis Cluster's nodes (column `RedisCluster`);
/// - `NAME=ITEM`: any of the above, in column `NAME` (`[A-Za-z0-9_.]+`);
/// - `redis-tcp?OPTIONS` / `redis-uds?OPTIONS`: persistence, replicas and WAIT (see
///   [`super::options`]).
///
/// A column name given twice gets `_2`, `_3`, ... appended from its second use on.
pub fn parse_targets(values: &[String]) -> Result<Vec<TargetSpec>, TargetError> {
    let mut specs = Vec::new();
    for value in values {
        for item in value.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(TargetError::Empty {
                    value: value.clone(),
                });
            }
            // `redis-cluster://A:1,B:2`: the items after a cluster URL that are HOST:PORT
            // are more of its nodes.
            if let Some(TargetSpec {
                kind: TargetKind::Cluster(nodes),
                ..
            }) = specs.last_mut()
            {
                if let Some(node) = cluster_node(item) {
                    nodes.push(node);
                    continue;
                }
            }
            specs.push(parse_item(item)?);
        }
    }
    dedupe_names(&mut specs);
    Ok(specs)
}

/// The targets of a run without `--target`: every embedded transport; `redis-tcp` and
/// `redis-uds` when a `redis-server` can be spawned; `SQLite_Embedded`; and `pg-tcp`, `pg-uds`
/// when a PostgreSQL server answers there (the PG* variables and libpq's defaults). The notes
/// say what was left out and how to get it (one line each).
pub fn default_targets() -> (Vec<TargetSpec>, Vec<String>) {
    let mut kinds = vec![
        TargetKind::EmbeddedDirect,
        TargetKind::Embedded,
        TargetKind::EmbeddedTcp,
        TargetKind::EmbeddedUds,
    ];
    let mut notes = Vec::new();
    if redis_server_on_path() {
        kinds.extend([TargetKind::SpawnRedisTcp, TargetKind::SpawnRedisUds]);
    } else {
        notes.push(
            "redis-server is not on PATH: no RedisDB_TCP and RedisDB_UDS columns (install \
             redis-server, or set EDGEBENCH_REDIS_SERVER to its path)"
                .to_string(),
        );
    }
    kinds.push(TargetKind::Sqlite(SqliteAt::Temp));
    let mut missing = Vec::new();
    for transport in [PgTransport::Tcp, PgTransport::Uds] {
        let config = pg::config_from_env(transport);
        if pg_answers(&config) {
            kinds.push(TargetKind::Postgres(PgAt::Env(transport)));
        } else {
            missing.push(pg::endpoint(&config));
        }
    }
    if !missing.is_empty() {
        notes.push(format!(
            "no PostgreSQL answered at {}: no {} column (start PostgreSQL, set PGHOST/PGPORT/\
             PGUSER, or give --target postgres://USER@HOST:PORT/DB)",
            missing.join(" or "),
            if missing.len() == 2 {
                "PostgreSQL_TCP or PostgreSQL_UDS"
            } else if missing[0].starts_with('/') {
                PG_UDS_COLUMN
            } else {
                PG_TCP_COLUMN
            }
        ));
    }
    let specs = kinds
        .into_iter()
        .map(|kind| TargetSpec::new(kind.default_column(), kind))
        .collect();
    (specs, notes)
}

/// Whether a PostgreSQL server accepts a connection with `config` within
/// [`PG_PROBE_TIMEOUT`].
fn pg_answers(config: &postgres::Config) -> bool {
    let mut config = config.clone();
    config.connect_timeout(PG_PROBE_TIMEOUT);
    config.connect(postgres::NoTls).is_ok()
}

/// Whether [`TargetKind::SpawnRedisTcp`] and [`TargetKind::SpawnRedisUds`] can start a
/// server: `redis-server` is on `PATH`, or [`spawn::REDIS_SERVER_ENV`] names one.
pub fn redis_server_on_path() -> bool {
    spawn::redis_server_binary().is_ok()
}

fn parse_item(item: &str) -> Result<TargetSpec, TargetError> {
    // `NAME=` only when the part before `=` cannot be the start of a URL.
    let (name, what) = match item.split_once('=') {
        Some((name, what)) if !name.contains([':', '/', '?']) => {
            if !is_valid_name(name) {
                return Err(TargetError::BadName {
                    name: name.to_string(),
                    item: item.to_string(),
                });
            }
            (Some(name), what.trim())
        }
        _ => (None, item),
    };
    let (what, query) = options::split(what);
    let kind = parse_kind(what)?;
    let name = name.unwrap_or(kind.default_column());
    let mut spec = TargetSpec::new(name, kind);
    if let Some(query) = query {
        if !matches!(
            spec.kind,
            TargetKind::SpawnRedisTcp | TargetKind::SpawnRedisUds | TargetKind::SpawnCluster(_)
        ) {
            return Err(options::not_spawned(item, what));
        }
        let cluster = matches!(spec.kind, TargetKind::SpawnCluster(_));
        let parsed = options::parse(item, query, cluster)?;
        spec.server = parsed.server;
        spec.wait = parsed.wait;
    }
    Ok(spec)
}

fn parse_kind(what: &str) -> Result<TargetKind, TargetError> {
    match what {
        "redis-tcp" => return Ok(TargetKind::SpawnRedisTcp),
        "redis-uds" => return Ok(TargetKind::SpawnRedisUds),
        "redis-cluster" => return Ok(TargetKind::SpawnCluster(ClusterShape::default())),
        "embedded" => return Ok(TargetKind::Embedded),
        "mini-redis" => return Ok(TargetKind::MiniRedis),
        "embedded-direct" => return Ok(TargetKind::EmbeddedDirect),
        "embedded-tcp" => return Ok(TargetKind::EmbeddedTcp),
        "embedded-uds" => return Ok(TargetKind::EmbeddedUds),
        "sqlite" => return Ok(TargetKind::Sqlite(SqliteAt::Temp)),
        "sqlite::memory:" | "sqlite://:memory:" => return Ok(TargetKind::Sqlite(SqliteAt::Memory)),
        "pg-tcp" => return Ok(TargetKind::Postgres(PgAt::Env(PgTransport::Tcp))),
        "pg-uds" => return Ok(TargetKind::Postgres(PgAt::Env(PgTransport::Uds))),
        _ => {}
    }
    let Some((scheme, rest)) = what.split_once("://") else {
        return Err(TargetError::Unknown {
            item: what.to_string(),
        });
    };
    let bad = |reason: String| TargetError::BadUrl {
        url: what.to_string(),
        reason,
    };
    if scheme.eq_ignore_ascii_case("redis-cluster") {
        return parse_cluster_url(what, rest).map_err(bad);
    }
    if scheme.eq_ignore_ascii_case("sqlite") {
        return match rest {
            path if path.starts_with('/') => Ok(TargetKind::Sqlite(SqliteAt::File(path.into()))),
            _ => Err(bad(
                "expected sqlite:///ABSOLUTE/PATH (three slashes), sqlite::memory: or plain \
                 sqlite for a temp file"
                    .to_string(),
            )),
        };
    }
    if scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql") {
        // Checked now, so a typo fails before any benchmark runs; parsed again at start.
        pg::config_from_url(what).map_err(|reason| TargetError::BadUrl {
            url: what.to_string(),
            reason,
        })?;
        return Ok(TargetKind::Postgres(PgAt::Url(what.to_string())));
    }
    if scheme.eq_ignore_ascii_case("mongodb") {
        if rest.trim_end_matches('/').is_empty() {
            return Err(bad("expected mongodb://HOST:PORT".to_string()));
        }
        return Ok(TargetKind::Mongo {
            url: what.to_string(),
            layout: MongoLayout::default(),
            fidelity: Fidelity::default(),
        });
    }
    if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("http+unix") {
        return HttpBase::parse(what).map(TargetKind::Service).map_err(bad);
    }
    if scheme.eq_ignore_ascii_case("mongodb+srv") {
        return Err(bad(
            "mongodb+srv:// needs DNS SRV lookups, which this build leaves out: give the \
             hosts as mongodb://HOST:PORT[,HOST:PORT]"
                .to_string(),
        ));
    }
    let url = match RedisUrl::parse(what) {
        Ok(url) => url,
        Err(UrlError::Bad(reason)) => return Err(bad(reason)),
        Err(UrlError::Tls | UrlError::NotRedis) => {
            return Err(bad(format!(
                "unsupported scheme {scheme:?}: use redis://HOST:PORT, redis+unix:///PATH, \
                 unix:///PATH, redis-cluster://HOST:PORT, sqlite:///PATH, postgres://… or \
                 mongodb://HOST:PORT"
            )))
        }
    };
    // What --target leaves to the server's own configuration.
    if url.auth.is_some() {
        return Err(bad(
            "user names and passwords are not supported: use redis://HOST:PORT".into(),
        ));
    }
    if let Some(db) = url.db {
        return Err(bad(format!(
            "unexpected \"/{db}\" after HOST:PORT (database numbers and options are not \
             supported): use redis://HOST:PORT"
        )));
    }
    if let UrlAt::Tcp { host, .. } = &url.at {
        match host.as_deref() {
            None => return Err(bad("missing host: use redis://HOST:PORT".into())),
            // The 2018 configs said 0.0.0.0; that is where a server listens, not where to
            // connect.
            Some(host @ ("0.0.0.0" | "::")) => {
                return Err(bad(format!(
                    "{host} is a listen-on-all address, not one to connect to: use 127.0.0.1 \
                     (or ::1)"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(TargetKind::Redis(url.endpoint()))
}

/// The first node of `redis-cluster://HOST:PORT` (more nodes follow as separate items).
fn parse_cluster_url(url: &str, rest: &str) -> Result<TargetKind, String> {
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() {
        return Err("no node: use redis-cluster://HOST:PORT[,HOST:PORT…]".to_string());
    }
    match cluster_node(rest) {
        Some(node) => Ok(TargetKind::Cluster(vec![node])),
        None => Err(format!(
            "{rest:?} in {url} is not HOST:PORT (a cluster's nodes are reached over TCP, with \
             their port): use redis-cluster://HOST:PORT[,HOST:PORT…]"
        )),
    }
}

/// `HOST:PORT` (a name, an IPv4 address or `[IPv6]`, and a port 1..=65535), as a node of a
/// cluster URL; `None` for anything else.
fn cluster_node(item: &str) -> Option<Endpoint> {
    if item.contains(['/', '=', '@', '?']) {
        return None;
    }
    let url = RedisUrl::parse(&format!("redis://{item}")).ok()?;
    match url.at {
        UrlAt::Tcp {
            host: Some(host),
            port: Some(port),
        } if host != "0.0.0.0" && host != "::" => Some(Endpoint::Tcp { host, port }),
        _ => None,
    }
}

/// Gives every spawned cluster among `specs` the shape of `--cluster-shards` and
/// `--cluster-replicas` (each left as it is when its flag is absent), and checks it.
pub fn set_cluster_shape(
    specs: &mut [TargetSpec],
    shards: Option<u16>,
    replicas: Option<u16>,
) -> Result<(), TargetError> {
    for spec in specs {
        if let TargetKind::SpawnCluster(shape) = &mut spec.kind {
            shape.shards = shards.unwrap_or(shape.shards);
            shape.replicas = replicas.unwrap_or(shape.replicas);
            shape.check().map_err(|why| TargetError::Unsuitable {
                name: spec.name.clone(),
                why,
            })?;
        }
    }
    Ok(())
}

fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Renames the second and later uses of a name to `NAME_2`, `NAME_3`, ... (skipping names
/// already taken), so every column is distinct.
fn dedupe_names(specs: &mut [TargetSpec]) {
    let mut taken = HashSet::new();
    for spec in specs {
        if !taken.contains(&spec.name) {
            taken.insert(spec.name.clone());
            continue;
        }
        let mut n = 2;
        let unique = loop {
            let candidate = format!("{}_{n}", spec.name);
            if !taken.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        taken.insert(unique.clone());
        spec.name = unique;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Vec<TargetSpec>, TargetError> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        parse_targets(&values)
    }

    fn names(values: &[&str]) -> Vec<String> {
        parse(values)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    fn error(values: &[&str]) -> String {
        match parse(values) {
            Ok(specs) => panic!("{values:?} parsed as {specs:?}"),
            Err(e) => e.to_string(),
        }
    }

    pub(in crate::target) fn tcp(host: &str, port: u16) -> TargetKind {
        TargetKind::Redis(Endpoint::Tcp {
            host: host.to_string(),
            port,
        })
    }

    pub(in crate::target) fn unix(path: &str) -> TargetKind {
        TargetKind::Redis(Endpoint::Unix(std::path::PathBuf::from(path)))
    }

    pub(in crate::target) fn spec(name: &str, kind: TargetKind) -> TargetSpec {
        TargetSpec::new(name, kind)
    }

    #[test]
    fn parses_every_item_form_with_its_default_column() {
        let specs = parse(&[
            "redis-tcp",
            "redis-uds",
            "redis://db.local:6380",
            "redis://10.0.0.1",
            "redis://[::1]:7000/",
            "redis+unix:///tmp/r.sock",
            "unix:///var/run/redis.sock",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            specs,
            vec![
                spec("RedisDB_TCP", TargetKind::SpawnRedisTcp),
                spec("RedisDB_UDS", TargetKind::SpawnRedisUds),
                spec("RedisDB_TCP_2", tcp("db.local", 6380)),
                spec("RedisDB_TCP_3", tcp("10.0.0.1", 6379)),
                spec("RedisDB_TCP_4", tcp("::1", 7000)),
                spec("RedisDB_UDS_2", unix("/tmp/r.sock")),
                spec("RedisDB_UDS_3", unix("/var/run/redis.sock")),
            ]
        );
    }

    #[test]
    fn parses_the_document_store_forms_with_their_default_columns() {
        let specs = parse(&[
            "sqlite",
            "sqlite:///tmp/eb.db",
            "sqlite::memory:",
            "pg-tcp",
            "pg-uds",
            "postgres://me@127.0.0.1:5432/db",
            "postgresql:///db?host=/var/run/postgresql",
            "mongodb://127.0.0.1:27017",
            "mongo=mongodb://db.local:27018/",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let mongo = |url: &str| TargetKind::Mongo {
            url: url.into(),
            layout: MongoLayout::Embedded,
            fidelity: Fidelity::Modern,
        };
        assert_eq!(
            specs,
            vec![
                spec("SQLite_Embedded", TargetKind::Sqlite(SqliteAt::Temp)),
                spec(
                    "SQLite_Embedded_2",
                    TargetKind::Sqlite(SqliteAt::File("/tmp/eb.db".into()))
                ),
                spec("SQLite_Embedded_3", TargetKind::Sqlite(SqliteAt::Memory)),
                spec(
                    "PostgreSQL_TCP",
                    TargetKind::Postgres(PgAt::Env(PgTransport::Tcp))
                ),
                spec(
                    "PostgreSQL_UDS",
                    TargetKind::Postgres(PgAt::Env(PgTransport::Uds))
                ),
                spec(
                    "PostgreSQL_TCP_2",
                    TargetKind::Postgres(PgAt::Url("postgres://me@127.0.0.1:5432/db".into()))
                ),
                spec(
                    "PostgreSQL_UDS_2",
                    TargetKind::Postgres(PgAt::Url(
                        "postgresql:///db?host=/var/run/postgresql".into()
                    ))
                ),
                spec("MongoDB", mongo("mongodb://127.0.0.1:27017")),
                spec("mongo", mongo("mongodb://db.local:27018/")),
            ]
        );
    }

    #[test]
    fn bad_document_store_items_name_the_item_and_the_fix() {
        assert_eq!(
            error(&["sqlite://rel.db"]),
            "bad target URL \"sqlite://rel.db\": expected sqlite:///ABSOLUTE/PATH (three \
             slashes), sqlite::memory: or plain sqlite for a temp file"
        );
        assert_eq!(
            error(&["mongodb://"]),
            "bad target URL \"mongodb://\": expected mongodb://HOST:PORT"
        );
        assert!(error(&["mongodb+srv://c.example.net"]).contains("give the hosts as mongodb://"));
        let pg = error(&["postgres://me@h:notaport/db"]);
        assert!(
            pg.starts_with(
                "bad target URL \"postgres://me@h:notaport/db\": invalid PostgreSQL URL"
            ),
            "{pg}"
        );
    }

    #[test]
    fn values_are_comma_separated_lists_and_names_are_kept() {
        let specs = parse(&[
            "redis-tcp, local=redis://127.0.0.1:6379",
            "v7.2=unix:///tmp/r.sock,uds_spawned=redis-uds",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            specs,
            vec![
                spec("RedisDB_TCP", TargetKind::SpawnRedisTcp),
                spec("local", tcp("127.0.0.1", 6379)),
                spec("v7.2", unix("/tmp/r.sock")),
                spec("uds_spawned", TargetKind::SpawnRedisUds),
            ]
        );
    }

    #[test]
    fn duplicate_names_get_numbered_suffixes() {
        assert_eq!(
            names(&["redis-tcp,redis-tcp", "redis-tcp"]),
            ["RedisDB_TCP", "RedisDB_TCP_2", "RedisDB_TCP_3"]
        );
        assert_eq!(names(&["a=redis-tcp,a=redis-uds"]), ["a", "a_2"]);
        // A generated suffix skips a name the user took.
        assert_eq!(
            names(&["a=redis-tcp,a_2=redis-tcp,a=redis-tcp"]),
            ["a", "a_2", "a_3"]
        );
    }

    #[test]
    fn cluster_items_take_their_nodes_and_shape() {
        let node = |port| Endpoint::Tcp {
            host: "10.0.0.1".to_string(),
            port,
        };
        let specs = parse(&["redis-cluster://10.0.0.1:7000,10.0.0.1:7001,redis-tcp"]).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].name, "RedisCluster");
        assert_eq!(
            specs[0].kind,
            TargetKind::Cluster(vec![node(7000), node(7001)])
        );
        assert_eq!(specs[1].kind, TargetKind::SpawnRedisTcp);
        let mut specs = parse(&["C=redis-cluster"]).unwrap();
        assert_eq!(specs[0].name, "C");
        assert_eq!(
            specs[0].kind,
            TargetKind::SpawnCluster(ClusterShape::default())
        );
        set_cluster_shape(&mut specs, Some(6), None).unwrap();
        let TargetKind::SpawnCluster(shape) = specs[0].kind else {
            panic!("{:?}", specs[0].kind);
        };
        assert_eq!((shape.shards, shape.replicas), (6, 1));
        let refused = set_cluster_shape(&mut specs, Some(33), None).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "target C: --cluster-shards 33: give 1 to 32 primaries"
        );
    }

    #[test]
    fn bad_items_name_the_item_and_the_fix() {
        assert_eq!(
            error(&["foo"]),
            "unknown target \"foo\": use embedded, embedded-direct, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis://HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT or NAME=any of these"
        );
        assert_eq!(
            error(&["redis-cluster://"]),
            "bad target URL \"redis-cluster://\": no node: use \
             redis-cluster://HOST:PORT[,HOST:PORT…]"
        );
        assert_eq!(
            error(&["redis-cluster://h"]),
            "bad target URL \"redis-cluster://h\": \"h\" in redis-cluster://h is not HOST:PORT \
             (a cluster's nodes are reached over TCP, with their port): use \
             redis-cluster://HOST:PORT[,HOST:PORT…]"
        );
        assert_eq!(
            error(&["redis-cluster://h:1,h"]),
            "unknown target \"h\": use embedded, embedded-direct, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis://HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT or NAME=any of these"
        );
        assert_eq!(
            error(&["redis://h:xx"]),
            "bad target URL \"redis://h:xx\": invalid port \"xx\""
        );
        assert_eq!(
            error(&["redis://h:0"]),
            "bad target URL \"redis://h:0\": invalid port \"0\""
        );
        assert_eq!(
            error(&["redis://h:70000"]),
            "bad target URL \"redis://h:70000\": invalid port \"70000\""
        );
        assert_eq!(
            error(&["redis://:6379"]),
            "bad target URL \"redis://:6379\": missing host: use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["redis://h:1/2"]),
            "bad target URL \"redis://h:1/2\": unexpected \"/2\" after HOST:PORT (database \
             numbers and options are not supported): use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["redis://u:p@h:1"]),
            "bad target URL \"redis://u:p@h:1\": user names and passwords are not supported: \
             use redis://HOST:PORT"
        );
        assert_eq!(
            error(&["rediss://h:1"]),
            "bad target URL \"rediss://h:1\": unsupported scheme \"rediss\": use \
             redis://HOST:PORT, redis+unix:///PATH, unix:///PATH, redis-cluster://HOST:PORT, \
             sqlite:///PATH, postgres://… or mongodb://HOST:PORT"
        );
        assert_eq!(
            error(&["unix://r.sock"]),
            "bad target URL \"unix://r.sock\": the socket path must be absolute, e.g. \
             unix:///tmp/redis.sock"
        );
        assert_eq!(
            error(&["my-db=redis-tcp"]),
            "bad target name \"my-db\" in \"my-db=redis-tcp\": use only letters, digits, '_' \
             and '.' (the name becomes part of Go benchmark names)"
        );
        assert_eq!(
            error(&["=redis-tcp"]),
            "bad target name \"\" in \"=redis-tcp\": use only letters, digits, '_' and '.' \
             (the name becomes part of Go benchmark names)"
        );
        assert_eq!(
            error(&["db=nope"]),
            "unknown target \"nope\": use embedded, embedded-direct, embedded-tcp, \
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis://HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT or NAME=any of these"
        );
        assert_eq!(
            error(&["redis-tcp,"]),
            "empty target in \"redis-tcp,\": remove the extra comma"
        );
    }

    #[test]
    fn spawned_targets_take_options_after_a_question_mark() {
        let specs = parse(&[
            "Replica=redis-tcp?replicas=1,redis-uds?appendonly=yes&appendfsync=always",
            "redis-tcp?save=900:1+60:1000&replicas=2&wait=2",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let replica = ServerOptions {
            replicas: 1,
            ..ServerOptions::default()
        };
        let aof = ServerOptions {
            appendonly: true,
            appendfsync: spawn::AppendFsync::Always,
            ..ServerOptions::default()
        };
        let save = ServerOptions {
            save: vec![
                spawn::SavePoint {
                    seconds: 900,
                    changes: 1,
                },
                spawn::SavePoint {
                    seconds: 60,
                    changes: 1000,
                },
            ],
            replicas: 2,
            ..ServerOptions::default()
        };
        let got: Vec<_> = specs
            .iter()
            .map(|s| (s.name.as_str(), &s.kind, &s.server, s.wait))
            .collect();
        assert_eq!(
            got,
            [
                ("Replica", &TargetKind::SpawnRedisTcp, &replica, 0),
                ("RedisDB_UDS", &TargetKind::SpawnRedisUds, &aof, 0),
                ("RedisDB_TCP", &TargetKind::SpawnRedisTcp, &save, 2),
            ]
        );
        // Without options, the defaults: what a spawned server always was.
        let plain = parse(&["redis-tcp"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain[0].server, ServerOptions::default());
        assert_eq!(plain[0].wait, 0);
    }

    #[test]
    fn options_on_targets_edgebench_does_not_spawn_are_refused_with_the_fix() {
        assert_eq!(
            error(&["embedded?appendonly=yes"]),
            "bad target option in \"embedded?appendonly=yes\": the in-process engine has no \
             persistence or replicas (out of scope for it): use redis-tcp?… or redis-uds?… for \
             these options"
        );
        assert_eq!(
            error(&["e=embedded-tcp?replicas=1"]),
            "bad target option in \"e=embedded-tcp?replicas=1\": the in-process engine has no \
             persistence or replicas (out of scope for it): use redis-tcp?… or redis-uds?… for \
             these options"
        );
        assert_eq!(
            error(&["redis://127.0.0.1:6379?replicas=1"]),
            "bad target option in \"redis://127.0.0.1:6379?replicas=1\": this server is not \
             spawned by edgebench, so its persistence and replicas are its own configuration: \
             set them there (or use redis-tcp?… / redis-uds?…); --wait N works on it"
        );
        assert_eq!(
            error(&["sqlite?appendonly=yes"]),
            "bad target option in \"sqlite?appendonly=yes\": only targets edgebench spawns \
             (redis-tcp, redis-uds) take options: remove ?… or use redis-tcp?…"
        );
        assert_eq!(
            error(&["x=redis-uds?replicas=9"]),
            "bad target option in \"x=redis-uds?replicas=9\": bad replicas value \"9\": use a \
             number from 0 to 5"
        );
        // A PostgreSQL URL keeps its own query.
        assert!(parse(&["postgresql:///db?host=/var/run/postgresql"]).is_ok());
    }

    #[test]
    fn wildcard_listen_addresses_are_refused_with_the_fix() {
        assert_eq!(
            error(&["redis://0.0.0.0:6379"]),
            "bad target URL \"redis://0.0.0.0:6379\": 0.0.0.0 is a listen-on-all address, not \
             one to connect to: use 127.0.0.1 (or ::1)"
        );
        assert_eq!(
            error(&["redis://[::]"]),
            "bad target URL \"redis://[::]\": :: is a listen-on-all address, not one to \
             connect to: use 127.0.0.1 (or ::1)"
        );
    }

    #[test]
    fn every_error_message_is_one_line() {
        for bad in [
            "foo",
            "redis://h:xx",
            "a b=redis-tcp",
            "x|y=redis-uds",
            ",",
            "unix://x",
        ] {
            let message = error(&[bad]);
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn endpoint_displays_as_a_url_that_parses_back() {
        let endpoints = [
            (
                Endpoint::Tcp {
                    host: "127.0.0.1".into(),
                    port: 6379,
                },
                "redis://127.0.0.1:6379",
            ),
            (
                Endpoint::Tcp {
                    host: "::1".into(),
                    port: 7000,
                },
                "redis://[::1]:7000",
            ),
            (
                Endpoint::Unix(std::path::PathBuf::from("/tmp/redis.sock")),
                "redis+unix:///tmp/redis.sock",
            ),
        ];
        for (endpoint, url) in endpoints {
            assert_eq!(endpoint.to_string(), url);
            let parsed = parse(&[url]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(parsed[0].kind, TargetKind::Redis(endpoint));
        }
    }
}
