//! What this stack can do, in one table: the signature algorithms it signs and verifies, the
//! key-exchange groups it offers; the engine features it has are chainlab_record::features'.
//! `info` prints them; the Python side keeps a copy (`chainlab/axes/stack.py`, checked against
//! `info` by a test) so `validate` refuses a scenario this stack cannot run before anything
//! runs.
//!
//! The names are the OpenSSL engine's, so one campaign file names both stacks' algorithms:
//! `pki --chain` names for signature algorithms, OpenSSL `--groups` names for groups, TLS
//! names for signature schemes and for what a record says was negotiated.

use std::sync::LazyLock;

use rustls::crypto::aws_lc_rs::kx_group;
use rustls::crypto::SupportedKxGroup;
use rustls::{NamedGroup, SignatureScheme};

/// The stack name campaigns use and every record carries.
pub const STACK: &str = "rustls";

/// A signature algorithm of the PKI this stack signs and verifies with (rustls' aws-lc-rs
/// provider for ECDSA, Ed25519 and RSA; rustls-post-quantum over aws-lc-rs for ML-DSA;
/// liboqs for Falcon, MAYO, UOV and CROSS, `liboqs.rs`).
#[derive(Debug, Clone, Copy)]
pub struct Signature {
    /// `pki --chain` name.
    pub algorithm: &'static str,
    /// The TLS 1.3 signature scheme a CertificateVerify of such a key uses.
    pub scheme: SignatureScheme,
    /// Its TLS name, as OpenSSL prints it (what records hold).
    pub tls_name: &'static str,
    /// The library that signs and verifies it by default: "aws-lc", "liboqs" or, for
    /// composite ML-DSA, "aws-lc (composite)" (aws-lc's components, `crate::composite`).
    pub implementation: &'static str,
}

/// Every algorithm: aws-lc's, then those only liboqs has (OQS provider code points; some a
/// root only, `root_only`), then composite ML-DSA (private-use code points).
pub static SIGNATURES: LazyLock<Vec<Signature>> = LazyLock::new(|| {
    let liboqs = chainlab_oqs::algorithms::only_liboqs().map(|a| Signature {
        algorithm: a.name,
        scheme: crate::liboqs::scheme(a),
        tls_name: a.tls_name,
        implementation: "liboqs",
    });
    let composite = chainlab_composite::ALGORITHMS.iter().map(|a| Signature {
        algorithm: a.name,
        scheme: crate::composite::scheme(a),
        tls_name: a.tls_name,
        implementation: "aws-lc (composite)",
    });
    AWS_LC
        .iter()
        .copied()
        .chain(liboqs)
        .chain(composite)
        .collect()
});

/// What `--signature-impl` may choose on this stack.
pub const SIGNATURE_IMPLEMENTATIONS: &[&str] = &["stack", "liboqs"];

/// webpki (rustls' certificate verifier) reads DER elements of at most this many bytes: a
/// longer certificate is never received (a Certificate message is shorter still) and a
/// longer trust anchor is checked by `anchors` instead.
pub const MAX_DER_ELEMENT: usize = 0xffff;

/// The algorithms this stack uses as a root only, and why: UOV-Is (412,160-byte key) and
/// UOV-Ip (278,432) fit in no Certificate message rustls receives, so only a root's key,
/// which is never sent, can be one; and below a root webpki cannot read, the client checks
/// the certificate it issued itself (`anchors`), which must be an intermediate.
pub fn root_only(algorithm: &chainlab_oqs::OqsAlgorithm) -> Option<String> {
    let (_, key) = chainlab_oqs::backend::lengths(algorithm).ok()?;
    (key > MAX_DER_ELEMENT).then(|| {
        format!(
            "its {key}-byte public key fits in no Certificate message rustls receives: a root \
             above an intermediate only (the client checks the root's signature itself)"
        )
    })
}

/// rustls refuses a handshake message longer than this (its deframer's fixed limit), so a
/// Certificate message of a chain with a UOV-Is or UOV-Ip key cannot be received.
pub const MAX_HANDSHAKE_MESSAGE: usize = 0xffff;

const AWS_LC: &[Signature] = &[
    Signature {
        algorithm: "ML-DSA-44",
        scheme: SignatureScheme::ML_DSA_44,
        tls_name: "mldsa44",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "ML-DSA-65",
        scheme: SignatureScheme::ML_DSA_65,
        tls_name: "mldsa65",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "ML-DSA-87",
        scheme: SignatureScheme::ML_DSA_87,
        tls_name: "mldsa87",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "ECDSA-P256",
        scheme: SignatureScheme::ECDSA_NISTP256_SHA256,
        tls_name: "ecdsa_secp256r1_sha256",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "ECDSA-P384",
        scheme: SignatureScheme::ECDSA_NISTP384_SHA384,
        tls_name: "ecdsa_secp384r1_sha384",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "Ed25519",
        scheme: SignatureScheme::ED25519,
        tls_name: "ed25519",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "RSA-2048",
        scheme: SignatureScheme::RSA_PSS_SHA256,
        tls_name: "rsa_pss_rsae_sha256",
        implementation: "aws-lc",
    },
    Signature {
        algorithm: "RSA-3072",
        scheme: SignatureScheme::RSA_PSS_SHA256,
        tls_name: "rsa_pss_rsae_sha256",
        implementation: "aws-lc",
    },
];

/// TLS names of the schemes rustls may negotiate that no PKI algorithm above maps to one to
/// one (RSA with SHA-384/512); for naming what a record saw.
const OTHER_SCHEMES: &[(SignatureScheme, &str)] = &[
    (SignatureScheme::RSA_PSS_SHA384, "rsa_pss_rsae_sha384"),
    (SignatureScheme::RSA_PSS_SHA512, "rsa_pss_rsae_sha512"),
    (
        SignatureScheme::ECDSA_NISTP521_SHA512,
        "ecdsa_secp521r1_sha512",
    ),
];

/// A key-exchange group: OpenSSL's `--groups` spelling (and aliases), the name OpenSSL
/// records for it once negotiated, and rustls' implementation.
pub struct Group {
    pub names: &'static [&'static str],
    pub recorded: &'static str,
    pub kx: &'static dyn SupportedKxGroup,
}

pub const GROUPS: &[Group] = &[
    Group {
        names: &["X25519MLKEM768"],
        recorded: "X25519MLKEM768",
        kx: kx_group::X25519MLKEM768,
    },
    Group {
        names: &["SecP256r1MLKEM768"],
        recorded: "SecP256r1MLKEM768",
        kx: kx_group::SECP256R1MLKEM768,
    },
    Group {
        names: &["MLKEM768"],
        recorded: "MLKEM768",
        kx: kx_group::MLKEM768,
    },
    Group {
        names: &["MLKEM1024"],
        recorded: "MLKEM1024",
        kx: kx_group::MLKEM1024,
    },
    Group {
        names: &["X25519"],
        recorded: "x25519",
        kx: kx_group::X25519,
    },
    Group {
        names: &["P-256", "secp256r1", "prime256v1"],
        recorded: "secp256r1",
        kx: kx_group::SECP256R1,
    },
    Group {
        names: &["P-384", "secp384r1"],
        recorded: "secp384r1",
        kx: kx_group::SECP384R1,
    },
];

/// RFC 8879 certificate compression algorithms (rustls' `zlib` and `brotli` features; no
/// zstd in rustls).
pub const CERT_COMPRESSIONS: &[&str] = &["zlib", "brotli"];

// The engine features rustls' engine lacks (chainlab_record::features names the stacks that
// have each): `targets`: probing servers chainlab did not start is not validated on this
// stack (its client never met a server of another make there). `seeded_random`: aws-lc draws
// its own random bytes inside key generation, encapsulation and ML-DSA signing, with no hook
// to seed them (`--random-seed`). `trust_anchors`: rustls has no trust_anchors extension
// (draft-ietf-tls-trust-anchor-ids). `client_profile`: a browser's ClientHello (GREASE,
// extension permutation) is BoringSSL's. `quic`, `client_auth`, `partial_chain`,
// `untrusted_intermediates`, `resumption_mix`, `server_group_preference`: not built on this
// stack (docs/stacks.md).

/// The groups of a `--groups` list, in order; an error names the unknown one and the allowed.
pub fn groups(list: &str) -> anyhow::Result<Vec<&'static dyn SupportedKxGroup>> {
    chainlab_record::output::each_group(list, STACK, GROUPS, |g| g.names, |g| g.kx)
}

/// The schemes of a `--sigalgs` list; an error names the unknown one and the allowed.
pub fn schemes(list: &str) -> anyhow::Result<Vec<SignatureScheme>> {
    let lookup = |name: &str| {
        SIGNATURES
            .iter()
            .find(|s| s.tls_name.eq_ignore_ascii_case(name))
            .map(|s| s.scheme)
    };
    let names = SIGNATURES.iter().map(|s| s.tls_name);
    chainlab_record::output::each_named("--sigalgs", list, "scheme", STACK, lookup, names)
}

/// The name a record gives a negotiated group (OpenSSL's, so stacks compare).
pub fn group_name(group: NamedGroup) -> String {
    GROUPS
        .iter()
        .find(|g| g.kx.name() == group)
        .map(|g| g.recorded.to_owned())
        .unwrap_or_else(|| format!("{group:?}"))
}

/// The name a record gives a signature scheme (its TLS name, as OpenSSL prints it).
pub fn scheme_name(scheme: SignatureScheme) -> String {
    SIGNATURES
        .iter()
        .map(|s| (s.scheme, s.tls_name))
        .chain(OTHER_SCHEMES.iter().copied())
        .find(|(s, _)| *s == scheme)
        .map(|(_, name)| name.to_owned())
        .unwrap_or_else(|| format!("{scheme:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_follow_openssl() {
        let got = groups("X25519MLKEM768:mlkem768:P-256").unwrap();
        assert_eq!(got[0].name(), NamedGroup::X25519MLKEM768);
        assert_eq!(group_name(got[1].name()), "MLKEM768");
        assert_eq!(group_name(got[2].name()), "secp256r1");
        let err = groups("X25519:ffdhe2048").unwrap_err().to_string();
        assert!(err.contains("\"ffdhe2048\"") && err.contains("allowed: X25519MLKEM768"));
    }

    #[test]
    fn scheme_names_are_tls_names() {
        assert_eq!(scheme_name(SignatureScheme::ML_DSA_65), "mldsa65");
        assert_eq!(
            schemes("mldsa44:ecdsa_secp256r1_sha256").unwrap(),
            vec![
                SignatureScheme::ML_DSA_44,
                SignatureScheme::ECDSA_NISTP256_SHA256
            ]
        );
        assert!(schemes("slhdsa_shake_128f").is_err());
    }
}
