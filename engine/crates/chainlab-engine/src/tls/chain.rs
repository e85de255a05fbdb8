//! Certificate chains as the peer sent them: what a record's `peer_chain` holds. The client
//! records the server's chain; a server that asks for client certificates records the
//! client's.

use foreign_types::ForeignTypeRef;
use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::SslRef;
use openssl::x509::{X509Ref, X509};

use crate::ossl;
use crate::record::ObservedCert;
use chainlab_record::observed::PeerCertificate;

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

/// A certificate as OpenSSL reads it.
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
                Ok((key.to_owned(), e.data().to_string()?.to_string()))
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
/// "SLH-DSA-SHAKE-128f", "ECDSA-P256", "Ed25519", "RSA-2048"), else OpenSSL's type name.
fn key_algorithm(cert: &X509Ref) -> anyhow::Result<String> {
    let key = cert.public_key()?;
    let name = match key.id() {
        Id::EC => {
            let curve = key.ec_key()?.group().curve_name();
            match curve {
                Some(Nid::X9_62_PRIME256V1) => "ECDSA-P256".to_owned(),
                Some(Nid::SECP384R1) => "ECDSA-P384".to_owned(),
                Some(nid) => format!("EC-{}", nid.short_name().unwrap_or("unknown")),
                None => "EC".to_owned(),
            }
        }
        Id::RSA => format!("RSA-{}", key.bits()),
        Id::ED25519 => "Ed25519".to_owned(),
        _ => {
            // SAFETY: valid key; the name lives in the provider's static algorithm table.
            let name = unsafe { ossl::static_str(ossl::EVP_PKEY_get0_type_name(key.as_ptr())) };
            name.unwrap_or("unknown").to_owned()
        }
    };
    Ok(crate::algorithms::lookup(&name)
        .map(|a| a.name.to_owned())
        .unwrap_or(name))
}
