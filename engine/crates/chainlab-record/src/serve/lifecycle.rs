//! Where a server connection stands, whatever the stack: handshake, then the close (our
//! close_notify and the peer's), then done; with what the connection has come to so far (its
//! failure, the peer's close_notify, the bytes when the handshake ended). A stack's `Conn`
//! keeps one and reports its steps through it.

use crate::counting::Counts;
use crate::failure::Failure;

use super::conn::Step;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Handshake,
    /// After the handshake: our close_notify, then the peer's.
    Closing,
    Done,
}

#[derive(Debug)]
pub struct Lifecycle {
    phase: Phase,
    /// Why the connection failed (only ever during the handshake).
    pub failure: Option<Failure>,
    /// After a completed handshake: whether the peer's close_notify arrived.
    pub peer_close_notify: Option<bool>,
    /// Bytes at the socket when the handshake ended.
    pub handshake_counts: Option<Counts>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            phase: Phase::Handshake,
            failure: None,
            peer_close_notify: None,
            handshake_counts: None,
        }
    }
}

impl Lifecycle {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The handshake ended with `counts` bytes at the socket; the close comes next.
    pub fn handshaken(&mut self, counts: Counts) -> Step {
        self.handshake_counts = Some(counts);
        self.phase = Phase::Closing;
        Step::Handshaken
    }

    /// The handshake failed.
    pub fn fail(&mut self, failure: Failure) -> Step {
        self.failure = Some(failure);
        self.phase = Phase::Done;
        Step::Closed
    }

    /// The close ended: with the peer's close_notify, or without (EOF, reset, an error).
    pub fn closed(&mut self, close_notify: bool) -> Step {
        self.peer_close_notify = Some(close_notify);
        self.phase = Phase::Done;
        Step::Closed
    }

    /// `Conn::interrupt`: during the handshake `failure` is the outcome; during the close the
    /// peer's close_notify never came.
    pub fn interrupt(&mut self, failure: Failure) {
        match self.phase {
            Phase::Handshake => self.failure = Some(failure),
            Phase::Closing => self.peer_close_notify = Some(false),
            Phase::Done => {}
        }
        self.phase = Phase::Done;
    }

    /// Whether the handshake completed (and nothing failed).
    pub fn ok(&self) -> bool {
        self.failure.is_none() && self.handshake_counts.is_some()
    }
}
