//! Certificate chains as the peer sent them: what a record's `peer_chain` holds. The client
//! records the server's chain; a server that asks for client certificates records the
//! client's.

use foreign_types::ForeignTypeRef;
use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::SslRef;
use openssl::x509::{X509Ref, X509};

use crate::ossl;

chainlab_record::libssl_peer_chain!(
    SslRef,
    X509,
    |data| data.to_string()?.to_string(),
    key_algorithm
);

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
