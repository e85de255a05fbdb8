//! One accepted connection as the scaffold keeps it, whichever the model: the stack's
//! connection and what is measured around it. Each call into the connection is a step; the
//! thread's CPU clock is read after it and what the thread spent since the thread's previous
//! reading (`Mark`) is the connection's. Readings are chained, one per boundary: a reading
//! costs about a microsecond of system calls (clock, rusage, instruction counter), which
//! with a reading before and after every step fell between spans and was no one's.

use std::net::SocketAddr;
use std::time::Instant;

use crate::cpu::ThreadCpu;
use crate::failure::Failure;
use crate::observed::{ServerIdentity, ServerSpans};
use crate::record::ServerRecord;
use crate::{ns_between, unix_ns};

use super::conn::{Conn, Step};

/// A serving thread's latest CPU reading: the start of whatever span it counts next (None:
/// not instrumented, nothing is read). A threads worker keeps one per connection, from
/// before the poll that returned it; an event loop keeps one across everything it does.
pub(crate) type Mark = Option<ThreadCpu>;

/// The CPU since `mark`, moving `mark` to now.
pub(crate) fn lap(mark: &mut Mark) -> Option<ThreadCpu> {
    let before = (*mark)?;
    let now = ThreadCpu::now();
    *mark = Some(now);
    Some(now.since(before))
}

pub(crate) struct Tracked<C> {
    pub(crate) conn: C,
    seq: u64,
    peer: SocketAddr,
    accept_unix_ns: u128,
    /// accept() returned.
    start: Instant,
    /// The connection's CPU so far: the sum of its spans.
    cpu: ThreadCpu,
    /// When the handshake ended (or failed) and the CPU it had taken by then.
    handshake: Option<(Instant, ThreadCpu)>,
}

impl<C: Conn> Tracked<C> {
    /// Opens the stack's connection over an accepted socket. `mark` was read before the
    /// accept (the accept and the opening are the first span).
    pub(crate) fn open(
        seq: u64,
        peer: SocketAddr,
        mark: &mut Mark,
        open: impl FnOnce() -> anyhow::Result<C>,
    ) -> anyhow::Result<Self> {
        let accept_unix_ns = unix_ns();
        let start = Instant::now();
        let conn = open()?;
        let cpu = lap(mark).unwrap_or(ThreadCpu::ZERO);
        Ok(Tracked {
            conn,
            seq,
            peer,
            accept_unix_ns,
            start,
            cpu,
            handshake: None,
        })
    }

    /// Adds CPU the thread spent for this connection outside its spans: its share of the
    /// readiness wait that woke the loop for it, or what the loop spent before accepting it.
    pub(crate) fn charge(&mut self, cpu: ThreadCpu) {
        self.cpu = self.cpu.plus(cpu);
    }

    /// Counts the CPU since `mark` as this connection's.
    fn count(&mut self, mark: &mut Mark) {
        if let Some(spent) = lap(mark) {
            self.cpu = self.cpu.plus(spent);
        }
    }

    /// Advances until the connection waits for its socket (`Read`, `Write`) or is over
    /// (`Closed`); the end of the handshake is noted on the way.
    pub(crate) fn drive(&mut self, mark: &mut Mark) -> Step {
        self.drive_then(mark, |_, _| Ok(())).unwrap_or(Step::Closed)
    }

    /// As `drive`, then runs `then` with the step it stopped at, in the same span (an event
    /// loop changes what the socket is watched for).
    pub(crate) fn drive_then(
        &mut self,
        mark: &mut Mark,
        then: impl FnOnce(&C, Step) -> std::io::Result<()>,
    ) -> std::io::Result<Step> {
        loop {
            let step = self.conn.advance();
            match step {
                Step::Handshaken => {
                    self.count(mark);
                    self.handshake = Some((Instant::now(), self.cpu));
                }
                Step::Closed => {
                    self.count(mark);
                    self.handshake.get_or_insert((Instant::now(), self.cpu));
                    return Ok(Step::Closed);
                }
                wait => {
                    let out = then(&self.conn, wait);
                    self.count(mark);
                    return out.map(|()| wait);
                }
            }
        }
    }

    /// Stops the connection where it stands (see `Conn::interrupt`).
    pub(crate) fn interrupt(&mut self, mark: &mut Mark, failure: Failure) {
        self.conn.interrupt(failure);
        self.count(mark);
        self.handshake.get_or_insert((Instant::now(), self.cpu));
    }

    /// Closes the connection (the last span) and returns its record when instrumented.
    /// `abandoned`: a stopping server cut it, which is what a failure then says.
    /// `before_close` runs in the closing span (an event loop deregisters the socket).
    pub(crate) fn finish(
        mut self,
        mark: &mut Mark,
        who: ServerIdentity,
        abandoned: bool,
        before_close: impl FnOnce(&C),
    ) -> anyhow::Result<Option<ServerRecord>> {
        let instrumented = mark.is_some();
        before_close(&self.conn);
        let (handshake_end, handshake_cpu) = self.handshake.unwrap_or((Instant::now(), self.cpu));
        let finished = self.conn.finish();
        let conn_end = Instant::now();
        if let Some(spent) = lap(mark) {
            self.cpu = self.cpu.plus(spent);
        }
        let mut seen = finished?;
        if !instrumented {
            return Ok(None);
        }
        if abandoned && seen.failure.is_some() {
            seen.failure = Some(super::shared::abandoned());
        }
        let spans = ServerSpans {
            seq: self.seq,
            peer_port: super::shared::port(&self.peer),
            accept_unix_ns: self.accept_unix_ns,
            handshake_ns: ns_between(self.start, handshake_end),
            cpu: handshake_cpu,
            conn_ns: ns_between(self.start, conn_end),
            conn_cpu_ns: self.cpu.total_ns,
        };
        Ok(Some(ServerRecord::observed(who, spans, seen)))
    }
}
