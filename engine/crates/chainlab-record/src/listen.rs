//! Accepting connections on a non-blocking listener while watching a stop flag: how every
//! engine's server waits for its next connection.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::bail;

use crate::cpu::ThreadCpu;

/// How long a server waits in poll() before re-checking its stop flag. It bounds how late a
/// server notices SIGTERM; it adds nothing to a connection's latency (poll returns as soon
/// as a connection is pending) and an idle wake-up every 50 ms costs nothing measurable.
pub const POLL_INTERVAL_MS: libc::c_int = 50;

/// Waits for a pending connection on `listener` (non-blocking); `None` once `stop` is set.
///
/// With `instrument`, also the thread's CPU just before the `accept` that returned the
/// connection: accepting it is the connection's first step (as in the event loop), waiting
/// for it in poll is not.
pub fn accept_until(
    listener: &TcpListener,
    stop: &AtomicBool,
    instrument: bool,
) -> anyhow::Result<Option<(TcpStream, SocketAddr, Option<ThreadCpu>)>> {
    let mut pollfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pollfd, 1, POLL_INTERVAL_MS) };
        if ready <= 0 {
            continue; // timeout, or EINTR
        }
        let before = instrument.then(ThreadCpu::now);
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
