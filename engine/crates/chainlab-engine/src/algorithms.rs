//! The signature algorithms the engine places in hierarchies: one table, so `pki`, `info`,
//! error messages and the Python front end agree on names. OpenSSL's algorithms are listed
//! here; liboqs' (Falcon, MAYO, UOV, CROSS) come from `chainlab_oqs`'s table, which `pki`
//! issues with but no OpenSSL stack can use in TLS (`provider`).

use std::sync::LazyLock;

/// Family of a signature algorithm (the analysis groups placements by family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    MlDsa,
    SlhDsa,
    Ecdsa,
    EdDsa,
    Rsa,
    Falcon,
    Mayo,
    Uov,
    Cross,
    /// Composite ML-DSA (an ML-DSA and a traditional component, `chainlab_composite`).
    Composite,
}

/// The library that makes and checks an algorithm's signatures in this engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenSSL: in hierarchies and in TLS.
    OpenSsl,
    /// liboqs (`chainlab_oqs`): in hierarchies `pki` issues; the OpenSSL stacks cannot
    /// verify or sign with it in TLS, the rustls stack can.
    Liboqs,
    /// Composite ML-DSA over OpenSSL's components (`pki::composite`): in hierarchies
    /// `pki` issues; the OpenSSL stacks cannot use it in TLS, the rustls stack can.
    Composite,
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
    pub provider: Provider,
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
        provider: Provider::OpenSsl,
    }
}

/// Every algorithm: OpenSSL's, then liboqs' (deterministic: `chainlab_oqs` draws their
/// random bytes from the seed).
pub static ALGORITHMS: LazyLock<Vec<Algorithm>> = LazyLock::new(|| {
    let liboqs = chainlab_oqs::algorithms::only_liboqs().map(|a| Algorithm {
        name: a.name,
        family: match a.family {
            chainlab_oqs::algorithms::Family::Falcon => Family::Falcon,
            chainlab_oqs::algorithms::Family::Mayo => Family::Mayo,
            chainlab_oqs::algorithms::Family::Uov => Family::Uov,
            // only_liboqs() yields no ML-DSA; CROSS is the last family.
            _ => Family::Cross,
        },
        tls_sigalg: a.tls_name,
        deterministic: true,
        provider: Provider::Liboqs,
    });
    let composite = chainlab_composite::ALGORITHMS.iter().map(|a| Algorithm {
        name: a.name,
        family: Family::Composite,
        tls_sigalg: a.tls_name,
        deterministic: true,
        provider: Provider::Composite,
    });
    OPENSSL
        .iter()
        .copied()
        .chain(liboqs)
        .chain(composite)
        .collect()
});

/// The composite table entry of a composite algorithm.
pub fn composite(algorithm: &Algorithm) -> Option<&'static chainlab_composite::CompositeAlgorithm> {
    (algorithm.provider == Provider::Composite)
        .then(|| chainlab_composite::lookup(algorithm.name).ok())
        .flatten()
}

/// The liboqs table entry of an algorithm `pki` issues with liboqs.
pub fn liboqs(algorithm: &Algorithm) -> Option<&'static chainlab_oqs::OqsAlgorithm> {
    (algorithm.provider == Provider::Liboqs)
        .then(|| chainlab_oqs::lookup(algorithm.name).ok())
        .flatten()
}

const OPENSSL: &[Algorithm] = &[
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
        let falcon = lookup("falcon-512").unwrap();
        assert_eq!(
            (falcon.family, falcon.provider),
            (Family::Falcon, Provider::Liboqs)
        );
        assert_eq!(liboqs(falcon).unwrap().code_point, 0xfed7);
        assert!(liboqs(lookup("ML-DSA-44").unwrap()).is_none());
    }
}
