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
//!
//! SHA-256 is the log's hash throughout (the draft's RECOMMENDED choice).

pub mod der;
pub mod entry;
pub mod issue;
pub mod proof;
pub mod tree;
pub mod verify;

/// The log's hash function's output size (SHA-256).
pub const HASH_SIZE: usize = 32;

/// A node or entry hash.
pub type Hash = [u8; HASH_SIZE];

/// id-alg-mtcProof: the experimental OID the draft's early implementations use until one is
/// assigned (1.3.6.1.4.1.44363.47.0).
pub const OID_MTC_PROOF: &str = "1.3.6.1.4.1.44363.47.0";

/// The attribute type of a CA ID in a distinguished name, experimental form (UTF8String
/// value) until id-rdna-trustAnchorID is assigned.
pub const OID_TRUST_ANCHOR_ID_ATTR: &str = "1.3.6.1.4.1.44363.47.1";

/// The arc every trust anchor ID's ASCII form is relative to (`oid/1.3.6.1.4.1.` in signed
/// messages).
pub const TRUST_ANCHOR_ARC: &str = "1.3.6.1.4.1";
