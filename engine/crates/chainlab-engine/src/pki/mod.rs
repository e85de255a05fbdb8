//! `pki`: X.509 hierarchies of depth 1 (a self-signed leaf) to 4 (root, two intermediates,
//! leaf), any accepted algorithm at any position, written into a fixed file layout with a
//! manifest. `docs/pki.md` documents the layout, the extensions and the determinism rules.
//!
//! Everything except RSA keys is a function of (`--seed`, role, algorithm): keys come from
//! seeds derived with SHAKE-256 (`keys`), serials likewise, validity dates are fixed and
//! signatures are deterministic (`cert`). The same command therefore writes byte-identical
//! files, which is what lets a campaign regenerate its hierarchies instead of shipping them.

mod cert;
pub mod key;
pub mod keys;
pub mod mtc;
mod x509;

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use openssl::x509::X509;
use serde::Serialize;

use crate::algorithms::{self, Algorithm};
use crate::cli::{ChainPolicy, PkiArgs, Purpose};

/// Schema id of `manifest.json` and of the stdout summary.
pub const SCHEMA: &str = "chainlab.pki/1";

/// Deepest hierarchy: root, two intermediates, leaf.
pub const MAX_DEPTH: usize = 4;

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

/// What to generate: validated `pki` arguments.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Algorithms from root to leaf; its length is the depth.
    pub chain: Vec<&'static Algorithm>,
    pub seed: String,
    /// DNS names of the leaf's subjectAltName (127.0.0.1 and ::1 are always added).
    pub dns: Vec<String>,
    /// What the leaf authenticates (a server unless `--purpose client`).
    pub purpose: Purpose,
}

impl Spec {
    /// Validates the command-line values; errors name the bad value and what is allowed.
    pub fn new(chain: &[String], seed: &str, dns: &[String]) -> Result<Spec> {
        let depth = chain.len();
        if chain.iter().all(|name| name.trim().is_empty()) {
            bail!(
                "--chain names no algorithm (depth 0); allowed: 1 to {MAX_DEPTH} \
                 comma-separated algorithms, root first, leaf last"
            );
        }
        if depth > MAX_DEPTH {
            bail!(
                "--chain lists {depth} algorithms ({}); allowed: 1 to {MAX_DEPTH} \
                 (root, up to two intermediates, leaf)",
                chain.join(",")
            );
        }
        let chain = chain
            .iter()
            .enumerate()
            .map(|(index, name)| {
                algorithms::lookup(name)
                    .with_context(|| format!("--chain position {} of {depth}", index + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        for name in dns {
            check_dns_name(name)?;
        }
        Ok(Spec {
            chain,
            seed: seed.to_owned(),
            dns: dns.to_vec(),
            purpose: Purpose::Server,
        })
    }

    pub fn with_purpose(mut self, purpose: Purpose) -> Spec {
        self.purpose = purpose;
        self
    }

    pub fn depth(&self) -> usize {
        self.chain.len()
    }
}

/// Rejects what cannot be a DNS name in a subjectAltName (and would break the extension's
/// text form): labels of 1-63 letters, digits and hyphens, an optional leading `*.`.
fn check_dns_name(name: &str) -> Result<()> {
    let labels = name.strip_prefix("*.").unwrap_or(name);
    let valid = !name.is_empty()
        && name.len() <= 253
        && labels.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if !valid {
        bail!(
            "--dns {name:?} is not a DNS name; allowed: dot-separated labels of 1-63 letters, \
             digits and inner hyphens (at most 253 characters, optional leading \"*.\")"
        );
    }
    Ok(())
}

/// A certificate's place in the hierarchy; the name is also the file stem and the seed
/// derivation label, so a role keeps its key across depths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Root,
    Int1,
    Int2,
    Leaf,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Root, Role::Int1, Role::Int2, Role::Leaf];

    pub fn name(self) -> &'static str {
        match self {
            Role::Root => "root",
            Role::Int1 => "int1",
            Role::Int2 => "int2",
            Role::Leaf => "leaf",
        }
    }

    /// Start of the subject's common name; the algorithm follows in parentheses. A client
    /// hierarchy's names say "client", so its root is never mistaken for a server's.
    fn title(self, purpose: Purpose) -> &'static str {
        match (purpose, self) {
            (Purpose::Server, Role::Root) => "chainlab root",
            (Purpose::Server, Role::Int1) => "chainlab intermediate 1",
            (Purpose::Server, Role::Int2) => "chainlab intermediate 2",
            (Purpose::Server, Role::Leaf) => "chainlab leaf",
            (Purpose::Client, Role::Root) => "chainlab client root",
            (Purpose::Client, Role::Int1) => "chainlab client intermediate 1",
            (Purpose::Client, Role::Int2) => "chainlab client intermediate 2",
            (Purpose::Client, Role::Leaf) => "chainlab client leaf",
        }
    }

    pub fn cert_file(self) -> String {
        format!("{}.pem", self.name())
    }

    pub fn key_file(self) -> String {
        format!("{}.key", self.name())
    }
}

/// Roles from root to leaf for a depth of 1 to `MAX_DEPTH`.
pub fn roles(depth: usize) -> &'static [Role] {
    match depth {
        1 => &[Role::Leaf],
        2 => &[Role::Root, Role::Leaf],
        3 => &[Role::Root, Role::Int1, Role::Leaf],
        _ => &Role::ALL,
    }
}

/// One generated position.
pub struct Issued {
    pub role: Role,
    /// 0 = leaf, counting towards the root.
    pub position: usize,
    pub algorithm: &'static Algorithm,
    pub key: key::PrivateKey,
    pub cert: X509,
}

/// A generated hierarchy, root first (at depth 1 the only entry is the self-signed leaf).
pub struct Hierarchy {
    pub spec: Spec,
    pub issued: Vec<Issued>,
}

impl Hierarchy {
    pub fn leaf(&self) -> &Issued {
        // `Spec::new` guarantees at least one position, and the leaf is always last.
        self.issued
            .last()
            .expect("a hierarchy has at least one certificate")
    }

    /// Intermediates, nearest the leaf first (the order a server sends them).
    pub fn intermediates(&self) -> impl Iterator<Item = &Issued> {
        let depth = self.issued.len();
        self.issued[1.min(depth - 1)..depth - 1].iter().rev()
    }

    /// The certificates a policy serves, leaf first, then issuers upward.
    pub fn served(&self, policy: ChainPolicy) -> Vec<&Issued> {
        let mut served = vec![self.leaf()];
        if self.issued.len() == 1 {
            return served; // a self-signed leaf is every chain
        }
        if policy != ChainPolicy::Leaf {
            served.extend(self.intermediates());
        }
        if policy == ChainPolicy::Full {
            served.push(&self.issued[0]);
        }
        served
    }
}

/// Generates every key and certificate, root first; each certificate is signed by the
/// previous position's key (the first by its own).
pub fn generate(spec: &Spec) -> Result<Hierarchy> {
    let depth = spec.depth();
    let mut issued: Vec<Issued> = Vec::with_capacity(depth);
    for (index, (&role, &algorithm)) in roles(depth).iter().zip(&spec.chain).enumerate() {
        let what = || format!("{} ({})", role.name(), algorithm.name);
        let derivation = keys::Derivation::new(&spec.seed, role, algorithm);
        let key = key::PrivateKey::generate(algorithm, &derivation)
            .with_context(|| format!("generating the key of {}", what()))?;
        let subject = cert::Subject {
            role,
            algorithm,
            serial: derivation.serial()?,
            // A CA may be followed by as many CAs as sit between it and the leaf.
            path_len: (role != Role::Leaf).then(|| (depth - 2 - index) as u32),
            dns: &spec.dns,
            purpose: spec.purpose,
        };
        let parent = issued.last();
        // OpenSSL writes what it can sign and hold; a liboqs key or issuer takes `x509`.
        let cert = match (key.openssl(), parent.map(|p| p.key.openssl())) {
            (Some(own), None) => cert::issue(&subject, own, None),
            (Some(own), Some(Some(parent_key))) => {
                let p = parent.expect("matched Some above");
                cert::issue(&subject, own, Some((&*p.cert, parent_key, p.algorithm)))
            }
            _ => x509::issue(
                &subject,
                &key,
                parent.map(|p| (&*p.cert, &p.key, p.algorithm)),
                &derivation,
            ),
        }
        .with_context(|| format!("issuing the certificate of {}", what()))?;
        issued.push(Issued {
            role,
            position: depth - 1 - index,
            algorithm,
            key,
            cert,
        });
    }
    Ok(Hierarchy {
        spec: spec.clone(),
        issued,
    })
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
        openssl_build: serde_json::from_str(crate::info::OPENSSL_BUILD)
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Secrecy {
    Public,
    /// Created with mode 0600 (never chmod-ed later, so never briefly readable).
    Private,
}

/// Replaces `out/name` atomically: writes a fresh temporary file (created with the final
/// mode), then renames it over the old one, so readers never see a half-written file and a
/// replaced key file never inherits the old file's permissions.
fn write_file(out: &Path, name: &str, bytes: &[u8], secrecy: Secrecy) -> Result<()> {
    let path = out.join(name);
    let temp = out.join(format!(".{name}.tmp"));
    let failed = |what: &str, path: &PathBuf| {
        format!("--out {}: cannot {what} {}", out.display(), path.display())
    };
    remove_stale(out, &format!(".{name}.tmp"))?;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    if secrecy == Secrecy::Private {
        options.mode(0o600);
    }
    let mut file = options
        .open(&temp)
        .with_context(|| failed("create", &temp))?;
    file.write_all(bytes)
        .with_context(|| failed("write", &temp))?;
    drop(file);
    fs::rename(&temp, &path).with_context(|| failed("replace", &path))
}

/// This process's peak resident memory (VmHWM, KiB), None where /proc does not say. Read
/// here rather than from the parent's rusage: a child's ru_maxrss also counts the pages of
/// the process it was forked from before its exec.
fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Removes a directory a previous run wrote (MTCs of a hierarchy now issued without them).
fn remove_stale_dir(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn remove_stale(out: &Path, name: &str) -> Result<()> {
    let path = out.join(name);
    match fs::remove_file(&path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err)
            .with_context(|| format!("--out {}: cannot remove {}", out.display(), path.display())),
        _ => Ok(()),
    }
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
