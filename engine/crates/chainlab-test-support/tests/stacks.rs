//! The cross-stack suite: real handshakes between every pair of TLS stacks' engines (OpenSSL
//! 3.5 and 4.0, BoringSSL, rustls, Go), each test run over `STACKS` in every role the
//! engines' `info` says they have. Each side's bytes are the other's, the chain observed is
//! what `pki` wrote, resumption, certificate compression, client certificates, two chains,
//! HelloRetryRequest, load under the event model, `primitives`. What every stack refuses
//! and records on failure is `stacks_refusals.rs`'s; what one stack alone does or refuses is
//! tested in its own crate (Go's in `go.rs` here). Hierarchies come from the OpenSSL 3.5
//! engine's `pki`.
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use chainlab_test_support::stacks::{
    self as common, compressions, handshakes, has, info, pairs, pki, pki_with, pq_groups,
    same_connections, Server, STACKS,
};
use chainlab_test_support::TempDir;
use serde_json::Value;

const MLDSA: &str = "ML-DSA-65,ML-DSA-65";
const HYBRID: &str = "X25519MLKEM768";

/// Stacks whose server writes one account for its whole process (Go's: its goroutines have
/// no thread of their own), in which the connections' CPU and the rest add up exactly.
const PROCESS_ACCOUNT: [&str; 1] = ["go"];
/// Stacks whose library chooses the key shares its client sends, whatever order it is given
/// the groups in (Go's crypto/tls since golang/go#69393): never asked again for a share.
const OWN_KEY_SHARES: [&str; 1] = ["go"];

/// A stack's handshakes with itself over each of its post-quantum groups (an ML-DSA-65
/// hierarchy): the ready line and every record name the stack, each is one connection from
/// both ends, over the group, signed with ML-DSA-65, a full handshake, the chain observed the
/// one `pki` wrote. A server that writes one account for its process accounts for every
/// connection.
#[test]
fn each_stack_handshakes_with_itself_over_each_of_its_post_quantum_groups() {
    let dir = TempDir::new("self");
    let pki = pki(&dir, MLDSA);
    let sent = std::fs::read_to_string(pki.join("chain-leaf+intermediates.pem")).unwrap();
    for stack in STACKS {
        let groups = pq_groups(stack);
        assert!(groups.len() >= 2, "{stack}: {groups:?}");
        for group in &groups {
            let label = format!("{stack} {group}");
            let srv = Server::start(stack, &pki, group, &[]);
            assert_eq!(srv.ready["stack"], stack);
            let clients = handshakes(stack, &srv, &pki.join("ca.pem"), group, &[]);
            let (servers, accounts) = srv.stop_with_accounts();
            same_connections(&label, &clients, &servers);
            if PROCESS_ACCOUNT.contains(&stack) {
                common::one_account(&label, &servers, &accounts);
            }
            for r in clients.iter().chain(&servers) {
                assert_eq!(r["stack"], stack, "{label}");
                assert_eq!(r["group"], group.as_str(), "{label}: {r}");
                assert_eq!(r["sigalg"], "mldsa65", "{label}: {r}");
                assert_eq!(r["resumed"], false, "{label}");
            }
            let observed = clients[0]["peer_chain"].as_array().expect("peer_chain");
            assert_eq!(observed.len(), sent.matches("BEGIN CERTIFICATE").count());
            assert_eq!(observed[0]["key_alg"], "ML-DSA-65", "{label}");
            assert_eq!(
                observed[0]["subject"], "O=chainlab, CN=chainlab leaf (ML-DSA-65)",
                "{label}"
            );
        }
    }
}

/// Each client that can read its connection's close after the next handshake
/// (`--defer-close`), against every server: the same connections from both ends, each closed
/// with both close_notify and the whole connection's bytes, as without it, and the records in
/// attempt order.
#[test]
fn a_client_that_reads_its_close_later_records_the_same_connections() {
    let dir = TempDir::new("deferred");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    let clients: Vec<_> = STACKS
        .into_iter()
        .filter(|s| has(s, "deferred_close"))
        .collect();
    assert!(clients.len() >= 4, "{clients:?}");
    for server in STACKS {
        for &client in &clients {
            let label = format!("{client} client, {server} server");
            let srv = Server::start(server, &pki, HYBRID, &[]);
            let deferred = handshakes(client, &srv, &ca, HYBRID, &["--defer-close"]);
            let at_once = handshakes(client, &srv, &ca, HYBRID, &[]);
            let (servers, _) = srv.stop_with_accounts();
            same_connections(&label, &[&deferred[..], &at_once[..]].concat(), &servers);
            let seqs: Vec<_> = deferred.iter().map(|r| r["seq"].as_u64()).collect();
            assert_eq!(seqs, [Some(0), Some(1), Some(2)], "{label}");
            for (d, a) in deferred.iter().zip(&at_once) {
                assert_eq!(d["conn_bytes_read"], a["conn_bytes_read"], "{label}");
                assert_eq!(d["conn_bytes_written"], a["conn_bytes_written"], "{label}");
            }
        }
    }
}

/// The same for a handshake the client fails (it trusts another CA: `verify_failed`, its
/// alert sent while the server's flight is still arriving): with `--defer-close` the rest of
/// that connection is read after the next attempt's timed span, and each record still counts
/// the whole connection, the bytes the server wrote, as without it.
#[test]
fn a_client_that_reads_a_failed_connection_later_counts_the_same_bytes() {
    let dir = TempDir::new("deferred-failed");
    let pki = pki(&dir, MLDSA);
    let other = pki_with(&dir, "ECDSA-P256,ECDSA-P256", &[]);
    let ca = other.join("ca.pem");
    let clients: Vec<_> = STACKS
        .into_iter()
        .filter(|s| has(s, "deferred_close"))
        .collect();
    for server in ["openssl-3.5", "rustls"] {
        for &client in &clients {
            let label = format!("{client} client, {server} server");
            let srv = Server::start(server, &pki, HYBRID, &[]);
            let deferred = handshakes(client, &srv, &ca, HYBRID, &["--defer-close"]);
            let at_once = handshakes(client, &srv, &ca, HYBRID, &[]);
            let servers = srv.stop();
            assert_eq!(servers.len(), 6, "{label}: {servers:?}");
            let seqs: Vec<_> = deferred.iter().map(|r| r["seq"].as_u64()).collect();
            assert_eq!(seqs, [Some(0), Some(1), Some(2)], "{label}");
            for (d, a) in deferred.iter().zip(&at_once) {
                assert_eq!(d["error_category"], "verify_failed", "{label}: {d}");
                assert_eq!(a["error_category"], "verify_failed", "{label}: {a}");
                assert_eq!(d["conn_bytes_read"], a["conn_bytes_read"], "{label}: {d}");
                assert_eq!(d["conn_bytes_written"], a["conn_bytes_written"], "{label}");
            }
            for c in deferred.iter().chain(&at_once) {
                let s = servers
                    .iter()
                    .find(|s| s["conn_id"] == c["conn_id"])
                    .unwrap_or_else(|| panic!("{label}: no server record for {c}"));
                assert_eq!(
                    c["conn_bytes_read"], s["conn_bytes_written"],
                    "{label}: {s}"
                );
            }
        }
    }
}

/// Every two stacks, each as server and as client of the other, over a hierarchy of an
/// ML-DSA-65 root, an ML-DSA-44 intermediate and an ECDSA-P256 leaf: each handshake takes
/// the hybrid group and the leaf's scheme, both sides record the same connections, and every
/// client observed the same two certificates, field by field.
#[test]
fn every_two_stacks_handshake_both_ways_and_observe_the_same_chain() {
    let dir = TempDir::new("chains");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-44,ECDSA-P256");
    let ca = pki.join("ca.pem");
    let mut chains = Vec::new();
    for (server, client) in pairs(|_| true).into_iter().filter(|(s, c)| s != c) {
        let srv = Server::start(server, &pki, HYBRID, &[]);
        let clients = handshakes(client, &srv, &ca, HYBRID, &[]);
        let servers = srv.stop();
        let label = format!("{client} -> {server}");
        same_connections(&label, &clients, &servers);
        for r in clients.iter().chain(&servers) {
            assert_eq!(r["group"], HYBRID, "{label}: {r}");
            assert_eq!(r["sigalg"], "ecdsa_secp256r1_sha256", "{label}: {r}");
        }
        chains.push((label, clients[0]["peer_chain"].clone()));
    }
    let (first, chain) = &chains[0];
    for (label, other) in &chains[1..] {
        assert_eq!(other, chain, "{label} against {first}");
    }
    assert_eq!(chain.as_array().map(Vec::len), Some(2));
    assert_eq!(chain[1]["key_alg"], "ML-DSA-44");
    assert_eq!(chain[1]["sig_alg"], "ML-DSA-65");
}

/// Every client resumes with every server's tickets over an ML-DSA-65 hierarchy: a full
/// handshake, then two resumed ones without a CertificateVerify or a chain, each
/// connection's bytes the other side's. A client with a resumption mix draws the stream
/// every engine draws: a ratio of 0 never offers the ticket.
#[test]
fn every_stack_resumes_with_every_stacks_tickets() {
    let dir = TempDir::new("resume");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    for (server, client) in pairs(|_| true) {
        let label = format!("{client} -> {server}");
        let srv = Server::start(server, &pki, HYBRID, &["--tickets", "1"]);
        let clients = handshakes(client, &srv, &ca, HYBRID, &["--resume"]);
        let servers = srv.stop();
        // The server's handshake span holds the ticket it sends after its flight, the
        // client's ends before reading it: the connections' bytes are each other's.
        for (c, s) in clients.iter().zip(&servers) {
            assert_eq!(c["outcome"], "ok", "{label}: {c}");
            assert_eq!(c["conn_id"], s["conn_id"], "{label}");
            assert_eq!(c["conn_bytes_read"], s["conn_bytes_written"], "{label}");
            assert_eq!(c["conn_bytes_written"], s["conn_bytes_read"], "{label}");
        }
        for records in [&clients, &servers] {
            let resumed: Vec<_> = records.iter().map(|r| r["resumed"].clone()).collect();
            assert_eq!(resumed, [false, true, true], "{label}");
            assert!(records[1]["sigalg"].is_null(), "{label}: {}", records[1]);
        }
        assert!(clients[1]["peer_chain"].is_null(), "{label}");
        assert!(
            clients[1]["bytes_read"].as_u64() < clients[0]["bytes_read"].as_u64(),
            "{label}: a resumed handshake carries no chain"
        );
    }
    for stack in STACKS.into_iter().filter(|s| has(s, "resumption_mix")) {
        let srv = Server::start(stack, &pki, HYBRID, &["--tickets", "1"]);
        let mix = ["--resume-ratio", "0", "--resume-seed", "7"];
        let clients = handshakes(stack, &srv, &ca, HYBRID, &mix);
        srv.stop();
        assert!(
            clients
                .iter()
                .all(|c| c["resumed"] == false && c["resume_offered"] == false),
            "{stack}: {clients:?}"
        );
    }
}

/// Every two stacks that compress certificates, each way and on itself, with each
/// compression both have: the client reads fewer bytes than without, observes the same
/// chain, and both sides count the same bytes; a server says in its ready line what its
/// compressed chain weighs.
#[test]
fn certificate_compression_works_across_stacks_and_shrinks_the_flight() {
    let dir = TempDir::new("compress");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65,ML-DSA-65");
    let ca = pki.join("ca.pem");
    let read = |server: &str, client: &str, comp: &str| -> (u64, Value) {
        let label = format!("{client} -> {server} {comp}");
        let srv = Server::start(server, &pki, HYBRID, &["--cert-compression", comp]);
        if let Some(setup) = srv.ready.get("cert_compression").filter(|_| comp != "none") {
            let (compressed, whole) = (&setup["compressed_bytes"], &setup["uncompressed_bytes"]);
            assert!(compressed.as_u64() < whole.as_u64(), "{label}: {setup}");
        }
        let clients = handshakes(client, &srv, &ca, HYBRID, &["--cert-compression", comp]);
        let servers = srv.stop();
        same_connections(&label, &clients, &servers);
        let bytes = clients[1]["bytes_read"].as_u64().unwrap();
        (bytes, clients[1]["peer_chain"].clone())
    };
    for (server, client) in pairs(|s| !compressions(s).is_empty()) {
        let (plain, chain) = read(server, client, "none");
        let theirs = compressions(client);
        for comp in compressions(server).iter().filter(|c| theirs.contains(c)) {
            let (compressed, same) = read(server, client, comp);
            let label = format!("{client} -> {server} {comp}");
            assert!(compressed < plain, "{label}: {compressed} vs {plain}");
            assert_eq!(same, chain, "{label}");
        }
    }
}

/// Client certificates between every two stacks that have them, each way and on itself,
/// with an ML-DSA-44 client hierarchy over an ML-DSA-65 server's: sent, checked and
/// recorded by the server; refused by a server that trusts another client CA, which both
/// sides record as `client_cert_rejected`.
#[test]
fn client_certificates_are_sent_checked_and_refused_across_stacks() {
    let dir = TempDir::new("mtls");
    let pki = pki(&dir, MLDSA);
    let client_pki = pki_with(&dir, "ML-DSA-44,ML-DSA-44", &["--purpose", "client"]);
    let other_ca = pki_with(&dir, "ECDSA-P256,ECDSA-P256", &["--purpose", "client"]);
    let ca = pki.join("ca.pem");
    let cert = ["--cert-pki", client_pki.to_str().expect("UTF-8 path")];
    for (server, client) in pairs(|s| has(s, "client_auth")) {
        let label = format!("{client} -> {server}");
        for (anchors, accepted) in [
            (client_pki.join("ca.pem"), true),
            (other_ca.join("ca.pem"), false),
        ] {
            let trusted = ["--client-ca", anchors.to_str().expect("UTF-8 path")];
            let srv = Server::start(server, &pki, HYBRID, &trusted);
            let clients = handshakes(client, &srv, &ca, HYBRID, &cert);
            let servers = srv.stop();
            if accepted {
                same_connections(&label, &clients, &servers);
                let key = &servers[0]["peer_chain"][0]["key_alg"];
                assert_eq!(key, "ML-DSA-44", "{label}");
            } else {
                for r in clients.iter().chain(&servers) {
                    assert_eq!(r["error_category"], "client_cert_rejected", "{label}: {r}");
                }
            }
        }
    }
}

/// A dual-chain server on every stack (an ML-DSA-65 chain, and an ECDSA P-256 one through
/// `--second-pki`) sends each client the chain its signature schemes ask for: three
/// post-quantum handshakes from OpenSSL 3.5 get the ML-DSA chain (`chain_index` 0), then
/// three from a client offering ECDSA P-256 first (the stack itself where it can choose its
/// schemes, else rustls) the ECDSA one (1), each signed with its chain's leaf.
#[test]
fn a_dual_chain_server_sends_each_client_the_chain_its_schemes_ask_for() {
    let dir = TempDir::new("dual");
    let ml = pki(&dir, MLDSA);
    let ec = pki(&dir, "ECDSA-P256,ECDSA-P256");
    let trust = dir.0.join("trust.pem");
    let both = [ml.join("ca.pem"), ec.join("ca.pem")].map(|p| std::fs::read(p).unwrap());
    std::fs::write(&trust, both.concat()).unwrap();
    let classical_first = ["--sigalgs", "ecdsa_secp256r1_sha256:mldsa65"];
    for server in STACKS {
        let classical = if has(server, "client_sigalgs") {
            server
        } else {
            "rustls"
        };
        let label = format!("{classical} -> dual {server}");
        let srv = Server::start(server, &ml, HYBRID, &["--second-pki", ec.to_str().unwrap()]);
        let mut clients = handshakes("openssl-3.5", &srv, &trust, HYBRID, &[]);
        clients.extend(handshakes(
            classical,
            &srv,
            &trust,
            HYBRID,
            &classical_first,
        ));
        let servers = srv.stop();
        same_connections(&label, &clients, &servers);
        let got: Vec<_> = servers.iter().map(|s| s["chain_index"].clone()).collect();
        assert_eq!(got, [0, 0, 0, 1, 1, 1], "{label}: {servers:?}");
        assert_eq!(clients[3]["sigalg"], "ecdsa_secp256r1_sha256", "{label}");
        assert_eq!(servers[3]["sigalg"], "ecdsa_secp256r1_sha256", "{label}");
        assert_eq!(clients[0]["sigalg"], "mldsa65", "{label}");
    }
}

/// A client whose first group the server lacks is asked again (HelloRetryRequest), between
/// every two stacks and on each: P-256's key share is useless to a server of X25519 alone,
/// so the client's first flight holds two ClientHellos and outweighs the direct one's. A
/// client whose library picks its shares itself sends the same flight either way.
#[test]
fn a_client_whose_first_group_the_server_lacks_gets_a_hello_retry_request() {
    let dir = TempDir::new("hrr");
    let pki = pki(&dir, MLDSA);
    let ca = pki.join("ca.pem");
    let written = |server: &str, client: &str, groups: &str| -> u64 {
        let label = format!("{client} -> {server} {groups}");
        let srv = Server::start(server, &pki, "X25519", &[]);
        let clients = handshakes(client, &srv, &ca, groups, &[]);
        let servers = srv.stop();
        same_connections(&label, &clients, &servers);
        for r in [&clients[0], &servers[0]] {
            assert_eq!(r["group"], "x25519", "{label}: {r}");
        }
        clients[0]["bytes_written"].as_u64().unwrap()
    };
    for (server, client) in pairs(|_| true) {
        let direct = written(server, client, "X25519:P-256");
        let retried = written(server, client, "P-256:X25519");
        let label = format!("{client} -> {server}: {retried} vs {direct}");
        if OWN_KEY_SHARES.contains(&client) {
            assert_eq!(retried, direct, "{label}: the same shares either way");
        } else {
            assert!(retried > direct, "{label}");
        }
    }
}

/// Each stack's generator (`load`) offers a schedule to its own server's event loops
/// (`--server-model event --workers 2`) over an ML-DSA-65 hierarchy: every attempt is
/// started and completes, the server records each connection under the event model with
/// its scheme, and both sides count the same bytes.
#[test]
fn each_stack_loads_its_own_event_driven_server() {
    for stack in STACKS {
        let (clients, servers) = common::load_own_server(stack, &["--workers", "2"], &[]);
        for (c, s) in clients.iter().zip(&servers) {
            assert_eq!(c["outcome"], "ok", "{stack}: {c}");
            assert_eq!(c["stack"], stack);
            assert_eq!(s["server_model"], "event", "{stack}");
            assert_eq!(s["sigalg"], "mldsa65", "{stack}: {s}");
            assert_eq!(c["conn_bytes_written"], s["conn_bytes_read"], "{stack}");
            assert_eq!(c["conn_bytes_read"], s["conn_bytes_written"], "{stack}");
        }
    }
}

/// `primitives` on every stack that lists its algorithms in `info` (the OpenSSL engine's
/// are tested in its crate): each signature algorithm its own library signs, signed and
/// verified over the CertificateVerify content, and each group's key-exchange operations,
/// one record per operation (a warm-up, then the count).
#[test]
fn each_stack_times_every_algorithm_and_group_its_info_lists() {
    for stack in STACKS {
        let Some(algorithms) = info(stack)["signature_algorithms"].as_array() else {
            continue;
        };
        let own = algorithms.iter().filter(|a| {
            let implementation = a["implementation"].as_str().unwrap();
            !implementation.contains("liboqs") && !implementation.contains("composite")
        });
        for alg in own.map(|a| a["algorithm"].as_str().unwrap()) {
            for op in ["sign", "verify"] {
                let args = ["--subject", alg, "--op", op, "--count", "2"];
                let (code, records, err) = common::primitives(stack, &args);
                let label = format!("{stack} {alg} {op}");
                assert_eq!(code, Some(0), "{label}: {err}");
                assert_eq!(records.len(), 3, "{label}: one warm-up and two timed");
                for (i, r) in records.iter().enumerate() {
                    assert_eq!(r["event"], "primitive", "{label}");
                    assert!(r["subject"] == alg && r["op"] == op, "{label}: {r}");
                    assert_eq!(r["message_bytes"], 130, "the CertificateVerify content");
                    assert!(
                        r["warmup"] == (i == 0) && r["seq"] == i as u64,
                        "{label}: {r}"
                    );
                    let ns = |k: &str| r[k].as_u64().unwrap_or(0);
                    assert!(ns("cpu_ns") > 0 && ns("wall_ns") > 0, "{label}: {r}");
                }
            }
        }
        let groups: Vec<_> = info(stack)["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .map(|g| g.as_str().unwrap())
            .map(|g| (g, g.contains("MLKEM")))
            .collect();
        common::times_key_exchange(stack, &groups);
    }
}
