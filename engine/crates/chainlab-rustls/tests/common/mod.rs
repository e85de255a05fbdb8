//! What the cross-stack tests share: the engines' binaries, temporary directories, `pki`,
//! a `serve` process killed on drop, and a bounded `handshake` client.
#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a server may take to print its ready line, and a client to finish its batch.
pub const DEADLINE: Duration = Duration::from_secs(30);

pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// The binary of a stack; a missing one fails the test with how to build it.
pub fn binary(stack: &str) -> PathBuf {
    let path = match stack {
        "rustls" => PathBuf::from(env!("CARGO_BIN_EXE_chainlab-rustls")),
        "openssl-3.5" => target_dir().join("release/chainlab-engine"),
        "openssl-4.0" => target_dir().join("openssl-4.0/release/chainlab-engine"),
        other => panic!("unknown stack {other}"),
    };
    assert!(
        path.is_file(),
        "{stack}: no engine at {} (build every stack with `make engine`)",
        path.display()
    );
    path
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "chainlab-rustls-test-{}-{tag}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn pki(dir: &TempDir, chain: &str) -> PathBuf {
    pki_with(dir, chain, &[])
}

/// A hierarchy from the 3.5 engine's `pki` with extra flags (e.g. `--mtc-batch`).
pub fn pki_with(dir: &TempDir, chain: &str, extra: &[&str]) -> PathBuf {
    let out = dir.0.join(chain.replace(',', "_"));
    let status = Command::new(binary("openssl-3.5"))
        .args(["pki", "--chain", chain, "--out"])
        .arg(&out)
        .args(extra)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "pki --chain {chain}");
    out
}

/// A `serve` process, killed on drop.
pub struct Server {
    child: Child,
    pub addr: String,
    records: PathBuf,
    pub ready: Value,
}

impl Server {
    pub fn start(stack: &str, pki: &Path, groups: &str, extra: &[&str]) -> Server {
        let records = pki.with_extension(format!("{stack}-server-{}.jsonl", groups));
        let mut child = Command::new(binary(stack))
            .arg("serve")
            .arg("--pki")
            .arg(pki)
            .args(["--groups", groups, "--records"])
            .arg(&records)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(DEADLINE).expect("ready line");
        let ready: Value = serde_json::from_str(&line).expect("ready line is JSON");
        assert_eq!(ready["event"], "ready");
        Server {
            child,
            addr: ready["addr"].as_str().unwrap().to_owned(),
            records,
            ready,
        }
    }

    /// Stops the server (SIGTERM, as the runner does) and returns its connections' records
    /// (not the serving threads' accounts).
    pub fn stop(mut self) -> Vec<Value> {
        // SAFETY: kill(2) on our own child's pid, not yet reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let end = Instant::now() + DEADLINE;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < end, "server did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(self.child.wait().unwrap().success(), "server exit status");
        read_records(&self.records)
            .into_iter()
            .filter(|r| r["side"] == "server")
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn read_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A `handshake` client of `stack` against `server` with exactly `args` (bounded); its
/// records.
pub fn client(stack: &str, server: &Server, args: &[&str]) -> Vec<Value> {
    let mut child = Command::new(binary(stack))
        .args(["handshake", "--connect", &server.addr])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let end = Instant::now() + DEADLINE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("{stack} client did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{stack} client exit status");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
