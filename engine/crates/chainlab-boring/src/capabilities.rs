//! What this stack can do, in one table: the signature algorithms it signs and verifies, the
//! key-exchange groups it offers and the certificate compressions it has; the engine features
//! it has are chainlab_record::features'. `info` prints them; the Python side keeps a copy
//! (`chainlab/axes/stack.py`, checked against `info` by a test) so `validate` refuses a
//! scenario this stack cannot run before anything runs.
//!
//! The names are the OpenSSL engine's, so one campaign file names every stack's algorithms:
//! `pki --chain` names for signature algorithms, OpenSSL `--groups` names for groups, TLS
//! names for signature schemes and for what a record says was negotiated.

use chainlab_record::args::SignatureImpl;
use chainlab_record::features;

/// The stack name campaigns use and every record carries.
pub const STACK: &str = "boringssl";

/// A signature algorithm of the PKI this stack signs and verifies with.
#[derive(Debug, Clone, Copy)]
pub struct Signature {
    /// `pki --chain` name.
    pub algorithm: &'static str,
    /// The TLS 1.3 signature scheme (code point) a CertificateVerify of such a key uses.
    pub scheme: u16,
    /// Its TLS name, as OpenSSL prints it (what records hold).
    pub tls_name: &'static str,
}

/// Every algorithm of `pki` BoringSSL signs and verifies, in certificates and in TLS 1.3
/// (ML-DSA: draft-ietf-tls-mldsa's 0x0904-0x0906). No SLH-DSA and none of liboqs' families.
pub const SIGNATURES: &[Signature] = &[
    Signature {
        algorithm: "ML-DSA-44",
        scheme: 0x0904,
        tls_name: "mldsa44",
    },
    Signature {
        algorithm: "ML-DSA-65",
        scheme: 0x0905,
        tls_name: "mldsa65",
    },
    Signature {
        algorithm: "ML-DSA-87",
        scheme: 0x0906,
        tls_name: "mldsa87",
    },
    Signature {
        algorithm: "ECDSA-P256",
        scheme: 0x0403,
        tls_name: "ecdsa_secp256r1_sha256",
    },
    Signature {
        algorithm: "ECDSA-P384",
        scheme: 0x0503,
        tls_name: "ecdsa_secp384r1_sha384",
    },
    Signature {
        algorithm: "Ed25519",
        scheme: 0x0807,
        tls_name: "ed25519",
    },
    Signature {
        algorithm: "RSA-2048",
        scheme: 0x0804,
        tls_name: "rsa_pss_rsae_sha256",
    },
    Signature {
        algorithm: "RSA-3072",
        scheme: 0x0804,
        tls_name: "rsa_pss_rsae_sha256",
    },
];

/// The schemes a client of this engine offers for the server's CertificateVerify and
/// accepts in certificates, in preference order: every scheme above (BoringSSL's default
/// verify list has neither ML-DSA nor Ed25519), then RSA-PSS and ECDSA with larger hashes.
/// `--sigalgs` replaces it.
pub const OFFERED_SCHEMES: &[u16] = &[
    0x0904, 0x0905, 0x0906, // ML-DSA-44/65/87
    0x0807, // Ed25519
    0x0403, 0x0804, // ECDSA P-256, RSA-PSS SHA-256
    0x0503, 0x0805, // ECDSA P-384, RSA-PSS SHA-384
    0x0603, 0x0806, // ECDSA P-521, RSA-PSS SHA-512
];

/// TLS names of the schemes a record may see that no PKI algorithm above maps to one to
/// one (RSA-PSS and ECDSA with larger hashes).
pub const OTHER_SCHEMES: &[(u16, &str)] = &[
    (0x0805, "rsa_pss_rsae_sha384"),
    (0x0806, "rsa_pss_rsae_sha512"),
    (0x0603, "ecdsa_secp521r1_sha512"),
];

/// A key-exchange group: OpenSSL's `--groups` spelling (and aliases), the name OpenSSL
/// records for it once negotiated, and BoringSSL's group id.
pub struct Group {
    pub names: &'static [&'static str],
    pub recorded: &'static str,
    pub id: u16,
}

/// BoringSSL's groups (SSL_GROUP_*): no MLKEM768 alone and no SecP256r1MLKEM768.
pub const GROUPS: &[Group] = &[
    Group {
        names: &["X25519MLKEM768"],
        recorded: "X25519MLKEM768",
        id: 0x11ec,
    },
    Group {
        names: &["MLKEM1024"],
        recorded: "MLKEM1024",
        id: 0x0202,
    },
    Group {
        names: &["X25519"],
        recorded: "x25519",
        id: 29,
    },
    Group {
        names: &["P-256", "secp256r1", "prime256v1"],
        recorded: "secp256r1",
        id: 23,
    },
    Group {
        names: &["P-384", "secp384r1"],
        recorded: "secp384r1",
        id: 24,
    },
];

/// RFC 8879 certificate compression algorithms, through BoringSSL's callbacks (`compression`).
pub const CERT_COMPRESSIONS: &[&str] = &["zlib", "brotli"];

// The engine features BoringSSL's engine lacks (chainlab_record::features names the stacks
// that have each): `quic`: BoringSSL's QUIC API leaves the transport to the caller (no QUIC
// stack here). `seeded_random`: BoringSSL draws its own random bytes, with no hook to seed
// them (`--random-seed`). `targets`: probing servers chainlab did not start is not validated
// on this stack. `signature_impl_liboqs`: BoringSSL signs with its own code.
// `server_group_preference`: the server takes the client's group order. Merkle Tree
// Certificates are served, and verified by BoringSSL's own verifier (`mtc`, landmark-relative
// ones by chainlab's relying party, which BoringSSL has none of), with no `mtc_cosigners`
// (BoringSSL checks the CA cosigner's signature only) and no `mtc_experimental` (the early
// experiments' OIDs); `mtc_retry`: the SNI stand-in for the trust-anchor retry, which the real
// `trust_anchors` extension replaces here.

/// The group ids of a `--groups` list, in order; an error names the unknown one and the
/// allowed.
pub fn groups(list: &str) -> anyhow::Result<Vec<u16>> {
    chainlab_record::output::each_group(list, STACK, GROUPS, |g| g.names, |g| g.id)
}

/// The schemes of a `--sigalgs` list; an error names the unknown one and the allowed.
pub fn schemes(list: &str) -> anyhow::Result<Vec<u16>> {
    let known = || {
        SIGNATURES
            .iter()
            .map(|s| (s.scheme, s.tls_name))
            .chain(OTHER_SCHEMES.iter().copied())
    };
    let lookup = |name: &str| {
        known()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(scheme, _)| scheme)
    };
    let names = known().map(|(_, n)| n);
    chainlab_record::output::each_named("--sigalgs", list, "scheme", STACK, lookup, names)
}

/// The name a record gives a negotiated group (OpenSSL's, so stacks compare).
pub fn group_name(id: u16) -> Option<String> {
    if id == 0 {
        return None;
    }
    Some(
        GROUPS
            .iter()
            .find(|g| g.id == id)
            .map(|g| g.recorded.to_owned())
            .unwrap_or_else(|| format!("0x{id:04x}")),
    )
}

/// The name a record gives a signature scheme (its TLS name, as OpenSSL prints it).
pub fn scheme_name(scheme: u16) -> Option<String> {
    if scheme == 0 {
        return None;
    }
    Some(
        SIGNATURES
            .iter()
            .map(|s| (s.scheme, s.tls_name))
            .chain(OTHER_SCHEMES.iter().copied())
            .find(|(s, _)| *s == scheme)
            .map(|(_, name)| name.to_owned())
            .unwrap_or_else(|| format!("0x{scheme:04x}")),
    )
}

/// Refuses `--signature-impl liboqs` (`primitives`).
pub fn check_signature_impl(signature_impl: SignatureImpl) -> anyhow::Result<()> {
    if signature_impl != SignatureImpl::Stack {
        features::refuse(STACK, "--signature-impl liboqs", "signature_impl_liboqs")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_follow_openssl() {
        assert_eq!(groups("X25519MLKEM768:p-256").unwrap(), vec![0x11ec, 23]);
        assert_eq!(group_name(23).as_deref(), Some("secp256r1"));
        let err = groups("X25519:MLKEM768").unwrap_err().to_string();
        assert!(err.contains("\"MLKEM768\"") && err.contains("allowed: X25519MLKEM768"));
    }

    #[test]
    fn scheme_names_are_tls_names() {
        assert_eq!(scheme_name(0x0905).as_deref(), Some("mldsa65"));
        assert_eq!(
            schemes("mldsa44:ecdsa_secp256r1_sha256").unwrap(),
            vec![0x0904, 0x0403]
        );
        assert!(schemes("slhdsa_shake_128f").is_err());
        assert_eq!(scheme_name(0), None);
    }
}
