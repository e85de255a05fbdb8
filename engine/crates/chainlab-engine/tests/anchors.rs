//! Trust anchors and client certificates, with real handshakes between `serve` and
//! `handshake` processes on 127.0.0.1: an intermediate as the client's trust anchor
//! (`--partial-chain`), and mutual TLS (`pki --purpose client`, `serve --client-ca`,
//! `handshake --cert-pki`). Run with `cargo test --release --test anchors`.

use chainlab_test_support::engine as common;

use common::{der_sizes, handshake, paired, pki, pki_for, Server, TempDir};
use serde_json::Value;

/// Bytes a TLS 1.3 CertificateEntry adds to a certificate's DER: a 3-byte length before it
/// and a 2-byte (empty) extensions block after it (RFC 8446, 4.4.2).
const ENTRY_FRAMING: u64 = 5;

fn u64_of(record: &Value, field: &str) -> u64 {
    record[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {record}"))
}

fn assert_ok(record: &Value) {
    assert_eq!(
        record["schema"],
        chainlab_engine::record::SCHEMA,
        "{record}"
    );
    assert_eq!(record["outcome"], "ok", "{record}");
}

#[test]
fn intermediate_as_trust_anchor_verifies_the_leaf_alone() {
    let dir = TempDir::new("anchor");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-44,ML-DSA-44", "anchor");
    let int1 = h.join("int1.pem");
    let ca = h.join("ca.pem");

    // Reference: the server sends the leaf and the intermediate; the client trusts the root.
    let full = Server::start(&dir, &h, &[]);
    let (_, sent) = handshake(
        &dir,
        &full.addr,
        &["--ca", ca.to_str().unwrap(), "--count", "2"],
    );
    full.stop();

    // The server sends the leaf only; the client trusts the intermediate itself.
    let leaf = Server::start(&dir, &h, &["--chain", "leaf"]);
    let (out, anchored) = handshake(
        &dir,
        &leaf.addr,
        &[
            "--ca",
            int1.to_str().unwrap(),
            "--partial-chain",
            "--count",
            "2",
        ],
    );
    assert!(out.status.success());
    // Without --partial-chain, an intermediate is no anchor: the chain does not verify.
    let (_, refused) = handshake(
        &dir,
        &leaf.addr,
        &["--ca", int1.to_str().unwrap(), "--count", "1"],
    );
    leaf.stop();

    let omitted: u64 = der_sizes(&int1).iter().map(|&d| d as u64).sum();
    for (a, s) in anchored.iter().zip(&sent) {
        assert_ok(a);
        assert_ok(s);
        assert_eq!(a["peer_chain"].as_array().unwrap().len(), 1, "{a}");
        assert_eq!(
            u64_of(s, "bytes_read") - u64_of(a, "bytes_read"),
            omitted + ENTRY_FRAMING,
            "bytes read drop by the intermediate's DER and its entry's framing"
        );
    }
    assert_eq!(
        refused[0]["error_category"], "verify_failed",
        "{}",
        refused[0]
    );
}

#[test]
fn client_certificates_are_verified_and_recorded_by_the_server() {
    let dir = TempDir::new("mtls");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "mtls");
    let ca = h.join("ca.pem");
    for chain in ["ML-DSA-65,ML-DSA-44", "ML-DSA-44,SLH-DSA-SHAKE-128f"] {
        let client_pki = pki_for(&dir, "client", chain, "mtls-client", "client");
        let leaf_alg = chain.split(',').next_back().unwrap();
        let server = Server::start(
            &dir,
            &h,
            &["--client-ca", client_pki.join("ca.pem").to_str().unwrap()],
        );
        assert_eq!(server.ready["client_auth"]["required"], true);
        let (out, client) = handshake(
            &dir,
            &server.addr,
            &[
                "--ca",
                ca.to_str().unwrap(),
                "--cert-pki",
                client_pki.to_str().unwrap(),
                "--count",
                "2",
            ],
        );
        let (_, _, srv) = server.stop();
        assert!(out.status.success());
        let sent = der_sizes(&client_pki.join("chain-leaf+intermediates.pem"));
        for c in &client {
            assert_ok(c);
            assert_eq!(c["peer_close_notify"], true, "{c}");
            let s = paired(c, &srv);
            assert_ok(s);
            let observed = s["peer_chain"]
                .as_array()
                .expect("server records the client chain");
            let sizes: Vec<usize> = observed
                .iter()
                .map(|x| x["der_bytes"].as_u64().unwrap() as usize)
                .collect();
            assert_eq!(sizes, sent, "{s}");
            assert_eq!(observed[0]["key_alg"], leaf_alg, "{s}");
            assert!(observed[0]["subject"]
                .as_str()
                .unwrap()
                .contains("chainlab client leaf"));
        }
    }
}

#[test]
fn a_client_chain_from_the_wrong_root_is_rejected_on_both_sides() {
    let dir = TempDir::new("mtls-wrong");
    let h = pki(&dir, "h", "ECDSA-P256,ECDSA-P256", "wrong");
    let trusted = pki_for(&dir, "trusted", "ML-DSA-44,ML-DSA-44", "trusted", "client");
    let other = pki_for(&dir, "other", "ML-DSA-44,ML-DSA-44", "other", "client");
    let server = Server::start(
        &dir,
        &h,
        &["--client-ca", trusted.join("ca.pem").to_str().unwrap()],
    );
    let (out, client) = handshake(
        &dir,
        &server.addr,
        &[
            "--ca",
            h.join("ca.pem").to_str().unwrap(),
            "--cert-pki",
            other.to_str().unwrap(),
            "--count",
            "2",
        ],
    );
    let (_, _, srv) = server.stop();
    assert!(
        out.status.success(),
        "a rejected handshake is a record, not an exit"
    );
    assert_eq!(client.len(), 2);
    for c in &client {
        assert_eq!(c["outcome"], "failed", "{c}");
        assert_eq!(c["error_category"], "client_cert_rejected", "{c}");
        let s = paired(c, &srv);
        assert_eq!(s["error_category"], "client_cert_rejected", "{s}");
        assert!(
            s["error_detail"]
                .as_str()
                .unwrap()
                .contains("verify failed"),
            "{s}"
        );
    }
    // A server-purpose leaf (extendedKeyUsage serverAuth) is no client certificate either.
    let server = Server::start(
        &dir,
        &h,
        &["--client-ca", h.join("ca.pem").to_str().unwrap()],
    );
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &[
            "--ca",
            h.join("ca.pem").to_str().unwrap(),
            "--cert-pki",
            h.to_str().unwrap(),
            "--count",
            "1",
        ],
    );
    let (_, _, srv) = server.stop();
    assert_eq!(
        client[0]["error_category"], "client_cert_rejected",
        "{}",
        client[0]
    );
    assert_eq!(
        srv[0]["error_category"], "client_cert_rejected",
        "{}",
        srv[0]
    );
}
