//! `primitives`: time one signature operation of a TLS 1.3 handshake in-process through
//! BoringSSL, with the OpenSSL engine's flags and records (`chainlab-engine primitives`), so a
//! sign or verify figure of BoringSSL stands beside OpenSSL's for the same algorithm.
//!
//! The message is the CertificateVerify content (RFC 8446, 4.4.3: 64 spaces, the server's
//! context string, a zero byte, a 32-byte transcript hash; 130 bytes), signed with the TLS
//! 1.3 scheme of the key: pure ML-DSA and Ed25519, ECDSA with the curve's hash, RSA-PSS with
//! SHA-256, through `EVP_DigestSign` / `EVP_DigestVerify` as libssl calls them, a context per
//! operation as libssl makes one per handshake. The key (and, for verify, the signature) is
//! made before the first timed operation. The engine never summarizes.

use std::io::Write as _;
use std::time::Instant;

use anyhow::{bail, Result};
use boring::ec::{EcGroup, EcKey};
use boring::hash::MessageDigest;
use boring::nid::Nid;
use boring::pkey::{Id, PKey, Private};
use boring::rsa::{Padding, Rsa};
use boring::sign::{RsaPssSaltlen, Signer, Verifier};
use chainlab_record::cpu::ThreadCpu;
use serde::Serialize;

use crate::capabilities::SIGNATURES;
use crate::cli::PrimitivesArgs;
use crate::keys::{ml_dsa_from_seed, SEED_BYTES};

/// The CertificateVerify content's parts (RFC 8446, 4.4.3).
const CV_PAD: usize = 64;
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
const TRANSCRIPT_HASH_BYTES: usize = 32;

/// One timed operation, as `chainlab-engine primitives` writes it.
#[derive(Serialize)]
struct Sample<'a> {
    event: &'static str,
    subject: &'a str,
    op: &'a str,
    message_bytes: Option<usize>,
    warmup: bool,
    seq: u64,
    /// Monotonic wall time of the operation.
    wall_ns: u64,
    /// The thread's CPU over it.
    cpu_ns: u64,
}

pub fn run(args: &PrimitivesArgs) -> Result<()> {
    if args.count == 0 {
        bail!("--count 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        chainlab_record::cpu::pin(cpus)?;
    }
    let key = key(&args.subject)?;
    let message = cv_message();
    let signature = sign(&key, &message)?;
    if !verify(&key, &message, &signature)? {
        bail!(
            "{}: BoringSSL did not verify its own signature",
            args.subject
        );
    }
    let mut out = std::io::stdout().lock();
    for seq in 0..args.warmup + args.count {
        let cpu_start = ThreadCpu::now();
        let start = Instant::now();
        if args.op == "sign" {
            std::hint::black_box(sign(&key, &message)?);
        } else if !verify(&key, &message, &signature)? {
            bail!("{}: a signature did not verify", args.subject);
        }
        let sample = Sample {
            event: "primitive",
            subject: &args.subject,
            op: &args.op,
            message_bytes: Some(message.len()),
            warmup: seq < args.warmup,
            seq,
            wall_ns: start.elapsed().as_nanos() as u64,
            cpu_ns: ThreadCpu::now().since(cpu_start).total_ns,
        };
        serde_json::to_writer(&mut out, &sample)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// A fresh key of `subject`'s algorithm (a `pki --chain` name this stack signs with).
fn key(subject: &str) -> Result<PKey<Private>> {
    if !SIGNATURES.iter().any(|s| s.algorithm == subject) {
        bail!(
            "--subject {subject:?}: not a signature algorithm of the boringssl stack; allowed: {}",
            SIGNATURES
                .iter()
                .map(|s| s.algorithm)
                .collect::<Vec<_>>()
                .join(", ")
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

/// The CertificateVerify content with an arbitrary transcript hash.
fn cv_message() -> Vec<u8> {
    let mut m = vec![0x20; CV_PAD];
    m.extend_from_slice(CV_CONTEXT);
    m.push(0);
    m.extend_from_slice(&[0xab; TRANSCRIPT_HASH_BYTES]);
    m
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
