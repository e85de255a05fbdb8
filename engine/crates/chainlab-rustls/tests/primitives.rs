//! `primitives` on the rustls engine: ML-DSA signed and verified by aws-lc (the stack's own)
//! and by liboqs (`--signature-impl liboqs`); anything else refused in one line. Every
//! algorithm and group aws-lc has is timed by the cross-stack suite (chainlab-test-support
//! `tests/stacks.rs`), from its `info`.

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
