//! `primitives` on BoringSSL: one record per operation, as `chainlab-engine primitives`
//! writes them, for every signature algorithm and key-exchange group the stack has; what it
//! lacks refused in one line.

use chainlab_test_support::stacks;
use serde_json::Value;

fn primitives(args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    stacks::primitives("boringssl", args)
}

#[test]
fn each_algorithm_signs_and_verifies_one_record_per_operation() {
    for alg in [
        "ML-DSA-44",
        "ML-DSA-65",
        "ML-DSA-87",
        "ECDSA-P256",
        "ECDSA-P384",
        "Ed25519",
        "RSA-2048",
    ] {
        for op in ["sign", "verify"] {
            let (code, records, err) = primitives(&[
                "--subject",
                alg,
                "--op",
                op,
                "--count",
                "3",
                "--warmup",
                "1",
            ]);
            assert_eq!(code, Some(0), "{alg} {op}: {err}");
            assert_eq!(records.len(), 4, "{alg} {op}");
            for (i, r) in records.iter().enumerate() {
                assert_eq!(r["event"], "primitive");
                assert_eq!(r["subject"], alg);
                assert_eq!(r["op"], op);
                assert_eq!(r["message_bytes"], 130, "the CertificateVerify content");
                assert_eq!(r["warmup"], i == 0);
                assert_eq!(r["seq"], i as u64);
                assert!(r["cpu_ns"].as_u64().unwrap() > 0 && r["wall_ns"].as_u64().unwrap() > 0);
            }
        }
    }
}

#[test]
fn each_group_runs_its_key_exchange_operations() {
    stacks::times_key_exchange(
        "boringssl",
        &[
            ("X25519MLKEM768", true),
            ("MLKEM1024", true),
            ("X25519", false),
            ("P-256", false),
            ("P-384", false),
        ],
    );
}

#[test]
fn what_boringssl_lacks_is_refused_in_one_line() {
    for (args, wanted) in [
        (
            &["--subject", "SLH-DSA-SHAKE-128f", "--op", "sign"][..],
            "not a signature algorithm or group of the boringssl stack",
        ),
        (
            &["--subject", "MLKEM768", "--op", "keygen"][..],
            "not a signature algorithm or group of the boringssl stack",
        ),
        (
            &["--subject", "X25519", "--op", "encaps"][..],
            "allowed: keygen, derive",
        ),
        (
            &["--subject", "ML-DSA-65", "--op", "decaps"][..],
            "is a signature algorithm; allowed: sign, verify",
        ),
        (
            &["--subject", "ML-DSA-65", "--op", "sign", "--count", "0"][..],
            "--count 0: must be at least 1",
        ),
        (
            &[
                "--subject",
                "ML-DSA-65",
                "--op",
                "sign",
                "--signature-impl",
                "liboqs",
            ][..],
            "missing capability: signature_impl_liboqs",
        ),
    ] {
        let (code, records, err) = primitives(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            records.is_empty() && err.contains(wanted),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
