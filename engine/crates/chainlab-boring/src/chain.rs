//! Certificate chains as the peer sent them: what a record's `peer_chain` holds. The client
//! records the server's chain; a server that asks for client certificates records the
//! client's. Names as the OpenSSL engine gives them, so records of both stacks compare.

use boring::nid::Nid;
use boring::pkey::Id;
use boring::ssl::SslRef;
use boring::x509::{X509Ref, X509};
use chainlab_record::observed::PeerCertificate;
use chainlab_record::record::ObservedCert;

/// The certificates the peer sent, leaf first; `None` when it sent none (a resumed
/// handshake, or a server that asked for no client certificate).
pub fn observed_chain(
    ssl: &SslRef,
    server_side: bool,
) -> anyhow::Result<Option<Vec<ObservedCert>>> {
    let chain = ssl
        .peer_cert_chain()
        .map(|chain| chain.iter().map(|c| Cert(c.to_owned())).collect());
    let leaf = ssl.peer_certificate().map(Cert);
    chainlab_record::observed::peer_chain(leaf, chain, server_side)
}

/// A certificate as BoringSSL reads it.
struct Cert(X509);

impl PeerCertificate for Cert {
    fn der_bytes(&self) -> anyhow::Result<usize> {
        Ok(self.0.to_der()?.len())
    }
    fn subject_entries(&self) -> anyhow::Result<Vec<(String, String)>> {
        self.0
            .subject_name()
            .entries()
            .map(|e| {
                let key = e.object().nid().short_name().unwrap_or("?");
                Ok((key.to_owned(), e.data().as_utf8()?.to_string()))
            })
            .collect()
    }
    fn sig_alg(&self) -> String {
        let nid = self.0.signature_algorithm().object().nid();
        nid.long_name().unwrap_or("unknown").to_owned()
    }
    fn key_alg(&self) -> anyhow::Result<String> {
        key_algorithm(&self.0)
    }
}

/// The certificate's key type in the vocabulary of `pki --chain` ("ML-DSA-65",
/// "ECDSA-P256", "Ed25519", "RSA-2048"), else BoringSSL's name of its type.
fn key_algorithm(cert: &X509Ref) -> anyhow::Result<String> {
    let key = cert.public_key()?;
    Ok(match key.id() {
        Id::EC => match key.ec_key()?.group().curve_name() {
            Some(Nid::X9_62_PRIME256V1) => "ECDSA-P256".to_owned(),
            Some(Nid::SECP384R1) => "ECDSA-P384".to_owned(),
            Some(nid) => format!("EC-{}", nid.short_name().unwrap_or("unknown")),
            None => "EC".to_owned(),
        },
        Id::RSA => format!("RSA-{}", key.bits()),
        Id::ED25519 => "Ed25519".to_owned(),
        other => Nid::from_raw(other.as_raw())
            .long_name()
            .unwrap_or("unknown")
            .to_owned(),
    })
}
