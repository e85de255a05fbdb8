//! `primitives`: time one ML-DSA signature operation of a TLS 1.3 handshake in-process
//! (`chainlab_record::primitives`: the OpenSSL engine's flags and records), through the
//! implementation this stack signs and verifies it with: aws-lc (`aws-lc-rs`, the code
//! rustls-post-quantum calls) by default, or liboqs (`chainlab-oqs`, `--signature-impl
//! liboqs`), so their figures stand beside OpenSSL's and BoringSSL's.

use anyhow::{anyhow, bail, Result};
use aws_lc_rs::signature::{
    KeyPair as _, PqdsaKeyPair, PqdsaSigningAlgorithm, PqdsaVerificationAlgorithm,
    UnparsedPublicKey, ML_DSA_44, ML_DSA_44_SIGNING, ML_DSA_65, ML_DSA_65_SIGNING, ML_DSA_87,
    ML_DSA_87_SIGNING,
};
use chainlab_record::args::SignatureImpl;
use chainlab_record::primitives::{self, SignatureArgs, Signing};

/// The algorithms timed here: ML-DSA, which both implementations have.
const ALGORITHMS: [&str; 3] = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"];

pub fn run(args: &SignatureArgs) -> Result<()> {
    if !ALGORITHMS.contains(&args.subject.as_str()) {
        bail!(
            "--subject {:?}: the rustls engine times ML-DSA only; allowed: {}",
            args.subject,
            ALGORITHMS.join(", ")
        );
    }
    match args.signature_impl {
        SignatureImpl::Stack => primitives::run(args, &AwsLc::generate(&args.subject)?),
        SignatureImpl::Liboqs => primitives::run(args, &Liboqs::generate(&args.subject)?),
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
