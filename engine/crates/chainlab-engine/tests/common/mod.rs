//! Helpers for the engine's integration tests: hierarchies made by the real `pki`
//! subcommand, a `serve` process on 127.0.0.1 port 0 waited for through its ready line, and
//! `handshake` runs. Every child is killed and reaped on drop, and every wait is bounded, so
//! a failing test never leaves a process behind or hangs.

#![allow(dead_code)] // each test binary uses a different subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any engine process may take in a test before it is killed and the test fails.
pub const PROCESS_DEADLINE: Duration = Duration::from_secs(30);

pub fn engine() -> &'static str {
    env!("CARGO_BIN_EXE_chainlab-engine")
}

/// A directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "chainlab-engine-test-{}-{tag}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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
pub fn der_sizes(pem_file: &Path) -> Vec<usize> {
    let pem = std::fs::read(pem_file).unwrap();
    openssl::x509::X509::stack_from_pem(&pem)
        .unwrap()
        .iter()
        .map(|c| c.to_der().unwrap().len())
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
        let mut child = Command::new(engine())
            .arg("serve")
            .arg("--pki")
            .arg(pki)
            .arg("--records")
            .arg(&records)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(line) if !line.is_empty() => line,
            _ => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "serve printed no ready line: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        };
        let ready: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(ready["event"], "ready", "{line}");
        let addr = ready["addr"].as_str().unwrap().to_owned();
        Server {
            child: Some(child),
            ready,
            addr,
            records: records.clone(),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// Sockets the server process holds open (listener, accepted connections), from /proc.
    pub fn open_sockets(&self) -> usize {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid())).unwrap();
        fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count()
    }

    /// Every descriptor the server process holds open, from /proc.
    pub fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    /// Waits (bounded) until the server holds at most `n` descriptors.
    pub fn wait_for_fds(&self, n: usize) {
        let deadline = Instant::now() + PROCESS_DEADLINE;
        while self.fds() > n {
            assert!(
                Instant::now() < deadline,
                "the server still holds {} descriptors, {n} before: {:?}",
                self.fds(),
                std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
                    .unwrap()
                    .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) until the server holds `n` sockets: a connection made from the test
    /// counts once the server has accepted it, however long its accept loop took.
    pub fn wait_for_sockets(&self, n: usize) {
        let deadline = Instant::now() + PROCESS_DEADLINE;
        while self.open_sockets() < n {
            assert!(
                Instant::now() < deadline,
                "the server never held {n} sockets"
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
        let status = wait_bounded(self.child.as_mut().unwrap(), PROCESS_DEADLINE);
        let took = started.elapsed();
        self.child = None;
        let (records, accounts) = read_records(&self.records)
            .into_iter()
            .partition(|r| r["side"] == "server");
        (status, took, records, accounts)
    }

    /// Waits (bounded) for the server to exit by itself.
    pub fn wait(&mut self) -> ExitStatus {
        let status = wait_bounded(self.child.as_mut().unwrap(), PROCESS_DEADLINE);
        self.child = None;
        status
    }

    /// SIGKILL, reaped.
    pub fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        let _ = child.kill();
        let _ = child.wait();
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

/// Spawns a command with piped output and waits for it, killing it after the deadline.
pub fn run_bounded(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let status = wait_bounded(&mut child, PROCESS_DEADLINE);
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn read_all(mut r: impl std::io::Read) -> Vec<u8> {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf);
    buf
}

/// Waits for a child; kills it and panics after `deadline`.
pub fn wait_bounded(child: &mut Child, deadline: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process {} still running after {deadline:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every line of a JSON Lines file (missing file = no records).
pub fn read_records(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad record {l:?}: {e}")))
        .collect()
}

/// The server record with the same conn_id as a client record.
pub fn paired<'a>(client: &Value, server: &'a [Value]) -> &'a Value {
    let id = client["conn_id"]
        .as_str()
        .unwrap_or_else(|| panic!("client record without conn_id: {client}"));
    let matches: Vec<_> = server.iter().filter(|s| s["conn_id"] == id).collect();
    assert_eq!(matches.len(), 1, "conn_id {id} on the server: {matches:?}");
    matches[0]
}
