//! The DER forms of liboqs keys: AlgorithmIdentifier (the OID, parameters absent),
//! SubjectPublicKeyInfo (the raw public key in the BIT STRING, as the OQS provider writes
//! it), PKCS#8 (RFC 5958 v1; the privateKey OCTET STRING holds a DER OCTET STRING of secret
//! key || public key, the form the OQS provider writes and reads (`oqsx_key_from_pkcs8`), so
//! its tools take chainlab's key files and a key file carries its public half), and the key
//! identifier OpenSSL writes (SHA-1 of the public key).
//!
//! OpenSSL's ML-DSA private keys (draft-ietf-lamps-dilithium-certificates: the seed, the
//! expanded key, or both) are read too, so liboqs can sign with a key `pki` made with OpenSSL.

use anyhow::{anyhow, bail, Context, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chainlab_mtc::der;
use sha1::{Digest, Sha1};

use crate::algorithms::{by_oid, Family, OqsAlgorithm};
use crate::keys::Key;

/// The OID element alone: what rustls' `AlgorithmIdentifier` holds (a SEQUENCE's contents).
pub fn algorithm_oid(algorithm: &OqsAlgorithm) -> Vec<u8> {
    // The table's OIDs are well formed (a unit test encodes every one).
    der::oid(algorithm.oid).unwrap_or_default()
}

/// AlgorithmIdentifier: SEQUENCE { OID } (parameters absent).
pub fn algorithm_identifier(algorithm: &OqsAlgorithm) -> Vec<u8> {
    der::sequence(&[&algorithm_oid(algorithm)])
}

/// SubjectPublicKeyInfo of a public key.
pub fn spki(algorithm: &OqsAlgorithm, public: &[u8]) -> Vec<u8> {
    der::spki(&algorithm_identifier(algorithm), public)
}

/// The algorithm and raw public key of a SubjectPublicKeyInfo, if it is one of the table's.
pub fn read_spki(spki: &[u8]) -> Result<Option<(&'static OqsAlgorithm, Vec<u8>)>> {
    der::read_spki(spki, algorithm_of, |a| a.name)
}

/// The key identifier OpenSSL writes for a key (RFC 5280 4.2.1.2 method 1).
pub fn key_identifier(public: &[u8]) -> Vec<u8> {
    Sha1::digest(public).to_vec()
}

/// PKCS#8 PrivateKeyInfo of a key from the table (not ML-DSA: OpenSSL writes those), as the
/// OQS provider writes it: privateKey = OCTET STRING { OCTET STRING { secret || public } }.
pub fn pkcs8(key: &Key) -> Vec<u8> {
    let mut both = key.secret.clone();
    both.extend_from_slice(&key.public);
    der::sequence(&[
        &der::integer(0),
        &algorithm_identifier(key.algorithm),
        &der::tlv(der::OCTET_STRING, &der::tlv(der::OCTET_STRING, &both)),
    ])
}

/// A PEM block of `label` around `der` (64-column base64, as OpenSSL writes).
pub fn pem(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The table's algorithm of a PKCS#8 PrivateKeyInfo, `None` for another algorithm's key.
pub fn pkcs8_algorithm(der_bytes: &[u8]) -> Result<Option<&'static OqsAlgorithm>> {
    let outer = der::expect(der_bytes, der::SEQUENCE, "PrivateKeyInfo")?;
    let parts = der::elements(outer.contents)?;
    match parts.get(1) {
        Some(alg_id) => algorithm_of(alg_id),
        None => bail!(
            "PrivateKeyInfo: {} elements, expected at least 3",
            parts.len()
        ),
    }
}

/// The liboqs key of a PKCS#8 PrivateKeyInfo, `None` when its algorithm is not the table's
/// (another library's key). ML-DSA keys are read in OpenSSL's forms; a seed-only ML-DSA key
/// is refused (liboqs 0.13 cannot expand a seed).
pub fn from_pkcs8(der_bytes: &[u8]) -> Result<Option<Key>> {
    let Some((algorithm, private)) = der::read_pkcs8(der_bytes, algorithm_of, |a| a.name)? else {
        return Ok(None);
    };
    if algorithm.family == Family::MlDsa {
        return ml_dsa_secret(algorithm, private)
            .and_then(|secret| Key::for_signing(algorithm, &secret))
            .map(Some);
    }
    let (sk, pk) = crate::backend::lengths(algorithm)?;
    // The OQS provider's form (an inner OCTET STRING), or the bare key earlier chainlab
    // versions wrote (cached hierarchies keep it): the lengths tell them apart.
    let key = if private.len() == sk + pk {
        private
    } else {
        der::expect(private, der::OCTET_STRING, "PrivateKeyInfo privateKey")
            .map(|inner| inner.contents)
            .unwrap_or(private)
    };
    if key.len() != sk + pk {
        bail!(
            "PrivateKeyInfo of {}: {} bytes of key, expected {} (secret {sk} + public {pk})",
            algorithm.name,
            key.len(),
            sk + pk
        );
    }
    Key::from_parts(algorithm, &key[..sk], &key[sk..]).map(Some)
}

/// The expanded secret key inside an ML-DSA privateKey: `expandedKey` or `both`.
fn ml_dsa_secret(algorithm: &OqsAlgorithm, contents: &[u8]) -> Result<Vec<u8>> {
    let (e, _) = der::read(contents).context("ML-DSA privateKey")?;
    match e.tag {
        der::OCTET_STRING => Ok(e.contents.to_vec()),
        der::SEQUENCE => {
            let parts = der::elements(e.contents)?;
            parts
                .get(1)
                .filter(|p| p.tag == der::OCTET_STRING)
                .map(|p| p.contents.to_vec())
                .ok_or_else(|| {
                    anyhow!(
                        "{}: privateKey `both` without an expandedKey",
                        algorithm.name
                    )
                })
        }
        _ => bail!(
            "{}: a seed-only private key; liboqs signs only with an expanded key (write \
             keys with the expanded form, as `pki` does)",
            algorithm.name
        ),
    }
}

/// The table's algorithm of an AlgorithmIdentifier element, `None` for any other OID.
fn algorithm_of(alg_id: &der::Element<'_>) -> Result<Option<&'static OqsAlgorithm>> {
    Ok(by_oid(&der::algorithm_oid(alg_id)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::ALGORITHMS;

    #[test]
    fn oids_round_trip() {
        for a in ALGORITHMS {
            let oid = der::oid(a.oid).unwrap();
            assert_eq!(der::oid_text(&oid[2..]), a.oid, "{}", a.name);
        }
        assert_eq!(key_identifier(b"abc").len(), 20);
        assert!(pem("PRIVATE KEY", &[0; 60]).lines().all(|l| l.len() <= 64));
    }

    #[cfg(feature = "liboqs")]
    #[test]
    fn keys_survive_pkcs8_and_spki() {
        let mayo = crate::algorithms::lookup("MAYO-1").unwrap();
        let key = crate::keys::generate(mayo, b"k").unwrap();
        let written = pkcs8(&key);
        let back = from_pkcs8(&written).unwrap().unwrap();
        assert_eq!(
            (back.public, back.secret),
            (key.public.clone(), key.secret.clone())
        );
        // The OQS provider's form: privateKey's contents are themselves an OCTET STRING of
        // secret || public.
        let outer = der::expect(&written, der::SEQUENCE, "PrivateKeyInfo").unwrap();
        let parts = der::elements(outer.contents).unwrap();
        let inner = der::expect(parts[2].contents, der::OCTET_STRING, "inner").unwrap();
        assert_eq!(
            inner.contents,
            [key.secret.clone(), key.public.clone()].concat()
        );
        // The bare form earlier versions wrote still reads.
        let mut both = key.secret.clone();
        both.extend_from_slice(&key.public);
        let bare = der::sequence(&[
            &der::integer(0),
            &algorithm_identifier(mayo),
            &der::tlv(der::OCTET_STRING, &both),
        ]);
        assert_eq!(from_pkcs8(&bare).unwrap().unwrap().secret, key.secret);
        let (alg, public) = read_spki(&spki(mayo, &key.public)).unwrap().unwrap();
        assert_eq!((alg.name, public), ("MAYO-1", key.public));
    }
}
