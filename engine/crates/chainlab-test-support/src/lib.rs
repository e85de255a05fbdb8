//! What the engines' integration tests share, so each helper exists once: where the
//! binaries are (`binary`), temporary directories removed on drop (`TempDir`), bounded
//! processes (`run_bounded`, `wait_bounded`, `DEADLINE`), JSON Lines records
//! (`read_records`, `paired`), each line held to the record contract (`assert_contract`) and a `serve` process waited for through its ready line
//! (`spawn_ready`).
//!
//! Two sets of helpers build on these: `engine` for the OpenSSL engine's own tests (its
//! `pki`, `serve`, `handshake` in a test's directory), `stacks` for tests that pair the
//! stacks' binaries (rustls against OpenSSL 3.5 and 4.0); `pki` checks the `pki` subcommand's files. Every child is killed and reaped
//! on drop and every wait is bounded, so a failing test never leaves a process behind or
//! hangs.

pub mod engine;
pub mod files;
#[cfg(feature = "openssl")]
pub mod pki;
pub mod stacks;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any engine process may take in a test (a server to print its ready line, a
/// client to finish its batch, a process to exit) before it is killed and the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A binary of this workspace's build: beside the running test binary's target directory
/// (`<target>/<profile>/deps/<test>` runs; `<target>/<profile>/<name>` is the binary), so a
/// test built into another target directory (the OpenSSL 4.0 engine's) runs that one's.
pub fn built(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary under <target>/<profile>/deps");
    profile_dir.join(name)
}

/// The workspace's default target directory (where `make engine` builds every stack).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// The engine binary of a stack; a missing one fails the test with how to build it.
pub fn binary(stack: &str) -> PathBuf {
    let path = match stack {
        "rustls" => built("chainlab-rustls"),
        "boringssl" => target_dir().join("release/chainlab-boring"),
        "openssl-3.5" => target_dir().join("release/chainlab-engine"),
        "openssl-4.0" => target_dir().join("openssl-4.0/release/chainlab-engine"),
        // Not a cargo binary: engine/go/build.sh (`make engine`) writes it here.
        "go" => target_dir().join("release/chainlab-go"),
        other => panic!("unknown stack {other}"),
    };
    assert!(
        path.is_file(),
        "{stack}: no engine at {} (build every stack with `make engine`)",
        path.display()
    );
    path
}

/// A directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("chainlab-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a test directory");
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

/// Spawns a `serve` command (its stdout piped) and waits up to `wait` for its ready line;
/// a server that prints none is killed and the test fails with its standard error.
pub fn spawn_ready(cmd: &mut Command, wait: Duration) -> (Child, Value) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("spawning serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = match rx.recv_timeout(wait) {
        Ok(line) if !line.is_empty() => line,
        _ => {
            let _ = child.kill();
            let out = child.wait_with_output().expect("reaping serve");
            panic!(
                "serve printed no ready line: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let ready: Value = serde_json::from_str(&line).expect("the ready line is JSON");
    assert_eq!(ready["event"], "ready", "{line}");
    assert_contract(&ready);
    (child, ready)
}

/// Spawns a command with piped output and waits for it, killing it after `DEADLINE`.
pub fn run_bounded(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning a process");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let status = wait_bounded(&mut child, DEADLINE);
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
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
        if let Some(status) = child.try_wait().expect("waiting for a child") {
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
    parse_lines(&text)
}

/// Every line of JSON Lines text, each held to the record contract (`assert_contract`).
pub fn parse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            let line = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad record {l:?}: {e}"));
            assert_contract(&line);
            line
        })
        .collect()
}

/// Fails the test when a line breaks the record contract (`records.schema.json`): every
/// engine test that reads a ready line or a record checks it, whatever the stack.
pub fn assert_contract(line: &Value) {
    let found = chainlab_record::contract::violations(line);
    assert!(
        found.is_empty(),
        "a line breaks the record contract (records.schema.json): {found:?} in {line}"
    );
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
