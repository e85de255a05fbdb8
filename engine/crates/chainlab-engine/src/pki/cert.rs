//! One X.509 v3 certificate: subject, fixed validity, extensions, deterministic signature.

use std::ffi::{c_int, c_uint};
use std::ptr;

use anyhow::{Context, Result};
use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::BigNum;
use openssl::md_ctx::MdCtx;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private};
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName,
    SubjectKeyIdentifier,
};
use openssl::x509::{X509Builder, X509Name, X509NameRef, X509Ref, X509};
use openssl_sys as sys;

use super::keys::{check, KeyKind, SERIAL_BYTES};
use super::role::Role;
use crate::algorithms::Algorithm;
use crate::cli::Purpose;
use crate::ossl;

/// Validity start of every certificate. Dates are fixed, not taken from the clock, because
/// the output must be byte-reproducible: a clock date would change every certificate (and
/// every signature) on every run. All dates lie before 2050, so they encode as UTCTime
/// (13 bytes) as in any current Web PKI certificate, and sizes match real ones.
pub const NOT_BEFORE: &str = "20250101000000Z";

/// End of a CA's validity: 20 years, a typical root lifetime.
pub const CA_NOT_AFTER: &str = "20450101000000Z";

/// End of a leaf's validity: shorter than its issuers' (as in real hierarchies), yet long
/// enough that a campaign rerun years later still verifies without regenerating.
pub const LEAF_NOT_AFTER: &str = "20350101000000Z";

/// Organisation in every subject.
const ORGANIZATION: &str = "chainlab";

/// Addresses always in the leaf's subjectAltName: servers in this lab listen on loopback.
pub const LEAF_IPS: [&str; 2] = ["127.0.0.1", "::1"];

/// What is particular to one certificate.
pub struct Subject<'a> {
    pub role: Role,
    pub algorithm: &'static Algorithm,
    pub serial: [u8; SERIAL_BYTES],
    /// Some(pathLenConstraint) for a CA, None for the leaf.
    pub path_len: Option<u32>,
    pub dns: &'a [String],
    pub purpose: Purpose,
}

/// The issuing certificate, its key and algorithm; None issues a self-signed certificate.
pub type Issuer<'a> = Option<(&'a X509Ref, &'a PKeyRef<Private>, &'static Algorithm)>;

/// (notBefore, notAfter) of a role, in the form `Asn1Time::from_str_x509` takes.
pub fn validity(role: Role) -> (&'static str, &'static str) {
    match role {
        Role::Leaf => (NOT_BEFORE, LEAF_NOT_AFTER),
        Role::Root | Role::Int1 | Role::Int2 => (NOT_BEFORE, CA_NOT_AFTER),
    }
}

/// Builds and signs the certificate of `subject` for `key`.
pub fn issue(subject: &Subject, key: &PKey<Private>, issuer: Issuer) -> Result<X509> {
    let mut builder = X509Builder::new()?;
    builder.set_version(2)?; // X.509 v3 is encoded as 2
    let serial = BigNum::from_slice(&subject.serial)?;
    let serial = Asn1Integer::from_bn(&serial)?;
    builder.set_serial_number(&serial)?;
    let name = subject_name(subject)?;
    builder.set_subject_name(&name)?;
    builder.set_issuer_name(issuer.map_or(name.as_ref(), |(cert, _, _)| cert.subject_name()))?;
    let (not_before, not_after) = validity(subject.role);
    let (not_before, not_after) = (
        Asn1Time::from_str_x509(not_before)?,
        Asn1Time::from_str_x509(not_after)?,
    );
    builder.set_not_before(&not_before)?;
    builder.set_not_after(&not_after)?;
    builder.set_pubkey(key)?;

    match subject.path_len {
        Some(path_len) => {
            let constraints = BasicConstraints::new()
                .critical()
                .ca()
                .pathlen(path_len)
                .build()?;
            builder.append_extension(constraints)?;
            builder.append_extension(
                KeyUsage::new()
                    .critical()
                    .key_cert_sign()
                    .crl_sign()
                    .build()?,
            )?;
        }
        None => {
            builder.append_extension(BasicConstraints::new().critical().build()?)?;
            builder.append_extension(KeyUsage::new().critical().digital_signature().build()?)?;
            let mut usage = ExtendedKeyUsage::new();
            match subject.purpose {
                Purpose::Server => usage.server_auth(),
                Purpose::Client => usage.client_auth(),
            };
            builder.append_extension(usage.build()?)?;
        }
    }
    let ski = SubjectKeyIdentifier::new().build(&builder.x509v3_context(None, None))?;
    builder.append_extension(ski)?;
    if let Some((issuer_cert, _, _)) = issuer {
        // keyid:always: fails loudly should an issuer ever lack a subjectKeyIdentifier.
        let aki = AuthorityKeyIdentifier::new()
            .keyid(true)
            .build(&builder.x509v3_context(Some(issuer_cert), None))?;
        builder.append_extension(aki)?;
    }
    if subject.path_len.is_none() && subject.purpose == Purpose::Server {
        let mut san = SubjectAlternativeName::new();
        for name in subject.dns {
            san.dns(name);
        }
        for ip in LEAF_IPS {
            san.ip(ip);
        }
        builder.append_extension(san.build(&builder.x509v3_context(None, None))?)?;
    }

    let mut cert = builder.build();
    let (signing_key, signing_algorithm) = match issuer {
        Some((_, issuer_key, issuer_algorithm)) => (issuer_key, issuer_algorithm),
        None => (key.as_ref(), subject.algorithm),
    };
    sign(&mut cert, signing_key, signing_algorithm)
        .with_context(|| format!("signing with {}", signing_algorithm.name))?;
    Ok(cert)
}

/// O=chainlab, CN=<role title> (<algorithm>).
pub fn subject_name(subject: &Subject) -> Result<X509Name> {
    let mut name = X509Name::builder()?;
    name.append_entry_by_nid(Nid::ORGANIZATIONNAME, ORGANIZATION)?;
    let common_name = format!(
        "{} ({})",
        subject.role.title(subject.purpose),
        subject.algorithm.name
    );
    name.append_entry_by_nid(Nid::COMMONNAME, &common_name)?;
    Ok(name.build())
}

/// A name as `openssl x509 -subject` prints it by default: "O=chainlab, CN=...".
pub fn one_line(name: &X509NameRef) -> Result<String> {
    let mut parts = Vec::new();
    for entry in name.entries() {
        let field = entry.object().nid().short_name()?;
        parts.push(format!("{field}={}", entry.data().to_string()?));
    }
    Ok(parts.join(", "))
}

/// Signs with the issuer's key through `EVP_DigestSignInit_ex` + `X509_sign_ctx`, asking
/// for the deterministic variant where one exists (`deterministic_init`).
fn sign(cert: &mut X509, key: &PKeyRef<Private>, algorithm: &Algorithm) -> Result<()> {
    let md_ctx = deterministic_init(key, algorithm, None)?;
    // SAFETY: `md_ctx` and `cert` are live, owned objects; X509_sign_ctx writes the
    // signature into `cert`, owned by us.
    unsafe {
        check(
            ossl::X509_sign_ctx(cert.as_ptr(), md_ctx.as_ptr()),
            "X509_sign_ctx",
        )?;
    }
    Ok(())
}

/// The AlgorithmIdentifier DER of the signatures `key` makes as a certificate's issuer (the
/// digest and parameters OpenSSL writes), read from a throwaway certificate it signs.
pub fn signature_algorithm_der(key: &PKeyRef<Private>, algorithm: &Algorithm) -> Result<Vec<u8>> {
    let mut builder = X509Builder::new()?;
    builder.set_pubkey(key)?;
    let mut cert = builder.build();
    sign(&mut cert, key, algorithm)?;
    let der = cert.to_der()?;
    let parsed = chainlab_mtc::entry::Certificate::parse(&der)
        .context("reading back a certificate OpenSSL signed")?;
    Ok(parsed.signature_algorithm.raw.to_vec())
}

/// A signature over `message` made as a certificate's would be (the same digest and
/// deterministic variant): what an MTC cosigner signs its subtrees with.
pub fn sign_message(
    key: &PKeyRef<Private>,
    algorithm: &Algorithm,
    message: &[u8],
) -> Result<Vec<u8>> {
    sign_message_in(key, algorithm, message, None)
}

/// As `sign_message`, with an ML-DSA application context (a composite's label).
pub fn sign_message_in(
    key: &PKeyRef<Private>,
    algorithm: &Algorithm,
    message: &[u8],
    context: Option<&[u8]>,
) -> Result<Vec<u8>> {
    let md_ctx = deterministic_init(key, algorithm, context)?;
    let mut len = 0usize;
    // SAFETY: a live context set up for signing; the first call asks for the length, the
    // second writes at most that many bytes into a buffer of that size.
    unsafe {
        check(
            sys::EVP_DigestSign(
                md_ctx.as_ptr(),
                ptr::null_mut(),
                &mut len,
                message.as_ptr(),
                message.len(),
            ),
            "EVP_DigestSign (length)",
        )?;
        let mut out = vec![0u8; len];
        check(
            sys::EVP_DigestSign(
                md_ctx.as_ptr(),
                out.as_mut_ptr(),
                &mut len,
                message.as_ptr(),
                message.len(),
            ),
            "EVP_DigestSign",
        )?;
        out.truncate(len);
        Ok(out)
    }
}

/// A signing context for `key` through `EVP_DigestSignInit_ex`, asking for the
/// deterministic variant where one exists: ML-DSA and SLH-DSA `deterministic` = 1 (FIPS
/// 204/205 without the random `rnd`/`opt_rand`), ECDSA `nonce-type` = 1 (RFC 6979).
/// Ed25519 and RSA PKCS#1 v1.5 signatures are deterministic by definition.
fn deterministic_init(
    key: &PKeyRef<Private>,
    algorithm: &Algorithm,
    context: Option<&[u8]>,
) -> Result<MdCtx> {
    let kind = KeyKind::of(algorithm)?;
    let md_ctx = MdCtx::new()?;
    let mut deterministic: c_int = 1;
    let mut nonce_type: c_uint = 1;
    // SAFETY: the parameter array points at the two locals above and at `context`, which
    // outlive the call; OpenSSL reads them during EVP_DigestSignInit_ex only. `md_ctx` and
    // `key` are live.
    unsafe {
        let mut params = Vec::with_capacity(3);
        if let Some(context) = context {
            params.push(sys::OSSL_PARAM_construct_octet_string(
                ossl::OSSL_SIGNATURE_PARAM_CONTEXT_STRING.as_ptr(),
                context.as_ptr() as *mut _,
                context.len(),
            ));
        }
        match kind {
            KeyKind::MlDsa | KeyKind::SlhDsa { .. } => params.push(ossl::OSSL_PARAM_construct_int(
                ossl::OSSL_SIGNATURE_PARAM_DETERMINISTIC.as_ptr(),
                &mut deterministic,
            )),
            KeyKind::Ecdsa { .. } => params.push(sys::OSSL_PARAM_construct_uint(
                ossl::OSSL_SIGNATURE_PARAM_NONCE_TYPE.as_ptr(),
                &mut nonce_type,
            )),
            KeyKind::Ed25519 | KeyKind::Rsa { .. } => {}
        }
        params.push(sys::OSSL_PARAM_construct_end());
        check(
            ossl::EVP_DigestSignInit_ex(
                md_ctx.as_ptr(),
                ptr::null_mut(),
                kind.digest().map_or(ptr::null(), |digest| digest.as_ptr()),
                ptr::null_mut(),
                ptr::null(),
                key.as_ptr(),
                params.as_ptr(),
            ),
            "EVP_DigestSignInit_ex",
        )?;
    }
    Ok(md_ctx)
}
