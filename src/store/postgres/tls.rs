//! TLS to PostgreSQL with libpq's `sslmode` and `sslrootcert` ([`PgTls`]), and
//! [`PgConfig`]: a connection config together with how its connections are secured, which is
//! what every part of the store connects with.
//!
//! tokio-postgres knows `disable`, `prefer` and `require` and leaves the certificate to the TLS
//! connector; `verify-ca`, `verify-full` and the root certificate are ours, so they are taken
//! out of a URL before tokio-postgres reads it ([`split_tls_params`]) and become a rustls
//! config: [`TlsOptions`]'s, as every edgebench client's, or for `verify-ca` one that checks
//! the chain but not the name ([`WithoutNameCheck`]).
//!
//! One departure from libpq, on purpose: without an `sslmode` (URL or `PGSSLMODE`) edgebench
//! connects in plain text (`disable`), not libpq's `prefer`, so a column named
//! `PostgreSQL_TCP` never turns into a TLS measurement because a server happens to offer it.
//! As in libpq, a Unix socket never uses TLS (the server refuses it there), and `require`
//! with a root certificate file given verifies the chain as `verify-ca` does.

use std::path::PathBuf;
use std::sync::Arc;

use postgres::config::{Host, SslMode as DriverMode};
use postgres::{Client, Config};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::transport::access::TlsError;
use crate::transport::TlsOptions;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain text.
    Disable,
    /// TLS when the server offers it, no certificate check; else plain text.
    Prefer,
    /// TLS, the certificate not checked (unless a root certificate is given: then as
    /// `VerifyCa`).
    Require,
    /// TLS, the chain checked against the root certificate.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

/// The `sslmode` values, for error messages.
const MODES: &str = "disable, prefer, require, verify-ca or verify-full";

impl SslMode {
    /// One of libpq's names; `allow` (plain first, TLS if refused) is refused as edgebench
    /// could not say which one a column measured.
    pub fn parse(name: &str) -> Result<SslMode, String> {
        Ok(match name {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(format!("sslmode {other:?}: give {MODES}")),
        })
    }

    /// Its libpq name.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// How a connection to PostgreSQL is secured: libpq's `sslmode` and `sslrootcert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgTls {
    /// The mode.
    pub mode: SslMode,
    /// The CA certificate file the server's chain is checked against (`sslrootcert`,
    /// `PGSSLROOTCERT`); `None` means libpq's default, `~/.postgresql/root.crt`, which only
    /// `verify-ca` and `verify-full` need. The name `system` means the system's roots, as in
    /// libpq 16.
    pub root_cert: Option<PathBuf>,
}

impl PgTls {
    /// Plain text, as edgebench connects when told nothing.
    pub const PLAIN: PgTls = PgTls {
        mode: SslMode::Disable,
        root_cert: None,
    };

    /// The mode tokio-postgres negotiates with: it only needs to know whether TLS is
    /// optional; the rest is the verifier's.
    fn driver_mode(&self) -> DriverMode {
        match self.mode {
            SslMode::Disable => DriverMode::Disable,
            SslMode::Prefer => DriverMode::Prefer,
            _ => DriverMode::Require,
        }
    }

    /// The TLS connector for these settings: reads the root certificate file. `require`
    /// (without a root certificate) and `prefer` accept any certificate, as
    /// [`TlsOptions`]'s `skip_verify`; `verify-full` checks the chain and the name, as every
    /// other edgebench client; `verify-ca` the chain only ([`WithoutNameCheck`]).
    fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let chain_only = match self.mode {
            SslMode::Disable | SslMode::Prefer => None,
            SslMode::Require if self.root_cert.is_none() => None,
            SslMode::Require | SslMode::VerifyCa => Some(true),
            SslMode::VerifyFull => Some(false),
        };
        let Some(chain_only) = chain_only else {
            let options = TlsOptions {
                skip_verify: true,
                ..TlsOptions::default()
            };
            return client_config(&options).map_err(|e| e.message);
        };
        let options = TlsOptions {
            cacert: self.root_file()?,
            ..TlsOptions::default()
        };
        // libpq's name for the file, and where it came from when the URL did not name it.
        let named = |e: TlsError| match &self.root_cert {
            Some(_) => format!("sslrootcert={}", e.message),
            None => format!(
                "{} (libpq's default root certificate; give sslrootcert=FILE in the URL or set \
                 PGSSLROOTCERT)",
                e.message
            ),
        };
        if !chain_only {
            return client_config(&options).map_err(named);
        }
        let roots = options.roots().map_err(named)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| format!("cannot check certificates: {e}"))?;
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(WithoutNameCheck(chain)))
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }

    /// The CA file to check against: `sslrootcert` (`PGSSLROOTCERT`), `None` for `system` (the
    /// system's roots, as in libpq 16), else libpq's default `~/.postgresql/root.crt`.
    fn root_file(&self) -> Result<Option<PathBuf>, String> {
        match &self.root_cert {
            Some(path) if path.as_os_str() == "system" => Ok(None),
            Some(path) => Ok(Some(path.clone())),
            None => home_root_cert().map(Some).ok_or_else(|| {
                format!(
                    "sslmode={} needs the CA certificate that signed the server's: give \
                     sslrootcert=FILE in the URL or set PGSSLROOTCERT",
                    self.mode.name()
                )
            }),
        }
    }
}

/// The rustls config of `options`, as tokio-postgres's connector.
fn client_config(options: &TlsOptions) -> Result<MakeRustlsConnect, TlsError> {
    let config = options.client()?.config();
    Ok(MakeRustlsConnect::new(Arc::unwrap_or_clone(config)))
}

/// libpq's `verify-ca`: the chain must reach a root, the name need not match.
#[derive(Debug)]
struct WithoutNameCheck(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for WithoutNameCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked =
            self.0
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        match checked {
            // webpki checks the name after the chain, so this error means the chain held.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// libpq's default root certificate, `~/.postgresql/root.crt`.
fn home_root_cert() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".postgresql/root.crt"))
}

/// Takes libpq's TLS parameters (`sslmode`, `sslrootcert`) out of a URL's query, so
/// tokio-postgres, which knows neither `verify-*` nor `sslrootcert`, reads the rest. Returns
/// the URL without them and their values, percent-decoded.
pub(super) fn split_tls_params(url: &str) -> (String, Option<String>, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None, None);
    };
    let (mut mode, mut root) = (None, None);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = || {
            percent_encoding::percent_decode_str(value)
                .decode_utf8_lossy()
                .into_owned()
        };
        match key {
            "sslmode" => mode = Some(decoded()),
            "sslrootcert" => root = Some(decoded()),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, mode, root)
}

/// A connection config and how its connections are secured: what the PostgreSQL store, its
/// private databases and `perf --db` connect with.
#[derive(Debug, Clone)]
pub struct PgConfig {
    config: Config,
    tls: PgTls,
}

/// A connection that failed: the TLS settings could not be used (a root certificate file
/// missing or not PEM), or the server (or the way to it) said no.
#[derive(Debug)]
pub enum PgConnectError {
    /// Before any connection: the message names the file and the fix.
    Tls(String),
    /// From tokio-postgres: refused, unreachable, a failed handshake, a wrong password.
    Server(postgres::Error),
}

impl std::fmt::Display for PgConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PgConnectError::Tls(message) => f.write_str(message),
            PgConnectError::Server(e) => f.write_str(&crate::store::shared::chain(e)),
        }
    }
}

// The message already holds the driver's whole chain, so no `source`: `chain` would say it
// twice.
impl std::error::Error for PgConnectError {}

impl PgConnectError {
    /// The server's SQLSTATE, when it answered with an error.
    pub fn code(&self) -> Option<&postgres::error::SqlState> {
        match self {
            PgConnectError::Server(e) => e.code(),
            PgConnectError::Tls(_) => None,
        }
    }
}

impl PgConfig {
    /// `config` with its connections secured as `tls` says (over TCP; a Unix socket is always
    /// plain, as in libpq).
    pub fn new(mut config: Config, tls: PgTls) -> PgConfig {
        config.ssl_mode(tls.driver_mode());
        PgConfig { config, tls }
    }

    /// `config` in plain text.
    pub fn plain(config: Config) -> PgConfig {
        PgConfig::new(config, PgTls::PLAIN)
    }

    /// The connection config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The connection config, to change (its `sslmode` is this value's and stays so).
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    /// How connections are secured.
    pub fn tls(&self) -> &PgTls {
        &self.tls
    }

    /// Whether every connection is TLS: a mode that requires it, over TCP.
    pub fn encrypts(&self) -> bool {
        !matches!(self.tls.mode, SslMode::Disable | SslMode::Prefer) && !self.is_socket()
    }

    /// Whether the first host is a Unix socket directory.
    pub fn is_socket(&self) -> bool {
        matches!(self.config.get_hosts().first(), Some(Host::Unix(_)))
    }

    /// Checks the TLS settings can be used (the root certificate file reads), so a typo fails
    /// when the URL is read rather than at the first connection.
    pub fn check(&self) -> Result<(), String> {
        if self.tls.mode == SslMode::Disable || self.is_socket() {
            return Ok(());
        }
        self.tls.connector().map(drop)
    }

    /// A new connection.
    pub fn connect(&self) -> Result<Client, PgConnectError> {
        if self.tls.mode == SslMode::Disable || self.is_socket() {
            let mut config = self.config.clone();
            config.ssl_mode(DriverMode::Disable);
            return config
                .connect(postgres::NoTls)
                .map_err(PgConnectError::Server);
        }
        let tls = self.tls.connector().map_err(PgConnectError::Tls)?;
        self.config.connect(tls).map_err(PgConnectError::Server)
    }

    /// What the run header says of the connection's security: `, TLS (sslmode verify-full)`,
    /// or nothing when it is plain.
    pub fn describe_tls(&self) -> String {
        self.tls_words()
            .map_or_else(String::new, |w| format!(", {w}"))
    }

    /// `TLS (sslmode verify-full)`, `TLS if the server offers it (sslmode prefer)`, or `None`
    /// when connections are plain.
    pub fn tls_words(&self) -> Option<String> {
        match self.tls.mode {
            SslMode::Disable => None,
            _ if self.is_socket() => None,
            SslMode::Prefer => Some("TLS if the server offers it (sslmode prefer)".into()),
            mode => Some(format!("TLS (sslmode {})", mode.name())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_params_come_out_of_the_query_and_the_rest_stays() {
        assert_eq!(
            split_tls_params("postgres://u@h/db"),
            ("postgres://u@h/db".into(), None, None)
        );
        assert_eq!(
            split_tls_params(
                "postgres://u@h/db?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca.crt"
            ),
            (
                "postgres://u@h/db?application_name=x".into(),
                Some("verify-full".into()),
                Some("/tmp/ca.crt".into())
            )
        );
        assert_eq!(
            split_tls_params("postgres://u@h/db?sslmode=require"),
            ("postgres://u@h/db".into(), Some("require".into()), None)
        );
    }

    #[test]
    fn modes_are_libpqs_and_others_are_refused_with_the_list() {
        for name in ["disable", "prefer", "require", "verify-ca", "verify-full"] {
            assert_eq!(SslMode::parse(name).unwrap().name(), name);
        }
        let e = SslMode::parse("allow").unwrap_err();
        assert!(e.contains("\"allow\"") && e.contains("verify-full"), "{e}");
    }

    #[test]
    fn verification_needs_a_root_certificate_and_names_the_file() {
        let tls = PgTls {
            mode: SslMode::VerifyFull,
            root_cert: Some("/nonexistent/ca.crt".into()),
        };
        let config = PgConfig::new(Config::new().host("127.0.0.1").clone(), tls.clone());
        let e = config.check().unwrap_err();
        assert!(e.contains("/nonexistent/ca.crt"), "{e}");
        assert!(config.encrypts());
        // Over a Unix socket nothing is checked or encrypted, as in libpq.
        let socket = PgConfig::new(Config::new().host("/var/run/postgresql").clone(), tls);
        socket.check().unwrap();
        assert!(!socket.encrypts());
        assert_eq!(socket.describe_tls(), "");
    }
}
