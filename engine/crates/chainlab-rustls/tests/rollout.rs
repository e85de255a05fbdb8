//! Staged rollout on every stack (the BoringSSL engine's too): a dual-chain server sends each client the chain its
//! signature schemes ask for and records which; a mixed client population draws its kind
//! per attempt and records it; a kind no chain can serve fails as `no_shared_sigalg` on the
//! server, and nothing is retried.

use chainlab_test_support::stacks as common;

use std::path::{Path, PathBuf};

use common::{client, pki, Server, TempDir};
use serde_json::Value;

const STACKS: [&str; 4] = ["openssl-3.5", "openssl-4.0", "rustls", "boringssl"];
const GROUPS: &str = "X25519MLKEM768:X25519";

/// An ECDSA P-256 and an ML-DSA-65 hierarchy, and a trust file holding both roots.
fn hierarchies(dir: &TempDir) -> (PathBuf, PathBuf, PathBuf) {
    let ec = pki(dir, "ECDSA-P256,ECDSA-P256");
    let ml = pki(dir, "ML-DSA-65,ML-DSA-65");
    let both = dir.0.join("both-roots.pem");
    let mut roots = std::fs::read(ec.join("ca.pem")).unwrap();
    roots.extend(std::fs::read(ml.join("ca.pem")).unwrap());
    std::fs::write(&both, roots).unwrap();
    (ec, ml, both)
}

fn dual(stack: &str, ec: &Path, ml: &Path) -> Server {
    Server::start(stack, ec, GROUPS, &["--second-pki", ml.to_str().unwrap()])
}

#[test]
fn a_dual_chain_server_sends_each_client_the_chain_it_asks_for() {
    let dir = TempDir::new("dual");
    let (ec, ml, _) = hierarchies(&dir);
    for server_stack in STACKS {
        for client_stack in STACKS {
            let label = format!("{client_stack} -> {server_stack}");
            let server = dual(server_stack, &ec, &ml);
            let classical = client(
                client_stack,
                &server,
                &[
                    "--ca",
                    ec.join("ca.pem").to_str().unwrap(),
                    "--groups",
                    "X25519",
                    "--sigalgs",
                    "ecdsa_secp256r1_sha256",
                    "--count",
                    "2",
                ],
            );
            let pq = client(
                client_stack,
                &server,
                &[
                    "--ca",
                    ml.join("ca.pem").to_str().unwrap(),
                    "--groups",
                    "X25519MLKEM768",
                    "--sigalgs",
                    "mldsa65",
                    "--count",
                    "2",
                ],
            );
            let servers = server.stop();
            for (records, sigalg, index) in [
                (&classical, "ecdsa_secp256r1_sha256", 0),
                (&pq, "mldsa65", 1),
            ] {
                for c in records.iter() {
                    assert_eq!(c["outcome"], "ok", "{label}: {c}");
                    assert_eq!(c["sigalg"], sigalg, "{label}");
                    let s = servers
                        .iter()
                        .find(|s| s["conn_id"] == c["conn_id"])
                        .unwrap();
                    assert_eq!(s["chain_index"], index, "{label}: {s}");
                    assert_eq!(c["bytes_read"], s["bytes_written"], "{label}");
                }
            }
        }
    }
}

/// A client offering both leaves' schemes gets, by the client's order (the default), the
/// chain of the first it offers, and by the server's (`--chain-order server`) the
/// post-quantum chain, on every pair of stacks: each engine's client offers `--sigalgs` in
/// its order, and every server stack chooses by `chainlab_record::dual::choose`.
#[test]
fn a_client_offering_both_schemes_gets_the_chain_its_order_picks() {
    let dir = TempDir::new("dual-order");
    let (ec, ml, both) = hierarchies(&dir);
    for (chain_order, server_order) in [("client", false), ("server", true)] {
        for server_stack in STACKS {
            let flags = [
                "--second-pki",
                ml.to_str().unwrap(),
                "--chain-order",
                chain_order,
            ];
            let server = Server::start(server_stack, &ec, GROUPS, &flags);
            let mut runs = Vec::new();
            for client_stack in STACKS {
                for (offer, index) in [
                    ("mldsa65:ecdsa_secp256r1_sha256", 1),
                    ("ecdsa_secp256r1_sha256:mldsa65", 0),
                ] {
                    let records = client(
                        client_stack,
                        &server,
                        &[
                            "--ca",
                            both.to_str().unwrap(),
                            "--sigalgs",
                            offer,
                            "--count",
                            "1",
                        ],
                    );
                    let label =
                        format!("{client_stack} -> {server_stack} ({chain_order}): {offer}");
                    runs.push((label, records, if server_order { 1 } else { index }));
                }
            }
            let servers = server.stop();
            for (label, records, index) in runs {
                let c = &records[0];
                assert_eq!(c["outcome"], "ok", "{label}: {c}");
                let s = servers
                    .iter()
                    .find(|s| s["conn_id"] == c["conn_id"])
                    .unwrap();
                assert_eq!(s["chain_index"], index, "{label}");
            }
        }
    }
}

#[test]
fn a_mixed_population_draws_its_kinds_and_a_kind_no_chain_serves_fails_by_category() {
    let dir = TempDir::new("population");
    let (ec, ml, both) = hierarchies(&dir);
    let population = "pq=0.5/X25519MLKEM768/mldsa65,classic=0.3/X25519/ecdsa_secp256r1_sha256,\
                      stranger=0.2/X25519/ed25519";
    for stack in STACKS {
        let server = dual(stack, &ec, &ml);
        let args = [
            "--ca",
            both.to_str().unwrap(),
            "--population",
            population,
            "--population-seed",
            "3",
            "--count",
            "40",
        ];
        let records = client(stack, &server, &args);
        let again = client(stack, &server, &args);
        let servers = server.stop();
        let kinds: Vec<&str> = records
            .iter()
            .map(|c| c["client_kind"].as_str().unwrap())
            .collect();
        let kinds_again: Vec<&str> = again
            .iter()
            .map(|c| c["client_kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds, kinds_again,
            "{stack}: the same seed draws the same kinds"
        );
        for kind in ["pq", "classic", "stranger"] {
            assert!(kinds.contains(&kind), "{stack}: 40 draws without {kind}");
        }
        assert_eq!(
            servers.len(),
            80,
            "{stack}: one connection per attempt, none retried"
        );
        for c in &records {
            let s = servers.iter().find(|s| s["conn_id"] == c["conn_id"]);
            match c["client_kind"].as_str().unwrap() {
                "stranger" => {
                    assert_eq!(c["outcome"], "failed", "{stack}: {c}");
                    let s = s.expect("the server's record of the refused client");
                    assert_eq!(s["error_category"], "no_shared_sigalg", "{stack}: {s}");
                }
                kind => {
                    assert_eq!(c["outcome"], "ok", "{stack}: {c}");
                    let want = if kind == "pq" { 1 } else { 0 };
                    assert_eq!(s.unwrap()["chain_index"], want, "{stack} {kind}");
                }
            }
        }
    }
}

/// Under `load`, every connection slot draws its own kinds: every attempt names one.
#[test]
fn the_load_generator_mixes_the_population_too() {
    let dir = TempDir::new("population-load");
    let (ec, ml, both) = hierarchies(&dir);
    for stack in ["openssl-3.5", "rustls"] {
        let server = dual(stack, &ec, &ml);
        let out = std::process::Command::new(common::binary(stack))
            .args([
                "load",
                "--connect",
                &server.addr,
                "--ca",
                both.to_str().unwrap(),
            ])
            .args([
                "--population",
                "pq=0.5/X25519MLKEM768/mldsa65,classic=0.5/X25519/ecdsa_secp256r1_sha256",
            ])
            .args([
                "--rate",
                "40",
                "--duration-ms",
                "1000",
                "--max-in-flight",
                "8",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{stack}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let records: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|r: &Value| r["side"] == "client")
            .collect();
        server.stop();
        assert!(records.len() >= 30, "{stack}: {} attempts", records.len());
        // An attempt due while every slot was open never started (a loaded host's
        // generator, recorded as generator_saturated): it drew no kind.
        let (started, missed): (Vec<&Value>, Vec<&Value>) = records
            .iter()
            .partition(|r| r["error_category"] != "generator_saturated");
        assert!(
            missed.iter().all(|r| r["client_kind"].is_null()),
            "{stack}: {missed:?}"
        );
        assert!(
            started.len() >= 20,
            "{stack}: {} attempts started",
            started.len()
        );
        let kinds: Vec<&str> = started
            .iter()
            .map(|r| r["client_kind"].as_str().unwrap_or("(none)"))
            .collect();
        assert!(
            kinds.contains(&"pq") && kinds.contains(&"classic") && !kinds.contains(&"(none)"),
            "{stack}: {kinds:?}"
        );
        assert!(started.iter().all(|r| r["outcome"] == "ok"), "{stack}");
    }
}

/// Group policy: by default a server takes the client's first group it supports (a
/// post-quantum group only for a client that asks for it first); `--prefer-server-groups`
/// takes the server's order, asking for its key share with a HelloRetryRequest (a second
/// ClientHello: more bytes written) where the client sent none for it. The rustls and
/// BoringSSL servers cannot, and say so.
#[test]
fn the_server_prefers_its_own_groups_when_told_and_the_clients_otherwise() {
    let dir = TempDir::new("group-policy");
    let ml = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let ca = ml.join("ca.pem");
    // A client offering X25519 first (its key share) and the hybrid second.
    let args = [
        "--ca",
        ca.to_str().unwrap(),
        "--groups",
        "X25519:X25519MLKEM768",
        "--count",
        "2",
    ];
    for server_stack in ["openssl-3.5", "openssl-4.0"] {
        for client_stack in STACKS {
            let label = format!("{client_stack} -> {server_stack}");
            let server = Server::start(server_stack, &ml, GROUPS, &[]);
            let theirs = client(client_stack, &server, &args);
            server.stop();
            let server = Server::start(server_stack, &ml, GROUPS, &["--prefer-server-groups"]);
            let ours = client(client_stack, &server, &args);
            server.stop();
            for (c, o) in theirs.iter().zip(&ours) {
                assert_eq!(c["outcome"], "ok", "{label}: {c}");
                assert_eq!(o["outcome"], "ok", "{label}: {o}");
                let group = |r: &Value| r["group"].as_str().unwrap().to_ascii_lowercase();
                assert_eq!(group(c), "x25519", "{label}: the client's preference");
                assert_eq!(group(o), "x25519mlkem768", "{label}: the server's");
                let (before, after) = (
                    c["bytes_written"].as_u64().unwrap(),
                    o["bytes_written"].as_u64().unwrap(),
                );
                if client_stack == "boringssl" {
                    // BoringSSL sends key shares for its first two groups when one is
                    // post-quantum (as Chrome does): the server finds its choice's share
                    // and asks for nothing again.
                    assert!(after < before + 100, "{label}: {before} -> {after}");
                } else {
                    // The retried ClientHello carries the hybrid share (1,216 bytes).
                    assert!(after > before + 1000, "{label}: {before} -> {after}");
                }
            }
        }
    }
    for stack in ["rustls", "boringssl"] {
        let out = std::process::Command::new(common::binary(stack))
            .args([
                "serve",
                "--pki",
                ml.to_str().unwrap(),
                "--prefer-server-groups",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{stack}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("server_group_preference"), "{stack}: {err}");
    }
}
