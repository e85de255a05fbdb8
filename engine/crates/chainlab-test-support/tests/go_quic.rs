//! QUIC on the Go stack (`chainlab-go --transport quic`: quic-go v0.65.0 on crypto/tls):
//! with itself and with the OpenSSL engines' QUIC both ways, the checks the OpenSSL engine's
//! QUIC passes (tests/quic.rs there): per connection each side's UDP payload bytes and
//! datagrams are the other's, the chain observed is what `pki` wrote, resumption, client
//! certificates (accepted and refused), two chains, failures by category, and the
//! generator's load over QUIC. Every line read is held to the record contract.

use std::process::Command;

use chainlab_test_support::stacks::{
    self as common, binary, pki, pki_with, Server, REFUSED_CLIENT,
};
use chainlab_test_support::{paired, TempDir};
use serde_json::Value;

const GO: &str = "go";
const MLDSA: &str = "ML-DSA-65,ML-DSA-65";
const HYBRID: &str = "X25519MLKEM768";
const QUIC: [&str; 2] = ["--transport", "quic"];

fn quic_server(stack: &str, pki: &std::path::Path, groups: &str, extra: &[&str]) -> Server {
    let srv = Server::start(stack, pki, groups, &[&QUIC[..], extra].concat());
    assert_eq!(srv.ready["transport"], "quic", "{}", srv.ready);
    srv
}

/// Three QUIC handshakes of `stack`'s client, trusting `ca`, with `extra` flags.
fn quic_handshakes(stack: &str, srv: &Server, ca: &std::path::Path, extra: &[&str]) -> Vec<Value> {
    let ca = ca.to_str().expect("a UTF-8 path");
    let args = [
        &QUIC[..],
        &["--ca", ca, "--groups", HYBRID, "--count", "3"],
        extra,
    ]
    .concat();
    common::client(stack, srv, &args)
}

/// The server's records in the order of the client's, paired by conn_id (quic-go ends a
/// connection on its own goroutine, so the server may record two in either order).
fn in_client_order(clients: &[Value], servers: &[Value]) -> Vec<Value> {
    assert_eq!(clients.len(), servers.len(), "{clients:?}\n{servers:?}");
    clients.iter().map(|c| paired(c, servers).clone()).collect()
}

fn u64_of(r: &Value, field: &str) -> u64 {
    r[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {r}"))
}

/// One connection seen from both ends: the same id, and per connection what one side sent
/// the other received (UDP payload bytes and datagrams; the client waits for HANDSHAKE_DONE
/// before closing and the server sends nothing after the client's CONNECTION_CLOSE). Over
/// the handshake the client's flight is within what the server had read at its completion.
fn same_quic_connection(label: &str, c: &Value, s: &Value) {
    assert_eq!(c["outcome"], "ok", "{label}: {c}");
    assert_eq!(s["outcome"], "ok", "{label}: {s}");
    for r in [c, s] {
        assert_eq!(r["transport"], "quic", "{label}: {r}");
    }
    assert!(c["conn_id"].is_string(), "{label}: {c}");
    assert_eq!(c["conn_id"], s["conn_id"], "{label}: one connection");
    for (mine, theirs) in [
        ("conn_bytes_written", "conn_bytes_read"),
        ("conn_bytes_read", "conn_bytes_written"),
        ("conn_datagrams_written", "conn_datagrams_read"),
        ("conn_datagrams_read", "conn_datagrams_written"),
    ] {
        assert_eq!(
            u64_of(c, mine),
            u64_of(s, theirs),
            "{label}: {mine}\n{c}\n{s}"
        );
    }
    assert!(
        u64_of(c, "bytes_written") <= u64_of(s, "bytes_read"),
        "{label}"
    );
    assert!(
        u64_of(c, "conn_bytes_read") >= u64_of(c, "bytes_read"),
        "{label}"
    );
    assert!(u64_of(c, "flight_datagrams") >= 1, "{label}: {c}");
    assert_eq!(s["peer_close_notify"], true, "{label}: {s}");
    assert!(
        c["peer_close_notify"].is_null(),
        "{label}: QUIC has no close_notify"
    );
}

/// The Go server's CPU: every connection one at a time has it (the process's over a span
/// that ran alone), and its whole connection costs at least its handshake.
fn go_server_cpu(label: &str, servers: &[Value]) {
    for s in servers {
        assert!(u64_of(s, "cpu_ns") > 0, "{label}: {s}");
        assert!(
            u64_of(s, "conn_cpu_ns") >= u64_of(s, "cpu_ns"),
            "{label}: {s}"
        );
    }
}

#[test]
fn go_quic_handshakes_with_itself_and_openssl_both_ways() {
    let dir = TempDir::new("go-quic");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    for (server, client_stack) in [
        (GO, GO),
        (GO, "openssl-3.5"),
        ("openssl-3.5", GO),
        (GO, "openssl-4.0"),
        ("openssl-4.0", GO),
    ] {
        let label = format!("{client_stack} -> {server} over QUIC");
        let srv = quic_server(server, &pki, HYBRID, &[]);
        let srv_ready = srv.ready.clone();
        let clients = quic_handshakes(client_stack, &srv, &ca, &[]);
        let (servers, accounts) = srv.stop_with_accounts();
        let servers = in_client_order(&clients, &servers);
        assert_eq!(clients.len(), 3, "{label}");
        assert_eq!(servers.len(), 3, "{label}");
        for (c, s) in clients.iter().zip(&servers) {
            same_quic_connection(&label, c, s);
            for r in [c, s] {
                assert_eq!(r["group"], HYBRID, "{label}: {r}");
                assert_eq!(r["sigalg"], "mldsa65", "{label}: {r}");
                assert_eq!(r["resumed"], false, "{label}: {r}");
            }
            // Each client runs one connection at a time: its CPU is always its own. (The
            // OpenSSL server records null where the client's next connection arrived
            // before it had freed the last one: docs/engine-records.md, "Concurrency".)
            assert!(u64_of(c, "cpu_ns") > 0, "{label}: {c}");
            // The chain the client observed is the one the server's ready line announced.
            let observed = c["peer_chain"].as_array().expect("the observed chain");
            let served = &srv_ready["served_chain"];
            assert_eq!(
                observed.len() as u64,
                u64_of(served, "certificates"),
                "{label}"
            );
            let der: u64 = observed.iter().map(|x| u64_of(x, "der_bytes")).sum();
            assert_eq!(der, u64_of(served, "der_bytes"), "{label}");
            // An ML-DSA-65 chain does not fit the three datagrams the client's first
            // Initial buys (anti-amplification): the server waits for more.
            assert!(u64_of(s, "datagrams_written") > 3, "{label}: {s}");
        }
        if server == GO {
            go_server_cpu(&label, &servers);
            common::one_account(&label, &servers, &accounts);
        }
    }
}

#[test]
fn go_quic_resumes_with_its_own_and_openssls_tickets() {
    let dir = TempDir::new("go-quic-resume");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    for (server, client_stack) in [(GO, GO), (GO, "openssl-3.5"), ("openssl-3.5", GO)] {
        let label = format!("{client_stack} -> {server}");
        let srv = quic_server(server, &pki, HYBRID, &["--tickets", "1"]);
        let clients = quic_handshakes(client_stack, &srv, &ca, &["--resume"]);
        let servers = srv.stop();
        let servers = in_client_order(&clients, &servers);
        for (c, s) in clients.iter().zip(&servers) {
            same_quic_connection(&label, c, s);
        }
        for records in [&clients, &servers] {
            let resumed: Vec<_> = records.iter().map(|r| r["resumed"].clone()).collect();
            assert_eq!(resumed, [false, true, true], "{label}");
            assert!(records[1]["sigalg"].is_null(), "{label}: {}", records[1]);
        }
        assert!(
            u64_of(&clients[1], "bytes_read") < u64_of(&clients[0], "bytes_read"),
            "{label}: a resumed handshake carries no chain"
        );
    }
}

#[test]
fn go_quic_client_certificates_are_checked_and_refused() {
    let dir = TempDir::new("go-quic-mtls");
    let pki = pki(&dir, MLDSA);
    let client_pki = pki_with(&dir, "ML-DSA-44,ML-DSA-44", &["--purpose", "client"]);
    let other = pki_with(&dir, "ECDSA-P256,ECDSA-P256", &["--purpose", "client"]);
    let ca = pki.join("ca.pem");
    let cert = ["--cert-pki", client_pki.to_str().unwrap()];
    for (server, client_stack) in [(GO, GO), (GO, "openssl-3.5"), ("openssl-3.5", GO)] {
        let label = format!("{client_stack} -> {server}");
        let anchors = client_pki.join("ca.pem");
        let srv = quic_server(
            server,
            &pki,
            HYBRID,
            &["--client-ca", anchors.to_str().unwrap()],
        );
        let clients = quic_handshakes(client_stack, &srv, &ca, &cert);
        let servers = srv.stop();
        let servers = in_client_order(&clients, &servers);
        for (c, s) in clients.iter().zip(&servers) {
            same_quic_connection(&label, c, s);
            assert_eq!(s["peer_chain"][0]["key_alg"], "ML-DSA-44", "{label}: {s}");
        }
        let wrong = other.join("ca.pem");
        let srv = quic_server(
            server,
            &pki,
            HYBRID,
            &["--client-ca", wrong.to_str().unwrap()],
        );
        let clients = quic_handshakes(client_stack, &srv, &ca, &cert);
        let servers = srv.stop();
        let servers = in_client_order(&clients, &servers);
        assert_eq!(servers.len(), 3, "{label}");
        for r in clients.iter().chain(&servers) {
            assert_eq!(r["error_category"], "client_cert_rejected", "{label}: {r}");
        }
    }
}

#[test]
fn a_go_quic_server_sends_each_client_the_chain_its_schemes_ask_for() {
    let dir = TempDir::new("go-quic-dual");
    let ml = pki(&dir, MLDSA);
    let ec = pki(&dir, "ECDSA-P256,ECDSA-P256");
    let trust = dir.0.join("trust.pem");
    let both = [ml.join("ca.pem"), ec.join("ca.pem")].map(|p| std::fs::read(p).unwrap());
    std::fs::write(&trust, both.concat()).unwrap();
    let srv = quic_server(GO, &ml, HYBRID, &["--second-pki", ec.to_str().unwrap()]);
    let mut clients = quic_handshakes("openssl-3.5", &srv, &trust, &[]);
    clients.extend(quic_handshakes(
        "openssl-3.5",
        &srv,
        &trust,
        &["--sigalgs", "ecdsa_secp256r1_sha256:mldsa65"],
    ));
    let servers = srv.stop();
    let servers = in_client_order(&clients, &servers);
    for (c, s) in clients.iter().zip(&servers) {
        same_quic_connection("dual", c, s);
    }
    let got: Vec<_> = servers.iter().map(|s| s["chain_index"].clone()).collect();
    assert_eq!(got, [0, 0, 0, 1, 1, 1], "{servers:?}");
    assert_eq!(servers[3]["sigalg"], "ecdsa_secp256r1_sha256");
}

#[test]
fn go_quic_failures_are_recorded_by_category() {
    let dir = TempDir::new("go-quic-fail");
    let pki = pki(&dir, MLDSA);
    let other = pki_with(&dir, "ECDSA-P256,ECDSA-P256", &["--seed", "other"]);
    // A root the client does not trust: verify_failed, and the server reads the alert.
    for (server, client_stack) in [(GO, GO), ("openssl-3.5", GO), (GO, "openssl-3.5")] {
        let label = format!("{client_stack} -> {server}");
        let srv = quic_server(server, &pki, HYBRID, &[]);
        let clients = quic_handshakes(client_stack, &srv, &other.join("ca.pem"), &[]);
        let servers = srv.stop();
        let servers = in_client_order(&clients, &servers);
        assert_eq!(servers.len(), 3, "{label}");
        for (c, s) in clients.iter().zip(&servers) {
            assert_eq!(c["error_category"], "verify_failed", "{label}: {c}");
            assert_eq!(s["error_category"], "tls_alert", "{label}: {s}");
            assert_eq!(c["conn_id"], s["conn_id"], "{label}");
        }
    }
    // No group in common: the Go server says so, the client reads its alert.
    let srv = quic_server(GO, &pki, "MLKEM1024", &[]);
    let clients = quic_handshakes(GO, &srv, &pki.join("ca.pem"), &["--timeout-ms", "3000"]);
    let servers = srv.stop();
    let servers = in_client_order(&clients, &servers);
    for (c, s) in clients.iter().zip(&servers) {
        assert_eq!(c["error_category"], "no_shared_group", "{c}");
        assert_eq!(s["error_category"], "no_shared_group", "{s}");
    }
    // Nothing listening: the connected socket hears the ICMP port unreachable.
    let out = chainlab_test_support::run_bounded(
        Command::new(binary(GO))
            .args(REFUSED_CLIENT)
            .args(QUIC)
            .args(["--timeout-ms", "2000"]),
    );
    assert!(out.status.success());
    let records = chainlab_test_support::parse_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        records[0]["error_category"], "connect_refused",
        "{}",
        records[0]
    );
}

#[test]
fn go_loads_its_own_quic_server() {
    let (clients, servers) = common::load_own_server(GO, &QUIC, &QUIC);
    for (c, s) in clients.iter().zip(&servers) {
        same_quic_connection("load", c, s);
    }
}
