//! `serve`, whatever the TLS stack: bind, print the ready line, run connections until
//! SIGTERM/SIGINT or `--max-connections`, write one record per connection and one account
//! per serving thread.
//!
//! A stack supplies a `Stack` (a TLS server connection over an accepted socket) whose `Conn`
//! advances as far as its socket allows and says what it waits for. The scaffold runs it
//! under either model (`--server-model`):
//! - `threads` (`threads.rs`): `--workers` threads each accept one connection and drive it
//!   to its end on a blocking socket bounded by `--io-timeout-ms`;
//! - `event` (`event.rs`): `--workers` event loops (one per server core, each pinned to one
//!   of `--cpus` in turn), each advancing every connection it accepted from one epoll
//!   readiness loop over non-blocking sockets, as nginx does.
//!
//! Per connection, whichever the model (`tracked.rs`): accept → open the TLS connection →
//! advance until the handshake ends (`handshake_ns`, `cpu_ns`, handshake bytes) → send our
//! close_notify, read until the client's → close (`conn_ns`, `conn_cpu_ns`). CPU is the
//! thread's CPU clock read after each step the thread takes for that connection, counted
//! from the thread's previous reading and summed, so it stays the connection's own with many
//! connections on one thread; a readiness wait is shared by the connections it returned,
//! one that returned nothing belongs to no connection. Records are written by one writer thread, so no serving thread
//! spends its CPU on serialisation.
//!
//! Stop: SIGTERM and SIGINT are blocked in every thread and taken synchronously by the main
//! thread (`signals.rs`); it stops the accepting, lets in-flight connections finish for
//! `STOP_GRACE`, then cuts them (recorded as abandoned).

mod conn;
mod event;
mod lifecycle;
mod ready;
mod shared;
mod signals;
mod threads;
mod tracked;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use anyhow::{anyhow, bail};

use crate::args::{ServeArgs, ServerModel};
use crate::observed::ServerIdentity;
use crate::record::{RecordWriter, Transport};

pub use conn::{Conn, Stack, Step};
pub use lifecycle::{Lifecycle, Phase};
pub use ready::{print_ready, ClientAuth};
pub use signals::{Signal, StopSignals, STOP_GRACE};

use shared::{Line, Shared};

/// Runs `serve` over TCP for `stack` until a stop signal or `--max-connections`.
/// `ready_extra` is the stack's own part of the ready line (docs/engine-records.md).
pub fn serve<S: Stack, E: serde::Serialize>(
    stack: &S,
    args: &ServeArgs,
    name: &'static str,
    ready_extra: &E,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(args.listen)
        .map_err(|e| anyhow!("cannot listen on {}: {e}", args.listen))?;
    // Every model polls the listener (to notice a stop or serve other connections), so
    // accept() itself must never block.
    listener.set_nonblocking(true)?;
    deepen_backlog(&listener, args.listen_backlog)?;
    let addr = listener.local_addr()?;
    let records = if args.no_instrument {
        None
    } else {
        Some(RecordWriter::open(&args.records)?)
    };
    let cpus = args
        .cpus
        .as_deref()
        .map(crate::cpu::parse_cpu_list)
        .transpose()?;
    let signals = StopSignals::block()?;
    let who = ServerIdentity {
        stack: name,
        transport: Transport::Tcp,
        model: args.server_model,
    };
    print_ready(addr, who, args.workers, ready_extra)?;
    let (tx, rx) = mpsc::channel::<Line>();
    let shared = Shared {
        who,
        listener: &listener,
        io_timeout: Duration::from_millis(args.io_timeout_ms),
        max_connections: args.max_connections,
        instrument: records.is_some(),
        closing: AtomicBool::new(false),
        abandon: AtomicBool::new(false),
        next_seq: AtomicU64::new(0),
        settled: AtomicU64::new(0),
        finished: AtomicUsize::new(0),
        writer: OnceLock::new(),
    };
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_lines(records, rx));
        let _ = shared.writer.set(writer.thread().clone());
        let served = match args.server_model {
            ServerModel::Threads => threads::run(stack, &shared, args.workers, &signals, &tx),
            ServerModel::Event => event::run(stack, &shared, args.workers, cpus, &signals, &tx),
        };
        drop(tx); // the writer ends once every serving thread's sender is gone
        writer.thread().unpark(); // ... now, not at the end of its period
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the records writer panicked")));
        served.and(written)
    })
}

/// Listens again on a bound listener with `backlog` (Linux lets listen() change the
/// backlog of a listening socket).
fn deepen_backlog(listener: &TcpListener, backlog: u32) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    let depth = libc::c_int::try_from(backlog).map_err(|_| {
        anyhow!(
            "--listen-backlog {backlog}: must be at most {}",
            libc::c_int::MAX
        )
    })?;
    // SAFETY: a listening socket this function borrows; listen() changes only its backlog.
    let rc = unsafe { libc::listen(listener.as_raw_fd(), depth) };
    if rc != 0 {
        bail!(
            "listen(backlog {backlog}): {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// What every engine's `serve` does first: checks its arguments (`check_args`), then pins the
/// process to `--cpus` before any worker starts (every thread of the server inherits it).
pub fn prepare(stack: &str, compressions: Option<&[&str]>, args: &ServeArgs) -> anyhow::Result<()> {
    check_args(stack, compressions, args)?;
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    Ok(())
}

/// Checks `serve`'s numbers, and what it asks of `stack` (`features::check_serve`: a feature
/// it lacks, a certificate compression not among `compressions`), before anything is bound.
pub fn check_args(
    stack: &str,
    compressions: Option<&[&str]>,
    args: &ServeArgs,
) -> anyhow::Result<()> {
    crate::features::check_serve(stack, compressions, args)?;
    if args.workers == 0 {
        bail!("--workers 0: must be at least 1");
    }
    if args.io_timeout_ms == 0 {
        bail!("--io-timeout-ms 0: must be at least 1");
    }
    if args.max_connections == Some(0) {
        bail!("--max-connections 0: must be at least 1 (omit it to serve until stopped)");
    }
    if args.listen_backlog == 0 {
        bail!("--listen-backlog 0: must be at least 1");
    }
    if args.mtc_retry_standalone && args.chain != crate::args::ChainPolicy::MtcLandmark {
        bail!(
            "--mtc-retry-standalone with --chain {}: allowed with --chain mtc-landmark (the \
             certificate a retrying client could not use)",
            args.chain.name()
        );
    }
    let one_at_a_time = args.server_model == ServerModel::Threads && args.workers == 1;
    if args.random_seed.is_some() && !(one_at_a_time && args.tls.transport == Transport::Tcp) {
        bail!(
            "--random-seed with --server-model {} --workers {}{}: allowed with --server-model \
             threads --workers 1 over TCP (connections one at a time, so each draws its own \
             stream in the same order every run)",
            args.server_model.name(),
            args.workers,
            if args.tls.transport == Transport::Tcp {
                ""
            } else {
                " --transport quic"
            }
        );
    }
    Ok(())
}

/// How often the writer takes what the serving threads handed it. The writer never sleeps
/// in the channel: a serving thread's send then costs a queue push (well under a
/// microsecond) instead of waking a parked thread (~20 us of the serving thread's CPU per
/// record on this VM, measured), which would count against no connection. A record reaches
/// the file at most this much later; readers wait seconds for a step's last records.
const WRITER_PERIOD: Duration = Duration::from_millis(50);

/// Writes what the serving threads hand over: every record at hand, then one flush (one
/// write call per turn rather than per record: the writer's CPU is no connection's, and the
/// server's whole-connection CPU is checked against the process's). A crash loses at most
/// the records of the turn being written.
fn write_lines(mut records: Option<RecordWriter>, rx: mpsc::Receiver<Line>) -> anyhow::Result<()> {
    loop {
        let Some(writer) = records.as_mut() else {
            // Uninstrumented: nothing to write, but a sync is still answered.
            match rx.recv() {
                Ok(Line::Sync(done)) => {
                    let _ = done.send(());
                    continue;
                }
                Ok(_) => continue,
                Err(_) => return Ok(()),
            }
        };
        match rx.try_recv() {
            Ok(Line::Server(record)) => writer.write_buffered(&record)?,
            Ok(Line::Thread(record)) => writer.write_buffered(&record)?,
            Ok(Line::Sync(done)) => {
                writer.flush()?;
                let _ = done.send(());
            }
            Err(mpsc::TryRecvError::Empty) => {
                writer.flush()?;
                // Unparked early when the last sender is gone (the server is stopping).
                std::thread::park_timeout(WRITER_PERIOD)
            }
            Err(mpsc::TryRecvError::Disconnected) => return writer.flush(),
        }
    }
}
