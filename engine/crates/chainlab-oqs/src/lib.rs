//! The signature families chainlab takes from liboqs: Falcon, MAYO, UOV and CROSS (which no
//! OpenSSL of ours can do), and liboqs' own ML-DSA (a second implementation of an algorithm
//! the stacks already have). Stack-free: the TLS engines and `pki` use it alike.
//!
//! - `algorithms`: one table of names, liboqs identifiers, OIDs and TLS code points (the Open
//!   Quantum Safe provider's, so a client of that provider would interoperate).
//! - `keys`: keys from a seed, signing (seeded or random) and verifying.
//! - `encoding`: AlgorithmIdentifier, SubjectPublicKeyInfo, PKCS#8 and key identifiers.
//! - `facts`: which liboqs and which implementation it chose on this CPU.
//! - `backend`: liboqs itself, behind the `liboqs` feature (without it, every operation
//!   says this build has none).

pub mod algorithms;
pub mod backend;
pub mod encoding;
pub mod facts;
pub mod keys;

pub use algorithms::{lookup, OqsAlgorithm, ALGORITHMS};
pub use keys::Key;

/// Whether this build has liboqs (the `liboqs` feature).
pub const LIBOQS: bool = backend::AVAILABLE;
