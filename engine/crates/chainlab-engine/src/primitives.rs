//! `primitives`: time one cryptographic operation of a TLS 1.3 handshake, in-process, through
//! the OpenSSL this engine links: one JSON line per operation (wall and thread CPU time).
//!
//! The operations are those a handshake performs (docs/methods/cost-model.md#cost-model):
//! - `sign` / `verify` with a signature algorithm, on the CertificateVerify content
//!   (`--message cv`: 64 spaces, the context string, a zero byte and a SHA-256 transcript
//!   hash, 130 bytes, with the TLS 1.3 scheme: RSA-PSS, ECDSA with the curve's hash, pure
//!   ML-DSA / SLH-DSA / Ed25519) or on a TBSCertificate-sized message (`--message cert`,
//!   `--message-bytes`, with the certificate's scheme: RSA PKCS#1 v1.5, as `pki` signs);
//! - `keygen`, `encaps`, `decaps` (ML-KEM and the hybrids, which OpenSSL runs as KEMs) or
//!   `keygen`, `derive` (ECDHE, X25519/X448, FFDHE) with a key-exchange group;
//! - `decompress` of an RFC 8879 compressed Certificate message (`--message-bytes` of
//!   certificate DER, compressed once beforehand) with zlib, brotli or zstd;
//! - `mtc-verify` of a landmark-relative Merkle Tree Certificate whose key is `--subject`'s,
//!   with a proof of `--message-bytes` hashes (the certificate made once beforehand);
//! - `prehash`: a composite ML-DSA signature's M' (`--subject` SHA256 or SHA512 of the
//!   `--message`), what a composite operation adds to its components' (the cost model prices
//!   a composite as its parts plus this).
//!
//! Each timed operation includes its context set-up (an EVP context per operation, as libssl
//! makes one per handshake) and, on the server's `encaps` and either side's `derive`, decoding
//! the peer's key share into a key as libssl does (for ML-KEM that expands the public matrix:
//! 19 us of X25519MLKEM768's 118 us here, which a server pays in every such handshake and the
//! primitive had left out); keys, peer key shares, ciphertexts and compressed input are made
//! once, before the first timed operation. The engine never summarizes: the runner decides how many
//! operations it needs (adaptive sampling) and computes their statistics.

use std::io::Write as _;

use anyhow::{anyhow, bail, Context, Result};
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Padding;
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};

use chainlab_record::primitives;

use crate::algorithms::{self, Algorithm, Family};
use crate::cli::{MessageKind, PrimitiveOp, PrimitivesArgs};
use crate::cpu;
use crate::ossl;
use crate::pki::{self, keys};

mod kex;

/// The CertificateVerify content a TLS 1.3 server signs (RFC 8446, 4.4.3): 64 spaces, the
/// context string, a zero byte, the transcript hash (32 bytes with the SHA-256 suites that
/// every chainlab handshake negotiates).
const CV_PAD: usize = 64;
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
const TRANSCRIPT_HASH_BYTES: usize = 32;
pub const CV_MESSAGE_BYTES: usize = CV_PAD + CV_CONTEXT.len() + 1 + TRANSCRIPT_HASH_BYTES;

const COMPRESSIONS: &[&str] = &["zlib", "brotli", "zstd"];

pub fn run(args: &PrimitivesArgs) -> Result<()> {
    if args.count == 0 {
        bail!("--count 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        cpu::pin(cpus)?;
    }
    let mut operation = prepare(args)?;
    let subject = args.subject.as_str();
    let message_bytes = match args.op {
        PrimitiveOp::Sign | PrimitiveOp::Verify | PrimitiveOp::Prehash => {
            Some(match args.message {
                MessageKind::Cv => CV_MESSAGE_BYTES,
                MessageKind::Cert => args.message_bytes,
            })
        }
        PrimitiveOp::Decompress | PrimitiveOp::MtcVerify => Some(args.message_bytes),
        _ => None,
    };
    let record = primitives::Operation {
        subject,
        op: args.op.name(),
        message_bytes,
        warmup: args.warmup,
    };
    let mut out = std::io::stdout().lock();
    for seq in 0..args.warmup + args.count {
        // One operation per counted span: callgrind counts each apart (cpu::counted_span).
        record.time(&mut out, seq, || cpu::counted_span(&mut operation))?;
    }
    out.flush()?;
    Ok(())
}

/// The operation to time, with everything it needs made beforehand.
type Operation = Box<dyn FnMut() -> Result<()>>;

fn prepare(args: &PrimitivesArgs) -> Result<Operation> {
    match args.op {
        PrimitiveOp::Sign | PrimitiveOp::Verify => signature_op(args),
        PrimitiveOp::Keygen | PrimitiveOp::Encaps | PrimitiveOp::Decaps | PrimitiveOp::Derive => {
            kex::group_op(args)
        }
        PrimitiveOp::Decompress => decompress_op(args),
        PrimitiveOp::MtcVerify => {
            let leaf = algorithms::lookup(&args.subject)
                .context("--subject: mtc-verify's subject is the leaf key's algorithm")?;
            pki::mtc::verify_operation(leaf, args.message_bytes)
        }
        PrimitiveOp::Prehash => prehash_op(args),
    }
}

/// M' of a composite algorithm whose pre-hash is `--subject` (SHA256 or SHA512).
fn prehash_op(args: &PrimitivesArgs) -> Result<Operation> {
    let algorithm = chainlab_composite::ALGORITHMS
        .iter()
        .find(|a| format!("{:?}", a.prehash).eq_ignore_ascii_case(&args.subject))
        .ok_or_else(|| {
            anyhow!(
                "--subject {}: prehash's subject is a composite pre-hash; allowed: SHA256, SHA512",
                args.subject
            )
        })?;
    let message = message(args)?;
    Ok(Box::new(move || {
        chainlab_composite::message::representative(algorithm, &message, b"").map(drop)
    }))
}

// -- signatures ----------------------------------------------------------------------------

/// How a message is signed: the digest (None: the algorithm hashes internally) and whether
/// RSA uses PSS (TLS 1.3 CertificateVerify) or PKCS#1 v1.5 (the certificates `pki` issues).
struct Scheme {
    digest: Option<MessageDigest>,
    pss: bool,
}

fn scheme(algorithm: &Algorithm, message: MessageKind) -> Result<Scheme> {
    let kind = keys::KeyKind::of(algorithm)?;
    Ok(match (algorithm.family, message) {
        (Family::Rsa, MessageKind::Cv) => Scheme {
            digest: Some(MessageDigest::sha256()),
            pss: true,
        },
        _ => Scheme {
            digest: kind
                .digest()
                .map(|name| {
                    MessageDigest::from_name(name.to_str().unwrap_or_default())
                        .ok_or_else(|| anyhow!("digest {name:?} not in this OpenSSL"))
                })
                .transpose()?,
            pss: false,
        },
    })
}

fn signature_op(args: &PrimitivesArgs) -> Result<Operation> {
    let algorithm = algorithms::lookup(&args.subject).with_context(|| {
        format!(
            "--subject: {} is a signature operation; the subject must be a signature algorithm",
            args.op.name()
        )
    })?;
    let message = message(args)?;
    let derivation = keys::Derivation::new("primitives", pki::Role::Leaf, algorithm);
    if let Some(oqs) = algorithms::liboqs(algorithm) {
        return liboqs_op(args.op, oqs, &derivation, message);
    }
    let key = keys::generate(algorithm, &derivation)
        .with_context(|| format!("generating a {} key", algorithm.name))?;
    let scheme = scheme(algorithm, args.message)?;
    let signature = sign(&key, &scheme, &message)?;
    Ok(match args.op {
        PrimitiveOp::Sign => Box::new(move || sign(&key, &scheme, &message).map(drop)),
        _ => Box::new(move || {
            if verify(&key, &scheme, &message, &signature)? {
                Ok(())
            } else {
                bail!("the signature made beforehand did not verify")
            }
        }),
    })
}

/// The message a signature operation signs: the CertificateVerify content, or a
/// TBSCertificate-sized message of `--message-bytes`.
fn message(args: &PrimitivesArgs) -> Result<Vec<u8>> {
    Ok(match args.message {
        MessageKind::Cv => {
            let mut m = vec![b' '; CV_PAD];
            m.extend_from_slice(CV_CONTEXT);
            m.push(0);
            m.extend((0..TRANSCRIPT_HASH_BYTES).map(|i| i as u8));
            m
        }
        MessageKind::Cert => {
            if args.message_bytes == 0 {
                bail!("--message-bytes 0: a certificate message needs at least 1 byte");
            }
            (0..args.message_bytes)
                .map(|i| (i * 31 % 251) as u8)
                .collect()
        }
    })
}

/// A liboqs algorithm's operation (Falcon, MAYO, UOV, CROSS): the message as is (these
/// sign it whole, certificate and CertificateVerify alike), random bytes from the system as
/// in a handshake.
fn liboqs_op(
    op: PrimitiveOp,
    algorithm: &'static chainlab_oqs::OqsAlgorithm,
    derivation: &keys::Derivation,
    message: Vec<u8>,
) -> Result<Operation> {
    let key = chainlab_oqs::keys::generate(algorithm, &derivation.bytes("key", 64)?)?;
    let signature = key.sign(&message)?;
    Ok(match op {
        PrimitiveOp::Sign => Box::new(move || key.sign(&message).map(drop)),
        _ => Box::new(move || {
            if chainlab_oqs::keys::verify(algorithm, &key.public, &message, &signature) {
                Ok(())
            } else {
                bail!("the signature made beforehand did not verify")
            }
        }),
    })
}

fn sign(key: &PKey<Private>, scheme: &Scheme, message: &[u8]) -> Result<Vec<u8>> {
    let mut signer = match scheme.digest {
        Some(md) => Signer::new(md, key)?,
        None => Signer::new_without_digest(key)?,
    };
    if scheme.pss {
        signer.set_rsa_padding(Padding::PKCS1_PSS)?;
        signer.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(signer.sign_oneshot_to_vec(message)?)
}

fn verify(key: &PKey<Private>, scheme: &Scheme, message: &[u8], signature: &[u8]) -> Result<bool> {
    let mut verifier = match scheme.digest {
        Some(md) => Verifier::new(md, key)?,
        None => Verifier::new_without_digest(key)?,
    };
    if scheme.pss {
        verifier.set_rsa_padding(Padding::PKCS1_PSS)?;
        verifier.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(verifier.verify_oneshot(signature, message)?)
}

// -- key exchange --------------------------------------------------------------------------

/// The one-shot method libssl uses for an RFC 8879 algorithm.
fn comp_method(name: &str) -> Result<*mut ossl::COMP_METHOD> {
    // SAFETY: these return static method tables (or NULL when not compiled in).
    let method = unsafe {
        match name.trim().to_ascii_lowercase().as_str() {
            "zlib" => ossl::COMP_zlib_oneshot(),
            "brotli" => ossl::COMP_brotli_oneshot(),
            "zstd" => ossl::COMP_zstd_oneshot(),
            _ => bail!(
                "--subject {name:?}: not a certificate compression; allowed: {}",
                COMPRESSIONS.join(", ")
            ),
        }
    };
    if method.is_null() {
        bail!("--subject {name}: not compiled into this OpenSSL build");
    }
    Ok(method)
}

/// Owns a `COMP_CTX`.
struct CompCtx(*mut ossl::COMP_CTX);

impl CompCtx {
    fn new(method: *mut ossl::COMP_METHOD) -> Result<CompCtx> {
        // SAFETY: a valid method table; the context is freed by Drop.
        let ctx = unsafe { ossl::COMP_CTX_new(method) };
        Ok(CompCtx(keys::check_ptr(ctx, "COMP_CTX_new")?))
    }
}

impl Drop for CompCtx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from COMP_CTX_new and is freed exactly once.
        unsafe { ossl::COMP_CTX_free(self.0) }
    }
}

fn decompress_op(args: &PrimitivesArgs) -> Result<Operation> {
    let method = comp_method(&args.subject)?;
    if args.message_bytes == 0 {
        bail!("--message-bytes 0: decompression needs at least 1 byte of certificates");
    }
    let input = certificate_bytes(args.message_bytes)?;
    let compressed = {
        let ctx = CompCtx::new(method)?;
        let mut out = vec![0u8; input.len() + input.len() / 8 + 1024];
        // SAFETY: both buffers are owned here and their lengths are passed.
        let n = unsafe {
            ossl::COMP_compress_block(
                ctx.0,
                out.as_mut_ptr(),
                out.len() as libc::c_int,
                input.as_ptr() as *mut _,
                input.len() as libc::c_int,
            )
        };
        if n <= 0 {
            bail!(
                "compressing {} bytes with {} failed",
                input.len(),
                args.subject
            );
        }
        out.truncate(n as usize);
        out
    };
    let expected = input.len();
    let mut output = vec![0u8; expected];
    Ok(Box::new(move || {
        let ctx = CompCtx::new(method)?;
        // SAFETY: both buffers are owned by the closure and their lengths are passed.
        let n = unsafe {
            ossl::COMP_expand_block(
                ctx.0,
                output.as_mut_ptr(),
                output.len() as libc::c_int,
                compressed.as_ptr() as *mut _,
                compressed.len() as libc::c_int,
            )
        };
        if n as usize != expected {
            bail!("decompression returned {n} bytes, expected {expected}");
        }
        Ok(())
    }))
}

/// `len` bytes of real certificate DER (an ML-DSA-44 hierarchy of depth 3, repeated), so
/// the compressor sees what a Certificate message holds: high-entropy keys and signatures
/// among repeated names and extensions.
fn certificate_bytes(len: usize) -> Result<Vec<u8>> {
    let names = vec!["ML-DSA-44".to_owned(); 3];
    let spec = pki::Spec::new(&names, "primitives", &["localhost".to_owned()])?;
    let hierarchy = pki::generate(&spec)?;
    let mut der = Vec::new();
    for issued in hierarchy.issued.iter().rev() {
        der.extend(issued.cert.to_der()?);
    }
    Ok(der.iter().copied().cycle().take(len).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_verify_content_is_130_bytes() {
        assert_eq!(CV_MESSAGE_BYTES, 130);
    }
}
