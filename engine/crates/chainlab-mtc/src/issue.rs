//! Issuing Merkle Tree Certificates for one subscriber in a batch of a log.
//!
//! The log (log number 1 of the CA) is modelled as the draft's CA would build it between two
//! landmarks: `P = BIT_CEIL(batch)` earlier entries (never materialised: no proof or
//! signature involves them), then the batch `[P, P + batch)`: the subscriber's entry at an
//! offset drawn from the seed and `batch - 1` synthetic entries, each a real log entry (a
//! TBSCertificateLogEntry for `synthetic-<i>.chainlab.test` with a key hash drawn from the
//! seed). Landmarks 0, 1 and 2 sit at tree sizes 0, P and P + batch, so the batch is
//! landmark 2's interval and is covered by its two landmark subtrees (the draft's "Selecting
//! Two Subtrees"); a standalone certificate uses the same subtree, signed by the CA and
//! cosigners as a checkpoint job covering the batch would sign it.
//!
//! A subscriber that renews every landmark interval (`Placement::nth`): landmark `2 + j`'s
//! interval is the next `batch` entries, `[P + j·batch, P + (j+1)·batch)`, with the
//! subscriber's entry again at an offset drawn from the seed and `j`. Its left landmark
//! subtree may reach back into the previous interval, which holds the previous renewal:
//! every renewal's entry hashes alike (a log entry leaves the serial out), so a `Batch`
//! knows all of them. Placement 0 is the single batch above, unchanged.

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::der::{self, Element};
use crate::entry::{ca_name, Tbs};
use crate::proof::{MtcProof, SubtreeSignature};
use crate::tree::{self, Leaves};
use crate::{Encoding, Hash};

/// The log every chainlab MTC is in.
pub const LOG_NUMBER: u64 = 1;

/// Entries per batch at most: hashing 2^26 synthetic entries takes about a minute on two
/// cores here; the draft's own estimates stop at an hourly landmark of ~4.4 M entries.
pub const MAX_BATCH: u64 = 1 << 26;

/// The landmark whose interval is the batch (landmarks 0, 1, 2 sit at tree sizes 0, P and
/// P + batch): the one a client holding the batch's landmark subtrees holds.
pub const BATCH_LANDMARK: u64 = 2;

/// Landmark intervals a subscriber renews over at most (`Placement::nth`).
pub const MAX_LANDMARKS: u64 = 16;

/// The smallest batch: a subscriber's entry and one other.
pub const MIN_BATCH: u64 = 2;

/// authorityKeyIdentifier: names an X.509 issuer's key, which an MTC has none of.
const OID_AUTHORITY_KEY_ID: &str = "2.5.29.35";
const OID_COMMON_NAME: &str = "2.5.4.3";
const OID_SUBJECT_ALT_NAME: &str = "2.5.29.17";

/// Where a subscriber's entry sits and what covers it.
#[derive(Debug, Clone)]
pub struct Placement {
    pub batch: u64,
    /// `[start, end)` of the batch in the log.
    pub interval: (u64, u64),
    pub index: u64,
    /// The landmark subtrees covering the batch (the second may be empty for a batch of 1).
    pub subtrees: [(u64, u64); 2],
    /// The one of them holding `index`.
    pub subtree: (u64, u64),
}

impl Placement {
    pub fn new(batch: u64, seed: &[u8]) -> Result<Placement> {
        Placement::nth(batch, seed, 0)
    }

    /// The subscriber's renewal in the `j`-th landmark interval of `batch` entries each
    /// (landmark `BATCH_LANDMARK + j`; `j = 0` is `new`'s).
    pub fn nth(batch: u64, seed: &[u8], j: u64) -> Result<Placement> {
        if !(MIN_BATCH..=MAX_BATCH).contains(&batch) {
            bail!("a batch of {batch} entries; allowed: {MIN_BATCH} to {MAX_BATCH}");
        }
        if j >= MAX_LANDMARKS {
            bail!("landmark interval {j}; allowed: 0 to {}", MAX_LANDMARKS - 1);
        }
        let start = batch.next_power_of_two() + j * batch;
        let end = start + batch;
        let mut hasher = Sha256::new()
            .chain_update(b"chainlab mtc index\0")
            .chain_update(seed);
        if j > 0 {
            hasher.update(j.to_be_bytes());
        }
        let digest = hasher.finalize();
        let offset = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes")) % batch;
        let index = start + offset;
        let (left, right) = tree::find_subtrees(start, end);
        let subtree = if index < left.1 { left } else { right };
        Ok(Placement {
            batch,
            interval: (start, end),
            index,
            subtrees: [left, right],
            subtree,
        })
    }

    /// `(log_number << 48) | index`.
    pub fn serial(&self) -> u64 {
        (LOG_NUMBER << 48) | self.index
    }

    /// The landmark whose interval this is.
    pub fn landmark(&self) -> u64 {
        let first = self.batch.next_power_of_two();
        BATCH_LANDMARK + (self.interval.0 - first) / self.batch
    }

    /// The draft's landmark list when this is the newest interval: `<last> <active>`, then
    /// tree sizes newest first (every landmark of the log is active).
    pub fn landmarks_text(&self) -> String {
        let last = self.landmark();
        let first = self.batch.next_power_of_two();
        let mut out = format!("{last} {last}\n");
        for n in (BATCH_LANDMARK..=last).rev() {
            out.push_str(&format!("{}\n", first + (n - 1) * self.batch));
        }
        out.push_str(&format!("{first}\n0\n"));
        out
    }
}

/// The MTC TBSCertificate of a subscriber, from its X.509 leaf: serial
/// `(log_number << 48) | index`, signature id-alg-mtcProof, issuer the CA ID (both as
/// `encoding` writes them); version,
/// subject, key and extensions kept (authorityKeyIdentifier dropped); validity replaced when
/// `validity` gives one (`(not_before, not_after)` as `YYYYMMDDHHMMSSZ`).
pub fn tbs_from_x509(
    leaf_der: &[u8],
    ca_id: &str,
    serial: u64,
    validity: Option<(&str, &str)>,
    encoding: Encoding,
) -> Result<Vec<u8>> {
    let leaf = crate::entry::Certificate::parse(leaf_der).context("the X.509 leaf")?;
    let t = &leaf.tbs;
    let version = t.version.map(|v| v.raw.to_vec()).unwrap_or_default();
    let validity = match validity {
        Some((from, to)) => der::sequence(&[&time(from)?, &time(to)?]),
        None => t.validity.raw.to_vec(),
    };
    let tbs = der::sequence(&[
        &version,
        &der::integer(serial),
        &mtc_algorithm(encoding)?,
        &ca_name(ca_id, encoding)?,
        &validity,
        t.subject.raw,
        t.spki.raw,
        &without_extension(t.rest, OID_AUTHORITY_KEY_ID)?,
    ]);
    Ok(tbs)
}

/// The AlgorithmIdentifier of id-alg-mtcProof, parameters omitted.
pub fn mtc_algorithm(encoding: Encoding) -> Result<Vec<u8>> {
    Ok(der::sequence(&[&der::oid(encoding.proof_oid())?]))
}

/// A Certificate of `tbs` whose signatureValue is `proof` (in the proof's encoding).
pub fn certificate(tbs: &[u8], proof: &MtcProof) -> Result<Vec<u8>> {
    let mut bits = vec![0u8];
    bits.extend_from_slice(&proof.encode());
    Ok(der::sequence(&[
        tbs,
        &mtc_algorithm(proof.encoding)?,
        &der::tlv(der::BIT_STRING, &bits),
    ]))
}

/// A subscriber's entry in its batch, with every other entry of the batch synthetic.
pub struct Batch<'a> {
    pub placement: Placement,
    /// The subscriber's entries in the log: this placement's and its earlier renewals'.
    subscriber: Vec<u64>,
    seed: &'a [u8],
    entry_hash: Hash,
    /// What every synthetic entry shares, encoded once (hashing a batch builds millions):
    /// the entry header, version, issuer and validity; then the key algorithm; and the two
    /// OIDs of the fields each entry fills with its own name.
    head: Vec<u8>,
    key_algorithm: Vec<u8>,
    common_name: Vec<u8>,
    subject_alt_name: Vec<u8>,
}

impl<'a> Batch<'a> {
    /// `tbs` is the subscriber's MTC TBSCertificate (`tbs_from_x509`).
    pub fn new(placement: Placement, tbs: &'a [u8], seed: &'a [u8]) -> Result<Batch<'a>> {
        let e = der::expect(tbs, der::SEQUENCE, "TBSCertificate")?;
        let t = Tbs::parse(e)?;
        let entry_hash = tree::leaf_hash(&t.log_entry(&[0, 0]));
        let mut head = vec![0, 0, 0, 1]; // no extensions; tbs_cert_entry
        if let Some(v) = &t.version {
            head.extend_from_slice(v.raw);
        }
        head.extend_from_slice(t.issuer.raw);
        head.extend_from_slice(t.validity.raw);
        Ok(Batch {
            subscriber: vec![placement.index],
            placement,
            seed,
            entry_hash,
            head,
            key_algorithm: t.spki_algorithm.raw.to_vec(),
            common_name: der::oid(OID_COMMON_NAME)?,
            subject_alt_name: der::oid(OID_SUBJECT_ALT_NAME)?,
        })
    }

    /// The same subscriber's earlier renewals (`Placement::nth`) are in the log too.
    pub fn with_renewals(mut self, earlier: &[Placement]) -> Batch<'a> {
        self.subscriber.extend(earlier.iter().map(|p| p.index));
        self
    }

    pub fn entry_hash(&self) -> Hash {
        self.entry_hash
    }

    /// The subscriber's inclusion proof in its subtree, and that subtree's hash.
    pub fn proof(&self) -> (Vec<Hash>, Hash) {
        let p = &self.placement;
        let (start, end) = p.subtree;
        let proof = tree::inclusion_proof(self, p.index, start, end);
        let root = tree::evaluate(&proof, p.index, &self.entry_hash, start, end)
            .expect("a proof this module just built evaluates");
        (proof, root)
    }

    /// The hash of every non-empty landmark subtree of the batch, with its interval.
    pub fn landmark_subtrees(&self, own: Hash) -> Vec<((u64, u64), Hash)> {
        let p = &self.placement;
        p.subtrees
            .iter()
            .filter(|(s, e)| s < e)
            .map(|&(s, e)| {
                let h = if (s, e) == p.subtree {
                    own
                } else {
                    tree::subtree_hash(self, s, e)
                };
                ((s, e), h)
            })
            .collect()
    }

    /// A synthetic subscriber's log entry: the template's issuer, validity and key
    /// algorithm, its own name and a key hash drawn from the seed.
    fn synthetic_entry(&self, index: u64) -> Vec<u8> {
        let name = format!("synthetic-{index}.chainlab.test");
        let cn = der::sequence(&[
            &self.common_name,
            &der::tlv(der::UTF8_STRING, name.as_bytes()),
        ]);
        let subject = der::sequence(&[&der::tlv(der::SET, &cn)]);
        let key_hash: Hash = Sha256::new()
            .chain_update(b"chainlab mtc synthetic key\0")
            .chain_update(self.seed)
            .chain_update(index.to_be_bytes())
            .finalize()
            .into();
        let san = der::sequence(&[&der::tlv(0x82, name.as_bytes())]);
        let extension =
            der::sequence(&[&self.subject_alt_name, &der::tlv(der::OCTET_STRING, &san)]);
        let extensions = der::tlv(0xa3, &der::sequence(&[&extension]));
        let mut out = Vec::with_capacity(320);
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&subject);
        out.extend_from_slice(&self.key_algorithm);
        out.extend_from_slice(&der::tlv(der::OCTET_STRING, &key_hash));
        out.extend_from_slice(&extensions);
        out
    }
}

impl Leaves for Batch<'_> {
    fn leaf(&self, index: u64) -> Hash {
        if self.subscriber.contains(&index) {
            self.entry_hash
        } else {
            tree::leaf_hash(&self.synthetic_entry(index))
        }
    }
}

/// The MTCProof of a subscriber: its subtree, proof and the signatures given (sorted into
/// the draft's order here).
pub fn mtc_proof(
    placement: &Placement,
    inclusion_proof: Vec<Hash>,
    mut signatures: Vec<SubtreeSignature>,
    encoding: Encoding,
) -> MtcProof {
    signatures.sort_by(|a, b| crate::proof::id_order(&a.cosigner_id, &b.cosigner_id));
    MtcProof {
        encoding,
        extensions: Vec::new(),
        start: placement.subtree.0,
        end: placement.subtree.1,
        inclusion_proof,
        signatures,
    }
}

/// UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5), from `YYYYMMDDHHMMSSZ`.
fn time(text: &str) -> Result<Vec<u8>> {
    let ok =
        text.len() == 15 && text.ends_with('Z') && text[..14].bytes().all(|b| b.is_ascii_digit());
    if !ok {
        bail!("{text:?} is not a time of the form YYYYMMDDHHMMSSZ");
    }
    let year: u32 = text[..4].parse()?;
    Ok(if (1950..2050).contains(&year) {
        der::tlv(der::UTC_TIME, &text.as_bytes()[2..])
    } else {
        der::tlv(der::GENERALIZED_TIME, text.as_bytes())
    })
}

/// `rest` (a TBSCertificate's fields after its key) with the extension `oid` removed.
fn without_extension(rest: &[u8], oid: &str) -> Result<Vec<u8>> {
    let unwanted = der::oid_contents(oid)?;
    let mut out = Vec::new();
    for e in der::elements(rest)? {
        if e.tag != 0xa3 {
            out.extend_from_slice(e.raw);
            continue;
        }
        let list = der::expect(e.contents, der::SEQUENCE, "Extensions")?;
        let kept: Vec<Element<'_>> = der::elements(list.contents)?
            .into_iter()
            .filter(|ext| {
                der::elements(ext.contents)
                    .ok()
                    .and_then(|parts| parts.first().map(|id| id.contents != unwanted.as_slice()))
                    .unwrap_or(true)
            })
            .collect();
        let raws: Vec<&[u8]> = kept.iter().map(|k| k.raw).collect();
        out.extend_from_slice(&der::tlv(0xa3, &der::sequence(&raws)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_follow_the_batch() {
        for batch in [2u64, 3, 4096, 4_400_000, 1 << 22] {
            let p = Placement::new(batch, b"seed").unwrap();
            let (s, e) = p.interval;
            assert_eq!(e - s, batch);
            assert!(tree::is_valid_subtree(p.subtree.0, p.subtree.1));
            assert!(p.subtree.0 <= p.index && p.index < p.subtree.1);
            assert_eq!(p.subtrees[0].0, s);
            assert_eq!(p.subtrees[1].1, e);
            assert_eq!(p.serial() >> 48, LOG_NUMBER);
        }
        assert_eq!(
            Placement::new(4096, b"a").unwrap().index,
            Placement::new(4096, b"a").unwrap().index
        );
        assert!(Placement::new(1, b"s").is_err());
        assert!(Placement::new(MAX_BATCH + 1, b"s").is_err());
        assert_eq!(time("20300101000000Z").unwrap()[0], der::UTC_TIME);
        assert_eq!(time("20500101000000Z").unwrap()[0], der::GENERALIZED_TIME);
        assert!(time("2030-01-01").is_err());
    }

    #[test]
    fn renewals_fill_successive_landmark_intervals() {
        for batch in [3u64, 4096, 4_400_000] {
            let first = Placement::new(batch, b"seed").unwrap();
            assert_eq!(first.landmark(), BATCH_LANDMARK);
            assert_eq!(
                first.landmarks_text(),
                format!("2 2\n{}\n{}\n0\n", first.interval.1, first.interval.0)
            );
            let mut previous = first.clone();
            for j in 1..4 {
                let p = Placement::nth(batch, b"seed", j).unwrap();
                assert_eq!(p.interval.0, previous.interval.1, "contiguous intervals");
                assert_eq!(p.landmark(), BATCH_LANDMARK + j);
                assert!(p.interval.0 <= p.index && p.index < p.interval.1);
                assert!(tree::is_valid_subtree(p.subtree.0, p.subtree.1));
                assert!(p.subtree.0 <= p.index && p.index < p.subtree.1);
                assert_eq!(p.subtrees[1].1, p.interval.1);
                previous = p;
            }
            let text = previous.landmarks_text();
            let sizes: Vec<u64> = text.lines().skip(1).map(|l| l.parse().unwrap()).collect();
            assert_eq!(text.lines().next(), Some("5 5"));
            assert_eq!(sizes.len(), 6, "landmarks 5 to 0");
            assert_eq!(sizes[0], previous.interval.1);
            assert_eq!(sizes[5], 0);
        }
        assert!(Placement::nth(4096, b"s", MAX_LANDMARKS).is_err());
    }
}
