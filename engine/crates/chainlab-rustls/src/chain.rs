//! The certificates the server sent, as a record's `peer_chain` holds them: DER size,
//! subject on one line, the certificate's signature algorithm (OpenSSL's long name) and its
//! key type (`pki --chain` names). The same strings the OpenSSL engine records, so a chain
//! observed on either stack compares field by field.

use chainlab_record::record::ObservedCert;
use rustls::pki_types::CertificateDer;
use x509_parser::oid_registry::Oid;
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;

/// (OID, OpenSSL long name) of the signature and key algorithms a chainlab PKI uses with
/// OpenSSL; liboqs' come from `chainlab_oqs`'s table.
const ALGORITHM_OIDS: &[(&str, &str)] = &[
    ("1.2.840.10045.4.3.2", "ecdsa-with-SHA256"),
    ("1.2.840.10045.4.3.3", "ecdsa-with-SHA384"),
    ("1.2.840.10045.4.3.4", "ecdsa-with-SHA512"),
    ("1.3.101.112", "ED25519"),
    ("1.2.840.113549.1.1.11", "sha256WithRSAEncryption"),
    ("1.2.840.113549.1.1.12", "sha384WithRSAEncryption"),
    ("1.2.840.113549.1.1.13", "sha512WithRSAEncryption"),
    ("1.2.840.113549.1.1.10", "rsassaPss"),
    ("2.16.840.1.101.3.4.3.17", "ML-DSA-44"),
    ("2.16.840.1.101.3.4.3.18", "ML-DSA-65"),
    ("2.16.840.1.101.3.4.3.19", "ML-DSA-87"),
    ("2.16.840.1.101.3.4.3.20", "SLH-DSA-SHA2-128s"),
    ("2.16.840.1.101.3.4.3.21", "SLH-DSA-SHA2-128f"),
    ("2.16.840.1.101.3.4.3.22", "SLH-DSA-SHA2-192s"),
    ("2.16.840.1.101.3.4.3.23", "SLH-DSA-SHA2-192f"),
    ("2.16.840.1.101.3.4.3.24", "SLH-DSA-SHA2-256s"),
    ("2.16.840.1.101.3.4.3.25", "SLH-DSA-SHA2-256f"),
    ("2.16.840.1.101.3.4.3.26", "SLH-DSA-SHAKE-128s"),
    ("2.16.840.1.101.3.4.3.27", "SLH-DSA-SHAKE-128f"),
    ("2.16.840.1.101.3.4.3.28", "SLH-DSA-SHAKE-192s"),
    ("2.16.840.1.101.3.4.3.29", "SLH-DSA-SHAKE-192f"),
    ("2.16.840.1.101.3.4.3.30", "SLH-DSA-SHAKE-256s"),
    ("2.16.840.1.101.3.4.3.31", "SLH-DSA-SHAKE-256f"),
];

/// Named curves of ECDSA keys, by OID.
const CURVES: &[(&str, &str)] = &[
    ("1.2.840.10045.3.1.7", "ECDSA-P256"),
    ("1.3.132.0.34", "ECDSA-P384"),
];

const EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
const RSA_ENCRYPTION: &str = "1.2.840.113549.1.1.1";

/// The chain as observed, leaf first; a certificate that does not parse is an error (the
/// handshake accepted it, so it cannot happen with verification on).
pub fn observed_chain(certs: &[CertificateDer<'_>]) -> anyhow::Result<Vec<ObservedCert>> {
    certs.iter().map(|c| observed_cert(c)).collect()
}

fn observed_cert(der: &[u8]) -> anyhow::Result<ObservedCert> {
    let (_, cert) = X509Certificate::from_der(der)
        .map_err(|e| anyhow::anyhow!("the peer's certificate does not parse: {e}"))?;
    let registry = x509_parser::objects::oid_registry();
    let subject = cert
        .subject()
        .iter()
        .flat_map(|rdn| rdn.iter())
        .map(|attr| {
            // OpenSSL's short names ("CN", "O"), as the OpenSSL engine writes subjects.
            let key = x509_parser::objects::oid2abbrev(attr.attr_type(), registry)
                .map(str::to_owned)
                .unwrap_or_else(|_| attr.attr_type().to_id_string());
            let value = attr.as_str().unwrap_or("?");
            format!("{key}={value}")
        })
        .collect::<Vec<_>>()
        .join(", ");
    Ok(ObservedCert {
        der_bytes: der.len(),
        subject,
        sig_alg: oid_name(&cert.signature_algorithm.algorithm),
        key_alg: key_algorithm(&cert),
    })
}

fn oid_name(oid: &Oid) -> String {
    let id = oid.to_id_string();
    ALGORITHM_OIDS
        .iter()
        .find(|(o, _)| *o == id)
        .map(|(_, name)| (*name).to_owned())
        // liboqs' and composite algorithms (key and signature share the OID): their `pki`
        // names.
        .or_else(|| chainlab_oqs::algorithms::by_oid(&id).map(|a| a.name.to_owned()))
        .or_else(|| chainlab_composite::algorithms::by_oid(&id).map(|a| a.name.to_owned()))
        .unwrap_or(id)
}

/// The key type in `pki --chain` names ("ML-DSA-65", "ECDSA-P256", "Ed25519", "RSA-2048").
fn key_algorithm(cert: &X509Certificate<'_>) -> String {
    let spki = cert.public_key();
    let alg = spki.algorithm.algorithm.to_id_string();
    if alg == EC_PUBLIC_KEY {
        let curve = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.as_oid().ok())
            .map(|o| o.to_id_string())
            .unwrap_or_default();
        return CURVES
            .iter()
            .find(|(o, _)| *o == curve)
            .map(|(_, n)| (*n).to_owned())
            .unwrap_or_else(|| format!("EC-{curve}"));
    }
    if alg == RSA_ENCRYPTION {
        if let Ok(PublicKey::RSA(rsa)) = spki.parsed() {
            return format!("RSA-{}", rsa.key_size());
        }
    }
    match oid_name(&spki.algorithm.algorithm).as_str() {
        "ED25519" => "Ed25519".to_owned(),
        name => name.to_owned(),
    }
}
