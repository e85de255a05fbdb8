//! The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06), BoringSSL's own and the
//! OpenSSL engine's custom extension, each against itself and against the other, with
//! chainlab's Merkle Tree Certificates: a server whose MTCs carry trust anchor IDs sends the
//! one a client requests (and says it matched); a client requesting none of them gets the
//! `--chain` certificate and the server's available list, and retries once for an ID it
//! trusts; a client without the extension gets the `--chain` certificate. The ClientHello
//! grows by exactly the encoded list. rustls refuses the options by capability.

use chainlab_test_support::stacks as common;

use std::path::Path;
use std::process::Command;

use common::{binary, client, pki_with, Server, TempDir};
use serde_json::Value;

const BORING: &str = "boringssl";
const OPENSSL: &str = "openssl-3.5";
const GROUP: &str = "X25519MLKEM768";

fn manifest(pki: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(pki.join("mtc/manifest.json")).unwrap()).unwrap()
}

/// The records of a `stack` client against `server` with `args` after the MTC trust flags.
fn ask(stack: &str, server: &Server, pki: &Path, args: &[&str]) -> Vec<Value> {
    let trust = pki.join("mtc/trust.json");
    let mut all = vec![
        "--groups",
        GROUP,
        "--count",
        "2",
        "--mtc-trust",
        trust.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    client(stack, server, &all)
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing: {v}"))
}

#[test]
fn boringssl_sends_what_boringssl_requests_and_the_client_retries_once() {
    negotiates(BORING, BORING);
}

#[test]
fn openssl_sends_what_openssl_requests_and_the_client_retries_once() {
    negotiates(OPENSSL, OPENSSL);
}

#[test]
fn boringssl_sends_what_openssl_requests_and_the_client_retries_once() {
    negotiates(OPENSSL, BORING);
}

#[test]
fn openssl_sends_what_boringssl_requests_and_the_client_retries_once() {
    negotiates(BORING, OPENSSL);
}

#[test]
fn openssl_4_0_carries_it_as_3_5_does() {
    negotiates("openssl-4.0", "openssl-4.0");
}

/// A `client` stack's connections to a `server` stack's, every way the extension goes.
fn negotiates(client: &str, server: &str) {
    let dir = TempDir::new(&format!("anchors-{client}-{server}"));
    let pki = pki_with(&dir, "ML-DSA-44,ML-DSA-65", &["--mtc-batch", "4096"]);
    let m = manifest(&pki);
    let landmark_id = "32473.1.0.1.2";
    let ask = |server: &Server, pki: &Path, args: &[&str]| ask(client, server, pki, args);
    let server = Server::start(
        server,
        &pki,
        GROUP,
        &["--chain", "mtc-landmark", "--trust-anchor-ids"],
    );
    // A client holding the landmark requests it: the landmark-relative MTC, matched.
    for c in ask(
        &server,
        &pki,
        &["--mtc-landmarks", "--trust-anchors", landmark_id],
    ) {
        assert_eq!(c["outcome"], "ok", "{c}");
        assert_eq!(c["mtc_kind"], "landmark");
        assert_eq!(c["peer_chain"][0]["der_bytes"], m["landmark"]["der_bytes"]);
        assert_eq!(c["trust_anchors_requested"], 1);
        assert_eq!(c["trust_anchor_matched"], true);
        assert_eq!(
            c["trust_anchors_available"], 2,
            "the landmark's and the CA's"
        );
    }
    // A client requesting the CA: the standalone MTC, matched.
    for c in ask(&server, &pki, &["--trust-anchors", "32473.1"]) {
        assert_eq!(c["outcome"], "ok", "{c}");
        assert_eq!(c["mtc_kind"], "standalone");
        assert_eq!(
            c["peer_chain"][0]["der_bytes"],
            m["standalone"]["der_bytes"]
        );
        assert_eq!(c["trust_anchor_matched"], true);
    }
    // No match (an empty list, as Chrome 141 sends): the default (landmark-relative) MTC,
    // which a client without the landmark fails; with the retry it asks again for the one
    // ID of the server's list it trusts (the CA's) and completes, both connections one
    // attempt.
    let plain = ask(&server, &pki, &["--trust-anchors", ""]);
    for c in &plain {
        assert_eq!(c["outcome"], "failed", "{c}");
        assert_eq!(c["error_category"], "verify_failed");
        assert!(c["error_detail"]
            .as_str()
            .unwrap()
            .contains("MTC landmark check failed"));
        assert_eq!(c["trust_anchor_matched"], false);
        assert_eq!(c["trust_anchors_available"], 2);
    }
    let retried = ask(
        &server,
        &pki,
        &["--trust-anchors", "", "--trust-anchor-retry"],
    );
    // The same retry reading each connection's rest after the next handshake (the failed
    // first one's too): it starts at once, and the records are the same.
    let deferred = ask(
        &server,
        &pki,
        &[
            "--trust-anchors",
            "",
            "--trust-anchor-retry",
            "--defer-close",
        ],
    );
    // No extension at all: the default certificate, and no trust-anchor fields.
    let none = ask(&server, &pki, &[]);
    let servers = server.stop();
    assert_eq!(
        servers.len(),
        2 + 2 + 2 + 2 * 2 + 2 * 2 + 2,
        "one record per connection"
    );
    for (d, r) in deferred.iter().zip(&retried) {
        assert_eq!(d["outcome"], "ok", "{d}");
        assert_eq!(d["trust_anchors_requested"], 1, "{d}");
        assert_eq!(d["conn_bytes_read"], r["conn_bytes_read"], "{d}");
        assert_eq!(d["conn_bytes_written"], r["conn_bytes_written"], "{d}");
    }
    for c in &retried {
        assert_eq!(c["outcome"], "ok", "{c}");
        assert_eq!(c["mtc_kind"], "standalone");
        assert_eq!(c["trust_anchors_requested"], 1, "the retry's list: the CA");
        assert_eq!(c["trust_anchor_matched"], true);
        let first = c["first_conn_id"].as_str().expect("the first connection");
        assert_ne!(Some(first), c["conn_id"].as_str());
        assert!(c["retry_first_detail"]
            .as_str()
            .unwrap()
            .contains("MTC landmark check failed"));
        // Both connections' bytes: each as the server counted it.
        let by_id = |id: &str| servers.iter().find(|s| s["conn_id"] == id).unwrap();
        let (s1, s2) = (by_id(first), by_id(c["conn_id"].as_str().unwrap()));
        assert_eq!(
            u(c, "bytes_written"),
            u(s1, "bytes_read") + u(s2, "bytes_read")
        );
    }
    for c in &none {
        assert_eq!(c["outcome"], "failed", "{c}");
        assert!(c.get("trust_anchors_requested").is_none(), "{c}");
        assert_eq!(c["peer_chain"], Value::Null);
    }
}

#[test]
fn the_client_hello_grows_by_exactly_the_encoded_list() {
    for stack in [BORING, OPENSSL] {
        client_hello_grows(stack);
    }
}

fn client_hello_grows(stack: &str) {
    let dir = TempDir::new(&format!("anchors-bytes-{stack}"));
    let pki = pki_with(&dir, "ML-DSA-44,ML-DSA-65", &["--mtc-batch", "64"]);
    // Every client here fails the same way (the landmark-relative MTC, not held): the same
    // flights but the ClientHello. The server has no IDs, so it answers nothing.
    let server = Server::start(stack, &pki, GROUP, &["--chain", "mtc-landmark"]);
    let ask = |server: &Server, pki: &Path, args: &[&str]| ask(stack, server, pki, args);
    let written = |args: &[&str]| -> u64 {
        let records = ask(&server, &pki, args);
        let w: Vec<u64> = records.iter().map(|c| u(c, "bytes_written")).collect();
        assert!(w.windows(2).all(|p| p[0] == p[1]), "{w:?}");
        assert!(records.iter().all(|c| c["outcome"] == "failed"));
        w[0]
    };
    let bare = written(&[]);
    // The extension's type and length (4 bytes) and the list's length (2), then per ID its
    // length byte and its bytes: a filler ID 32473.99.<i> is 5 bytes (i < 128), the CA's
    // 32473.1 4, the landmark's 32473.1.0.1.2 7.
    for (args, list) in [
        (vec!["--trust-anchors", ""], 0),
        (vec!["--trust-anchors", "32473.1"], 5),
        (vec!["--trust-anchors", "32473.1.0.1.2,32473.1"], 8 + 5),
        (
            vec!["--trust-anchors", "", "--trust-anchors-filler", "28"],
            28 * 6,
        ),
        (
            vec!["--trust-anchors", "", "--trust-anchors-filler", "100"],
            100 * 6,
        ),
    ] {
        assert_eq!(written(&args) - bare, 6 + list, "{args:?}");
    }
    server.stop();
}

#[test]
fn bad_trust_anchor_input_is_one_line_and_rustls_refuses_by_capability() {
    let dir = TempDir::new("anchors-bad");
    let pki = pki_with(&dir, "ML-DSA-44,ML-DSA-65", &["--mtc-batch", "64"]);
    let one_line = |stack: &str, args: &[&str], want: &str| {
        let out = Command::new(binary(stack)).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stack} {args:?}: {err}");
        assert!(err.contains(want), "{stack} {args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    };
    let client = common::REFUSED_CLIENT;
    let with = |extra: &[&'static str]| [&client[..], extra].concat();
    let pki_arg = pki.to_str().unwrap();
    for stack in [BORING, OPENSSL] {
        one_line(
            stack,
            &with(&["--trust-anchors", "32473.one"]),
            "--trust-anchors \"32473.one\": \"32473.one\" is not a trust anchor ID",
        );
        let long = vec!["1"; 33].join(".");
        one_line(
            stack,
            &[&client[..], &["--trust-anchors", long.as_str()]].concat(),
            "allowed: 1 to 32",
        );
        one_line(
            stack,
            &["serve", "--pki", pki_arg, "--trust-anchor-ids"],
            "--trust-anchor-ids with --chain leaf+intermediates: allowed with --chain mtc-landmark",
        );
    }
    // What OpenSSL's callbacks cannot carry.
    let mtc_server = [
        "serve",
        "--pki",
        pki_arg,
        "--chain",
        "mtc-landmark",
        "--trust-anchor-ids",
    ];
    one_line(
        OPENSSL,
        &[&mtc_server[..], &["--cert-compression", "zlib"]].concat(),
        "--trust-anchor-ids: without certificate compression only",
    );
    one_line(
        OPENSSL,
        &[&mtc_server[..], &["--transport", "quic"]].concat(),
        "--trust-anchor-ids: TCP only",
    );
    one_line(
        OPENSSL,
        &with(&["--trust-anchors", "", "--transport", "quic"]),
        "--trust-anchors over QUIC: TCP only",
    );
    one_line(
        "rustls",
        &with(&["--trust-anchors", ""]),
        "missing capability: trust_anchors",
    );
    one_line(
        "rustls",
        &["serve", "--pki", pki_arg, "--trust-anchor-ids"],
        "missing capability: trust_anchors",
    );
}
