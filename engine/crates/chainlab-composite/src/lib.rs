//! Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19): one key and one signature made
//! of an ML-DSA component and a traditional one (ECDSA or Ed25519), both of which must
//! verify. Stack-free: the component operations come from the TLS stack's own library
//! through `Components` (OpenSSL's in `pki` and the OpenSSL engine, aws-lc's in the rustls
//! engine), as a rustls crypto provider plugs a library into rustls.
//!
//! - `algorithms`: the table (names, OIDs, labels, pre-hash, components, TLS code points).
//! - `message`: the message representative M' = Prefix || Label || len(ctx) || ctx || PH(M).
//! - `encoding`: the draft's serializations (public key, private key, signature) and their
//!   DER forms (AlgorithmIdentifier, SubjectPublicKeyInfo, PKCS#8, ECPrivateKey).
//! - `scheme`: `Components`, a composite key that signs, and composite verification.

pub mod algorithms;
pub mod encoding;
pub mod message;
pub mod scheme;

pub use algorithms::{lookup, CompositeAlgorithm, MlDsa, PreHash, Traditional, ALGORITHMS};
pub use scheme::{verify, Components, CompositeKey, MlDsaSigner, TradSigner};
