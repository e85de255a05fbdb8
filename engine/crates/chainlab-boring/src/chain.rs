//! Certificate chains as the peer sent them: what a record's `peer_chain` holds. The client
//! records the server's chain; a server that asks for client certificates records the
//! client's. Names as the OpenSSL engine gives them, so records of both stacks compare.

use boring::nid::Nid;
use boring::pkey::Id;
use boring::ssl::SslRef;
use boring::x509::{X509Ref, X509};

chainlab_record::libssl_peer_chain!(
    SslRef,
    X509,
    |data| data.as_utf8()?.to_string(),
    key_algorithm
);

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
