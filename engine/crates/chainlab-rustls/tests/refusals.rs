//! What the rustls engine cannot do, refused in one line before anything runs or recorded
//! by category when it meets a peer it cannot serve. What it does with every other stack is
//! the cross-stack suite's (chainlab-test-support `tests/stacks.rs`).
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use std::process::Command;

use chainlab_test_support::stacks::{binary, handshakes, pki, Server, TempDir};

#[test]
fn what_a_stack_cannot_do_fails_in_one_line_or_as_a_recorded_category() {
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
    // An OpenSSL server with an SLH-DSA leaf: the rustls client offers no SLH-DSA scheme.
    // The server names the cause; the client reads a handshake_failure alert in reply to its
    // ClientHello, which the wire leaves ambiguous, and (with every scheme offered) records
    // it as the OpenSSL engine's client does.
    let srv = Server::start("openssl-3.5", &slh, "X25519MLKEM768", &[]);
    let clients = handshakes("rustls", &srv, &slh.join("ca.pem"), "X25519MLKEM768", &[]);
    let servers = srv.stop();
    assert_eq!(clients[0]["outcome"], "failed");
    assert_eq!(
        clients[0]["error_category"], "no_shared_group",
        "{}",
        clients[0]
    );
    assert_eq!(
        servers[0]["error_category"], "no_shared_sigalg",
        "{}",
        servers[0]
    );
}
