//! Tests that pair the stacks' binaries: hierarchies from the OpenSSL 3.5 engine's `pki`, a
//! `serve` of any stack recording beside its hierarchy, and a bounded `handshake` client of
//! any stack; and what the cross-stack suite parametrises over (`STACKS`, each one's `info`
//! and what it says the stack has, the pairs of stacks that have something).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

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

/// The line of a `handshake` client whose options are refused before it connects: one attempt
/// at loopback's port 9, where nothing listens, without verification (an MTC client, whose
/// trust file conflicts with `--no-verify`, takes the first five).
pub const REFUSED_CLIENT: [&str; 6] = [
    "handshake",
    "--connect",
    "127.0.0.1:9",
    "--count",
    "1",
    "--no-verify",
];

/// Every client record succeeded and is the same connection as the server's, byte for
/// byte from both ends, each side with its CPU and the peer's close_notify; where a server
/// records its whole connection's CPU, that is at least its handshake's.
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
        if let (Some(conn), Some(handshake)) = (s["conn_cpu_ns"].as_u64(), s["cpu_ns"].as_u64()) {
            assert!(conn >= handshake, "{label}: {s}");
        }
    }
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

// -- the cross-stack suite's parameter (tests/stacks.rs, tests/stacks_refusals.rs) --------

/// Every stack, the cross-stack suite's parameter.
pub const STACKS: [&str; 5] = ["openssl-3.5", "openssl-4.0", "boringssl", "rustls", "go"];
/// The post-quantum groups of an OpenSSL engine (its `info` lists none: OpenSSL has them
/// all, the other stacks' `info` lists theirs).
const OPENSSL_PQ_GROUPS: [&str; 4] = [
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "MLKEM768",
    "MLKEM1024",
];

/// Each stack's `info`, read once.
pub fn info(stack: &str) -> &'static Value {
    static INFO: OnceLock<BTreeMap<&'static str, Value>> = OnceLock::new();
    let all = INFO.get_or_init(|| {
        STACKS
            .iter()
            .map(|&s| {
                let out = crate::run_bounded(Command::new(binary(s)).arg("info"));
                assert!(out.status.success(), "{s} info");
                (
                    s,
                    serde_json::from_slice(&out.stdout).expect("info is JSON"),
                )
            })
            .collect()
    });
    &all[stack]
}

/// Whether a stack's engine has a feature (`info`'s `features`).
pub fn has(stack: &str, feature: &str) -> bool {
    info(stack)["features"]
        .as_array()
        .expect("info lists features")
        .iter()
        .any(|f| f == feature)
}

/// The certificate compressions a stack's engine has (an OpenSSL engine's: every one).
pub fn compressions(stack: &str) -> Vec<String> {
    match info(stack)["cert_compressions"].as_array() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect(),
        None => ["zlib", "brotli", "zstd"].map(String::from).to_vec(),
    }
}

/// A stack's post-quantum key-exchange groups (hybrid or pure ML-KEM).
pub fn pq_groups(stack: &str) -> Vec<String> {
    match info(stack)["groups"].as_array() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .filter(|n| n.contains("MLKEM"))
            .collect(),
        None => OPENSSL_PQ_GROUPS.map(String::from).to_vec(),
    }
}

/// Every ordered (server, client) pair of the stacks for which `both` holds of each.
pub fn pairs(both: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    let stacks: Vec<_> = STACKS.into_iter().filter(|s| both(s)).collect();
    stacks
        .iter()
        .flat_map(|&server| stacks.iter().map(move |&client| (server, client)))
        .collect()
}
