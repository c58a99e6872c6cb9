//! A private certificate authority made at run time: what a spawned TLS server (redis-server
//! with `tls-port`, the engine's `serve --tls-port`, PostgreSQL with `ssl=on`, Mosquitto's
//! TLS listener) and its clients need, written as PEM files into a directory the caller
//! owns. Nothing private is committed: every run makes its own CA, which dies with the
//! directory.
//!
//! Keys are ECDSA P-256 (rcgen's default, as `openssl ecparam -name prime256v1` makes them);
//! certificates name `localhost`, `127.0.0.1` and `::1` unless told otherwise, with rcgen's
//! validity (1975 to 4096: a run's certificates never expire under it).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// The names a server certificate carries by default: every way a test or a local target
/// reaches a server on this machine.
pub const LOCAL_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A CA's certificate and key, able to sign server and client certificates.
pub struct PrivateCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl std::fmt::Debug for PrivateCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateCa").finish_non_exhaustive()
    }
}

/// A certificate and its key, in PEM.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (`-----BEGIN CERTIFICATE-----`).
    pub cert_pem: String,
    /// Its private key (`-----BEGIN PRIVATE KEY-----`, PKCS#8).
    pub key_pem: String,
}

/// Where [`PrivateCa::write_files`] put a CA, a server and a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertFiles {
    /// The CA certificate: a client's `--cacert`, a server's `tls-ca-cert-file`.
    pub ca_cert: PathBuf,
    /// The server's certificate and key (`tls-cert-file`, `tls-key-file`).
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// A client certificate and key the CA signed (`--cert`, `--key`), for servers that
    /// authenticate clients (`tls-auth-clients yes`).
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

fn tls_error(what: &str, e: rcgen::Error) -> io::Error {
    io::Error::other(format!("making the private CA's {what}: {e}"))
}

impl PrivateCa {
    /// A new CA, named `edgebench private CA`.
    ///
    /// # Errors
    /// When a key cannot be generated (no randomness).
    pub fn new() -> io::Result<PrivateCa> {
        let key = KeyPair::generate().map_err(|e| tls_error("key", e))?;
        let mut params = CertificateParams::new(Vec::<String>::new())
            .map_err(|e| tls_error("certificate", e))?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "edgebench private CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer =
            CertifiedIssuer::self_signed(params, key).map_err(|e| tls_error("certificate", e))?;
        Ok(PrivateCa { issuer })
    }

    /// The CA's certificate in PEM.
    pub fn cert_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `names` (DNS names or IP addresses).
    ///
    /// # Errors
    /// When a name is not a valid DNS name or address, or no key can be generated.
    pub fn issue_server(&self, names: &[&str]) -> io::Result<Issued> {
        self.issue(names, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate with common name `name`.
    ///
    /// # Errors
    /// When no key can be generated.
    pub fn issue_client(&self, name: &str) -> io::Result<Issued> {
        self.issue(&[name], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, names: &[&str], usage: ExtendedKeyUsagePurpose) -> io::Result<Issued> {
        let key = KeyPair::generate().map_err(|e| tls_error("key", e))?;
        let names: Vec<String> = names.iter().map(|n| (*n).to_string()).collect();
        let mut params =
            CertificateParams::new(names.clone()).map_err(|e| tls_error("certificate", e))?;
        if let Some(first) = names.first() {
            params
                .distinguished_name
                .push(DnType::CommonName, first.as_str());
        }
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![usage];
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(|e| tls_error("certificate", e))?;
        Ok(Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// Writes the CA certificate, a server certificate for [`LOCAL_NAMES`] and a client
    /// certificate into `dir` (`ca.crt`, `server.crt`, `server.key`, `client.crt`,
    /// `client.key`; keys readable by their owner only, as PostgreSQL insists).
    ///
    /// # Errors
    /// When a file cannot be written.
    pub fn write_files(&self, dir: &Path) -> io::Result<CertFiles> {
        let server = self.issue_server(&LOCAL_NAMES)?;
        let client = self.issue_client("edgebench")?;
        let files = CertFiles {
            ca_cert: dir.join("ca.crt"),
            server_cert: dir.join("server.crt"),
            server_key: dir.join("server.key"),
            client_cert: dir.join("client.crt"),
            client_key: dir.join("client.key"),
        };
        fs::write(&files.ca_cert, self.cert_pem())?;
        fs::write(&files.server_cert, &server.cert_pem)?;
        write_private(&files.server_key, &server.key_pem)?;
        fs::write(&files.client_cert, &client.cert_pem)?;
        write_private(&files.client_key, &client.key_pem)?;
        Ok(files)
    }
}

/// Writes `text` to `path`, readable and writable by its owner only (a key, a password).
pub(crate) fn write_private(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_ca_a_server_and_a_client_certificate_as_pem() {
        let dir = tempfile::tempdir().unwrap();
        let ca = PrivateCa::new().unwrap();
        let files = ca.write_files(dir.path()).unwrap();
        for path in [&files.ca_cert, &files.server_cert, &files.client_cert] {
            let text = fs::read_to_string(path).unwrap();
            assert!(text.starts_with("-----BEGIN CERTIFICATE-----"), "{text}");
        }
        for path in [&files.server_key, &files.client_key] {
            let text = fs::read_to_string(path).unwrap();
            assert!(text.starts_with("-----BEGIN PRIVATE KEY-----"), "{text}");
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", path.display());
        }
    }

    /// openssl, when installed, agrees the server certificate chains to the CA and names
    /// localhost.
    #[test]
    fn openssl_verifies_the_server_certificate_against_the_ca() {
        if std::process::Command::new("openssl")
            .arg("version")
            .output()
            .is_err()
        {
            eprintln!("openssl is not installed: skipped");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let files = PrivateCa::new().unwrap().write_files(dir.path()).unwrap();
        let out = std::process::Command::new("openssl")
            .args(["verify", "-verify_hostname", "localhost", "-CAfile"])
            .arg(&files.ca_cert)
            .arg(&files.server_cert)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let out = std::process::Command::new("openssl")
            .args(["verify", "-purpose", "sslclient", "-CAfile"])
            .arg(&files.ca_cert)
            .arg(&files.client_cert)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}
