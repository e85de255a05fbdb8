//! `primitives`: one JSON line per timed operation, for every kind of operation the cost
//! model prices, and a one-line error naming what is allowed for a wrong combination.

use chainlab_test_support::engine as common;

use std::process::Command;

use common::engine;
use serde_json::Value;

/// Runs `primitives` with `args`; its records (warm-ups included), each held to the record
/// contract (`records.schema.json`, `$defs.primitive`).
fn run(args: &[&str]) -> Vec<Value> {
    let out = Command::new(engine())
        .arg("primitives")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "primitives {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    chainlab_test_support::parse_lines(&String::from_utf8(out.stdout).unwrap())
}

fn error_of(args: &[&str]) -> String {
    let out = Command::new(engine())
        .arg("primitives")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn signatures_are_timed_on_the_certificate_verify_content_and_on_a_certificate() {
    let records = run(&["--subject", "ML-DSA-44", "--op", "sign", "--count", "3"]);
    assert_eq!(records.len(), 4, "1 warm-up + 3");
    assert_eq!(records[0]["warmup"], true);
    for r in &records[1..] {
        assert_eq!(r["event"], "primitive");
        assert_eq!(r["subject"], "ML-DSA-44");
        assert_eq!(r["op"], "sign");
        assert_eq!(r["message_bytes"], 130);
        assert_eq!(r["warmup"], false);
        assert!(r["cpu_ns"].as_u64().unwrap() > 0);
        assert!(r["wall_ns"].as_u64().unwrap() > 0);
    }
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    for (alg, message) in [
        ("RSA-2048", "cert"),
        ("ECDSA-P384", "cv"),
        ("Ed25519", "cert"),
    ] {
        let records = run(&[
            "--subject",
            alg,
            "--op",
            "verify",
            "--message",
            message,
            "--message-bytes",
            "700",
            "--count",
            "2",
            "--warmup",
            "0",
        ]);
        assert_eq!(records.len(), 2);
        let expected = if message == "cv" { 130 } else { 700 };
        assert_eq!(records[0]["message_bytes"], expected, "{alg}");
    }
}

/// liboqs' families are timed through liboqs, on both messages (the cost model prices them
/// like every other algorithm).
#[test]
fn liboqs_signatures_are_timed_too() {
    for alg in ["Falcon-512", "MAYO-2", "UOV-Ip-pkc", "CROSS-RSDPG-128-fast"] {
        for (op, message) in [("sign", "cv"), ("verify", "cert")] {
            let records = run(&[
                "--subject",
                alg,
                "--op",
                op,
                "--message",
                message,
                "--count",
                "2",
            ]);
            assert_eq!(records.len(), 3, "{alg} {op}");
            assert!(records.iter().all(|r| r["subject"] == alg && r["op"] == op));
            assert!(records[1]["cpu_ns"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn key_exchange_operations_follow_the_group_kind() {
    for (group, op) in [
        ("X25519MLKEM768", "encaps"),
        ("MLKEM768", "decaps"),
        ("SecP256r1MLKEM768", "keygen"),
        ("X25519", "derive"),
        ("P-256", "keygen"),
        ("ffdhe2048", "derive"),
    ] {
        let records = run_group_op(group, op, "2");
        assert_eq!(records.len(), 2, "{group} {op}");
        assert!(records[0]["message_bytes"].is_null());
    }
    let err = error_of(&["--subject", "X25519", "--op", "encaps"]);
    assert!(
        err.contains("Diffie-Hellman group; allowed: keygen, derive"),
        "{err}"
    );
    let err = error_of(&["--subject", "MLKEM768", "--op", "derive"]);
    assert!(
        err.contains("a KEM; allowed: keygen, encaps, decaps"),
        "{err}"
    );
    let err = error_of(&["--subject", "X9", "--op", "keygen"]);
    assert!(
        err.contains("not a key-exchange group; allowed: X25519"),
        "{err}"
    );
}

/// The server's `encaps` and either side's `derive` decode the peer's key share as libssl
/// does (a parameter key of the group, then the encoded public key): every group decodes.
#[test]
fn every_group_decodes_the_peers_key_share() {
    for (group, op) in [
        ("X25519", "derive"),
        ("X448", "derive"),
        ("P-256", "derive"),
        ("P-384", "derive"),
        ("P-521", "derive"),
        ("ffdhe2048", "derive"),
        ("ffdhe3072", "derive"),
        ("ffdhe4096", "derive"),
        ("ffdhe6144", "derive"),
        ("ffdhe8192", "derive"),
        ("X25519MLKEM768", "encaps"),
        ("SecP256r1MLKEM768", "encaps"),
        ("SecP384r1MLKEM1024", "encaps"),
        ("MLKEM512", "encaps"),
        ("MLKEM768", "encaps"),
        ("MLKEM1024", "encaps"),
    ] {
        let records = run_group_op(group, op, "1");
        assert_eq!(records.len(), 1, "{group} {op}");
        assert!(records[0]["cpu_ns"].as_u64().unwrap() > 0, "{group} {op}");
    }
}

/// `count` operations of a key-exchange group, without warm-ups.
fn run_group_op(group: &str, op: &str, count: &str) -> Vec<Value> {
    run(&[
        "--subject",
        group,
        "--op",
        op,
        "--count",
        count,
        "--warmup",
        "0",
    ])
}

#[test]
fn decompression_restores_the_certificate_bytes() {
    for alg in ["zlib", "brotli", "zstd"] {
        let records = run(&[
            "--subject",
            alg,
            "--op",
            "decompress",
            "--message-bytes",
            "16384",
            "--count",
            "2",
        ]);
        assert_eq!(records.len(), 3, "{alg}");
        assert_eq!(records[1]["message_bytes"], 16384);
    }
    let err = error_of(&["--subject", "lz4", "--op", "decompress"]);
    assert!(err.contains("allowed: zlib, brotli, zstd"), "{err}");
}

#[test]
fn a_signature_operation_needs_a_signature_algorithm() {
    let err = error_of(&["--subject", "X25519", "--op", "sign"]);
    assert!(
        err.contains("the subject must be a signature algorithm"),
        "{err}"
    );
    assert!(
        err.contains("ML-DSA-44"),
        "names the allowed algorithms: {err}"
    );
    let err = error_of(&["--subject", "ML-DSA-44", "--op", "sign", "--count", "0"]);
    assert!(err.contains("--count 0"), "{err}");
}
