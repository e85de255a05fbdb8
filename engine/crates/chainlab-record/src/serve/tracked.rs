//! One accepted connection as the scaffold keeps it, whichever the model: the stack's
//! connection and what is measured around it. Each call into the connection is a step; the
//! thread's CPU clock is read before and after it and the difference is the connection's.

use std::net::SocketAddr;
use std::time::Instant;

use crate::cpu::ThreadCpu;
use crate::failure::Failure;
use crate::observed::{ServerIdentity, ServerSpans};
use crate::record::ServerRecord;
use crate::{ns_between, unix_ns};

use super::conn::{Conn, Step};

pub(crate) struct Tracked<C> {
    pub(crate) conn: C,
    seq: u64,
    peer: SocketAddr,
    accept_unix_ns: u128,
    /// accept() returned.
    start: Instant,
    instrument: bool,
    /// The connection's CPU so far: the sum of its steps.
    cpu: ThreadCpu,
    /// When the handshake ended (or failed) and the CPU it had taken by then.
    handshake: Option<(Instant, ThreadCpu)>,
}

impl<C: Conn> Tracked<C> {
    /// Opens the stack's connection over an accepted socket. `accept_cpu` is the thread's
    /// CPU reading before the accept (the accept and the opening are the first step).
    pub(crate) fn open(
        seq: u64,
        peer: SocketAddr,
        accept_cpu: Option<ThreadCpu>,
        open: impl FnOnce() -> anyhow::Result<C>,
    ) -> anyhow::Result<Self> {
        let accept_unix_ns = unix_ns();
        let start = Instant::now();
        let conn = open()?;
        let cpu = accept_cpu.map_or(ThreadCpu::ZERO, |before| ThreadCpu::now().since(before));
        Ok(Tracked {
            conn,
            seq,
            peer,
            accept_unix_ns,
            start,
            instrument: accept_cpu.is_some(),
            cpu,
            handshake: None,
        })
    }

    /// Runs `f` as one step of this connection.
    fn step<T>(&mut self, f: impl FnOnce(&mut C) -> T) -> T {
        if !self.instrument {
            return f(&mut self.conn);
        }
        let before = ThreadCpu::now();
        let out = f(&mut self.conn);
        self.cpu = self.cpu.plus(ThreadCpu::now().since(before));
        out
    }

    /// Advances until the connection waits for its socket (`Read`, `Write`) or is over
    /// (`Closed`); the end of the handshake is noted on the way.
    pub(crate) fn drive(&mut self) -> Step {
        loop {
            let step = self.step(Conn::advance);
            match step {
                Step::Handshaken => {
                    self.handshake = Some((Instant::now(), self.cpu));
                }
                Step::Closed => {
                    self.handshake.get_or_insert((Instant::now(), self.cpu));
                    return Step::Closed;
                }
                wait => return wait,
            }
        }
    }

    /// Stops the connection where it stands (see `Conn::interrupt`).
    pub(crate) fn interrupt(&mut self, failure: Failure) {
        self.step(|c| c.interrupt(failure));
        self.handshake.get_or_insert((Instant::now(), self.cpu));
    }

    /// Closes the connection (the last step) and returns its record when instrumented.
    /// `abandoned`: a stopping server cut it, which is what a failure then says.
    /// `before_close` runs in the closing step (an event loop deregisters the socket).
    pub(crate) fn finish(
        mut self,
        who: ServerIdentity,
        abandoned: bool,
        before_close: impl FnOnce(&C),
    ) -> anyhow::Result<Option<ServerRecord>> {
        let before = self.instrument.then(ThreadCpu::now);
        before_close(&self.conn);
        let (handshake_end, handshake_cpu) = self.handshake.unwrap_or((Instant::now(), self.cpu));
        let mut seen = self.conn.finish()?;
        let conn_end = Instant::now();
        let Some(before) = before else {
            return Ok(None);
        };
        self.cpu = self.cpu.plus(ThreadCpu::now().since(before));
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
