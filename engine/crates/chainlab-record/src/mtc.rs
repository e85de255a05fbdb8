//! The client's Merkle Tree Certificate relying party, whatever the stack: what
//! `--mtc-trust`, `--mtc-landmarks`, `--mtc-cosigners-required` and `--servername` configure,
//! checked now with `chainlab_mtc::verify`, and what a record keeps of a verification. Each
//! engine supplies its stack's signature check and its hook into the handshake.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use chainlab_mtc::verify::{self, Checked, Failure, Kind, Policy, SignatureCheck, Trust};

use crate::args::ClientArgs;
use crate::record::MtcChecked;

/// The relying party of `--mtc-trust`.
#[derive(Debug)]
pub struct RelyingParty {
    trust: Trust,
    landmarks: bool,
    cosigners_required: usize,
    server_name: String,
}

impl RelyingParty {
    pub fn from_args(args: &ClientArgs, trust: &Path) -> anyhow::Result<RelyingParty> {
        Ok(RelyingParty {
            trust: Trust::read(trust)?,
            landmarks: args.mtc_landmarks,
            cosigners_required: args.mtc_cosigners_required,
            server_name: args.servername.clone(),
        })
    }

    /// Verifies the end-entity certificate `der` now.
    pub fn verify(&self, der: &[u8], signatures: &dyn SignatureCheck) -> Result<Checked, Failure> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let policy = Policy {
            landmarks: self.landmarks,
            cosigners_required: self.cosigners_required,
            now,
            server_name: self.server_name.clone(),
        };
        verify::verify(der, &self.trust, &policy, signatures)
    }
}

impl From<&Checked> for MtcChecked {
    fn from(c: &Checked) -> MtcChecked {
        MtcChecked {
            mtc_kind: match c.kind {
                Kind::Standalone => "standalone",
                Kind::Landmark => "landmark",
            },
            mtc_proof_hashes: c.proof_hashes as u64,
            mtc_signatures_checked: c.signatures_checked as u64,
        }
    }
}
