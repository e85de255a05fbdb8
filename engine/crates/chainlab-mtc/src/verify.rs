//! The relying party (the draft's "Verifying Certificate Signatures" and the checks X.509
//! path validation keeps): the certificate's log entry is hashed, its inclusion proof
//! evaluated, and the subtree it leads to either matches a trusted landmark subtree or is
//! vouched for by the CA cosigner and enough other cosigners; then the validity window and
//! the name. Each failure names the check that failed.
//!
//! Signatures are checked by the engine's own stack behind [`SignatureCheck`], so each
//! engine verifies cosignatures the way it verifies any other signature.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::der;
use crate::entry::{ca_id_of, Certificate};
use crate::proof::{binary_id, cosigned_message, log_id, MtcProof};
use crate::{tree, Encoding, Hash};

/// The log hash a trust file may name (`HASH_SIZE`'s SHA-256).
pub const LOG_HASH: &str = "sha256";

/// Schema id of the relying party's configuration file (`mtc/trust.json`).
pub const TRUST_SCHEMA: &str = "chainlab.mtc-trust/1";

/// What a relying party is configured with for one MTC CA (the draft's "Relying Party
/// Configuration"): the CA ID, its cosigners and their keys, and the trusted subtrees of
/// the landmarks it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trust {
    pub schema: String,
    pub ca_id: String,
    pub hash: String,
    pub cosigners: Vec<Cosigner>,
    pub trusted_subtrees: Vec<TrustedSubtree>,
    /// The trust anchor ID of the landmark whose subtrees `trusted_subtrees` are (what a
    /// client holding them requests in `trust_anchors`); absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landmark_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cosigner {
    /// Trust anchor ID, ASCII form (the CA cosigner's is the CA ID).
    pub id: String,
    /// "ca" for the CA cosigner, "cosigner" for the others.
    pub role: String,
    /// `pki --chain` name of its key's algorithm.
    pub algorithm: String,
    /// SubjectPublicKeyInfo DER, lowercase hex.
    pub spki: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrustedSubtree {
    pub log_number: u64,
    pub start: u64,
    pub end: u64,
    /// Lowercase hex.
    pub hash: String,
    /// The landmark whose subtree this is; absent in files written before (each held the
    /// subtrees of one landmark, `Trust::landmark_id`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landmark: Option<u64>,
}

impl Trust {
    pub fn read(path: &std::path::Path) -> anyhow::Result<Trust> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--mtc-trust {}: cannot read: {e}", path.display()))?;
        let trust: Trust = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("--mtc-trust {}: {e}", path.display()))?;
        if trust.schema != TRUST_SCHEMA {
            anyhow::bail!(
                "--mtc-trust {}: schema {:?}, expected {TRUST_SCHEMA:?}",
                path.display(),
                trust.schema
            );
        }
        if trust.hash != LOG_HASH {
            anyhow::bail!(
                "--mtc-trust {}: hash {:?}; allowed: {LOG_HASH:?} (the only log hash chainlab \
                 computes)",
                path.display(),
                trust.hash
            );
        }
        Ok(trust)
    }

    /// The newest landmark whose subtrees the file holds (None: the file names none).
    pub fn newest_landmark(&self) -> Option<u64> {
        self.trusted_subtrees
            .iter()
            .filter_map(|t| t.landmark)
            .max()
            .or_else(|| {
                self.landmark_id
                    .as_deref()
                    .and_then(|id| id.rsplit('.').next())
                    .and_then(|n| n.parse().ok())
            })
    }

    /// Whether a relying party holding landmarks through `held_through` holds `t`'s (a
    /// subtree of a file naming no landmarks is the one landmark's it names).
    pub fn holds(t: &TrustedSubtree, held_through: Option<u64>) -> bool {
        match (t.landmark, held_through) {
            (Some(n), Some(newest)) => n <= newest,
            _ => true,
        }
    }
}

/// How the relying party decides.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Accept a proof to a trusted landmark subtree (the client holds the landmarks).
    pub landmarks: bool,
    /// With `landmarks`: the newest landmark the client holds, as a client whose landmark
    /// updates lag; None: every landmark of the trust file.
    pub held_through: Option<u64>,
    /// Valid signatures needed from cosigners other than the CA (whose is always needed).
    pub cosigners_required: usize,
    /// Seconds since the Epoch the validity window is checked at.
    pub now: i64,
    /// The name the client asked for (a DNS name or an IP address).
    pub server_name: String,
}

/// A signature check by the engine's stack: `spki` is the signer's SubjectPublicKeyInfo
/// DER. ML-DSA and SLH-DSA sign the message itself with an empty context, ECDSA with the
/// curve's hash (DER signature), Ed25519 the message.
pub trait SignatureCheck {
    fn verify(&self, spki: &[u8], message: &[u8], signature: &[u8]) -> Result<(), String>;
}

/// The check of a relying party that expects no signatures (a landmark-relative
/// certificate carries none): any signature asked about is refused.
pub struct NoSignatures;

impl SignatureCheck for NoSignatures {
    fn verify(&self, _spki: &[u8], _message: &[u8], _signature: &[u8]) -> Result<(), String> {
        Err("no signature is expected here".into())
    }
}

/// Which kind of certificate was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Standalone,
    Landmark,
}

/// What the verification checked, for the record.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub kind: Kind,
    pub encoding: Encoding,
    pub proof_hashes: usize,
    pub signatures_checked: usize,
    pub subtree_start: u64,
    pub subtree_end: u64,
    /// The landmark whose held subtree a landmark-relative certificate proved inclusion in
    /// (None: standalone, or a trust file naming no landmark numbers).
    pub landmark: Option<u64>,
}

/// The check that fails when the client holds no landmark subtree for a certificate that
/// carries no signatures: what the draft's trust-anchor retry answers.
pub const LANDMARK_CHECK: &str = "landmark";

/// How a failure reads in a record's detail: `MTC <check> check failed: ...`.
pub fn failure_prefix(check: &str) -> String {
    format!("MTC {check} check failed")
}

/// A failed check: `check` names it (format, algorithm, issuer, serial, inclusion proof,
/// landmark, cosigners, validity, name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub check: &'static str,
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", failure_prefix(self.check), self.detail)
    }
}

fn fail<T>(check: &'static str, detail: impl Into<String>) -> Result<T, Failure> {
    Err(Failure {
        check,
        detail: detail.into(),
    })
}

/// Verifies the end-entity certificate `der` as a Merkle Tree Certificate.
pub fn verify(
    der: &[u8],
    trust: &Trust,
    policy: &Policy,
    signatures: &dyn SignatureCheck,
) -> Result<Checked, Failure> {
    let cert = Certificate::parse(der).or_else(|e| fail("format", e.to_string()))?;
    // Either encoding's id-alg-mtcProof, the same in the certificate and its TBS.
    let Some(encoding) = Encoding::ALL.into_iter().find(|&e| {
        let mtc = crate::issue::mtc_algorithm(e).expect("a constant OID");
        cert.signature_algorithm.raw == mtc.as_slice() && cert.tbs.signature.raw == mtc.as_slice()
    }) else {
        return fail(
            "algorithm",
            "the signature algorithm is not id-alg-mtcProof (of -07 or the early experiments)",
        );
    };
    let proof =
        MtcProof::decode(cert.signature, encoding).or_else(|e| fail("format", e.to_string()))?;
    match ca_id_of(&cert.tbs.issuer) {
        Some((id, named)) if id == trust.ca_id && named == encoding => {}
        other => {
            return fail(
                "issuer",
                format!(
                    "issuer {other:?} is not the trusted CA {} as {} names it",
                    trust.ca_id,
                    encoding.name()
                ),
            )
        }
    }
    let serial = der::integer_value(&cert.tbs.serial).or_else(|e| fail("serial", e.to_string()))?;
    let (log_number, index) = (serial >> 48, serial & ((1 << 48) - 1));
    if log_number == 0 {
        return fail("serial", format!("serial {serial} names log 0"));
    }
    let entry_hash = tree::leaf_hash(&cert.tbs.log_entry(&proof.extensions_field()));
    let subtree_hash = tree::evaluate(
        &proof.inclusion_proof,
        index,
        &entry_hash,
        proof.start,
        proof.end,
    )
    .or_else(|e| fail("inclusion proof", e.to_string()))?;
    let (start, end) = (proof.start, proof.end);
    let held = trust.trusted_subtrees.iter().find(|t| {
        policy.landmarks
            && Trust::holds(t, policy.held_through)
            && t.log_number == log_number
            && t.start == start
            && t.end == end
    });
    let landmark = held.and_then(|t| t.landmark);
    let (kind, signatures_checked) = match held {
        Some(t) => {
            if hex(&subtree_hash) != t.hash {
                return fail(
                    "inclusion proof",
                    format!("the proof leads to a hash other than trusted landmark subtree [{start}, {end})"),
                );
            }
            (Kind::Landmark, 0)
        }
        None if proof.signatures.is_empty() => {
            return fail(
                LANDMARK_CHECK,
                format!(
                    "no trusted landmark subtree [{start}, {end}) of log {log_number} is held, \
                     and the certificate carries no signatures"
                ),
            )
        }
        None => {
            let n = cosignatures(&proof, trust, policy, signatures, log_number, &subtree_hash)?;
            (Kind::Standalone, n)
        }
    };
    check_validity(&cert, policy.now)?;
    check_name(&cert, &policy.server_name)?;
    Ok(Checked {
        kind,
        encoding,
        proof_hashes: proof.inclusion_proof.len(),
        signatures_checked,
        subtree_start: start,
        subtree_end: end,
        landmark,
    })
}

/// Checks every signature of a known cosigner (unknown ones are ignored, as the draft
/// requires); the CA's must verify and `cosigners_required` others must. Returns how many
/// signatures were checked.
fn cosignatures(
    proof: &MtcProof,
    trust: &Trust,
    policy: &Policy,
    check: &dyn SignatureCheck,
    log_number: u64,
    subtree_hash: &Hash,
) -> Result<usize, Failure> {
    let log = log_id(&trust.ca_id, log_number);
    let (mut checked, mut ca_ok, mut others_ok) = (0, false, 0);
    let mut bad = Vec::new();
    for s in &proof.signatures {
        let Some(cosigner) = trust
            .cosigners
            .iter()
            .find(|c| binary_id(&c.id).ok().as_deref() == Some(s.cosigner_id.as_slice()))
        else {
            continue;
        };
        let spki = unhex(&cosigner.spki).or_else(|e| fail("cosigners", e))?;
        let message = cosigned_message(&cosigner.id, &log, proof.start, proof.end, subtree_hash);
        checked += 1;
        match check.verify(&spki, &message, &s.signature) {
            Ok(()) if cosigner.role == "ca" => ca_ok = true,
            Ok(()) => others_ok += 1,
            Err(e) => bad.push(format!("{} ({}): {e}", cosigner.id, cosigner.algorithm)),
        }
    }
    let because = if bad.is_empty() {
        String::new()
    } else {
        format!("; invalid: {}", bad.join(", "))
    };
    if !ca_ok {
        return fail(
            "cosigners",
            format!(
                "no valid signature of the CA cosigner {}{because}",
                trust.ca_id
            ),
        );
    }
    if others_ok < policy.cosigners_required {
        return fail(
            "cosigners",
            format!(
                "{others_ok} of the {} required cosigner signatures are valid{because}",
                policy.cosigners_required
            ),
        );
    }
    Ok(checked)
}

fn check_validity(cert: &Certificate<'_>, now: i64) -> Result<(), Failure> {
    let times =
        der::elements(cert.tbs.validity.contents).or_else(|e| fail("validity", e.to_string()))?;
    let [from, to] = times[..] else {
        return fail("validity", "not two times");
    };
    let (from, to) = (seconds(&from)?, seconds(&to)?);
    if now < from {
        return fail("validity", format!("not valid before {from} (now {now})"));
    }
    if now > to {
        return fail("validity", format!("expired at {to} (now {now})"));
    }
    Ok(())
}

/// UTCTime or GeneralizedTime (`...Z`) in seconds since the Epoch.
fn seconds(e: &der::Element<'_>) -> Result<i64, Failure> {
    let text = std::str::from_utf8(e.contents).unwrap_or("");
    let full = match (e.tag, text.len()) {
        (der::UTC_TIME, 13) => {
            let yy: i64 = text[..2].parse().unwrap_or(0);
            format!("{}{text}", if yy < 50 { "20" } else { "19" })
        }
        (der::GENERALIZED_TIME, 15) => text.to_owned(),
        _ => return fail("validity", format!("unreadable time {text:?}")),
    };
    let n = |a: usize, b: usize| {
        full[a..b]
            .parse::<i64>()
            .or_else(|_| fail("validity", format!("unreadable time {text:?}")))
    };
    let (y, m, d) = (n(0, 4)?, n(4, 6)?, n(6, 8)?);
    // Days from civil (H. Hinnant's algorithm), proleptic Gregorian.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + n(8, 10)? * 3600 + n(10, 12)? * 60 + n(12, 14)?)
}

/// The subjectAltName holds `name` (a DNS name, `*.` matching one label, or an address).
fn check_name(cert: &Certificate<'_>, name: &str) -> Result<(), Failure> {
    let san = der::oid_contents("2.5.29.17").expect("a constant OID");
    let mut names = Vec::new();
    for e in der::elements(cert.tbs.rest).unwrap_or_default() {
        if e.tag != 0xa3 {
            continue;
        }
        let Ok(list) = der::expect(e.contents, der::SEQUENCE, "Extensions") else {
            continue;
        };
        for ext in der::elements(list.contents).unwrap_or_default() {
            let parts = der::elements(ext.contents).unwrap_or_default();
            if parts.first().map(|p| p.contents) != Some(san.as_slice()) {
                continue;
            }
            let Some(value) = parts.last() else { continue };
            let Ok(general) = der::expect(value.contents, der::SEQUENCE, "GeneralNames") else {
                continue;
            };
            names.extend(der::elements(general.contents).unwrap_or_default());
        }
    }
    let ip: Option<IpAddr> = name.parse().ok();
    let matches = names.iter().any(|g| match (g.tag, ip) {
        (0x87, Some(IpAddr::V4(a))) => g.contents == a.octets(),
        (0x87, Some(IpAddr::V6(a))) => g.contents == a.octets(),
        (0x82, None) => {
            let dns = String::from_utf8_lossy(g.contents).to_ascii_lowercase();
            let want = name.to_ascii_lowercase();
            match dns.strip_prefix("*.") {
                Some(suffix) => want.split_once('.').is_some_and(|(_, rest)| rest == suffix),
                None => dns == want,
            }
        }
        _ => false,
    });
    if !matches {
        return fail(
            "name",
            format!("{name:?} is not among the certificate's subjectAltNames"),
        );
    }
    Ok(())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {text:.16}..."));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| format!("not hex: {text:.16}..."))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_to_epoch_seconds() {
        let utc = der::tlv(der::UTC_TIME, b"700101000000Z");
        assert_eq!(seconds(&der::read(&utc).unwrap().0), Ok(0));
        let gen = der::tlv(der::GENERALIZED_TIME, b"20261125231744Z");
        assert_eq!(seconds(&der::read(&gen).unwrap().0), Ok(1_795_648_664));
        let leap = der::tlv(der::UTC_TIME, b"000229120000Z");
        assert_eq!(seconds(&der::read(&leap).unwrap().0), Ok(951_825_600));
    }

    #[test]
    fn a_trust_file_naming_another_log_hash_is_refused() {
        let dir = std::env::temp_dir().join(format!("chainlab-mtc-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trust.json");
        let trust = |hash: &str| {
            serde_json::json!({"schema": TRUST_SCHEMA, "ca_id": "32473.1", "hash": hash,
                               "cosigners": [], "trusted_subtrees": []})
        };
        std::fs::write(&path, trust("sha384").to_string()).unwrap();
        let err = Trust::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("hash \"sha384\"") && err.contains("sha256"),
            "{err}"
        );
        std::fs::write(&path, trust(LOG_HASH).to_string()).unwrap();
        assert!(Trust::read(&path).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
