//! Thread per connection: `--workers` threads accept on the shared listener, each driving
//! one connection at a time to its end over a blocking socket whose timeouts
//! (`--io-timeout-ms`) bound a stalled peer.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use anyhow::anyhow;

use crate::counting::CountingStream;
use crate::cpu::ThreadCpu;
use crate::failure::socket_failure;
use crate::listen::{accept_until, Wake};
use crate::record::{ServerThreadRecord, SCHEMA};

use super::conn::{Conn, Stack, Step};
use super::shared::{Line, Shared};
use super::signals::StopSignals;
use super::tracked::Tracked;

pub(crate) fn run<S: Stack>(
    stack: &S,
    shared: &Shared,
    workers: usize,
    signals: &StopSignals,
    tx: &mpsc::Sender<Line>,
) -> anyhow::Result<()> {
    let slots: Vec<InFlight> = (0..workers).map(|_| InFlight::default()).collect();
    let wake = Wake::new()?;
    let wake = &wake;
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = slots
            .iter()
            .enumerate()
            .map(|(index, slot)| {
                let tx = tx.clone();
                scope.spawn(move || {
                    let result = worker(stack, shared, slot, index, wake, &tx);
                    if result.is_err() {
                        shared.closing.store(true, Ordering::SeqCst);
                    }
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                    result
                })
            })
            .collect();
        // Workers waiting for a connection are woken; a worker in a connection is cut by
        // shutting its socket down.
        super::shared::supervise(
            shared,
            workers,
            signals,
            &|| wake.wake(),
            &|| slots.iter().for_each(InFlight::abandon),
            tx,
        );
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a server worker panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    Ok(())
}

/// One worker: accept, drive, record, until the accepting closes.
fn worker<S: Stack>(
    stack: &S,
    shared: &Shared,
    slot: &InFlight,
    index: usize,
    wake: &Wake,
    tx: &mpsc::Sender<Line>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let cpu_start = ThreadCpu::now();
    let mut account = Account::default();
    loop {
        let waiting = ThreadCpu::now();
        let accepted = accept_until(shared.listener, &shared.closing, shared.instrument, wake)?;
        // Polls that timed out belong to no connection; the poll that returned this one and
        // the accept that took it are its first steps (`accept_cpu`, read before that poll).
        let accept_cpu = accepted.as_ref().and_then(|(_, _, before)| *before);
        account.wait_cpu_ns += accept_cpu
            .unwrap_or_else(ThreadCpu::now)
            .since(waiting)
            .total_ns;
        let Some((stream, peer, _)) = accepted else {
            break;
        };
        let Some(seq) = shared.claim() else {
            break; // past --max-connections: the connection closes unserved
        };
        // With --random-seed, the connection's own stream (one worker: one at a time).
        crate::random::begin_unit(seq);
        // The connection, accept to close: callgrind's span (cpu::counted_span).
        let record = crate::cpu::counted_span(|| {
            // Everything from that poll to the close is the connection's.
            let mut mark = accept_cpu;
            let mut tracked = Tracked::open(seq, peer, &mut mark, || {
                super::shared::prepare(&stream, Some(shared.io_timeout))?;
                stack.open(CountingStream::new(stream))
            })?;
            let registered = slot.enter(tracked.conn.socket().as_raw_fd());
            match tracked.drive(&mut mark) {
                Step::Closed => {}
                // On a blocking socket a wait means its timeout expired.
                Step::Read | Step::Write => {
                    let timeout = socket_failure(std::io::ErrorKind::WouldBlock, "timeout");
                    tracked.interrupt(&mut mark, timeout)
                }
                Step::Handshaken => unreachable!("drive() notes the handshake's end itself"),
            }
            let abandoned = slot.abandoned.load(Ordering::SeqCst);
            // Unregistered (in the closing step) before the socket closes.
            tracked.finish(&mut mark, shared.who, abandoned, |_| drop(registered))
        })?;
        if let Some(record) = record {
            account.connections += 1;
            account.conn_cpu_ns += record.conn_cpu_ns.unwrap_or(0);
            send(tx, Line::Server(Box::new(record)))?;
        }
        shared.settle();
    }
    if shared.instrument {
        let record = account.record(shared, index, started, cpu_start);
        send(tx, Line::Thread(record))?;
    }
    Ok(())
}

pub(crate) fn send(tx: &mpsc::Sender<Line>, line: Line) -> anyhow::Result<()> {
    tx.send(line)
        .map_err(|_| anyhow!("the records writer stopped (see its error)"))
}

/// What a serving thread's account adds up as it goes.
#[derive(Default)]
pub(crate) struct Account {
    pub(crate) connections: u64,
    pub(crate) conn_cpu_ns: u64,
    pub(crate) wait_cpu_ns: u64,
}

impl Account {
    pub(crate) fn record(
        &self,
        shared: &Shared,
        thread: usize,
        started: Instant,
        cpu_start: ThreadCpu,
    ) -> ServerThreadRecord {
        self.record_pinned(shared, thread, None, started, cpu_start)
    }

    pub(crate) fn record_pinned(
        &self,
        shared: &Shared,
        thread: usize,
        cpu: Option<usize>,
        started: Instant,
        cpu_start: ThreadCpu,
    ) -> ServerThreadRecord {
        ServerThreadRecord {
            schema: SCHEMA,
            side: "server_thread",
            stack: shared.who.stack,
            server_model: shared.who.model,
            thread,
            cpu,
            connections: self.connections,
            wall_ns: crate::ns_between(started, Instant::now()),
            cpu_ns: ThreadCpu::now().since(cpu_start).total_ns,
            conn_cpu_ns: self.conn_cpu_ns,
            wait_cpu_ns: self.wait_cpu_ns,
        }
    }
}

/// A worker's current connection, so that a stopping server can cut it short: shutting the
/// socket down makes the worker's blocked read return at once.
#[derive(Default)]
struct InFlight {
    fd: Mutex<Option<RawFd>>,
    /// Set when `abandon` cut the connection (its record then says so).
    abandoned: AtomicBool,
}

impl InFlight {
    fn enter(&self, fd: RawFd) -> Registered<'_> {
        self.abandoned.store(false, Ordering::SeqCst);
        *self.fd.lock().unwrap_or_else(|p| p.into_inner()) = Some(fd);
        Registered(self)
    }

    /// Shuts the current connection's socket down, if there is one. The lock guarantees the
    /// descriptor is still the connection's: the worker unregisters (under the lock) before
    /// it closes the socket.
    fn abandon(&self) {
        let fd = self.fd.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fd) = *fd {
            self.abandoned.store(true, Ordering::SeqCst);
            // SAFETY: `fd` is an open socket (see above); shutdown() does not close it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
    }
}

/// Unregisters the connection when dropped.
struct Registered<'a>(&'a InFlight);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        *self.0.fd.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}
