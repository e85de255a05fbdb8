//! Real handshakes on each TLS stack and across stacks: the OpenSSL engine linked against
//! OpenSSL 3.5 (`target/release/chainlab-engine`) and 4.0
//! (`target/openssl-4.0/release/chainlab-engine`, built by `make engine`), and this crate's
//! rustls engine. Hierarchies come from the 3.5 engine's `pki` alone.
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use chainlab_test_support::stacks as common;

use std::path::Path;
use std::process::Command;

use common::{binary, client, pki, Server, TempDir};
use serde_json::Value;

/// `count` handshakes of a `handshake` client against `server`; its records.
fn handshakes(stack: &str, server: &Server, pki: &Path, groups: &str, count: u32) -> Vec<Value> {
    handshakes_with(stack, server, pki, groups, count, &[])
}

/// `handshakes` with extra client flags.
fn handshakes_with(
    stack: &str,
    server: &Server,
    pki: &Path,
    groups: &str,
    count: u32,
    extra: &[&str],
) -> Vec<Value> {
    let ca = pki.join("ca.pem");
    let count = count.to_string();
    let mut args = vec![
        "--ca",
        ca.to_str().unwrap(),
        "--groups",
        groups,
        "--count",
        &count,
    ];
    args.extend_from_slice(extra);
    client(stack, server, &args)
}

/// One server and client pair over an ML-DSA-65 leaf: every handshake completes with the
/// group and scheme asked for, both records name their stacks and the same connection, and
/// each side's bytes are the other's.
fn pair(server_stack: &str, client_stack: &str, chain: &str, groups: &str) -> Vec<Value> {
    let dir = TempDir::new("pair");
    let pki = pki(&dir, chain);
    let server = Server::start(server_stack, &pki, groups, &[]);
    let clients = handshakes(client_stack, &server, &pki, groups, 3);
    let servers = server.stop();
    assert_eq!(clients.len(), 3);
    assert_eq!(servers.len(), 3);
    let label = format!("{client_stack} -> {server_stack}, {groups}");
    common::same_connections(&label, &clients, &servers);
    for (c, s) in clients.iter().zip(&servers) {
        assert_eq!(c["stack"], client_stack);
        assert_eq!(s["stack"], server_stack);
        for r in [c, s] {
            assert_eq!(r["group"], groups, "{label}: group");
            assert_eq!(r["sigalg"], "mldsa65", "{label}: scheme");
        }
        // The chain as observed: what `pki` wrote, leaf first.
        let observed = c["peer_chain"].as_array().expect("peer_chain");
        let sent = std::fs::read_to_string(pki.join("chain-leaf+intermediates.pem")).unwrap();
        assert_eq!(observed.len(), sent.matches("BEGIN CERTIFICATE").count());
        assert_eq!(observed[0]["key_alg"], "ML-DSA-65");
        assert_eq!(observed[0]["sig_alg"], "ML-DSA-65");
        assert_eq!(
            observed[0]["subject"],
            "O=chainlab, CN=chainlab leaf (ML-DSA-65)"
        );
    }
    clients
}

const MLDSA: &str = "ML-DSA-65,ML-DSA-65";

#[test]
fn each_stack_handshakes_with_itself_over_hybrid_and_pure_ml_kem() {
    for stack in ["openssl-3.5", "openssl-4.0", "rustls"] {
        for groups in ["X25519MLKEM768", "MLKEM768"] {
            pair(stack, stack, MLDSA, groups);
        }
    }
}

#[test]
fn openssl_and_rustls_handshake_both_ways_and_observe_the_same_chain() {
    let dir = TempDir::new("chains");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-44,ECDSA-P256");
    let mut chains = Vec::new();
    for (server, client) in [
        ("rustls", "openssl-3.5"),
        ("openssl-3.5", "rustls"),
        ("rustls", "openssl-4.0"),
        ("openssl-4.0", "rustls"),
        ("openssl-3.5", "openssl-3.5"),
    ] {
        let srv = Server::start(server, &pki, "X25519MLKEM768", &[]);
        let clients = handshakes(client, &srv, &pki, "X25519MLKEM768", 2);
        let servers = srv.stop();
        for (c, s) in clients.iter().zip(&servers) {
            assert_eq!(c["outcome"], "ok", "{client} -> {server}: {c}");
            assert_eq!(c["conn_id"], s["conn_id"]);
            assert_eq!(c["bytes_read"], s["bytes_written"]);
            assert_eq!(c["sigalg"], "ecdsa_secp256r1_sha256");
        }
        chains.push(clients[0]["peer_chain"].clone());
    }
    // Every stack, as client, observed the same certificates field by field.
    for chain in &chains[1..] {
        assert_eq!(chain, &chains[0]);
    }
    assert_eq!(chains[0][1]["key_alg"], "ML-DSA-44");
    assert_eq!(chains[0][1]["sig_alg"], "ML-DSA-65");
}

#[test]
fn rustls_resumes_with_openssl_tickets_and_its_own() {
    let dir = TempDir::new("resume");
    let pki = pki(&dir, MLDSA);
    for server in ["openssl-3.5", "rustls"] {
        let srv = Server::start(server, &pki, "X25519MLKEM768", &["--tickets", "1"]);
        let records = handshakes_with("rustls", &srv, &pki, "X25519MLKEM768", 3, &["--resume"]);
        let resumed: Vec<_> = records.iter().map(|r| r["resumed"].clone()).collect();
        assert_eq!(
            resumed,
            [false, true, true],
            "rustls client against {server}"
        );
        // A resumed handshake has no CertificateVerify and no chain.
        assert!(records[1]["sigalg"].is_null() && records[1]["peer_chain"].is_null());
        let servers = srv.stop();
        assert_eq!(servers[2]["resumed"], true, "{server}");
    }
}

#[test]
fn certificate_compression_works_across_stacks_and_shrinks_the_flight() {
    let dir = TempDir::new("compress");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65,ML-DSA-65");
    let read = |server: &str, client: &str, comp: &str| -> (u64, Value) {
        let srv = Server::start(
            server,
            &pki,
            "X25519MLKEM768",
            &["--cert-compression", comp],
        );
        let extra = ["--cert-compression", comp];
        let records = handshakes_with(client, &srv, &pki, "X25519MLKEM768", 2, &extra);
        let servers = srv.stop();
        for (c, s) in records.iter().zip(&servers) {
            assert_eq!(c["outcome"], "ok", "{client} -> {server} {comp}: {c}");
            assert_eq!(
                c["bytes_read"], s["bytes_written"],
                "{client} -> {server} {comp}"
            );
        }
        // The chain is the same one, however it travelled.
        (
            records[1]["bytes_read"].as_u64().unwrap(),
            records[1]["peer_chain"].clone(),
        )
    };
    for (server, client) in [
        ("rustls", "openssl-3.5"),
        ("openssl-3.5", "rustls"),
        ("rustls", "rustls"),
    ] {
        let (plain, chain) = read(server, client, "none");
        for comp in ["zlib", "brotli"] {
            let (compressed, same) = read(server, client, comp);
            assert!(
                compressed < plain,
                "{client} -> {server} {comp}: {compressed} vs {plain}"
            );
            assert_eq!(same, chain);
        }
    }
    // zstd: not in rustls, refused by name.
    let out = Command::new(binary("rustls"))
        .args(["serve", "--cert-compression", "zstd", "--pki"])
        .arg(&pki)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("allowed: none, zlib, brotli"),
        "{err}"
    );
}

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
    // Refused by name, before anything runs: QUIC, and seeded random bytes (aws-lc draws
    // its own) on both sides.
    let client = [
        "handshake",
        "--connect",
        "127.0.0.1:9",
        "--count",
        "1",
        "--no-verify",
    ];
    let server = ["serve", "--pki", slh.to_str().unwrap()];
    for (args, extra, capability) in [
        (&client[..], ["--transport", "quic"], "quic"),
        (&client[..], ["--random-seed", "1"], "seeded_random"),
        (&server[..], ["--random-seed", "1"], "seeded_random"),
    ] {
        let out = Command::new(binary("rustls"))
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2)
                && err.contains(&format!("missing capability: {capability}")),
            "{args:?} {extra:?}: {err}"
        );
    }
    // An OpenSSL server with an SLH-DSA leaf: the rustls client offers no SLH-DSA scheme.
    // The server names the cause; the client reads a handshake_failure alert in reply to its
    // ClientHello, which the wire leaves ambiguous, and (with every scheme offered) records
    // it as the OpenSSL engine's client does.
    let srv = Server::start("openssl-3.5", &slh, "X25519MLKEM768", &[]);
    let clients = handshakes("rustls", &srv, &slh, "X25519MLKEM768", 1);
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

/// Under load on rustls alone: its generator (`load`) offers a schedule to its server's
/// event loops (`chainlab_test_support::stacks::loads_its_own_event_driven_server`).
#[test]
fn rustls_loads_its_own_event_driven_server() {
    common::loads_its_own_event_driven_server("rustls");
}
