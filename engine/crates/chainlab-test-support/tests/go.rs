//! What the Go stack (`chainlab-go`, engine/go: Go's crypto/tls, not a cargo crate, so its
//! own tests live here with the support they share) does alone: its CPU figures exact or
//! absent, what it cannot do refused in one line, a stopping server's records. What it does
//! with every other stack is the cross-stack suite's (`tests/stacks.rs`). Hierarchies come
//! from the OpenSSL 3.5 engine's `pki`.

use std::process::Command;

use chainlab_test_support::stacks::{binary, handshakes, pki, Server, REFUSED_CLIENT};
use chainlab_test_support::TempDir;

const GO: &str = "go";
const MLDSA: &str = "ML-DSA-65,ML-DSA-65";
const HYBRID: &str = "X25519MLKEM768";

/// CPU is the process's over a connection that ran alone, and absent (null) for one that
/// overlapped another: under load most do, one at a time none does.
#[test]
fn go_records_cpu_only_for_connections_that_ran_alone() {
    let dir = TempDir::new("go-cpu");
    let pki = pki(&dir, MLDSA);
    let srv = Server::start(
        GO,
        &pki,
        HYBRID,
        &["--server-model", "event", "--workers", "1"],
    );
    let out = chainlab_test_support::run_bounded(
        Command::new(binary(GO))
            .args(["load", "--connect", &srv.addr, "--ca"])
            .arg(pki.join("ca.pem"))
            .args([
                "--rate",
                "400",
                "--duration-ms",
                "500",
                "--max-in-flight",
                "32",
            ]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clients = chainlab_test_support::parse_lines(&String::from_utf8(out.stdout).unwrap());
    let servers = srv.stop();
    let overlapped = servers
        .iter()
        .filter(|s| s["conn_cpu_ns"].is_null())
        .count();
    assert!(overlapped > 0, "400/s on one core: connections overlap");
    for s in &servers {
        // The handshake span is part of the connection's: alone over the whole connection
        // means alone over the handshake.
        assert!(s["conn_cpu_ns"].is_null() || s["cpu_ns"].is_u64(), "{s}");
        assert_eq!(s["cpu_ns"].is_null(), s["cpu_user_us"].is_null(), "{s}");
    }
    assert!(clients
        .iter()
        .any(|c| c["side"] == "client" && c["cpu_ns"].is_null()));
}

#[test]
fn what_go_cannot_do_fails_in_one_line() {
    let dir = TempDir::new("go-refuse");
    let slh = pki(&dir, "SLH-DSA-SHAKE-128f,SLH-DSA-SHAKE-128f");
    let ml = pki(&dir, MLDSA);
    let out = Command::new(binary(GO))
        .args(["serve", "--pki"])
        .arg(&slh)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Go cannot"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let client = REFUSED_CLIENT;
    // What Go lacks by engine feature is refused as the cross-stack suite checks for every
    // stack (`every_stack_refuses_each_feature_it_lacks_in_one_line`); here, what it lacks
    // by its library's own terms.
    let server = ["serve", "--pki", ml.to_str().unwrap()];
    for (args, extra, said) in [
        (
            &server[..],
            &["--transport", "quic", "--workers", "2"][..],
            "one UDP socket serves every connection",
        ),
        (
            &client[..],
            &["--population", "a=1/X25519/mldsa65"][..],
            "client_sigalgs",
        ),
        (
            &server[..],
            &["--cert-compression", "zlib"][..],
            "crypto/tls has no RFC 8879",
        ),
        (
            &server[..],
            &["--groups", "MLKEM768"][..],
            "crypto/tls has no group \"MLKEM768\"",
        ),
        (&server[..], &["--tickets", "2"][..], "allowed: 0, 1"),
        (
            &server[..],
            &["--bogus"][..],
            "unexpected argument '--bogus'",
        ),
    ] {
        let out = Command::new(binary(GO))
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && err.contains(said) && err.trim().lines().count() == 1,
            "{extra:?}: {:?} {err}",
            out.status.code()
        );
    }
}

/// SIGTERM: in-flight connections get the grace period, a stalled one is cut and recorded
/// as abandoned, and the server exits promptly with every record written.
#[test]
fn a_stopping_go_server_cuts_a_stalled_connection_and_records_it() {
    let dir = TempDir::new("go-sigterm");
    let pki = pki(&dir, MLDSA);
    let srv = Server::start(GO, &pki, HYBRID, &["--workers", "2"]);
    let clients = handshakes(GO, &srv, &pki.join("ca.pem"), HYBRID, &[]);
    // A connection that never sends its ClientHello, accepted before the signal.
    let stalled = std::net::TcpStream::connect(&srv.addr).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    let servers = srv.stop();
    drop(stalled);
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(
        servers.len(),
        clients.len() + 1,
        "one record per connection"
    );
    let cut: Vec<_> = servers
        .iter()
        .filter(|s| s["outcome"] == "failed")
        .collect();
    assert_eq!(cut.len(), 1, "{servers:?}");
    assert_eq!(cut[0]["error_category"], "io_error", "{}", cut[0]);
    assert!(cut[0]["error_detail"]
        .as_str()
        .unwrap()
        .contains("abandoned"));
}
