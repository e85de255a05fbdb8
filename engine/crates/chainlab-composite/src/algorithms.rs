//! The composite algorithms chainlab issues and measures, in one table: the draft's name,
//! OID and signature label (draft-ietf-lamps-pq-composite-sigs-19, "Algorithm Identifiers
//! and Parameters", `src/algParams.md` of its repository), the pre-hash, the components, and
//! the TLS 1.3 SignatureScheme code point of a CertificateVerify made with such a key.
//!
//! TLS code points: draft-reddy-tls-composite-mldsa names the schemes
//! (`mldsa65_ecdsa_secp256r1_sha512`, ...) and leaves their code points to IANA. Until IANA
//! assigns them, chainlab uses values of TLS's private-use range (0xFE00-0xFFFF, RFC 8446
//! section 4.2.3), chosen clear of the OQS provider's values that `chainlab_oqs` uses
//! (0xfed7-0xff5c); they are defined here and nowhere else (docs/stacks.md says so).

use chainlab_mtc::named;

/// The ML-DSA component's parameter set, with its sizes (FIPS 204, Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MlDsa {
    #[serde(rename = "ML-DSA-44")]
    Ml44,
    #[serde(rename = "ML-DSA-65")]
    Ml65,
    #[serde(rename = "ML-DSA-87")]
    Ml87,
}

impl MlDsa {
    pub fn name(self) -> &'static str {
        match self {
            MlDsa::Ml44 => "ML-DSA-44",
            MlDsa::Ml65 => "ML-DSA-65",
            MlDsa::Ml87 => "ML-DSA-87",
        }
    }

    pub fn public_key_len(self) -> usize {
        match self {
            MlDsa::Ml44 => 1312,
            MlDsa::Ml65 => 1952,
            MlDsa::Ml87 => 2592,
        }
    }

    pub fn signature_len(self) -> usize {
        match self {
            MlDsa::Ml44 => 2420,
            MlDsa::Ml65 => 3309,
            MlDsa::Ml87 => 4627,
        }
    }
}

/// The traditional component: its signature algorithm (the hash is ECDSA's own, inside the
/// component, over M').
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Traditional {
    /// ecdsa-with-SHA256 on secp256r1.
    #[serde(rename = "ECDSA-P256")]
    EcdsaP256Sha256,
    /// ecdsa-with-SHA384 on secp384r1.
    #[serde(rename = "ECDSA-P384")]
    EcdsaP384Sha384,
    /// Ed25519 (pure, RFC 8032).
    #[serde(rename = "Ed25519")]
    Ed25519,
}

impl Traditional {
    /// chainlab's name of the component's algorithm (`pki --chain`'s).
    pub fn name(self) -> &'static str {
        match self {
            Traditional::EcdsaP256Sha256 => "ECDSA-P256",
            Traditional::EcdsaP384Sha384 => "ECDSA-P384",
            Traditional::Ed25519 => "Ed25519",
        }
    }

    /// The named curve's OID (ECDSA), for ECPrivateKey's parameters.
    pub fn curve_oid(self) -> Option<&'static str> {
        match self {
            Traditional::EcdsaP256Sha256 => Some("1.2.840.10045.3.1.7"),
            Traditional::EcdsaP384Sha384 => Some("1.3.132.0.34"),
            Traditional::Ed25519 => None,
        }
    }

    /// The bytes of a private scalar (ECDSA) or key (Ed25519).
    pub fn private_len(self) -> usize {
        match self {
            Traditional::EcdsaP256Sha256 | Traditional::Ed25519 => 32,
            Traditional::EcdsaP384Sha384 => 48,
        }
    }
}

/// The pre-hash PH of M'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum PreHash {
    #[serde(rename = "SHA256")]
    Sha256,
    #[serde(rename = "SHA512")]
    Sha512,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CompositeAlgorithm {
    /// chainlab's name (`pki --chain`, campaigns, records): the draft's without `id-`.
    pub name: &'static str,
    /// Dotted OID of the key and of the signature (the same, parameters absent).
    pub oid: &'static str,
    /// The signature label: in M', and the ML-DSA component's context.
    pub label: &'static str,
    pub prehash: PreHash,
    pub mldsa: MlDsa,
    pub traditional: Traditional,
    /// TLS 1.3 SignatureScheme (private use until IANA assigns one: the module's note).
    pub code_point: u16,
    /// The scheme's name, draft-reddy-tls-composite-mldsa's.
    pub tls_name: &'static str,
}

/// Every composite algorithm chainlab issues, ML-DSA level first.
pub const ALGORITHMS: &[CompositeAlgorithm] = &[
    CompositeAlgorithm {
        name: "MLDSA44-ECDSA-P256-SHA256",
        oid: "1.3.6.1.5.5.7.6.40",
        label: "COMPSIG-MLDSA44-ECDSA-P256-SHA256",
        prehash: PreHash::Sha256,
        mldsa: MlDsa::Ml44,
        traditional: Traditional::EcdsaP256Sha256,
        code_point: 0xfe40,
        tls_name: "mldsa44_ecdsa_secp256r1_sha256",
    },
    CompositeAlgorithm {
        name: "MLDSA65-ECDSA-P256-SHA512",
        oid: "1.3.6.1.5.5.7.6.45",
        label: "COMPSIG-MLDSA65-ECDSA-P256-SHA512",
        prehash: PreHash::Sha512,
        mldsa: MlDsa::Ml65,
        traditional: Traditional::EcdsaP256Sha256,
        code_point: 0xfe41,
        tls_name: "mldsa65_ecdsa_secp256r1_sha512",
    },
    CompositeAlgorithm {
        name: "MLDSA65-Ed25519-SHA512",
        oid: "1.3.6.1.5.5.7.6.48",
        label: "COMPSIG-MLDSA65-Ed25519-SHA512",
        prehash: PreHash::Sha512,
        mldsa: MlDsa::Ml65,
        traditional: Traditional::Ed25519,
        code_point: 0xfe42,
        tls_name: "mldsa65_ed25519_sha512",
    },
    CompositeAlgorithm {
        name: "MLDSA87-ECDSA-P384-SHA512",
        oid: "1.3.6.1.5.5.7.6.49",
        label: "COMPSIG-MLDSA87-ECDSA-P384-SHA512",
        prehash: PreHash::Sha512,
        mldsa: MlDsa::Ml87,
        traditional: Traditional::EcdsaP384Sha384,
        code_point: 0xfe43,
        tls_name: "mldsa87_ecdsa_secp384r1_sha512",
    },
];

chainlab_mtc::named_table!(CompositeAlgorithm, ALGORITHMS);

/// An algorithm by chainlab name (or the draft's, with `id-`), case-insensitively.
pub fn lookup(name: &str) -> anyhow::Result<&'static CompositeAlgorithm> {
    let wanted = name.trim();
    let wanted = wanted.strip_prefix("id-").unwrap_or(wanted);
    named::lookup(ALGORITHMS, "composite algorithm", wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_oids_labels_and_code_points_are_unique_and_private_use() {
        for (i, a) in ALGORITHMS.iter().enumerate() {
            assert!((0xfe00..=0xffff).contains(&a.code_point), "{}", a.name);
            // The label is the draft's name with COMPSIG in place of id.
            assert_eq!(a.label, format!("COMPSIG-{}", a.name));
            assert!(a
                .name
                .starts_with(&a.mldsa.name().replace("ML-DSA-", "MLDSA")));
            for b in &ALGORITHMS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.oid, b.oid);
                assert_ne!(a.code_point, b.code_point);
                assert_ne!(a.tls_name, b.tls_name);
            }
        }
        assert_eq!(
            lookup("id-mldsa65-ecdsa-p256-sha512").unwrap().oid,
            "1.3.6.1.5.5.7.6.45"
        );
        let err = lookup("MLDSA65-RSA3072-PSS-SHA512")
            .unwrap_err()
            .to_string();
        assert!(err.contains("allowed: MLDSA44-ECDSA-P256-SHA256"), "{err}");
    }
}
