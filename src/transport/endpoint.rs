//! Where a Redis-protocol server listens: a TCP host and port, or a Unix socket path.

use std::fmt;
use std::path::PathBuf;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP; `host` is a name or an IP address (IPv6 without brackets).
    Tcp {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// A Unix domain socket (absolute path).
    Unix(PathBuf),
}

impl Endpoint {
    /// A TCP endpoint; an IPv6 host may come with or without its URL brackets.
    pub fn tcp(host: &str, port: u16) -> Endpoint {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Endpoint::Tcp {
            host: host.to_string(),
            port,
        }
    }
}

/// Where edgebench's own RESP server listens, as a target's endpoint (a TLS listener is a
/// TCP endpoint: that it speaks TLS is the target's [`super::Access`]).
impl From<crate::server::Address> for Endpoint {
    fn from(address: crate::server::Address) -> Endpoint {
        match address {
            crate::server::Address::Tcp(addr) | crate::server::Address::Tls(addr) => {
                Endpoint::Tcp {
                    host: addr.ip().to_string(),
                    port: addr.port(),
                }
            }
            crate::server::Address::Unix(path) => Endpoint::Unix(path),
        }
    }
}

impl fmt::Display for Endpoint {
    /// As a URL that [`parse_targets`] accepts: `redis://HOST:PORT` or `redis+unix:///PATH`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => {
                write!(f, "redis://[{host}]:{port}")
            }
            Endpoint::Tcp { host, port } => write!(f, "redis://{host}:{port}"),
            Endpoint::Unix(path) => write!(f, "redis+unix://{}", path.display()),
        }
    }
}
