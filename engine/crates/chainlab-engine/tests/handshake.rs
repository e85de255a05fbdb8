//! Real TLS 1.3 handshakes between `serve` and `handshake`, as separate processes on
//! 127.0.0.1 (port 0, announced by the ready line), with hierarchies from `pki`: key
//! exchanges, algorithms, served chains, byte counts, and the failures each classifies.
//! Run with `cargo test --release --test handshake`.

use chainlab_test_support::engine as common;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{der_sizes, handshake, measured, ok, paired, pki, u64_of, Server, TempDir};

#[test]
fn ml_dsa_65_leaf_with_each_kex_family() {
    let dir = TempDir::new("kex");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "kex");
    for group in ["X25519", "X25519MLKEM768", "MLKEM768"] {
        let server = Server::start(&dir, &h, &["--groups", group]);
        let ca = h.join("ca.pem");
        let (out, client) = handshake(
            &dir,
            &server.addr,
            &[
                "--ca",
                ca.to_str().unwrap(),
                "--groups",
                group,
                "--count",
                "3",
                "--warmup",
                "1",
            ],
        );
        let (status, _, srv) = server.stop();
        assert!(out.status.success() && status.success());
        assert_eq!(client.len(), 4);
        assert_eq!(measured(&client).len(), 3);
        assert_eq!(srv.len(), 4);
        for c in &client {
            ok(c);
            // OpenSSL reports the IANA spelling ("x25519" for X25519).
            assert!(
                c["group"].as_str().unwrap().eq_ignore_ascii_case(group),
                "{c}"
            );
            assert_eq!(c["sigalg"], "mldsa65", "{c}");
            assert_eq!(c["resumed"], false);
            assert_eq!(c["verify"], true);
            let chain = c["peer_chain"].as_array().unwrap();
            assert_eq!(chain.len(), 1);
            assert_eq!(chain[0]["key_alg"], "ML-DSA-65");
            assert_eq!(chain[0]["sig_alg"], "ML-DSA-65");
            assert!(u64_of(c, "total_ns") >= u64_of(c, "handshake_ns"));
            assert!(u64_of(c, "cpu_ns") > 0);
            let s = paired(c, &srv);
            ok(s);
            assert_eq!(s["group"], c["group"]);
            assert_eq!(s["sigalg"], "mldsa65");
            assert_eq!(s["peer_port"], c["local_port"]);
            assert!(u64_of(s, "cpu_ns") > 0);
        }
    }
}

#[test]
fn slh_dsa_shake_128f_leaf_negotiates_its_tls_scheme() {
    let dir = TempDir::new("slh");
    let h = pki(&dir, "h", "ML-DSA-44,SLH-DSA-SHAKE-128f", "slh");
    let server = Server::start(&dir, &h, &[]);
    let ca = h.join("ca.pem");
    let (out, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", ca.to_str().unwrap(), "--count", "2"],
    );
    let (_, _, srv) = server.stop();
    assert!(out.status.success());
    assert_eq!(client.len(), 2);
    for c in &client {
        ok(c);
        assert_eq!(c["sigalg"], "slhdsa_shake_128f", "{c}");
        let leaf = &c["peer_chain"][0];
        assert_eq!(leaf["key_alg"], "SLH-DSA-SHAKE-128f");
        assert_eq!(leaf["sig_alg"], "ML-DSA-44");
        assert_eq!(paired(c, &srv)["sigalg"], "slhdsa_shake_128f");
    }
}

#[test]
fn mixed_chain_under_each_served_chain_policy() {
    let dir = TempDir::new("policy");
    let h = pki(&dir, "h", "SLH-DSA-SHAKE-128f,ML-DSA-44,ML-DSA-44", "mixed");
    let ca = h.join("ca.pem");
    let intermediates = h.join("intermediates.pem");
    for (policy, file, count) in [
        ("leaf", "chain-leaf.pem", 1),
        ("leaf+intermediates", "chain-leaf+intermediates.pem", 2),
        ("full", "chain-full.pem", 3),
    ] {
        let served = der_sizes(&h.join(file));
        assert_eq!(served.len(), count, "{file}");
        let server = Server::start(&dir, &h, &["--chain", policy]);
        assert_eq!(server.ready["served_chain"]["policy"], policy);
        assert_eq!(server.ready["served_chain"]["certificates"], count);
        assert_eq!(
            server.ready["served_chain"]["der_bytes"],
            served.iter().sum::<usize>()
        );
        let mut args = vec!["--ca", ca.to_str().unwrap(), "--count", "2"];
        if policy == "leaf" {
            // Depth 3 with only the leaf on the wire: the client needs the intermediate.
            args.extend(["--untrusted", intermediates.to_str().unwrap()]);
        }
        let (out, client) = handshake(&dir, &server.addr, &args);
        assert!(out.status.success());
        for c in &client {
            ok(c);
            let chain = c["peer_chain"].as_array().unwrap();
            let observed: Vec<usize> = chain
                .iter()
                .map(|cert| cert["der_bytes"].as_u64().unwrap() as usize)
                .collect();
            assert_eq!(observed, served, "policy {policy}");
            let keys: Vec<&str> = chain
                .iter()
                .map(|x| x["key_alg"].as_str().unwrap())
                .collect();
            let sigs: Vec<&str> = chain
                .iter()
                .map(|x| x["sig_alg"].as_str().unwrap())
                .collect();
            let all_keys = ["ML-DSA-44", "ML-DSA-44", "SLH-DSA-SHAKE-128f"];
            let all_sigs = ["ML-DSA-44", "SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-128f"];
            assert_eq!(keys, all_keys[..count]);
            assert_eq!(sigs, all_sigs[..count]);
            assert_eq!(c["sigalg"], "mldsa44");
        }
        if policy == "leaf" {
            // Without the intermediate the same chain cannot be verified.
            let (_, client) = handshake(
                &dir,
                &server.addr,
                &["--ca", ca.to_str().unwrap(), "--count", "1"],
            );
            assert_eq!(
                client[0]["error_category"], "verify_failed",
                "{}",
                client[0]
            );
        }
        server.stop();
    }
}

#[test]
fn byte_counts_agree_between_client_and_server() {
    let dir = TempDir::new("bytes");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-44,ML-DSA-65", "bytes");
    let ca = h.join("ca.pem");
    for tickets in ["0", "2"] {
        let server = Server::start(&dir, &h, &["--tickets", tickets]);
        let (_, client) = handshake(
            &dir,
            &server.addr,
            &["--ca", ca.to_str().unwrap(), "--count", "4"],
        );
        let (_, _, srv) = server.stop();
        assert_eq!(client.len(), 4);
        for c in &client {
            ok(c);
            let s = paired(c, &srv);
            assert_eq!(c["peer_close_notify"], true, "{c}");
            assert_eq!(s["peer_close_notify"], true, "{s}");
            assert_eq!(
                u64_of(c, "conn_bytes_read"),
                u64_of(s, "conn_bytes_written")
            );
            assert_eq!(
                u64_of(c, "conn_bytes_written"),
                u64_of(s, "conn_bytes_read")
            );
            assert!(u64_of(c, "conn_bytes_read") > u64_of(c, "bytes_read"));
            if tickets == "0" {
                assert_eq!(u64_of(c, "bytes_written"), u64_of(s, "bytes_read"));
                assert_eq!(u64_of(c, "bytes_read"), u64_of(s, "bytes_written"));
            } else {
                // The server's SSL_accept includes its NewSessionTicket messages, which the
                // client reads only after its handshake is complete.
                assert!(u64_of(s, "bytes_written") > u64_of(c, "bytes_read"));
            }
        }
    }
}

#[test]
fn wrong_root_is_verify_failed() {
    let dir = TempDir::new("wrongroot");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "one");
    let other = pki(&dir, "other", "ML-DSA-65,ML-DSA-65", "two");
    let server = Server::start(&dir, &h, &[]);
    let wrong = other.join("ca.pem");
    let (out, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", wrong.to_str().unwrap(), "--count", "2"],
    );
    let (_, _, srv) = server.stop();
    assert!(out.status.success(), "failures are recorded, not fatal");
    assert_eq!(client.len(), 2);
    for c in &client {
        assert_eq!(c["outcome"], "failed");
        assert_eq!(c["error_category"], "verify_failed", "{c}");
        let s = paired(c, &srv);
        assert_eq!(s["outcome"], "failed");
        // The client's alert reaches the server (it lingers until the server has closed).
        assert_eq!(s["error_category"], "tls_alert", "{s}");
        assert!(
            s["error_detail"].as_str().unwrap().contains("unknown_ca"),
            "{s}"
        );
        assert_eq!(
            u64_of(c, "conn_bytes_read"),
            u64_of(s, "conn_bytes_written")
        );
    }
    // The same hierarchy verifies with its own root (the failure is the root, not the chain).
    let server = Server::start(&dir, &h, &[]);
    let right = h.join("ca.pem");
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", right.to_str().unwrap(), "--count", "1"],
    );
    ok(&client[0]);
    server.stop();
}

#[test]
fn killed_server_leaves_refused_or_closed_records_and_client_exits_zero() {
    let dir = TempDir::new("killed");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "killed");
    let server = Server::start(&dir, &h, &[]);
    let ca = h.join("ca.pem");
    let records = dir.join("client-killed.jsonl");
    let mut client = std::process::Command::new(common::engine())
        .args(["handshake", "--connect", &server.addr, "--ca"])
        .arg(&ca)
        .args(["--count", "3000", "--timeout-ms", "2000", "--records"])
        .arg(&records)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Let a few handshakes complete, then kill the server mid-run.
    let start = Instant::now();
    while common::read_records(&records).len() < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "client made no progress"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    let status = common::wait_bounded(&mut client, common::PROCESS_DEADLINE);
    assert!(status.success());
    let records = common::read_records(&records);
    assert_eq!(records.len(), 3000, "one record per attempt");
    let first_failure = records
        .iter()
        .position(|r| r["outcome"] == "failed")
        .expect("handshakes after the kill fail");
    assert!(first_failure >= 5);
    let mut refused = 0;
    for r in &records[first_failure..] {
        let category = r["error_category"].as_str().unwrap();
        assert!(
            category == "connect_refused" || category == "peer_closed",
            "{r}"
        );
        refused += (category == "connect_refused") as usize;
    }
    assert!(refused > 0);
}

#[test]
fn unreachable_port_is_connect_refused() {
    let dir = TempDir::new("refused");
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }; // closed again: nothing listens there now
    let addr = format!("127.0.0.1:{port}");
    let (out, client) = handshake(&dir, &addr, &["--no-verify", "--count", "2"]);
    assert!(out.status.success());
    assert_eq!(client.len(), 2);
    for c in &client {
        assert_eq!(c["error_category"], "connect_refused", "{c}");
        assert!(c["handshake_ns"].is_null());
        assert_eq!(c["verify"], false);
    }
}

#[test]
fn no_common_group_is_no_shared_group() {
    let dir = TempDir::new("nogroup");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "nogroup");
    let server = Server::start(&dir, &h, &["--groups", "MLKEM768"]);
    let ca = h.join("ca.pem");
    let (out, client) = handshake(
        &dir,
        &server.addr,
        &[
            "--ca",
            ca.to_str().unwrap(),
            "--groups",
            "X25519",
            "--count",
            "1",
        ],
    );
    let (_, _, srv) = server.stop();
    assert!(out.status.success());
    assert_eq!(
        client[0]["error_category"], "no_shared_group",
        "{}",
        client[0]
    );
    assert_eq!(
        paired(&client[0], &srv)["error_category"],
        "no_shared_group"
    );
}

#[test]
fn hung_server_is_handshake_timeout_within_the_timeout() {
    let dir = TempDir::new("hung");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // Accepts two connections and never answers; holds them until the client gives up.
    let holder = std::thread::spawn(move || {
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(listener.accept().unwrap().0);
        }
        for mut s in held {
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink); // returns when the client closes
        }
    });
    let started = Instant::now();
    let (out, client) = handshake(
        &dir,
        &addr,
        &["--no-verify", "--count", "2", "--timeout-ms", "300"],
    );
    let took = started.elapsed();
    holder.join().unwrap();
    assert!(out.status.success());
    assert!(took < Duration::from_secs(5), "{took:?}");
    for c in &client {
        assert_eq!(c["error_category"], "handshake_timeout", "{c}");
        let ns = u64_of(c, "handshake_ns");
        assert!((300_000_000..2_000_000_000).contains(&ns), "{ns}");
        assert!(u64_of(c, "bytes_written") > 0, "the ClientHello went out");
        assert_eq!(u64_of(c, "bytes_read"), 0);
    }
}
