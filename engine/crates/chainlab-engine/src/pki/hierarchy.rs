//! What `pki` generates: the validated arguments (`Spec`) and the hierarchy of keys and
//! certificates issued from them (`generate`), root first.

use anyhow::{bail, Context, Result};
use openssl::x509::X509;

use crate::algorithms::{self, Algorithm};
use crate::cli::{ChainPolicy, Purpose};

use super::role::{roles, Role};
use super::{cert, key, keys, x509};

/// Deepest hierarchy: root, two intermediates, leaf.
pub const MAX_DEPTH: usize = 4;

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
