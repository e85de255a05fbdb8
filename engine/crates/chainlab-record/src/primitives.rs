//! `primitives` for the engines other than OpenSSL's (BoringSSL and rustls time their
//! signatures, rustls also its key exchange): the flags, the message, the timing loops and
//! the record, as `chainlab-engine primitives` writes them, so a figure of any stack's
//! implementation stands beside OpenSSL's.
//!
//! The message is the CertificateVerify content (RFC 8446, 4.4.3: 64 spaces, the server's
//! context string, a zero byte, a 32-byte transcript hash; 130 bytes). The engine makes the
//! key and one signature before the first timed operation and times each operation alone
//! (wall and thread CPU); it never summarizes.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::args::SignatureImpl;
use crate::cpu::ThreadCpu;

/// The revision of how every engine times a primitive (this module, chainlab-engine's
/// `primitives`, engine/go/primitives.go, which repeats it): `info` prints it, and the
/// primitives cache is keyed by it with the libraries' versions, not by the binary
/// (chainlab.runner.primitives_cache). Bump it when a change alters what a timed operation
/// includes or how it is timed, so no cached figure of the old method is reused.
pub const METHOD_REVISION: u32 = 1;

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
    /// A key-exchange group's key share: key generation and its public encoding (the
    /// client's side; with a Diffie-Hellman group, both sides').
    Keygen,
    /// Encapsulate to the client's share (a KEM or a hybrid: the server's side).
    Encaps,
    /// Decapsulate the server's ciphertext (a KEM or a hybrid: the client's side).
    Decaps,
    /// Derive the shared secret from the peer's share (a Diffie-Hellman group).
    Derive,
}

impl SignatureOp {
    /// The `--op` value.
    pub fn name(self) -> &'static str {
        match self {
            SignatureOp::Sign => "sign",
            SignatureOp::Verify => "verify",
            SignatureOp::Keygen => "keygen",
            SignatureOp::Encaps => "encaps",
            SignatureOp::Decaps => "decaps",
            SignatureOp::Derive => "derive",
        }
    }

    fn is_signature(self) -> bool {
        matches!(self, SignatureOp::Sign | SignatureOp::Verify)
    }
}

/// `primitives`: the OpenSSL engine's flags for the operations these engines time.
#[derive(Debug, Clone, Args)]
pub struct SignatureArgs {
    /// Signature algorithm (`pki --chain` name), or a key-exchange group (OpenSSL
    /// `--groups` name) where the engine times its key exchange.
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

/// A key-exchange group's operations as a TLS 1.3 handshake runs them: `prepare` makes
/// what one operation needs beforehand (the peer's share, a started exchange, a ciphertext)
/// and returns the operation alone, which is what is timed; it is called before each.
pub trait KeyExchange {
    fn prepare(&self, op: SignatureOp) -> Result<Box<dyn FnOnce() -> Result<()> + '_>>;
}

/// Times `args.op` on a key-exchange group, one record per operation on standard output.
pub fn run_key_exchange(args: &SignatureArgs, group: &dyn KeyExchange) -> Result<()> {
    if args.op.is_signature() {
        bail!(
            "--op {}: --subject {:?} is a key-exchange group; allowed: keygen, encaps, decaps, derive",
            args.op.name(),
            args.subject
        );
    }
    start(args)?;
    let record = operation(args, None);
    let mut out = std::io::stdout().lock();
    for seq in 0..args.warmup + args.count {
        let prepared = group.prepare(args.op)?;
        // One operation per counted span: callgrind counts each apart (cpu::counted_span).
        record.time(&mut out, seq, || crate::cpu::counted_span(prepared))?;
    }
    out.flush()?;
    Ok(())
}

fn start(args: &SignatureArgs) -> Result<()> {
    if args.count == 0 {
        bail!("--count 0: must be at least 1");
    }
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    Ok(())
}

/// One operation of a `primitives` run: what its record names.
pub struct Operation<'a> {
    pub subject: &'a str,
    pub op: &'static str,
    pub message_bytes: Option<usize>,
    /// Operations before the timed ones.
    pub warmup: u64,
}

impl Operation<'_> {
    /// Runs operation number `seq` once, timed (wall and thread CPU), and writes its record.
    pub fn time(
        &self,
        out: &mut impl Write,
        seq: u64,
        operation: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let cpu_start = ThreadCpu::now();
        let start = Instant::now();
        operation()?;
        let wall_ns = start.elapsed().as_nanos() as u64;
        let cpu_ns = ThreadCpu::now().since(cpu_start).total_ns;
        let sample = Sample {
            event: EVENT,
            subject: self.subject,
            op: self.op,
            message_bytes: self.message_bytes,
            warmup: seq < self.warmup,
            seq,
            wall_ns,
            cpu_ns,
        };
        serde_json::to_writer(&mut *out, &sample)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}

fn operation(args: &SignatureArgs, message_bytes: Option<usize>) -> Operation<'_> {
    Operation {
        subject: &args.subject,
        op: args.op.name(),
        message_bytes,
        warmup: args.warmup,
    }
}

/// Times `args.op` on `key`, one record per operation on standard output.
pub fn run(args: &SignatureArgs, key: &dyn Signing) -> Result<()> {
    if !args.op.is_signature() {
        bail!(
            "--op {}: --subject {:?} is a signature algorithm; allowed: sign, verify",
            args.op.name(),
            args.subject
        );
    }
    start(args)?;
    let message = cv_message();
    let signature = key.sign(&message)?;
    if !key.verify(&message, &signature)? {
        bail!(
            "{}: the implementation did not verify its own signature",
            args.subject
        );
    }
    let record = operation(args, Some(message.len()));
    let mut out = std::io::stdout().lock();
    for seq in 0..args.warmup + args.count {
        record.time(&mut out, seq, || {
            crate::cpu::counted_span(|| {
                if args.op == SignatureOp::Sign {
                    std::hint::black_box(key.sign(&message)?);
                } else if !key.verify(&message, &signature)? {
                    bail!("{}: a signature did not verify", args.subject);
                }
                Ok(())
            })
        })?;
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
