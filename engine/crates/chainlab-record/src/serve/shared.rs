//! What the serving threads of either model share: the listener, the limits, the flags of a
//! stopping server, the lines they hand the writer, and the main thread's supervision.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::failure::Failure;
use crate::observed::ServerIdentity;
use crate::record::{ServerRecord, ServerThreadRecord};

use super::signals::{StopSignals, STOP_GRACE};

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

/// How long the main thread waits for a signal before checking on the serving threads.
/// Only affects how soon the process notices they are done.
const SIGNAL_WAIT: Duration = Duration::from_millis(50);
/// ... once stopping: the threads end within milliseconds of their wake-up, and every
/// scenario's server stops this way (50 ms each added a second to a 15-scenario campaign).
const STOPPING_WAIT: Duration = Duration::from_millis(1);

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
        let wait = if was_closing {
            STOPPING_WAIT
        } else {
            SIGNAL_WAIT
        };
        if signals.wait(wait) {
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
