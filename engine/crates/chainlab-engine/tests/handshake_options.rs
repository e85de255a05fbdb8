//! Handshakes with the server's and client's options: certificate compression,
//! resumption (one ticket, a mix at a ratio), a stop on SIGTERM, `--max-connections` and
//! `--no-instrument`, and bad arguments. Run with `cargo test --release --test
//! handshake_options`.

use chainlab_test_support::engine as common;

use std::time::Duration;

use common::{handshake, ok, paired, pki, u64_of, Server, TempDir};

#[test]
fn zlib_certificate_compression_is_negotiated() {
    let dir = TempDir::new("zlib");
    // ECDSA certificates compress (repeated names and extensions); ML-DSA ones barely do.
    let h = pki(&dir, "h", "ECDSA-P256,ECDSA-P256,ECDSA-P256", "zlib");
    let ca = h.join("ca.pem");
    let server = Server::start(&dir, &h, &["--chain", "full", "--cert-compression", "zlib"]);
    let setup = &server.ready["cert_compression"];
    assert_eq!(setup["algorithm"], "zlib");
    assert_eq!(setup["installed"], true);
    let (comp, plain) = (
        setup["compressed_bytes"].as_u64().unwrap(),
        setup["uncompressed_bytes"].as_u64().unwrap(),
    );
    assert!(comp < plain, "{setup}");
    let base = ["--ca", ca.to_str().unwrap(), "--count", "2"];
    let (_, zlib) = handshake(
        &dir,
        &server.addr,
        &[&base[..], &["--cert-compression", "zlib"]].concat(),
    );
    let (_, none) = handshake(&dir, &server.addr, &base);
    server.stop();
    for (z, n) in zlib.iter().zip(&none) {
        ok(z);
        ok(n);
        // Same chain observed after decompression.
        assert_eq!(z["peer_chain"], n["peer_chain"]);
        // What the client saved is what compression saved, less CompressedCertificate's own
        // fields (algorithm, uncompressed length, compressed length: 8 bytes).
        let saved = u64_of(n, "bytes_read") as i64 - u64_of(z, "bytes_read") as i64;
        let overhead = (plain - comp) as i64 - saved;
        assert!(
            (1..=16).contains(&overhead),
            "saved {saved} of {}",
            plain - comp
        );
    }
    // ML-DSA: the handshake with compression on works and does not grow.
    let m = pki(&dir, "m", "ML-DSA-44,ML-DSA-44", "zlibml");
    let server = Server::start(&dir, &m, &["--cert-compression", "zlib"]);
    let ca = m.join("ca.pem");
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &[
            "--ca",
            ca.to_str().unwrap(),
            "--count",
            "1",
            "--cert-compression",
            "zlib",
        ],
    );
    ok(&client[0]);
    server.stop();
}

#[test]
fn resumption_with_one_ticket() {
    let dir = TempDir::new("resume");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "resume");
    let server = Server::start(&dir, &h, &["--tickets", "1"]);
    let ca = h.join("ca.pem");
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", ca.to_str().unwrap(), "--count", "4", "--resume"],
    );
    let (_, _, srv) = server.stop();
    assert_eq!(client.len(), 4);
    for (i, c) in client.iter().enumerate() {
        ok(c);
        let resumed = i > 0;
        assert_eq!(c["resumed"], resumed, "{c}");
        assert_eq!(paired(c, &srv)["resumed"], resumed);
        if resumed {
            assert!(c["sigalg"].is_null() && c["peer_chain"].is_null(), "{c}");
            assert!(u64_of(c, "bytes_read") < u64_of(&client[0], "bytes_read"));
        } else {
            assert_eq!(c["sigalg"], "mldsa65");
        }
    }
    // Without tickets, --resume has nothing to offer: every handshake is full.
    let server = Server::start(&dir, &h, &["--tickets", "0"]);
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", ca.to_str().unwrap(), "--count", "2", "--resume"],
    );
    server.stop();
    assert!(client.iter().all(|c| c["resumed"] == false));
}

/// A resumption mix: each attempt offers the kept ticket with probability r (seeded), a full
/// handshake refreshes the ticket, and a resumed handshake costs the server no signature.
#[test]
fn resumption_mix_offers_tickets_at_the_ratio() {
    let dir = TempDir::new("resume-mix");
    let h = pki(&dir, "h", "ML-DSA-44,SLH-DSA-SHA2-128f", "resume-mix");
    let ca = h.join("ca.pem");
    let run = |seed: &str| {
        let server = Server::start(&dir, &h, &["--tickets", "1"]);
        let (_, client) = handshake(
            &dir,
            &server.addr,
            &[
                "--ca",
                ca.to_str().unwrap(),
                "--count",
                "120",
                "--resume-ratio",
                "0.75",
                "--resume-seed",
                seed,
            ],
        );
        let (_, _, srv) = server.stop();
        (client, srv)
    };
    let (client, srv) = run("3");
    assert_eq!(client.len(), 120);
    let offered: Vec<bool> = client.iter().map(|c| c["resume_offered"] == true).collect();
    // The first attempt has no ticket to offer; the server accepts every offered one.
    assert!(!offered[0]);
    for c in &client {
        ok(c);
        assert_eq!(c["resumed"], c["resume_offered"], "{c}");
    }
    // 119 draws at 0.75: the 99.9 % binomial range is 77-101.
    let n = offered.iter().filter(|&&o| o).count();
    assert!((77..=101).contains(&n), "{n} of 119 resumed");
    // The same seed gives the same mix; another seed another one.
    let (again, _) = run("3");
    let again: Vec<bool> = again.iter().map(|c| c["resume_offered"] == true).collect();
    assert_eq!(again, offered);
    let (other, _) = run("4");
    assert_ne!(
        other
            .iter()
            .map(|c| c["resume_offered"] == true)
            .collect::<Vec<_>>(),
        offered
    );
    // The SLH-DSA leaf signs only on full handshakes: resumed ones cost the server far less.
    let server_cpu = |resumed: bool| -> Vec<u64> {
        client
            .iter()
            .filter(|c| c["resumed"] == resumed)
            .map(|c| u64_of(paired(c, &srv), "cpu_ns"))
            .collect()
    };
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let (full, resumed) = (median(server_cpu(false)), median(server_cpu(true)));
    assert!(
        resumed * 5 < full,
        "median server CPU: resumed {resumed} ns, full {full} ns"
    );
    // A ratio is a probability.
    let out = common::run_bounded(std::process::Command::new(common::engine()).args([
        "handshake",
        "--connect",
        "127.0.0.1:9",
        "--count",
        "1",
        "--resume-ratio",
        "1.5",
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--resume-ratio 1.5: must be a probability")
    );
}

#[test]
fn sigterm_exits_promptly_with_complete_records() {
    let dir = TempDir::new("sigterm");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "sigterm");
    let server = Server::start(&dir, &h, &["--workers", "2"]);
    let ca = h.join("ca.pem");
    let (_, client) = handshake(
        &dir,
        &server.addr,
        &["--ca", ca.to_str().unwrap(), "--count", "5"],
    );
    // A connection that never sends a ClientHello is in flight when SIGTERM arrives: the
    // signal is sent once the server has accepted it, not after a sleep that may be short.
    let stalled = std::net::TcpStream::connect(&server.addr).unwrap();
    server.wait_for_peer(stalled.local_addr().unwrap());
    let (status, took, srv) = server.stop();
    drop(stalled);
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(3), "exit took {took:?}");
    assert_eq!(srv.len(), 6, "one line per connection");
    for c in &client {
        ok(paired(c, &srv));
    }
    let abandoned: Vec<_> = srv.iter().filter(|s| s["outcome"] == "failed").collect();
    assert_eq!(abandoned.len(), 1);
    assert!(
        abandoned[0]["error_detail"]
            .as_str()
            .unwrap()
            .contains("abandoned"),
        "{}",
        abandoned[0]
    );
}

#[test]
fn max_connections_and_no_instrument() {
    let dir = TempDir::new("noinstr");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "noinstr");
    let ca = h.join("ca.pem");
    let mut server = Server::start(&dir, &h, &["--no-instrument", "--max-connections", "3"]);
    let (out, client) = handshake(
        &dir,
        &server.addr,
        &[
            "--ca",
            ca.to_str().unwrap(),
            "--count",
            "3",
            "--no-instrument",
        ],
    );
    assert!(out.status.success());
    // The server exits by itself after --max-connections, having written no records.
    let status = server.wait();
    assert!(status.success());
    assert!(common::read_records(&server.records).is_empty());
    for c in &client {
        ok(c);
        assert!(u64_of(c, "total_ns") > 0);
        for field in [
            "connect_ns",
            "handshake_ns",
            "cpu_ns",
            "bytes_read",
            "conn_bytes_written",
            "group",
            "conn_id",
            "peer_chain",
        ] {
            assert!(c[field].is_null(), "{field} in {c}");
        }
    }
}

#[test]
fn bad_arguments_exit_non_zero_with_one_line() {
    let dir = TempDir::new("badargs");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "badargs");
    let ca = h.join("ca.pem");
    let expect_error = |args: &[&str], needles: &[&str]| {
        let out = common::run_bounded(std::process::Command::new(common::engine()).args(args));
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for needle in needles {
            assert!(err.contains(needle), "{needle:?} not in {err}");
        }
    };
    let connect = ["handshake", "--connect", "127.0.0.1:9", "--count", "1"];
    expect_error(
        &[
            &connect[..],
            &["--ca", ca.to_str().unwrap(), "--groups", "X25519:NOPE"],
        ]
        .concat(),
        &["--groups", "NOPE", "X25519MLKEM768", "MLKEM1024"],
    );
    expect_error(
        &[&connect[..], &["--ca", "/nonexistent/ca.pem"]].concat(),
        &["--ca", "/nonexistent/ca.pem"],
    );
    expect_error(&connect, &["--ca", "--no-verify"]);
    // Nothing to measure: refused, on every stack, never an empty success.
    for stack in ["openssl-3.5", "rustls", "boringssl"] {
        for (flag, value) in [("--count", "0"), ("--duration-ms", "0")] {
            let args = [
                "handshake",
                "--connect",
                "127.0.0.1:9",
                "--no-verify",
                flag,
                value,
            ];
            let out = common::run_bounded(
                std::process::Command::new(chainlab_test_support::binary(stack)).args(args),
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stack} {flag} 0: {err}");
            assert!(out.stdout.is_empty(), "{stack} {flag} 0 wrote records");
            assert!(
                err.contains(&format!("{flag} 0: must be at least 1")),
                "{stack}: {err}"
            );
        }
    }
    let server = Server::start(&dir, &h, &[]);
    expect_error(
        &[
            "serve",
            "--pki",
            h.to_str().unwrap(),
            "--listen",
            &server.addr,
        ],
        &["cannot listen on", &server.addr],
    );
    server.stop();
    expect_error(
        &["serve", "--pki", "/nonexistent"],
        &["/nonexistent/chain-leaf+intermediates.pem"],
    );
}
