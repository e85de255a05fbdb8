//! The OpenSSL engine's own tests: hierarchies made by its `pki` subcommand, a `serve`
//! process on 127.0.0.1 port 0 recording into the test's directory, and `handshake` runs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::{paired, read_records, run_bounded, wait_bounded, TempDir};

/// How long any engine process may take in a test before it is killed and the test fails.
pub const PROCESS_DEADLINE: Duration = crate::DEADLINE;

/// The engine these tests were built with (this target directory's `chainlab-engine`).
pub fn engine() -> PathBuf {
    crate::built("chainlab-engine")
}

/// Generates a hierarchy with `chainlab-engine pki` into `dir/name`.
pub fn pki(dir: &TempDir, name: &str, chain: &str, seed: &str) -> PathBuf {
    pki_for(dir, name, chain, seed, "server")
}

/// Generates a hierarchy whose leaf authenticates `purpose` ("server" or "client").
pub fn pki_for(dir: &TempDir, name: &str, chain: &str, seed: &str, purpose: &str) -> PathBuf {
    let out = dir.join(name);
    let output = run_bounded(
        Command::new(engine())
            .args([
                "pki",
                "--chain",
                chain,
                "--seed",
                seed,
                "--purpose",
                purpose,
                "--out",
            ])
            .arg(&out),
    );
    assert!(
        output.status.success(),
        "pki --chain {chain} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// DER sizes of the certificates in a PEM file, in file order.
#[cfg(feature = "openssl")]
pub fn der_sizes(pem_file: &Path) -> Vec<usize> {
    let pem = std::fs::read(pem_file).expect("reading a PEM file");
    openssl::x509::X509::stack_from_pem(&pem)
        .expect("PEM certificates")
        .iter()
        .map(|c| c.to_der().expect("DER").len())
        .collect()
}

/// A running `serve` process.
pub struct Server {
    child: Option<Child>,
    pub ready: Value,
    pub addr: String,
    pub records: PathBuf,
}

impl Server {
    /// Starts `serve --pki <pki> --records <dir>/server-N.jsonl <extra>` and waits for the
    /// ready line.
    pub fn start(dir: &TempDir, pki: &Path, extra: &[&str]) -> Server {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let records = dir.join(&format!(
            "server-{}.jsonl",
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let (child, ready) = crate::spawn_ready(
            Command::new(engine())
                .arg("serve")
                .arg("--pki")
                .arg(pki)
                .arg("--records")
                .arg(&records)
                .args(extra)
                .stderr(Stdio::piped()),
            Duration::from_secs(5),
        );
        let addr = ready["addr"].as_str().expect("addr").to_owned();
        Server {
            child: Some(child),
            ready,
            addr,
            records,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("a running server").id() as i32
    }

    /// Every descriptor the server process holds open, from /proc.
    pub fn fds(&self) -> usize {
        self.fd_targets().len()
    }

    fn fd_targets(&self) -> Vec<PathBuf> {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .expect("/proc/<pid>/fd")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .collect()
    }

    /// Waits (bounded) until the server holds at most `n` descriptors.
    pub fn wait_for_fds(&self, n: usize) {
        let deadline = Instant::now() + PROCESS_DEADLINE;
        while self.fds() > n {
            assert!(
                Instant::now() < deadline,
                "the server still holds {} descriptors, {n} before: {:?}",
                self.fds(),
                self.fd_targets()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) until the server holds the accepted socket of the TCP connection whose
    /// client end is `peer` (a connection made from the test counts once the server has
    /// accepted it, however long its accept loop took). Matched by the kernel's socket table
    /// (`/proc/<pid>/net/tcp`, the connection's inode among the server's descriptors), so
    /// the server's other connections closing meanwhile cannot be mistaken for it.
    pub fn wait_for_peer(&self, peer: std::net::SocketAddr) {
        let deadline = Instant::now() + PROCESS_DEADLINE;
        let remote_port = format!(":{:04X}", peer.port());
        loop {
            let table = std::fs::read_to_string(format!("/proc/{}/net/tcp", self.pid()))
                .expect("/proc/<pid>/net/tcp");
            let held = self.fd_targets();
            let accepted = table.lines().skip(1).any(|line| {
                let cols: Vec<&str> = line.split_whitespace().collect();
                cols.len() > 9
                    && cols[2].ends_with(&remote_port)
                    && held
                        .iter()
                        .any(|t| t.to_string_lossy() == format!("socket:[{}]", cols[9]))
            });
            if accepted {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server never accepted the connection from {peer}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: signalling our own child, which has not been reaped yet.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Sends SIGTERM and waits (bounded); returns the exit status, how long the exit took
    /// and the connections' records.
    pub fn stop(self) -> (ExitStatus, Duration, Vec<Value>) {
        let (status, took, records, _) = self.stop_with_accounts();
        (status, took, records)
    }

    /// `stop`, and the serving threads' accounts (`side: "server_thread"`) apart.
    pub fn stop_with_accounts(mut self) -> (ExitStatus, Duration, Vec<Value>, Vec<Value>) {
        self.signal(libc::SIGTERM);
        let started = Instant::now();
        let status = self.wait();
        let took = started.elapsed();
        let (records, accounts) = read_records(&self.records)
            .into_iter()
            .partition(|r| r["side"] == "server");
        (status, took, records, accounts)
    }

    /// Waits (bounded) for the server to exit by itself.
    pub fn wait(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("a running server");
        wait_bounded(&mut child, PROCESS_DEADLINE)
    }

    /// SIGKILL, reaped.
    pub fn kill(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `handshake --connect <addr> --records <file> <args>` to completion (bounded).
pub fn handshake(dir: &TempDir, addr: &str, args: &[&str]) -> (Output, Vec<Value>) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let records = dir.join(&format!(
        "client-{}.jsonl",
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    let output = run_bounded(
        Command::new(engine())
            .args(["handshake", "--connect", addr, "--records"])
            .arg(&records)
            .args(args),
    );
    (output, read_records(&records))
}

/// A successful record of this schema.
pub fn ok(record: &Value) {
    assert_eq!(
        record["schema"],
        chainlab_record::record::SCHEMA,
        "{record}"
    );
    assert_eq!(record["outcome"], "ok", "{record}");
    assert!(record["error_category"].is_null(), "{record}");
}

/// The measured (not warm-up) records.
pub fn measured(records: &[Value]) -> Vec<&Value> {
    records.iter().filter(|r| r["warmup"] == false).collect()
}

/// A record's unsigned field; panics naming it when missing.
pub fn u64_of(record: &Value, field: &str) -> u64 {
    record[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {record}"))
}
