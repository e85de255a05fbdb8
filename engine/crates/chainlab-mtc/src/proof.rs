//! The MTCProof a certificate carries as its signatureValue, and the CosignedMessage a
//! cosigner signs (the draft's "Certificate Format" and "Signature Format"), both in the
//! TLS presentation language's encoding.

use anyhow::{bail, Result};

use crate::{der, Encoding, Hash, HASH_SIZE, TRUST_ANCHOR_ARC};

/// One cosigner's signature over the proof's subtree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtreeSignature {
    /// The cosigner's trust anchor ID, binary (relative OID) form.
    pub cosigner_id: Vec<u8>,
    pub signature: Vec<u8>,
}

/// `struct { extensions<0..2^16-1>; uint48 start, end; HashValue inclusion_proof<..>;
/// SubtreeSignature signatures<..> } MTCProof`; `signatures` has a 24-bit length in -07
/// (as BoringSSL reads it), a 16-bit one in the early experiments' encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtcProof {
    pub encoding: Encoding,
    /// The log entry's extensions, without their length prefix (chainlab writes none).
    pub extensions: Vec<u8>,
    pub start: u64,
    pub end: u64,
    pub inclusion_proof: Vec<Hash>,
    /// Ordered by cosigner ID: shorter first, then bytewise; no duplicates.
    pub signatures: Vec<SubtreeSignature>,
}

/// The draft's cosigner order: shorter IDs first, then bytewise.
pub fn id_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl MtcProof {
    /// The `extensions` field as the log entry holds it: its 2-byte length, then the bytes.
    pub fn extensions_field(&self) -> Vec<u8> {
        let mut out = (self.extensions.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(&self.extensions);
        out
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.extensions_field();
        out.extend_from_slice(&self.start.to_be_bytes()[2..]);
        out.extend_from_slice(&self.end.to_be_bytes()[2..]);
        out.extend_from_slice(&((self.inclusion_proof.len() * HASH_SIZE) as u16).to_be_bytes());
        for h in &self.inclusion_proof {
            out.extend_from_slice(h);
        }
        let mut sigs = Vec::new();
        for s in &self.signatures {
            sigs.push(s.cosigner_id.len() as u8);
            sigs.extend_from_slice(&s.cosigner_id);
            sigs.extend_from_slice(&(s.signature.len() as u16).to_be_bytes());
            sigs.extend_from_slice(&s.signature);
        }
        let width = self.encoding.signatures_length_bytes();
        out.extend_from_slice(&(sigs.len() as u32).to_be_bytes()[4 - width..]);
        out.extend_from_slice(&sigs);
        out
    }

    /// Parses a whole signatureValue written in `encoding`; trailing bytes, a proof that is
    /// not whole hashes, and cosigner IDs out of order or repeated are errors.
    pub fn decode(input: &[u8], encoding: Encoding) -> Result<MtcProof> {
        let mut r = Reader(input);
        let extensions = r.vector16("extensions")?.to_vec();
        let start = r.uint48("start")?;
        let end = r.uint48("end")?;
        let proof = r.vector16("inclusion_proof")?;
        if !proof.len().is_multiple_of(HASH_SIZE) {
            bail!(
                "MTCProof: inclusion_proof of {} bytes is not whole hashes",
                proof.len()
            );
        }
        let inclusion_proof = proof
            .chunks_exact(HASH_SIZE)
            .map(|c| c.try_into().expect("a chunk of HASH_SIZE"))
            .collect();
        let mut s = Reader(r.vector(encoding.signatures_length_bytes(), "signatures")?);
        let mut signatures: Vec<SubtreeSignature> = Vec::new();
        while !s.0.is_empty() {
            let cosigner_id = s.vector8("cosigner_id")?.to_vec();
            if cosigner_id.is_empty() {
                bail!("MTCProof: an empty cosigner_id");
            }
            if let Some(prev) = signatures.last() {
                if id_order(&prev.cosigner_id, &cosigner_id) != std::cmp::Ordering::Less {
                    bail!("MTCProof: cosigner IDs out of order or repeated");
                }
            }
            let signature = s.vector16("signature")?.to_vec();
            signatures.push(SubtreeSignature {
                cosigner_id,
                signature,
            });
        }
        if !r.0.is_empty() {
            bail!("MTCProof: {} bytes after the structure", r.0.len());
        }
        Ok(MtcProof {
            encoding,
            extensions,
            start,
            end,
            inclusion_proof,
            signatures,
        })
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.0.len() < n {
            bail!("MTCProof: {what} truncated");
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn uint48(&mut self, what: &str) -> Result<u64> {
        Ok(self
            .take(6, what)?
            .iter()
            .fold(0u64, |a, &b| (a << 8) | b as u64))
    }
    fn vector16(&mut self, what: &str) -> Result<&'a [u8]> {
        self.vector(2, what)
    }
    /// A vector whose length takes `width` bytes.
    fn vector(&mut self, width: usize, what: &str) -> Result<&'a [u8]> {
        let n = self.take(width, what)?;
        let len = n.iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        self.take(len, what)
    }
    fn vector8(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.take(1, what)?[0] as usize;
        self.take(n, what)
    }
}

/// A trust anchor ID's name in signed messages: `oid/1.3.6.1.4.1.<id>`.
pub fn oid_name(trust_anchor_id: &str) -> String {
    format!("oid/{TRUST_ANCHOR_ARC}.{trust_anchor_id}")
}

/// The log ID of log `log_number` of CA `ca_id`: `<ca_id>.0.<log_number>`.
pub fn log_id(ca_id: &str, log_number: u64) -> String {
    format!("{ca_id}.0.{log_number}")
}

/// What cosigner `cosigner_id` signs for subtree `[start, end)` of log `log_id` with hash
/// `subtree_hash` (timestamp 0, as certificates require).
pub fn cosigned_message(
    cosigner_id: &str,
    log_id: &str,
    start: u64,
    end: u64,
    subtree_hash: &Hash,
) -> Vec<u8> {
    let mut out = b"subtree/v1\n\0".to_vec();
    for (name, value) in [
        (oid_name(cosigner_id), None),
        (oid_name(log_id), Some(0u64)),
    ] {
        if let Some(timestamp) = value {
            out.extend_from_slice(&timestamp.to_be_bytes());
        }
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
    }
    out.extend_from_slice(&start.to_be_bytes());
    out.extend_from_slice(&end.to_be_bytes());
    out.extend_from_slice(subtree_hash);
    out
}

/// A trust anchor ID's binary form (for `cosigner_id`).
pub fn binary_id(trust_anchor_id: &str) -> Result<Vec<u8>> {
    der::relative_oid(trust_anchor_id)
}

/// The trust anchor ID chainlab gives landmark `landmark` of log `log_number` of CA
/// `ca_id`: the log's ID with the landmark's number appended (`<ca_id>.0.<log>.<landmark>`).
/// The draft leaves a landmark sequence's IDs to the CA; this is chainlab's choice.
pub fn landmark_id(ca_id: &str, log_number: u64, landmark: u64) -> String {
    format!("{}.{landmark}", log_id(ca_id, log_number))
}

/// The largest trust anchor ID, in bytes (draft-ietf-tls-trust-anchor-ids-06).
pub const MAX_TRUST_ANCHOR_ID_BYTES: usize = 32;

/// A list of trust anchor IDs (dotted) in the `trust_anchors` extension's wire format: each
/// ID's binary form with its 8-bit length (the `TrustAnchorID` vector's elements). An error
/// names an ID that is not dotted decimals or is longer than the draft allows.
pub fn trust_anchor_list(ids: &[String]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for id in ids {
        let binary = binary_id(id)?;
        if binary.is_empty() || binary.len() > MAX_TRUST_ANCHOR_ID_BYTES {
            bail!(
                "trust anchor ID {id:?} is {} bytes; allowed: 1 to {MAX_TRUST_ANCHOR_ID_BYTES}",
                binary.len()
            );
        }
        out.push(binary.len() as u8);
        out.extend_from_slice(&binary);
    }
    Ok(out)
}

/// The dotted IDs of a wire-format list (`trust_anchor_list`'s inverse); None if malformed.
pub fn trust_anchor_ids(mut wire: &[u8]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    while let Some((&n, rest)) = wire.split_first() {
        let n = n as usize;
        if n == 0 || rest.len() < n {
            return None;
        }
        out.push(der::relative_oid_text(&rest[..n])?);
        wire = &rest[n..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_decodes_and_refuses_malformed_input() {
        for (encoding, width) in [(Encoding::Plants07, 3), (Encoding::Experimental, 2)] {
            let p = MtcProof {
                encoding,
                extensions: vec![],
                start: 8,
                end: 13,
                inclusion_proof: vec![[1; 32], [2; 32]],
                signatures: vec![
                    SubtreeSignature {
                        cosigner_id: vec![1, 2],
                        signature: vec![9; 5],
                    },
                    SubtreeSignature {
                        cosigner_id: vec![1, 2, 3],
                        signature: vec![8; 3],
                    },
                ],
            };
            let bytes = p.encode();
            assert_eq!(
                bytes.len(),
                2 + 12 + 2 + 64 + width + (1 + 2 + 2 + 5) + (1 + 3 + 2 + 3)
            );
            assert_eq!(MtcProof::decode(&bytes, encoding).unwrap(), p);
            let other = Encoding::ALL.into_iter().find(|&e| e != encoding).unwrap();
            assert!(
                MtcProof::decode(&bytes, other).is_err(),
                "{encoding:?} read as {other:?}"
            );
            assert!(MtcProof::decode(&bytes[..bytes.len() - 1], encoding).is_err());
            let mut extra = bytes.clone();
            extra.push(0);
            assert!(MtcProof::decode(&extra, encoding).is_err());
            let mut swapped = p.clone();
            swapped.signatures.reverse();
            assert!(MtcProof::decode(&swapped.encode(), encoding).is_err());
        }
    }

    #[test]
    fn trust_anchor_lists_round_trip_and_refuse_bad_ids() {
        let ids = vec!["32473.1".to_owned(), landmark_id("32473.1", 1, 2)];
        assert_eq!(ids[1], "32473.1.0.1.2");
        let wire = trust_anchor_list(&ids).unwrap();
        assert_eq!(&wire[..5], &[4, 0x81, 0xfd, 0x59, 0x01]);
        assert_eq!(wire.len(), 5 + 1 + 7);
        assert_eq!(trust_anchor_ids(&wire), Some(ids));
        assert_eq!(trust_anchor_ids(&wire[..7]), None);
        assert!(trust_anchor_list(&["32473.x".to_owned()]).is_err());
        let long = vec!["1"; 33].join(".");
        assert!(trust_anchor_list(&[long])
            .unwrap_err()
            .to_string()
            .contains("33 bytes"));
    }

    #[test]
    fn the_cosigned_message_layout() {
        let m = cosigned_message("32473.1", &log_id("32473.1", 1), 0, 4, &[7; 32]);
        let name = b"oid/1.3.6.1.4.1.32473.1";
        let origin = b"oid/1.3.6.1.4.1.32473.1.0.1";
        assert_eq!(&m[..12], b"subtree/v1\n\0");
        assert_eq!(m[12] as usize, name.len());
        assert_eq!(&m[13..13 + name.len()], name);
        let at = 13 + name.len();
        assert_eq!(&m[at..at + 8], &[0; 8]);
        assert_eq!(&m[at + 9..at + 9 + origin.len()], origin);
        assert_eq!(m.len(), at + 8 + 1 + origin.len() + 16 + 32);
    }
}
