//! The one parser of Redis URLs, for `--target`, `kv -u/--uri` and `kv -s/-p/-S`.
//!
//! Forms (as redis-rs and memtier read them):
//!
//! ```text
//! redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]     HOST a name, an IPv4 address or [IPv6]
//! rediss://…                                     the same over TLS
//! redis+unix:///PATH   unix:///PATH              an absolute socket path
//! ```
//!
//! A URL may leave out the host or port (memtier's `-u redis://:pw@/2` sets only the
//! password and database); the caller decides the defaults and what it supports. Errors are
//! one line naming what is wrong, for the caller to prefix with its flag and suffix with
//! the forms it accepts.

use std::path::PathBuf;

use super::access::Credentials;
use super::endpoint::Endpoint;

/// The form every error ends with.
pub const URL_FORMS: &str = "use redis[s]://[USER:PASSWORD@]HOST[:PORT][/DB] or redis+unix:///PATH";

/// A parsed Redis URL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RedisUrl {
    /// Where: a TCP host and port, or a socket path.
    pub at: UrlAt,
    /// `USER:PASSWORD` or `PASSWORD` before `@` as written (memtier's `-a` form).
    pub auth: Option<String>,
    /// `/DB`.
    pub db: Option<u32>,
    /// `rediss://`: TLS.
    pub tls: bool,
}

/// The place part of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlAt {
    /// `redis://`: host (IPv6 without brackets) and port, either possibly left out.
    Tcp {
        /// The host, if given.
        host: Option<String>,
        /// The port, if given (never 0).
        port: Option<u16>,
    },
    /// `redis+unix://` or `unix://`.
    Unix(PathBuf),
}

impl Default for UrlAt {
    fn default() -> Self {
        UrlAt::Tcp {
            host: None,
            port: None,
        }
    }
}

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// Not a Redis URL scheme (the caller may try its other schemes).
    NotRedis,
    /// A Redis URL with something wrong; the text says what.
    Bad(String),
}

impl std::fmt::Display for UrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrlError::NotRedis => write!(f, "not a Redis URL: {URL_FORMS}"),
            UrlError::Bad(why) => write!(f, "{why}"),
        }
    }
}

impl RedisUrl {
    /// Parses a `redis://`, `rediss://`, `redis+unix://` or `unix://` URL (schemes in any
    /// case).
    pub fn parse(url: &str) -> Result<RedisUrl, UrlError> {
        let (scheme, rest) = url.split_once("://").ok_or(UrlError::NotRedis)?;
        match scheme.to_ascii_lowercase().as_str() {
            "redis" => parse_tcp(rest),
            "rediss" => parse_tcp(rest).map(|url| RedisUrl { tls: true, ..url }),
            "redis+unix" | "unix" => parse_unix(rest),
            _ => Err(UrlError::NotRedis),
        }
    }

    /// The URL's `USER:PASSWORD@` or `:PASSWORD@`, as `AUTH` takes them.
    pub fn credentials(&self) -> Option<Credentials> {
        self.auth.as_deref().map(Credentials::parse)
    }

    /// The endpoint, with memtier's and redis-cli's defaults for what the URL leaves out
    /// (`localhost`, 6379).
    pub fn endpoint(&self) -> Endpoint {
        match &self.at {
            UrlAt::Tcp { host, port } => Endpoint::tcp(
                host.as_deref().unwrap_or("localhost"),
                port.unwrap_or(DEFAULT_PORT),
            ),
            UrlAt::Unix(path) => Endpoint::Unix(path.clone()),
        }
    }
}

/// Redis's port.
pub const DEFAULT_PORT: u16 = 6379;

/// A port as a URL gives it: 1 to 65535.
pub fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => Err(format!("invalid port {text:?}")),
    }
}

/// After `redis://`: `[AUTH@][HOST][:PORT][/DB]`.
fn parse_tcp(rest: &str) -> Result<RedisUrl, UrlError> {
    let bad = UrlError::Bad;
    // The last '@' ends the credentials (a password may hold '@').
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((auth, host)) => (Some(auth.to_string()), host),
        None => (None, rest),
    };
    if hostpart.contains(['?', '#']) {
        return Err(bad(format!("unexpected options in {hostpart:?}")));
    }
    let (authority, db) = match hostpart.split_once('/') {
        Some((a, "")) => (a, None),
        Some((a, db)) => match db.parse::<u32>() {
            Ok(n) => (a, Some(n)),
            Err(_) => return Err(bad(format!("database {db:?} must be a number"))),
        },
        None => (hostpart, None),
    };
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(bad("missing ']' after the IPv6 address".into()));
        };
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(bad(format!("unexpected {after:?} after ']'"))),
            },
        }
    } else {
        match authority.split_once(':') {
            Some((_, port)) if port.contains(':') => {
                return Err(bad(format!(
                    "an IPv6 address needs brackets: redis://[{authority}]"
                )))
            }
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => Some(parse_port(p).map_err(bad)?),
        None => None,
    };
    Ok(RedisUrl {
        at: UrlAt::Tcp {
            host: (!host.is_empty()).then(|| host.to_string()),
            port,
        },
        auth,
        db,
        tls: false,
    })
}

/// After `redis+unix://` or `unix://`: `/PATH`.
fn parse_unix(rest: &str) -> Result<RedisUrl, UrlError> {
    if !rest.starts_with('/') {
        return Err(UrlError::Bad(
            "the socket path must be absolute, e.g. unix:///tmp/redis.sock".into(),
        ));
    }
    if rest.contains(['?', '#']) {
        return Err(UrlError::Bad(
            "options are not supported: use redis+unix:///PATH".into(),
        ));
    }
    if rest.ends_with('/') {
        return Err(UrlError::Bad(
            "missing socket file name, e.g. unix:///tmp/redis.sock".into(),
        ));
    }
    Ok(RedisUrl {
        at: UrlAt::Unix(PathBuf::from(rest)),
        auth: None,
        db: None,
        tls: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: Option<&str>, port: Option<u16>) -> UrlAt {
        UrlAt::Tcp {
            host: host.map(str::to_string),
            port,
        }
    }

    #[test]
    fn hosts_ports_and_ipv6() {
        let u = RedisUrl::parse("redis://10.0.0.5:7000").unwrap();
        assert_eq!(u.at, tcp(Some("10.0.0.5"), Some(7000)));
        assert_eq!(u.endpoint().to_string(), "redis://10.0.0.5:7000");
        let u = RedisUrl::parse("redis://[::1]:6379").unwrap();
        assert_eq!(u.at, tcp(Some("::1"), Some(6379)));
        assert_eq!(u.endpoint().to_string(), "redis://[::1]:6379");
        let u = RedisUrl::parse("REDIS://[fe80::1]").unwrap();
        assert_eq!(u.at, tcp(Some("fe80::1"), None));
        assert_eq!(u.endpoint().to_string(), "redis://[fe80::1]:6379");
        let u = RedisUrl::parse("redis://db.example/").unwrap();
        assert_eq!(u.endpoint().to_string(), "redis://db.example:6379");
        assert_eq!(RedisUrl::parse("redis://").unwrap().at, tcp(None, None));
    }

    #[test]
    fn user_password_and_database() {
        let u = RedisUrl::parse("redis://bob:pw@db.example:6380/3").unwrap();
        assert_eq!(u.at, tcp(Some("db.example"), Some(6380)));
        assert_eq!((u.auth.as_deref(), u.db), (Some("bob:pw"), Some(3)));
        let u = RedisUrl::parse("redis://:p@ss@[::1]/15").unwrap();
        assert_eq!(u.at, tcp(Some("::1"), None));
        assert_eq!((u.auth.as_deref(), u.db), (Some(":p@ss"), Some(15)));
        let u = RedisUrl::parse("redis://:pw@/2").unwrap();
        assert_eq!(u.at, tcp(None, None));
        assert_eq!((u.auth.as_deref(), u.db), (Some(":pw"), Some(2)));
    }

    #[test]
    fn unix_sockets() {
        for url in ["redis+unix:///run/redis.sock", "unix:///run/redis.sock"] {
            let u = RedisUrl::parse(url).unwrap();
            assert_eq!(u.at, UrlAt::Unix(PathBuf::from("/run/redis.sock")));
            assert_eq!(u.endpoint().to_string(), "redis+unix:///run/redis.sock");
        }
        for (url, why) in [
            ("unix://run/redis.sock", "the socket path must be absolute"),
            ("unix:///run/", "missing socket file name"),
            ("redis+unix:///x.sock?db=1", "options are not supported"),
        ] {
            let e = RedisUrl::parse(url).unwrap_err().to_string();
            assert!(e.starts_with(why), "{url}: {e}");
        }
    }

    #[test]
    fn bad_ports_databases_and_schemes() {
        for (url, why) in [
            ("redis://h:0", "invalid port \"0\""),
            ("redis://h:65536", "invalid port \"65536\""),
            ("redis://h:x", "invalid port \"x\""),
            ("redis://h:", "invalid port \"\""),
            ("redis://[::1]:99999", "invalid port \"99999\""),
            ("redis://h/x", "database \"x\" must be a number"),
            ("redis://[::1", "missing ']' after the IPv6 address"),
            ("redis://[::1]x", "unexpected \"x\" after ']'"),
            (
                "redis://::1",
                "an IPv6 address needs brackets: redis://[::1]",
            ),
            (
                "redis://h?timeout=1",
                "unexpected options in \"h?timeout=1\"",
            ),
        ] {
            assert_eq!(
                RedisUrl::parse(url).unwrap_err(),
                UrlError::Bad(why.to_string()),
                "{url}"
            );
        }
        let u = RedisUrl::parse("rediss://u:p@h:7000").unwrap();
        assert!(u.tls);
        assert_eq!(u.at, tcp(Some("h"), Some(7000)));
        let c = u.credentials().unwrap();
        assert_eq!((c.user.as_deref(), c.password.as_str()), (Some("u"), "p"));
        assert_eq!(RedisUrl::parse("http://h").unwrap_err(), UrlError::NotRedis);
        assert_eq!(RedisUrl::parse("h:6379").unwrap_err(), UrlError::NotRedis);
    }
}
