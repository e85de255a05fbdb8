//! Accepting connections on a non-blocking listener while watching a stop flag: how every
//! engine's server waits for its next connection.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::bail;

use crate::cpu::ThreadCpu;

/// How long a server waits in poll() before re-checking its stop flag. It bounds how late a
/// server notices SIGTERM; it adds nothing to a connection's latency (poll returns as soon
/// as a connection is pending) and an idle wake-up every 50 ms costs nothing measurable.
pub const POLL_INTERVAL_MS: libc::c_int = 50;

/// Waits for a pending connection on `listener` (non-blocking); `None` once `stop` is set.
/// `wake` turns readable when `stop` is set, so the wait ends at once rather than at the
/// next poll interval.
///
/// With `instrument`, also the thread's CPU just before the poll that returned the
/// connection as pending: being woken for it (the kernel's wake-up and the return from
/// poll, ~1 % of an ML-DSA-65 handshake's server CPU here) and accepting it are the
/// connection's first steps, as Go's goroutine wake-up is its (docs/stacks.md); the polls
/// that timed out before it are no connection's.
pub fn accept_until(
    listener: &TcpListener,
    stop: &AtomicBool,
    instrument: bool,
    wake: &Wake,
) -> anyhow::Result<Option<(TcpStream, SocketAddr, Option<ThreadCpu>)>> {
    let mut pollfds = [
        libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: wake.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let before = instrument.then(ThreadCpu::now);
        // SAFETY: two valid pollfds for the duration of the call.
        let ready = unsafe { libc::poll(pollfds.as_mut_ptr(), 2, POLL_INTERVAL_MS) };
        if ready <= 0 || pollfds[0].revents == 0 {
            continue; // timeout, EINTR, or woken: the flag is checked first
        }
        match listener.accept() {
            Ok((stream, peer)) => return Ok(Some((stream, peer, before))),
            // Another worker took it, or the client gave up before we got to it.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::ConnectionAborted
                ) => {}
            Err(e) => bail!("accept on {}: {e}", listener.local_addr()?),
        }
    }
}

/// An eventfd that, once `wake` is called, stays readable: every thread polling it wakes.
pub struct Wake {
    fd: OwnedFd,
}

impl Wake {
    pub fn new() -> anyhow::Result<Self> {
        // SAFETY: eventfd() returns a new descriptor or -1; nothing else is passed.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            bail!("eventfd: {}", std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor this value now owns alone.
        Ok(Self {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Makes the descriptor readable (it is never read, so it stays so).
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to a descriptor this value owns. A failed
        // write (the counter's maximum) leaves it readable anyway.
        unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

/// The descriptor to poll beside a socket (the QUIC server's `ppoll`).
impl AsRawFd for Wake {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}
