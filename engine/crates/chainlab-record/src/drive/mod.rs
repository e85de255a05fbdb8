//! The client side's loops, whatever the stack: `handshake`'s warm-ups then a count or a
//! duration of attempts one after another (`attempts`), and `load`'s open-loop schedule
//! over connection slots (`load.rs`). A stack supplies a `Slot`: one connection attempt at
//! a time, each a fresh connection, its record built from what it observed.

mod load;

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::args::HandshakeArgs;
use crate::record::{ClientRecord, RecordWriter};

pub use load::{load, schedule};

/// A connection slot: attempts run one after another on the calling thread.
pub trait Slot {
    /// One connection, start to finish. Errors only for local failures; everything the
    /// network or the peer does ends up in the record.
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord>;
}

/// `handshake`: the warm-ups, then `--count` attempts or as many as `--duration-ms` holds,
/// one record each, serialised and flushed after the attempt's timed span.
pub fn attempts<S: Slot>(slot: &mut S, args: &HandshakeArgs) -> anyhow::Result<()> {
    if args.count.is_none() && args.duration_ms.is_none() {
        bail!("one of --count N or --duration-ms MS is required");
    }
    let mut writer = RecordWriter::open(&args.client.records)?;
    let mut seq = args.client.seq_start;
    let mut one = |slot: &mut S, warmup: bool| -> anyhow::Result<()> {
        let record = slot.attempt(seq, warmup)?;
        writer.write(&record)?;
        seq += 1;
        Ok(())
    };
    for _ in 0..args.warmup {
        one(slot, true)?;
    }
    if let Some(count) = args.count {
        for _ in 0..count {
            one(slot, false)?;
        }
    } else if let Some(ms) = args.duration_ms {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            one(slot, false)?;
        }
    }
    Ok(())
}

/// What every client run checks first, whatever the stack: the timeout and the resumption
/// mix; then pins to `--cpus`.
pub fn check_client(args: &crate::args::ClientArgs) -> anyhow::Result<()> {
    if args.timeout_ms == 0 {
        bail!("--timeout-ms 0: must be at least 1");
    }
    if let Some(ratio) = args.resume_ratio {
        if !(0.0..=1.0).contains(&ratio) {
            bail!("--resume-ratio {ratio}: must be a probability from 0 to 1");
        }
    }
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    Ok(())
}
