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
//! thread's CPU clock read around each step the thread takes for that connection and summed,
//! so it stays the connection's own with many connections on one thread; the readiness wait
//! belongs to no connection. Records are written by one writer thread, so no serving thread
//! spends its CPU on serialisation.
//!
//! Stop: SIGTERM and SIGINT are blocked in every thread and taken synchronously by the main
//! thread (`signals.rs`); it stops the accepting, lets in-flight connections finish for
//! `STOP_GRACE`, then cuts them (recorded as abandoned).

mod event;
mod lifecycle;
mod ready;
mod signals;
mod threads;
mod tracked;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};

use crate::args::{ServeArgs, ServerModel};
use crate::counting::CountingStream;
use crate::failure::Failure;
use crate::observed::{ServerIdentity, ServerObserved};
use crate::record::{RecordWriter, ServerRecord, ServerThreadRecord, Transport};

pub use lifecycle::{Lifecycle, Phase};
pub use ready::print_ready;
pub use signals::{StopSignals, STOP_GRACE};

/// What a connection waits for after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Bytes from the peer (the socket would block on a read).
    Read,
    /// Room in the socket's send buffer.
    Write,
    /// The handshake just ended (successfully); advance again for the close.
    Handshaken,
    /// The connection is over (closed, failed or the peer went away): `finish` it.
    Closed,
}

/// A stack's TLS server: opens a connection over each accepted socket.
pub trait Stack: Sync {
    type Conn: Conn;
    /// A server connection over `socket` (connected; blocking or not, as the model set it).
    fn open(&self, socket: CountingStream) -> anyhow::Result<Self::Conn>;
}

/// One TLS server connection as a state machine: handshake, then our close_notify, then the
/// peer's.
pub trait Conn {
    /// Advances as far as the socket allows: to a blocked read or write, to the end of the
    /// handshake, or to the end of the connection. On a blocking socket a `Read`/`Write`
    /// means its timeout expired.
    fn advance(&mut self) -> Step;
    /// Stops the connection where it stands (a peer that stalled past `--io-timeout-ms`, or
    /// a stopping server): during the handshake `failure` is its outcome; after it, the
    /// peer's close_notify simply never came.
    fn interrupt(&mut self, failure: Failure);
    fn socket(&self) -> &TcpStream;
    /// What the connection observed; the socket is closed when this returns.
    fn finish(self) -> anyhow::Result<ServerObserved>;
}

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
        finished: AtomicUsize::new(0),
    };
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_lines(records, rx));
        let served = match args.server_model {
            ServerModel::Threads => threads::run(stack, &shared, args.workers, &signals, &tx),
            ServerModel::Event => event::run(stack, &shared, args.workers, cpus, &signals, &tx),
        };
        drop(tx); // the writer ends once every serving thread's sender is gone
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the records writer panicked")));
        served.and(written)
    })
}

/// Connections the kernel queues for accept() at most (capped by net.core.somaxconn, 4096
/// by default). The standard library listens with 128: under an open-loop offer past
/// capacity a burst overflows that, the kernel drops SYNs, and each dropped client waits a
/// 1 s retransmission holding a generator slot, while the server's core idles for want of
/// connections. A server's capacity must not hide behind its accept queue (nginx listens
/// with 511; the queue's overflows are counted per step either way). `--listen-backlog`'s
/// default.
pub const LISTEN_BACKLOG: u32 = 4096;

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

/// Checks `serve`'s numbers before anything is bound.
pub fn check_args(args: &ServeArgs) -> anyhow::Result<()> {
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

/// What every serving thread shares.
pub(crate) struct Shared<'a> {
    pub(crate) who: ServerIdentity,
    pub(crate) listener: &'a TcpListener,
    pub(crate) io_timeout: Duration,
    pub(crate) max_connections: Option<u64>,
    pub(crate) instrument: bool,
    /// No more connections are accepted (a stop signal, `--max-connections` reached, or a
    /// thread's fatal error); threads end once their connections have.
    pub(crate) closing: AtomicBool,
    /// The stop grace is over: in-flight connections are cut.
    pub(crate) abandon: AtomicBool,
    /// Next record sequence number (accept order).
    pub(crate) next_seq: AtomicU64,
    /// Serving threads that have returned.
    pub(crate) finished: AtomicUsize,
}

impl Shared<'_> {
    /// The next connection's sequence number, or `None` past `--max-connections` (the
    /// connection that reaches it closes the accepting).
    pub(crate) fn claim(&self) -> Option<u64> {
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        match self.max_connections {
            Some(max) if seq >= max => {
                self.closing.store(true, Ordering::SeqCst);
                None
            }
            Some(max) if seq + 1 == max => {
                self.closing.store(true, Ordering::SeqCst);
                Some(seq)
            }
            _ => Some(seq),
        }
    }
}

/// What serving threads hand the writer.
pub(crate) enum Line {
    Server(Box<ServerRecord>),
    Thread(ServerThreadRecord),
}

/// How often the writer takes what the serving threads handed it. The writer never sleeps
/// in the channel: a serving thread's send then costs a queue push (well under a
/// microsecond) instead of waking a parked thread (~20 us of the serving thread's CPU per
/// record on this VM, measured), which would count against no connection. A record reaches
/// the file at most this much later; readers wait seconds for a step's last records.
const WRITER_PERIOD: Duration = Duration::from_millis(5);

fn write_lines(records: Option<RecordWriter>, rx: mpsc::Receiver<Line>) -> anyhow::Result<()> {
    let Some(mut writer) = records else {
        return Ok(());
    };
    loop {
        match rx.try_recv() {
            Ok(Line::Server(record)) => writer.write(&record)?,
            Ok(Line::Thread(record)) => writer.write(&record)?,
            Err(mpsc::TryRecvError::Empty) => std::thread::sleep(WRITER_PERIOD),
            Err(mpsc::TryRecvError::Disconnected) => return Ok(()),
        }
    }
}

/// How long the main thread waits for a signal before checking on the serving threads.
/// Only affects how soon the process notices they are done.
const SIGNAL_WAIT: Duration = Duration::from_millis(50);

/// The main thread's part: wait until every serving thread has returned; on SIGTERM/SIGINT
/// stop the accepting, and after `STOP_GRACE` call `cut` (once) to end what is in flight.
pub(crate) fn supervise(
    shared: &Shared,
    threads: usize,
    signals: &StopSignals,
    wake: &dyn Fn(),
    cut: &dyn Fn(),
) {
    let mut stopping_since: Option<Instant> = None;
    let mut was_closing = false;
    while shared.finished.load(Ordering::SeqCst) < threads {
        if signals.wait(SIGNAL_WAIT) {
            shared.closing.store(true, Ordering::SeqCst);
            stopping_since.get_or_insert_with(Instant::now);
        }
        let closing = shared.closing.load(Ordering::SeqCst);
        if closing && !was_closing {
            was_closing = true;
            wake();
        }
        if let Some(since) = stopping_since {
            if !shared.abandon.load(Ordering::SeqCst) && since.elapsed() >= STOP_GRACE {
                shared.abandon.store(true, Ordering::SeqCst);
                cut();
            }
        }
    }
}

/// The detail of a connection cut by a stopping server.
pub(crate) fn abandoned() -> Failure {
    Failure::new(
        crate::record::ErrorCategory::IoError,
        "abandoned: the server was stopping (SIGTERM/SIGINT)",
    )
}

/// Prepares an accepted socket: no Nagle delay on a flight, and blocking with timeouts
/// (`threads`) or non-blocking (`event`).
pub(crate) fn prepare(stream: &TcpStream, blocking: Option<Duration>) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    match blocking {
        Some(timeout) => {
            // Accepted sockets do not inherit O_NONBLOCK on Linux; set it anyway so the
            // timeouts below are what bounds a stalled peer.
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))
        }
        None => stream.set_nonblocking(true),
    }
}

/// The peer's port, for the record.
pub(crate) fn port(addr: &SocketAddr) -> Option<u16> {
    Some(addr.port())
}
