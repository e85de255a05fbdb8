//! `pki --mtc-batch N`: Merkle Tree Certificates for the hierarchy's leaf key, beside its
//! X.509 chain, so the two can be compared with the same key on the same server.
//!
//! The log model (where the subscriber's entry sits, which entries are synthetic, which
//! landmarks exist) is `chainlab_mtc::issue`'s; this module makes the keys and signatures
//! with OpenSSL, as for every other certificate here, and writes `<out>/mtc/`:
//!
//! - `standalone.pem`: the proof to the batch's subtree and the subtree signatures of the CA
//!   cosigner and of every `--mtc-cosigners` cosigner;
//! - `landmark.pem`: the same proof to the same (landmark) subtree, no signatures;
//! - with `--mtc-renewals L` above 1, `landmark-<n>.pem` for each landmark `n` the
//!   subscriber renewed in (`landmark.pem` is the newest's), as a server holds the
//!   certificates of its last L landmarks;
//! - `trust.json`: the relying party's configuration (CA ID, cosigners and their keys, the
//!   landmark subtrees it would hold);
//! - `ca-cert.pem` (`--mtc-encoding plants-07`): the MTC CA certificate, what a relying party
//!   verifying MTCs with its X.509 code (BoringSSL) takes as trust anchor;
//! - `landmarks.txt`: the CA's landmark list in the draft's format;
//! - `ca.key`, `cosigner-<k>.key`: the cosigners' keys;
//! - `manifest.json`: what was issued and its sizes.
//!
//! Deterministic from `--seed` like the rest of the directory.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chainlab_mtc::issue::{self, Batch, Placement};
use chainlab_mtc::proof::{self, SubtreeSignature};
use chainlab_mtc::verify::{self, Cosigner, Trust, TrustedSubtree};
use chainlab_mtc::Encoding;
use openssl::x509::X509;
use serde::Serialize;

use super::cert;
use super::files::{write_file, Secrecy};
use super::hierarchy::{generate, Hierarchy, Spec};
use super::keys::{self, Derivation};
use crate::algorithms::{self, Algorithm};
use crate::cli::PkiArgs;

/// The MTC directory inside a hierarchy's directory.
pub const DIR: &str = "mtc";

/// Schema id of `mtc/manifest.json`.
pub const SCHEMA: &str = "chainlab.mtc/1";

/// The CA's ID: under 32473, the private enterprise number reserved for documentation
/// (RFC 5612), as the draft's own examples use.
pub const CA_ID: &str = "32473.1";

/// The MTC CA certificate's file in the MTC directory (`--mtc-encoding plants-07`).
pub const CA_CERT_FILE: &str = "ca-cert.pem";

/// The MTC CA certificate's own serial (it is the only certificate the CA signs itself).
const CA_CERT_SERIAL: u64 = 1;

/// The trust anchor ID of further cosigner `k` (1-based).
fn cosigner_id(k: usize) -> String {
    format!("32473.2.{k}")
}

/// Checked `--mtc-*` arguments.
pub struct MtcSpec {
    pub batch: u64,
    /// Landmark intervals the subscriber renewed in (`--mtc-renewals`).
    pub landmarks: u64,
    pub ca: &'static Algorithm,
    pub cosigners: Vec<&'static Algorithm>,
    pub validity: Option<(String, String)>,
    pub encoding: Encoding,
}

impl MtcSpec {
    /// None without `--mtc-batch`; an error for `--mtc-*` flags without it or bad values.
    pub fn from_args(args: &PkiArgs) -> Result<Option<MtcSpec>> {
        let Some(batch) = args.mtc_batch else {
            if !args.mtc_cosigners.is_empty() || !args.mtc_validity.is_empty() {
                bail!("--mtc-cosigners and --mtc-validity need --mtc-batch N (the log batch size)");
            }
            if args.mtc_renewals != 1 {
                bail!("--mtc-renewals needs --mtc-batch N (the log batch size)");
            }
            if args.mtc_encoding != Encoding::Plants07 {
                bail!("--mtc-encoding needs --mtc-batch N (the log batch size)");
            }
            return Ok(None);
        };
        Placement::new(batch, b"").map_err(|e| anyhow::anyhow!("--mtc-batch {batch}: {e}"))?;
        if !(1..=issue::MAX_LANDMARKS).contains(&args.mtc_renewals) {
            bail!(
                "--mtc-renewals {}: allowed: 1 to {} landmark intervals",
                args.mtc_renewals,
                issue::MAX_LANDMARKS
            );
        }
        let ca = algorithms::lookup(&args.mtc_ca).context("--mtc-ca")?;
        let cosigners = args
            .mtc_cosigners
            .iter()
            .enumerate()
            .map(|(i, name)| {
                algorithms::lookup(name)
                    .with_context(|| format!("--mtc-cosigners position {}", i + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        let validity = match &args.mtc_validity[..] {
            [] => None,
            [from, to] => {
                // GeneralizedTime of a fixed width: text order is time order.
                let shape = |t: &str| {
                    t.len() == 15 && t.ends_with('Z') && t[..14].bytes().all(|b| b.is_ascii_digit())
                };
                if !shape(from) || !shape(to) {
                    bail!("--mtc-validity {from},{to}: allowed: FROM,TO as YYYYMMDDHHMMSSZ each");
                }
                if from >= to {
                    bail!(
                        "--mtc-validity {from},{to}: its start is not before its end; allowed: \
                         FROM,TO with FROM earlier than TO"
                    );
                }
                Some((from.clone(), to.clone()))
            }
            other => bail!(
                "--mtc-validity {}: allowed: FROM,TO as YYYYMMDDHHMMSSZ each",
                other.join(",")
            ),
        };
        Ok(Some(MtcSpec {
            batch,
            landmarks: args.mtc_renewals,
            ca,
            cosigners,
            validity,
            encoding: args.mtc_encoding,
        }))
    }
}

#[derive(Debug, Serialize)]
pub struct MtcManifest {
    pub schema: &'static str,
    pub ca_id: &'static str,
    /// `plants-07` or `experimental` (`--mtc-encoding`).
    pub encoding: &'static str,
    /// The MTC CA certificate's file (`plants-07` only).
    pub ca_cert_file: Option<&'static str>,
    pub log_number: u64,
    pub batch: u64,
    /// `[start, end)` of the batch in the log.
    pub interval: [u64; 2],
    pub index: u64,
    pub serial: String,
    /// The subtree both certificates prove inclusion in.
    pub subtree: [u64; 2],
    pub proof_hashes: usize,
    pub proof_bytes: usize,
    pub leaf_algorithm: &'static str,
    pub cosigners: Vec<CosignerEntry>,
    pub standalone: CertEntry,
    pub landmark: CertEntry,
    /// The landmark-relative MTC of every landmark the subscriber renewed in, oldest first
    /// (`--mtc-renewals`; the last is `landmark`'s).
    pub landmarks: Vec<LandmarkEntry>,
    /// The X.509 leaf with the same key, for comparison.
    pub x509_leaf_der_bytes: usize,
    pub trust_file: &'static str,
    pub landmarks_file: &'static str,
}

#[derive(Debug, Serialize)]
pub struct CosignerEntry {
    pub id: String,
    pub role: &'static str,
    pub algorithm: &'static str,
    pub key_file: String,
    pub signature_bytes: usize,
}

#[derive(Debug, Serialize)]
pub struct LandmarkEntry {
    pub landmark: u64,
    /// Its trust anchor ID (the log's ID and the landmark's number).
    pub id: String,
    pub index: u64,
    pub subtree: [u64; 2],
    pub proof_hashes: usize,
    pub cert: CertEntry,
}

#[derive(Debug, Clone, Serialize)]
pub struct CertEntry {
    pub file: String,
    pub der_bytes: usize,
    /// The MTCProof (signatureValue) alone.
    pub proof_structure_bytes: usize,
    pub sha256: String,
}

/// What `pki` prints about the MTCs besides the manifest: the time to hash the batch.
#[derive(Debug, Serialize)]
pub struct Issuance {
    pub batch: u64,
    pub hash_ns: u64,
}

/// Issues both certificates for `hierarchy`'s leaf and writes `<out>/mtc/`.
pub fn issue(hierarchy: &Hierarchy, spec: &MtcSpec, out: &Path) -> Result<(MtcManifest, Issuance)> {
    let dir = out.join(DIR);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("--out {}: cannot create {DIR}/", out.display()))?;
    let seed = hierarchy.spec.seed.as_str();
    let leaf = hierarchy.leaf();
    let leaf_der = leaf.cert.to_der()?;
    // One placement per landmark interval the subscriber renewed in, oldest first; the
    // newest is the standalone certificate's and `landmark.pem`'s.
    let placements = (0..spec.landmarks)
        .map(|j| Placement::nth(spec.batch, seed.as_bytes(), j))
        .collect::<Result<Vec<_>>>()?;
    let validity = spec
        .validity
        .as_ref()
        .map(|(a, b)| (a.as_str(), b.as_str()));
    let tbs_of = |p: &Placement| {
        issue::tbs_from_x509(&leaf_der, CA_ID, p.serial(), validity, spec.encoding)
            .context("--mtc-validity")
    };
    let started = Instant::now();
    let mut renewals = Vec::new();
    for (j, placement) in placements.iter().enumerate() {
        let tbs = tbs_of(placement)?;
        let batch =
            Batch::new(placement.clone(), &tbs, seed.as_bytes())?.with_renewals(&placements[..j]);
        let (inclusion, root) = batch.proof();
        let subtrees = batch.landmark_subtrees(root);
        renewals.push((tbs, inclusion, root, subtrees));
    }
    let hash_ns = started.elapsed().as_nanos() as u64;
    let placement = placements.last().expect("at least one landmark").clone();
    let (tbs, inclusion, root, _) = renewals.last().expect("at least one landmark").clone();

    let log = proof::log_id(CA_ID, issue::LOG_NUMBER);
    let (start, end) = placement.subtree;
    let mut cosigners = Vec::new();
    let mut trusted = Vec::new();
    let mut signatures = Vec::new();
    let roles = std::iter::once((CA_ID.to_owned(), "ca", spec.ca, "ca.key".to_owned())).chain(
        spec.cosigners.iter().enumerate().map(|(i, &alg)| {
            (
                cosigner_id(i + 1),
                "cosigner",
                alg,
                format!("cosigner-{}.key", i + 1),
            )
        }),
    );
    for (id, role, algorithm, key_file) in roles {
        let label = format!("mtc-{role}-{id}");
        let key = keys::generate(algorithm, &Derivation::named(seed, &label, algorithm))
            .with_context(|| format!("generating the MTC {role} key {id} ({})", algorithm.name))?;
        if role == "ca" && spec.encoding == Encoding::Plants07 {
            write_ca_certificate(&dir, &key, algorithm)?;
        }
        let message = proof::cosigned_message(&id, &log, start, end, &root);
        let signature = cert::sign_message(&key, algorithm, &message)
            .with_context(|| format!("signing the subtree as {id} ({})", algorithm.name))?;
        write_file(
            &dir,
            &key_file,
            &key.private_key_to_pem_pkcs8()?,
            Secrecy::Private,
        )?;
        trusted.push(Cosigner {
            id: id.clone(),
            role: role.to_owned(),
            algorithm: algorithm.name.to_owned(),
            spki: verify::hex(&key.public_key_to_der()?),
        });
        cosigners.push(CosignerEntry {
            id: id.clone(),
            role,
            algorithm: algorithm.name,
            key_file,
            signature_bytes: signature.len(),
        });
        signatures.push(SubtreeSignature {
            cosigner_id: proof::binary_id(&id)?,
            signature,
        });
    }
    let standalone_proof =
        issue::mtc_proof(&placement, inclusion.clone(), signatures, spec.encoding);
    let landmark_proof = issue::mtc_proof(&placement, inclusion, Vec::new(), spec.encoding);
    let standalone = write_cert(&dir, "standalone.pem", &tbs, &standalone_proof)?;
    let landmark = write_cert(&dir, "landmark.pem", &tbs, &landmark_proof)?;
    let mut landmarks = Vec::new();
    let mut trusted_subtrees = Vec::new();
    for (p, (tbs, inclusion, _, subtrees)) in placements.iter().zip(&renewals) {
        let number = p.landmark();
        let proof = issue::mtc_proof(p, inclusion.clone(), Vec::new(), spec.encoding);
        let cert = if spec.landmarks == 1 {
            landmark.clone()
        } else {
            write_cert(&dir, &landmark_file(number), tbs, &proof)?
        };
        landmarks.push(LandmarkEntry {
            landmark: number,
            id: proof::landmark_id(CA_ID, issue::LOG_NUMBER, number),
            index: p.index,
            subtree: [p.subtree.0, p.subtree.1],
            proof_hashes: proof.inclusion_proof.len(),
            cert,
        });
        trusted_subtrees.extend(subtrees.iter().map(|&((s, e), h)| TrustedSubtree {
            log_number: issue::LOG_NUMBER,
            start: s,
            end: e,
            hash: verify::hex(&h),
            landmark: Some(number),
        }));
    }

    let trust = Trust {
        schema: verify::TRUST_SCHEMA.to_owned(),
        ca_id: CA_ID.to_owned(),
        hash: verify::LOG_HASH.to_owned(),
        cosigners: trusted,
        trusted_subtrees,
        landmark_id: Some(proof::landmark_id(
            CA_ID,
            issue::LOG_NUMBER,
            placement.landmark(),
        )),
    };
    write_json(&dir, "trust.json", &trust)?;
    write_file(
        &dir,
        "landmarks.txt",
        placement.landmarks_text().as_bytes(),
        Secrecy::Public,
    )?;
    let manifest = MtcManifest {
        schema: SCHEMA,
        ca_id: CA_ID,
        encoding: spec.encoding.name(),
        ca_cert_file: (spec.encoding == Encoding::Plants07).then_some(CA_CERT_FILE),
        log_number: issue::LOG_NUMBER,
        batch: spec.batch,
        interval: [placement.interval.0, placement.interval.1],
        index: placement.index,
        serial: format!("{:X}", placement.serial()),
        subtree: [start, end],
        proof_hashes: standalone_proof.inclusion_proof.len(),
        proof_bytes: standalone_proof.inclusion_proof.len() * chainlab_mtc::HASH_SIZE,
        leaf_algorithm: leaf.algorithm.name,
        cosigners,
        standalone,
        landmark,
        landmarks,
        x509_leaf_der_bytes: leaf_der.len(),
        trust_file: "trust.json",
        landmarks_file: "landmarks.txt",
    };
    write_json(&dir, "manifest.json", &manifest)?;
    Ok((
        manifest,
        Issuance {
            batch: spec.batch,
            hash_ns,
        },
    ))
}

/// The landmark-relative MTC of landmark `n` when the subscriber renewed in several.
pub fn landmark_file(n: u64) -> String {
    format!("landmark-{n}.pem")
}

/// Writes one certificate as PEM, read back through OpenSSL so a file no X.509 parser
/// accepts is never written.
fn write_cert(dir: &Path, file: &str, tbs: &[u8], proof: &proof::MtcProof) -> Result<CertEntry> {
    let der = issue::certificate(tbs, proof)?;
    let x509 =
        X509::from_der(&der).with_context(|| format!("OpenSSL does not parse the MTC {file}"))?;
    write_file(dir, file, &x509.to_pem()?, Secrecy::Public)?;
    Ok(CertEntry {
        file: file.to_owned(),
        der_bytes: der.len(),
        proof_structure_bytes: proof.encode().len(),
        sha256: verify::hex(&openssl::sha::sha256(&der)),
    })
}

/// Writes the MTC CA certificate for the CA cosigner `key`: its ID, key and algorithm, and
/// the serials of log `issue::LOG_NUMBER`; self-signed, valid as long as a CA of the
/// hierarchy (`chainlab_mtc::ca`).
fn write_ca_certificate(
    dir: &Path,
    key: &openssl::pkey::PKey<openssl::pkey::Private>,
    algorithm: &'static Algorithm,
) -> Result<()> {
    let spki = key.public_key_to_der()?;
    let signature_algorithm = cert::signature_algorithm_der(key, algorithm)?;
    let (from, to) = (
        chainlab_mtc::der::tlv(
            chainlab_mtc::der::UTC_TIME,
            &cert::NOT_BEFORE.as_bytes()[2..],
        ),
        chainlab_mtc::der::tlv(
            chainlab_mtc::der::UTC_TIME,
            &cert::CA_NOT_AFTER.as_bytes()[2..],
        ),
    );
    let ca = chainlab_mtc::ca::CaCertificate {
        ca_id: CA_ID,
        spki: &spki,
        algorithm: &signature_algorithm,
        serials: (issue::LOG_NUMBER << 48, ((issue::LOG_NUMBER + 1) << 48) - 1),
        serial: CA_CERT_SERIAL,
        validity: (&from, &to),
    };
    let tbs = ca.tbs()?;
    let signature = cert::sign_message(key, algorithm, &tbs)
        .with_context(|| format!("signing the MTC CA certificate ({})", algorithm.name))?;
    let der = ca.certificate(&tbs, &signature);
    let x509 = X509::from_der(&der).context("OpenSSL does not parse the MTC CA certificate")?;
    write_file(dir, CA_CERT_FILE, &x509.to_pem()?, Secrecy::Public)
}

fn write_json<T: Serialize>(dir: &Path, file: &str, value: &T) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    write_file(dir, file, &json, Secrecy::Public)
}

/// `primitives --op mtc-verify`: what a client does to accept a landmark-relative MTC of a
/// `leaf` key, without the CertificateVerify: parse the certificate, rebuild and hash its
/// log entry (the key's SPKI hashed), evaluate an inclusion proof of `hashes` hashes and
/// compare the result with the trusted landmark subtree; then the validity and name checks.
/// The proof's hashes are arbitrary (a subtree of 2^hashes entries, entry 0): evaluating a
/// proof costs the same whatever the hashes are.
pub fn verify_operation(
    leaf: &'static Algorithm,
    hashes: usize,
) -> Result<Box<dyn FnMut() -> Result<()>>> {
    if !(1..=48).contains(&hashes) {
        bail!("--message-bytes {hashes}: an mtc-verify proof has 1 to 48 hashes");
    }
    let spec = Spec::new(
        &[leaf.name.to_owned()],
        "primitives",
        &["localhost".to_owned()],
    )?;
    let hierarchy = generate(&spec)?;
    let leaf_der = hierarchy.leaf().cert.to_der()?;
    let end = 1u64 << hashes;
    let tbs = issue::tbs_from_x509(
        &leaf_der,
        CA_ID,
        issue::LOG_NUMBER << 48,
        None,
        Encoding::Plants07,
    )?;
    let inclusion: Vec<chainlab_mtc::Hash> = (0..hashes).map(|i| [i as u8; 32]).collect();
    let proof = proof::MtcProof {
        encoding: Encoding::Plants07,
        extensions: Vec::new(),
        start: 0,
        end,
        inclusion_proof: inclusion.clone(),
        signatures: Vec::new(),
    };
    let cert = issue::certificate(&tbs, &proof)?;
    let tbs_element = chainlab_mtc::der::expect(&tbs, chainlab_mtc::der::SEQUENCE, "TBS")?;
    let entry = chainlab_mtc::entry::Tbs::parse(tbs_element)?.log_entry(&proof.extensions_field());
    let root = chainlab_mtc::tree::evaluate(
        &inclusion,
        0,
        &chainlab_mtc::tree::leaf_hash(&entry),
        0,
        end,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let trust = Trust {
        schema: verify::TRUST_SCHEMA.to_owned(),
        ca_id: CA_ID.to_owned(),
        hash: verify::LOG_HASH.to_owned(),
        cosigners: Vec::new(),
        trusted_subtrees: vec![TrustedSubtree {
            log_number: issue::LOG_NUMBER,
            start: 0,
            end,
            hash: verify::hex(&root),
            landmark: None,
        }],
        landmark_id: None,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let policy = verify::Policy {
        landmarks: true,
        held_through: None,
        cosigners_required: 0,
        now,
        server_name: "localhost".to_owned(),
    };
    Ok(Box::new(move || {
        verify::verify(&cert, &trust, &policy, &verify::NoSignatures)
            .map(drop)
            .map_err(|f| anyhow::anyhow!("the MTC made beforehand did not verify: {f}"))
    }))
}
