//! Credentials from PEM files: a file's certificates, and a chain with its leaf's key
//! installed in a context (the server's chain and key, a client's certificate).

use std::path::Path;

use anyhow::{anyhow, bail, Context as _};
use openssl::pkey::{PKey, Private};
use openssl::ssl::SslContextBuilder;
use openssl::x509::X509;

/// Reads every PEM certificate of a file; `flag` names the option in errors.
pub(super) fn read_certificates(path: &Path, flag: &str) -> anyhow::Result<Vec<X509>> {
    chainlab_record::pem::read_certificates(path, flag, X509::stack_from_pem)
}

/// Installs a certificate chain (leaf first) and the leaf's key as this side's credentials;
/// returns the number of certificates and their DER bytes. `option` names the argument the
/// files came from, for error messages.
pub(super) fn load_chain(
    builder: &mut SslContextBuilder,
    chain_path: &Path,
    key_path: &Path,
    option: &str,
) -> anyhow::Result<Loaded> {
    let chain = read_certificates(chain_path, option)?;
    // A composite key is named before libssl meets its certificate (whose key it cannot
    // decode, "ee key too small").
    let pem = std::fs::read(key_path)
        .with_context(|| format!("{option}: cannot read {}", key_path.display()))?;
    if let Some(composite) = chainlab_composite::encoding::composite_key_in_pem(&pem) {
        bail!(chainlab_composite::encoding::cannot_sign(
            crate::build::stack(),
            &format!("{option}: {}", key_path.display()),
            composite
        ));
    }
    let der_bytes = chain
        .iter()
        .map(|c| c.to_der().map(|d| d.len()))
        .sum::<Result<usize, _>>()?;
    let certificates = chain.len();
    let mut chain = chain.into_iter();
    // read_certificates never returns an empty list.
    let leaf = chain.next().ok_or_else(|| anyhow!("no certificate"))?;
    builder.set_certificate(&leaf)?;
    for cert in chain {
        builder.add_extra_chain_cert(cert)?;
    }
    let key = PKey::private_key_from_pem(&pem).map_err(|e| {
        anyhow!(
            "{option}: {} is not a PEM private key: {e}",
            key_path.display()
        )
    })?;
    builder.set_private_key(&key)?;
    builder.check_private_key().map_err(|_| {
        anyhow!(
            "{option}: {} does not match the leaf certificate of {}",
            key_path.display(),
            chain_path.display()
        )
    })?;
    Ok(Loaded {
        certificates,
        der_bytes,
        leaf,
        key,
    })
}

/// What `load_chain` put in the context: its count and DER bytes, and the leaf and key
/// themselves (the same objects: a connection can be given them again, `served`).
pub(super) struct Loaded {
    pub certificates: usize,
    pub der_bytes: usize,
    pub leaf: X509,
    pub key: PKey<Private>,
}
