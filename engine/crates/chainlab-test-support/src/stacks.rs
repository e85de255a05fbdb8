//! Tests that pair the stacks' binaries: hierarchies from the OpenSSL 3.5 engine's `pki`, a
//! `serve` of any stack recording beside its hierarchy, and a bounded `handshake` client of
//! any stack.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub use crate::{binary, read_records, target_dir, TempDir, DEADLINE};

pub fn pki(dir: &TempDir, chain: &str) -> PathBuf {
    pki_with(dir, chain, &[])
}

/// A hierarchy from the 3.5 engine's `pki` with extra flags (e.g. `--mtc-batch`).
pub fn pki_with(dir: &TempDir, chain: &str, extra: &[&str]) -> PathBuf {
    let out = dir.0.join(chain.replace(',', "_"));
    let output = crate::run_bounded(
        Command::new(binary("openssl-3.5"))
            .args(["pki", "--chain", chain, "--out"])
            .arg(&out)
            .args(extra),
    );
    assert!(
        output.status.success(),
        "pki --chain {chain}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// A `serve` process of a stack, killed on drop.
pub struct Server {
    child: Child,
    pub addr: String,
    records: PathBuf,
    pub ready: Value,
}

impl Server {
    pub fn start(stack: &str, pki: &Path, groups: &str, extra: &[&str]) -> Server {
        let records = pki.with_extension(format!("{stack}-server-{}.jsonl", groups));
        let (child, ready) = crate::spawn_ready(
            Command::new(binary(stack))
                .arg("serve")
                .arg("--pki")
                .arg(pki)
                .args(["--groups", groups, "--records"])
                .arg(&records)
                .args(extra)
                .stderr(Stdio::inherit()),
            DEADLINE,
        );
        Server {
            child,
            addr: ready["addr"].as_str().expect("addr").to_owned(),
            records,
            ready,
        }
    }

    /// Stops the server (SIGTERM, as the runner does) and returns its connections' records
    /// (not the serving threads' accounts).
    pub fn stop(self) -> Vec<Value> {
        self.stop_with_accounts().0
    }

    /// Stops the server as `stop` does: its connections' records, and the serving threads'
    /// accounts (`server_thread` records).
    pub fn stop_with_accounts(mut self) -> (Vec<Value>, Vec<Value>) {
        // SAFETY: kill(2) on our own child's pid, not yet reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = crate::wait_bounded(&mut self.child, DEADLINE);
        assert!(status.success(), "server exit status {status}");
        read_records(&self.records)
            .into_iter()
            .filter(|r| r["side"] != "generator")
            .partition(|r| r["side"] == "server")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `handshake` client of `stack` against `server` with exactly `args` (bounded); its
/// records.
pub fn client(stack: &str, server: &Server, args: &[&str]) -> Vec<Value> {
    let out = crate::run_bounded(
        Command::new(binary(stack))
            .args(["handshake", "--connect", &server.addr])
            .args(args),
    );
    assert!(
        out.status.success(),
        "{stack} client exit status: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::parse_lines(&String::from_utf8(out.stdout).expect("UTF-8 records"))
}

/// Three handshakes of a `handshake` client of `stack` against `server`, trusting `ca`,
/// offering `groups`, with `extra` flags.
pub fn handshakes(
    stack: &str,
    server: &Server,
    ca: &Path,
    groups: &str,
    extra: &[&str],
) -> Vec<Value> {
    let mut args = vec![
        "--ca",
        ca.to_str().expect("a UTF-8 path"),
        "--groups",
        groups,
        "--count",
        "3",
    ];
    args.extend_from_slice(extra);
    client(stack, server, &args)
}

/// Every client record succeeded and is the same connection as the server's, byte for
/// byte from both ends, each side with its CPU and the peer's close_notify.
pub fn same_connections(label: &str, clients: &[Value], servers: &[Value]) {
    assert_eq!(clients.len(), servers.len(), "{label}");
    for (c, s) in clients.iter().zip(servers) {
        assert_eq!(c["outcome"], "ok", "{label}: {c}");
        assert_eq!(s["outcome"], "ok", "{label}: {s}");
        assert_eq!(c["conn_id"], s["conn_id"], "{label}: one connection");
        assert!(c["conn_id"].is_string(), "{label}");
        assert_eq!(
            c["bytes_read"], s["bytes_written"],
            "{label}: server flight"
        );
        assert_eq!(
            c["bytes_written"], s["bytes_read"],
            "{label}: client flight"
        );
        assert_eq!(c["conn_bytes_read"], s["conn_bytes_written"], "{label}");
        assert_eq!(c["conn_bytes_written"], s["conn_bytes_read"], "{label}");
        for r in [c, s] {
            assert_eq!(r["peer_close_notify"], true, "{label}: {r}");
            assert!(r["cpu_ns"].as_u64().unwrap_or(0) > 0, "{label}: {r}");
        }
    }
}

/// A stack's handshakes with itself over each of `groups` (an ML-DSA-65 hierarchy): the
/// ready line and every record name the stack, each is one connection from both ends
/// (`same_connections`, then `check` on the client and server records and the server's
/// accounts), over the group, signed with ML-DSA-65, a full handshake.
pub fn handshakes_with_itself(
    stack: &str,
    groups: &[&str],
    check: impl Fn(&str, &[Value], &[Value], &[Value]),
) {
    let dir = TempDir::new(&format!("{stack}-self"));
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65");
    for &group in groups {
        let srv = Server::start(stack, &pki, group, &[]);
        assert_eq!(srv.ready["stack"], stack);
        let clients = handshakes(stack, &srv, &pki.join("ca.pem"), group, &[]);
        let (servers, accounts) = srv.stop_with_accounts();
        same_connections(group, &clients, &servers);
        check(group, &clients, &servers, &accounts);
        for r in clients.iter().chain(&servers) {
            assert_eq!(r["stack"], stack);
            assert_eq!(r["group"], group, "{r}");
            assert_eq!(r["sigalg"], "mldsa65", "{r}");
            assert_eq!(r["resumed"], false);
        }
    }
}

/// A dual-chain server on `stack` (an ML-DSA-65 chain, and an ECDSA P-256 one through
/// `--second-pki`) sends each client the chain its signature schemes ask for: three
/// post-quantum handshakes from OpenSSL 3.5 get the ML-DSA chain (`chain_index` 0), then three
/// from `classical` offering `sigalgs` (ECDSA P-256 first) the ECDSA one (1), each signed
/// with its chain's leaf.
pub fn dual_chain_by_schemes(stack: &str, classical: &str, sigalgs: &str) {
    let dir = TempDir::new(&format!("{stack}-dual"));
    let ml = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let ec = pki(&dir, "ECDSA-P256,ECDSA-P256");
    let trust = dir.0.join("trust.pem");
    let both = [ml.join("ca.pem"), ec.join("ca.pem")].map(|p| std::fs::read(p).unwrap());
    std::fs::write(&trust, both.concat()).unwrap();
    let hybrid = "X25519MLKEM768";
    let srv = Server::start(stack, &ml, hybrid, &["--second-pki", ec.to_str().unwrap()]);
    let mut clients = handshakes("openssl-3.5", &srv, &trust, hybrid, &[]);
    clients.extend(handshakes(
        classical,
        &srv,
        &trust,
        hybrid,
        &["--sigalgs", sigalgs],
    ));
    let servers = srv.stop();
    same_connections("dual", &clients, &servers);
    let got: Vec<_> = servers.iter().map(|s| s["chain_index"].clone()).collect();
    assert_eq!(got, [0, 0, 0, 1, 1, 1], "{servers:?}");
    assert_eq!(clients[3]["sigalg"], "ecdsa_secp256r1_sha256");
    assert_eq!(servers[3]["sigalg"], "ecdsa_secp256r1_sha256");
    assert_eq!(clients[0]["sigalg"], "mldsa65");
}

/// A server that writes one account for its whole process (the Go engine's): every recorded connection counted, their
/// CPU summed, the rest the process's own.
pub fn one_account(label: &str, servers: &[Value], accounts: &[Value]) {
    assert_eq!(accounts.len(), 1, "{label}: {accounts:?}");
    let a = &accounts[0];
    assert_eq!(a["side"], "server_thread", "{label}: {a}");
    assert_eq!(a["connections"], servers.len() as u64, "{label}: {a}");
    let conn: u64 = servers
        .iter()
        .filter_map(|s| s["conn_cpu_ns"].as_u64())
        .sum();
    assert_eq!(a["conn_cpu_ns"], conn, "{label}: {a}");
    let (cpu, wait) = (
        a["cpu_ns"].as_u64().unwrap(),
        a["wait_cpu_ns"].as_u64().unwrap(),
    );
    assert_eq!(cpu, conn + wait, "{label}: {a}");
}

/// A stack's `primitives` with `args`: its exit code, its records and its standard error.
pub fn primitives(stack: &str, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let out = crate::run_bounded(Command::new(binary(stack)).arg("primitives").args(args));
    let records = crate::parse_lines(&String::from_utf8(out.stdout).expect("UTF-8 records"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), records, err)
}

/// Every key-exchange operation of each of a stack's groups writes one record per operation
/// (`primitives --subject <group> --op <op>`): a KEM or a hybrid has keygen, encaps and
/// decaps, a Diffie-Hellman group (`kem` false) keygen and derive.
pub fn times_key_exchange(stack: &str, groups: &[(&str, bool)]) {
    for (group, kem) in groups {
        let ops: &[&str] = if *kem {
            &["keygen", "encaps", "decaps"]
        } else {
            &["keygen", "derive"]
        };
        for op in ops {
            let (code, records, err) =
                primitives(stack, &["--subject", group, "--op", op, "--count", "2"]);
            assert_eq!(code, Some(0), "{stack} {group} {op}: {err}");
            assert_eq!(records.len(), 3, "one warm-up and two timed");
            assert!(records.iter().all(|r| r["subject"] == *group
                && r["op"] == *op
                && r["message_bytes"].is_null()
                && r["cpu_ns"].as_u64().is_some_and(|ns| ns > 0)));
        }
    }
}

/// A stack's generator (`load`) offers a schedule to its own server's event loops
/// (`--server-model event --workers 2`) over an ML-DSA-65 hierarchy: every attempt is
/// started and completes, the server records each connection under the event model with
/// its scheme, and both sides count the same bytes.
pub fn loads_its_own_event_driven_server(stack: &str) {
    let (clients, servers) = load_own_server(stack, &["--workers", "2"], &[]);
    for (c, s) in clients.iter().zip(&servers) {
        assert_eq!(c["outcome"], "ok", "{c}");
        assert_eq!(c["stack"], stack);
        assert_eq!(s["server_model"], "event");
        assert_eq!(s["sigalg"], "mldsa65", "{s}");
        assert_eq!(c["conn_bytes_written"], s["conn_bytes_read"]);
        assert_eq!(c["conn_bytes_read"], s["conn_bytes_written"]);
    }
}

/// `stack` and each of `others`, as server and as client of each other, over a hierarchy of
/// an ML-DSA-65 root, an ML-DSA-44 intermediate and an ECDSA-P256 leaf: each handshake takes
/// the hybrid group and the leaf's scheme, both sides record the same connections, and every
/// client observed the same two certificates, field by field.
pub fn same_chain_both_ways(stack: &str, others: &[&str]) {
    let dir = TempDir::new(&format!("{stack}-chains"));
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-44,ECDSA-P256");
    let ca = pki.join("ca.pem");
    let mut chains = Vec::new();
    for other in others {
        for (server, client_stack) in [(stack, *other), (*other, stack)] {
            let srv = Server::start(server, &pki, "X25519MLKEM768", &[]);
            let clients = handshakes(client_stack, &srv, &ca, "X25519MLKEM768", &[]);
            let servers = srv.stop();
            let label = format!("{client_stack} -> {server}");
            same_connections(&label, &clients, &servers);
            for r in clients.iter().chain(&servers) {
                assert_eq!(r["group"], "X25519MLKEM768", "{label}: {r}");
                assert_eq!(r["sigalg"], "ecdsa_secp256r1_sha256", "{label}: {r}");
            }
            chains.push(clients[0]["peer_chain"].clone());
        }
    }
    for chain in &chains[1..] {
        assert_eq!(chain, &chains[0]);
    }
    assert_eq!(chains[0].as_array().map(Vec::len), Some(2));
    assert_eq!(chains[0][1]["key_alg"], "ML-DSA-44");
    assert_eq!(chains[0][1]["sig_alg"], "ML-DSA-65");
}

/// Each (server stack, client stack) of `pairs` resumes with the server's tickets over an
/// ML-DSA-65 hierarchy: a full handshake, then two resumed ones without a CertificateVerify
/// or a chain, and each connection's bytes the other side's.
pub fn resumes_across(pairs: &[(&str, &str)]) {
    let dir = TempDir::new("resume");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let ca = pki.join("ca.pem");
    for (server, client_stack) in pairs {
        let label = format!("{client_stack} -> {server}");
        let srv = Server::start(server, &pki, "X25519MLKEM768", &["--tickets", "1"]);
        let clients = handshakes(client_stack, &srv, &ca, "X25519MLKEM768", &["--resume"]);
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
}

/// A stack's client certificates across stacks: its server and the OpenSSL 3.5 engine's, each
/// way and on itself, with an ML-DSA-44 client hierarchy over an ML-DSA-65 server's: sent,
/// checked and recorded by the server; refused by a server that trusts another client CA,
/// which both sides record as `client_cert_rejected`.
pub fn client_certificates_across(stack: &str) {
    let dir = TempDir::new(&format!("{stack}-mtls"));
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let client_pki = pki_with(&dir, "ML-DSA-44,ML-DSA-44", &["--purpose", "client"]);
    let other_ca = pki_with(&dir, "ECDSA-P256,ECDSA-P256", &["--purpose", "client"]);
    let ca = pki.join("ca.pem");
    let cert = ["--cert-pki", client_pki.to_str().expect("UTF-8 path")];
    for (server, client_stack) in [
        (stack, stack),
        (stack, "openssl-3.5"),
        ("openssl-3.5", stack),
    ] {
        let label = format!("{client_stack} -> {server}");
        for (anchors, accepted) in [
            (client_pki.join("ca.pem"), true),
            (other_ca.join("ca.pem"), false),
        ] {
            let srv = Server::start(
                server,
                &pki,
                "X25519MLKEM768",
                &["--client-ca", anchors.to_str().expect("UTF-8 path")],
            );
            let clients = handshakes(client_stack, &srv, &ca, "X25519MLKEM768", &cert);
            let servers = srv.stop();
            if accepted {
                same_connections(&label, &clients, &servers);
                assert_eq!(
                    servers[0]["peer_chain"][0]["key_alg"], "ML-DSA-44",
                    "{label}"
                );
            } else {
                for r in clients.iter().chain(&servers) {
                    assert_eq!(r["error_category"], "client_cert_rejected", "{label}: {r}");
                }
            }
        }
    }
}

/// A stack's generator (`load`, with `load_extra`) offers 50 attempts in a second (and one
/// warm-up, at most 8 in flight) to its own event-model server (with `server_extra`) over
/// an ML-DSA-65 hierarchy; every attempt is started and recorded by both sides. Returns the
/// client's records and the server's paired with them (by conn_id).
pub fn load_own_server(
    stack: &str,
    server_extra: &[&str],
    load_extra: &[&str],
) -> (Vec<Value>, Vec<Value>) {
    let dir = TempDir::new("load");
    let pki = pki(&dir, "ML-DSA-65,ML-DSA-65");
    let srv = Server::start(
        stack,
        &pki,
        "X25519MLKEM768",
        &[&["--server-model", "event"], server_extra].concat(),
    );
    assert_eq!(srv.ready["server_model"], "event", "{}", srv.ready);
    let out = crate::run_bounded(
        Command::new(binary(stack))
            .args(["load", "--connect", &srv.addr, "--ca"])
            .arg(pki.join("ca.pem"))
            .args([
                "--rate",
                "50",
                "--duration-ms",
                "1000",
                "--max-in-flight",
                "8",
            ])
            .args(["--warmup", "1"])
            .args(load_extra),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut records = crate::parse_lines(&String::from_utf8(out.stdout).expect("UTF-8"));
    let generator = records.pop().expect("the generator's record");
    assert_eq!(generator["side"], "generator", "{generator}");
    assert_eq!(generator["scheduled"], 50);
    assert_eq!(generator["started"], 50);
    let servers = srv.stop();
    assert_eq!(records.len(), 51, "one record per attempt and the warm-up");
    assert_eq!(servers.len(), 51, "{servers:?}");
    let paired = records
        .iter()
        .map(|c| crate::paired(c, &servers).clone())
        .collect();
    (records, paired)
}
