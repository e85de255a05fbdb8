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

use std::net::{SocketAddr, TcpStream};

use crate::counting::Counts;
use crate::cpu::ThreadCpu;
use crate::observed::ClientObserved;

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

/// Where a TCP attempt's timed span stands once connect() returned.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// Wall-clock start, for the record's ordering.
    pub start_unix_ns: u128,
    /// The thread's CPU at the span's start (instrumented only).
    pub cpu_start: Option<ThreadCpu>,
    /// connect() returned: the handshake's span starts here.
    pub connect_end: Instant,
}

/// The start of every TCP attempt, whatever the stack: the clocks start, connect() within
/// `timeout`, the socket prepared (no Nagle delay on a flight; reads and writes bounded by
/// `timeout`, so a server that stops answering or reading is recorded as hung). `seen` gets
/// the connect time; a failed connect is recorded in it (its CPU, zero bytes, the failure)
/// and gives no stream.
pub fn connect_tcp(
    addr: &SocketAddr,
    timeout: Duration,
    instrument: bool,
    seen: &mut ClientObserved,
) -> (Started, Option<TcpStream>) {
    let start_unix_ns = crate::unix_ns();
    let cpu_start = instrument.then(ThreadCpu::now);
    let start = Instant::now();
    let connected = TcpStream::connect_timeout(addr, timeout).and_then(|s| {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        Ok(s)
    });
    let connect_end = Instant::now();
    seen.connect_ns = crate::ns_between(start, connect_end);
    let started = Started {
        start_unix_ns,
        cpu_start,
        connect_end,
    };
    match connected {
        Ok(stream) => (started, Some(stream)),
        Err(e) => {
            seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
            if instrument {
                seen.handshake_counts = Some(Counts::default());
                seen.conn_counts = Some(Counts::default());
            }
            seen.failure = Some(crate::failure::connect_failure(&e));
            (started, None)
        }
    }
}
