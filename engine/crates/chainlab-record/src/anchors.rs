//! The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) with chainlab's Merkle
//! Tree Certificates, whatever the stack: the client's requested list (`--trust-anchors`,
//! `--trust-anchors-filler`), the IDs it trusts for a retry and the retry's request, what a
//! record says of the server's answer, and which certificate the server offers under which
//! ID (`--trust-anchor-ids`). Each engine carries the extension its own way (BoringSSL's
//! implementation, OpenSSL's custom extension callbacks).

use std::path::Path;

use anyhow::{anyhow, bail};
use chainlab_mtc::proof;
use chainlab_mtc::verify::Trust;

use crate::args::{ChainPolicy, ClientArgs};
use crate::record::TrustAnchorsSeen;

/// The extension's code point (draft-ietf-tls-trust-anchor-ids-06; BoringSSL's
/// `TLSEXT_TYPE_trust_anchors` until IANA assigns one).
pub const EXTENSION_TYPE: u16 = 0xca34;

/// The arc of the filler IDs a client requests besides its own (`--trust-anchors-filler`):
/// under the documentation enterprise number, never an ID of chainlab's CA.
pub const FILLER_ARC: &str = "32473.99";

/// The client's requested list: its wire format (the IDs, each with its 8-bit length; the
/// extension adds the list's 16-bit length) and how many IDs it holds; None without
/// `--trust-anchors`.
pub fn requested(args: &ClientArgs) -> anyhow::Result<Option<(Vec<u8>, u64)>> {
    let Some(list) = &args.trust_anchors else {
        return Ok(None);
    };
    let mut ids = if args.trust_anchors_own {
        own_ids(args)?
    } else {
        Vec::new()
    };
    ids.extend(
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from),
    );
    ids.extend((0..args.trust_anchors_filler).map(|i| format!("{FILLER_ARC}.{i}")));
    let wire = proof::trust_anchor_list(&ids).map_err(|e| {
        anyhow!("--trust-anchors {list:?}: {e}; allowed: dotted relative OIDs such as 32473.1")
    })?;
    if wire.len() > u16::MAX as usize {
        bail!(
            "--trust-anchors with {} IDs: {} bytes, more than the extension holds (65535)",
            ids.len(),
            wire.len()
        );
    }
    Ok(Some((wire, ids.len() as u64)))
}

/// The IDs the client trusts for a retry: its MTC CA's, and the IDs of the landmarks it
/// holds (`--mtc-landmarks`, lagging `--mtc-landmark-lag`), newest first.
pub fn trusted_ids(args: &ClientArgs) -> anyhow::Result<Vec<String>> {
    let Some(path) = &args.mtc_trust else {
        return Ok(Vec::new());
    };
    let trust = Trust::read(path)?;
    let mut ids = vec![trust.ca_id.clone()];
    ids.extend(held_landmark_ids(&trust, args));
    Ok(ids)
}

/// `--trust-anchors-own`: the client's own IDs, what it asks a server for: its newest held
/// landmark's (a server sends a landmark-relative MTC only for a landmark the client
/// holds), then its CA's, for the standalone MTC, unless it would rather retry.
pub fn own_ids(args: &ClientArgs) -> anyhow::Result<Vec<String>> {
    let Some(path) = &args.mtc_trust else {
        bail!("--trust-anchors-own needs --mtc-trust (the IDs are the trust file's)");
    };
    let trust = Trust::read(path)?;
    let mut ids: Vec<String> = held_landmark_ids(&trust, args)
        .into_iter()
        .take(1)
        .collect();
    if !args.trust_anchor_retry {
        ids.push(trust.ca_id);
    }
    Ok(ids)
}

/// The trust anchor IDs of the landmarks the client holds, newest first: its newest (the
/// trust file's less `--mtc-landmark-lag`) and every older one the file has subtrees of.
fn held_landmark_ids(trust: &Trust, args: &ClientArgs) -> Vec<String> {
    if !args.mtc_landmarks {
        return Vec::new();
    }
    let newest = match crate::mtc::held_through(trust, args.mtc_landmark_lag) {
        None => trust.newest_landmark(),
        Some(held) => held,
    };
    let Some(newest) = newest else {
        return Vec::new();
    };
    let mut numbers: Vec<u64> = trust
        .trusted_subtrees
        .iter()
        .filter_map(|t| t.landmark)
        .filter(|&n| n < newest)
        .chain([newest])
        .collect();
    numbers.sort_unstable_by(|a, b| b.cmp(a));
    numbers.dedup();
    let log = proof::log_id(&trust.ca_id, chainlab_mtc::issue::LOG_NUMBER);
    numbers.into_iter().map(|n| format!("{log}.{n}")).collect()
}

/// The IDs of the server's available list (`available`, wire format) the client trusts, in
/// the server's order of preference, as a requested list (wire format, count); None if
/// none.
pub fn retry_request(available: &[u8], trusted: &[String]) -> Option<(Vec<u8>, u64)> {
    let offered = proof::trust_anchor_ids(available)?;
    let want: Vec<String> = offered
        .into_iter()
        .filter(|id| trusted.contains(id))
        .collect();
    if want.is_empty() {
        return None;
    }
    let wire = proof::trust_anchor_list(&want).ok()?;
    Some((wire, want.len() as u64))
}

/// What a record says of the extension on a connection that requested `requested` IDs:
/// whether the server said its certificate matched, and how many IDs its available list
/// (`available`, wire format; empty: none sent) named.
pub fn seen(requested: u64, matched: bool, available: &[u8]) -> TrustAnchorsSeen {
    TrustAnchorsSeen {
        trust_anchors_requested: requested,
        trust_anchor_matched: matched,
        trust_anchors_available: proof::trust_anchor_ids(available)
            .map_or(0, |ids| ids.len() as u64),
    }
}

/// One MTC a `--trust-anchor-ids` server offers: its policy, its file in the hierarchy and
/// the trust anchor ID it is offered under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub chain: ChainPolicy,
    pub file: String,
    pub id: String,
}

/// The server's side: which MTC is offered under which trust anchor ID, in the order a
/// server tries them: the landmark-relative one of each landmark the subscriber renewed in
/// (`pki --mtc-renewals`), newest first, under its landmark's ID, then the standalone one
/// under the CA's; from the hierarchy's `mtc/trust.json` and `mtc/manifest.json`.
pub fn server_ids(pki: &Path) -> anyhow::Result<Vec<Offer>> {
    let trust_path = pki.join("mtc/trust.json");
    let trust = Trust::read(&trust_path)
        .map_err(|e| anyhow!("--trust-anchor-ids needs the MTCs of `pki --mtc-batch`: {e}"))?;
    let landmark = trust.landmark_id.clone().ok_or_else(|| {
        anyhow!(
            "--trust-anchor-ids: {} names no landmark trust anchor ID (issued by an older \
             chainlab): issue the hierarchy again",
            trust_path.display()
        )
    })?;
    let mut offers: Vec<Offer> = renewals(pki)?
        .into_iter()
        .rev()
        .map(|(file, id)| Offer {
            chain: ChainPolicy::MtcLandmark,
            file: format!("mtc/{file}"),
            id,
        })
        .collect();
    if offers.is_empty() {
        offers.push(Offer {
            chain: ChainPolicy::MtcLandmark,
            file: ChainPolicy::MtcLandmark.file_name().to_owned(),
            id: landmark,
        });
    }
    offers.push(Offer {
        chain: ChainPolicy::MtcStandalone,
        file: ChainPolicy::MtcStandalone.file_name().to_owned(),
        id: trust.ca_id,
    });
    Ok(offers)
}

/// The landmark-relative MTCs of `mtc/manifest.json`'s `landmarks`, oldest first, as (file
/// in `mtc/`, trust anchor ID); none in a manifest written before.
fn renewals(pki: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let path = pki.join("mtc/manifest.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow!("--trust-anchor-ids: cannot read {}: {e}", path.display()))?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("--trust-anchor-ids: {}: {e}", path.display()))?;
    let Some(list) = manifest.get("landmarks").and_then(|l| l.as_array()) else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|l| {
            let file = l.pointer("/cert/file").and_then(|f| f.as_str());
            let id = l.get("id").and_then(|i| i.as_str());
            match (file, id) {
                (Some(f), Some(i)) => Ok((f.to_owned(), i.to_owned())),
                _ => bail!(
                    "--trust-anchor-ids: {}: a landmark without cert.file or id",
                    path.display()
                ),
            }
        })
        .collect()
}

/// `--trust-anchor-ids` needs an MTC as `--chain` (the MTCs carry the IDs; the `--chain`
/// certificate goes to a client requesting none of them).
pub fn check_server_chain(chain: ChainPolicy) -> anyhow::Result<()> {
    if !chain.is_mtc() {
        bail!(
            "--trust-anchor-ids with --chain {}: allowed with --chain mtc-landmark or \
             mtc-standalone (the MTCs carry the trust anchor IDs; that one goes to a client \
             requesting none of them)",
            chain.name()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_requests_the_trusted_ids_of_the_available_list_in_its_order() {
        let available = proof::trust_anchor_list(&["32473.1.0.1.7".into(), "32473.1".into()])
            .expect("valid IDs");
        let trusted = vec!["32473.1".to_string()];
        let (wire, n) = retry_request(&available, &trusted).expect("one trusted ID");
        assert_eq!(n, 1);
        assert_eq!(wire, proof::trust_anchor_list(&trusted).expect("valid"));
        assert!(retry_request(&available, &["32473.2".into()]).is_none());
        assert!(
            retry_request(&[5, 1], &trusted).is_none(),
            "a malformed list"
        );
    }

    #[test]
    fn seen_counts_the_available_ids() {
        let available =
            proof::trust_anchor_list(&["32473.1".into(), "32473.2".into()]).expect("valid IDs");
        let s = seen(3, true, &available);
        assert_eq!(s.trust_anchors_requested, 3);
        assert!(s.trust_anchor_matched);
        assert_eq!(s.trust_anchors_available, 2);
        assert_eq!(seen(0, false, &[]).trust_anchors_available, 0);
    }
}
