//! `primitives` on BoringSSL: what it lacks refused in one line. Every signature algorithm
//! and group it has is timed by the cross-stack suite (chainlab-test-support
//! `tests/stacks.rs`), from its `info`.

use chainlab_test_support::stacks;
use serde_json::Value;

fn primitives(args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    stacks::primitives("boringssl", args)
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
