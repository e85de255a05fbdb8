//! The cross-stack suite's failures and refusals: every stack refuses each engine feature
//! its `info` does not list, in one line, from one table of the options that ask for them
//! (`ASKING`); every client against a root it does not trust and against a leaf whose
//! scheme it lacks records why, as its server does. The handshakes themselves are
//! `tests/stacks.rs`'s; the stacks are `chainlab_test_support::stacks::STACKS`.
//!
//! Every child is killed and reaped on drop and every wait is bounded, so a failing test
//! never leaves a process behind or hangs.

use std::path::Path;
use std::process::Command;

use chainlab_test_support::stacks::{
    binary, handshakes, has, info, pki, Server, REFUSED_CLIENT, STACKS,
};
use chainlab_test_support::TempDir;
use serde_json::Value;

const MLDSA: &str = "ML-DSA-65,ML-DSA-65";
const HYBRID: &str = "X25519MLKEM768";

/// An option asking for one engine feature (the features of chainlab-record's table, which
/// `info` lists): the subcommand line it is given on, the option itself, and the features
/// that line needs besides (an MTC client's options need the MTC client).
struct Asking {
    line: Line,
    option: &'static [&'static str],
    feature: &'static str,
    needs: &'static [&'static str],
}

/// The subcommand lines the options are given on.
#[derive(Clone, Copy)]
enum Line {
    Client,
    MtcClient,
    Server,
}

const fn asking(line: Line, option: &'static [&'static str], feature: &'static str) -> Asking {
    Asking {
        line,
        option,
        feature,
        needs: &[],
    }
}

/// Every option that asks for a feature some engine lacks.
const ASKING: &[Asking] = &[
    asking(Line::Client, &["--transport", "quic"], "quic"),
    asking(Line::Client, &["--random-seed", "1"], "seeded_random"),
    asking(Line::Server, &["--random-seed", "1"], "seeded_random"),
    asking(
        Line::Server,
        &["--prefer-server-groups"],
        "server_group_preference",
    ),
    asking(
        Line::Client,
        &["--signature-impl", "liboqs"],
        "signature_impl_liboqs",
    ),
    asking(Line::Client, &["--sigalgs", "mldsa65"], "client_sigalgs"),
    asking(Line::Client, &["--partial-chain"], "partial_chain"),
    asking(Line::Client, &["--resume-ratio", "0.5"], "resumption_mix"),
    asking(Line::Client, &["--defer-close"], "deferred_close"),
    asking(Line::Client, &["--trust-anchors", "1.2"], "trust_anchors"),
    asking(Line::Server, &["--trust-anchor-ids"], "trust_anchors"),
    asking(
        Line::Client,
        &["--client-profile", "chrome"],
        "client_profile",
    ),
    asking(Line::Client, &["--cert-pki", "PKI"], "client_auth"),
    asking(Line::Server, &["--client-ca", "PKI/ca.pem"], "client_auth"),
    asking(
        Line::Client,
        &["--untrusted", "PKI/ca.pem"],
        "untrusted_intermediates",
    ),
    asking(Line::MtcClient, &[], "mtc"),
    asking(Line::Server, &["--chain", "mtc-landmark"], "mtc"),
    Asking {
        needs: &["mtc"],
        ..asking(
            Line::MtcClient,
            &["--mtc-cosigners-required", "1"],
            "mtc_cosigners",
        )
    },
    Asking {
        needs: &["mtc"],
        ..asking(Line::MtcClient, &["--mtc-retry"], "mtc_retry")
    },
    Asking {
        needs: &["mtc"],
        ..asking(
            Line::Server,
            &["--chain", "mtc-landmark", "--mtc-retry-standalone"],
            "mtc_retry",
        )
    },
];

/// Features no engine option asks for, so `ASKING` has no row for them: probing servers
/// chainlab did not start (`targets`, validated by chainlab itself) and the early
/// experiments' MTC encoding (`mtc_experimental`, a property of a hierarchy, refused where its
/// trust file is read: chainlab-boring `tests/mtc.rs`).
const NO_OPTION: [&str; 2] = ["targets", "mtc_experimental"];

/// Every stack refuses each option whose feature its `info` does not list, before anything
/// runs: exit 2 and one line naming the missing capability. The table covers every feature
/// some stack lacks (but `NO_OPTION`'s).
#[test]
fn every_stack_refuses_each_feature_it_lacks_in_one_line() {
    let dir = TempDir::new("refuse");
    let pki = pki(&dir, MLDSA);
    let pki_dir = pki.to_str().expect("a UTF-8 path");
    let client = &REFUSED_CLIENT[..5];
    let mut refused = 0;
    for stack in STACKS {
        let lacking = ASKING
            .iter()
            .filter(|a| !has(stack, a.feature) && a.needs.iter().all(|n| has(stack, n)));
        for a in lacking {
            let line: Vec<String> = match a.line {
                Line::Client => REFUSED_CLIENT.to_vec(),
                Line::MtcClient => [client, &["--mtc-trust", "t.json"]].concat(),
                Line::Server => vec!["serve", "--pki", pki_dir],
            }
            .into_iter()
            .chain(a.option.iter().copied())
            .map(|arg| arg.replace("PKI", pki_dir))
            .collect();
            let out = chainlab_test_support::run_bounded(Command::new(binary(stack)).args(&line));
            let err = String::from_utf8_lossy(&out.stderr);
            let named = err.contains(&format!("missing capability: {}", a.feature));
            assert!(
                out.status.code() == Some(2) && named && err.trim().lines().count() == 1,
                "{stack} {line:?}: {:?} {err}",
                out.status.code()
            );
            refused += 1;
        }
    }
    // Every feature some stack lacks has its row (a new feature adds one), and every row's
    // feature is lacked by some stack, so each row ran at least once.
    let features: std::collections::BTreeSet<&str> = STACKS
        .iter()
        .flat_map(|s| info(s)["features"].as_array().expect("features"))
        .map(|f| f.as_str().expect("a name"))
        .collect();
    for f in features {
        let lacked = STACKS.iter().any(|s| !has(s, f));
        let asked = ASKING.iter().any(|a| a.feature == f) || NO_OPTION.contains(&f);
        assert!(
            !lacked || asked,
            "{f}: some stack lacks it and no ASKING row asks for it"
        );
    }
    for a in ASKING {
        assert!(
            STACKS.iter().any(|s| !has(s, a.feature)),
            "{}: every stack has it",
            a.feature
        );
    }
    assert!(refused >= ASKING.len(), "{refused} refusals");
}

/// Every stack's client against a chain whose root it does not trust (an ML-DSA-65 chain
/// from an OpenSSL 3.5 server, an ECDSA root trusted): the client records verify_failed,
/// and the server the client's alert.
#[test]
fn every_client_refuses_a_chain_from_a_root_it_does_not_trust() {
    let dir = TempDir::new("untrusted-root");
    let other = pki(&dir, "ECDSA-P256,ECDSA-P256");
    let ml = pki(&dir, MLDSA);
    for client in STACKS {
        let (c, s) = &first_records(client, &ml, &other.join("ca.pem"));
        assert_eq!(c["error_category"], "verify_failed", "{client}: {c}");
        assert_eq!(s["error_category"], "tls_alert", "{client}: {s}");
    }
}

/// Every stack whose client has no SLH-DSA scheme (its `info` lists its algorithms) against
/// an OpenSSL 3.5 server with an SLH-DSA leaf: the server names the cause
/// (no_shared_sigalg); the client reads a handshake_failure alert in reply to its
/// ClientHello, which the wire leaves ambiguous, and (with every scheme offered) records
/// no_shared_group, as the OpenSSL engine's client does.
#[test]
fn a_client_without_the_leafs_scheme_is_refused_and_both_sides_record_why() {
    let dir = TempDir::new("no-scheme");
    let slh = pki(&dir, "SLH-DSA-SHAKE-128f,SLH-DSA-SHAKE-128f");
    let without: Vec<_> = STACKS
        .into_iter()
        .filter(|s| {
            info(s)["signature_algorithms"]
                .as_array()
                .is_some_and(|algs| !algs.iter().any(|a| a["algorithm"] == "SLH-DSA-SHAKE-128f"))
        })
        .collect();
    assert!(without.len() >= 3, "{without:?}");
    for client in without {
        let (c, s) = &first_records(client, &slh, &slh.join("ca.pem"));
        assert_eq!(c["outcome"], "failed", "{client}: {c}");
        assert_eq!(c["error_category"], "no_shared_group", "{client}: {c}");
        assert_eq!(s["error_category"], "no_shared_sigalg", "{client}: {s}");
    }
}

/// The first client and server records of `client`'s handshakes against an OpenSSL 3.5
/// server of hierarchy `pki`, trusting `ca`.
fn first_records(client: &str, pki: &Path, ca: &Path) -> (Value, Value) {
    let srv = Server::start("openssl-3.5", pki, HYBRID, &[]);
    let clients = handshakes(client, &srv, ca, HYBRID, &[]);
    let servers = srv.stop();
    (clients[0].clone(), servers[0].clone())
}
