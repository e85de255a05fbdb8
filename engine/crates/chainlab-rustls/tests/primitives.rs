//! `primitives` on the rustls engine: ML-DSA signed and verified by aws-lc (the stack's own)
//! and by liboqs (`--signature-impl liboqs`), aws-lc's classical algorithms with rustls'
//! TLS 1.3 schemes, one record per operation as `chainlab-engine primitives` writes them;
//! anything else refused in one line.

use chainlab_test_support::stacks;
use serde_json::Value;

fn primitives(args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    stacks::primitives("rustls", args)
}

#[test]
fn ml_dsa_signs_and_verifies_on_both_implementations() {
    for alg in ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"] {
        for implementation in ["stack", "liboqs"] {
            for op in ["sign", "verify"] {
                let (code, records, err) = primitives(&[
                    "--subject",
                    alg,
                    "--op",
                    op,
                    "--signature-impl",
                    implementation,
                    "--count",
                    "2",
                ]);
                assert_eq!(code, Some(0), "{alg} {implementation} {op}: {err}");
                assert_eq!(records.len(), 3, "one warm-up and two timed");
                assert!(records.iter().all(|r| r["subject"] == alg
                    && r["op"] == op
                    && r["message_bytes"] == 130
                    && r["cpu_ns"].as_u64().unwrap() > 0));
            }
        }
    }
}

#[test]
fn aws_lc_classical_signatures_sign_and_verify() {
    for alg in [
        "ECDSA-P256",
        "ECDSA-P384",
        "Ed25519",
        "RSA-2048",
        "RSA-3072",
    ] {
        for op in ["sign", "verify"] {
            let (code, records, err) = primitives(&["--subject", alg, "--op", op, "--count", "2"]);
            // The engine checks its own signature before timing: a verify that fails ends it.
            assert_eq!(code, Some(0), "{alg} {op}: {err}");
            assert_eq!(records.len(), 3, "one warm-up and two timed");
            assert!(records
                .iter()
                .all(|r| r["subject"] == alg && r["op"] == op && r["message_bytes"] == 130));
        }
    }
}

#[test]
fn aws_lc_key_exchange_runs_each_groups_operations() {
    stacks::times_key_exchange(
        "rustls",
        &[
            ("X25519MLKEM768", true),
            ("SecP256r1MLKEM768", true),
            ("MLKEM768", true),
            ("MLKEM1024", true),
            ("X25519", false),
            ("P-256", false),
            ("P-384", false),
        ],
    );
}

#[test]
fn what_it_does_not_time_is_refused_in_one_line() {
    for (args, says) in [
        (
            &["--subject", "Falcon-512", "--op", "sign"][..],
            "times aws-lc's algorithms only",
        ),
        (
            &[
                "--subject",
                "ECDSA-P256",
                "--op",
                "sign",
                "--signature-impl",
                "liboqs",
            ][..],
            "times ML-DSA only",
        ),
        (
            &["--subject", "X25519", "--op", "encaps"][..],
            "allowed: keygen, derive",
        ),
        (
            &["--subject", "MLKEM768", "--op", "verify"][..],
            "is a key-exchange group",
        ),
    ] {
        let (code, records, err) = primitives(args);
        assert_eq!(code, Some(2), "{err}");
        assert!(records.is_empty() && err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
