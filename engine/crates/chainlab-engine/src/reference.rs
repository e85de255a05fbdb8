//! `reference`: a fixed CPU-bound workload, timed. The host's speed drifts (on a shared VM
//! the same deterministic signature took 1.20-1.86 s within minutes); a runner times this
//! before and after each scenario and load step, so a report can say how far the host moved
//! and read capacity per unit of host speed.
//!
//! The workload is the Keccak permutation that SLH-DSA-SHAKE and ML-DSA spend most of their
//! time in: SHAKE-256 through OpenSSL over a 1 MiB buffer, `--rounds` times, each round's
//! output feeding the next (nothing can be skipped). It touches no disk and no network.

use std::io::Write as _;
use std::time::Instant;

use openssl::hash::{Hasher, MessageDigest};
use serde::Serialize;

use crate::cli::ReferenceArgs;
use crate::cpu::{self, ThreadCpu};

/// Bytes hashed per round.
const BUFFER: usize = 1 << 20;

#[derive(Serialize)]
struct Reference {
    event: &'static str,
    workload: String,
    rounds: u32,
    /// Wall time of the workload (monotonic clock).
    wall_ns: u64,
    /// The thread's CPU over it: wall >> cpu means the core was shared.
    cpu_ns: u64,
    /// The last round's output, so a reader can check the work was done.
    digest: String,
}

pub fn run(args: &ReferenceArgs) -> anyhow::Result<()> {
    if args.rounds == 0 {
        anyhow::bail!("--rounds 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        cpu::pin(cpus)?;
    }
    let mut buffer = vec![0u8; BUFFER];
    let mut digest = [0u8; 32];
    let cpu_start = ThreadCpu::now();
    let start = Instant::now();
    for _ in 0..args.rounds {
        buffer[..32].copy_from_slice(&digest);
        let mut hasher = Hasher::new(MessageDigest::shake_256())?;
        hasher.update(&buffer)?;
        hasher.finish_xof(&mut digest)?;
    }
    let wall_ns = start.elapsed().as_nanos() as u64;
    let cpu_ns = ThreadCpu::now().since(cpu_start).total_ns;
    let line = Reference {
        event: "reference",
        workload: format!("shake256 x {} MiB", BUFFER >> 20),
        rounds: args.rounds,
        wall_ns,
        cpu_ns,
        digest: digest.iter().map(|b| format!("{b:02x}")).collect(),
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &line)?;
    out.write_all(b"\n")?;
    Ok(())
}
