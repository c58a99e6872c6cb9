//! The connection section of [`super::KvConfig`]: where the load goes (`-s`/`-p`, `-S`,
//! `-u`), how each connection introduces itself (`-P`, `-a`, `--select-db`) and how long it
//! may take (`--connection-timeout`, `--reconnect-interval`).
//!
//! Invariants of a [`Connection`]: exactly one of `server` and `unix_socket` is set; a `-u`
//! URI has already overridden `-s`, `-p`, `-S`, `-a` and `--select-db` (memtier: the URI
//! takes precedence, with a warning per overridden flag).

use std::path::PathBuf;
use std::time::Duration;

use super::args::KvArgs;
use super::config::Protocol;
use super::parse::{parse_u32, parse_u64};
use super::uri::parse_uri;
use crate::kv::error::{conflict, invalid, KvConfigError};
use crate::target::url::UrlAt;
use crate::transport::access::{TlsOptions, TlsVersion};

/// The connection fields of [`super::KvConfig`], typed.
pub(super) struct Connection {
    pub server: Option<String>,
    pub port: u16,
    pub unix_socket: Option<PathBuf>,
    pub protocol: Protocol,
    pub authenticate: Option<String>,
    pub select_db: u32,
    pub tls: Option<TlsOptions>,
    pub reconnect_interval: Option<u32>,
    pub connection_timeout: Option<Duration>,
}

/// Types the connection flags, applying `-u` over the others (with a warning per flag it
/// overrides).
pub(super) fn connection(
    a: &KvArgs,
    warnings: &mut Vec<String>,
) -> Result<Connection, KvConfigError> {
    let mut server = a.server.clone();
    let mut port = match &a.port {
        Some(p) => Some(match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(invalid("--port", p, "a port must be a number in 1-65535")),
        }),
        None => None,
    };
    let mut authenticate = a.authenticate.clone();
    let mut select_db = a
        .select_db
        .as_deref()
        .map(|v| parse_u32("--select-db", v, 0, "a database number is 0 or more"))
        .transpose()?;
    let mut uri_socket = a.unix_socket.clone();
    let mut tls = a.tls;
    if let Some(uri) = &a.uri {
        // memtier: the URI takes precedence, with a warning per overridden option.
        let u = parse_uri(uri)?;
        for (given, flag) in [
            (server.is_some(), "--server"),
            (port.is_some(), "--port"),
            (uri_socket.is_some(), "--unix-socket"),
            (authenticate.is_some(), "--authenticate"),
            (select_db.is_some(), "--select-db"),
        ] {
            if given {
                warnings.push(format!(
                    "both --uri and {flag} given; the URI takes precedence"
                ));
            }
        }
        match u.at {
            UrlAt::Tcp { host, port: p } => {
                server = host.or(server);
                port = p.or(port);
            }
            UrlAt::Unix(path) => {
                (server, port) = (None, None);
                uri_socket = Some(path);
            }
        }
        authenticate = u.auth.or(authenticate);
        select_db = u.db.or(select_db);
        tls |= u.tls;
    }
    let unix_socket = uri_socket;
    if let Some(sock) = &unix_socket {
        if server.is_some() || port.is_some() {
            return Err(conflict(
                format!("-S {} with -s/-p", sock.display()),
                "a Unix socket and TCP cannot be used together (memtier): drop -s/-p or -S",
            ));
        }
    }
    let server = if unix_socket.is_none() {
        Some(server.unwrap_or_else(|| "localhost".to_string()))
    } else {
        None
    };
    let tls = tls_options(a, tls)?;
    if let (Some(_), Some(sock)) = (&tls, &unix_socket) {
        return Err(conflict(
            format!("--tls with -S {}", sock.display()),
            "TLS is spoken over TCP (redis-server's Unix socket is plain text): drop --tls or \
             use -s/-p",
        ));
    }
    let protocol = match a.protocol.as_deref() {
        None | Some("redis") => Protocol::Redis,
        Some("resp2") => Protocol::Resp2,
        Some("resp3") => Protocol::Resp3,
        Some(p @ ("memcache_text" | "memcache_binary")) => {
            return Err(KvConfigError::Unsupported {
                flag: format!("--protocol {p}"),
                why: "edgebench kv speaks the Redis protocol only: use redis, resp2 or resp3",
            })
        }
        Some(p) => return Err(invalid("--protocol", p, "use redis, resp2 or resp3")),
    };
    let reconnect_interval = a
        .reconnect_interval
        .as_deref()
        .map(|v| {
            parse_u32(
                "--reconnect-interval",
                v,
                1,
                "give a number of requests above 0",
            )
        })
        .transpose()?;
    let connection_timeout = match &a.connection_timeout {
        Some(v) => match parse_u64(
            "--connection-timeout",
            v,
            0,
            "give whole seconds, 0 for no timeout",
        )? {
            0 => None,
            secs => Some(Duration::from_secs(secs)),
        },
        None => None,
    };
    Ok(Connection {
        server,
        port: port.unwrap_or(6379),
        unix_socket,
        protocol,
        authenticate,
        select_db: select_db.unwrap_or(0),
        tls,
        reconnect_interval,
        connection_timeout,
    })
}

/// memtier's TLS flags, typed and checked now (every file read, the key matched to the
/// certificate), so a bad one is a usage error before anything connects. The other TLS
/// flags without `--tls` are refused: memtier would ignore them silently.
fn tls_options(a: &KvArgs, tls: bool) -> Result<Option<TlsOptions>, KvConfigError> {
    let protocols = match &a.tls_protocols {
        Some(v) => TlsVersion::parse_list(v).map_err(|fix| invalid("--tls-protocols", v, fix))?,
        None => Vec::new(),
    };
    let options = TlsOptions {
        cacert: a.cacert.clone(),
        cert: a.cert.clone(),
        key: a.key.clone(),
        skip_verify: a.tls_skip_verify,
        sni: a.sni.clone(),
        protocols,
    };
    if !tls {
        let given = [
            (options.cacert.is_some(), "--cacert"),
            (options.cert.is_some(), "--cert"),
            (options.key.is_some(), "--key"),
            (options.skip_verify, "--tls-skip-verify"),
            (options.sni.is_some(), "--sni"),
            (a.tls_protocols.is_some(), "--tls-protocols"),
        ];
        if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
            return Err(conflict(
                format!("{flag} without --tls"),
                "add --tls (or use -u rediss://…)",
            ));
        }
        return Ok(None);
    }
    options.client().map_err(KvConfigError::Tls)?;
    Ok(Some(options))
}
