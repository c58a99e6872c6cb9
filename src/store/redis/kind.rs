//! Redis's `--target` items: spawned servers (`redis-tcp`, `redis-uds`, with their `?…`
//! options, `tls=yes&user=NAME&password=PW` among them), a server by URL
//! (`redis[s]://[USER:PASSWORD@]HOST:PORT[?cacert=FILE…]`, `redis+unix:///PATH`,
//! `unix:///PATH`), a
//! Redis Cluster spawned or by its nodes (`redis-cluster`, `redis-cluster://HOST:PORT,…`) and
//! the `mini-redis` crate's server. Redis URLs are read by the one parser,
//! [`crate::transport::url`].

use std::sync::Arc;

use super::backend::{ClusterTarget, RedisTarget};
use super::cluster_spawn::ClusterShape;
use super::options;
use super::spawn::{self, Listen, ServerOptions};
use crate::store::backend::{Backend, BackendError, Kind, ParseError, Started};
use crate::store::layout::Layout;
use crate::transport::access::TlsVersion;
use crate::transport::url::{RedisUrl, UrlAt, UrlError};
use crate::transport::{Access, Endpoint, ServerSecurity, TlsOptions};

/// Every Redis-protocol target that takes the EdgeX 3.1 layout's commands.
const REDIS_LAYOUTS: &[Layout] = &[Layout::Y2018, Layout::EdgeX3];

/// Redis's `--target` items; `redis-tcp` and `redis-uds` are also in a run without
/// `--target` when a `redis-server` can be spawned.
pub struct RedisBackend;

/// A Redis-protocol server, as its item named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisKind {
    /// A `redis-server` spawned for the run (`redis-tcp`, `redis-uds`), with its options.
    Spawn {
        /// On a free 127.0.0.1 port, or a Unix socket in a temporary directory.
        listen: Listen,
        /// Its persistence and replicas (`?replicas=1&appendonly=yes`).
        server: ServerOptions,
        /// TLS and an ACL user (`?tls=yes&user=NAME&password=PW`).
        security: ServerSecurity,
    },
    /// A Redis server already running at this endpoint, and how to get in.
    At(Endpoint, Access),
    /// A private Redis Cluster spawned for the run, on free 127.0.0.1 ports.
    SpawnCluster {
        /// Its primaries and replicas (`--cluster-shards`, `--cluster-replicas`).
        shape: ClusterShape,
        /// Its nodes' persistence (`redis-cluster?appendonly=yes`).
        server: ServerOptions,
    },
    /// A Redis Cluster already running; the nodes given (`redis-cluster://HOST:PORT,…`), of
    /// which any one that answers is enough.
    Cluster(Vec<Endpoint>),
    /// The `mini-redis` crate's server on a free 127.0.0.1 port, in this process (GET and
    /// SET loads of `edgebench kv` only).
    MiniRedis,
}

impl RedisKind {
    /// A spawned `redis-server` with the default options.
    pub fn spawn(listen: Listen) -> RedisKind {
        RedisKind::Spawn {
            listen,
            server: ServerOptions::default(),
            security: ServerSecurity::default(),
        }
    }
}

impl Backend for RedisBackend {
    fn forms(&self) -> &'static str {
        "redis-tcp, redis-uds, redis-cluster, redis[s]://[USER:PW@]HOST:PORT, redis+unix:///PATH, \
         redis-cluster://HOST:PORT[,HOST:PORT…]"
    }

    fn urls(&self) -> &'static str {
        "redis[s]://HOST:PORT, redis+unix:///PATH, unix:///PATH, redis-cluster://HOST:PORT"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let kind = match what {
            "redis-tcp" => RedisKind::spawn(Listen::Tcp),
            "redis-uds" => RedisKind::spawn(Listen::Unix),
            "redis-cluster" => RedisKind::SpawnCluster {
                shape: ClusterShape::default(),
                server: ServerOptions::default(),
            },
            "mini-redis" => RedisKind::MiniRedis,
            _ => return parse_url(what).map(|r| r.map(|k| Arc::new(k) as Arc<dyn Kind>)),
        };
        Some(Ok(Arc::new(kind)))
    }

    fn defaults(&self, notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        if spawn::redis_server_binary().is_ok() {
            return vec![
                Arc::new(RedisKind::spawn(Listen::Tcp)),
                Arc::new(RedisKind::spawn(Listen::Unix)),
            ];
        }
        notes.push(
            "redis-server is not on PATH: no RedisDB_TCP and RedisDB_UDS columns (install \
             redis-server, or set EDGEBENCH_REDIS_SERVER to its path)"
                .to_string(),
        );
        Vec::new()
    }
}

/// A Redis or Redis Cluster URL; `None` when `what` is neither.
fn parse_url(what: &str) -> Option<Result<RedisKind, ParseError>> {
    let (scheme, rest) = what.split_once("://")?;
    let bad = |reason: String| Some(Err(ParseError::BadUrl(reason)));
    if scheme.eq_ignore_ascii_case("redis-cluster") {
        return Some(parse_cluster_url(what, rest).map_err(ParseError::BadUrl));
    }
    let (base, query) = match what.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (what, None),
    };
    let url = match RedisUrl::parse(base) {
        Ok(url) => url,
        Err(UrlError::Bad(reason)) => return bad(reason),
        Err(UrlError::NotRedis) => return None,
    };
    if let Some(db) = url.db {
        return bad(format!(
            "unexpected \"/{db}\" after HOST:PORT (database numbers and options are not \
             supported): use redis://HOST:PORT"
        ));
    }
    if let UrlAt::Tcp { host, .. } = &url.at {
        match host.as_deref() {
            None => return bad("missing host: use redis://HOST:PORT".into()),
            // The 2018 configs said 0.0.0.0; that is where a server listens, not where to
            // connect.
            Some(host @ ("0.0.0.0" | "::")) => {
                return bad(format!(
                    "{host} is a listen-on-all address, not one to connect to: use 127.0.0.1 \
                     (or ::1)"
                ))
            }
            Some(_) => {}
        }
    }
    let tls = match (url.tls, query) {
        (true, Some(query)) => match tls_url_options(query) {
            Ok(tls) => Some(tls),
            Err(reason) => return Some(Err(ParseError::BadOption(reason))),
        },
        (true, None) => Some(TlsOptions::default()),
        (false, Some(_)) => {
            return Some(Err(ParseError::BadOption(
                "this server is not spawned by edgebench, so its persistence and replicas are \
                 its own configuration: set them there (or use redis-tcp?… / redis-uds?…); \
                 --wait N works on it"
                    .to_string(),
            )))
        }
        (false, None) => None,
    };
    let access = Access {
        tls,
        credentials: url.credentials(),
    };
    Some(Ok(RedisKind::At(url.endpoint(), access)))
}

/// The TLS options a `rediss://` target takes after `?`, named as memtier's flags:
/// `cacert=FILE`, `cert=FILE`, `key=FILE`, `tls-skip-verify=yes`, `sni=NAME` and
/// `tls-protocols=TLSv1.2+TLSv1.3`, joined with `&`. Files are read when the target starts.
fn tls_url_options(query: &str) -> Result<TlsOptions, String> {
    const KNOWN: &str = "cacert=FILE, cert=FILE, key=FILE, tls-skip-verify=yes, sni=NAME, \
                         tls-protocols=TLSv1.2+TLSv1.3, joined with &";
    let mut tls = TlsOptions::default();
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=').filter(|(_, v)| !v.is_empty()) else {
            return Err(format!("{pair:?} is not KEY=VALUE: use {KNOWN}"));
        };
        match key {
            "cacert" => tls.cacert = Some(value.into()),
            "cert" => tls.cert = Some(value.into()),
            "key" => tls.key = Some(value.into()),
            "sni" => tls.sni = Some(value.to_string()),
            "tls-skip-verify" => {
                tls.skip_verify = match value {
                    "yes" => true,
                    "no" => false,
                    _ => {
                        return Err(format!(
                            "bad tls-skip-verify value {value:?}: use yes or no"
                        ))
                    }
                }
            }
            // `+` joins them, as `,` separates --target items.
            "tls-protocols" => {
                tls.protocols = TlsVersion::parse_list(&value.replace('+', ","))
                    .map_err(|e| format!("tls-protocols={value}: {e}"))?
            }
            _ => {
                return Err(format!(
                    "unknown option {key:?} of a rediss:// URL: use {KNOWN}"
                ))
            }
        }
    }
    Ok(tls)
}

/// The first node of `redis-cluster://HOST:PORT` (more nodes follow as separate items).
fn parse_cluster_url(url: &str, rest: &str) -> Result<RedisKind, String> {
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() {
        return Err("no node: use redis-cluster://HOST:PORT[,HOST:PORT…]".to_string());
    }
    match cluster_node(rest) {
        Some(node) => Ok(RedisKind::Cluster(vec![node])),
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

impl Kind for RedisKind {
    /// The transport's column, with what secures it after a `+` (`RedisDB_TCP+TLS+ACL`),
    /// as the service and bus columns add their path.
    fn column(&self) -> String {
        let transport = match self {
            RedisKind::Spawn {
                listen: Listen::Unix,
                ..
            }
            | RedisKind::At(Endpoint::Unix(_), _) => "RedisDB_UDS",
            RedisKind::Spawn {
                listen: Listen::Tcp,
                ..
            }
            | RedisKind::At(Endpoint::Tcp { .. }, _) => "RedisDB_TCP",
            RedisKind::SpawnCluster { .. } | RedisKind::Cluster(_) => "RedisCluster",
            RedisKind::MiniRedis => "MiniRedis",
        };
        let secured = match self {
            RedisKind::Spawn { security, .. } => security.column_suffix(),
            RedisKind::At(_, access) => access.column_suffix(),
            _ => String::new(),
        };
        format!("{transport}{secured}")
    }

    fn layouts(&self) -> &'static [Layout] {
        match self {
            RedisKind::MiniRedis => &[Layout::Y2018],
            _ => REDIS_LAYOUTS,
        }
    }

    fn no_edgex_layout(&self) -> Option<&'static str> {
        (*self == RedisKind::MiniRedis).then_some(
            "mini-redis takes only GET and SET, so it has no EdgeX layout: use --target embedded, \
             redis-tcp or redis-uds",
        )
    }

    fn ycsb_bindings(&self) -> &'static [crate::store::ycsb::Binding] {
        match self {
            RedisKind::MiniRedis => &[],
            _ => super::ycsb::BINDINGS,
        }
    }

    fn is_cluster(&self) -> bool {
        matches!(self, RedisKind::SpawnCluster { .. } | RedisKind::Cluster(_))
    }

    fn configures_server(&self) -> bool {
        match self {
            RedisKind::Spawn { server, .. } | RedisKind::SpawnCluster { server, .. } => {
                !server.is_default()
            }
            _ => false,
        }
    }

    fn is_external(&self) -> bool {
        matches!(self, RedisKind::At(..))
    }

    fn fds_per_connection(&self) -> u8 {
        match self {
            RedisKind::MiniRedis => 2,
            _ => 1,
        }
    }

    fn with_options(&self, query: &str) -> Result<(Arc<dyn Kind>, u32), String> {
        let (kind, parsed) =
            match self {
                RedisKind::Spawn { listen, .. } => {
                    let parsed = options::parse(query, false)?;
                    if parsed.security.tls && *listen == Listen::Unix {
                        return Err("tls=yes is for redis-tcp: redis-server speaks plain text \
                                    on its Unix socket (a user and password work there)"
                            .to_string());
                    }
                    let kind = RedisKind::Spawn {
                        listen: *listen,
                        server: parsed.server.clone(),
                        security: parsed.security.clone(),
                    };
                    (kind, parsed)
                }
                RedisKind::SpawnCluster { shape, .. } => {
                    let parsed = options::parse(query, true)?;
                    let kind = RedisKind::SpawnCluster {
                        shape: *shape,
                        server: parsed.server.clone(),
                    };
                    (kind, parsed)
                }
                _ => return Err(
                    "only targets edgebench spawns (redis-tcp, redis-uds) take options: remove \
                     ?… or use redis-tcp?…"
                        .to_string(),
                ),
            };
        Ok((Arc::new(kind), parsed.wait))
    }

    fn with_item(&self, item: &str) -> Option<Arc<dyn Kind>> {
        let RedisKind::Cluster(nodes) = self else {
            return None;
        };
        let node = cluster_node(item)?;
        let mut nodes = nodes.clone();
        nodes.push(node);
        Some(Arc::new(RedisKind::Cluster(nodes)))
    }

    fn with_cluster_shape(
        &self,
        shards: Option<u16>,
        replicas: Option<u16>,
    ) -> Option<Result<Arc<dyn Kind>, String>> {
        let RedisKind::SpawnCluster { shape, server } = self else {
            return None;
        };
        let shape = ClusterShape {
            shards: shards.unwrap_or(shape.shards),
            replicas: replicas.unwrap_or(shape.replicas),
            ..*shape
        };
        Some(shape.check().map(|()| {
            Arc::new(RedisKind::SpawnCluster {
                shape,
                server: server.clone(),
            }) as Arc<dyn Kind>
        }))
    }

    fn start(&self, _layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        Ok(match self {
            RedisKind::Spawn {
                listen,
                server,
                security,
            } => Box::new(RedisTarget::spawn(*listen, server, security, wait)?),
            RedisKind::At(endpoint, access) => {
                Box::new(RedisTarget::at_url(endpoint.clone(), access.clone(), wait)?)
            }
            RedisKind::SpawnCluster { shape, server } => Box::new(ClusterTarget::spawn(
                *shape,
                &server.persistence_args(),
                wait,
            )?),
            RedisKind::Cluster(nodes) => Box::new(ClusterTarget::at(nodes, wait)?),
            RedisKind::MiniRedis => {
                crate::store::backend::no_wait(wait)?;
                Box::new(RedisTarget::mini_redis()?)
            }
        })
    }
}
