//! What the rustls engine cannot do, refused in one line before anything runs. What it
//! does with every other stack, and what it records meeting a peer it cannot serve, is the
//! cross-stack suite's (chainlab-test-support `tests/stacks.rs`).
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use std::process::Command;

use chainlab_test_support::stacks::{binary, pki, TempDir};

#[test]
fn what_rustls_cannot_do_is_refused_in_one_line() {
    let dir = TempDir::new("refuse");
    // An SLH-DSA leaf: rustls has no SLH-DSA signing; the server refuses to start.
    let slh = pki(&dir, "SLH-DSA-SHAKE-128f,SLH-DSA-SHAKE-128f");
    let out = Command::new(binary("rustls"))
        .arg("serve")
        .arg("--pki")
        .arg(&slh)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot sign with this key"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // zstd certificate compression: not in rustls, refused by name.
    let out = Command::new(binary("rustls"))
        .args(["serve", "--cert-compression", "zstd", "--pki"])
        .arg(&slh)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("allowed: none, zlib, brotli"),
        "{err}"
    );
    // What rustls lacks by engine feature (QUIC, seeded random bytes: aws-lc draws its own)
    // is refused as the cross-stack suite checks for every stack
    // (`every_stack_refuses_each_feature_it_lacks_in_one_line`).
    // Against a server whose leaf's scheme it lacks: the cross-stack suite's, for every
    // client (`a_client_without_the_leafs_scheme_is_refused_and_both_sides_record_why`).
}
