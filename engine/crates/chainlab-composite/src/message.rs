//! The message representative both components sign (draft section "Prefix, Label, and CTX"):
//!
//! ```text
//! M' = Prefix || Label || len(ctx) || ctx || PH(M)
//! ```
//!
//! Prefix is the ASCII of "CompositeAlgorithmSignatures2025", Label the algorithm's, len(ctx)
//! one byte. TLS 1.3 signs with an empty context: CertificateVerify's signed content is M.

use anyhow::{bail, Result};
use sha2::{Digest, Sha256, Sha512};

use crate::algorithms::{CompositeAlgorithm, PreHash};

/// The fixed prefix of every M'.
pub const PREFIX: &[u8] = b"CompositeAlgorithmSignatures2025";

/// PH(M).
pub fn prehash(algorithm: &CompositeAlgorithm, message: &[u8]) -> Vec<u8> {
    match algorithm.prehash {
        PreHash::Sha256 => Sha256::digest(message).to_vec(),
        PreHash::Sha512 => Sha512::digest(message).to_vec(),
    }
}

/// M' for `message` under application context `context` (at most 255 bytes).
pub fn representative(
    algorithm: &CompositeAlgorithm,
    message: &[u8],
    context: &[u8],
) -> Result<Vec<u8>> {
    let Ok(len) = u8::try_from(context.len()) else {
        bail!(
            "a composite signature's context has at most 255 bytes, not {}",
            context.len()
        );
    };
    let digest = prehash(algorithm, message);
    let mut out = Vec::with_capacity(PREFIX.len() + algorithm.label.len() + 1 + context.len() + 64);
    out.extend_from_slice(PREFIX);
    out.extend_from_slice(algorithm.label.as_bytes());
    out.push(len);
    out.extend_from_slice(context);
    out.extend_from_slice(&digest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::lookup;

    #[test]
    fn the_representative_is_prefix_label_context_and_the_prehash() {
        let a = lookup("MLDSA65-ECDSA-P256-SHA512").unwrap();
        let m = representative(a, b"abc", b"").unwrap();
        // The draft's sample (messageFormatSample_noctx.md) has this layout: prefix (32),
        // label (33), a zero length byte, SHA-512 of M (64).
        assert_eq!(m.len(), 32 + 33 + 1 + 64);
        assert_eq!(&m[..32], PREFIX);
        assert_eq!(&m[32..65], b"COMPSIG-MLDSA65-ECDSA-P256-SHA512");
        assert_eq!(m[65], 0);
        assert_eq!(&m[66..], Sha512::digest(b"abc").as_slice());
        let with = representative(a, b"abc", b"ctx").unwrap();
        assert_eq!(&with[65..69], b"\x03ctx");
        let short = representative(lookup("MLDSA44-ECDSA-P256-SHA256").unwrap(), b"abc", b"");
        assert_eq!(short.unwrap().len(), 32 + 33 + 1 + 32);
        assert!(representative(a, b"abc", &[0; 256]).is_err());
    }
}
