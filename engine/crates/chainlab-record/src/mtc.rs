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
    /// The newest landmark held (`--mtc-landmark-lag`); None: every one of the file.
    held_through: Option<u64>,
    cosigners_required: usize,
    server_name: String,
}

impl RelyingParty {
    pub fn from_args(args: &ClientArgs, trust: &Path) -> anyhow::Result<RelyingParty> {
        let trust = Trust::read(trust)?;
        let held = held_through(&trust, args.mtc_landmark_lag);
        Ok(RelyingParty {
            landmarks: args.mtc_landmarks && held != Some(None),
            held_through: held.flatten(),
            trust,
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
            held_through: self.held_through,
            cosigners_required: self.cosigners_required,
            now,
            server_name: self.server_name.clone(),
        };
        verify::verify(der, &self.trust, &policy, signatures)
    }
}

/// The newest landmark a client lagging `lag` intervals holds: None without a lag (every
/// landmark of the file), Some(None) when the lag reaches the log's start (landmark 0, the
/// empty tree: it holds none), else Some(newest less the lag), which may be older than
/// every landmark the file has subtrees of (the client holds only landmarks the server has
/// no certificate for).
pub fn held_through(trust: &Trust, lag: u64) -> Option<Option<u64>> {
    if lag == 0 {
        return None;
    }
    let newest = trust.newest_landmark()?;
    Some(newest.checked_sub(lag).filter(|&n| n >= 1))
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
            mtc_landmark: c.landmark,
        }
    }
}
