//! Certificates OpenSSL cannot build: those whose key or issuer is a liboqs or a composite
//! algorithm. The
//! TBSCertificate is written field by field exactly as `cert::issue` has OpenSSL write it
//! (same names, validity, extensions and their order), only the key and the signature come
//! from `PrivateKey`. A test issues a certificate both ways with OpenSSL keys and compares
//! the bytes, so the two paths cannot drift apart.

use anyhow::{bail, Context, Result};
use chainlab_mtc::der::{self, sequence, tlv};
use openssl::x509::{X509Ref, X509};

use super::cert::{self, Subject};
use super::key::PrivateKey;
use super::keys::Derivation;
use crate::algorithms::{self, Algorithm};
use crate::cli::Purpose;

const BOOLEAN_TRUE: [u8; 3] = [0x01, 0x01, 0xff];
const UTC_TIME: u8 = 0x17;
/// Context-specific tags: [0] constructed (version), [3] constructed (extensions),
/// [0] primitive (keyIdentifier), [2] dNSName, [7] iPAddress.
const VERSION_TAG: u8 = 0xa0;
const EXTENSIONS_TAG: u8 = 0xa3;
const KEY_ID_TAG: u8 = 0x80;
const DNS_NAME_TAG: u8 = 0x82;
const IP_ADDRESS_TAG: u8 = 0x87;

/// The issuing certificate, its key and algorithm; None issues a self-signed certificate.
pub type Issuer<'a> = Option<(&'a X509Ref, &'a PrivateKey, &'static Algorithm)>;

/// Builds and signs the certificate of `subject` for `key`; `derivation` is the subject
/// position's (a liboqs signature draws its random bytes from it).
pub fn issue(
    subject: &Subject,
    key: &PrivateKey,
    issuer: Issuer,
    derivation: &Derivation,
) -> Result<X509> {
    let (spki, public) = key.public()?;
    let own_id = chainlab_oqs::encoding::key_identifier(&public);
    let name = cert::subject_name(subject)?.to_der()?;
    let (signer, signer_algorithm) = match issuer {
        Some((_, issuer_key, issuer_algorithm)) => (issuer_key, issuer_algorithm),
        None => (key, subject.algorithm),
    };
    let signature_algorithm = signature_algorithm(signer_algorithm)?;
    let issuer_name = match issuer {
        Some((cert, _, _)) => cert.subject_name().to_der()?,
        None => name.clone(),
    };
    let authority_id = match issuer {
        Some((cert, _, _)) => Some(
            cert.subject_key_id()
                .context("the issuer has no subjectKeyIdentifier")?
                .as_slice()
                .to_vec(),
        ),
        None => None,
    };
    let (not_before, not_after) = cert::validity(subject.role);
    let extensions = extensions(subject, &own_id, authority_id.as_deref())?;
    let extensions: Vec<&[u8]> = extensions.iter().map(Vec::as_slice).collect();
    let tbs = sequence(&[
        &tlv(VERSION_TAG, &der::integer(2)), // X.509 v3 is encoded as 2
        &tlv(der::INTEGER, &subject.serial),
        &signature_algorithm,
        &issuer_name,
        &sequence(&[&utc_time(not_before)?, &utc_time(not_after)?]),
        &name,
        &spki,
        &tlv(EXTENSIONS_TAG, &sequence(&extensions)),
    ]);
    let signature = signer
        .sign_certificate(signer_algorithm, &tbs, derivation)
        .with_context(|| format!("signing with {}", signer_algorithm.name))?;
    let der = sequence(&[
        &tbs,
        &signature_algorithm,
        &chainlab_mtc::der::bit_string(&signature),
    ]);
    X509::from_der(&der).context("reading back a certificate written for liboqs")
}

/// The extensions `cert::issue` adds, in its order.
fn extensions(
    subject: &Subject,
    own_id: &[u8],
    authority_id: Option<&[u8]>,
) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    match subject.path_len {
        Some(path_len) => {
            let constraints = sequence(&[&BOOLEAN_TRUE, &der::integer(path_len.into())]);
            out.push(extension("2.5.29.19", true, &constraints)?);
            // keyCertSign (bit 5) and cRLSign (bit 6): one byte, one unused bit.
            out.push(extension(
                "2.5.29.15",
                true,
                &tlv(der::BIT_STRING, &[0x01, 0x06]),
            )?);
        }
        None => {
            out.push(extension("2.5.29.19", true, &sequence(&[]))?);
            // digitalSignature (bit 0): seven unused bits.
            out.push(extension(
                "2.5.29.15",
                true,
                &tlv(der::BIT_STRING, &[0x07, 0x80]),
            )?);
            let usage = match subject.purpose {
                Purpose::Server => "1.3.6.1.5.5.7.3.1",
                Purpose::Client => "1.3.6.1.5.5.7.3.2",
            };
            out.push(extension(
                "2.5.29.37",
                false,
                &sequence(&[&der::oid(usage)?]),
            )?);
        }
    }
    out.push(extension(
        "2.5.29.14",
        false,
        &tlv(der::OCTET_STRING, own_id),
    )?);
    if let Some(id) = authority_id {
        out.push(extension(
            "2.5.29.35",
            false,
            &sequence(&[&tlv(KEY_ID_TAG, id)]),
        )?);
    }
    if subject.path_len.is_none() && subject.purpose == Purpose::Server {
        let mut names: Vec<Vec<u8>> = subject
            .dns
            .iter()
            .map(|name| tlv(DNS_NAME_TAG, name.as_bytes()))
            .collect();
        for ip in cert::LEAF_IPS {
            let ip: std::net::IpAddr = ip.parse().context("a leaf address")?;
            names.push(match ip {
                std::net::IpAddr::V4(v4) => tlv(IP_ADDRESS_TAG, &v4.octets()),
                std::net::IpAddr::V6(v6) => tlv(IP_ADDRESS_TAG, &v6.octets()),
            });
        }
        let refs: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        out.push(extension("2.5.29.17", false, &sequence(&refs))?);
    }
    Ok(out)
}

/// Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }.
fn extension(oid: &str, critical: bool, value: &[u8]) -> Result<Vec<u8>> {
    let oid = der::oid(oid)?;
    let value = tlv(der::OCTET_STRING, value);
    Ok(if critical {
        sequence(&[&oid, &BOOLEAN_TRUE, &value])
    } else {
        sequence(&[&oid, &value])
    })
}

/// `YYYYMMDDHHMMSSZ` (before 2050) as a UTCTime.
fn utc_time(generalized: &str) -> Result<Vec<u8>> {
    match generalized.get(2..) {
        Some(short) if generalized.len() == 15 && generalized < "2050" => {
            Ok(tlv(UTC_TIME, short.as_bytes()))
        }
        _ => bail!("{generalized:?} is not a date before 2050 as YYYYMMDDHHMMSSZ"),
    }
}

/// The AlgorithmIdentifier of a certificate signed by `algorithm`'s key, as OpenSSL writes
/// it (parameters absent, NULL for RSA PKCS#1 v1.5); the test below checks every entry
/// against a certificate OpenSSL signed.
pub fn signature_algorithm(algorithm: &Algorithm) -> Result<Vec<u8>> {
    if let Some(oqs) = algorithms::liboqs(algorithm) {
        return Ok(chainlab_oqs::encoding::algorithm_identifier(oqs));
    }
    if let Some(composite) = algorithms::composite(algorithm) {
        return Ok(chainlab_composite::encoding::algorithm_identifier(
            composite,
        ));
    }
    // NIST CSOR sigAlgs arc 2.16.840.1.101.3.4.3: ML-DSA 17-19, SLH-DSA 20-31.
    let nist = |arc: u32| format!("2.16.840.1.101.3.4.3.{arc}");
    let slh = [
        "SHA2-128s",
        "SHA2-128f",
        "SHA2-192s",
        "SHA2-192f",
        "SHA2-256s",
        "SHA2-256f",
        "SHAKE-128s",
        "SHAKE-128f",
        "SHAKE-192s",
        "SHAKE-192f",
        "SHAKE-256s",
        "SHAKE-256f",
    ];
    let (oid, null) = match algorithm.name {
        "ML-DSA-44" => (nist(17), false),
        "ML-DSA-65" => (nist(18), false),
        "ML-DSA-87" => (nist(19), false),
        "ECDSA-P256" => ("1.2.840.10045.4.3.2".to_owned(), false),
        "ECDSA-P384" => ("1.2.840.10045.4.3.3".to_owned(), false),
        "Ed25519" => ("1.3.101.112".to_owned(), false),
        "RSA-2048" | "RSA-3072" => ("1.2.840.113549.1.1.11".to_owned(), true),
        name => match name
            .strip_prefix("SLH-DSA-")
            .and_then(|p| slh.iter().position(|s| *s == p))
        {
            Some(i) => (nist(20 + i as u32), false),
            None => bail!("no certificate signature algorithm for {name}"),
        },
    };
    let oid = der::oid(&oid)?;
    Ok(if null {
        sequence(&[&oid, &[0x05, 0x00]])
    } else {
        sequence(&[&oid])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{lookup, Provider, ALGORITHMS};
    use crate::pki::{keys, Role, Spec};

    /// The same certificate written by OpenSSL and by this module, with OpenSSL keys whose
    /// signatures are deterministic: byte for byte equal, leaf and CA, server and client.
    #[test]
    fn writes_what_openssl_writes() {
        for (chain, purpose) in [
            (
                vec!["ECDSA-P256".to_owned(), "Ed25519".to_owned()],
                Purpose::Server,
            ),
            (
                vec![
                    "Ed25519".to_owned(),
                    "ECDSA-P384".to_owned(),
                    "ECDSA-P256".to_owned(),
                ],
                Purpose::Client,
            ),
        ] {
            let spec = Spec::new(&chain, "x509", &["example.test".to_owned()])
                .unwrap()
                .with_purpose(purpose);
            let hierarchy = crate::pki::generate(&spec).unwrap();
            let depth = hierarchy.issued.len();
            for (index, issued) in hierarchy.issued.iter().enumerate() {
                let derivation = keys::Derivation::new("x509", issued.role, issued.algorithm);
                let subject = Subject {
                    role: issued.role,
                    algorithm: issued.algorithm,
                    serial: derivation.serial().unwrap(),
                    path_len: (issued.role != Role::Leaf).then(|| (depth - 2 - index) as u32),
                    dns: &spec.dns,
                    purpose,
                };
                let issuer = index.checked_sub(1).map(|i| {
                    let parent = &hierarchy.issued[i];
                    (&*parent.cert, &parent.key, parent.algorithm)
                });
                let ours = issue(&subject, &issued.key, issuer, &derivation).unwrap();
                assert_eq!(
                    ours.to_der().unwrap(),
                    issued.cert.to_der().unwrap(),
                    "{} in {chain:?}",
                    issued.role.name()
                );
            }
        }
    }

    /// Every OpenSSL algorithm's identifier is the one OpenSSL puts in a certificate.
    #[test]
    fn signature_algorithms_match_openssl() {
        for algorithm in ALGORITHMS
            .iter()
            .filter(|a| a.provider == Provider::OpenSsl)
        {
            if algorithm.name.starts_with("SLH-DSA") && !algorithm.name.ends_with("128f") {
                continue; // the slow parameter sets share the table's rule; 128f checks it
            }
            let spec = Spec::new(&[algorithm.name.to_owned()], "alg", &[]).unwrap();
            let hierarchy = crate::pki::generate(&spec).unwrap();
            let certificate = hierarchy.leaf().cert.to_der().unwrap();
            let parts = der::elements(
                der::expect(&certificate, der::SEQUENCE, "cert")
                    .unwrap()
                    .contents,
            )
            .unwrap();
            assert_eq!(
                parts[1].raw,
                signature_algorithm(algorithm).unwrap(),
                "{}",
                algorithm.name
            );
        }
        assert!(signature_algorithm(lookup("Falcon-512").unwrap()).is_ok());
    }
}
