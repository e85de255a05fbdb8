//! The algorithms taken from liboqs, in one table. OIDs and TLS code points are the Open
//! Quantum Safe OpenSSL provider's defaults (oqs-provider `ALGORITHMS.md`, commit 00fde33 of
//! 2026-07-21; docs/stacks.md keeps the table with its source): experimental values in the
//! private-use ranges (1.3.9999.*, 0xfe00-0xffff), except ML-DSA's, which are FIPS 204's OIDs
//! and the IANA code points.

use chainlab_mtc::named;

/// The family a table entry belongs to (the analysis groups placements by family).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Falcon,
    Mayo,
    Uov,
    Cross,
    MlDsa,
}

impl Family {
    /// The name `chainlab-engine info` and the Python side use (kebab case).
    pub fn name(self) -> &'static str {
        match self {
            Family::Falcon => "falcon",
            Family::Mayo => "mayo",
            Family::Uov => "uov",
            Family::Cross => "cross",
            Family::MlDsa => "ml-dsa",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct OqsAlgorithm {
    /// chainlab's name (`pki --chain`, campaigns, records).
    pub name: &'static str,
    pub family: Family,
    /// Dotted OID of the key and of the signature (the same, parameters absent).
    pub oid: &'static str,
    /// TLS 1.3 SignatureScheme code point of a CertificateVerify made with such a key.
    pub code_point: u16,
    /// The scheme's name as an OpenSSL with the OQS provider prints it (what records hold).
    pub tls_name: &'static str,
}

const fn alg(
    name: &'static str,
    family: Family,
    oid: &'static str,
    code_point: u16,
    tls_name: &'static str,
) -> OqsAlgorithm {
    OqsAlgorithm {
        name,
        family,
        oid,
        code_point,
        tls_name,
    }
}

/// Every algorithm, families in the order the report lists them.
pub const ALGORITHMS: &[OqsAlgorithm] = &[
    alg(
        "Falcon-512",
        Family::Falcon,
        "1.3.9999.3.11",
        0xfed7,
        "falcon512",
    ),
    alg(
        "Falcon-1024",
        Family::Falcon,
        "1.3.9999.3.14",
        0xfeda,
        "falcon1024",
    ),
    alg("MAYO-1", Family::Mayo, "1.3.9999.8.1.3", 0xff32, "mayo1"),
    alg("MAYO-2", Family::Mayo, "1.3.9999.8.2.3", 0xff33, "mayo2"),
    alg("UOV-Is", Family::Uov, "1.3.9999.9.1.1", 0xff0a, "OV_Is"),
    alg("UOV-Ip", Family::Uov, "1.3.9999.9.2.1", 0xff0b, "OV_Ip"),
    // The compressed-public-key variant (the provider enables it by default): the only UOV
    // key small enough to travel in a Certificate message rustls accepts (64 KiB).
    alg(
        "UOV-Ip-pkc",
        Family::Uov,
        "1.3.9999.9.6.1",
        0xff0f,
        "OV_Ip_pkc",
    ),
    alg(
        "CROSS-RSDPG-128-fast",
        Family::Cross,
        "1.3.6.1.4.1.62245.2.1.11.2.2",
        0xff5b,
        "CROSSrsdpg128fast",
    ),
    alg(
        "CROSS-RSDPG-128-small",
        Family::Cross,
        "1.3.6.1.4.1.62245.2.1.12.2.2",
        0xff5c,
        "CROSSrsdpg128small",
    ),
    alg(
        "ML-DSA-44",
        Family::MlDsa,
        "2.16.840.1.101.3.4.3.17",
        0x0904,
        "mldsa44",
    ),
    alg(
        "ML-DSA-65",
        Family::MlDsa,
        "2.16.840.1.101.3.4.3.18",
        0x0905,
        "mldsa65",
    ),
    alg(
        "ML-DSA-87",
        Family::MlDsa,
        "2.16.840.1.101.3.4.3.19",
        0x0906,
        "mldsa87",
    ),
];

/// The algorithms only liboqs provides (every family but ML-DSA): what `pki` issues with
/// liboqs and what the OpenSSL stacks cannot verify.
pub fn only_liboqs() -> impl Iterator<Item = &'static OqsAlgorithm> {
    ALGORITHMS.iter().filter(|a| a.family != Family::MlDsa)
}

chainlab_mtc::named_table!(OqsAlgorithm, ALGORITHMS);

/// An algorithm by chainlab name, case-insensitively.
pub fn lookup(name: &str) -> anyhow::Result<&'static OqsAlgorithm> {
    named::lookup(ALGORITHMS, "liboqs algorithm", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_oids_and_code_points_are_unique_and_enabled() {
        for (i, a) in ALGORITHMS.iter().enumerate() {
            for b in &ALGORITHMS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.oid, b.oid);
                assert_ne!(a.code_point, b.code_point);
            }
        }
        assert_eq!(lookup("falcon-512").unwrap().code_point, 0xfed7);
        let err = lookup("Falcon-256").unwrap_err().to_string();
        assert!(
            err.contains("\"Falcon-256\"") && err.contains("UOV-Is"),
            "{err}"
        );
        assert_eq!(only_liboqs().count(), ALGORITHMS.len() - 3);
    }
}
