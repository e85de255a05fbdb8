//! Credentials from `pki`'s PEM files: a file's certificates, and a private key.
//!
//! `pki` writes ML-DSA private keys as OpenSSL 3.5 does by default, in RFC 9881's "both"
//! form (the 32-byte seed and the expanded key). BoringSSL parses only the "seed" form, on
//! purpose (crypto/evp/p_mldsa.cc: the expanded key is derived from the seed). The key is
//! the seed's, so this module hands BoringSSL the same key in the seed form: the PKCS#8
//! structure rewritten around the seed, nothing derived or generated here. A key in the
//! expanded form alone has no seed and is refused.

use std::path::Path;

use anyhow::{anyhow, bail, Context as _};
use boring::pkey::{PKey, Private};
use boring::x509::X509;

/// ML-DSA's OIDs (2.16.840.1.101.3.4.3.17-19), DER-encoded, by parameter set.
const ML_DSA_OIDS: [[u8; 9]; 3] = [
    [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11],
    [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12],
    [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13],
];
pub const SEED_BYTES: usize = 32;

/// Reads every PEM certificate of a file; `flag` names the option in errors.
pub fn read_certificates(path: &Path, flag: &str) -> anyhow::Result<Vec<X509>> {
    chainlab_record::pem::read_certificates(path, flag, X509::stack_from_pem)
}

/// Reads a PEM private key (PKCS#8), an ML-DSA key through its seed (see the module doc).
pub fn read_private_key(path: &Path, flag: &str) -> anyhow::Result<PKey<Private>> {
    let pem =
        std::fs::read(path).with_context(|| format!("{flag}: cannot read {}", path.display()))?;
    let text = std::str::from_utf8(&pem)
        .map_err(|_| anyhow!("{flag}: {} is not a PEM file", path.display()))?;
    let der = pem_body(text, "PRIVATE KEY")
        .ok_or_else(|| anyhow!("{flag}: {} holds no PEM private key", path.display()))?;
    if let Some(composite) = chainlab_composite::encoding::composite_key_in_pem(&pem) {
        bail!(chainlab_composite::encoding::cannot_sign(
            "boringssl",
            &format!("{flag}: {}", path.display()),
            composite
        ));
    }
    let der = match seed_form(&der) {
        Ok(Some(seeded)) => seeded,
        Ok(None) => der,
        Err(why) => bail!("{flag}: {}: {why}", path.display()),
    };
    PKey::private_key_from_der(&der).map_err(|e| {
        anyhow!(
            "{flag}: {} is not a private key BoringSSL reads: {e}",
            path.display()
        )
    })
}

/// The DER inside the first PEM block labelled `label`.
fn pem_body(text: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    let b64: String = text[start..stop].split_whitespace().collect();
    boring::base64::decode_block(&b64).ok()
}

/// An ML-DSA PKCS#8 key rewritten in the seed form; `None` for any other key (or one
/// already in that form).
fn seed_form(der: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let Some((0x30, info, _)) = tlv(der) else {
        return Ok(None);
    };
    let Some((0x02, _version, rest)) = tlv(info) else {
        return Ok(None);
    };
    let Some((0x30, alg, rest)) = tlv(rest) else {
        return Ok(None);
    };
    let Some((0x06, oid, params)) = tlv(alg) else {
        return Ok(None);
    };
    let Some(&oid) = ML_DSA_OIDS.iter().find(|o| o.as_slice() == oid) else {
        return Ok(None);
    };
    if !params.is_empty() {
        return Err("an ML-DSA key with algorithm parameters".into());
    }
    let Some((0x04, key, _attributes)) = tlv(rest) else {
        return Err("an ML-DSA key without its privateKey octets".into());
    };
    let seed = match tlv(key) {
        // [0] IMPLICIT seed: already the form BoringSSL reads.
        Some((0x80, _, _)) => return Ok(None),
        // SEQUENCE { seed OCTET STRING, expandedKey OCTET STRING }: "both".
        Some((0x30, both, _)) => match tlv(both) {
            Some((0x04, seed, _)) if seed.len() == SEED_BYTES => seed,
            _ => return Err("an ML-DSA key whose \"both\" form has no 32-byte seed".into()),
        },
        Some((0x04, _, _)) => {
            return Err(
                "an ML-DSA key in the expanded form alone (no seed): BoringSSL reads only the \
                 seed form; write the key with its seed"
                    .into(),
            )
        }
        _ => return Err("an ML-DSA private key of an unknown form".into()),
    };
    Ok(Some(seed_pkcs8(&oid, seed)))
}

/// An ML-DSA key of parameter set `level` (44, 65, 87) from a 32-byte seed.
pub fn ml_dsa_from_seed(level: u16, seed: &[u8; SEED_BYTES]) -> anyhow::Result<PKey<Private>> {
    let oid = match level {
        44 => &ML_DSA_OIDS[0],
        65 => &ML_DSA_OIDS[1],
        87 => &ML_DSA_OIDS[2],
        other => bail!("ML-DSA-{other}: no such parameter set; allowed: 44, 65, 87"),
    };
    Ok(PKey::private_key_from_der(&seed_pkcs8(oid, seed))?)
}

/// PKCS#8 in the seed form: SEQUENCE { INTEGER 0, SEQUENCE { OID }, OCTET STRING { [0] seed } }
/// (every length under 128).
fn seed_pkcs8(oid: &[u8; 9], seed: &[u8]) -> Vec<u8> {
    let mut alg_id = vec![0x06, oid.len() as u8];
    alg_id.extend_from_slice(oid);
    let mut inner = vec![0x80, SEED_BYTES as u8];
    inner.extend_from_slice(seed);
    let mut body = vec![0x02, 0x01, 0x00, 0x30, alg_id.len() as u8];
    body.extend_from_slice(&alg_id);
    body.extend_from_slice(&[0x04, inner.len() as u8]);
    body.extend_from_slice(&inner);
    let mut out = vec![0x30, body.len() as u8];
    out.extend_from_slice(&body);
    out
}

/// One DER element: (tag, contents, what follows), or None if malformed.
fn tlv(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A "both" key becomes the seed form of the same seed; other keys pass unchanged.
    #[test]
    fn the_seed_form_keeps_the_seed() {
        let seed: Vec<u8> = (0u8..32).collect();
        let expanded = vec![7u8; 300];
        let mut both = vec![0x04, 0x20];
        both.extend_from_slice(&seed);
        both.extend_from_slice(&[0x04, 0x82, 0x01, 0x2c]);
        both.extend_from_slice(&expanded);
        let mut both_seq = vec![0x30, 0x82, 0x01, 0x52];
        both_seq.extend_from_slice(&both);
        let mut octets = vec![0x04, 0x82, 0x01, 0x56];
        octets.extend_from_slice(&both_seq);
        let mut body = vec![0x02, 0x01, 0x00, 0x30, 0x0b, 0x06, 0x09];
        body.extend_from_slice(&ML_DSA_OIDS[1]);
        body.extend_from_slice(&octets);
        let mut der = vec![0x30, 0x82, 0x01, 0x6a];
        der.extend_from_slice(&body);
        assert_eq!(der.len(), 4 + 0x16a);
        let got = seed_form(&der).unwrap().unwrap();
        let (_, info, _) = tlv(&got).unwrap();
        let (_, _, rest) = tlv(info).unwrap();
        let (_, _, rest) = tlv(rest).unwrap();
        let (_, key, _) = tlv(rest).unwrap();
        assert_eq!(tlv(key).unwrap(), (0x80, seed.as_slice(), &[][..]));
        // Not ML-DSA: untouched.
        assert_eq!(seed_form(&[0x30, 0x03, 0x02, 0x01, 0x00]).unwrap(), None);
    }
}
