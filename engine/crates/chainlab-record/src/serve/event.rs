//! Event loops: `--workers` threads (one per server core; with `--cpus`, thread i is pinned
//! to the i-th CPU of the list, round robin), each advancing every connection it accepted
//! from one epoll readiness loop (mio) over non-blocking sockets. How many handshakes run at
//! once is bounded by the CPU, not by a pool of threads, whatever the round-trip time.
//!
//! Every loop watches the shared listener. On a readiness event it accepts one connection
//! per turn of the loop while the listener may hold more (a turn also advances the
//! connections that are ready), so loops share a burst instead of one loop taking it all.
//! Sockets are registered for reading (edge-triggered), and for writing only while a write
//! waits: a connection is advanced on any event until it waits again. A connection without
//! an event for `--io-timeout-ms` is interrupted (`handshake_timeout` during the handshake),
//! found by a scan ten times per timeout (at most every 100 ms), never by one every turn.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::counting::CountingStream;
use crate::cpu::ThreadCpu;
use crate::failure::socket_failure;

use super::conn::{Conn, Stack, Step};
use super::shared::{Line, Shared};
use super::signals::StopSignals;
use super::threads::{send, Account};
use super::tracked::{lap, Mark, Tracked};

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connections' tokens start here.
const FIRST_CONN: usize = 2;
/// Readiness events taken per wait; more stay queued for the next turn.
const EVENTS: usize = 256;
/// Timeout scans per `--io-timeout-ms`: a stalled connection is cut between the timeout and
/// a tenth more ...
const TIMEOUT_SCANS: u32 = 10;
/// ... and a loop wakes for a scan at least this often (it also bounds the wait of a loop
/// with nothing to do; the waker ends that wait at once when the server stops).
const MAX_SCAN_PERIOD: Duration = Duration::from_millis(100);

pub(crate) fn run<S: Stack>(
    stack: &S,
    shared: &Shared,
    workers: usize,
    cpus: Option<Vec<usize>>,
    signals: &StopSignals,
    tx: &mpsc::Sender<Line>,
) -> anyhow::Result<()> {
    let mut polls = Vec::with_capacity(workers);
    let mut wakers = Vec::with_capacity(workers);
    for _ in 0..workers {
        let poll = Poll::new().context("epoll")?;
        wakers.push(Arc::new(Waker::new(poll.registry(), WAKER)?));
        polls.push(poll);
    }
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = polls
            .into_iter()
            .enumerate()
            .map(|(index, poll)| {
                let tx = tx.clone();
                let cpu = cpus.as_ref().map(|list| list[index % list.len()]);
                scope.spawn(move || {
                    let result =
                        Loop::new(stack, shared, poll, index, cpu).and_then(|mut l| l.run(&tx));
                    if result.is_err() {
                        shared.closing.store(true, Ordering::SeqCst);
                    }
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                    result
                })
            })
            .collect();
        let wake_all = || {
            for waker in &wakers {
                // A loop that cannot be woken still sees the flags at its next turn.
                let _ = waker.wake();
            }
        };
        super::shared::supervise(shared, workers, signals, &wake_all, &wake_all, tx);
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("an event loop panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    Ok(())
}

/// One loop and the connections it owns.
struct Loop<'a, S: Stack> {
    stack: &'a S,
    shared: &'a Shared<'a>,
    poll: Poll,
    index: usize,
    cpu: Option<usize>,
    conns: HashMap<Token, Entry<S::Conn>>,
    next_token: usize,
    /// The listener signalled readiness and no accept has met an empty queue since.
    listener_ready: bool,
    /// When the connections are next checked for `--io-timeout-ms` (a scan of all of
    /// them), and how often: scanning every turn would cost each turn time in proportion
    /// to the connections open, just when an overloaded loop holds hundreds.
    next_scan: Instant,
    scan_period: Duration,
    account: Account,
    /// The loop's latest CPU reading (see `tracked::Mark`): every span it counts, the
    /// readiness wait included, starts where the previous one ended.
    mark: Mark,
    /// What the loop spent on the listener since it last accepted a connection (its share
    /// of the waits the listener woke, the accepts that found the queue empty): the next
    /// connection it accepts is charged with it, as a threads worker's poll is its
    /// connection's. Left over when the loop ends, it is waiting.
    carried: ThreadCpu,
}

struct Entry<C> {
    tracked: Tracked<C>,
    /// When the connection is given up if no event arrives for it.
    deadline: Instant,
    /// What its socket is registered for.
    interest: Interest,
}

impl<'a, S: Stack> Loop<'a, S> {
    fn new(
        stack: &'a S,
        shared: &'a Shared<'a>,
        poll: Poll,
        index: usize,
        cpu: Option<usize>,
    ) -> anyhow::Result<Self> {
        if let Some(cpu) = cpu {
            crate::cpu::pin(&cpu.to_string())?;
        }
        let fd = shared.listener.as_raw_fd();
        poll.registry()
            .register(&mut SourceFd(&fd), LISTENER, Interest::READABLE)?;
        Ok(Loop {
            stack,
            shared,
            poll,
            index,
            cpu,
            conns: HashMap::new(),
            next_token: FIRST_CONN,
            listener_ready: true,
            next_scan: Instant::now(),
            scan_period: (shared.io_timeout / TIMEOUT_SCANS).min(MAX_SCAN_PERIOD),
            account: Account::default(),
            mark: shared.instrument.then(ThreadCpu::now),
            carried: ThreadCpu::ZERO,
        })
    }

    fn run(&mut self, tx: &mpsc::Sender<Line>) -> anyhow::Result<()> {
        let started = Instant::now();
        let cpu_start = ThreadCpu::now();
        let mut events = Events::with_capacity(EVENTS);
        loop {
            let closing = self.shared.closing.load(Ordering::SeqCst);
            if self.shared.abandon.load(Ordering::SeqCst) {
                let tokens: Vec<Token> = self.conns.keys().copied().collect();
                for token in tokens {
                    if let Some(entry) = self.conns.get_mut(&token) {
                        entry
                            .tracked
                            .interrupt(&mut self.mark, super::shared::abandoned());
                    }
                    self.close(token, true, tx)?;
                }
            }
            if closing && self.conns.is_empty() {
                break;
            }
            if self.listener_ready && !closing {
                self.accept_one(tx)?;
            }
            let timeout = if self.listener_ready && !closing {
                Duration::ZERO // more may be queued: take the next one after this turn
            } else {
                self.next_scan.saturating_duration_since(Instant::now())
            };
            // The wait is counted from the loop's last reading: the end of this turn (its
            // checks, the timeout scan) goes with the wait to what the wait returns.
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(anyhow!("epoll_wait: {e}")),
            }
            if let Some(woken) = lap(&mut self.mark) {
                self.charge_wake(&events, woken);
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.listener_ready = true,
                    WAKER => {}
                    token => self.advance(token, tx)?,
                }
            }
            if Instant::now() >= self.next_scan {
                self.expire(tx)?;
                self.next_scan = Instant::now() + self.scan_period;
            }
        }
        self.account.wait_cpu_ns += self.carried.total_ns;
        if self.shared.instrument {
            let record =
                self.account
                    .record_pinned(self.shared, self.index, self.cpu, started, cpu_start);
            send(tx, Line::Thread(record))?;
        }
        Ok(())
    }

    /// The CPU of a readiness wait: one that returned no event was waiting; one that returned
    /// events woke the loop for them (the kernel's wake-up and the return from epoll, 2-6 %
    /// of a handshake's server CPU here), and is their cost in equal parts: a connection's
    /// part is its own, the listener's goes to the next connection accepted.
    fn charge_wake(&mut self, events: &Events, woken: ThreadCpu) {
        let owned = |token: Token| token == LISTENER || self.conns.contains_key(&token);
        let owners = events.iter().filter(|e| owned(e.token())).count() as u64;
        if owners == 0 {
            self.account.wait_cpu_ns += woken.total_ns;
            return;
        }
        let share = woken.share(owners);
        for event in events.iter() {
            match event.token() {
                LISTENER => self.carried = self.carried.plus(share),
                token => {
                    if let Some(entry) = self.conns.get_mut(&token) {
                        entry.tracked.charge(share);
                    }
                }
            }
        }
        // What the equal parts leave over (under a nanosecond per owner).
        self.account.wait_cpu_ns += woken.total_ns - share.total_ns * owners;
    }

    /// Accepts one connection, if one is queued, and advances it as far as it goes.
    fn accept_one(&mut self, tx: &mpsc::Sender<Line>) -> anyhow::Result<()> {
        let (stream, peer) = match self.shared.listener.accept() {
            Ok(pair) => pair,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) =>
            {
                // Asking an empty listener is part of taking the next connection.
                if let Some(spent) = lap(&mut self.mark) {
                    self.carried = self.carried.plus(spent);
                }
                self.listener_ready = false;
                return Ok(());
            }
            // The client gave up before we got to it.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => return Ok(()),
            Err(e) => return Err(anyhow!("accept: {e}")),
        };
        let Some(seq) = self.shared.claim() else {
            return Ok(()); // past --max-connections: closed unserved
        };
        let token = Token(self.next_token);
        self.next_token += 1;
        let registry = self.poll.registry();
        let mut tracked = Tracked::open(seq, peer, &mut self.mark, || {
            super::shared::prepare(&stream, None)?;
            let fd = stream.as_raw_fd();
            registry.register(&mut SourceFd(&fd), token, Interest::READABLE)?;
            self.stack.open(CountingStream::new(stream))
        })?;
        tracked.charge(std::mem::replace(&mut self.carried, ThreadCpu::ZERO));
        let deadline = Instant::now() + self.shared.io_timeout;
        self.conns.insert(
            token,
            Entry {
                tracked,
                deadline,
                interest: Interest::READABLE,
            },
        );
        self.advance(token, tx)
    }

    /// An event for `token`: advance its connection until it waits or is over.
    fn advance(&mut self, token: Token, tx: &mpsc::Sender<Line>) -> anyhow::Result<()> {
        let Some(entry) = self.conns.get_mut(&token) else {
            return Ok(()); // closed earlier in this turn
        };
        entry.deadline = Instant::now() + self.shared.io_timeout;
        let registry = self.poll.registry();
        let watched = &mut entry.interest;
        // Changing what the socket is watched for is part of the connection's step.
        let step = entry.tracked.drive_then(&mut self.mark, |conn, step| {
            // Watch for writability only while a write waits: an idle send buffer would
            // otherwise wake the loop for nothing after every flight.
            let interest = if step == Step::Write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if *watched == interest {
                return Ok(());
            }
            *watched = interest;
            let fd = conn.socket().as_raw_fd();
            registry.reregister(&mut SourceFd(&fd), token, interest)
        })?;
        match step {
            Step::Closed => self.close(token, false, tx),
            Step::Read | Step::Write => Ok(()),
            Step::Handshaken => unreachable!("drive() notes the handshake's end itself"),
        }
    }

    /// Interrupts every connection whose peer has been silent past `--io-timeout-ms`.
    fn expire(&mut self, tx: &mpsc::Sender<Line>) -> anyhow::Result<()> {
        let now = Instant::now();
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, e)| e.deadline <= now)
            .map(|(t, _)| *t)
            .collect();
        for token in late {
            if let Some(entry) = self.conns.get_mut(&token) {
                let timeout = socket_failure(std::io::ErrorKind::WouldBlock, "timeout");
                entry.tracked.interrupt(&mut self.mark, timeout);
            }
            self.close(token, false, tx)?;
        }
        Ok(())
    }

    fn close(
        &mut self,
        token: Token,
        abandoned: bool,
        tx: &mpsc::Sender<Line>,
    ) -> anyhow::Result<()> {
        let Some(entry) = self.conns.remove(&token) else {
            return Ok(());
        };
        let registry = self.poll.registry();
        let record = entry
            .tracked
            .finish(&mut self.mark, self.shared.who, abandoned, |conn| {
                let fd = conn.socket().as_raw_fd();
                // Closing the socket would drop it from epoll as well; deregistering first
                // keeps the set exact whatever else holds the descriptor.
                let _ = registry.deregister(&mut SourceFd(&fd));
            })?;
        if let Some(record) = record {
            self.account.connections += 1;
            self.account.conn_cpu_ns += record.conn_cpu_ns.unwrap_or(0);
            send(tx, Line::Server(Box::new(record)))?;
        }
        self.shared.settle();
        Ok(())
    }
}
