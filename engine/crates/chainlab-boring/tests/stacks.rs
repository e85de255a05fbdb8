//! Real handshakes on the BoringSSL stack, with itself and with every other stack both
//! ways: the tests every engine passes (each side's bytes are the other's, the chain
//! observed is what `pki` wrote, resumption, compression, client certificates, two chains,
//! HelloRetryRequest, load under the event model), and what it cannot do refused in one
//! line. Hierarchies come from the OpenSSL 3.5 engine's `pki` alone.
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use chainlab_test_support::stacks as common;

use std::process::Command;

use common::{binary, handshakes, pki, same_connections, Server, TempDir};
use serde_json::Value;

const BORING: &str = "boringssl";
const OTHERS: [&str; 3] = ["openssl-3.5", "openssl-4.0", "rustls"];
const MLDSA: &str = "ML-DSA-65,ML-DSA-65";
const HYBRID: &str = "X25519MLKEM768";

#[test]
fn boringssl_handshakes_with_itself_over_hybrid_and_pure_ml_kem() {
    common::handshakes_with_itself(BORING, &[HYBRID, "MLKEM1024"], |_, _, _, _| {});
}

#[test]
fn boringssl_and_every_stack_handshake_both_ways_and_observe_the_same_chain() {
    common::same_chain_both_ways(BORING, &OTHERS);
}

#[test]
fn boringssl_resumes_with_every_stacks_tickets_and_serves_its_own() {
    common::resumes_across(&[
        (BORING, BORING),
        ("openssl-3.5", BORING),
        ("rustls", BORING),
        (BORING, "openssl-3.5"),
        (BORING, "rustls"),
    ]);
    // A resumption mix draws the same stream as the other engines: a ratio of 0 never
    // offers the ticket.
    let dir = TempDir::new("resume-mix");
    let pki = pki(&dir, MLDSA);
    let srv = Server::start(BORING, &pki, HYBRID, &["--tickets", "1"]);
    let mix = ["--resume-ratio", "0", "--resume-seed", "7"];
    let clients = handshakes(BORING, &srv, &pki.join("ca.pem"), HYBRID, &mix);
    srv.stop();
    assert!(clients
        .iter()
        .all(|c| c["resumed"] == false && c["resume_offered"] == false));
}

#[test]
fn certificate_compression_works_across_stacks_and_shrinks_the_flight() {
    let dir = TempDir::new("compress");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65,ML-DSA-65");
    let ca = pki.join("ca.pem");
    let read = |server: &str, client_stack: &str, comp: &str| -> (u64, Value) {
        let srv = Server::start(server, &pki, HYBRID, &["--cert-compression", comp]);
        if server == BORING && comp != "none" {
            let setup = &srv.ready["cert_compression"];
            assert!(setup["compressed_bytes"].as_u64() < setup["uncompressed_bytes"].as_u64());
        }
        let clients = handshakes(
            client_stack,
            &srv,
            &ca,
            HYBRID,
            &["--cert-compression", comp],
        );
        let servers = srv.stop();
        same_connections(
            &format!("{client_stack} -> {server} {comp}"),
            &clients,
            &servers,
        );
        (
            clients[1]["bytes_read"].as_u64().unwrap(),
            clients[1]["peer_chain"].clone(),
        )
    };
    for (server, client_stack) in [
        (BORING, BORING),
        (BORING, "openssl-3.5"),
        ("openssl-3.5", BORING),
        (BORING, "rustls"),
        ("rustls", BORING),
    ] {
        let (plain, chain) = read(server, client_stack, "none");
        for comp in ["zlib", "brotli"] {
            let (compressed, same) = read(server, client_stack, comp);
            assert!(
                compressed < plain,
                "{client_stack} -> {server} {comp}: {compressed} vs {plain}"
            );
            assert_eq!(same, chain, "{client_stack} -> {server} {comp}");
        }
    }
}

#[test]
fn client_certificates_are_sent_checked_and_refused_across_stacks() {
    common::client_certificates_across(BORING);
}

#[test]
fn a_dual_chain_server_sends_each_client_the_chain_its_schemes_ask_for() {
    common::dual_chain_by_schemes(BORING, BORING, "ecdsa_secp256r1_sha256");
}

#[test]
fn a_client_whose_first_group_the_server_lacks_gets_a_hello_retry_request() {
    let dir = TempDir::new("hrr");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    let written = |server: &str, client_stack: &str, groups: &str| -> u64 {
        let srv = Server::start(server, &pki, "X25519", &[]);
        let clients = handshakes(client_stack, &srv, &ca, groups, &[]);
        let servers = srv.stop();
        same_connections(
            &format!("{client_stack} -> {server} {groups}"),
            &clients,
            &servers,
        );
        assert_eq!(clients[0]["group"], "x25519");
        clients[0]["bytes_written"].as_u64().unwrap()
    };
    for (server, client_stack) in [
        (BORING, BORING),
        (BORING, "openssl-3.5"),
        ("openssl-3.5", BORING),
    ] {
        // P-256 first: its key share is useless to a server of X25519 alone, which asks
        // again; the client's first flight then holds two ClientHellos.
        let direct = written(server, client_stack, "X25519:P-256");
        let retried = written(server, client_stack, "P-256:X25519");
        assert!(
            retried > direct,
            "{client_stack} -> {server}: {retried} vs {direct}"
        );
    }
}

/// Under load on BoringSSL alone (`chainlab_test_support::stacks::
/// loads_its_own_event_driven_server`).
#[test]
fn boringssl_loads_its_own_event_driven_server() {
    common::loads_its_own_event_driven_server(BORING);
}

#[test]
fn what_boringssl_cannot_do_fails_in_one_line_or_as_a_recorded_category() {
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
    // Refused by name before anything runs.
    let client = [
        "handshake",
        "--connect",
        "127.0.0.1:9",
        "--count",
        "1",
        "--no-verify",
    ];
    let server = ["serve", "--pki", slh.to_str().unwrap()];
    // The MTC relying party's options BoringSSL's verifier has no counterpart for.
    let mtc_client = [
        "handshake",
        "--connect",
        "127.0.0.1:9",
        "--count",
        "1",
        "--mtc-trust",
        "t.json",
    ];
    for (args, extra, capability) in [
        (&client[..], &["--transport", "quic"][..], "quic"),
        (&client[..], &["--random-seed", "1"][..], "seeded_random"),
        (&server[..], &["--random-seed", "1"][..], "seeded_random"),
        (
            &server[..],
            &["--chain", "mtc-landmark", "--mtc-retry-standalone"][..],
            "mtc_retry",
        ),
        (
            &mtc_client[..],
            &["--mtc-cosigners-required", "1"][..],
            "mtc_cosigners",
        ),
        (&mtc_client[..], &["--mtc-retry"][..], "mtc_retry"),
        (
            &server[..],
            &["--prefer-server-groups"][..],
            "server_group_preference",
        ),
        (
            &client[..],
            &["--signature-impl", "liboqs"][..],
            "signature_impl_liboqs",
        ),
    ] {
        let out = Command::new(binary(BORING))
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2)
                && err.contains(&format!("missing capability: {capability}"))
                && err.trim().lines().count() == 1,
            "{args:?} {extra:?}: {err}"
        );
    }
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
    // An OpenSSL server with an SLH-DSA leaf: the BoringSSL client offers no SLH-DSA
    // scheme; the server names the cause, the client reads handshake_failure in reply to
    // its ClientHello and (with every scheme offered) records no shared group, as the
    // other engines' clients do.
    let srv = Server::start("openssl-3.5", &slh, HYBRID, &[]);
    let clients = handshakes(BORING, &srv, &slh.join("ca.pem"), HYBRID, &[]);
    let servers = srv.stop();
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
    // A chain signed by a root the client does not trust: verify_failed, and the server
    // reads the client's alert.
    let other = pki(&dir, "ECDSA-P256,ECDSA-P256");
    let ml = pki(&dir, MLDSA);
    let srv = Server::start("openssl-3.5", &ml, HYBRID, &[]);
    let clients = handshakes(BORING, &srv, &other.join("ca.pem"), HYBRID, &[]);
    let servers = srv.stop();
    assert_eq!(
        clients[0]["error_category"], "verify_failed",
        "{}",
        clients[0]
    );
    assert_eq!(servers[0]["error_category"], "tls_alert", "{}", servers[0]);
}
