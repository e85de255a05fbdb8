//! A position's private key: an OpenSSL key, or a liboqs key (Falcon, MAYO, UOV, CROSS)
//! OpenSSL cannot hold. Both come from the position's `Derivation`, so both repeat with the
//! seed.

use anyhow::{Context, Result};
use openssl::pkey::{PKey, Private};

use super::keys::{self, Derivation};
use crate::algorithms::{self, Algorithm};

pub enum PrivateKey {
    OpenSsl(PKey<Private>),
    Liboqs(chainlab_oqs::Key),
    /// Composite ML-DSA: its components OpenSSL's (`super::composite`).
    Composite(chainlab_composite::CompositeKey),
}

/// Bytes of derived seed a liboqs key generation draws from (its whole random stream
/// follows from them: `chainlab_oqs::keys`).
const LIBOQS_SEED_BYTES: usize = 64;

impl PrivateKey {
    pub fn generate(algorithm: &'static Algorithm, derivation: &Derivation) -> Result<PrivateKey> {
        if let Some(composite) = algorithms::composite(algorithm) {
            return composite_key(composite, derivation).map(PrivateKey::Composite);
        }
        match algorithms::liboqs(algorithm) {
            Some(oqs) => {
                let seed = derivation.bytes("key", LIBOQS_SEED_BYTES)?;
                Ok(PrivateKey::Liboqs(chainlab_oqs::keys::generate(
                    oqs, &seed,
                )?))
            }
            None => Ok(PrivateKey::OpenSsl(keys::generate(algorithm, derivation)?)),
        }
    }

    /// The OpenSSL key, if this is one.
    pub fn openssl(&self) -> Option<&PKey<Private>> {
        match self {
            PrivateKey::OpenSsl(key) => Some(key),
            PrivateKey::Liboqs(_) | PrivateKey::Composite(_) => None,
        }
    }

    /// The key file's contents: PKCS#8 PEM.
    pub fn pkcs8_pem(&self) -> Result<Vec<u8>> {
        match self {
            PrivateKey::OpenSsl(key) => key
                .private_key_to_pem_pkcs8()
                .context("encoding a private key as PKCS#8 PEM"),
            PrivateKey::Liboqs(key) => Ok(chainlab_oqs::encoding::pem(
                "PRIVATE KEY",
                &chainlab_oqs::encoding::pkcs8(key),
            )
            .into_bytes()),
            PrivateKey::Composite(key) => Ok(chainlab_oqs::encoding::pem(
                "PRIVATE KEY",
                &chainlab_composite::encoding::pkcs8(key.algorithm, &key.private),
            )
            .into_bytes()),
        }
    }

    /// The SubjectPublicKeyInfo DER and the raw public key (what a key identifier hashes).
    pub fn public(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        match self {
            PrivateKey::OpenSsl(key) => {
                let spki = key.public_key_to_der()?;
                let raw = chainlab_mtc::der::elements(
                    chainlab_mtc::der::expect(&spki, chainlab_mtc::der::SEQUENCE, "SPKI")?.contents,
                )?
                .get(1)
                .map(|bits| bits.contents[1..].to_vec())
                .context("an SPKI without its key")?;
                Ok((spki, raw))
            }
            PrivateKey::Liboqs(key) => Ok((
                chainlab_oqs::encoding::spki(key.algorithm, &key.public),
                key.public.clone(),
            )),
            PrivateKey::Composite(key) => Ok((
                chainlab_composite::encoding::spki(key.algorithm, &key.public),
                key.public.clone(),
            )),
        }
    }

    /// The signature of `message` as a certificate carries it: OpenSSL's deterministic
    /// variant, or liboqs with random bytes drawn from `derivation` (the signed position's).
    pub fn sign_certificate(
        &self,
        algorithm: &Algorithm,
        message: &[u8],
        derivation: &Derivation,
    ) -> Result<Vec<u8>> {
        match self {
            PrivateKey::OpenSsl(key) => super::cert::sign_message(key, algorithm, message),
            PrivateKey::Liboqs(key) => {
                key.sign_seeded(message, &derivation.bytes("signature", LIBOQS_SEED_BYTES)?)
            }
            // Deterministic components (`super::composite`), an empty context as X.509's.
            PrivateKey::Composite(key) => key.sign(message, b""),
        }
    }
}

/// A composite key from the position's derivation: the ML-DSA seed and the traditional
/// private key each drawn for its own purpose, so neither is another key's (the draft
/// forbids reusing component keys).
fn composite_key(
    algorithm: &'static chainlab_composite::CompositeAlgorithm,
    derivation: &Derivation,
) -> Result<chainlab_composite::CompositeKey> {
    use chainlab_composite::Traditional;
    let seed = derivation.bytes("composite-mldsa", 32)?;
    let trad = algorithm.traditional;
    let private = match trad {
        Traditional::Ed25519 => derivation.bytes("composite-trad", 32)?,
        Traditional::EcdsaP256Sha256 | Traditional::EcdsaP384Sha384 => {
            let (nid, group) = match trad {
                Traditional::EcdsaP256Sha256 => (openssl::nid::Nid::X9_62_PRIME256V1, c"P-256"),
                _ => (openssl::nid::Nid::SECP384R1, c"P-384"),
            };
            let key = keys::ec_key(nid, group, derivation, "composite-trad")?;
            key.ec_key()?
                .private_key()
                .to_vec_padded(trad.private_len() as i32)?
        }
    };
    let private = chainlab_composite::encoding::private_key(algorithm, &seed, &private)?;
    chainlab_composite::CompositeKey::from_private(&super::composite::OpenSsl, algorithm, &private)
}
