//! `primitives`: time one signature operation of a TLS 1.3 handshake in-process
//! (`chainlab_record::primitives`: the OpenSSL engine's flags and records), through the
//! implementation this stack signs and verifies it with: aws-lc (`aws-lc-rs`, the code rustls
//! and rustls-post-quantum call, with the TLS 1.3 scheme rustls uses for each key) by default,
//! or liboqs (`chainlab-oqs`, `--signature-impl liboqs`, ML-DSA), so their figures stand beside
//! OpenSSL's, BoringSSL's and Go's.

use anyhow::{anyhow, bail, Result};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{
    EcdsaKeyPair, EcdsaSigningAlgorithm, Ed25519KeyPair, KeyPair as _, PqdsaKeyPair,
    PqdsaSigningAlgorithm, PqdsaVerificationAlgorithm, RsaKeyPair, UnparsedPublicKey,
    VerificationAlgorithm, ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING,
    ECDSA_P384_SHA384_ASN1, ECDSA_P384_SHA384_ASN1_SIGNING, ED25519, ML_DSA_44, ML_DSA_44_SIGNING,
    ML_DSA_65, ML_DSA_65_SIGNING, ML_DSA_87, ML_DSA_87_SIGNING, RSA_PSS_2048_8192_SHA256,
    RSA_PSS_SHA256,
};
use chainlab_record::args::SignatureImpl;
use chainlab_record::primitives::{self, SignatureArgs, Signing};

use crate::primitives_kex as kex;

/// ML-DSA, which both implementations have.
const ML_DSA: [&str; 3] = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"];
/// aws-lc's classical algorithms, as rustls signs them in TLS 1.3 (ecdsa_secp256r1_sha256,
/// ecdsa_secp384r1_sha384, ed25519, rsa_pss_rsae_sha256).
const CLASSICAL: [&str; 5] = [
    "ECDSA-P256",
    "ECDSA-P384",
    "Ed25519",
    "RSA-2048",
    "RSA-3072",
];

pub fn run(args: &SignatureArgs) -> Result<()> {
    let subject = args.subject.as_str();
    if let Some(group) = kex::Group::named(subject) {
        if args.signature_impl != SignatureImpl::Stack {
            bail!("--signature-impl liboqs: a key-exchange group is aws-lc's only");
        }
        return primitives::run_key_exchange(args, &group);
    }
    match args.signature_impl {
        SignatureImpl::Stack if ML_DSA.contains(&subject) => {
            primitives::run(args, &AwsLc::generate(subject)?)
        }
        SignatureImpl::Stack if CLASSICAL.contains(&subject) => {
            primitives::run(args, &Classical::generate(subject)?)
        }
        SignatureImpl::Liboqs if ML_DSA.contains(&subject) => {
            primitives::run(args, &Liboqs::generate(subject)?)
        }
        SignatureImpl::Stack => bail!(
            "--subject {subject:?}: the rustls engine times aws-lc's algorithms only; allowed: {}, {}",
            [&ML_DSA[..], &CLASSICAL[..]].concat().join(", "),
            kex::Group::names().join(", ")
        ),
        SignatureImpl::Liboqs => bail!(
            "--subject {subject:?}: --signature-impl liboqs times ML-DSA only; allowed: {}",
            ML_DSA.join(", ")
        ),
    }
}

/// An aws-lc classical key pair and the verification algorithm of its TLS 1.3 scheme.
enum Classical {
    Ecdsa(EcdsaKeyPair, &'static dyn VerificationAlgorithm),
    Ed25519(Ed25519KeyPair),
    Rsa(RsaKeyPair),
}

impl Classical {
    fn generate(subject: &str) -> Result<Classical> {
        let ecdsa = |signing: &'static EcdsaSigningAlgorithm, verify| {
            EcdsaKeyPair::generate(signing)
                .map(|pair| Classical::Ecdsa(pair, verify))
                .map_err(|_| anyhow!("aws-lc ECDSA keygen failed"))
        };
        let rsa = |size| {
            RsaKeyPair::generate(size)
                .map(Classical::Rsa)
                .map_err(|_| anyhow!("aws-lc RSA keygen failed"))
        };
        match subject {
            "ECDSA-P256" => ecdsa(&ECDSA_P256_SHA256_ASN1_SIGNING, &ECDSA_P256_SHA256_ASN1),
            "ECDSA-P384" => ecdsa(&ECDSA_P384_SHA384_ASN1_SIGNING, &ECDSA_P384_SHA384_ASN1),
            "Ed25519" => Ed25519KeyPair::generate()
                .map(Classical::Ed25519)
                .map_err(|_| anyhow!("aws-lc Ed25519 keygen failed")),
            "RSA-2048" => rsa(KeySize::Rsa2048),
            "RSA-3072" => rsa(KeySize::Rsa3072),
            other => bail!("--subject {other:?}: not one of aws-lc's classical algorithms"),
        }
    }
}

impl Signing for Classical {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        let rng = SystemRandom::new();
        match self {
            Classical::Ecdsa(pair, _) => pair
                .sign(&rng, message)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| anyhow!("aws-lc ECDSA signing failed")),
            Classical::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
            Classical::Rsa(pair) => {
                let mut out = vec![0u8; pair.public_modulus_len()];
                pair.sign(&RSA_PSS_SHA256, &rng, message, &mut out)
                    .map_err(|_| anyhow!("aws-lc RSA signing failed"))?;
                Ok(out)
            }
        }
    }
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<bool> {
        let ok = match self {
            Classical::Ecdsa(pair, alg) => UnparsedPublicKey::new(*alg, pair.public_key().as_ref())
                .verify(message, signature)
                .is_ok(),
            Classical::Ed25519(pair) => {
                UnparsedPublicKey::new(&ED25519, pair.public_key().as_ref())
                    .verify(message, signature)
                    .is_ok()
            }
            Classical::Rsa(pair) => {
                UnparsedPublicKey::new(&RSA_PSS_2048_8192_SHA256, pair.public_key().as_ref())
                    .verify(message, signature)
                    .is_ok()
            }
        };
        Ok(ok)
    }
}

/// An aws-lc ML-DSA key pair.
struct AwsLc {
    pair: PqdsaKeyPair,
    verification: &'static PqdsaVerificationAlgorithm,
    signature_len: usize,
}

impl AwsLc {
    fn generate(subject: &str) -> Result<AwsLc> {
        let (signing, verification): (&'static PqdsaSigningAlgorithm, _) = match subject {
            "ML-DSA-44" => (&ML_DSA_44_SIGNING, &ML_DSA_44),
            "ML-DSA-65" => (&ML_DSA_65_SIGNING, &ML_DSA_65),
            _ => (&ML_DSA_87_SIGNING, &ML_DSA_87),
        };
        let pair = PqdsaKeyPair::generate(signing).map_err(|_| anyhow!("aws-lc keygen failed"))?;
        Ok(AwsLc {
            pair,
            verification,
            signature_len: signing.signature_len(),
        })
    }
}

impl Signing for AwsLc {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.signature_len];
        let n = self
            .pair
            .sign(message, &mut out)
            .map_err(|_| anyhow!("aws-lc signing failed"))?;
        out.truncate(n);
        Ok(out)
    }
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<bool> {
        let key = UnparsedPublicKey::new(self.verification, self.pair.public_key().as_ref());
        Ok(key.verify(message, signature).is_ok())
    }
}

/// A liboqs ML-DSA key (the one `--signature-impl liboqs` signs handshakes with).
struct Liboqs(chainlab_oqs::keys::Key);

impl Liboqs {
    fn generate(subject: &str) -> Result<Liboqs> {
        let algorithm = chainlab_oqs::algorithms::lookup(subject)?;
        let mut seed = [0u8; 32];
        aws_lc_rs::rand::fill(&mut seed).map_err(|_| anyhow!("no random bytes"))?;
        Ok(Liboqs(chainlab_oqs::keys::generate(algorithm, &seed)?))
    }
}

impl Signing for Liboqs {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        self.0.sign(message)
    }
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<bool> {
        Ok(chainlab_oqs::keys::verify(
            self.0.algorithm,
            &self.0.public,
            message,
            signature,
        ))
    }
}
