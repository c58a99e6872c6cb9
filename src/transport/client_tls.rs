//! TLS clients that check less than [`crate::transport::certs::client_config`] (the chain and
//! the name, what `https://` targets and the MQTT bus use): rustls on the ring provider, named
//! in every config (`builder_with_provider`), so nothing depends on a process-wide default
//! provider that another crate may or may not have installed.
//!
//! Three ways to trust a server, as libpq's `sslmode` has them: the chain and the host name
//! ([`Verify::ChainAndName`], libpq's `verify-full`, what a browser or `mosquitto_pub
//! --cafile` does), the chain only ([`Verify::ChainOnly`], `verify-ca`), or nothing
//! ([`Verify::Nothing`], `require`: encrypted, but anyone in the middle can answer). The last
//! two exist because libpq has them and EdgeX's own deployments use them; the verifiers
//! behind them stay private to this module.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// The ring provider every config here is built with.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// How a client decides to trust the server's certificate.
#[derive(Debug, Clone)]
pub enum Verify {
    /// The chain to one of these roots, and the name the client dialled.
    ChainAndName(RootCertStore),
    /// The chain to one of these roots, whatever name the certificate carries.
    ChainOnly(RootCertStore),
    /// Any certificate: the session is encrypted, the server is not authenticated.
    Nothing,
}

/// A client config that trusts the server as `verify` says, without a client certificate.
pub fn client_config(verify: Verify) -> Result<ClientConfig, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("rustls refused its own default protocol versions: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::ChainAndName(roots) => chain_verifier(roots, &provider)?,
        Verify::ChainOnly(roots) => Arc::new(WithoutNameCheck {
            chain: Some(chain_verifier(roots, &provider)?),
            provider,
        }),
        Verify::Nothing => Arc::new(WithoutNameCheck {
            chain: None,
            provider,
        }),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn chain_verifier(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let verifier =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
            .build()
            .map_err(|e| format!("cannot build a certificate verifier: {e}"))?;
    Ok(verifier)
}

/// libpq's `verify-ca` and `require`: the chain checked against the roots but not the name
/// (`chain` given), or no certificate check at all (`chain` none). Either way the handshake's
/// signatures are checked, so the server must hold the key of the certificate it sent.
#[derive(Debug)]
struct WithoutNameCheck {
    chain: Option<Arc<dyn ServerCertVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for WithoutNameCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
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
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_check_builds_on_the_roots_of_a_ca_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = crate::transport::certs::PrivateCa::new()
            .unwrap()
            .write_files(dir.path())
            .unwrap();
        let roots = || crate::transport::certs::roots(Some(&files.ca_cert)).unwrap();
        assert_eq!(roots().len(), 1);
        for verify in [
            Verify::ChainAndName(roots()),
            Verify::ChainOnly(roots()),
            Verify::Nothing,
        ] {
            client_config(verify).unwrap();
        }
    }
}
