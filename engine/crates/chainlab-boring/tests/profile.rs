//! `--client-profile chrome`: Chrome's ClientHello from a BoringSSL client completes against
//! every server stack with the ML-DSA-65 baseline (its ML-DSA schemes and X25519MLKEM768
//! offered first), writes more than the engine's own ClientHello, and what would change
//! the profile's ClientHello is refused in one line.

use chainlab_test_support::stacks as common;

use std::process::Command;

use common::{binary, client, pki, Server, TempDir, REFUSED_CLIENT};

const BORING: &str = "boringssl";
const GROUP: &str = "X25519MLKEM768";

#[test]
fn a_chrome_client_hello_completes_on_every_server_stack() {
    let dir = TempDir::new("profile");
    let h = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let ca = h.join("ca.pem");
    for server_stack in ["boringssl", "openssl-3.5", "rustls"] {
        let server = Server::start(server_stack, &h, GROUP, &[]);
        let base = [
            "--ca",
            ca.to_str().unwrap(),
            "--groups",
            GROUP,
            "--count",
            "3",
        ];
        let chrome = client(
            BORING,
            &server,
            &[&base[..], &["--client-profile", "chrome"]].concat(),
        );
        let own = client(BORING, &server, &base);
        server.stop();
        let written = |r: &serde_json::Value| r["bytes_written"].as_u64().unwrap();
        for c in &chrome {
            assert_eq!(c["outcome"], "ok", "{server_stack}: {c}");
            assert_eq!(c["sigalg"], "mldsa65", "{server_stack}");
            assert_eq!(c["group"], "X25519MLKEM768", "{server_stack}");
            // Two key shares (X25519MLKEM768's 1,216 bytes and X25519's 32), TLS 1.2's
            // cipher suites, ALPN, GREASE and a GREASE ECH extension, beside the engine's
            // one share: hundreds of bytes more.
            assert!(
                written(c) > written(&own[0]) + 100,
                "{server_stack}: {} vs {}",
                written(c),
                written(&own[0])
            );
        }
    }
}

#[test]
fn what_would_change_the_profile_is_refused_in_one_line() {
    let client_args = [&REFUSED_CLIENT[..], &["--client-profile", "chrome"]].concat();
    for (extra, want) in [
        (
            &["--sigalgs", "mldsa65"][..],
            "--sigalgs with --client-profile chrome",
        ),
        (
            &["--groups", "X25519"][..],
            "allowed: --groups X25519MLKEM768",
        ),
        (
            &["--cert-compression", "zlib"][..],
            "allowed: none or brotli",
        ),
    ] {
        let out = Command::new(binary(BORING))
            .args(&client_args)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    for stack in ["openssl-3.5", "rustls"] {
        let out = Command::new(binary(stack))
            .args(&client_args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && err.contains("missing capability: client_profile"),
            "{stack}: {err}"
        );
    }
}
