//! `--random-seed`: with one seed on each side, a run's handshakes put the same bytes on the
//! wire as another run's, connection for connection. The bytes carry every random draw of
//! both sides (randoms, key shares, the ML-KEM ciphertext and, encrypted under keys derived
//! from them, ML-DSA's hedged CertificateVerify), so equal bytes mean libssl and the
//! providers drew from the seeded stream alone. The controls: connections within a run
//! differ; another client seed, another server seed, or no seed changes every connection.

use chainlab_test_support::engine as common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::thread;

use common::{handshake, pki, Server, TempDir};

/// The bytes of one connection: client to server, server to client.
type Wire = (Vec<u8>, Vec<u8>);

const COUNT: usize = 3;

/// Copies `from` to `to` until `from` ends, keeping what it read; then ends `to`'s writes.
fn pump(mut from: TcpStream, mut to: TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                seen.extend_from_slice(&buf[..n]);
                // The peer may have gone (a close after its last read): keep reading.
                let _ = to.write_all(&buf[..n]);
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    seen
}

/// A relay in front of `upstream` recording `n` connections, one at a time.
fn relay(upstream: String, n: usize) -> (String, thread::JoinHandle<Vec<Wire>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handle = thread::spawn(move || {
        (0..n)
            .map(|_| {
                let (client, _) = listener.accept().unwrap();
                let server = TcpStream::connect(&upstream).unwrap();
                let (c, s) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = thread::spawn(move || pump(c, s));
                let down = pump(server, client);
                (up.join().unwrap(), down)
            })
            .collect()
    });
    (addr, handle)
}

/// One run: a fresh server and client, each with its seed (None: the system's randomness).
fn run(
    dir: &TempDir,
    h: &std::path::Path,
    server_seed: Option<u64>,
    client_seed: Option<u64>,
) -> Vec<Wire> {
    let seed_args = |seed: Option<u64>| -> Vec<String> {
        seed.map(|s| vec!["--random-seed".to_owned(), s.to_string()])
            .unwrap_or_default()
    };
    let srv_args = seed_args(server_seed);
    let srv_refs: Vec<&str> = srv_args.iter().map(String::as_str).collect();
    let server = Server::start(dir, h, &srv_refs);
    let (addr, recorded) = relay(server.addr.clone(), COUNT);
    let ca = h.join("ca.pem");
    let count = COUNT.to_string();
    let mut args = vec!["--ca", ca.to_str().unwrap(), "--count", &count];
    let cli_args = seed_args(client_seed);
    args.extend(cli_args.iter().map(String::as_str));
    let (out, records) = handshake(dir, &addr, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(records.len(), COUNT);
    assert!(records.iter().all(|r| r["outcome"] == "ok"), "{records:?}");
    let wires = recorded.join().unwrap();
    let (_, _, server_records) = server.stop();
    assert_eq!(server_records.len(), COUNT);
    wires
}

#[test]
fn one_seed_puts_the_same_bytes_on_the_wire_in_every_run() {
    let dir = TempDir::new("seeded");
    // ML-DSA-44 signs with hedged randomness drawn inside the provider.
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "seeded");
    let a = run(&dir, &h, Some(7), Some(11));
    let b = run(&dir, &h, Some(7), Some(11));
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            !x.0.is_empty() && !x.1.is_empty(),
            "connection {i} recorded nothing"
        );
        assert!(
            x.0 == y.0,
            "connection {i}: the client's bytes differ between runs"
        );
        assert!(
            x.1 == y.1,
            "connection {i}: the server's bytes differ between runs"
        );
    }
    // Each connection has its own stream.
    assert!(
        a[0] != a[1] && a[1] != a[2],
        "connections of one run repeat each other"
    );
    // Another client seed: every connection's bytes, both ways, differ.
    let c = run(&dir, &h, Some(7), Some(12));
    for (i, (x, y)) in a.iter().zip(&c).enumerate() {
        assert!(
            x.0 != y.0 && x.1 != y.1,
            "connection {i}: another client seed, same bytes"
        );
    }
    // Another server seed alone: the client's first flight is the same, and every
    // connection's server bytes differ (the server's draws follow its own seed).
    let e = run(&dir, &h, Some(8), Some(11));
    for (i, (x, y)) in a.iter().zip(&e).enumerate() {
        assert!(
            x.1 != y.1,
            "connection {i}: another server seed, same server bytes"
        );
        let hello =
            |w: &Wire| w.0[..5 + usize::from(u16::from_be_bytes([w.0[3], w.0[4]]))].to_vec();
        assert_eq!(
            hello(x),
            hello(y),
            "connection {i}: the ClientHello moved with the server's seed"
        );
    }
    // No seeds: the system's randomness.
    let d = run(&dir, &h, None, None);
    for (i, (x, y)) in a.iter().zip(&d).enumerate() {
        assert!(
            x.0 != y.0 && x.1 != y.1,
            "connection {i}: unseeded, same bytes"
        );
    }
}

#[test]
fn a_seeded_server_serves_one_connection_at_a_time_only() {
    let dir = TempDir::new("seeded-refused");
    let h = pki(&dir, "h", "ML-DSA-44,ML-DSA-44", "seeded-refused");
    for extra in [&["--workers", "2"][..], &["--server-model", "event"][..]] {
        let out = common::run_bounded(
            std::process::Command::new(common::engine())
                .args(["serve", "--pki"])
                .arg(&h)
                .args(["--random-seed", "1"])
                .args(extra),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("--random-seed") && err.contains("--workers 1"),
            "{extra:?}: {err}"
        );
    }
}
