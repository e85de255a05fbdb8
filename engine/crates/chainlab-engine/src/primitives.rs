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
//!   with a proof of `--message-bytes` hashes (the certificate made once beforehand).
//!
//! Each timed operation includes its context set-up (an EVP context per operation, as libssl
//! makes one per handshake) and, on the server's `encaps` and either side's `derive`, decoding
//! the peer's key share into a key as libssl does (for ML-KEM that expands the public matrix:
//! 19 us of X25519MLKEM768's 118 us here, which a server pays in every such handshake and the
//! primitive had left out); keys, peer key shares, ciphertexts and compressed input are made
//! once, before the first timed operation. The engine never summarizes: the runner decides how many
//! operations it needs (adaptive sampling) and computes their statistics.

use std::ffi::{CStr, CString};
use std::io::Write as _;
use std::ptr;

use anyhow::{anyhow, bail, Context, Result};
use foreign_types::ForeignType;
use openssl::derive::Deriver;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use openssl_sys as sys;

use chainlab_record::primitives;

use crate::algorithms::{self, Algorithm, Family};
use crate::cli::{MessageKind, PrimitiveOp, PrimitivesArgs};
use crate::cpu;
use crate::ossl;
use crate::pki::{self, keys};

/// The CertificateVerify content a TLS 1.3 server signs (RFC 8446, 4.4.3): 64 spaces, the
/// context string, a zero byte, the transcript hash (32 bytes with the SHA-256 suites that
/// every chainlab handshake negotiates).
const CV_PAD: usize = 64;
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
const TRANSCRIPT_HASH_BYTES: usize = 32;
pub const CV_MESSAGE_BYTES: usize = CV_PAD + CV_CONTEXT.len() + 1 + TRANSCRIPT_HASH_BYTES;

/// Key-exchange groups the engine can time, with the OpenSSL key type that implements each
/// and how TLS uses it.
#[derive(Debug, Clone, Copy)]
struct Group {
    name: &'static str,
    key_type: &'static CStr,
    /// The group parameter set on the key-generation context (EC curves, FFDHE groups).
    group_param: Option<&'static CStr>,
    kem: bool,
}

const fn group(
    name: &'static str,
    key_type: &'static CStr,
    group_param: Option<&'static CStr>,
    kem: bool,
) -> Group {
    Group {
        name,
        key_type,
        group_param,
        kem,
    }
}

/// Same names and order as the campaign's group list (chainlab/campaign/algorithms.py).
const GROUPS: &[Group] = &[
    group("X25519", c"X25519", None, false),
    group("X448", c"X448", None, false),
    group("P-256", c"EC", Some(c"P-256"), false),
    group("P-384", c"EC", Some(c"P-384"), false),
    group("P-521", c"EC", Some(c"P-521"), false),
    group("ffdhe2048", c"DH", Some(c"ffdhe2048"), false),
    group("ffdhe3072", c"DH", Some(c"ffdhe3072"), false),
    group("ffdhe4096", c"DH", Some(c"ffdhe4096"), false),
    group("ffdhe6144", c"DH", Some(c"ffdhe6144"), false),
    group("ffdhe8192", c"DH", Some(c"ffdhe8192"), false),
    group("X25519MLKEM768", c"X25519MLKEM768", None, true),
    group("SecP256r1MLKEM768", c"SecP256r1MLKEM768", None, true),
    group("SecP384r1MLKEM1024", c"SecP384r1MLKEM1024", None, true),
    group("MLKEM512", c"ML-KEM-512", None, true),
    group("MLKEM768", c"ML-KEM-768", None, true),
    group("MLKEM1024", c"ML-KEM-1024", None, true),
];

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
        PrimitiveOp::Sign | PrimitiveOp::Verify => Some(match args.message {
            MessageKind::Cv => CV_MESSAGE_BYTES,
            MessageKind::Cert => args.message_bytes,
        }),
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
            group_op(args)
        }
        PrimitiveOp::Decompress => decompress_op(args),
        PrimitiveOp::MtcVerify => {
            let leaf = algorithms::lookup(&args.subject)
                .context("--subject: mtc-verify's subject is the leaf key's algorithm")?;
            pki::mtc::verify_operation(leaf, args.message_bytes)
        }
    }
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
    let message = match args.message {
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
    };
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

fn lookup_group(name: &str) -> Result<&'static Group> {
    GROUPS
        .iter()
        .find(|g| g.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            anyhow!(
                "--subject {name:?}: not a key-exchange group; allowed: {}",
                GROUPS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
            )
        })
}

fn group_op(args: &PrimitivesArgs) -> Result<Operation> {
    let g = lookup_group(&args.subject)?;
    let op = args.op;
    match (op, g.kem) {
        (PrimitiveOp::Keygen, _) => Ok(Box::new(move || keygen(g).map(drop))),
        (PrimitiveOp::Encaps, true) => {
            // The client's key share as it arrives; each operation decodes it into a key as
            // libssl's server does (for ML-KEM the decoding expands the public matrix).
            let share = encoded_public_key(&keygen(g)?)?;
            Ok(Box::new(move || {
                encapsulate(&peer_key(g, &share)?).map(drop)
            }))
        }
        (PrimitiveOp::Decaps, true) => {
            let own = keygen(g)?;
            let (ciphertext, _) = encapsulate(&own)?;
            Ok(Box::new(move || decapsulate(&own, &ciphertext).map(drop)))
        }
        (PrimitiveOp::Derive, false) => {
            let own = keygen(g)?;
            let share = encoded_public_key(&keygen(g)?)?;
            Ok(Box::new(move || {
                let peer = peer_key(g, &share)?;
                let mut deriver = Deriver::new(&own)?;
                deriver.set_peer(&peer)?;
                deriver.derive_to_vec()?;
                Ok(())
            }))
        }
        _ => bail!(
            "--op {}: {} is {}; allowed: {}",
            op.name(),
            g.name,
            if g.kem {
                "a KEM"
            } else {
                "a Diffie-Hellman group"
            },
            if g.kem {
                "keygen, encaps, decaps"
            } else {
                "keygen, derive"
            }
        ),
    }
}

/// A fresh key of the group, as a TLS key share is made.
fn keygen(g: &Group) -> Result<PKey<Private>> {
    // SAFETY: a NULL library context and property query select the defaults; the context is
    // owned by the PkeyCtx, which frees it.
    let mut ctx = unsafe {
        let raw =
            sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), g.key_type.as_ptr(), ptr::null());
        PkeyCtx::<()>::from_ptr(keys::check_ptr(raw, "EVP_PKEY_CTX_new_from_name")?)
    };
    ctx.keygen_init()?;
    if let Some(param) = g.group_param {
        let value = CString::from(param);
        // SAFETY: the array points at `value`, alive until after the call, which copies it.
        unsafe {
            let params = [
                ossl::OSSL_PARAM_construct_utf8_string(
                    ossl::OSSL_PKEY_PARAM_GROUP_NAME.as_ptr(),
                    value.as_ptr() as *mut _,
                    0,
                ),
                sys::OSSL_PARAM_construct_end(),
            ];
            keys::check(
                sys::EVP_PKEY_CTX_set_params(ctx.as_ptr(), params.as_ptr()),
                "setting the group",
            )?;
        }
    }
    Ok(ctx.keygen()?)
}

/// A key's public half in its TLS encoding (the key share a peer sends).
fn encoded_public_key(key: &PKey<Private>) -> Result<Vec<u8>> {
    let mut raw: *mut u8 = ptr::null_mut();
    // SAFETY: `key` is valid; on success `raw` points at `len` bytes OpenSSL allocated, copied
    // out and freed here.
    unsafe {
        let len = ossl::EVP_PKEY_get1_encoded_public_key(key.as_ptr(), &mut raw);
        if len == 0 || raw.is_null() {
            bail!("EVP_PKEY_get1_encoded_public_key failed");
        }
        let out = std::slice::from_raw_parts(raw, len).to_vec();
        sys::CRYPTO_free(raw.cast(), c"primitives.rs".as_ptr(), line!() as i32);
        Ok(out)
    }
}

/// A peer's key from its key share, as libssl's `ssl_generate_param_group` and
/// `tls13_set_encoded_pub_key` make it: a parameter key of the group (its internal name set:
/// the curve or FFDHE group, the X25519/X448 key type, "" for the KEM groups), then the
/// encoded public key decoded into it.
fn peer_key(g: &Group, share: &[u8]) -> Result<PKey<Public>> {
    let name = g
        .group_param
        .unwrap_or(if g.kem { c"" } else { g.key_type });
    // SAFETY: NULL library context and properties select the defaults; every pointer is
    // checked before use; the context is freed on every path and the key is owned by the
    // returned PKey (or freed on error).
    unsafe {
        let ctx = keys::check_ptr(
            sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), g.key_type.as_ptr(), ptr::null()),
            "EVP_PKEY_CTX_new_from_name",
        )?;
        let mut key: *mut sys::EVP_PKEY = ptr::null_mut();
        let made = keys::check(sys::EVP_PKEY_paramgen_init(ctx), "EVP_PKEY_paramgen_init")
            .and_then(|_| {
                keys::check(
                    ossl::EVP_PKEY_CTX_set_group_name(ctx, name.as_ptr()),
                    "EVP_PKEY_CTX_set_group_name",
                )
            })
            .and_then(|_| keys::check(sys::EVP_PKEY_paramgen(ctx, &mut key), "EVP_PKEY_paramgen"));
        sys::EVP_PKEY_CTX_free(ctx);
        made?;
        let key = PKey::from_ptr(keys::check_ptr(key, "EVP_PKEY_paramgen")?);
        keys::check(
            ossl::EVP_PKEY_set1_encoded_public_key(key.as_ptr(), share.as_ptr(), share.len()),
            "EVP_PKEY_set1_encoded_public_key: the peer's key share",
        )?;
        Ok(key)
    }
}

/// (ciphertext, shared secret) encapsulated to `peer`'s public key (the server's part).
fn encapsulate<T>(peer: &PKey<T>) -> Result<(Vec<u8>, Vec<u8>)> {
    let ctx = PkeyCtx::new(peer)?;
    // SAFETY: valid context; the first call writes the two lengths, the second fills buffers
    // of those lengths, both owned here.
    unsafe {
        keys::check(
            sys::EVP_PKEY_encapsulate_init(ctx.as_ptr(), ptr::null()),
            "EVP_PKEY_encapsulate_init",
        )?;
        let (mut wrapped_len, mut secret_len) = (0usize, 0usize);
        keys::check(
            sys::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut wrapped_len,
                ptr::null_mut(),
                &mut secret_len,
            ),
            "EVP_PKEY_encapsulate (sizes)",
        )?;
        let mut wrapped = vec![0u8; wrapped_len];
        let mut secret = vec![0u8; secret_len];
        keys::check(
            sys::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                wrapped.as_mut_ptr(),
                &mut wrapped_len,
                secret.as_mut_ptr(),
                &mut secret_len,
            ),
            "EVP_PKEY_encapsulate",
        )?;
        wrapped.truncate(wrapped_len);
        secret.truncate(secret_len);
        Ok((wrapped, secret))
    }
}

/// The shared secret recovered from `ciphertext` with `own` private key (the client's part).
fn decapsulate(own: &PKey<Private>, ciphertext: &[u8]) -> Result<Vec<u8>> {
    let ctx = PkeyCtx::new(own)?;
    // SAFETY: valid context; `ciphertext` is read only; the output buffer is owned here.
    unsafe {
        keys::check(
            sys::EVP_PKEY_decapsulate_init(ctx.as_ptr(), ptr::null()),
            "EVP_PKEY_decapsulate_init",
        )?;
        let mut secret_len = 0usize;
        keys::check(
            sys::EVP_PKEY_decapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut secret_len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            ),
            "EVP_PKEY_decapsulate (size)",
        )?;
        let mut secret = vec![0u8; secret_len];
        keys::check(
            sys::EVP_PKEY_decapsulate(
                ctx.as_ptr(),
                secret.as_mut_ptr(),
                &mut secret_len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            ),
            "EVP_PKEY_decapsulate",
        )?;
        secret.truncate(secret_len);
        Ok(secret)
    }
}

// -- certificate decompression -------------------------------------------------------------

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

    #[test]
    fn every_group_of_the_campaign_list_is_timed() {
        // The campaign's list (chainlab/campaign/algorithms.py GROUPS) has 16 groups: 10
        // Diffie-Hellman, 6 KEMs.
        assert_eq!(GROUPS.len(), 16);
        assert_eq!(GROUPS.iter().filter(|g| g.kem).count(), 6);
    }
}
