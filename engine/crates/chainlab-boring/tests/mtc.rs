//! Merkle Tree Certificates through BoringSSL's own X.509 verifier
//! (`X509_V_FLAG_USE_MTC_DRAFT_PLANTS_07`, the MTC CA certificate as trust anchor): every
//! standalone MTC `pki` issues in the -07 encoding verifies on a BoringSSL client whatever
//! stack serves it, and the negative controls the other stacks' relying party fails
//! (tampered proof, wrong CA key, expired, wrong name) fail in BoringSSL too, as
//! `verify_failed` with BoringSSL's own reason. A landmark-relative certificate, which
//! BoringSSL's verifier has no landmarks for, fails as a signature failure; the early
//! experiments' encoding is refused before any handshake.

use chainlab_test_support::stacks as common;

use std::path::{Path, PathBuf};
use std::process::Command;

use chainlab_test_support::files::{copy_dir, pem, pem_der};
use common::{binary, client, pki_with, Server, TempDir};
use serde_json::Value;

const BORING: &str = "boringssl";
const SERVERS: [&str; 3] = ["boringssl", "openssl-3.5", "rustls"];
const GROUP: &str = "X25519MLKEM768";

fn mtc_pki(dir: &TempDir, chain: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--mtc-batch", "4096"];
    args.extend_from_slice(extra);
    pki_with(dir, chain, &args)
}

fn manifest(pki: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(pki.join("mtc/manifest.json")).unwrap()).unwrap()
}

fn trust(pki: &Path) -> String {
    pki.join("mtc/trust.json").to_str().unwrap().to_owned()
}

/// One BoringSSL handshake against a `server_stack` server of `pki` sending `chain`.
fn one(server_stack: &str, pki: &Path, chain: &str, args: &[&str]) -> Value {
    let server = Server::start(server_stack, pki, GROUP, &["--chain", chain]);
    let mut all = vec!["--groups", GROUP, "--count", "1"];
    all.extend_from_slice(args);
    let records = client(BORING, &server, &all);
    server.stop();
    assert_eq!(records.len(), 1, "{records:?}");
    records[0].clone()
}

#[test]
fn boringssl_verifies_every_standalone_mtc_from_every_server_stack() {
    for (leaf, ca, cosigners) in [
        ("ML-DSA-44,ML-DSA-65", "ML-DSA-44", "ML-DSA-44,ECDSA-P256"),
        ("ECDSA-P256,ECDSA-P256", "ECDSA-P256", ""),
        ("ML-DSA-65,ML-DSA-44", "ML-DSA-87", "Ed25519"),
    ] {
        let dir = TempDir::new("boring-mtc");
        let mut extra = vec!["--mtc-ca", ca];
        if !cosigners.is_empty() {
            extra.extend(["--mtc-cosigners", cosigners]);
        }
        let pki = mtc_pki(&dir, leaf, &extra);
        let m = manifest(&pki);
        assert_eq!(m["encoding"], "plants-07");
        assert_eq!(m["ca_cert_file"], "ca-cert.pem");
        for server in SERVERS {
            let c = one(
                server,
                &pki,
                "mtc-standalone",
                &["--mtc-trust", &trust(&pki)],
            );
            let label = format!("{leaf} CA {ca} from {server}");
            assert_eq!(c["outcome"], "ok", "{label}: {c}");
            assert_eq!(c["mtc_kind"], "standalone", "{label}");
            assert_eq!(c["mtc_proof_hashes"], m["proof_hashes"], "{label}");
            assert_eq!(c["mtc_signatures_checked"], 1, "{label}: the CA cosigner's");
            assert_eq!(
                c["peer_chain"][0]["der_bytes"], m["standalone"]["der_bytes"],
                "{label}"
            );
        }
    }
}

#[test]
fn the_negative_controls_fail_in_boringssl_too() {
    let dir = TempDir::new("boring-mtc-negative");
    let pki = mtc_pki(&dir, "ML-DSA-44,ML-DSA-65", &[]);
    let trust = trust(&pki);
    // A tampered proof: the last byte of the standalone certificate's last proof hash.
    let tampered = dir.0.join("tampered");
    copy_dir(&pki, &tampered);
    {
        let m = manifest(&pki);
        let file = tampered.join("mtc/standalone.pem");
        let mut der = pem_der(&file);
        let sigs = m["standalone"]["proof_structure_bytes"].as_u64().unwrap() as usize
            - (2 + 12 + 2 + 32 * m["proof_hashes"].as_u64().unwrap() as usize);
        let at = der.len() - sigs - 1;
        der[at] ^= 0x01;
        std::fs::write(&file, pem("CERTIFICATE", &der)).unwrap();
    }
    // The wrong CA key: the CA certificate of another seed's CA (same CA ID, other key).
    let other_dir = TempDir::new("boring-mtc-other");
    let other = mtc_pki(&other_dir, "ML-DSA-44,ML-DSA-65", &["--seed", "another"]);
    let wrong_key = dir.0.join("wrong-key");
    copy_dir(&pki, &wrong_key);
    std::fs::copy(
        other.join("mtc/ca-cert.pem"),
        wrong_key.join("mtc/ca-cert.pem"),
    )
    .unwrap();
    let expired_dir = TempDir::new("boring-mtc-expired");
    let expired = mtc_pki(
        &expired_dir,
        "ML-DSA-44,ML-DSA-65",
        &["--mtc-validity", "20200101000000Z,20210101000000Z"],
    );
    let cases: [(&str, &Path, &Path, Vec<&str>, &str); 5] = [
        (
            "tampered proof",
            &tampered,
            &pki,
            vec![],
            "certificate signature failure",
        ),
        (
            "wrong CA key",
            &pki,
            &wrong_key,
            vec![],
            "certificate signature failure",
        ),
        (
            "expired",
            &expired,
            &expired,
            vec![],
            "certificate has expired",
        ),
        (
            "wrong name",
            &pki,
            &pki,
            vec!["--servername", "other.example"],
            "Hostname mismatch",
        ),
        // What BoringSSL does with a landmark-relative certificate: it carries no CA
        // cosignature, so x509_mtc.cc rejects its proof (X509_R_INVALID_MTC_PROOF).
        (
            "landmark-relative",
            &pki,
            &pki,
            vec![],
            "certificate signature failure",
        ),
    ];
    for (what, served, trusted, extra, reason) in cases {
        let chain = if what == "landmark-relative" {
            "mtc-landmark"
        } else {
            "mtc-standalone"
        };
        let t = trusted.join("mtc/trust.json");
        let mut args = vec!["--mtc-trust", t.to_str().unwrap()];
        args.extend(extra);
        let c = one("openssl-3.5", served, chain, &args);
        assert_eq!(c["outcome"], "failed", "{what}: {c}");
        assert_eq!(c["error_category"], "verify_failed", "{what}: {c}");
        let detail = c["error_detail"].as_str().unwrap();
        assert!(detail.contains(reason), "{what}: {detail}");
    }
    // And the untampered certificate with the same files passes (the controls are the
    // changes alone).
    let c = one(
        "openssl-3.5",
        &pki,
        "mtc-standalone",
        &["--mtc-trust", &trust],
    );
    assert_eq!(c["outcome"], "ok", "{c}");
}

#[test]
fn the_early_experiments_encoding_is_refused_before_any_handshake() {
    let dir = TempDir::new("boring-mtc-exp");
    let pki = mtc_pki(
        &dir,
        "ML-DSA-44,ML-DSA-65",
        &["--mtc-encoding", "experimental"],
    );
    assert_eq!(manifest(&pki)["encoding"], "experimental");
    assert!(!pki.join("mtc/ca-cert.pem").exists());
    let out = Command::new(binary(BORING))
        .args(["handshake", "--connect", "127.0.0.1:9", "--count", "1"])
        .args(["--mtc-trust", &trust(&pki)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no MTC CA certificate") && err.contains("--mtc-encoding plants-07"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
