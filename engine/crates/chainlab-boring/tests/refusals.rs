//! What the BoringSSL engine cannot do, refused in one line before anything runs.
//! What it does with every other stack, and what it records meeting a peer it cannot serve,
//! is the cross-stack suite's (chainlab-test-support `tests/stacks.rs`).
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use std::process::Command;

use chainlab_test_support::stacks::{binary, pki, TempDir, REFUSED_CLIENT};

const BORING: &str = "boringssl";

#[test]
fn what_boringssl_cannot_do_is_refused_in_one_line() {
    let dir = TempDir::new("refuse");
    // An SLH-DSA leaf: BoringSSL reads no SLH-DSA key; the server refuses to start.
    let slh = pki(&dir, "SLH-DSA-SHAKE-128f,SLH-DSA-SHAKE-128f");
    let out = Command::new(binary(BORING))
        .arg("serve")
        .arg("--pki")
        .arg(&slh)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a private key BoringSSL reads"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // What BoringSSL lacks by name (a group, a scheme) before anything runs; what it lacks
    // by engine feature is the cross-stack suite's
    // (`every_stack_refuses_each_feature_it_lacks_in_one_line`).
    let client = REFUSED_CLIENT;
    let out = Command::new(binary(BORING))
        .args(client)
        .args(["--groups", "MLKEM768"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"MLKEM768\" is not a group of the boringssl stack"),
        "{err}"
    );
    // An unknown scheme: every scheme the stack takes listed, each once.
    let out = Command::new(binary(BORING))
        .args(client)
        .args(["--sigalgs", "nope"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let allowed = err.split("allowed: ").nth(1).unwrap_or_default().trim();
    let names: Vec<&str> = allowed.split(", ").collect();
    assert!(
        names.contains(&"rsa_pss_rsae_sha384") && names.contains(&"mldsa65"),
        "{err}"
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "rsa_pss_rsae_sha256")
            .count(),
        1,
        "{err}"
    );
    // Against a server whose leaf's scheme it lacks, or a root it does not trust: the
    // cross-stack suite's, for every client.
}
