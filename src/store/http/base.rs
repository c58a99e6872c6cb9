//! Where a core-data service is: `http://HOST:PORT[/]`, `https://HOST:PORT[/][?cacert=FILE]`
//! or `http+unix:///PATH`, parsed into [`HttpBase`] with errors that name the input and the
//! fix.

use std::fmt;
use std::path::PathBuf;

/// EdgeX's core-data port.
pub const DEFAULT_PORT: u16 = 59880;

/// A core-data service's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpBase {
    /// `http://HOST:PORT`. `host` is a name or an IP address, IPv6 without brackets.
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// `http+unix:///PATH`: a Unix socket file.
    Unix(PathBuf),
    /// `https://HOST:PORT`: TCP with TLS, the server checked against `cacert` (a PEM file,
    /// as curl's `--cacert`) or, without one, the Mozilla roots.
    Https {
        /// Host name or address: also the name the certificate must carry.
        host: String,
        /// Port.
        port: u16,
        /// `?cacert=FILE`.
        cacert: Option<PathBuf>,
    },
}

const FORMS: &str =
    "use http://HOST:PORT, https://HOST:PORT[?cacert=CA.pem] or http+unix:///PATH/TO/SOCKET";

impl HttpBase {
    /// Parses `http://host:port[/]` (port 59880 when left out; IPv6 in brackets) or
    /// `http+unix:///path`.
    pub fn parse(url: &str) -> Result<HttpBase, String> {
        if let Some(path) = url.strip_prefix("http+unix://") {
            if !path.starts_with('/') || path.len() < 2 {
                return Err(format!(
                    "{url:?}: a Unix socket URL needs an absolute path after http+unix:// \
                     (three slashes in all): {FORMS}"
                ));
            }
            return Ok(HttpBase::Unix(PathBuf::from(path)));
        }
        let (rest, tls) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (rest, false),
            (_, Some(rest)) => (rest, true),
            _ => return Err(format!("{url:?} is not a core-data service URL: {FORMS}")),
        };
        let (rest, cacert) = match rest.split_once('?') {
            Some((rest, query)) if tls => (rest, Some(cacert_of(url, query)?)),
            _ => (rest, None),
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains('/') || authority.contains('?') || authority.contains('@') {
            return Err(format!(
                "{url:?}: give the service's address only, without a path, query or user \
                 (the client adds /api/v3/...): {FORMS}"
            ));
        }
        let (host, port) = split_host_port(authority)
            .ok_or_else(|| format!("{url:?}: cannot read HOST:PORT: {FORMS}"))?;
        if host.is_empty() {
            return Err(format!("{url:?}: the host is missing: {FORMS}"));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("{url:?}: port {p:?} is not 1..65535: {FORMS}"))?,
        };
        if tls {
            return Ok(HttpBase::Https {
                host: host.to_string(),
                port,
                cacert,
            });
        }
        Ok(HttpBase::Tcp {
            host: host.to_string(),
            port,
        })
    }

    /// The `Host` header of a request: `host:port` (IPv6 in brackets), or `localhost` for a
    /// Unix socket (HTTP/1.1 requires one; a socket has no host).
    pub fn host_header(&self) -> String {
        match self {
            HttpBase::Tcp { host, port } | HttpBase::Https { host, port, .. }
                if host.contains(':') =>
            {
                format!("[{host}]:{port}")
            }
            HttpBase::Tcp { host, port } | HttpBase::Https { host, port, .. } => {
                format!("{host}:{port}")
            }
            HttpBase::Unix(_) => "localhost".to_string(),
        }
    }

    /// The URL of a path on this service, for messages.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{self}{path_and_query}")
    }
}

/// The CA file of an `https://` URL's query: `cacert=FILE`, nothing else.
fn cacert_of(url: &str, query: &str) -> Result<PathBuf, String> {
    match query.split_once('=') {
        Some(("cacert", file)) if !file.is_empty() && !file.contains('&') => {
            Ok(PathBuf::from(file))
        }
        _ => Err(format!(
            "{url:?}: the only option of an https:// URL is cacert=FILE (the CA that signed \
             the service's certificate): {FORMS}"
        )),
    }
}

/// `host[:port]`, `[v6][:port]`.
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            _ => Some((host, Some(after.strip_prefix(':')?))),
        };
    }
    match authority.split_once(':') {
        Some((host, port)) => Some((host, Some(port))),
        None => Some((authority, None)),
    }
}

impl fmt::Display for HttpBase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpBase::Tcp { host, port } if host.contains(':') => {
                write!(f, "http://[{host}]:{port}")
            }
            HttpBase::Tcp { host, port } => write!(f, "http://{host}:{port}"),
            HttpBase::Https { host, port, .. } if host.contains(':') => {
                write!(f, "https://[{host}]:{port}")
            }
            HttpBase::Https { host, port, .. } => write!(f, "https://{host}:{port}"),
            HttpBase::Unix(path) => write!(f, "http+unix://{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_bases() {
        let tcp = |h: &str, p| HttpBase::Tcp {
            host: h.into(),
            port: p,
        };
        assert_eq!(
            HttpBase::parse("http://127.0.0.1:59880"),
            Ok(tcp("127.0.0.1", 59880))
        );
        assert_eq!(
            HttpBase::parse("http://localhost:8080/"),
            Ok(tcp("localhost", 8080))
        );
        assert_eq!(HttpBase::parse("http://edgex"), Ok(tcp("edgex", 59880)));
        assert_eq!(HttpBase::parse("http://[::1]:9"), Ok(tcp("::1", 9)));
        assert_eq!(
            HttpBase::parse("http+unix:///tmp/cd.sock"),
            Ok(HttpBase::Unix("/tmp/cd.sock".into()))
        );
        assert_eq!(tcp("::1", 9).to_string(), "http://[::1]:9");
        assert_eq!(
            HttpBase::Unix("/tmp/cd.sock".into()).url("/api/v3/ping"),
            "http+unix:///tmp/cd.sock/api/v3/ping"
        );
        assert_eq!(
            HttpBase::parse("https://localhost:8443/?cacert=/etc/ca.pem"),
            Ok(HttpBase::Https {
                host: "localhost".into(),
                port: 8443,
                cacert: Some("/etc/ca.pem".into())
            })
        );
        assert_eq!(
            HttpBase::parse("https://edgex").unwrap().to_string(),
            "https://edgex:59880"
        );
        for bad in [
            "https://h:1?ca=x",
            "https://h:1?cacert=",
            "ftp://h:1",
            "h:1",
            "http://h:0",
            "http://h:x",
            "http://:5",
            "http://h:1/api/v3",
            "http+unix://relative.sock",
        ] {
            let err = HttpBase::parse(bad).unwrap_err();
            assert!(
                err.contains(bad) && err.contains("http://HOST:PORT"),
                "{err}"
            );
        }
    }
}
