//! Certificates for the TLS tests, made at run time with rcgen (nothing private is
//! committed), and rustls clients (ring) that connect with or without one.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use edgebench_engine::server::tls::{AuthClients, TlsSettings};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::TcpStream;

use super::served::Conn;

/// A CA, what it signed for the server and a client, and a client certificate from another
/// CA, as PEM files in a temp dir.
pub struct Certs {
    pub dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// Signed by another CA: a server that trusts `ca` refuses it.
    pub stranger_cert: PathBuf,
    pub stranger_key: PathBuf,
}

fn new_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn issue(
    ca: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, names[0]);
    params.extended_key_usages = vec![usage];
    let cert = params.signed_by(&key, ca).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Certs {
    pub fn new() -> Certs {
        let dir = tempfile::tempdir().unwrap();
        let ca = new_ca("test CA");
        let other = new_ca("another CA");
        let (server_cert, server_key) = issue(
            &ca,
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_cert, client_key) =
            issue(&ca, &["client"], ExtendedKeyUsagePurpose::ClientAuth);
        let (stranger_cert, stranger_key) =
            issue(&other, &["stranger"], ExtendedKeyUsagePurpose::ClientAuth);
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        Certs {
            ca: write("ca.crt", &ca.pem()),
            server_cert: write("server.crt", &server_cert),
            server_key: write("server.key", &server_key),
            client_cert: write("client.crt", &client_cert),
            client_key: write("client.key", &client_key),
            stranger_cert: write("stranger.crt", &stranger_cert),
            stranger_key: write("stranger.key", &stranger_key),
            dir,
        }
    }

    /// A server's settings with these files and `auth_clients`.
    pub fn settings(&self, auth_clients: AuthClients) -> TlsSettings {
        TlsSettings {
            cert_file: self.server_cert.clone(),
            key_file: self.server_key.clone(),
            ca_cert_file: Some(self.ca.clone()),
            auth_clients,
            protocols: None,
        }
    }
}

/// Who a test client says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// The client certificate the CA signed.
    Client,
    /// No certificate.
    Anonymous,
    /// A certificate from another CA.
    Stranger,
}

/// A rustls client configuration that trusts the test CA, speaks `versions`, and shows
/// `identity`.
pub fn client_config(
    certs: &Certs,
    identity: Identity,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&certs.ca).unwrap())
        .unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .unwrap()
    .with_root_certificates(roots);
    let pair = match identity {
        Identity::Client => Some((&certs.client_cert, &certs.client_key)),
        Identity::Stranger => Some((&certs.stranger_cert, &certs.stranger_key)),
        Identity::Anonymous => None,
    };
    Arc::new(match pair {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from_pem_file(cert).unwrap()],
                PrivateKeyDer::from_pem_file(key).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    })
}

/// Connects to `addr` and completes the handshake (and, with TLS 1.3, the server's verdict
/// on a client certificate comes with the first read, not here).
pub async fn connect(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> std::io::Result<Conn> {
    let tcp = TcpStream::connect(addr).await?;
    let connector = tokio_rustls::TlsConnector::from(config);
    let name = ServerName::try_from("localhost").unwrap();
    let stream = connector.connect(name, tcp).await?;
    Ok(Conn(Box::new(stream)))
}
