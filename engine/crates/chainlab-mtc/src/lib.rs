//! Merkle Tree Certificates, as draft-ietf-plants-merkle-tree-certs-07 specifies them, for
//! both chainlab engines: the OpenSSL engine issues them (`pki --mtc`) and both engines'
//! clients verify them (with their own stack's signature verification behind
//! [`verify::SignatureCheck`]).
//!
//! - [`tree`]: RFC 9162 Merkle tree hashes over a range of log entries, subtree inclusion
//!   proofs and their evaluation, the draft's subtree rules.
//! - [`der`]: the few DER reading and writing steps a certificate needs.
//! - [`entry`]: the log entry (MTCLogEntry) of a TBSCertificate, and synthetic entries.
//! - [`proof`]: the MTCProof carried as the certificate's signature, and the message a
//!   cosigner signs.
//! - [`issue`]: a batch of a log, its subtrees, and the certificate for one entry.
//! - [`verify`]: the relying party's checks and what they found.
//! - [`named`]: finding a row of a named signature-algorithm table (liboqs's, composite's).
//! - [`ca`]: the MTC CA certificate a relying party such as BoringSSL takes as trust anchor.
//!
//! SHA-256 is the log's hash throughout (the draft's RECOMMENDED choice).

pub mod ca;
pub mod der;
pub mod entry;
pub mod issue;
pub mod named;
pub mod proof;
pub mod tree;
pub mod verify;

/// The log's hash function's output size (SHA-256).
pub const HASH_SIZE: usize = 32;

/// A node or entry hash.
pub type Hash = [u8; HASH_SIZE];

/// How a certificate names its algorithm and CA, and frames its cosignatures: what
/// draft-ietf-plants-merkle-tree-certs-07 and its shipping relying party (BoringSSL's
/// `crypto/x509/x509_mtc.cc`) use, or the early experiments' encoding chainlab wrote before
/// (kept so old results can be compared with new ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Encoding {
    /// IANA OIDs: id-alg-mtcProof 1.3.6.1.5.5.7.6.67, the CA ID as a RELATIVE-OID under
    /// id-rdna-trustAnchorID 1.3.6.1.5.5.7.25.3, cosignatures in a 24-bit-length vector, and an
    /// MTC CA certificate (id-pe-mtcCertificationAuthority-SHA256) for the relying party.
    #[serde(rename = "plants-07")]
    Plants07,
    /// Cloudflare's experimental arc: id-alg-mtcProof 1.3.6.1.4.1.44363.47.0, the CA ID as a
    /// UTF8String under 1.3.6.1.4.1.44363.47.1, cosignatures in a 16-bit-length vector.
    #[serde(rename = "experimental")]
    Experimental,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::Plants07, Encoding::Experimental];

    /// The name `pki --mtc-encoding`, manifests and stores use.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Plants07 => "plants-07",
            Encoding::Experimental => "experimental",
        }
    }

    pub fn parse(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// id-alg-mtcProof.
    pub fn proof_oid(self) -> &'static str {
        match self {
            Encoding::Plants07 => "1.3.6.1.5.5.7.6.67",
            Encoding::Experimental => "1.3.6.1.4.1.44363.47.0",
        }
    }

    /// The attribute type holding a CA ID in a distinguished name.
    pub fn ca_id_attribute(self) -> &'static str {
        match self {
            Encoding::Plants07 => "1.3.6.1.5.5.7.25.3",
            Encoding::Experimental => "1.3.6.1.4.1.44363.47.1",
        }
    }

    /// Bytes of the length of MTCProof's `signatures` vector.
    pub fn signatures_length_bytes(self) -> usize {
        match self {
            Encoding::Plants07 => 3,
            Encoding::Experimental => 2,
        }
    }
}

/// id-pe-mtcCertificationAuthority-SHA256: the critical extension of an MTC CA certificate
/// (-07), `SEQUENCE { cosigner AlgorithmIdentifier, minSerial INTEGER, maxSerial INTEGER }`.
pub const OID_MTC_CA_EXTENSION: &str = "1.3.6.1.5.5.7.1.38";

/// The arc every trust anchor ID's ASCII form is relative to (`oid/1.3.6.1.4.1.` in signed
/// messages).
pub const TRUST_ANCHOR_ARC: &str = "1.3.6.1.4.1";
