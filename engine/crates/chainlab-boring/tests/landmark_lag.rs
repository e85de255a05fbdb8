//! Landmark lag (issue #55): a subscriber renewed in three landmark intervals (`pki
//! --mtc-renewals 3`), a server offering each renewal's landmark-relative MTC under its
//! landmark's trust anchor ID and the standalone one under the CA's, and one client
//! population whose kinds hold the landmarks 0, 1, 3 intervals old or none. Each kind asks
//! for its own IDs (`--trust-anchors-own`); a kind whose newest landmark the server has a
//! certificate for gets that certificate, matched, and verifies it against that landmark;
//! the others take the standalone certificate at once, or, retrying, after the draft's
//! second connection. BoringSSL's own extension and the OpenSSL engine's, as servers and
//! clients.

use chainlab_test_support::stacks as common;

use std::collections::BTreeMap;

use common::{client, pki_with, Server, TempDir};
use serde_json::Value;

const GROUP: &str = "X25519MLKEM768";
const KINDS: &str = "cur=0.25/X25519MLKEM768/mldsa65/0,one=0.25/X25519MLKEM768/mldsa65/1,\
                     old=0.25/X25519MLKEM768/mldsa65/3,none=0.25/X25519MLKEM768/mldsa65/none";

#[test]
fn boringssl_serves_each_kind_the_newest_landmark_it_holds_or_the_standalone_mtc() {
    lag("boringssl", "boringssl");
    lag("openssl-3.5", "boringssl");
}

#[test]
fn openssl_serves_each_kind_the_newest_landmark_it_holds_or_the_standalone_mtc() {
    lag("openssl-3.5", "openssl-3.5");
    lag("boringssl", "openssl-3.5");
}

/// What each kind of a `client` population received from a `server` holding three
/// landmarks' MTCs, falling back to the standalone MTC and then by retrying.
fn lag(client_stack: &str, server_stack: &str) {
    let dir = TempDir::new(&format!("lag-{client_stack}-{server_stack}"));
    let pki = pki_with(
        &dir,
        "ML-DSA-44,ML-DSA-65",
        &["--mtc-batch", "64", "--mtc-renewals", "3"],
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(pki.join("mtc/manifest.json")).unwrap())
            .unwrap();
    let landmarks: Vec<u64> = manifest["landmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["landmark"].as_u64().unwrap())
        .collect();
    assert_eq!(landmarks, [2, 3, 4], "three renewals, oldest first");
    let server = Server::start(
        server_stack,
        &pki,
        GROUP,
        &["--chain", "mtc-landmark", "--trust-anchor-ids"],
    );
    let ask = |extra: &[&str]| -> Vec<Value> {
        let trust = pki.join("mtc/trust.json");
        let mut args = vec![
            "--groups",
            GROUP,
            "--count",
            "40",
            "--mtc-trust",
            trust.to_str().unwrap(),
            "--population",
            KINDS,
            "--trust-anchors",
            "",
            "--trust-anchors-own",
        ];
        args.extend_from_slice(extra);
        client(client_stack, &server, &args)
    };
    let standalone = ask(&[]);
    let retrying = ask(&["--trust-anchor-retry"]);
    server.stop();
    let by_kind = |records: &[Value]| {
        let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for r in records {
            let kind = r["client_kind"].as_str().expect("a kind").to_owned();
            out.entry(kind).or_default().push(r.clone());
        }
        assert_eq!(out.len(), 4, "every kind drawn in 40 attempts");
        out
    };
    for (kind, records) in by_kind(&standalone) {
        for r in records {
            assert_eq!(r["outcome"], "ok", "{kind}: {r}");
            assert_eq!(r["trust_anchor_matched"], true, "{kind}: {r}");
            assert!(r.get("first_conn_id").is_none(), "no retry: {r}");
            match kind.as_str() {
                "cur" | "one" => {
                    let want = if kind == "cur" { 4 } else { 3 };
                    assert_eq!(r["mtc_kind"], "landmark", "{kind}: {r}");
                    assert_eq!(r["mtc_landmark"], want, "{kind}: {r}");
                    // Its landmark's ID, then the CA's.
                    assert_eq!(r["trust_anchors_requested"], 2, "{kind}: {r}");
                }
                _ => {
                    assert_eq!(r["mtc_kind"], "standalone", "{kind}: {r}");
                    assert!(r.get("mtc_landmark").is_none(), "{r}");
                    let asked = if kind == "old" { 2 } else { 1 };
                    assert_eq!(r["trust_anchors_requested"], asked, "{kind}: {r}");
                }
            }
            assert_eq!(
                r["trust_anchors_available"], 4,
                "three landmarks and the CA"
            );
        }
    }
    for (kind, records) in by_kind(&retrying) {
        for r in records {
            assert_eq!(r["outcome"], "ok", "{kind}: {r}");
            let retried = r.get("first_conn_id").is_some();
            match kind.as_str() {
                "cur" | "one" => {
                    assert!(!retried, "{kind}: {r}");
                    assert_eq!(r["mtc_kind"], "landmark");
                    assert_eq!(r["trust_anchors_requested"], 1, "its landmark's alone");
                }
                _ => {
                    assert!(retried, "{kind}: {r}");
                    assert_eq!(r["mtc_kind"], "standalone", "{kind}: {r}");
                    assert_eq!(r["trust_anchors_requested"], 1, "the retry's: the CA");
                    assert!(r["retry_first_detail"]
                        .as_str()
                        .unwrap()
                        .contains("MTC landmark check failed"));
                }
            }
        }
    }
}
