//! Configuration: what the user gave (a `postgres://` URL, or the `pg-tcp` / `pg-uds`
//! shortcuts with the standard libpq variables) turned into a connection config, and
//! [`endpoint`], where a config connects, for messages and the run header.

use std::path::PathBuf;
use std::time::Duration;

use postgres::config::Host;
use postgres::Config;

use super::schema::{DEFAULT_PORT, DEFAULT_SOCKET_DIR, DEFAULT_TCP_HOST, URL_FORMS};
use super::tls::{split_tls_params, PgConfig, PgTls, SslMode};
use crate::redact::redact_password;
use crate::store::shared::chain;

/// Which transport a `pg-tcp` / `pg-uds` shortcut uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgTransport {
    /// TCP: `PGHOST` when it names a TCP host, else 127.0.0.1.
    Tcp,
    /// The Unix socket: `PGHOST` when it is a socket directory, else /var/run/postgresql.
    Uds,
}

/// The config of a `postgres://` or `postgresql://` URL, e.g.
/// `postgres://user:pass@127.0.0.1:5432/db?sslmode=verify-full&sslrootcert=ca.crt` or
/// `postgresql:///db?host=/var/run/postgresql`, with the process environment's libpq
/// variables as defaults: see [`config_from_url_with`].
pub fn config_from_url(url: &str) -> Result<PgConfig, String> {
    config_from_url_with(url, |name| std::env::var(name).ok())
}

/// The config of a URL, reading libpq's variables through `env`. A URL without a host uses
/// the socket directory [`DEFAULT_SOCKET_DIR`], without a port 5432, without a user the OS
/// user, without a password `PGPASSWORD` (libpq's defaults); a URL without a database leaves
/// it unset ([`PgDatabase::create`](super::PgDatabase::create) then uses `postgres`).
/// `sslmode` and `sslrootcert` are libpq's ([`PgTls`]); without `sslrootcert`,
/// `PGSSLROOTCERT`. Without `sslmode` the connection is plain text, whatever `PGSSLMODE`
/// says: see [`super::tls`]. The root certificate file is read now, so a wrong path fails
/// before any benchmark runs.
pub fn config_from_url_with(
    url: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<PgConfig, String> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let shown = redact_password(url);
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!("invalid PostgreSQL URL {shown:?}: {URL_FORMS}"));
    }
    let (rest, mode, root_cert) = split_tls_params(url);
    let mut config: Config = rest.parse().map_err(|e| {
        format!(
            "invalid PostgreSQL URL {shown:?}: {}; {URL_FORMS}",
            chain(&e)
        )
    })?;
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        config.host(DEFAULT_SOCKET_DIR);
    }
    if config.get_user().is_none() {
        if let Some(user) = os_user(&var) {
            config.user(&user);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = var("PGPASSWORD") {
            config.password(password);
        }
    }
    let mode = match mode {
        Some(mode) => {
            SslMode::parse(&mode).map_err(|e| format!("invalid PostgreSQL URL {shown:?}: {e}"))?
        }
        None => SslMode::Disable,
    };
    let tls = PgTls {
        mode,
        root_cert: root_cert
            .or_else(|| var("PGSSLROOTCERT"))
            .map(PathBuf::from),
    };
    let config = PgConfig::new(config, tls);
    config
        .check()
        .map_err(|e| format!("PostgreSQL URL {shown:?}: {e}"))?;
    Ok(config)
}

/// The config of the `pg-tcp` / `pg-uds` shortcuts, from the process environment: see
/// [`config_from_lookup`].
pub fn config_from_env(transport: PgTransport) -> PgConfig {
    config_from_lookup(transport, |name| std::env::var(name).ok())
}

/// The config of the `pg-tcp` / `pg-uds` shortcuts from the standard libpq variables, read
/// through `env` (so tests need not change the process environment):
/// - host: the first entry of `PGHOST` (a comma-separated list, as in libpq) of the
///   transport's kind, a socket directory (starting with `/`) for [`PgTransport::Uds`] and
///   anything else for [`PgTransport::Tcp`]; when there is none, [`DEFAULT_SOCKET_DIR`] or
///   [`DEFAULT_TCP_HOST`];
/// - port: the first `PGPORT` entry, else 5432 (an unparsable `PGPORT` also means 5432; the
///   run header shows the port used);
/// - user: `PGUSER`, else the OS user (`USER`, else the password database);
/// - `PGPASSWORD`, `PGDATABASE` (unset: [`PgDatabase::create`](super::PgDatabase::create)
///   uses `postgres`), `PGCONNECT_TIMEOUT` (seconds) and `PGAPPNAME` (default `edgebench`) when set.
///
/// Empty variables count as unset, as in libpq. The shortcuts connect in plain text: TLS
/// takes a URL with `sslmode` (see [`super::tls`]).
pub fn config_from_lookup(
    transport: PgTransport,
    env: impl Fn(&str) -> Option<String>,
) -> PgConfig {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let mut config = Config::new();
    let pghost = var("PGHOST").unwrap_or_default();
    let wanted =
        |h: &&str| !h.is_empty() && (h.starts_with('/') == (transport == PgTransport::Uds));
    let host = pghost.split(',').map(str::trim).find(wanted);
    config.host(host.unwrap_or(match transport {
        PgTransport::Tcp => DEFAULT_TCP_HOST,
        PgTransport::Uds => DEFAULT_SOCKET_DIR,
    }));
    let port = var("PGPORT")
        .and_then(|p| p.split(',').next().and_then(|p| p.trim().parse().ok()))
        .unwrap_or(DEFAULT_PORT);
    config.port(port);
    if let Some(user) = var("PGUSER").or_else(|| os_user(&var)) {
        config.user(&user);
    }
    if let Some(password) = var("PGPASSWORD") {
        config.password(password);
    }
    if let Some(dbname) = var("PGDATABASE") {
        config.dbname(&dbname);
    }
    if let Some(secs) = var("PGCONNECT_TIMEOUT").and_then(|s| s.trim().parse::<u64>().ok()) {
        // libpq: 0 (or negative) means wait forever.
        if secs > 0 {
            config.connect_timeout(Duration::from_secs(secs));
        }
    }
    config.application_name(&var("PGAPPNAME").unwrap_or_else(|| "edgebench".into()));
    PgConfig::plain(config)
}

/// The OS user, libpq's default role name: `USER`, else the password database's name for the
/// effective uid.
fn os_user(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    env("USER").filter(|u| !u.is_empty()).or_else(passwd_user)
}

/// The user name of the effective uid, from the password database (`getpwuid_r`).
pub(super) fn passwd_user() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: a zeroed `passwd` is a valid value (null pointers, zero ids) for getpwuid_r to
    // fill in.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; `buf` outlives the uses of `pwd`'s strings,
    // which point into it.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so `pw_name` is a NUL-terminated string inside `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    name.to_str().ok().map(str::to_owned)
}

/// Where `config` connects, for messages and the run header: `host:port` for each host,
/// e.g. `127.0.0.1:5432` or `/var/run/postgresql:5432`.
pub fn endpoint(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| match ports {
        [] => DEFAULT_PORT,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(DEFAULT_PORT),
    };
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            Host::Unix(dir) => format!("{}:{}", dir.display(), port(i)),
        })
        .collect();
    if hosts.is_empty() {
        let addrs: Vec<String> = config
            .get_hostaddrs()
            .iter()
            .enumerate()
            .map(|(i, addr)| format!("{addr}:{}", port(i)))
            .collect();
        return addrs.join(",");
    }
    hosts.join(",")
}
