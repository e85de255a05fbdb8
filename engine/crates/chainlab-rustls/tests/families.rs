//! The signature families liboqs brings (Falcon, MAYO, UOV, CROSS) in real rustls handshakes:
//! at every position of depth 1-4 hierarchies, mixed with ML-DSA and ECDSA (no SLH-DSA: the
//! rustls stack has none; `pki` mixes them, tests/liboqs_pki.rs in chainlab-engine); the
//! CertificateVerify scheme recorded on both sides under its OQS provider name; bytes each
//! way the same on both sides. A chain rustls cannot receive (two UOV keys sent) is
//! refused when the server starts; a UOV-Is root (webpki cannot read it) is checked by the
//! client itself, and a chain it did not issue is refused; liboqs' own ML-DSA signs and verifies
//! with `--signature-impl liboqs`, which the OpenSSL engine refuses by name.

use chainlab_test_support::stacks as common;

use std::process::Command;

use common::{binary, client, pki, Server, TempDir};
use serde_json::Value;

const GROUPS: &str = "X25519MLKEM768";

/// Two handshakes against a rustls server of `chain`, trusting its root; both records' sides.
fn handshake(dir: &TempDir, chain: &str, extra: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let p = pki(dir, chain);
    let server = Server::start("rustls", &p, GROUPS, extra);
    let mut args = vec![
        "--ca",
        p.join("ca.pem").to_str().unwrap().to_owned().leak() as &str,
    ];
    args.extend(["--groups", GROUPS, "--count", "2"]);
    args.extend(extra);
    let clients = client("rustls", &server, &args);
    (clients, server.stop())
}

fn assert_agree(chain: &str, clients: &[Value], servers: &[Value], scheme: &str) {
    assert_eq!(clients.len(), 2, "{chain}");
    for c in clients {
        assert_eq!(c["outcome"], "ok", "{chain}: {c}");
        assert_eq!(c["sigalg"], scheme, "{chain}");
        let s = servers
            .iter()
            .find(|s| s["conn_id"] == c["conn_id"])
            .unwrap_or_else(|| panic!("{chain}: no server record for {}", c["conn_id"]));
        assert_eq!(s["sigalg"], scheme, "{chain}");
        assert_eq!(c["bytes_read"], s["bytes_written"], "{chain}");
        assert_eq!(c["bytes_written"], s["bytes_read"], "{chain}");
    }
}

#[test]
fn every_family_at_every_position_handshakes() {
    let dir = TempDir::new("families");
    // (chain root first, the leaf's TLS scheme). Each new algorithm is a leaf, an
    // intermediate and a root of a depth-3 ML-DSA-44 hierarchy (UOV-Is and UOV-Ip as the
    // root only: their keys fit in no Certificate message), then mixes and depths 1, 2, 4.
    let mut cases: Vec<(String, &str)> = Vec::new();
    for (name, scheme) in [
        ("Falcon-512", "falcon512"),
        ("Falcon-1024", "falcon1024"),
        ("MAYO-1", "mayo1"),
        ("MAYO-2", "mayo2"),
        ("UOV-Ip-pkc", "OV_Ip_pkc"),
        ("CROSS-RSDPG-128-fast", "CROSSrsdpg128fast"),
        ("CROSS-RSDPG-128-small", "CROSSrsdpg128small"),
    ] {
        cases.push((format!("ML-DSA-44,ML-DSA-44,{name}"), scheme));
        cases.push((format!("ML-DSA-44,{name},ML-DSA-44"), "mldsa44"));
        cases.push((format!("{name},ML-DSA-44,ML-DSA-44"), "mldsa44"));
    }
    for name in ["UOV-Is", "UOV-Ip"] {
        cases.push((format!("{name},ML-DSA-44,ML-DSA-44"), "mldsa44"));
    }
    cases.extend([
        (
            "UOV-Is,ECDSA-P256,ML-DSA-44,Falcon-512".to_owned(),
            "falcon512",
        ),
        ("ECDSA-P256,ECDSA-P256,Falcon-512".to_owned(), "falcon512"),
        ("ECDSA-P384,MAYO-2".to_owned(), "mayo2"),
        (
            "UOV-Ip-pkc,Falcon-512,CROSS-RSDPG-128-fast,MAYO-1".to_owned(),
            "mayo1",
        ),
        ("Falcon-1024".to_owned(), "falcon1024"),
    ]);
    for (chain, scheme) in &cases {
        let (clients, servers) = handshake(&dir, chain, &[]);
        assert_agree(chain, &clients, &servers, scheme);
        let leaf = chain.rsplit(',').next().unwrap();
        assert_eq!(clients[0]["peer_chain"][0]["key_alg"], leaf, "{chain}");
    }
}

#[test]
fn liboqs_ml_dsa_signs_and_verifies_on_request() {
    let dir = TempDir::new("liboqs-mldsa");
    let chain = "ML-DSA-65,ML-DSA-44";
    let (clients, servers) = handshake(&dir, chain, &["--signature-impl", "liboqs"]);
    assert_agree(chain, &clients, &servers, "mldsa44");
    // The OpenSSL engine names what it cannot do.
    let err = serve_refused(
        "openssl-3.5",
        &pki(&dir, chain),
        &["--signature-impl", "liboqs"],
    );
    assert!(
        err.contains(
            "--signature-impl liboqs: not supported by the openssl-3.5 engine \
             (missing capability: signature_impl_liboqs"
        ),
        "{err}"
    );
}

#[test]
fn what_rustls_cannot_receive_is_refused_at_start() {
    let dir = TempDir::new("uov-sent");
    // Two UOV-Ip-pkc certificates sent: a Certificate message over 64 KiB.
    let err = serve_refused("rustls", &pki(&dir, "ML-DSA-44,UOV-Ip-pkc,UOV-Ip-pkc"), &[]);
    assert!(
        err.contains("at most 65535 bytes") && err.contains("UOV"),
        "{err}"
    );
    // A UOV-Is root is checked by the client itself (webpki reads no DER element over 64
    // KiB); it must issue an intermediate, so a leaf directly under it fails verification.
    let root = pki(&dir, "UOV-Is,ML-DSA-44");
    let server = Server::start("rustls", &root, GROUPS, &[]);
    let records = [one_handshake(&server, &root)];
    assert_eq!(records[0]["outcome"], "failed");
    assert_eq!(records[0]["error_category"], "verify_failed");
    // ... and a chain another UOV-Is root issued (same names, another seed, so another key)
    // is refused: the client checks the signature, not the issuer's name.
    let server = Server::start(
        "rustls",
        &pki(&dir, "UOV-Is,ML-DSA-44,ML-DSA-44"),
        GROUPS,
        &[],
    );
    let elsewhere = TempDir::new("uov-other-seed");
    let other = common::pki_with(
        &elsewhere,
        "UOV-Is,ML-DSA-44,ML-DSA-44",
        &["--seed", "other"],
    );
    let records = [one_handshake(&server, &other)];
    assert_eq!(
        records[0]["error_category"], "verify_failed",
        "{}",
        records[0]
    );
}

/// One rustls handshake against `server`, trusting the root of the hierarchy in `pki`.
fn one_handshake(server: &Server, pki: &std::path::Path) -> Value {
    let ca = pki.join("ca.pem");
    let args = ["--ca", ca.to_str().unwrap(), "--count", "1"];
    client("rustls", server, &args).remove(0)
}

/// A `serve` of `stack` that must refuse to start (exit 2); its error.
fn serve_refused(stack: &str, pki: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new(binary(stack))
        .arg("serve")
        .args(extra)
        .arg("--pki")
        .arg(pki)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}
