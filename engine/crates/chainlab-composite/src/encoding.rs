//! The draft's serializations and their DER forms (draft sections "Serialization" and "Use
//! within X.509 and PKIX"):
//!
//! - public key: mldsaPK || tradPK (tradPK: the uncompressed point 04||X||Y for ECDSA, the
//!   32 raw bytes for Ed25519), raw in the SubjectPublicKeyInfo's BIT STRING;
//! - private key: mldsaSeed (32 bytes) || tradSK (tradSK: an RFC 5915 ECPrivateKey with the
//!   namedCurve parameter and no publicKey for ECDSA, the 32 raw bytes for Ed25519), the
//!   privateKey OCTET STRING of a PKCS#8 (RFC 5958 v1) OneAsymmetricKey;
//! - signature: mldsaSig || tradSig (tradSig: DER Ecdsa-Sig-Value, or Ed25519's 64 bytes),
//!   raw in the certificate's signatureValue BIT STRING;
//! - AlgorithmIdentifier: SEQUENCE { OID } (parameters absent), the same for key and
//!   signature.

use anyhow::{bail, Context, Result};
use chainlab_mtc::der;

use crate::algorithms::{by_oid, CompositeAlgorithm};

/// The ML-DSA seed's bytes (FIPS 204's xi): the first part of every composite private key.
pub const MLDSA_SEED_BYTES: usize = 32;

/// The OID element alone (an AlgorithmIdentifier's contents).
pub fn algorithm_oid(algorithm: &CompositeAlgorithm) -> Vec<u8> {
    // The table's OIDs are well formed (a unit test encodes every one).
    der::oid(algorithm.oid).unwrap_or_default()
}

/// AlgorithmIdentifier: SEQUENCE { OID }.
pub fn algorithm_identifier(algorithm: &CompositeAlgorithm) -> Vec<u8> {
    der::sequence(&[&algorithm_oid(algorithm)])
}

/// SubjectPublicKeyInfo of a composite public key (mldsaPK || tradPK).
pub fn spki(algorithm: &CompositeAlgorithm, public: &[u8]) -> Vec<u8> {
    der::spki(&algorithm_identifier(algorithm), public)
}

/// The algorithm and public key of a SubjectPublicKeyInfo, None for another algorithm's.
pub fn read_spki(spki: &[u8]) -> Result<Option<(&'static CompositeAlgorithm, Vec<u8>)>> {
    der::read_spki(spki, algorithm_of, |a| a.name)
}

/// The private key in the draft's form from its parts: the ML-DSA seed and the traditional
/// private key (an ECDSA scalar, big-endian at the curve's length, or Ed25519's 32 bytes).
pub fn private_key(
    algorithm: &CompositeAlgorithm,
    mldsa_seed: &[u8],
    trad_private: &[u8],
) -> Result<Vec<u8>> {
    if mldsa_seed.len() != MLDSA_SEED_BYTES {
        bail!(
            "an ML-DSA seed has {MLDSA_SEED_BYTES} bytes, not {}",
            mldsa_seed.len()
        );
    }
    let trad = algorithm.traditional;
    if trad_private.len() != trad.private_len() {
        bail!(
            "a {} private key has {} bytes, not {}",
            trad.name(),
            trad.private_len(),
            trad_private.len()
        );
    }
    let mut out = mldsa_seed.to_vec();
    match trad.curve_oid() {
        // RFC 5915 ECPrivateKey { version 1, privateKey, parameters [0] namedCurve }.
        Some(curve) => out.extend(der::sequence(&[
            &der::integer(1),
            &der::tlv(der::OCTET_STRING, trad_private),
            &der::tlv(0xa0, &der::oid(curve)?),
        ])),
        None => out.extend_from_slice(trad_private),
    }
    Ok(out)
}

/// The parts of a private key in the draft's form: the ML-DSA seed, and the traditional
/// private key as `private_key` takes it (the ECPrivateKey's scalar, or Ed25519's bytes).
pub fn split_private_key(
    algorithm: &CompositeAlgorithm,
    private: &[u8],
) -> Result<([u8; MLDSA_SEED_BYTES], Vec<u8>)> {
    if private.len() <= MLDSA_SEED_BYTES {
        bail!(
            "a {} private key of {} bytes is too short",
            algorithm.name,
            private.len()
        );
    }
    let (seed, trad) = private.split_at(MLDSA_SEED_BYTES);
    let seed: [u8; MLDSA_SEED_BYTES] = seed.try_into().context("the ML-DSA seed")?;
    let t = algorithm.traditional;
    let scalar = match t.curve_oid() {
        Some(curve) => {
            let key = der::expect(trad, der::SEQUENCE, "ECPrivateKey")?;
            let parts = der::elements(key.contents)?;
            let (Some(version), Some(d)) = (parts.first(), parts.get(1)) else {
                bail!("{}: ECPrivateKey without its private key", algorithm.name);
            };
            if der::integer_value(version)? != 1 || d.tag != der::OCTET_STRING {
                bail!("{}: not an ECPrivateKey of version 1", algorithm.name);
            }
            if let Some(params) = parts.get(2).filter(|p| p.tag == 0xa0) {
                let named = der::expect(params.contents, der::OID, "namedCurve")?;
                if named.contents != &der::oid(curve)?[2..] {
                    bail!("{}: its ECPrivateKey is of another curve", algorithm.name);
                }
            }
            d.contents.to_vec()
        }
        None => trad.to_vec(),
    };
    if scalar.len() != t.private_len() {
        bail!(
            "{}: a {} private key has {} bytes, not {}",
            algorithm.name,
            t.name(),
            t.private_len(),
            scalar.len()
        );
    }
    Ok((seed, scalar))
}

/// PKCS#8 OneAsymmetricKey (v1) of a private key in the draft's form.
pub fn pkcs8(algorithm: &CompositeAlgorithm, private: &[u8]) -> Vec<u8> {
    der::sequence(&[
        &der::integer(0),
        &algorithm_identifier(algorithm),
        &der::tlv(der::OCTET_STRING, private),
    ])
}

/// The algorithm and private key (draft form) of a PKCS#8, None for another algorithm's.
pub fn from_pkcs8(der_bytes: &[u8]) -> Result<Option<(&'static CompositeAlgorithm, Vec<u8>)>> {
    let found = der::read_pkcs8(der_bytes, algorithm_of, |a| a.name)?;
    Ok(found.map(|(algorithm, private)| (algorithm, private.to_vec())))
}

/// The components of a composite public key: (mldsaPK, tradPK).
pub fn split_public_key<'a>(
    algorithm: &CompositeAlgorithm,
    public: &'a [u8],
) -> Result<(&'a [u8], &'a [u8])> {
    let n = algorithm.mldsa.public_key_len();
    if public.len() <= n {
        bail!(
            "a {} public key of {} bytes is too short",
            algorithm.name,
            public.len()
        );
    }
    Ok(public.split_at(n))
}

/// The components of a composite signature: (mldsaSig, tradSig).
pub fn split_signature<'a>(
    algorithm: &CompositeAlgorithm,
    signature: &'a [u8],
) -> Result<(&'a [u8], &'a [u8])> {
    let n = algorithm.mldsa.signature_len();
    if signature.len() <= n {
        bail!(
            "a {} signature of {} bytes is too short",
            algorithm.name,
            signature.len()
        );
    }
    Ok(signature.split_at(n))
}

/// The table's algorithm of an AlgorithmIdentifier element, None for any other OID.
fn algorithm_of(alg_id: &der::Element<'_>) -> Result<Option<&'static CompositeAlgorithm>> {
    Ok(by_oid(&der::algorithm_oid(alg_id)?))
}

/// The composite algorithm of a PEM private key file, None for any other key: what a stack
/// that cannot sign with composite ML-DSA names when it is given such a key.
pub fn composite_key_in_pem(pem: &[u8]) -> Option<&'static CompositeAlgorithm> {
    use base64::Engine;
    let text = std::str::from_utf8(pem).ok()?;
    let body = text.split("-----BEGIN PRIVATE KEY-----").nth(1)?;
    let body = body.split("-----END PRIVATE KEY-----").next()?;
    let clean: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(clean)
        .ok()?;
    from_pkcs8(&der)
        .ok()
        .flatten()
        .map(|(algorithm, _)| algorithm)
}

/// The line a stack that signs no composite key says of one (`stack`: its name).
pub fn cannot_sign(stack: &str, key_file: &str, algorithm: &CompositeAlgorithm) -> String {
    format!(
        "{key_file}: a composite {} key (TLS scheme {}, private-use code point {:#06x}): the {stack} \
         stack cannot sign with it; composite ML-DSA is the rustls stack's (docs/stacks.md)",
        algorithm.name, algorithm.tls_name, algorithm.code_point
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{lookup, ALGORITHMS};

    #[test]
    fn oids_round_trip_and_keys_survive_their_encodings() {
        for a in ALGORITHMS {
            let oid = der::oid(a.oid).unwrap();
            assert_eq!(der::oid_text(&oid[2..]), a.oid, "{}", a.name);
            let scalar = vec![7u8; a.traditional.private_len()];
            let private = private_key(a, &[1; 32], &scalar).unwrap();
            let (seed, back) = split_private_key(a, &private).unwrap();
            assert_eq!((seed, back), ([1; 32], scalar.clone()), "{}", a.name);
            let (alg, again) = from_pkcs8(&pkcs8(a, &private)).unwrap().unwrap();
            assert_eq!((alg.name, again), (a.name, private));
            let public = vec![4u8; a.mldsa.public_key_len() + 65];
            let (alg, key) = read_spki(&spki(a, &public)).unwrap().unwrap();
            assert_eq!((alg.name, key), (a.name, public));
        }
        // The draft's ECDSA-P256 tradSK: 30 31 02 01 01 04 20 <d> a0 0a 06 08 <P-256>.
        let a = lookup("MLDSA65-ECDSA-P256-SHA512").unwrap();
        let private = private_key(a, &[0; 32], &[9; 32]).unwrap();
        assert_eq!(private.len(), 32 + 51);
        assert_eq!(
            &private[32..39],
            &[0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20]
        );
        let ed = lookup("MLDSA65-Ed25519-SHA512").unwrap();
        assert_eq!(private_key(ed, &[0; 32], &[9; 32]).unwrap().len(), 64);
        assert!(private_key(a, &[0; 31], &[9; 32]).is_err());
        assert!(split_private_key(a, &[0; 40]).is_err());
    }
}
