//! Merkle Tree Certificates on the BoringSSL stack, checked by BoringSSL's own X.509 verifier
//! (`crypto/x509/x509_mtc.cc`, draft-ietf-plants-merkle-tree-certs-07), not by chainlab's:
//! with `--mtc-trust <pki>/mtc/trust.json`, the client's trust store holds the MTC CA
//! certificate written beside it (`ca-cert.pem`, `pki --mtc-encoding plants-07`) and its
//! verify parameters set `X509_V_FLAG_USE_MTC_DRAFT_PLANTS_07`. BoringSSL then checks an
//! MTC whose issuer is that CA: the proof's form, the serial against the CA's range, the
//! inclusion proof to the subtree, and the CA cosigner's signature over it (other cosigners'
//! signatures are not checked); then the validity window and the name, as for any leaf.
//!
//! What it does not do: landmark-relative certificates (no landmark subtrees can be given to
//! it; one fails as a certificate signature failure, unless the client holds the landmarks,
//! `--mtc-landmarks`, and chainlab's relying party checks it: `anchors`), and, refused by
//! this engine, cosigners besides the CA (`--mtc-cosigners-required`) and the early
//! experiments' OIDs (no CA certificate names them). The server needs nothing: it sends the
//! MTC as its chain.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use boring::ssl::SslContextBuilder;
use boring::x509::store::X509StoreBuilder;
use boring_sys as ffi;
use chainlab_mtc::entry::Certificate;
use chainlab_mtc::proof::MtcProof;
use chainlab_mtc::Encoding;
use chainlab_record::record::MtcChecked;

use crate::keys::read_certificates;

/// The MTC CA certificate's file beside `trust.json` (chainlab-engine's `pki::mtc`).
pub const CA_CERT_FILE: &str = "ca-cert.pem";

/// Signatures BoringSSL's verifier checks of a standalone certificate: the CA cosigner's.
const SIGNATURES_CHECKED: u64 = 1;

/// The client's trust in the MTC CA of `trust` (its `trust.json`), in place of `--ca`.
pub fn install_verifier(builder: &mut SslContextBuilder, trust: &Path) -> anyhow::Result<()> {
    // The relying party's file is read as on every stack, so a bad one fails alike.
    chainlab_mtc::verify::Trust::read(trust)?;
    let ca_cert = ca_cert_file(trust);
    if !ca_cert.is_file() {
        bail!(
            "--mtc-trust {}: no MTC CA certificate {} beside it; BoringSSL verifies MTCs of \
             the -07 encoding against their CA's certificate, which `pki --mtc-batch N \
             --mtc-encoding plants-07` (the default) writes",
            trust.display(),
            ca_cert.display()
        );
    }
    let mut store = X509StoreBuilder::new()?;
    for cert in read_certificates(&ca_cert, "--mtc-trust")? {
        store.add_cert(cert)?;
    }
    builder.set_cert_store(store.build());
    // SAFETY: the context's own parameters, borrowed while `builder` is; the flag is one
    // BoringSSL defines (x509.h), which the safe crate does not name.
    let ok = unsafe {
        ffi::X509_VERIFY_PARAM_set_flags(
            ffi::SSL_CTX_get0_param(builder.as_ptr()),
            ffi::X509_V_FLAG_USE_MTC_DRAFT_PLANTS_07 as _,
        )
    };
    if ok != 1 {
        return Err(anyhow!(
            "BoringSSL refused X509_V_FLAG_USE_MTC_DRAFT_PLANTS_07"
        ));
    }
    Ok(())
}

/// `<dir of trust.json>/ca-cert.pem`.
pub fn ca_cert_file(trust: &Path) -> PathBuf {
    trust.parent().unwrap_or(Path::new(".")).join(CA_CERT_FILE)
}

/// What BoringSSL checked of the verified end-entity certificate `der`, for the record: a
/// standalone MTC (the only kind it accepts), its proof's hashes and the one signature.
pub fn checked(der: &[u8]) -> Option<MtcChecked> {
    let cert = Certificate::parse(der).ok()?;
    let proof = MtcProof::decode(cert.signature, Encoding::Plants07).ok()?;
    Some(MtcChecked {
        mtc_kind: "standalone",
        mtc_proof_hashes: proof.inclusion_proof.len() as u64,
        mtc_signatures_checked: SIGNATURES_CHECKED,
        mtc_landmark: None,
    })
}
