//! The paper's central mechanism, once, at full size: with an SLH-DSA-SHAKE-192s leaf the
//! server signs CertificateVerify with it on every full handshake (~1.3 s of CPU on this
//! machine kind), while the client only verifies (~1 ms per signature). One handshake, since
//! it is the slowest test of the suite. Run with `cargo test --release --test plateau`.

use chainlab_test_support::engine as common;

use common::{handshake, paired, pki, Server, TempDir};

#[test]
fn slh_dsa_shake_192s_leaf_is_server_bound() {
    let dir = TempDir::new("plateau");
    let h = pki(&dir, "h", "ML-DSA-65,SLH-DSA-SHAKE-192s", "plateau");
    let server = Server::start(&dir, &h, &["--groups", "X25519MLKEM768"]);
    let ca = h.join("ca.pem");
    let ca = ca.to_str().expect("temp paths are UTF-8");
    let (out, client) = handshake(&dir, &server.addr, &["--ca", ca, "--count", "1"]);
    let (_, _, srv) = server.stop();
    assert!(out.status.success());
    assert_eq!(client.len(), 1);
    let c = &client[0];
    assert_eq!(c["outcome"], "ok", "{c}");
    assert_eq!(c["schema"], chainlab_engine::record::SCHEMA);
    assert_eq!(c["sigalg"], "slhdsa_shake_192s", "{c}");
    let s = paired(c, &srv);
    let server_cpu_ms = s["cpu_ns"].as_u64().expect("server cpu_ns") as f64 / 1e6;
    let client_cpu_ms = c["cpu_ns"].as_u64().expect("client cpu_ns") as f64 / 1e6;
    let total_ms = c["total_ns"].as_u64().expect("total_ns") as f64 / 1e6;
    eprintln!("SLH-DSA-SHAKE-192s leaf: latency {total_ms:.1} ms, server CPU {server_cpu_ms:.1} ms, client CPU {client_cpu_ms:.2} ms");
    // One SHAKE-192s signature is ~1.3 s here (openssl speed); even a much faster CPU stays
    // far above any ML-DSA handshake (~1 ms), so 0.3 s is a safe floor for "signed here".
    assert!(server_cpu_ms > 300.0, "server CPU {server_cpu_ms} ms");
    // The client verifies, it does not sign: it stays two orders of magnitude below.
    assert!(
        server_cpu_ms > 50.0 * client_cpu_ms,
        "{server_cpu_ms} vs {client_cpu_ms}"
    );
    // The latency the client sees is the server's signing time (it waits for CertificateVerify).
    assert!(
        total_ms >= server_cpu_ms * 0.9,
        "{total_ms} vs {server_cpu_ms}"
    );
}
