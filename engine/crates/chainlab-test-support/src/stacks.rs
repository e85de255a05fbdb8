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
    pub fn stop(mut self) -> Vec<Value> {
        // SAFETY: kill(2) on our own child's pid, not yet reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = crate::wait_bounded(&mut self.child, DEADLINE);
        assert!(status.success(), "server exit status {status}");
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
