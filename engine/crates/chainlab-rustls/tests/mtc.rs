//! Merkle Tree Certificates on every stack: each serves `pki --mtc-batch`'s standalone and
//! landmark-relative certificates, each client verifies them with `--mtc-trust` and records
//! what it checked, and every negative control fails as `verify_failed` naming its check on
//! every client stack.

use chainlab_test_support::stacks as common;

use std::path::{Path, PathBuf};

use chainlab_test_support::files::{copy_dir, pem, pem_der};
use common::{client, pki_with, Server, TempDir};
use serde_json::Value;

const STACKS: [&str; 3] = ["openssl-3.5", "openssl-4.0", "rustls"];
const GROUP: &str = "X25519MLKEM768";

fn mtc_pki(dir: &TempDir, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "--mtc-batch",
        "4096",
        "--mtc-cosigners",
        "ML-DSA-44,ECDSA-P256",
    ];
    args.extend_from_slice(extra);
    pki_with(dir, "ML-DSA-44,ML-DSA-65", &args)
}

fn manifest(pki: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(pki.join("mtc/manifest.json")).unwrap()).unwrap()
}

fn trust(pki: &Path) -> String {
    pki.join("mtc/trust.json").to_str().unwrap().to_owned()
}

/// One handshake of `client_stack` against a `server_stack` server sending `chain`.
fn one(
    server_stack: &str,
    chain: &str,
    pki: &Path,
    client_stack: &str,
    args: &[&str],
) -> (Value, Value) {
    let server = Server::start(server_stack, pki, GROUP, &["--chain", chain]);
    let mut all = vec!["--groups", GROUP, "--count", "1"];
    all.extend_from_slice(args);
    let records = client(client_stack, &server, &all);
    let servers = server.stop();
    assert_eq!(
        (records.len(), servers.len()),
        (1, 1),
        "{records:?} {servers:?}"
    );
    (records[0].clone(), servers[0].clone())
}

/// Both encodings (-07's IANA OIDs, the default, and the early experiments'), both kinds, on
/// every stack.
#[test]
fn every_stack_serves_and_verifies_both_kinds_in_both_encodings() {
    for encoding in ["plants-07", "experimental"] {
        let dir = TempDir::new(&format!("mtc-kinds-{encoding}"));
        let pki = mtc_pki(&dir, &["--mtc-encoding", encoding]);
        assert_eq!(manifest(&pki)["encoding"], encoding);
        serves_and_verifies_both_kinds(&pki);
    }
}

fn serves_and_verifies_both_kinds(pki: &Path) {
    let pki = pki.to_path_buf();
    let m = manifest(&pki);
    let trust = trust(&pki);
    for (i, server_stack) in STACKS.iter().enumerate() {
        let client_stack = STACKS[(i + 1) % STACKS.len()];
        for (chain, kind, extra, signatures) in [
            ("mtc-landmark", "landmark", vec!["--mtc-landmarks"], 0),
            (
                "mtc-standalone",
                "standalone",
                vec!["--mtc-cosigners-required", "2"],
                3,
            ),
        ] {
            let mut args = vec!["--mtc-trust", trust.as_str()];
            args.extend(extra);
            let (c, s) = one(server_stack, chain, &pki, client_stack, &args);
            let label = format!("{client_stack} -> {server_stack} {chain}");
            assert_eq!(c["outcome"], "ok", "{label}: {c}");
            assert_eq!(c["mtc_kind"], kind, "{label}");
            assert_eq!(c["mtc_proof_hashes"], m["proof_hashes"], "{label}");
            assert_eq!(c["mtc_signatures_checked"], signatures, "{label}");
            let sent = &c["peer_chain"];
            assert_eq!(sent.as_array().unwrap().len(), 1, "{label}: the MTC alone");
            let file = if kind == "landmark" {
                &m["landmark"]
            } else {
                &m["standalone"]
            };
            assert_eq!(sent[0]["der_bytes"], file["der_bytes"], "{label}");
            assert_eq!(c["bytes_read"], s["bytes_written"], "{label}");
            assert_eq!(c["bytes_written"], s["bytes_read"], "{label}");
        }
    }
}

#[test]
fn every_negative_control_fails_its_own_check_on_every_client_stack() {
    let dir = TempDir::new("mtc-negative");
    let pki = mtc_pki(&dir, &[]);
    let expired = {
        let d = TempDir::new("mtc-expired");
        let p = mtc_pki(&d, &["--mtc-validity", "20200101000000Z,20210101000000Z"]);
        let keep = dir.0.join("expired");
        copy_dir(&p, &keep);
        keep
    };
    let tampered = dir.0.join("tampered");
    copy_dir(&pki, &tampered);
    tamper_last_proof_byte(&tampered.join("mtc/landmark.pem"));
    let wrong_key = dir.0.join("wrong-key.json");
    {
        let mut t: Value =
            serde_json::from_str(&std::fs::read_to_string(pki.join("mtc/trust.json")).unwrap())
                .unwrap();
        let ca_key = t["cosigners"][0]["spki"].clone();
        t["cosigners"][1]["spki"] = ca_key; // cosigner 32473.2.1 "holds" the CA's key
        std::fs::write(&wrong_key, t.to_string()).unwrap();
    }
    let trust = trust(&pki);
    let wrong_key = wrong_key.to_str().unwrap();
    let expired_trust = expired.join("mtc/trust.json");
    let expired_trust = expired_trust.to_str().unwrap();
    let cases: Vec<(&str, &Path, &str, Vec<&str>)> = vec![
        (
            "inclusion proof",
            &tampered,
            "mtc-landmark",
            vec!["--mtc-trust", &trust, "--mtc-landmarks"],
        ),
        (
            "landmark",
            &pki,
            "mtc-landmark",
            vec!["--mtc-trust", &trust],
        ),
        (
            "cosigners",
            &pki,
            "mtc-standalone",
            vec!["--mtc-trust", wrong_key, "--mtc-cosigners-required", "2"],
        ),
        (
            "cosigners",
            &pki,
            "mtc-standalone",
            vec!["--mtc-trust", &trust, "--mtc-cosigners-required", "3"],
        ),
        (
            "validity",
            &expired,
            "mtc-standalone",
            vec!["--mtc-trust", expired_trust],
        ),
        (
            "name",
            &pki,
            "mtc-standalone",
            vec!["--mtc-trust", &trust, "--servername", "other.example"],
        ),
    ];
    for client_stack in STACKS {
        for (check, p, chain, args) in &cases {
            let (c, _) = one("openssl-3.5", chain, p, client_stack, args);
            let label = format!("{client_stack}, {check} ({args:?})");
            assert_eq!(c["outcome"], "failed", "{label}: {c}");
            assert_eq!(c["error_category"], "verify_failed", "{label}: {c}");
            let detail = c["error_detail"].as_str().unwrap();
            assert!(
                detail.contains(&format!("MTC {check} check failed")),
                "{label}: {detail}"
            );
        }
    }
    // The wrong key is named: the check says whose signature did not verify.
    let (c, _) = one("rustls", "mtc-standalone", &pki, "openssl-3.5", &cases[2].3);
    assert!(
        c["error_detail"]
            .as_str()
            .unwrap()
            .contains("invalid: 32473.2.1"),
        "{c}"
    );
}

/// Flips the last byte of the last proof hash of a landmark-relative certificate (its
/// signatureValue ends with that hash, then the empty signatures list's length: three bytes
/// in the -07 encoding `pki` writes by default).
fn tamper_last_proof_byte(pem_file: &Path) {
    let mut der = pem_der(pem_file);
    let at = der.len() - 4;
    der[at] ^= 0x01;
    std::fs::write(pem_file, pem("CERTIFICATE", &der)).unwrap();
}

/// The draft's trust-anchor retry: a client without the landmark gets the landmark-relative
/// certificate, fails its landmark check, connects again for the standalone one and
/// accepts it; its record is both connections as one attempt. Without `--mtc-retry` the
/// same client fails, naming the landmark check.
#[test]
fn a_client_without_the_landmark_retries_for_the_standalone_certificate() {
    let dir = TempDir::new("mtc-retry");
    let pki = mtc_pki(&dir, &[]);
    let trust = trust(&pki);
    let m = manifest(&pki);
    for server_stack in ["openssl-3.5", "rustls"] {
        for client_stack in STACKS {
            let label = format!("{client_stack} -> {server_stack}");
            let server = Server::start(
                server_stack,
                &pki,
                GROUP,
                &["--chain", "mtc-landmark", "--mtc-retry-standalone"],
            );
            let args = ["--groups", GROUP, "--count", "2", "--mtc-trust", &trust];
            let plain = client(client_stack, &server, &args);
            let mut with_retry = args.to_vec();
            with_retry.push("--mtc-retry");
            let retried = client(client_stack, &server, &with_retry);
            // Reading each connection's rest after the next handshake (the failed first one's
            // too), the retry starts at once: the same records, the same bytes.
            with_retry.push("--defer-close");
            let deferred = client(client_stack, &server, &with_retry);
            let servers = server.stop();
            assert_eq!(
                servers.len(),
                2 + 2 * 2 + 2 * 2,
                "{label}: one server record per connection"
            );
            let conn_bytes = |c: &Value| {
                (
                    c["conn_bytes_read"].clone(),
                    c["conn_bytes_written"].clone(),
                )
            };
            for (d, r) in deferred.iter().zip(&retried) {
                assert_eq!(d["outcome"], "ok", "{label}: {d}");
                assert!(d["retry_first_detail"].is_string(), "{label}: {d}");
                assert_eq!(conn_bytes(d), conn_bytes(r), "{label}: {d}");
            }
            for c in &deferred {
                let by_id = |id: &Value| servers.iter().find(|s| &s["conn_id"] == id).unwrap();
                let (s1, s2) = (by_id(&c["first_conn_id"]), by_id(&c["conn_id"]));
                let sum = |k: &str| s1[k].as_u64().unwrap() + s2[k].as_u64().unwrap();
                assert_eq!(
                    c["conn_bytes_read"].as_u64(),
                    Some(sum("conn_bytes_written")),
                    "{label}"
                );
            }
            for c in &plain {
                assert_eq!(c["outcome"], "failed", "{label}: {c}");
                assert!(c["error_detail"]
                    .as_str()
                    .unwrap()
                    .contains("MTC landmark check failed"));
            }
            for c in &retried {
                assert_eq!(c["outcome"], "ok", "{label}: {c}");
                assert_eq!(c["mtc_kind"], "standalone", "{label}");
                assert_eq!(
                    c["mtc_signatures_checked"], 3,
                    "{label}: the CA and 2 cosigners"
                );
                assert_eq!(
                    c["peer_chain"][0]["der_bytes"],
                    m["standalone"]["der_bytes"]
                );
                let first = c["first_conn_id"]
                    .as_str()
                    .expect("the first connection's id");
                assert_ne!(Some(first), c["conn_id"].as_str());
                assert!(c["retry_first_detail"]
                    .as_str()
                    .unwrap()
                    .contains("MTC landmark check failed"));
                // Both connections' bytes: the standalone flight and as much of the landmark
                // one as the client read before it gave up on the certificate.
                let by_id = |id: &str| servers.iter().find(|s| s["conn_id"] == id).unwrap();
                let (s1, s2) = (by_id(first), by_id(c["conn_id"].as_str().unwrap()));
                let written = |s: &Value| s["bytes_written"].as_u64().unwrap();
                let read = c["bytes_read"].as_u64().unwrap();
                assert!(
                    written(s2) + m["landmark"]["der_bytes"].as_u64().unwrap() < read
                        && read <= written(s1) + written(s2),
                    "{label}: read {read}, the servers wrote {} and {}",
                    written(s1),
                    written(s2)
                );
            }
        }
    }
}
