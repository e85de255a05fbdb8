//! The signature algorithms the engine places in hierarchies: one table, so `pki`, `info`,
//! error messages and the Python front end agree on names.

/// Family of a signature algorithm (the analysis groups placements by family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    MlDsa,
    SlhDsa,
    Ecdsa,
    EdDsa,
    Rsa,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Algorithm {
    /// Canonical name, as accepted on the command line (case-insensitive) and recorded.
    pub name: &'static str,
    pub family: Family,
    /// TLS 1.3 signature scheme name when this key signs CertificateVerify.
    pub tls_sigalg: &'static str,
    /// Keys and signatures reproducible from a seed.
    pub deterministic: bool,
}

const fn alg(
    name: &'static str,
    family: Family,
    tls_sigalg: &'static str,
    deterministic: bool,
) -> Algorithm {
    Algorithm {
        name,
        family,
        tls_sigalg,
        deterministic,
    }
}

pub const ALGORITHMS: &[Algorithm] = &[
    alg("ML-DSA-44", Family::MlDsa, "mldsa44", true),
    alg("ML-DSA-65", Family::MlDsa, "mldsa65", true),
    alg("ML-DSA-87", Family::MlDsa, "mldsa87", true),
    alg(
        "SLH-DSA-SHA2-128s",
        Family::SlhDsa,
        "slhdsa_sha2_128s",
        true,
    ),
    alg(
        "SLH-DSA-SHA2-128f",
        Family::SlhDsa,
        "slhdsa_sha2_128f",
        true,
    ),
    alg(
        "SLH-DSA-SHA2-192s",
        Family::SlhDsa,
        "slhdsa_sha2_192s",
        true,
    ),
    alg(
        "SLH-DSA-SHA2-192f",
        Family::SlhDsa,
        "slhdsa_sha2_192f",
        true,
    ),
    alg(
        "SLH-DSA-SHA2-256s",
        Family::SlhDsa,
        "slhdsa_sha2_256s",
        true,
    ),
    alg(
        "SLH-DSA-SHA2-256f",
        Family::SlhDsa,
        "slhdsa_sha2_256f",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-128s",
        Family::SlhDsa,
        "slhdsa_shake_128s",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-128f",
        Family::SlhDsa,
        "slhdsa_shake_128f",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-192s",
        Family::SlhDsa,
        "slhdsa_shake_192s",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-192f",
        Family::SlhDsa,
        "slhdsa_shake_192f",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-256s",
        Family::SlhDsa,
        "slhdsa_shake_256s",
        true,
    ),
    alg(
        "SLH-DSA-SHAKE-256f",
        Family::SlhDsa,
        "slhdsa_shake_256f",
        true,
    ),
    alg("ECDSA-P256", Family::Ecdsa, "ecdsa_secp256r1_sha256", true),
    alg("ECDSA-P384", Family::Ecdsa, "ecdsa_secp384r1_sha384", true),
    alg("Ed25519", Family::EdDsa, "ed25519", true),
    alg("RSA-2048", Family::Rsa, "rsa_pss_rsae_sha256", false),
    alg("RSA-3072", Family::Rsa, "rsa_pss_rsae_sha256", false),
];

/// Looks an algorithm up by name, case-insensitively; the error lists every accepted name.
pub fn lookup(name: &str) -> anyhow::Result<&'static Algorithm> {
    ALGORITHMS
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "unknown algorithm {name:?}; allowed: {}",
                ALGORITHMS
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive_and_errors_list_names() {
        assert_eq!(lookup("ml-dsa-65").unwrap().name, "ML-DSA-65");
        let err = lookup("ML-DSA-66").unwrap_err().to_string();
        assert!(
            err.contains("\"ML-DSA-66\"") && err.contains("SLH-DSA-SHAKE-256f"),
            "{err}"
        );
    }
}
