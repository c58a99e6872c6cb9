//! What `--target` says: a [`TargetSpec`] (a column name and a [`TargetKind`]) per item,
//! parsed from the command line, and the default targets of a run without `--target`.
//!
//! Each item is read by the backend whose form it is ([`crate::store::BACKENDS`] lists them, and each
//! backend's folder under `store/` parses its own). What this module adds: `NAME=` before an
//! item, `?…` options after a keyword, a cluster URL's further nodes, and unique column names.
//!
//! Each target has a column name (`RedisDB_TCP`, `RedisDB_UDS`, or the user's `NAME=`). It
//! becomes part of Go benchmark names such as `BenchmarkRedisDB_TCP/AddEvent-2`, so it is
//! restricted to `[A-Za-z0-9_.]` and unique within a run.

use std::collections::HashSet;
use std::sync::Arc;

use super::error::TargetError;
use super::layout::{Layout, Via};
use crate::store::backend::{Kind, ParseError};
use crate::store::redis::spawn;
use crate::store::BACKENDS;

/// What a target is, as its backend parsed it from the item: compare it, ask its column and
/// layouts ([`Kind`]'s methods), start it.
#[derive(Clone)]
pub struct TargetKind(Arc<dyn Kind>);

// By hand: a derived `==` on `Arc<dyn Kind>` moves out of the reference (rust-lang/rust#31740).
impl PartialEq for TargetKind {
    fn eq(&self, other: &TargetKind) -> bool {
        *self.0 == *other.0
    }
}

impl Eq for TargetKind {}

impl TargetKind {
    /// A backend's kind.
    pub fn new(kind: impl Kind + 'static) -> TargetKind {
        TargetKind(Arc::new(kind))
    }
}

impl From<Arc<dyn Kind>> for TargetKind {
    fn from(kind: Arc<dyn Kind>) -> TargetKind {
        TargetKind(kind)
    }
}

impl std::ops::Deref for TargetKind {
    type Target = dyn Kind;
    fn deref(&self) -> &(dyn Kind + 'static) {
        &*self.0
    }
}

impl std::fmt::Debug for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A named target, as parsed from the command line; [`super::Target::start`] brings it up.
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
    /// Follow every write with `WAIT wait 0` (`?wait=N`, `--wait N`); 0: no WAIT.
    pub wait: u32,
    /// With [`Via::Bus`]: the bus, and how devices publish on it.
    pub bus: Option<super::bused::BusSettings>,
}

impl TargetSpec {
    /// A target in column `name`, in the 2018 layout, called directly.
    pub fn new(name: &str, kind: TargetKind) -> TargetSpec {
        TargetSpec {
            name: name.to_string(),
            kind,
            layout: Layout::default(),
            via: Via::default(),
            wait: 0,
            bus: None,
        }
    }

    /// Whether it can keep its data in `layout`.
    pub fn has_layout(&self, layout: Layout) -> bool {
        self.kind.layouts().contains(&layout)
    }

    /// Its current EdgeX layout, if it has one.
    pub fn edgex_layout(&self) -> Option<Layout> {
        self.kind.layouts().iter().copied().find(|l| l.is_edgex())
    }
}

/// Parses `--target` values into specs, in order.
///
/// Each value is a comma-separated list of items, each one of a backend's forms (the
/// backend's `forms()`: `redis-tcp`, `redis://HOST:PORT`, `sqlite`, `pg-uds`, `mongodb://…`,
/// …), optionally `NAME=ITEM` to name its column (`[A-Za-z0-9_.]+`), and, on a keyword, `?…`
/// options for the backend (`redis-tcp?replicas=1&wait=1`). The items after a
/// `redis-cluster://HOST:PORT` that are `HOST:PORT` are more of its nodes.
///
/// A column name given twice gets `_2`, `_3`, ... appended from its second use on.
pub fn parse_targets(values: &[String]) -> Result<Vec<TargetSpec>, TargetError> {
    let mut specs: Vec<TargetSpec> = Vec::new();
    for value in values {
        for item in value.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(TargetError::Empty {
                    value: value.clone(),
                });
            }
            if let Some(last) = specs.last_mut() {
                if let Some(kind) = last.kind.with_item(item) {
                    last.kind = kind.into();
                    continue;
                }
            }
            specs.push(parse_item(item)?);
        }
    }
    dedupe_names(&mut specs);
    Ok(specs)
}

/// The targets of a run without `--target`, from each backend in the registry's order (every
/// embedded transport; `redis-tcp` and `redis-uds` when a `redis-server` can be spawned;
/// `SQLite_Embedded`; `pg-tcp`, `pg-uds` when a PostgreSQL server answers there). The notes
/// say what was left out and how to get it (one line each).
pub fn default_targets() -> (Vec<TargetSpec>, Vec<String>) {
    let mut notes = Vec::new();
    let specs = BACKENDS
        .iter()
        .flat_map(|backend| backend.defaults(&mut notes))
        .map(|kind| TargetSpec::new(&kind.column(), kind.into()))
        .collect();
    (specs, notes)
}

/// Whether `redis-tcp` and `redis-uds` can start a server: `redis-server` is on `PATH`, or
/// [`spawn::REDIS_SERVER_ENV`] names one.
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
    // A keyword's options; a URL keeps its own query (PostgreSQL's `?host=`), and its backend
    // refuses options it does not take.
    let (what, query) = match what.split_once('?') {
        Some((base, query)) if !base.contains("://") => (base, Some(query)),
        _ => (what, None),
    };
    let kind = parse_kind(what, item)?;
    let (kind, wait) = match query {
        None => (kind, 0),
        Some(query) => {
            let (kind, wait) =
                kind.with_options(query)
                    .map_err(|reason| TargetError::BadOption {
                        item: item.to_string(),
                        reason,
                    })?;
            (kind.into(), wait)
        }
    };
    let column = kind.column();
    let mut spec = TargetSpec::new(name.unwrap_or(&column), kind);
    spec.wait = wait;
    Ok(spec)
}

/// The first backend's reading of `what` (from `item`), or why no backend reads it.
fn parse_kind(what: &str, item: &str) -> Result<TargetKind, TargetError> {
    let parsed = BACKENDS.iter().find_map(|backend| backend.parse(what));
    match (parsed, what.split_once("://")) {
        (Some(Ok(kind)), _) => Ok(kind.into()),
        (Some(Err(ParseError::BadUrl(reason))), _) => Err(TargetError::BadUrl {
            url: crate::redact::redact_password(what),
            reason,
        }),
        (Some(Err(ParseError::BadOption(reason))), _) => Err(TargetError::BadOption {
            item: item.to_string(),
            reason,
        }),
        (None, Some((scheme, _))) => {
            let urls: Vec<&str> = BACKENDS
                .iter()
                .map(|b| b.urls())
                .filter(|u| !u.is_empty())
                .collect();
            Err(TargetError::BadUrl {
                url: crate::redact::redact_password(what),
                reason: format!("unsupported scheme {scheme:?}: use {}", one_of(&urls)),
            })
        }
        (None, None) => {
            let forms: Vec<&str> = BACKENDS.iter().map(|b| b.forms()).collect();
            Err(TargetError::Unknown {
                item: what.to_string(),
                forms: forms.join(", "),
            })
        }
    }
}

/// `a, b or c`.
fn one_of(forms: &[&str]) -> String {
    match forms.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
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
        if let Some(reshaped) = spec.kind.with_cluster_shape(shards, replicas) {
            spec.kind = reshaped
                .map_err(|why| TargetError::Unsuitable {
                    name: spec.name.clone(),
                    why,
                })?
                .into();
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
    use crate::store::mongo::backend::MongoKind;
    use crate::store::postgres::backend::PgAt;
    use crate::store::postgres::PgTransport;
    use crate::store::redis::kind::RedisKind;
    use crate::store::redis::spawn::{Listen, ServerOptions};
    use crate::store::redis::ClusterShape;
    use crate::store::sqlite::backend::SqliteAt;
    use crate::transport::{Access, Endpoint, ServerSecurity};

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
        kind(RedisKind::At(
            Endpoint::Tcp {
                host: host.to_string(),
                port,
            },
            Access::default(),
        ))
    }

    pub(in crate::target) fn unix(path: &str) -> TargetKind {
        kind(RedisKind::At(
            Endpoint::Unix(std::path::PathBuf::from(path)),
            Access::default(),
        ))
    }

    pub(in crate::target) fn spawned(listen: Listen) -> TargetKind {
        kind(RedisKind::spawn(listen))
    }

    fn kind(kind: impl Kind + 'static) -> TargetKind {
        TargetKind::new(kind)
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
                spec("RedisDB_TCP", spawned(Listen::Tcp)),
                spec("RedisDB_UDS", spawned(Listen::Unix)),
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
        let mongo = |url: &str| kind(MongoKind { url: url.into() });
        assert_eq!(
            specs,
            vec![
                spec("SQLite_Embedded", kind(SqliteAt::Temp)),
                spec(
                    "SQLite_Embedded_2",
                    kind(SqliteAt::File("/tmp/eb.db".into()))
                ),
                spec("SQLite_Embedded_3", kind(SqliteAt::Memory)),
                spec("PostgreSQL_TCP", kind(PgAt::Env(PgTransport::Tcp))),
                spec("PostgreSQL_UDS", kind(PgAt::Env(PgTransport::Uds))),
                spec(
                    "PostgreSQL_TCP_2",
                    kind(PgAt::Url("postgres://me@127.0.0.1:5432/db".into()))
                ),
                spec(
                    "PostgreSQL_UDS_2",
                    kind(PgAt::Url(
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
                spec("RedisDB_TCP", spawned(Listen::Tcp)),
                spec("local", tcp("127.0.0.1", 6379)),
                spec("v7.2", unix("/tmp/r.sock")),
                spec("uds_spawned", spawned(Listen::Unix)),
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
            kind(RedisKind::Cluster(vec![node(7000), node(7001)]))
        );
        assert_eq!(specs[1].kind, spawned(Listen::Tcp));
        let mut specs = parse(&["C=redis-cluster"]).unwrap();
        assert_eq!(specs[0].name, "C");
        assert_eq!(
            specs[0].kind,
            kind(RedisKind::SpawnCluster {
                shape: ClusterShape::default(),
                server: ServerOptions::default(),
            })
        );
        set_cluster_shape(&mut specs, Some(6), None).unwrap();
        let Some(RedisKind::SpawnCluster { shape, .. }) =
            specs[0].kind.as_any().downcast_ref::<RedisKind>()
        else {
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
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis[s]://[USER:PW@]HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT, http://HOST:PORT, https://HOST:PORT[?cacert=FILE], http+unix:///PATH or NAME=any of these"
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
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis[s]://[USER:PW@]HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT, http://HOST:PORT, https://HOST:PORT[?cacert=FILE], http+unix:///PATH or NAME=any of these"
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
            error(&["rediss://h:1?cacert"]),
            "bad target option in \"rediss://h:1?cacert\": \"cacert\" is not KEY=VALUE: use \
             cacert=FILE, cert=FILE, key=FILE, tls-skip-verify=yes, sni=NAME, \
             tls-protocols=TLSv1.2+TLSv1.3, joined with &"
        );
        assert_eq!(
            error(&["rediss://h:1?tls-protocols=TLSv1.1"]),
            "bad target option in \"rediss://h:1?tls-protocols=TLSv1.1\": \
             tls-protocols=TLSv1.1: TLSv1.1 is not supported (rustls speaks only TLS 1.2 and \
             1.3; RFC 8996 deprecated 1.0 and 1.1): use TLSv1.2 and TLSv1.3 (space- or \
             comma-separated)"
        );
        assert_eq!(
            error(&["redis-uds?tls=yes"]),
            "bad target option in \"redis-uds?tls=yes\": tls=yes is for redis-tcp: \
             redis-server speaks plain text on its Unix socket (a user and password work there)"
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
             embedded-uds, redis-tcp, redis-uds, redis-cluster, redis[s]://[USER:PW@]HOST:PORT, \
             redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, \
             sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, \
             mongodb://HOST:PORT, http://HOST:PORT, https://HOST:PORT[?cacert=FILE], http+unix:///PATH or NAME=any of these"
        );
        assert_eq!(
            error(&["redis-tcp,"]),
            "empty target in \"redis-tcp,\": remove the extra comma"
        );
    }

    #[test]
    fn secured_targets_say_so_in_their_column() {
        let specs = parse(&[
            "rediss://h:7000,redis://u:p@h:7001,rediss://:p@h?cacert=/ca.crt&tls-skip-verify=yes",
            "redis-tcp?tls=yes,redis-tcp?user=edgex&password=pw,redis-tcp?tls=yes&user=u&password=p",
            "redis-uds?user=u&password=p,mine=rediss://h",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "RedisDB_TCP+TLS",
                "RedisDB_TCP+ACL",
                "RedisDB_TCP+TLS+AUTH",
                "RedisDB_TCP+TLS_2",
                "RedisDB_TCP+ACL_2",
                "RedisDB_TCP+TLS+ACL",
                "RedisDB_UDS+ACL",
                "mine",
            ]
        );
        let Some(RedisKind::At(endpoint, access)) =
            specs[2].kind.as_any().downcast_ref::<RedisKind>()
        else {
            panic!("{:?}", specs[2].kind);
        };
        assert_eq!(endpoint.to_string(), "redis://h:6379");
        let tls = access.tls.as_ref().unwrap();
        assert_eq!(tls.cacert.as_deref(), Some(std::path::Path::new("/ca.crt")));
        assert!(tls.skip_verify);
        let credentials = access.credentials.as_ref().unwrap();
        assert_eq!(
            (credentials.user.as_deref(), credentials.password.as_str()),
            (None, "p")
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
        let with = |listen, server| {
            kind(RedisKind::Spawn {
                listen,
                server,
                security: ServerSecurity::default(),
            })
        };
        let got: Vec<_> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.kind.clone(), s.wait))
            .collect();
        assert_eq!(
            got,
            [
                ("Replica", with(Listen::Tcp, replica), 0),
                ("RedisDB_UDS", with(Listen::Unix, aof), 0),
                ("RedisDB_TCP", with(Listen::Tcp, save), 2),
            ]
        );
        assert!(specs.iter().all(|s| s.kind.configures_server()));
        // Without options, the defaults: what a spawned server always was.
        let plain = parse(&["redis-tcp"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain[0].kind, spawned(Listen::Tcp));
        assert!(!plain[0].kind.configures_server());
        assert_eq!(plain[0].wait, 0);
    }

    #[test]
    fn engine_targets_take_the_persistence_options() {
        let specs = parse(&[
            "embedded?appendonly=yes&appendfsync=always,embedded-direct?save=60:1000",
            "embedded-uds?appendonly=yes,embedded-tcp",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<_> = specs
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.kind.configures_server(),
                    s.kind.memory_only(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("RedisDB_Embedded", true, false),
                ("Embedded_Direct", true, false),
                ("Embedded_UDS", true, false),
                ("Embedded_TCP", false, true),
            ]
        );
    }

    #[test]
    fn options_on_targets_edgebench_does_not_spawn_are_refused_with_the_fix() {
        assert_eq!(
            error(&["e=embedded-tcp?replicas=1"]),
            "bad target option in \"e=embedded-tcp?replicas=1\": the in-process engine has no \
             replicas (out of scope for it): drop replicas= and wait=, or use redis-tcp?… or \
             redis-uds?… for them"
        );
        assert_eq!(
            error(&["embedded-uds?tls=yes"]),
            "bad target option in \"embedded-uds?tls=yes\": TLS is spoken on TCP only (the \
             Unix socket stays plain, as redis-server's): use embedded-tcp?tls=yes"
        );
        assert_eq!(
            error(&["embedded?user=u&password=p"]),
            "bad target option in \"embedded?user=u&password=p\": tls= and user= are for a \
             connection, and the in-process engine has none: use \
             embedded-tcp?tls=yes&user=NAME&password=PW"
        );
        assert_eq!(
            error(&["embedded?appendfsync=no"]),
            "bad target option in \"embedded?appendfsync=no\": appendfsync=no needs \
             appendonly=yes: add &appendonly=yes"
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
            assert_eq!(
                parsed[0].kind,
                kind(RedisKind::At(endpoint, Access::default()))
            );
        }
    }
}
