//! Merkle Tree Certificates on the OpenSSL stacks: a server may hold one (libssl rates a
//! signature algorithm it does not know at 0 bits and refuses the certificate as "ca md too
//! weak"; the security callback below accepts exactly id-alg-mtcProof and asks libssl's
//! own callback about everything else), and a client with `--mtc-trust` verifies one in a
//! `SSL_CTX_set_cert_verify_callback` that replaces X.509 path building with
//! `chainlab_mtc::verify`, its cosigner signatures checked through EVP.
//!
//! What the verification found is kept on the connection (ex_data) for its record: what was
//! checked after a success, which check failed after a failure.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::OnceLock;

use chainlab_mtc::verify::{Checked, Failure, SignatureCheck};
use chainlab_record::mtc::RelyingParty;
use chainlab_record::record::MtcChecked;
use foreign_types::ForeignTypeRef;
use openssl::ex_data::Index;
use openssl::hash::MessageDigest;
use openssl::pkey::{Id, PKey};
use openssl::sign::Verifier;
use openssl::ssl::{Ssl, SslContextBuilder, SslRef, SslVerifyMode};
use openssl::x509::X509Ref;
use openssl_sys as sys;

use crate::cli::ClientArgs;
use crate::ossl;

type Outcome = Result<Checked, Failure>;

/// libssl's own security callback, asked about everything but an MTC's signature.
static LIBSSL_SECURITY: OnceLock<ossl::SecurityCallback> = OnceLock::new();

/// Lets this context use (server) or accept (client) a certificate signed with
/// id-alg-mtcProof, leaving every other security check as it was.
pub fn accept_mtc_signature(builder: &mut SslContextBuilder) {
    // SAFETY: a valid context; the callback installed is a 'static function.
    unsafe {
        let previous = ossl::SSL_CTX_get_security_callback(builder.as_ptr());
        LIBSSL_SECURITY.get_or_init(|| previous);
        ossl::SSL_CTX_set_security_callback(builder.as_ptr(), Some(security));
    }
}

unsafe extern "C" fn security(
    s: *const sys::SSL,
    ctx: *const sys::SSL_CTX,
    op: c_int,
    bits: c_int,
    nid: c_int,
    other: *mut c_void,
    ex: *mut c_void,
) -> c_int {
    // SAFETY: for SSL_SECOP_CA_MD libssl passes the certificate checked as `other`.
    if op & !ossl::SSL_SECOP_PEER == ossl::SSL_SECOP_CA_MD
        && !other.is_null()
        && is_mtc(X509Ref::from_ptr(other.cast()))
    {
        return 1;
    }
    match LIBSSL_SECURITY.get().copied().flatten() {
        Some(libssl) => libssl(s, ctx, op, bits, nid, other, ex),
        None => 1, // no callback was installed: libssl would not have checked either
    }
}

/// Whether `cert` is signed with either encoding's id-alg-mtcProof (OpenSSL knows neither
/// OID, so it prints them dotted).
fn is_mtc(cert: &X509Ref) -> bool {
    let oid = cert.signature_algorithm().object().to_string();
    chainlab_mtc::Encoding::ALL
        .iter()
        .any(|e| e.proof_oid() == oid)
}

/// Verifies the server's certificate as an MTC against `trust` (instead of `--ca`).
pub fn install_verifier(
    builder: &mut SslContextBuilder,
    args: &ClientArgs,
    trust: &Path,
) -> anyhow::Result<()> {
    let party = RelyingParty::from_args(args, trust)?;
    outcome_index()?;
    // The context lives until the process exits and the callback reads this on every
    // handshake, so it is leaked on purpose (one allocation per process).
    let party: &'static RelyingParty = Box::leak(Box::new(party));
    builder.set_verify(SslVerifyMode::PEER);
    accept_mtc_signature(builder);
    // SAFETY: valid context; the argument is a 'static value only ever read.
    unsafe {
        ossl::SSL_CTX_set_cert_verify_callback(
            builder.as_ptr(),
            Some(verify_mtc),
            (party as *const RelyingParty).cast_mut().cast(),
        )
    };
    Ok(())
}

unsafe extern "C" fn verify_mtc(store_ctx: *mut sys::X509_STORE_CTX, arg: *mut c_void) -> c_int {
    // SAFETY (whole function): libssl passes the store context it initialised for this
    // connection's handshake and our 'static relying party; the SSL is the store context's
    // ex_data at libssl's own index.
    let party = &*(arg as *const RelyingParty);
    let cert = ossl::X509_STORE_CTX_get0_cert(store_ctx);
    let outcome = if cert.is_null() {
        Err(Failure {
            check: "format",
            detail: "the server sent no certificate".into(),
        })
    } else {
        match X509Ref::from_ptr(cert).to_der() {
            Ok(der) => party.verify(&der, &EvpSignatures),
            Err(e) => Err(Failure {
                check: "format",
                detail: e.to_string(),
            }),
        }
    };
    let ok = outcome.is_ok();
    let ssl = sys::X509_STORE_CTX_get_ex_data(store_ctx, sys::SSL_get_ex_data_X509_STORE_CTX_idx());
    if let (false, Ok(index)) = (ssl.is_null(), outcome_index()) {
        SslRef::from_ptr_mut(ssl.cast()).set_ex_data(index, outcome);
    }
    let code = if ok {
        sys::X509_V_OK
    } else {
        sys::X509_V_ERR_APPLICATION_VERIFICATION
    };
    sys::X509_STORE_CTX_set_error(store_ctx, code);
    c_int::from(ok)
}

fn outcome_index() -> anyhow::Result<Index<Ssl, Outcome>> {
    static INDEX: OnceLock<Index<Ssl, Outcome>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index::<Outcome>()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// What the MTC verification of this connection checked, if it ran and passed.
pub fn checked(ssl: &SslRef) -> Option<MtcChecked> {
    let index = outcome_index().ok()?;
    match ssl.ex_data(index)? {
        Ok(c) => Some(MtcChecked::from(c)),
        Err(_) => None,
    }
}

/// The check that failed, if the MTC verification of this connection ran and failed.
pub fn failure(ssl: &SslRef) -> Option<String> {
    let index = outcome_index().ok()?;
    match ssl.ex_data(index)? {
        Err(f) => Some(f.to_string()),
        Ok(_) => None,
    }
}

/// Cosigner signatures through EVP: ECDSA with its curve's SHA-2, the rest (ML-DSA, SLH-DSA,
/// Ed25519) over the message itself.
struct EvpSignatures;

impl SignatureCheck for EvpSignatures {
    fn verify(&self, spki: &[u8], message: &[u8], signature: &[u8]) -> Result<(), String> {
        let key = PKey::public_key_from_der(spki).map_err(|e| format!("unreadable key: {e}"))?;
        let digest = match (key.id(), key.bits()) {
            (Id::EC, 384) => Some(MessageDigest::sha384()),
            (Id::EC, 521) => Some(MessageDigest::sha512()),
            (Id::EC, _) | (Id::RSA, _) => Some(MessageDigest::sha256()),
            _ => None,
        };
        let verifier = match digest {
            Some(md) => Verifier::new(md, &key),
            None => Verifier::new_without_digest(&key),
        };
        match verifier.and_then(|mut v| v.verify_oneshot(signature, message)) {
            Ok(true) => Ok(()),
            Ok(false) => Err("the signature does not verify".into()),
            Err(e) => Err(format!("the signature does not verify ({e})")),
        }
    }
}
