//! What the serving threads of either model share: the listener, the limits, the flags of a
//! stopping server, the lines they hand the writer, and the main thread's supervision.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use crate::failure::Failure;
use crate::observed::ServerIdentity;
use crate::record::{ServerRecord, ServerThreadRecord};

use super::signals::{Signal, StopSignals, STOP_GRACE};

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
    /// Connections over, their records handed to the writer (`settle`).
    pub(crate) settled: AtomicU64,
    /// Serving threads that have returned.
    pub(crate) finished: AtomicUsize,
    /// The records writer, woken for a sync.
    pub(crate) writer: OnceLock<std::thread::Thread>,
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

    /// A claimed connection is over and its record (if any) handed to the writer: called
    /// after that send, so a sync that sees every claimed connection settled is written
    /// after their records.
    pub(crate) fn settle(&self) {
        self.settled.fetch_add(1, Ordering::SeqCst);
    }

    /// Every connection claimed so far is settled, and none waits in the accept queue.
    fn quiet(&self) -> bool {
        let claimed = self.next_seq.load(Ordering::SeqCst);
        let settled = self.settled.load(Ordering::SeqCst);
        let mut queue = libc::pollfd {
            fd: self.listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd this function owns, over a listener `self` borrows; no wait.
        let waiting = unsafe { libc::poll(&mut queue, 1, 0) } > 0;
        settled >= claimed && !waiting
    }
}

/// What serving threads hand the writer.
pub(crate) enum Line {
    Server(Box<ServerRecord>),
    Thread(ServerThreadRecord),
    /// Flush what came before, then answer (a sync: `supervise`).
    Sync(mpsc::Sender<()>),
}

/// How long the main thread waits for a signal before checking on the serving threads.
/// Only affects how soon the process notices they are done.
const SIGNAL_WAIT: Duration = Duration::from_millis(50);
/// ... once stopping: the threads end within milliseconds of their wake-up, and every
/// scenario's server stops this way (50 ms each added a second to a 15-scenario campaign).
const STOPPING_WAIT: Duration = Duration::from_millis(1);

/// The main thread's part: wait until every serving thread has returned; on SIGTERM/SIGINT
/// stop the accepting, and after `STOP_GRACE` call `cut` (once) to end what is in flight. On
/// SIGUSR1, once the server is quiet (every connection accepted so far over and recorded,
/// none waiting to be accepted), the writer flushes and `synced` is printed: what a caller
/// that keeps one server for several scenarios waits for after each (chainlab.runner.servers).
pub(crate) fn supervise(
    shared: &Shared,
    threads: usize,
    signals: &StopSignals,
    wake: &dyn Fn(),
    cut: &dyn Fn(),
    tx: &mpsc::Sender<Line>,
) {
    let mut stopping_since: Option<Instant> = None;
    let mut was_closing = false;
    let mut sync_asked = false;
    while shared.finished.load(Ordering::SeqCst) < threads {
        let wait = if was_closing || sync_asked {
            STOPPING_WAIT
        } else {
            SIGNAL_WAIT
        };
        match signals.wait(wait) {
            Some(Signal::Stop) => {
                shared.closing.store(true, Ordering::SeqCst);
                stopping_since.get_or_insert_with(Instant::now);
            }
            Some(Signal::Sync) => sync_asked = true,
            None => {}
        }
        let closing = shared.closing.load(Ordering::SeqCst);
        if closing && !was_closing {
            was_closing = true;
            wake();
        }
        if sync_asked && !closing && shared.quiet() {
            sync_asked = false;
            sync(shared, tx);
        }
        if let Some(since) = stopping_since {
            if !shared.abandon.load(Ordering::SeqCst) && since.elapsed() >= STOP_GRACE {
                shared.abandon.store(true, Ordering::SeqCst);
                cut();
            }
        }
    }
}

/// The writer flushes every record handed to it so far, then `synced` is printed with the
/// connections accepted so far. A writer that has stopped (its error ends the server) gets
/// no answer: nothing is printed.
fn sync(shared: &Shared, tx: &mpsc::Sender<Line>) {
    let (done_tx, done_rx) = mpsc::channel();
    if tx.send(Line::Sync(done_tx)).is_err() {
        return;
    }
    if let Some(writer) = shared.writer.get() {
        writer.unpark();
    }
    if done_rx.recv().is_ok() {
        let connections = shared.next_seq.load(Ordering::SeqCst);
        let _ = super::ready::print_synced(connections);
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
