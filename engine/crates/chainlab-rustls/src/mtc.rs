//! Merkle Tree Certificates on the rustls stack: with `--mtc-trust`, the client's
//! `ServerCertVerifier` verifies the end-entity certificate with `chainlab_mtc::verify`
//! instead of webpki's path building, checking cosigner signatures with the same webpki
//! signature algorithms (aws-lc-rs) the stack verifies certificates with. The server needs
//! nothing: rustls never inspects its own certificate's signature.
//!
//! What was checked is noted in a thread-local for the connection's record, as the
//! CertificateVerify scheme is (`tls::take_scheme`).

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use chainlab_mtc::der;
use chainlab_mtc::verify::SignatureCheck;
use chainlab_record::args::ClientArgs;
use chainlab_record::record::MtcChecked;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{alg_id, CertificateDer};
use rustls::{CertificateError, OtherError};

thread_local! {
    /// What the last MTC verification on this thread checked; taken by the record.
    static CHECKED: RefCell<Option<MtcChecked>> = const { RefCell::new(None) };
}

/// What was noted since the last call, if anything.
pub fn take_checked() -> Option<MtcChecked> {
    CHECKED.with(|c| c.borrow_mut().take())
}

/// The relying party of `--mtc-trust` (chainlab_record::mtc), checking cosigner signatures
/// with this stack's webpki algorithms.
#[derive(Debug)]
pub struct RelyingParty(chainlab_record::mtc::RelyingParty);

impl RelyingParty {
    pub fn new(args: &ClientArgs, trust: &Path) -> anyhow::Result<RelyingParty> {
        Ok(RelyingParty(chainlab_record::mtc::RelyingParty::from_args(
            args, trust,
        )?))
    }

    /// Verifies `end_entity`; a failure is an invalid certificate naming the check.
    pub fn verify(
        &self,
        end_entity: &CertificateDer<'_>,
        algorithms: &WebPkiSupportedAlgorithms,
    ) -> Result<(), rustls::Error> {
        match self.0.verify(end_entity, &WebPkiSignatures(algorithms)) {
            Ok(c) => {
                CHECKED.with(|n| *n.borrow_mut() = Some(MtcChecked::from(&c)));
                Ok(())
            }
            Err(f) => Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                OtherError(Arc::new(MtcFailure(f.to_string()))),
            ))),
        }
    }
}

#[derive(Debug)]
struct MtcFailure(String);

impl std::fmt::Display for MtcFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MtcFailure {}

/// Cosigner signatures with the provider's webpki algorithms: the one whose key algorithm
/// matches the cosigner's, with the curve's own hash for ECDSA.
struct WebPkiSignatures<'a>(&'a WebPkiSupportedAlgorithms);

impl SignatureCheck for WebPkiSignatures<'_> {
    fn verify(&self, spki: &[u8], message: &[u8], signature: &[u8]) -> Result<(), String> {
        let outer =
            der::expect(spki, der::SEQUENCE, "SubjectPublicKeyInfo").map_err(|e| e.to_string())?;
        let parts = der::elements(outer.contents).map_err(|e| e.to_string())?;
        let [alg, key] = parts[..] else {
            return Err("a SubjectPublicKeyInfo of other than two elements".into());
        };
        let key = match key.contents.split_first() {
            Some((0, bits)) => bits,
            _ => return Err("a public key that is not whole octets".into()),
        };
        let p384 = alg_id::ECDSA_P384;
        let wanted_hash = if alg.contents == p384.as_ref() {
            alg_id::ECDSA_SHA384
        } else {
            alg_id::ECDSA_SHA256
        };
        let candidate = self.0.all.iter().find(|a| {
            a.public_key_alg_id().as_ref() == alg.contents
                && (!is_ecdsa(alg.contents) || a.signature_alg_id() == wanted_hash)
        });
        let Some(algorithm) = candidate else {
            return Err("a cosigner key algorithm this stack does not verify".into());
        };
        algorithm
            .verify_signature(key, message, signature)
            .map_err(|_| "the signature does not verify".into())
    }
}

fn is_ecdsa(alg: &[u8]) -> bool {
    alg == alg_id::ECDSA_P256.as_ref()
        || alg == alg_id::ECDSA_P384.as_ref()
        || alg == alg_id::ECDSA_P521.as_ref()
}
