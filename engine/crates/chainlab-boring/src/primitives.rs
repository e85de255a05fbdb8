//! `primitives`: time one signature operation of a TLS 1.3 handshake in-process through
//! BoringSSL (`chainlab_record::primitives`: the OpenSSL engine's flags and records), so a
//! sign or verify figure of BoringSSL stands beside OpenSSL's for the same algorithm.
//!
//! The CertificateVerify content is signed with the TLS 1.3 scheme of the key: pure ML-DSA
//! and Ed25519, ECDSA with the curve's hash, RSA-PSS with SHA-256, through `EVP_DigestSign` /
//! `EVP_DigestVerify` as libssl calls them, a context per operation as libssl makes one per
//! handshake.

use anyhow::{bail, Result};
use boring::ec::{EcGroup, EcKey};
use boring::hash::MessageDigest;
use boring::nid::Nid;
use boring::pkey::{Id, PKey, Private};
use boring::rsa::{Padding, Rsa};
use boring::sign::{RsaPssSaltlen, Signer, Verifier};
use chainlab_record::primitives::{self, SignatureArgs, Signing};

use crate::capabilities::{self, SIGNATURES};
use crate::keys::{ml_dsa_from_seed, SEED_BYTES};
use crate::primitives_kex as kex;

pub fn run(args: &SignatureArgs) -> Result<()> {
    capabilities::check_signature_impl(args.signature_impl)?;
    if let Some(group) = kex::Group::named(&args.subject) {
        return primitives::run_key_exchange(args, &group);
    }
    primitives::run(args, &Boring(key(&args.subject)?))
}

/// A BoringSSL key, signing and verifying through EVP as libssl does.
struct Boring(PKey<Private>);

impl Signing for Boring {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        sign(&self.0, message)
    }
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<bool> {
        verify(&self.0, message, signature)
    }
}

/// A fresh key of `subject`'s algorithm (a `pki --chain` name this stack signs with).
fn key(subject: &str) -> Result<PKey<Private>> {
    if !SIGNATURES.iter().any(|s| s.algorithm == subject) {
        bail!(
            "--subject {subject:?}: not a signature algorithm or group of the boringssl stack; allowed: {}, {}",
            SIGNATURES
                .iter()
                .map(|s| s.algorithm)
                .collect::<Vec<_>>()
                .join(", "),
            kex::Group::names().join(", ")
        );
    }
    Ok(match subject {
        "ML-DSA-44" | "ML-DSA-65" | "ML-DSA-87" => {
            let mut seed = [0u8; SEED_BYTES];
            boring::rand::rand_bytes(&mut seed)?;
            ml_dsa_from_seed(subject[7..].parse()?, &seed)?
        }
        "ECDSA-P256" => ec(Nid::X9_62_PRIME256V1)?,
        "ECDSA-P384" => ec(Nid::SECP384R1)?,
        "Ed25519" => PKey::generate(Id::ED25519)?,
        "RSA-2048" => PKey::from_rsa(Rsa::generate(2048)?)?,
        "RSA-3072" => PKey::from_rsa(Rsa::generate(3072)?)?,
        other => bail!("--subject {other:?}: no key generation for it here"),
    })
}

fn ec(curve: Nid) -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(curve)?;
    Ok(PKey::from_ec_key(EcKey::generate(&group)?)?)
}

/// The digest of the key's TLS 1.3 scheme (None: a pure scheme, ML-DSA or Ed25519).
fn digest(key: &PKey<Private>) -> Result<Option<MessageDigest>> {
    Ok(match key.id() {
        Id::EC => match key.ec_key()?.group().curve_name() {
            Some(Nid::SECP384R1) => Some(MessageDigest::sha384()),
            _ => Some(MessageDigest::sha256()),
        },
        Id::RSA => Some(MessageDigest::sha256()),
        _ => None,
    })
}

fn sign(key: &PKey<Private>, message: &[u8]) -> Result<Vec<u8>> {
    let mut signer = match digest(key)? {
        Some(md) => Signer::new(md, key)?,
        None => Signer::new_without_digest(key)?,
    };
    if key.id() == Id::RSA {
        signer.set_rsa_padding(Padding::PKCS1_PSS)?;
        signer.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(signer.sign_oneshot_to_vec(message)?)
}

fn verify(key: &PKey<Private>, message: &[u8], signature: &[u8]) -> Result<bool> {
    let mut verifier = match digest(key)? {
        Some(md) => Verifier::new(md, key)?,
        None => Verifier::new_without_digest(key)?,
    };
    if key.id() == Id::RSA {
        verifier.set_rsa_padding(Padding::PKCS1_PSS)?;
        verifier.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(verifier.verify_oneshot(signature, message)?)
}
