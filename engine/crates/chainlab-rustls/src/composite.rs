//! Composite ML-DSA inside rustls (draft-ietf-lamps-pq-composite-sigs): aws-lc's components
//! behind `chainlab_composite::Components`, a composite leaf's key signing CertificateVerify
//! with the composite scheme, and a webpki verification algorithm per composite OID, so a
//! composite signature anywhere in the chain is checked (both components). The code points
//! are private-use values (`chainlab_composite::algorithms`, docs/stacks.md) until IANA
//! assigns them; CertificateVerify's signing input is M with an empty context.
//!
//! ML-DSA comes through aws-lc-sys directly: aws-lc-rs signs without a context, and the
//! composite's ML-DSA component signs with its label as one (the draft's "mldsa-ctx").

use std::ptr;
use std::sync::{Arc, LazyLock};

use anyhow::{anyhow, bail, Result};
use aws_lc_rs::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_ASN1,
    ECDSA_P256_SHA256_ASN1_SIGNING, ECDSA_P384_SHA384_ASN1, ECDSA_P384_SHA384_ASN1_SIGNING,
    ED25519,
};
use aws_lc_sys as sys;
use chainlab_composite::{
    encoding, Components, CompositeAlgorithm, CompositeKey, MlDsa, MlDsaSigner, TradSigner,
    Traditional,
};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{PrivateKeyDer, SignatureVerificationAlgorithm};
use rustls::sign::{Signer, SigningKey};
use rustls::{SignatureAlgorithm, SignatureScheme};

use crate::oid_verifier::{self, OidVerifier};

/// aws-lc's component operations.
pub struct AwsLc;

/// The TLS scheme of a composite algorithm (private use: the module's note).
pub fn scheme(algorithm: &CompositeAlgorithm) -> SignatureScheme {
    SignatureScheme::from(algorithm.code_point)
}

fn nid(level: MlDsa) -> i32 {
    match level {
        MlDsa::Ml44 => sys::NID_MLDSA44,
        MlDsa::Ml65 => sys::NID_MLDSA65,
        MlDsa::Ml87 => sys::NID_MLDSA87,
    }
}

/// An owned EVP_PKEY (freed on drop).
struct Pkey(*mut sys::EVP_PKEY);

// SAFETY: an EVP_PKEY is reference-counted and safe to use from several threads for signing
// and verifying (aws-lc's own key pairs are Send + Sync over the same pointer).
unsafe impl Send for Pkey {}
unsafe impl Sync for Pkey {}

impl Drop for Pkey {
    fn drop(&mut self) {
        // SAFETY: the key this value owns, freed once.
        unsafe { sys::EVP_PKEY_free(self.0) };
    }
}

impl Pkey {
    fn new(raw: *mut sys::EVP_PKEY, what: &str) -> Result<Pkey> {
        if raw.is_null() {
            bail!("aws-lc could not read {what}");
        }
        Ok(Pkey(raw))
    }

    /// EVP_DigestSign / EVP_DigestVerify with no digest (ML-DSA signs the message itself)
    /// and `context` as ML-DSA's context string.
    fn run(&self, context: &[u8], message: &[u8], verify: Option<&[u8]>) -> Result<Vec<u8>> {
        // SAFETY: a fresh MD context freed at the end; `self.0` is a live key; every buffer
        // outlives the calls that read or write it, and the signature buffer is sized by
        // aws-lc's first call.
        unsafe {
            let ctx = sys::EVP_MD_CTX_new();
            if ctx.is_null() {
                bail!("EVP_MD_CTX_new");
            }
            let mut pctx = ptr::null_mut();
            let result = (|| {
                let init = match verify {
                    None => sys::EVP_DigestSignInit(
                        ctx,
                        &mut pctx,
                        ptr::null(),
                        ptr::null_mut(),
                        self.0,
                    ),
                    Some(_) => sys::EVP_DigestVerifyInit(
                        ctx,
                        &mut pctx,
                        ptr::null(),
                        ptr::null_mut(),
                        self.0,
                    ),
                };
                if init != 1
                    || sys::EVP_PKEY_CTX_set_signature_context(
                        pctx,
                        context.as_ptr(),
                        context.len(),
                    ) != 1
                {
                    bail!("aws-lc: setting up ML-DSA with a context");
                }
                match verify {
                    Some(signature) => {
                        let ok = sys::EVP_DigestVerify(
                            ctx,
                            signature.as_ptr(),
                            signature.len(),
                            message.as_ptr(),
                            message.len(),
                        );
                        Ok(if ok == 1 { vec![1] } else { Vec::new() })
                    }
                    None => {
                        let mut len = 0usize;
                        if sys::EVP_DigestSign(
                            ctx,
                            ptr::null_mut(),
                            &mut len,
                            message.as_ptr(),
                            message.len(),
                        ) != 1
                        {
                            bail!("aws-lc: ML-DSA signature length");
                        }
                        let mut out = vec![0u8; len];
                        if sys::EVP_DigestSign(
                            ctx,
                            out.as_mut_ptr(),
                            &mut len,
                            message.as_ptr(),
                            message.len(),
                        ) != 1
                        {
                            bail!("aws-lc: ML-DSA signing");
                        }
                        out.truncate(len);
                        Ok(out)
                    }
                }
            })();
            sys::EVP_MD_CTX_free(ctx);
            result
        }
    }
}

struct MlDsaKey(Pkey);

impl MlDsaSigner for MlDsaKey {
    fn sign(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>> {
        self.0.run(context, message, None)
    }
}

enum TradKey {
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

impl TradSigner for TradKey {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        match self {
            TradKey::Ecdsa(key) => {
                let rng = aws_lc_rs::rand::SystemRandom::new();
                Ok(key
                    .sign(&rng, message)
                    .map_err(|_| anyhow!("aws-lc: ECDSA signing"))?
                    .as_ref()
                    .to_vec())
            }
            TradKey::Ed25519(key) => Ok(key.sign(message).as_ref().to_vec()),
        }
    }
}

impl Components for AwsLc {
    fn mldsa_key(&self, level: MlDsa, seed: &[u8; 32]) -> Result<(Box<dyn MlDsaSigner>, Vec<u8>)> {
        // SAFETY: aws-lc copies the seed into a new key (FIPS 204 KeyGen_internal(seed)).
        let key = Pkey::new(
            unsafe {
                sys::EVP_PKEY_pqdsa_new_raw_private_key(nid(level), seed.as_ptr(), seed.len())
            },
            "an ML-DSA seed",
        )?;
        let mut len = level.public_key_len();
        let mut public = vec![0u8; len];
        // SAFETY: `public` has `len` bytes; aws-lc writes at most that many and sets `len`.
        if unsafe { sys::EVP_PKEY_get_raw_public_key(key.0, public.as_mut_ptr(), &mut len) } != 1 {
            bail!("aws-lc: the {} public key", level.name());
        }
        public.truncate(len);
        Ok((Box::new(MlDsaKey(key)), public))
    }

    fn trad_key(
        &self,
        trad: Traditional,
        private: &[u8],
    ) -> Result<(Box<dyn TradSigner>, Vec<u8>)> {
        let key = match trad {
            Traditional::EcdsaP256Sha256 | Traditional::EcdsaP384Sha384 => {
                let (alg, curve) = match trad {
                    Traditional::EcdsaP256Sha256 => {
                        (&ECDSA_P256_SHA256_ASN1_SIGNING, "1.2.840.10045.3.1.7")
                    }
                    _ => (&ECDSA_P384_SHA384_ASN1_SIGNING, "1.3.132.0.34"),
                };
                // RFC 5915 ECPrivateKey { 1, d, [0] namedCurve }: aws-lc computes d·G.
                let der = chainlab_mtc::der::sequence(&[
                    &chainlab_mtc::der::integer(1),
                    &chainlab_mtc::der::tlv(chainlab_mtc::der::OCTET_STRING, private),
                    &chainlab_mtc::der::tlv(0xa0, &chainlab_mtc::der::oid(curve)?),
                ]);
                TradKey::Ecdsa(
                    EcdsaKeyPair::from_private_key_der(alg, &der)
                        .map_err(|e| anyhow!("aws-lc: an {} private key: {e}", trad.name()))?,
                )
            }
            Traditional::Ed25519 => TradKey::Ed25519(
                Ed25519KeyPair::from_seed_unchecked(private)
                    .map_err(|e| anyhow!("aws-lc: an Ed25519 private key: {e}"))?,
            ),
        };
        let public = match &key {
            TradKey::Ecdsa(k) => k.public_key().as_ref().to_vec(),
            TradKey::Ed25519(k) => k.public_key().as_ref().to_vec(),
        };
        Ok((Box::new(key), public))
    }

    fn mldsa_verify(
        &self,
        level: MlDsa,
        public: &[u8],
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> bool {
        // SAFETY: aws-lc copies the public key into a new key.
        let key = Pkey::new(
            unsafe {
                sys::EVP_PKEY_pqdsa_new_raw_public_key(nid(level), public.as_ptr(), public.len())
            },
            "an ML-DSA public key",
        );
        key.and_then(|k| k.run(context, message, Some(signature)))
            .is_ok_and(|ok| !ok.is_empty())
    }

    fn trad_verify(&self, trad: Traditional, public: &[u8], message: &[u8], sig: &[u8]) -> bool {
        let alg: &dyn aws_lc_rs::signature::VerificationAlgorithm = match trad {
            Traditional::EcdsaP256Sha256 => &ECDSA_P256_SHA256_ASN1,
            Traditional::EcdsaP384Sha384 => &ECDSA_P384_SHA384_ASN1,
            Traditional::Ed25519 => &ED25519,
        };
        UnparsedPublicKey::new(alg, public)
            .verify(message, sig)
            .is_ok()
    }
}

/// One composite algorithm as webpki sees it (its OID as key and signature identifier),
/// verified through aws-lc's components with an empty context.
type Verify = OidVerifier<CompositeAlgorithm>;

static VERIFIERS: LazyLock<Vec<&'static Verify>> = LazyLock::new(|| {
    oid_verifier::leaked(
        chainlab_composite::ALGORITHMS,
        encoding::algorithm_oid,
        |a, public, message, signature| {
            chainlab_composite::verify(&AwsLc, a, public, message, b"", signature)
        },
    )
});

/// `algorithms` with every composite algorithm's verifier added (its own scheme, its OID).
pub fn with_composite(algorithms: WebPkiSupportedAlgorithms) -> WebPkiSupportedAlgorithms {
    let all: Vec<&'static dyn SignatureVerificationAlgorithm> = algorithms
        .all
        .iter()
        .copied()
        .chain(
            VERIFIERS
                .iter()
                .map(|v| *v as &'static dyn SignatureVerificationAlgorithm),
        )
        .collect();
    let mut mapping = algorithms.mapping.to_vec();
    for v in VERIFIERS.iter() {
        let one: &'static [&'static dyn SignatureVerificationAlgorithm] =
            Box::leak(Box::new(
                [*v as &'static dyn SignatureVerificationAlgorithm],
            ));
        mapping.push((scheme(v.algorithm), one));
    }
    WebPkiSupportedAlgorithms {
        all: Box::leak(all.into_boxed_slice()),
        mapping: Box::leak(mapping.into_boxed_slice()),
    }
}

#[derive(Debug)]
struct Key(Arc<CompositeKey>);

impl SigningKey for Key {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        offered
            .contains(&scheme(self.0.algorithm))
            .then(|| Box::new(Sign(self.0.clone())) as Box<dyn Signer>)
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        // TLS 1.2's enumeration has no such algorithm (as liboqs' keys answer).
        SignatureAlgorithm::Unknown(255)
    }
}

#[derive(Debug)]
struct Sign(Arc<CompositeKey>);

impl Signer for Sign {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        self.0
            .sign(message, b"")
            .map_err(|e| rustls::Error::General(format!("{e:#}")))
    }

    fn scheme(&self) -> SignatureScheme {
        scheme(self.0.algorithm)
    }
}

/// The key of a PKCS#8 file when it is a composite one; `None` leaves it to the others.
pub fn signing_key(der: &PrivateKeyDer<'_>) -> Result<Option<Arc<dyn SigningKey>>> {
    let PrivateKeyDer::Pkcs8(pkcs8) = der else {
        return Ok(None);
    };
    let key = CompositeKey::from_pkcs8(&AwsLc, pkcs8.secret_pkcs8_der())
        .map_err(|e| anyhow!("a composite private key: {e:#}"))?;
    Ok(key.map(|k| Arc::new(Key(Arc::new(k))) as Arc<dyn SigningKey>))
}
