//! How a connection gets in once it reaches a server's [`super::Endpoint`]: TLS (what it
//! trusts, the certificate it shows, the name it asks for) and credentials (`AUTH [USER]
//! PASSWORD`). [`Access`] is data, compared and printed like an endpoint; nothing is read
//! from disk until a connection is made ([`TlsOptions::client`] for edgebench's own sockets,
//! [`TlsOptions::redis_certificates`] for redis-rs's), so a missing file is reported by the
//! first check that builds it, with the option that named it.
//!
//! The options and their meanings are memtier_benchmark's (`--tls`, `--cacert`, `--cert`,
//! `--key`, `--tls-skip-verify`, `--sni`, `--tls-protocols`), with one difference that
//! redis-cli shares: without `--cacert` the server is verified against the system's roots
//! (memtier would trust nothing and need `--tls-skip-verify`).
//!
//! rustls's crypto is ring, given explicitly to every config edgebench builds. redis-rs builds
//! its own config from the process default; [`install_ring`] makes that ring, and never
//! panics when another default is already there.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// TLS and credentials for one server; the default is neither (plain, no AUTH).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Access {
    /// Speak TLS, as these options say.
    pub tls: Option<TlsOptions>,
    /// `AUTH` after connecting.
    pub credentials: Option<Credentials>,
}

impl Access {
    /// What a target's column adds to its transport: `+TLS`, `+ACL` (a user and password),
    /// `+AUTH` (a password alone), in that order; empty for neither.
    pub fn column_suffix(&self) -> String {
        column_suffix(self.tls.is_some(), self.credentials.as_ref())
    }

    /// The URL scheme a server with this access is reached by.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        }
    }
}

/// `+TLS`, then `+ACL` for a user or `+AUTH` for a password alone.
fn column_suffix(tls: bool, credentials: Option<&Credentials>) -> String {
    let mut suffix = String::new();
    if tls {
        suffix.push_str("+TLS");
    }
    match credentials {
        Some(Credentials { user: Some(_), .. }) => suffix.push_str("+ACL"),
        Some(Credentials { user: None, .. }) => suffix.push_str("+AUTH"),
        None => {}
    }
    suffix
}

/// What a server edgebench starts requires of its clients (`redis-tcp?tls=yes&user=NAME&
/// password=PW`): TLS with certificates from a private CA made for it, and an ACL user. The
/// default is neither, what a spawned server always was.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerSecurity {
    /// TLS only: no plain-text port.
    pub tls: bool,
    /// The ACL user edgebench connects as (`user` always set); the `default` user gets the
    /// same password, as EdgeX's secure mode gives it (see the spawner).
    pub user: Option<Credentials>,
}

impl ServerSecurity {
    /// `+TLS`, `+ACL`, both or nothing, for the target's column.
    pub fn column_suffix(&self) -> String {
        column_suffix(self.tls, self.user.as_ref())
    }

    /// Whether it asks for anything.
    pub fn is_plain(&self) -> bool {
        *self == ServerSecurity::default()
    }
}

/// As the run header shows it: `TLS (private CA), ACL user NAME`.
impl fmt::Display for ServerSecurity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.tls {
            parts.push("TLS (private CA)".to_string());
        }
        if let Some(Credentials {
            user: Some(user), ..
        }) = &self.user
        {
            parts.push(format!("ACL user {user}"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// `AUTH PASSWORD` (redis-server's `default` user, or `requirepass`) or `AUTH USER PASSWORD`
/// (an ACL user). Printed without the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The ACL user; `None` is the `default` user.
    pub user: Option<String>,
    /// The password.
    pub password: String,
}

impl Credentials {
    /// memtier's `-a` form: `USER:PASSWORD`, or `PASSWORD` alone (`:PASSWORD` too, as a URL
    /// writes it). A password may hold `:`: only the first one splits.
    pub fn parse(text: &str) -> Credentials {
        match text.split_once(':') {
            Some(("", password)) => Credentials {
                user: None,
                password: password.to_string(),
            },
            Some((user, password)) => Credentials {
                user: Some(user.to_string()),
                password: password.to_string(),
            },
            None => Credentials {
                user: None,
                password: text.to_string(),
            },
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// memtier's TLS options, as given (paths are read when a connection is made).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct TlsOptions {
    /// `--cacert`: the CA certificates (PEM) the server's certificate must chain to; `None`:
    /// the system's roots.
    pub cacert: Option<PathBuf>,
    /// `--cert` and `--key`: a client certificate (PEM) and its private key, for servers that
    /// authenticate clients (`tls-auth-clients yes`, redis-server's default).
    pub cert: Option<PathBuf>,
    /// The client certificate's key.
    pub key: Option<PathBuf>,
    /// `--tls-skip-verify`: accept any server certificate.
    pub skip_verify: bool,
    /// `--sni`: the server name sent in the handshake (and, as rustls always checks it, the
    /// name the certificate must carry); `None`: the host connected to.
    pub sni: Option<String>,
    /// `--tls-protocols`: the versions offered; empty is rustls's (TLS 1.2 and 1.3).
    pub protocols: Vec<TlsVersion>,
}

/// A TLS version rustls speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TlsVersion {
    /// `TLSv1.2`.
    Tls12,
    /// `TLSv1.3`.
    Tls13,
}

/// memtier's and redis-server's names for TLS versions, as `--tls-protocols` takes them.
const PROTOCOL_NAMES: &str = "TLSv1.2 and TLSv1.3 (space- or comma-separated)";

impl TlsVersion {
    /// memtier's `--tls-protocols` value: names separated by commas or spaces (memtier takes
    /// commas, redis-server's `tls-protocols` spaces). TLS 1.0 and 1.1 are refused: rustls
    /// does not speak them (RFC 8996 deprecated both).
    pub fn parse_list(text: &str) -> Result<Vec<TlsVersion>, String> {
        let mut versions = Vec::new();
        for name in text.split([',', ' ']).filter(|n| !n.is_empty()) {
            let version = match name.to_ascii_lowercase().as_str() {
                "tlsv1.2" => TlsVersion::Tls12,
                "tlsv1.3" => TlsVersion::Tls13,
                "tlsv1" | "tlsv1.0" | "tlsv1.1" => {
                    return Err(format!(
                        "{name} is not supported (rustls speaks only TLS 1.2 and 1.3; RFC 8996 \
                         deprecated 1.0 and 1.1): use {PROTOCOL_NAMES}"
                    ))
                }
                _ => return Err(format!("unknown protocol {name:?}: use {PROTOCOL_NAMES}")),
            };
            if !versions.contains(&version) {
                versions.push(version);
            }
        }
        if versions.is_empty() {
            return Err(format!("no protocol given: use {PROTOCOL_NAMES}"));
        }
        Ok(versions)
    }

    fn rustls(self) -> &'static rustls::SupportedProtocolVersion {
        match self {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        }
    }
}

/// Why TLS options cannot be used: one line naming the option (memtier's name, without its
/// dashes), the file and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError {
    /// `cacert`, `cert`, `key`, `sni`, `tls-protocols`.
    pub option: &'static str,
    /// What is wrong and what to do, after the option and its value.
    pub message: String,
}

impl TlsError {
    fn file(option: &'static str, path: &Path, why: impl fmt::Display, fix: &str) -> TlsError {
        TlsError {
            option,
            message: format!("{}: {why} ({fix})", path.display()),
        }
    }

    /// As a URL option says it: `cacert=FILE: …`.
    pub fn in_url(&self) -> String {
        format!("{}={}", self.option, self.message)
    }
}

/// As a command-line flag says it: `--cacert FILE: …`.
impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--{} {}", self.option, self.message)
    }
}

impl std::error::Error for TlsError {}

const CACERT_FIX: &str = "give the PEM file of the CA that signed the server's certificate";
const CERT_FIX: &str = "give the client certificate as PEM";
const KEY_FIX: &str = "give the client certificate's private key as PEM";

/// A rustls client config built from [`TlsOptions`], and the name to ask for.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<rustls::ClientConfig>,
    sni: Option<ServerName<'static>>,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient")
            .field("sni", &self.sni)
            .finish_non_exhaustive()
    }
}

impl TlsClient {
    /// The rustls config, for a blocking connection (the MQTT bus's, PostgreSQL's connector).
    pub fn config(&self) -> Arc<rustls::ClientConfig> {
        Arc::clone(&self.config)
    }

    /// A rustls connector for a connection to `host` (the `--sni` name instead, if given).
    pub fn connector(
        &self,
        host: &str,
    ) -> std::io::Result<(tokio_rustls::TlsConnector, ServerName<'static>)> {
        let name = match &self.sni {
            Some(name) => name.clone(),
            None => ServerName::try_from(host.to_string()).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{host:?} is not a name TLS can check a certificate against: {e}"),
                )
            })?,
        };
        Ok((tokio_rustls::TlsConnector::from(self.config.clone()), name))
    }
}

impl TlsOptions {
    /// Trust `cacert` and show the client certificate `cert`/`key`: what a spawned server's
    /// own files need.
    pub fn private(cacert: &Path, cert: &Path, key: &Path) -> TlsOptions {
        TlsOptions {
            cacert: Some(cacert.to_path_buf()),
            cert: Some(cert.to_path_buf()),
            key: Some(key.to_path_buf()),
            ..TlsOptions::default()
        }
    }

    /// The rustls config these options describe, with ring as its crypto: reads every file,
    /// checks that the key belongs to the certificate.
    ///
    /// # Errors
    /// A file that cannot be read or holds no PEM of its kind, a key that is not the
    /// certificate's, `--cert` without `--key` (or the reverse), a bad `--sni` name.
    pub fn client(&self) -> Result<TlsClient, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: Vec<&'static rustls::SupportedProtocolVersion> = match self.protocols.len() {
            0 => rustls::DEFAULT_VERSIONS.to_vec(),
            _ => self.protocols.iter().map(|v| v.rustls()).collect(),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| TlsError {
                option: "tls-protocols",
                message: format!("{e}: use {PROTOCOL_NAMES}"),
            })?;
        let builder = if self.skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
        } else {
            builder.with_root_certificates(self.roots()?)
        };
        let config = match self.client_certificate()? {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key).map_err(|e| {
                TlsError::file(
                    "key",
                    self.key.as_deref().unwrap_or(Path::new("")),
                    format!("does not go with --cert: {e}"),
                    "give the key the client certificate was made with",
                )
            })?,
            None => builder.with_no_client_auth(),
        };
        let sni = match &self.sni {
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|e| TlsError {
                option: "sni",
                message: format!("{name}: {e} (give a DNS name or an IP address)"),
            })?),
            None => None,
        };
        Ok(TlsClient {
            config: Arc::new(config),
            sni,
        })
    }

    /// What redis-rs needs for its own TLS connections (the stores' sync connections):
    /// the CA's and client's PEM. redis-rs checks the certificate against the host connected
    /// to, and offers TLS 1.2 and 1.3: `sni` and `protocols` are edgebench's own sockets'
    /// (kv's load) only. Checks everything [`TlsOptions::client`] checks first.
    ///
    /// # Errors
    /// As [`TlsOptions::client`].
    pub fn redis_certificates(&self) -> Result<redis::TlsCertificates, TlsError> {
        self.client()?;
        let read = |option, path: &Path, fix| {
            std::fs::read(path).map_err(|e| TlsError::file(option, path, e, fix))
        };
        let root_cert = match &self.cacert {
            Some(path) => Some(read("cacert", path, CACERT_FIX)?),
            None => None,
        };
        let client_tls = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
                client_cert: read("cert", cert, CERT_FIX)?,
                client_key: read("key", key, KEY_FIX)?,
            }),
            _ => None,
        };
        Ok(redis::TlsCertificates {
            client_tls,
            root_cert,
        })
    }

    /// `--cacert`'s certificates, or the system's roots.
    pub(crate) fn roots(&self) -> Result<rustls::RootCertStore, TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        match &self.cacert {
            Some(path) => {
                let certs = read_certs("cacert", path, CACERT_FIX)?;
                for cert in certs {
                    roots.add(cert).map_err(|e| {
                        TlsError::file(
                            "cacert",
                            path,
                            format!("not a CA certificate: {e}"),
                            CACERT_FIX,
                        )
                    })?;
                }
            }
            None => {
                // A store that fails to load in part still verifies against what loaded,
                // as OpenSSL's default paths do.
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
            }
        }
        Ok(roots)
    }

    /// `--cert` and `--key`, read; both or neither.
    fn client_certificate(
        &self,
    ) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, TlsError> {
        match (&self.cert, &self.key) {
            (None, None) => Ok(None),
            (Some(cert), None) => Err(TlsError::file(
                "cert",
                cert,
                "given without --key",
                "add --key FILE with its private key",
            )),
            (None, Some(key)) => Err(TlsError::file(
                "key",
                key,
                "given without --cert",
                "add --cert FILE with its certificate",
            )),
            (Some(cert), Some(key)) => {
                let chain = read_certs("cert", cert, CERT_FIX)?;
                let text =
                    std::fs::read(key).map_err(|e| TlsError::file("key", key, e, KEY_FIX))?;
                let key_der = PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
                    TlsError::file("key", key, format!("no private key in it: {e}"), KEY_FIX)
                })?;
                Ok(Some((chain, key_der)))
            }
        }
    }
}

/// Every certificate in the PEM file `path`; at least one.
fn read_certs(
    option: &'static str,
    path: &Path,
    fix: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = std::fs::read(path).map_err(|e| TlsError::file(option, path, e, fix))?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::file(option, path, format!("bad PEM: {e}"), fix))?;
    if certs.is_empty() {
        return Err(TlsError::file(option, path, "no certificate in it", fix));
    }
    Ok(certs)
}

/// Makes ring the process's default rustls provider, for redis-rs, which builds its configs
/// from the default. Does nothing when a default is already installed (whichever it is):
/// `install_default` reports that as an error, which is not one here.
pub fn install_ring() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// `--tls-skip-verify`: any certificate is accepted; the handshake's signatures are still
/// checked (the connection is encrypted, just not authenticated), as OpenSSL's
/// `SSL_VERIFY_NONE` does for memtier.
#[derive(Debug)]
struct SkipVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::certs::PrivateCa;

    #[test]
    fn protocols_are_memtiers_names() {
        assert_eq!(
            TlsVersion::parse_list("TLSv1.2,TLSv1.3").unwrap(),
            [TlsVersion::Tls12, TlsVersion::Tls13]
        );
        assert_eq!(
            TlsVersion::parse_list("tlsv1.3").unwrap(),
            [TlsVersion::Tls13]
        );
        assert_eq!(
            TlsVersion::parse_list("TLSv1.1").unwrap_err(),
            "TLSv1.1 is not supported (rustls speaks only TLS 1.2 and 1.3; RFC 8996 deprecated \
             1.0 and 1.1): use TLSv1.2 and TLSv1.3 (space- or comma-separated)"
        );
        assert_eq!(
            TlsVersion::parse_list("SSLv3").unwrap_err(),
            "unknown protocol \"SSLv3\": use TLSv1.2 and TLSv1.3 (space- or comma-separated)"
        );
    }

    #[test]
    fn credentials_are_memtiers_user_colon_password() {
        let c = Credentials::parse("bob:p:w");
        assert_eq!(
            (c.user.as_deref(), c.password.as_str()),
            (Some("bob"), "p:w")
        );
        let c = Credentials::parse(":pw");
        assert_eq!((c.user, c.password.as_str()), (None, "pw"));
        let c = Credentials::parse("pw");
        assert_eq!((c.user.as_deref(), c.password.as_str()), (None, "pw"));
        assert!(!format!("{c:?}").contains("pw\""));
    }

    #[test]
    fn bad_files_name_the_flag_the_file_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let files = PrivateCa::new().unwrap().write_files(dir.path()).unwrap();
        let good = TlsOptions::private(&files.ca_cert, &files.client_cert, &files.client_key);
        good.client().unwrap();
        good.redis_certificates().unwrap();
        let missing = dir.path().join("nope.crt");
        let e = TlsOptions {
            cacert: Some(missing.clone()),
            ..TlsOptions::default()
        }
        .client()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "--cacert {}: No such file or directory (os error 2) (give the PEM file of the \
                 CA that signed the server's certificate)",
                missing.display()
            )
        );
        // The server's key does not go with the client's certificate.
        let e = TlsOptions {
            key: Some(files.server_key.clone()),
            ..good.clone()
        }
        .client()
        .unwrap_err();
        assert_eq!(e.option, "key");
        assert!(e.to_string().contains("does not go with --cert"), "{e}");
        let e = TlsOptions {
            cacert: Some(files.client_key.clone()),
            ..good.clone()
        }
        .client()
        .unwrap_err();
        assert!(e.to_string().contains("no certificate in it"), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}
