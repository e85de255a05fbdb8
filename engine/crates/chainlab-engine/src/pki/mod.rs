//! `pki`: X.509 hierarchies of depth 1 (a self-signed leaf) to 4 (root, two intermediates,
//! leaf), any accepted algorithm at any position, written into a fixed file layout with a
//! manifest. `docs/pki.md` documents the layout, the extensions and the determinism rules.
//!
//! Everything except RSA keys is a function of (`--seed`, role, algorithm): keys come from
//! seeds derived with SHAKE-256 (`keys`), serials likewise, validity dates are fixed and
//! signatures are deterministic (`cert`). The same command therefore writes byte-identical
//! files, which is what lets a campaign regenerate its hierarchies instead of shipping them.

mod cert;
pub mod composite;
mod files;
mod hierarchy;
pub mod key;
pub mod keys;
pub mod mtc;
mod role;
mod x509;

pub use hierarchy::{generate, Hierarchy, Issued, Spec, MAX_DEPTH};
pub use role::{roles, Role};

use files::{remove_stale, remove_stale_dir, write_file, Secrecy};

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::algorithms::Algorithm;
use crate::cli::{ChainPolicy, PkiArgs, Purpose};

/// Schema id of `manifest.json` and of the stdout summary.
pub const SCHEMA: &str = "chainlab.pki/1";
/// The revision of what `pki` writes for given inputs (algorithms, seed, purpose, MTC
/// options): `info` prints it, and the hierarchy cache is keyed by it with OpenSSL's and
/// liboqs' builds, not by the binary (chainlab.runner.pki). tests/pki_revision.rs holds the
/// digest of a fixed hierarchy's files: a change to them fails it until this is bumped.
/// 2: `mtc/trust.json` numbers each trusted subtree's landmark and `mtc/manifest.json`
/// lists the renewals (`--mtc-renewals`).
pub const REVISION: u32 = 2;

/// The trust anchor a client loads: root.pem, or leaf.pem at depth 1.
pub const CA_FILE: &str = "ca.pem";

/// Every intermediate, nearest the leaf first; empty at depth 1 and 2.
pub const INTERMEDIATES_FILE: &str = "intermediates.pem";

/// Machine-readable description of the directory, written last.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Served-chain policies, in the order the manifest lists them.
pub const POLICIES: [ChainPolicy; 3] = [
    ChainPolicy::Leaf,
    ChainPolicy::LeafIntermediates,
    ChainPolicy::Full,
];

pub fn run(args: &PkiArgs) -> Result<()> {
    let spec = Spec::new(&args.chain, &args.seed, &args.dns)?.with_purpose(args.purpose);
    let mtc_spec = mtc::MtcSpec::from_args(args)?;
    // Create the directory before the (possibly slow) signing, so a bad --out fails at once.
    fs::create_dir_all(&args.out)
        .with_context(|| format!("--out {}: cannot create directory", args.out.display()))?;
    let hierarchy = generate(&spec)?;
    let manifest = write(&hierarchy, &args.out)?;
    let mut summary = serde_json::to_value(Summary::of(&manifest))?;
    match &mtc_spec {
        Some(m) => {
            let (mtc, issuance) = mtc::issue(&hierarchy, m, &args.out)?;
            summary["mtc"] = serde_json::json!({
                "batch": mtc.batch, "proof_hashes": mtc.proof_hashes,
                "standalone_der_bytes": mtc.standalone.der_bytes,
                "landmark_der_bytes": mtc.landmark.der_bytes,
                "hash_ns": issuance.hash_ns,
                "peak_rss_kib": peak_rss_kib(),
            });
        }
        None => remove_stale_dir(&args.out.join(mtc::DIR))?,
    }
    chainlab_record::output::print_line(&serde_json::to_string(&summary)?)?;
    Ok(())
}

/// `manifest.json`: what the directory holds, enough to analyse sizes without parsing PEM.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub schema: &'static str,
    pub seed: String,
    pub depth: usize,
    /// What the leaf authenticates: "server" or "client".
    pub purpose: Purpose,
    /// Algorithms from root to leaf, as given to --chain (canonical names).
    pub chain: Vec<&'static str>,
    pub dns: Vec<String>,
    /// True when every file is reproducible from the seed (no RSA key anywhere).
    pub deterministic: bool,
    pub ca_file: &'static str,
    pub intermediates_file: &'static str,
    /// Root first.
    pub certificates: Vec<CertificateEntry>,
    pub policies: Vec<PolicyEntry>,
    pub engine_version: &'static str,
    pub openssl_version: &'static str,
    pub openssl_build: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct CertificateEntry {
    pub role: Role,
    /// 0 = leaf.
    pub position: usize,
    /// Algorithm of this certificate's key.
    pub algorithm: &'static str,
    /// Algorithm of the signature on it (the issuer's key; its own when self-signed).
    pub signed_by: &'static str,
    /// Key and certificate reproducible from the seed.
    pub deterministic: bool,
    pub file: String,
    pub key_file: String,
    pub der_bytes: usize,
    /// SHA-256 of the DER encoding, lowercase hex.
    pub sha256: String,
    /// As `openssl x509 -subject` prints it, e.g. "O=chainlab, CN=chainlab leaf (ML-DSA-44)".
    pub subject: String,
    pub issuer: String,
    /// Uppercase hex, as `openssl x509 -serial` prints it.
    pub serial: String,
    pub not_before: &'static str,
    pub not_after: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyEntry {
    pub policy: ChainPolicy,
    pub file: &'static str,
    /// Roles in the order served: leaf first, then issuers upward.
    pub certificates: Vec<Role>,
    /// Sum of the DER sizes: the certificate_list payload before TLS framing.
    pub der_bytes: usize,
}

/// Writes the fixed layout into `out` (created if missing) and returns the manifest.
/// Files of roles this depth lacks (left by a deeper hierarchy) are removed.
pub fn write(hierarchy: &Hierarchy, out: &Path) -> Result<Manifest> {
    fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot create directory", out.display()))?;
    let pem = |issued: &Issued| {
        issued
            .cert
            .to_pem()
            .context("encoding a certificate as PEM")
    };
    let concat = |list: &mut dyn Iterator<Item = &Issued>| -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        for issued in list {
            bytes.extend(pem(issued)?);
        }
        Ok(bytes)
    };

    let mut certificates = Vec::with_capacity(hierarchy.issued.len());
    for (index, issued) in hierarchy.issued.iter().enumerate() {
        let key_pem = issued.key.pkcs8_pem()?;
        write_file(out, &issued.role.key_file(), &key_pem, Secrecy::Private)?;
        write_file(
            out,
            &issued.role.cert_file(),
            &pem(issued)?,
            Secrecy::Public,
        )?;
        let signer = if index == 0 {
            issued
        } else {
            &hierarchy.issued[index - 1]
        };
        certificates.push(certificate_entry(issued, signer.algorithm)?);
    }
    for role in Role::ALL {
        if !hierarchy.issued.iter().any(|issued| issued.role == role) {
            remove_stale(out, &role.cert_file())?;
            remove_stale(out, &role.key_file())?;
        }
    }
    write_file(out, CA_FILE, &pem(&hierarchy.issued[0])?, Secrecy::Public)?;
    let intermediates = concat(&mut hierarchy.intermediates())?;
    write_file(out, INTERMEDIATES_FILE, &intermediates, Secrecy::Public)?;

    let mut policies = Vec::with_capacity(POLICIES.len());
    for policy in POLICIES {
        let served = hierarchy.served(policy);
        write_file(
            out,
            policy.file_name(),
            &concat(&mut served.iter().copied())?,
            Secrecy::Public,
        )?;
        let mut der_bytes = 0;
        for issued in &served {
            der_bytes += issued.cert.to_der()?.len();
        }
        policies.push(PolicyEntry {
            policy,
            file: policy.file_name(),
            certificates: served.iter().map(|issued| issued.role).collect(),
            der_bytes,
        });
    }

    let spec = &hierarchy.spec;
    let manifest = Manifest {
        schema: SCHEMA,
        seed: spec.seed.clone(),
        depth: spec.depth(),
        purpose: spec.purpose,
        chain: spec.chain.iter().map(|a| a.name).collect(),
        dns: spec.dns.clone(),
        deterministic: spec.chain.iter().all(|a| a.deterministic),
        ca_file: CA_FILE,
        intermediates_file: INTERMEDIATES_FILE,
        certificates,
        policies,
        engine_version: env!("CARGO_PKG_VERSION"),
        openssl_version: openssl::version::version(),
        openssl_build: serde_json::from_str(crate::build::OPENSSL_BUILD)
            .context("parsing the embedded OpenSSL build facts")?,
    };
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    write_file(out, MANIFEST_FILE, &json, Secrecy::Public)?;
    Ok(manifest)
}

fn certificate_entry(issued: &Issued, signed_by: &'static Algorithm) -> Result<CertificateEntry> {
    let der = issued.cert.to_der()?;
    let serial = issued
        .cert
        .serial_number()
        .to_bn()?
        .to_hex_str()?
        .to_string();
    let (not_before, not_after) = cert::validity(issued.role);
    Ok(CertificateEntry {
        role: issued.role,
        position: issued.position,
        algorithm: issued.algorithm.name,
        signed_by: signed_by.name,
        deterministic: issued.algorithm.deterministic && signed_by.deterministic,
        file: issued.role.cert_file(),
        key_file: issued.role.key_file(),
        der_bytes: der.len(),
        sha256: hex(&openssl::sha::sha256(&der)),
        subject: cert::one_line(issued.cert.subject_name())?,
        issuer: cert::one_line(issued.cert.issuer_name())?,
        serial,
        not_before,
        not_after,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// This process's peak resident memory (VmHWM, KiB), None where /proc does not say. Read
/// here rather than from the parent's rusage: a child's ru_maxrss also counts the pages of
/// the process it was forked from before its exec.
fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The one-line stdout report: what was generated and what each policy would send.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    schema: &'static str,
    depth: usize,
    chain: &'a [&'static str],
    deterministic: bool,
    /// DER bytes per policy name.
    policy_der_bytes: serde_json::Map<String, serde_json::Value>,
}

impl<'a> Summary<'a> {
    fn of(manifest: &'a Manifest) -> Summary<'a> {
        Summary {
            schema: SCHEMA,
            depth: manifest.depth,
            chain: &manifest.chain,
            deterministic: manifest.deterministic,
            policy_der_bytes: manifest
                .policies
                .iter()
                .map(|p| (p.policy.name().to_owned(), p.der_bytes.into()))
                .collect(),
        }
    }
}
