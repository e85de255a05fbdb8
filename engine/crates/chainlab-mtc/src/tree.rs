//! RFC 9162 Merkle tree hashing over an issuance log's entries, and the draft's subtrees
//! (draft-ietf-plants-merkle-tree-certs-07, "Subtrees"): validity, the two subtrees that
//! cover an interval, inclusion proofs and their evaluation.
//!
//! Hashing never holds the tree: a subtree's hash is computed depth first from leaf hashes
//! produced on demand, so memory is O(log n) whatever the batch size, and the two halves of
//! a large subtree are hashed on two threads.

use sha2::{Digest, Sha256};

use crate::Hash;

/// A subtree this large or larger hashes its two halves on two threads (below it, a
/// thread's start-up costs more than it saves).
const PARALLEL_MIN: u64 = 1 << 15;

/// Where leaf hashes come from: `leaf(i)` is `MTH({d[i]}) = HASH(0x00 || d[i])`.
pub trait Leaves: Sync {
    fn leaf(&self, index: u64) -> Hash;
}

/// `HASH(0x00 || entry)`: the hash of a one-entry tree.
pub fn leaf_hash(entry: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

/// `HASH(0x01 || left || right)`: an interior node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The largest power of two strictly smaller than `n` (RFC 9162's `k`; `n >= 2`).
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// `[start, end)` is a subtree: `start <= end` and `start` is a multiple of
/// `BIT_CEIL(end - start)` (the draft's "Definition of a Subtree", overflow included).
pub fn is_valid_subtree(start: u64, end: u64) -> bool {
    if start > end {
        return false;
    }
    let size = end - start;
    if size > 1 << 63 {
        return start == 0;
    }
    start & (size.next_power_of_two() - 1) == 0
}

/// The two subtrees that cover `[start, end)` (the draft's "Selecting Two Subtrees"):
/// adjacent, the right one ending at `end`, the left one starting at or before `start`.
pub fn find_subtrees(start: u64, end: u64) -> ((u64, u64), (u64, u64)) {
    assert!(start <= end, "an interval [{start}, {end})");
    if end - start <= 1 {
        return ((start, end), (end, end));
    }
    let last = end - 1;
    let split = 63 - (start ^ last).leading_zeros();
    let mask = (1u64 << split) - 1;
    let mid = last & !mask;
    // At most `split` < 64 bits, so the shift below cannot overflow.
    let left_split = 64 - (!start & mask).leading_zeros();
    let left_start = start & !((1u64 << left_split) - 1);
    ((left_start, mid), (mid, end))
}

/// `MTH(D[start:end])` (`start < end`).
pub fn subtree_hash(leaves: &dyn Leaves, start: u64, end: u64) -> Hash {
    assert!(start < end, "the hash of an empty range [{start}, {end})");
    let n = end - start;
    if n == 1 {
        return leaves.leaf(start);
    }
    let k = split(n);
    let (left, right) = if n >= PARALLEL_MIN {
        std::thread::scope(|s| {
            let left = s.spawn(|| subtree_hash(leaves, start, start + k));
            let right = subtree_hash(leaves, start + k, end);
            // A panic in the left half is a bug in `leaves`; carry it to the caller.
            (
                left.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                right,
            )
        })
    } else {
        (
            subtree_hash(leaves, start, start + k),
            subtree_hash(leaves, start + k, end),
        )
    };
    node_hash(&left, &right)
}

/// The inclusion proof of entry `index` in subtree `[start, end)` (RFC 9162 2.1.3.1 over
/// `D[start:end]`), leaf end first.
pub fn inclusion_proof(leaves: &dyn Leaves, index: u64, start: u64, end: u64) -> Vec<Hash> {
    assert!(
        start <= index && index < end,
        "{index} outside [{start}, {end})"
    );
    let mut path = Vec::new();
    let (mut lo, mut hi) = (start, end);
    let mut siblings = Vec::new();
    while hi - lo > 1 {
        let k = split(hi - lo);
        if index < lo + k {
            siblings.push((lo + k, hi));
            hi = lo + k;
        } else {
            siblings.push((lo, lo + k));
            lo += k;
        }
    }
    // Collected root first; a proof lists them from the leaf up.
    for (a, b) in siblings.into_iter().rev() {
        path.push(subtree_hash(leaves, a, b));
    }
    path
}

/// Why an inclusion proof could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProofError {
    NotASubtree { start: u64, end: u64 },
    IndexOutside { index: u64, start: u64, end: u64 },
    TooLong,
    TooShort,
}

impl std::fmt::Display for ProofError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProofError::NotASubtree { start, end } => {
                write!(f, "[{start}, {end}) is not a subtree")
            }
            ProofError::IndexOutside { index, start, end } => {
                write!(f, "index {index} is outside [{start}, {end})")
            }
            ProofError::TooLong => write!(f, "the inclusion proof has hashes left over"),
            ProofError::TooShort => write!(f, "the inclusion proof ends before the subtree's root"),
        }
    }
}

/// The subtree hash an inclusion proof leads to (the draft's "Evaluating a Subtree
/// Inclusion Proof"): compare it with a trusted hash, or have cosigners vouch for it.
pub fn evaluate(
    proof: &[Hash],
    index: u64,
    entry_hash: &Hash,
    start: u64,
    end: u64,
) -> Result<Hash, ProofError> {
    if !is_valid_subtree(start, end) {
        return Err(ProofError::NotASubtree { start, end });
    }
    if !(start <= index && index < end) {
        return Err(ProofError::IndexOutside { index, start, end });
    }
    let (mut fnode, mut snode) = (index - start, end - start - 1);
    let mut r = *entry_hash;
    for p in proof {
        if snode == 0 {
            return Err(ProofError::TooLong);
        }
        if fnode & 1 == 1 || fnode == snode {
            r = node_hash(p, &r);
            while fnode & 1 == 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 {
        return Err(ProofError::TooShort);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Numbers;
    impl Leaves for Numbers {
        fn leaf(&self, index: u64) -> Hash {
            leaf_hash(&index.to_be_bytes())
        }
    }

    #[test]
    fn small_trees_hash_as_rfc9162_draws_them() {
        let l = |i: u64| Numbers.leaf(i);
        // Three leaves: ((0, 1), 2).
        let three = node_hash(&node_hash(&l(0), &l(1)), &l(2));
        assert_eq!(subtree_hash(&Numbers, 0, 3), three);
        // The subtree [4, 8) of any larger tree.
        let four = node_hash(&node_hash(&l(4), &l(5)), &node_hash(&l(6), &l(7)));
        assert_eq!(subtree_hash(&Numbers, 4, 8), four);
    }

    #[test]
    fn the_drafts_example_proof_for_entry_10_of_8_13() {
        let l = |i: u64| Numbers.leaf(i);
        let proof = inclusion_proof(&Numbers, 10, 8, 13);
        assert_eq!(proof, vec![l(11), node_hash(&l(8), &l(9)), l(12)]);
        let root = evaluate(&proof, 10, &l(10), 8, 13).unwrap();
        assert_eq!(root, subtree_hash(&Numbers, 8, 13));
    }

    #[test]
    fn every_proof_of_small_subtrees_evaluates_to_the_subtree_hash() {
        for (start, end) in [(0, 1), (0, 7), (8, 13), (16, 32), (64, 100), (0, 1000)] {
            assert!(is_valid_subtree(start, end));
            let root = subtree_hash(&Numbers, start, end);
            for index in start..end {
                let proof = inclusion_proof(&Numbers, index, start, end);
                let got = evaluate(&proof, index, &Numbers.leaf(index), start, end);
                assert_eq!(got, Ok(root), "{index} in [{start}, {end})");
                let mut bad = proof.clone();
                if let Some(first) = bad.first_mut() {
                    first[0] ^= 1;
                    assert_ne!(
                        evaluate(&bad, index, &Numbers.leaf(index), start, end),
                        Ok(root)
                    );
                }
            }
        }
    }

    #[test]
    fn parallel_hashing_agrees_with_the_proof_of_a_large_subtree() {
        let (start, end) = (1 << 17, (1 << 17) + 70_000);
        let root = subtree_hash(&Numbers, start, end);
        let index = start + 5; // in the left 2^16 half: 16 hashes, then the right half
        let proof = inclusion_proof(&Numbers, index, start, end);
        assert_eq!(proof.len(), 17);
        assert_eq!(
            evaluate(&proof, index, &Numbers.leaf(index), start, end),
            Ok(root)
        );
    }

    #[test]
    fn malformed_proofs_and_intervals_are_refused() {
        let leaf = Numbers.leaf(5);
        assert_eq!(
            evaluate(&[], 5, &leaf, 3, 7),
            Err(ProofError::NotASubtree { start: 3, end: 7 })
        );
        assert_eq!(
            evaluate(&[], 9, &leaf, 4, 8),
            Err(ProofError::IndexOutside {
                index: 9,
                start: 4,
                end: 8
            })
        );
        let proof = inclusion_proof(&Numbers, 5, 4, 8);
        assert_eq!(
            evaluate(&proof[..1], 5, &leaf, 4, 8),
            Err(ProofError::TooShort)
        );
        let mut long = proof.clone();
        long.push(leaf);
        assert_eq!(evaluate(&long, 5, &leaf, 4, 8), Err(ProofError::TooLong));
    }

    #[test]
    fn subtree_validity_and_covering_follow_the_drafts_examples() {
        assert!(is_valid_subtree(4, 8) && is_valid_subtree(8, 13) && is_valid_subtree(0, 13));
        assert!(!is_valid_subtree(4, 9) && !is_valid_subtree(6, 10));
        assert!(is_valid_subtree(0, u64::MAX) && !is_valid_subtree(1, u64::MAX));
        assert_eq!(find_subtrees(5, 13), ((4, 8), (8, 13)));
        assert_eq!(find_subtrees(7, 9), ((7, 8), (8, 9)));
        assert_eq!(find_subtrees(3, 4), ((3, 4), (4, 4)));
    }

    /// The draft's leaves for its test vectors: `d[i]` is the one byte `i`.
    struct Bytes;
    impl Leaves for Bytes {
        fn leaf(&self, index: u64) -> Hash {
            leaf_hash(&[index as u8])
        }
    }

    fn hex(h: &[u8]) -> String {
        h.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn mth(start: u64, end: u64) -> Hash {
        if start == end {
            return Sha256::digest([]).into(); // MTH({}) = HASH()
        }
        subtree_hash(&Bytes, start, end)
    }

    /// The draft's accumulated test vectors ("Subtree Test Vectors"), trees of up to 130.
    #[test]
    fn the_drafts_accumulated_subtree_vectors() {
        let (mut hashes, mut proofs, mut covers) = (Sha256::new(), Sha256::new(), Sha256::new());
        for end in 0..131u64 {
            for start in 0..=end {
                let ((ls, le), (rs, re)) = find_subtrees(start, end);
                covers.update(format!("[{ls}, {le}) [{rs}, {re})\n"));
                if !is_valid_subtree(start, end) {
                    continue;
                }
                hashes.update(format!("[{start}, {end}) {}\n", hex(&mth(start, end))));
                for index in start..end {
                    let mut line = format!("{index} [{start}, {end})");
                    for p in inclusion_proof(&Bytes, index, start, end) {
                        line += &format!(" {}", hex(&p));
                    }
                    proofs.update(format!("{line}\n"));
                }
            }
        }
        let got = |h: Sha256| hex(&h.finalize());
        assert_eq!(
            got(hashes),
            "b82806ad4265bb151c1119c0f4db437bb4d1a1f887b3a7fba1cd4ebf552e3e81"
        );
        assert_eq!(
            got(proofs),
            "ac2a8f989e44d99e399db448050ff5f19757df53cfb716aa81015d3955d8163f"
        );
        assert_eq!(
            got(covers),
            "7fd9c8b926e9d2b5cf831560e8ce295a5ef97ad5c5ede4ea0dea28a8c8fc8bb0"
        );
    }
}
