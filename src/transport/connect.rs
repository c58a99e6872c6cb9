//! Connections to a Redis-protocol endpoint, and what a failed one means in the user's words.
//!
//! Connections have `TCP_NODELAY` on. Every benchmark is a sequence of single small round
//! trips, and Nagle's algorithm would hold some of them back.

use std::time::Duration;

use redis::io::tcp::TcpSettings;
use redis::{ConnectionAddr, ErrorKind, IntoConnectionInfo, RedisError};

use super::access::{install_ring, Access};
use super::endpoint::Endpoint;

/// A new connection to `endpoint`, with `TCP_NODELAY` on.
pub fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<redis::Connection, RedisError> {
    connect_with(endpoint, &Access::default(), timeout)
}

/// A new connection to `endpoint` that gets in as `access` says: over TLS (redis-rs's rustls,
/// ring its crypto) and with `AUTH [USER] PASSWORD`, with `TCP_NODELAY` on.
pub fn connect_with(
    endpoint: &Endpoint,
    access: &Access,
    timeout: Duration,
) -> Result<redis::Connection, RedisError> {
    let addr = match (endpoint, &access.tls) {
        (Endpoint::Tcp { host, port }, None) => ConnectionAddr::Tcp(host.clone(), *port),
        (Endpoint::Tcp { host, port }, Some(tls)) => ConnectionAddr::TcpTls {
            host: host.clone(),
            port: *port,
            insecure: tls.skip_verify,
            tls_params: None,
        },
        // Refused where targets are parsed; a socket on this machine needs no TLS.
        (Endpoint::Unix(path), Some(_)) => {
            return Err(RedisError::from((
                ErrorKind::InvalidClientConfig,
                "TLS over a Unix socket is not supported",
                path.display().to_string(),
            )))
        }
        (Endpoint::Unix(path), None) => ConnectionAddr::Unix(path.clone()),
    };
    // redis-rs leaves TCP_NODELAY off by default.
    let info = addr
        .into_connection_info()?
        .set_tcp_settings(TcpSettings::default().set_nodelay(true));
    let client = match &access.tls {
        Some(tls) => {
            let certificates = tls.redis_certificates().map_err(|e| {
                RedisError::from((ErrorKind::InvalidClientConfig, "TLS", e.to_string()))
            })?;
            install_ring();
            redis::Client::build_with_tls(info, certificates)?
        }
        None => redis::Client::open(info)?,
    };
    let mut conn = client.get_connection_with_timeout(timeout).map_err(|e| {
        // redis-rs's handshake ends in the socket's read timeout, said as EAGAIN.
        let timed_out =
            e.is_timeout() || e.to_string().contains("Resource temporarily unavailable");
        match (&access.tls, timed_out) {
            (Some(_), true) => RedisError::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "no TLS handshake within {} ms (does the server speak TLS on that port? a \
                     plain-text port never answers one)",
                    timeout.as_millis()
                ),
            )),
            _ => e,
        }
    })?;
    // AUTH is sent here rather than by redis-rs, which replaces redis-server's refusal
    // (`WRONGPASS invalid username-password pair or user is disabled.`) with a text of its own.
    if let Some(credentials) = &access.credentials {
        let mut auth = redis::cmd("AUTH");
        if let Some(user) = &credentials.user {
            auth.arg(user);
        }
        auth.arg(&credentials.password).exec(&mut conn)?;
    }
    Ok(conn)
}

/// The `process_id` of the server that answers PING on `endpoint` (`None` if its `INFO server`
/// has none); used while a spawned server starts, to tell it from another server on the port.
pub fn ping_pid(
    endpoint: &Endpoint,
    access: &Access,
    timeout: Duration,
) -> Result<Option<u32>, String> {
    let mut conn = connect_with(endpoint, access, timeout).map_err(|e| e.to_string())?;
    check_ping(&mut conn)?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut conn)
        .map_err(|e| e.to_string())?;
    Ok(process_id(&info))
}

/// The `process_id:` field of an `INFO` reply.
pub fn process_id(info: &str) -> Option<u32> {
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
}

pub fn check_ping(conn: &mut redis::Connection) -> Result<(), String> {
    match redis::cmd("PING").query::<String>(conn) {
        Ok(reply) if reply == "PONG" => Ok(()),
        Ok(reply) => Err(format!(
            "unexpected reply {reply:?} (is it a Redis server?)"
        )),
        Err(e) => Err(format!(
            "{e} (is it a Redis server? give its user and password as \
             redis://USER:PASSWORD@HOST:PORT, and rediss:// for TLS)"
        )),
    }
}

/// The error without the `(os error N)` suffix, plus where to look.
pub fn connect_reason(e: &RedisError, endpoint: &Endpoint) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => &text[..at],
        _ => &text,
    };
    if let (Some(code @ ("WRONGPASS" | "NOAUTH" | "NOPERM")), Some(detail)) = (e.code(), e.detail())
    {
        // As redis-server sends it (and redis-cli prints it).
        return format!(
            "{code} {detail} (check the user and password the target gives: \
             redis[s]://USER:PASSWORD@HOST:PORT)"
        );
    }
    if text.contains("TLS handshake") {
        return text.to_string();
    }
    match endpoint {
        Endpoint::Tcp { .. } => format!("{text} (is a Redis server listening there?)"),
        Endpoint::Unix(path) => format!(
            "{text} (is redis-server running with --unixsocket {}?)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_id_is_read_from_info_server() {
        let info = "# Server\r\nredis_version:7.2.4\r\nprocess_id:4242\r\ntcp_port:6379\r\n";
        assert_eq!(process_id(info), Some(4242));
        assert_eq!(process_id("# Server\r\nredis_version:7.2.4\r\n"), None);
    }
}
