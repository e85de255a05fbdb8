//! The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06), BoringSSL's own
//! implementation, with chainlab's Merkle Tree Certificates:
//!
//! - Server (`--trust-anchor-ids`): the landmark-relative MTC is a credential under its
//!   landmark's trust anchor ID, the standalone one under the CA's, each with issuer
//!   matching on, so BoringSSL sends one only to a ClientHello requesting its ID (and says
//!   so with an empty trust_anchors extension in the CertificateEntry); the `--chain`
//!   certificate follows as the credential for every other client. BoringSSL derives the
//!   available list it sends in EncryptedExtensions from the credentials' IDs.
//! - Client (`--trust-anchors`): the requested IDs (plus `--trust-anchors-filler` IDs of
//!   other CAs) in the ClientHello; during verification it notes whether the server matched
//!   and the server's available list, which the retry (`--trust-anchor-retry`) reads.
//!
//! BoringSSL's verifier checks standalone MTCs but holds no landmarks, so a certificate with
//! no subtree signatures (landmark-relative) is checked here by chainlab's relying party
//! (`--mtc-trust`, `--mtc-landmarks`), inside BoringSSL's verification callback; every other
//! certificate by BoringSSL's `X509_verify_cert`.

use std::cell::RefCell;

use anyhow::bail;
use boring::ssl::SslContextBuilder;
use boring::x509::X509Ref;
use boring_sys as ffi;
use chainlab_mtc::entry::Certificate;
use chainlab_mtc::proof::{self, MtcProof};
use chainlab_mtc::verify::NoSignatures;
use chainlab_mtc::Encoding;
use chainlab_record::anchors::{self, requested};
use chainlab_record::args::ClientArgs;
use chainlab_record::mtc::RelyingParty;
use chainlab_record::record::{MtcChecked, TrustAnchorsSeen};
use foreign_types::ForeignTypeRef;

/// What the last verification on this thread saw of the server's answer.
#[derive(Debug, Default, Clone)]
pub struct Noted {
    pub matched: bool,
    /// The server's available list, wire format (empty: none sent).
    pub available: Vec<u8>,
    /// A certificate chainlab's relying party checked: what it found.
    pub mtc: Option<MtcChecked>,
    /// Its failure, as the record's detail says it.
    pub mtc_failure: Option<String>,
}

thread_local! {
    static NOTED: RefCell<Noted> = RefCell::new(Noted::default());
}

/// What was noted since the last call (taken).
pub fn take_noted() -> Noted {
    NOTED.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

/// What a record says of the extension on a connection that requested `requested` IDs.
pub fn seen(requested: u64, noted: &Noted) -> TrustAnchorsSeen {
    anchors::seen(requested, noted.matched, &noted.available)
}

/// The client's requested list on the context (`--trust-anchors`), verifying or not.
pub fn request(builder: &mut SslContextBuilder, args: &ClientArgs) -> anyhow::Result<()> {
    if let Some((wire, _)) = requested(args)? {
        // SAFETY: valid context; the list is copied.
        let ok = unsafe {
            ffi::SSL_CTX_set1_requested_trust_anchors(builder.as_ptr(), wire.as_ptr(), wire.len())
        };
        if ok != 1 {
            bail!("--trust-anchors: BoringSSL refused the list");
        }
    }
    Ok(())
}

/// The client's verification callback: it notes the server's trust-anchor answer and checks
/// landmark-relative MTCs.
pub fn install_verifier(builder: &mut SslContextBuilder, args: &ClientArgs) -> anyhow::Result<()> {
    let party = match &args.mtc_trust {
        Some(trust) => Some(RelyingParty::from_args(args, trust)?),
        None => None,
    };
    // The context lives until the process exits and the callback reads the relying party on
    // every handshake, so it is leaked on purpose (one allocation per process).
    let party: &'static Option<RelyingParty> = Box::leak(Box::new(party));
    // SAFETY: valid context; the argument is a 'static value only ever read.
    unsafe {
        ffi::SSL_CTX_set_cert_verify_callback(
            builder.as_ptr(),
            Some(verify),
            (party as *const Option<RelyingParty>).cast_mut().cast(),
        )
    };
    Ok(())
}

/// Verification: note the server's trust-anchor answer, then check the leaf, a
/// landmark-relative MTC with chainlab's relying party and anything else with BoringSSL's.
unsafe extern "C" fn verify(
    store_ctx: *mut ffi::X509_STORE_CTX,
    arg: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY (whole function): BoringSSL passes the store context of the handshake's
    // verification, whose ex data holds the SSL, and our 'static relying party.
    let party = &*(arg as *const Option<RelyingParty>);
    let ssl = ffi::X509_STORE_CTX_get_ex_data(store_ctx, ffi::SSL_get_ex_data_X509_STORE_CTX_idx())
        as *const ffi::SSL;
    let mut noted = Noted::default();
    if !ssl.is_null() {
        noted.matched = ffi::SSL_peer_matched_trust_anchor(ssl) == 1;
        let (mut p, mut n) = (std::ptr::null(), 0usize);
        ffi::SSL_get0_peer_available_trust_anchors(ssl, &mut p, &mut n);
        if !p.is_null() && n > 0 {
            noted.available = std::slice::from_raw_parts(p, n).to_vec();
        }
    }
    // The leaf is read only where chainlab's relying party may take it (`--mtc-trust`): an
    // X.509 client requesting IDs does no work here beyond BoringSSL's own.
    let leaf = ffi::X509_STORE_CTX_get0_cert(store_ctx);
    let der = match party {
        Some(_) if !leaf.is_null() => X509Ref::from_ptr(leaf).to_der().ok(),
        _ => None,
    };
    let result = match (party, der.as_deref().filter(|d| is_landmark_relative(d))) {
        (Some(party), Some(der)) => match party.verify(der, &NoSignatures) {
            Ok(checked) => {
                noted.mtc = Some(MtcChecked::from(&checked));
                1
            }
            Err(failure) => {
                noted.mtc_failure = Some(failure.to_string());
                ffi::X509_STORE_CTX_set_error(
                    store_ctx,
                    ffi::X509_V_ERR_APPLICATION_VERIFICATION as libc::c_int,
                );
                0
            }
        },
        _ => ffi::X509_verify_cert(store_ctx),
    };
    NOTED.with(|n| *n.borrow_mut() = noted);
    result
}

/// An MTC (either encoding) that carries no subtree signatures.
pub fn is_landmark_relative(der: &[u8]) -> bool {
    let Ok(cert) = Certificate::parse(der) else {
        return false;
    };
    Encoding::ALL.into_iter().any(|e| {
        chainlab_mtc::issue::mtc_algorithm(e).is_ok_and(|alg| alg == cert.signature_algorithm.raw)
            && MtcProof::decode(cert.signature, e).is_ok_and(|p| p.signatures.is_empty())
    })
}

/// Gives credential `cred` the trust anchor ID `id` with issuer matching on, so BoringSSL
/// sends it only to a client requesting `id`.
///
/// # Safety
/// `cred` is a valid credential the caller owns.
pub unsafe fn offer_under(cred: *mut ffi::SSL_CREDENTIAL, id: &str) -> anyhow::Result<()> {
    let binary = proof::binary_id(id)?;
    if ffi::SSL_CREDENTIAL_set1_trust_anchor_id(cred, binary.as_ptr(), binary.len()) != 1 {
        bail!("--trust-anchor-ids: BoringSSL refused the trust anchor ID {id}");
    }
    ffi::SSL_CREDENTIAL_set_must_match_issuer(cred, 1);
    Ok(())
}
