//! Real QUIC v1 handshakes between `serve --transport quic` and `handshake --transport quic`,
//! as separate processes on 127.0.0.1 (UDP port 0, announced by the ready line), with
//! hierarchies from `pki`. Run with `cargo test --release --test quic`.

use chainlab_test_support::engine as common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use common::{der_sizes, handshake, paired, pki, pki_for, Server, TempDir};
use serde_json::Value;

const QUIC: [&str; 2] = ["--transport", "quic"];

fn ok(record: &Value) {
    assert_eq!(
        record["schema"],
        chainlab_engine::record::SCHEMA,
        "{record}"
    );
    assert_eq!(record["outcome"], "ok", "{record}");
    assert!(record["error_category"].is_null(), "{record}");
    assert_eq!(record["transport"], "quic", "{record}");
}

fn u64_of(record: &Value, field: &str) -> u64 {
    record[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {record}"))
}

/// `serve --transport quic <extra>`.
fn quic_server(dir: &TempDir, pki: &std::path::Path, extra: &[&str]) -> Server {
    let server = Server::start(dir, pki, &[&QUIC[..], extra].concat());
    assert_eq!(server.ready["transport"], "quic", "{}", server.ready);
    server
}

/// `handshake --transport quic <args>`.
fn quic_client(dir: &TempDir, addr: &str, args: &[&str]) -> (std::process::Output, Vec<Value>) {
    handshake(dir, addr, &[&QUIC[..], args].concat())
}

/// Per connection, what one side sent the other received: UDP payload bytes and datagrams,
/// each way (the client waits for HANDSHAKE_DONE before it closes, and the server sends
/// nothing once it has the client's CONNECTION_CLOSE).
fn assert_counts_agree(c: &Value, s: &Value) {
    for (mine, theirs) in [
        ("conn_bytes_written", "conn_bytes_read"),
        ("conn_bytes_read", "conn_bytes_written"),
        ("conn_datagrams_written", "conn_datagrams_read"),
        ("conn_datagrams_read", "conn_datagrams_written"),
    ] {
        assert_eq!(u64_of(c, mine), u64_of(s, theirs), "{mine}\n{c}\n{s}");
    }
    // Over the handshake: everything the client sent up to its Finished, the server had
    // read when its handshake completed (perhaps with an acknowledgement the client sent
    // after its own completion, for server datagrams still arriving: no equality here).
    assert!(
        u64_of(c, "bytes_written") <= u64_of(s, "bytes_read"),
        "{c}\n{s}"
    );
    assert!(u64_of(c, "conn_bytes_read") >= u64_of(c, "bytes_read"));
}

#[test]
fn ml_dsa_leaf_with_hybrid_and_pure_ml_kem() {
    let dir = TempDir::new("quic-kex");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65,ML-DSA-65", "quic-kex");
    let ca = h.join("ca.pem");
    for (group, name) in [
        ("X25519MLKEM768", "X25519MLKEM768"),
        ("MLKEM768", "MLKEM768"),
    ] {
        let server = quic_server(&dir, &h, &["--groups", group]);
        let (out, client) = quic_client(
            &dir,
            &server.addr,
            &[
                "--ca",
                ca.to_str().unwrap(),
                "--groups",
                group,
                "--count",
                "3",
            ],
        );
        let (status, _, srv) = server.stop();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(status.success());
        assert_eq!(client.len(), 3);
        assert_eq!(srv.len(), 3);
        for c in &client {
            ok(c);
            let s = paired(c, &srv);
            ok(s);
            assert_eq!(c["group"], name, "{c}");
            assert_eq!(s["group"], name, "{s}");
            assert_eq!(c["sigalg"], "mldsa65");
            assert_eq!(s["sigalg"], "mldsa65");
            assert_eq!(s["peer_close_notify"], true, "{s}");
            assert_counts_agree(c, s);
            // The client's first Initial is padded to at least 1200 bytes (RFC 9000 14.1),
            // and an 11 kB ML-DSA chain cannot fit the 3x budget that one datagram buys.
            assert!(u64_of(c, "bytes_written") >= 1200);
            assert!(u64_of(c, "flight_datagrams") >= 2, "{c}");
            assert!(u64_of(c, "flight_datagrams") <= u64_of(c, "datagrams_written"));
            assert!(u64_of(s, "bytes_written") > 3 * 1200, "{s}");
            // The server's handshake CPU is null only where another client's datagram was
            // being served meanwhile (docs/engine-records.md, QUIC, "Concurrency").
            assert!(u64_of(c, "cpu_ns") > 0);
            assert!(s["cpu_ns"].is_null() || u64_of(s, "cpu_ns") > 0);
            assert!(u64_of(s, "conn_ns") >= u64_of(s, "handshake_ns"));
            assert_eq!(c["peer_chain"].as_array().unwrap().len(), 2);
        }
    }
}

#[test]
fn slh_dsa_shake_128f_leaf_negotiates_its_tls_scheme() {
    let dir = TempDir::new("quic-slh");
    let h = pki(&dir, "h", "ML-DSA-44,SLH-DSA-SHAKE-128f", "quic-slh");
    let server = quic_server(&dir, &h, &[]);
    let ca = h.join("ca.pem");
    let (out, client) = quic_client(
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
        let s = paired(c, &srv);
        assert_eq!(s["sigalg"], "slhdsa_shake_128f");
        assert_counts_agree(c, s);
    }
}

#[test]
fn mixed_chain_under_each_served_chain_policy() {
    let dir = TempDir::new("quic-policy");
    let h = pki(
        &dir,
        "h",
        "SLH-DSA-SHAKE-128f,ML-DSA-44,ML-DSA-44",
        "quic-mixed",
    );
    let ca = h.join("ca.pem");
    let intermediates = h.join("intermediates.pem");
    for (policy, file, count) in [
        ("leaf", "chain-leaf.pem", 1),
        ("leaf+intermediates", "chain-leaf+intermediates.pem", 2),
        ("full", "chain-full.pem", 3),
    ] {
        let served = der_sizes(&h.join(file));
        let server = quic_server(&dir, &h, &["--chain", policy]);
        assert_eq!(server.ready["served_chain"]["certificates"], count);
        let mut args = vec!["--ca", ca.to_str().unwrap(), "--count", "2"];
        if policy == "leaf" {
            args.extend(["--untrusted", intermediates.to_str().unwrap()]);
        }
        let (out, client) = quic_client(&dir, &server.addr, &args);
        let (_, _, srv) = server.stop();
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
            let all_keys = ["ML-DSA-44", "ML-DSA-44", "SLH-DSA-SHAKE-128f"];
            assert_eq!(keys, all_keys[..count]);
            assert_eq!(c["sigalg"], "mldsa44");
            assert_counts_agree(c, paired(c, &srv));
        }
    }
}

#[test]
fn zlib_certificate_compression_over_quic_shrinks_what_the_client_reads() {
    let dir = TempDir::new("quic-comp");
    let h = pki(&dir, "h", "ECDSA-P256,ECDSA-P256,ECDSA-P256", "quic-comp");
    let ca = h.join("ca.pem");
    let mut read = Vec::new();
    // X25519 alone, so that the ClientHello fits one Initial datagram. With the hybrid
    // default its key share (1216 bytes, FIPS 203) splits the ClientHello over two datagrams,
    // and when the second arrives after the server has read the first, the server
    // acknowledges the first in an Initial datagram of its own, padded to 1200 bytes
    // (RFC 9000 Section 14.1): an extra 1200 bytes read that depends on timing, which a
    // capture showed on a loaded machine in up to half the connections.
    for comp in ["none", "zlib"] {
        let server = quic_server(
            &dir,
            &h,
            &["--cert-compression", comp, "--groups", "X25519"],
        );
        let setup = server.ready["cert_compression"].clone();
        let (_, client) = quic_client(
            &dir,
            &server.addr,
            &[
                "--ca",
                ca.to_str().unwrap(),
                "--cert-compression",
                comp,
                "--groups",
                "X25519",
                "--count",
                "6",
            ],
        );
        let (_, _, srv) = server.stop();
        for c in &client {
            ok(c);
            assert_counts_agree(c, paired(c, &srv));
        }
        // The least read: what the flight takes, without acknowledgements that happened to
        // arrive before the handshake completed, nor a datagram the server sent again after a
        // probe timeout (RFC 9002 Section 6.2) on a busy machine: one such resend adds up to a
        // padded 1200-byte datagram to a connection, so six connections each, and the least.
        let least = client
            .iter()
            .map(|c| u64_of(c, "bytes_read"))
            .min()
            .unwrap();
        read.push((least, setup));
    }
    let (plain, _) = &read[0];
    let (packed, setup) = &read[1];
    assert_eq!(setup["installed"], true, "{setup}");
    let saved =
        setup["uncompressed_bytes"].as_u64().unwrap() - setup["compressed_bytes"].as_u64().unwrap();
    // What the client reads shrinks, by at most what compression saved in the Certificate
    // message (QUIC packet boundaries move, and a server datagram carrying an Initial packet
    // is padded to 1200 bytes anyway, RFC 9000 Section 14.1, which absorbs part of it).
    let less = *plain as i64 - *packed as i64;
    assert!(
        less > 0 && less <= saved as i64 + 40,
        "read {plain} plain, {packed} compressed: {less} less vs {saved} saved"
    );
}

#[test]
fn mutual_tls_over_quic_records_the_client_chain_and_rejections() {
    let dir = TempDir::new("quic-mtls");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "quic-mtls");
    let client_pki = pki_for(
        &dir,
        "c",
        "ML-DSA-44,SLH-DSA-SHAKE-128f",
        "quic-c",
        "client",
    );
    let stranger = pki_for(&dir, "x", "ML-DSA-44,ML-DSA-44", "quic-x", "client");
    let ca = h.join("ca.pem");
    let client_ca = client_pki.join("ca.pem");
    let server = quic_server(&dir, &h, &["--client-ca", client_ca.to_str().unwrap()]);
    let (_, good) = quic_client(
        &dir,
        &server.addr,
        &[
            "--ca",
            ca.to_str().unwrap(),
            "--cert-pki",
            client_pki.to_str().unwrap(),
            "--count",
            "2",
        ],
    );
    let (_, bad) = quic_client(
        &dir,
        &server.addr,
        &[
            "--ca",
            ca.to_str().unwrap(),
            "--cert-pki",
            stranger.to_str().unwrap(),
            "--count",
            "1",
        ],
    );
    let (_, _, srv) = server.stop();
    for c in &good {
        ok(c);
        let s = paired(c, &srv);
        ok(s);
        let chain = s["peer_chain"].as_array().expect("the client's chain");
        assert_eq!(chain[0]["key_alg"], "SLH-DSA-SHAKE-128f", "{s}");
        assert_counts_agree(c, s);
    }
    assert_eq!(
        bad[0]["error_category"], "client_cert_rejected",
        "{}",
        bad[0]
    );
    let s = paired(&bad[0], &srv);
    assert_eq!(s["error_category"], "client_cert_rejected", "{s}");
}

#[test]
fn resumption_over_quic_with_one_ticket() {
    let dir = TempDir::new("quic-resume");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "quic-resume");
    let ca = h.join("ca.pem");
    let server = quic_server(&dir, &h, &["--tickets", "1"]);
    let (out, client) = quic_client(
        &dir,
        &server.addr,
        &["--ca", ca.to_str().unwrap(), "--resume", "--count", "4"],
    );
    let (_, _, srv) = server.stop();
    assert!(out.status.success());
    assert_eq!(client.len(), 4);
    assert_eq!(client[0]["resumed"], false, "the first has no ticket yet");
    for c in &client[1..] {
        ok(c);
        assert_eq!(c["resumed"], true, "{c}");
        assert!(c["sigalg"].is_null() && c["peer_chain"].is_null(), "{c}");
        let s = paired(c, &srv);
        assert_eq!(s["resumed"], true, "{s}");
        assert_counts_agree(c, s);
        // No certificate chain on the wire: far less than the full handshake read.
        assert!(u64_of(c, "bytes_read") * 2 < u64_of(&client[0], "bytes_read"));
    }
}

#[test]
fn the_load_generator_runs_over_quic_and_the_server_serves_connections_at_once() {
    let dir = TempDir::new("quic-load");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "quic-load");
    let ca = h.join("ca.pem");
    let server = quic_server(&dir, &h, &[]);
    let records = dir.join("client-quic-load.jsonl");
    let out = common::run_bounded(
        std::process::Command::new(common::engine())
            .args([
                "load",
                "--transport",
                "quic",
                "--connect",
                &server.addr,
                "--ca",
            ])
            .arg(&ca)
            .args([
                "--rate",
                "150",
                "--arrivals",
                "poisson",
                "--duration-ms",
                "1000",
            ])
            .args(["--max-in-flight", "8", "--records"])
            .arg(&records),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, _, srv) = server.stop();
    let recs = common::read_records(&records);
    let attempts: Vec<&Value> = recs.iter().filter(|r| r["side"] == "client").collect();
    let generator = recs
        .iter()
        .find(|r| r["side"] == "generator")
        .expect("generator");
    assert_eq!(attempts.len() as u64, u64_of(generator, "scheduled"));
    let ok_attempts: Vec<&&Value> = attempts.iter().filter(|r| r["outcome"] == "ok").collect();
    assert!(
        ok_attempts.len() * 10 >= attempts.len() * 9,
        "{}",
        attempts[0]
    );
    let mut alone = 0;
    for c in ok_attempts {
        ok(c);
        let s = paired(c, &srv);
        ok(s);
        // Everything the client sent, ending with its CONNECTION_CLOSE, reached the server.
        // The other way the server may have sent an acknowledgement after HANDSHAKE_DONE that
        // crossed the client's CONNECTION_CLOSE under load: the client read at most that.
        assert_eq!(
            u64_of(c, "conn_bytes_written"),
            u64_of(s, "conn_bytes_read"),
            "{c}\n{s}"
        );
        assert!(u64_of(c, "conn_bytes_read") <= u64_of(s, "conn_bytes_written"));
        assert!(u64_of(c, "latency_ns") >= u64_of(c, "total_ns"));
        // CPU is the connection's only where no other was handshaking during its handshake
        // (and, for the whole connection, none was in flight at all).
        if s["cpu_ns"].is_null() {
            assert!(s["conn_cpu_ns"].is_null(), "{s}");
        } else {
            alone += 1;
            if !s["conn_cpu_ns"].is_null() {
                assert!(u64_of(s, "conn_cpu_ns") >= u64_of(s, "cpu_ns"), "{s}");
            }
        }
    }
    assert_eq!(
        srv.len(),
        attempts.len()
            - attempts
                .iter()
                .filter(|r| r["error_category"] == "generator_saturated")
                .count()
    );
    // At this rate most connections meet no other: their CPU is recorded.
    assert!(alone > 0, "no connection kept its CPU");
}

#[test]
fn wrong_root_is_verify_failed_and_the_server_reads_the_alert() {
    let dir = TempDir::new("quic-wrongroot");
    let h = pki(&dir, "h", "ML-DSA-65,ML-DSA-65", "one");
    let other = pki(&dir, "other", "ML-DSA-65,ML-DSA-65", "two");
    let server = quic_server(&dir, &h, &[]);
    let wrong = other.join("ca.pem");
    let (out, client) = quic_client(
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
        // The client's alert travels as a CRYPTO_ERROR in its CONNECTION_CLOSE.
        assert_eq!(s["error_category"], "tls_alert", "{s}");
        assert!(
            s["error_detail"].as_str().unwrap().contains("unknown_ca"),
            "{s}"
        );
        assert_eq!(
            u64_of(c, "conn_bytes_written"),
            u64_of(s, "conn_bytes_read")
        );
    }
}

#[test]
fn nothing_listening_is_connect_refused() {
    let dir = TempDir::new("quic-refused");
    let port = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    }; // closed again: nothing listens there now
    let addr = format!("127.0.0.1:{port}");
    let (out, client) = quic_client(
        &dir,
        &addr,
        &["--no-verify", "--count", "2", "--timeout-ms", "3000"],
    );
    assert!(out.status.success());
    assert_eq!(client.len(), 2);
    for c in &client {
        assert_eq!(c["error_category"], "connect_refused", "{c}");
        assert!(
            u64_of(c, "total_ns") < 3_000_000_000,
            "refused at once: {c}"
        );
        assert_eq!(u64_of(c, "datagrams_read"), 0);
    }
}

#[test]
fn killed_server_leaves_failed_records_and_client_exits_zero() {
    let dir = TempDir::new("quic-killed");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "quic-killed");
    let server = quic_server(&dir, &h, &[]);
    let ca = h.join("ca.pem");
    let records = dir.join("client-quic-killed.jsonl");
    let mut client = std::process::Command::new(common::engine())
        .args([
            "handshake",
            "--transport",
            "quic",
            "--connect",
            &server.addr,
            "--ca",
        ])
        .arg(&ca)
        .args(["--count", "400", "--timeout-ms", "1000", "--records"])
        .arg(&records)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
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
    assert_eq!(records.len(), 400, "one record per attempt");
    let first_failure = records
        .iter()
        .position(|r| r["outcome"] == "failed")
        .expect("handshakes after the kill fail");
    assert!(first_failure >= 5);
    let mut refused = 0;
    for r in &records[first_failure..] {
        let category = r["error_category"].as_str().unwrap();
        assert!(
            ["connect_refused", "handshake_timeout", "connect_timeout"].contains(&category),
            "{r}"
        );
        refused += (category == "connect_refused") as usize;
    }
    assert!(refused > 0);
}

#[test]
fn quic_with_several_server_workers_is_refused_with_one_line() {
    let dir = TempDir::new("quic-badargs");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "quic-badargs");
    let expect_error = |args: &[&str], needles: &[&str]| {
        let out = common::run_bounded(std::process::Command::new(common::engine()).args(args));
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for needle in needles {
            assert!(err.contains(needle), "{needle:?} not in {err}");
        }
    };
    let pki_dir = h.to_str().unwrap();
    expect_error(
        &[
            "serve",
            "--pki",
            pki_dir,
            "--transport",
            "quic",
            "--workers",
            "2",
        ],
        &["--workers 2", "--transport quic"],
    );
    // `--workers` is how TCP serves connections at once; QUIC's one listener thread serves
    // them through its event loop.
}
