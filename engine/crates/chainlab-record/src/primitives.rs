//! `primitives` for the engines that time signatures only (BoringSSL, rustls): the flags, the
//! message, the timing loop and the record, as `chainlab-engine primitives` writes them, so a
//! sign or verify figure of any stack's implementation stands beside OpenSSL's.
//!
//! The message is the CertificateVerify content (RFC 8446, 4.4.3: 64 spaces, the server's
//! context string, a zero byte, a 32-byte transcript hash; 130 bytes). The engine makes the
//! key and one signature before the first timed operation and times each operation alone
//! (wall and thread CPU); it never summarizes.

use std::io::Write as _;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::args::SignatureImpl;
use crate::cpu::ThreadCpu;

/// The CertificateVerify content's parts (RFC 8446, 4.4.3).
const CV_PAD: usize = 64;
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
const TRANSCRIPT_HASH_BYTES: usize = 32;

/// The operation timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SignatureOp {
    /// Sign the CertificateVerify content (the server's side).
    Sign,
    /// Verify its signature (the client's side).
    Verify,
}

/// `primitives`: the OpenSSL engine's flags for the operations these engines time.
#[derive(Debug, Clone, Args)]
pub struct SignatureArgs {
    /// Signature algorithm (`pki --chain` name).
    #[arg(long)]
    pub subject: String,
    #[arg(long, value_enum)]
    pub op: SignatureOp,
    /// Whose implementation signs and verifies (the stack's own, or liboqs where the engine
    /// has it).
    #[arg(long, value_enum, default_value = "stack")]
    pub signature_impl: SignatureImpl,
    /// Timed operations.
    #[arg(long, default_value_t = 10)]
    pub count: u64,
    /// Operations before the timed ones (recorded with "warmup": true).
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Run on these CPUs only.
    #[arg(long)]
    pub cpus: Option<String>,
}

/// One timed operation: the record every engine's `primitives` writes.
#[derive(Serialize)]
pub struct Sample<'a> {
    pub event: &'static str,
    pub subject: &'a str,
    pub op: &'static str,
    pub message_bytes: Option<usize>,
    pub warmup: bool,
    pub seq: u64,
    /// Monotonic wall time of the operation.
    pub wall_ns: u64,
    /// The thread's CPU over it.
    pub cpu_ns: u64,
}

/// The record's `event`.
pub const EVENT: &str = "primitive";

/// The CertificateVerify content with an arbitrary transcript hash.
pub fn cv_message() -> Vec<u8> {
    let mut m = vec![0x20; CV_PAD];
    m.extend_from_slice(CV_CONTEXT);
    m.push(0);
    m.extend_from_slice(&[0xab; TRANSCRIPT_HASH_BYTES]);
    m
}

/// A key's two operations over the CertificateVerify content.
pub trait Signing {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>>;
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<bool>;
}

/// Times `args.op` on `key`, one record per operation on standard output.
pub fn run(args: &SignatureArgs, key: &dyn Signing) -> Result<()> {
    if args.count == 0 {
        bail!("--count 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    let message = cv_message();
    let signature = key.sign(&message)?;
    if !key.verify(&message, &signature)? {
        bail!(
            "{}: the implementation did not verify its own signature",
            args.subject
        );
    }
    let op = match args.op {
        SignatureOp::Sign => "sign",
        SignatureOp::Verify => "verify",
    };
    let mut out = std::io::stdout().lock();
    for seq in 0..args.warmup + args.count {
        let cpu_start = ThreadCpu::now();
        let start = Instant::now();
        match args.op {
            SignatureOp::Sign => {
                std::hint::black_box(key.sign(&message)?);
            }
            SignatureOp::Verify => {
                if !key.verify(&message, &signature)? {
                    bail!("{}: a signature did not verify", args.subject);
                }
            }
        }
        let sample = Sample {
            event: EVENT,
            subject: &args.subject,
            op,
            message_bytes: Some(message.len()),
            warmup: seq < args.warmup,
            seq,
            wall_ns: start.elapsed().as_nanos() as u64,
            cpu_ns: ThreadCpu::now().since(cpu_start).total_ns,
        };
        serde_json::to_writer(&mut out, &sample)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_certificate_verify_content() {
        let m = cv_message();
        assert_eq!(m.len(), 130);
        assert_eq!(&m[64..97], CV_CONTEXT);
        assert_eq!(m[97], 0);
    }
}
