//! QUIC v1 as a transport of `serve` and `handshake` (`--transport quic`), through OpenSSL's
//! own QUIC stack: a listener (`SSL_new_listener`) on the server, the QUIC client method on
//! the client. Same contexts as TCP (groups, signature schemes including the patched SLH-DSA
//! ones, served chain, verification, compression), plus ALPN, which QUIC requires.
//!
//! Both sides drive OpenSSL in non-blocking mode on one thread and wait in `ppoll` for the
//! socket or the QUIC stack's next timer (retransmission, ack delay), so a deadline bounds
//! every wait and the thread's CPU clock is the connection's CPU.
//!
//! Spans. Client: the UDP socket is opened and connected (`connect_ns`, local only), then
//! `SSL_connect` from its first call, which sends the first Initial, to handshake completion
//! (`handshake_ns`); then a rapid close (one CONNECTION_CLOSE, no terminating period).
//! Server: from the first datagram of the connection (seen by the datagram counter) to
//! handshake completion; then the client's CONNECTION_CLOSE is awaited (`conn_*`).
//!
//! Address validation (Retry) is off on the listener: a client's first flight is then
//! answered under the anti-amplification limit (three times the bytes received, RFC 9000
//! Section 8.1), the effect this transport exists to measure.

//!
//! `client` and `server` are the two sides; this module holds what both use: the datagram
//! BIO, the non-blocking drive/wait loop, and the close and failure classification.

pub mod client;
pub mod server;

use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use anyhow::bail;
use foreign_types::ForeignTypeRef;
use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, SslRef};
use openssl_sys as sys;

use crate::tls::datagrams::{self, Tally};
use crate::tls::errors::{self, Failure, QuicClose, QuicFailure, Side};

/// How long the listener waits for a datagram before re-checking the stop flag (as the TCP
/// server's poll interval: it bounds how late SIGTERM is noticed, and adds no latency).
pub(super) const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long a client's close may take: a rapid close sends one CONNECTION_CLOSE and returns,
/// so this only bounds a stuck stack.
pub(super) const CLOSE_TIMEOUT: Duration = Duration::from_millis(500);

/// `SSL_DEFAULT_STREAM_MODE_NONE` (ssl.h): the connection opens no stream by itself; the
/// engine never sends application data.
pub(super) const SSL_DEFAULT_STREAM_MODE_NONE: u32 = 0;
/// `SSL_INCOMING_STREAM_POLICY_REJECT` (ssl.h).
pub(super) const SSL_INCOMING_STREAM_POLICY_REJECT: libc::c_int = 2;

// -- shared ----------------------------------------------------------------------------------

/// A datagram BIO over the socket, counting into `tally` when given.
///
/// # Safety
/// The socket must outlive the BIO, and the tally every use of the BIO.
pub(super) unsafe fn bio_for(
    socket: &UdpSocket,
    tally: Option<&Tally>,
) -> anyhow::Result<*mut sys::BIO> {
    let bio = crate::ossl::BIO_new_dgram(socket.as_raw_fd(), crate::ossl::BIO_NOCLOSE);
    if bio.is_null() {
        bail!("BIO_new_dgram failed: {}", ErrorStack::get());
    }
    if let Some(tally) = tally {
        datagrams::attach(bio, tally);
    }
    Ok(bio)
}

/// How a non-blocking operation ended.
pub(super) enum Step {
    Done,
    Failed(ErrorCode, Option<ErrorStack>),
    TimedOut,
}

/// Repeats a non-blocking operation (`SSL_connect`) until it completes, fails, or the
/// deadline passes.
pub(super) fn drive(
    ssl: *mut sys::SSL,
    fd: RawFd,
    deadline: Instant,
    mut op: impl FnMut() -> libc::c_int,
) -> Step {
    loop {
        if let Some(step) = outcome(ssl, op()) {
            return step;
        }
        if Instant::now() >= deadline {
            return Step::TimedOut;
        }
        wait(ssl, fd, deadline, None);
    }
}

/// What a non-blocking operation's return value `r` says: done, failed (with OpenSSL's
/// error queue), or `None` while it waits for the network.
pub(super) fn outcome(ssl: *mut sys::SSL, r: libc::c_int) -> Option<Step> {
    if r == 1 {
        return Some(Step::Done);
    }
    // SAFETY: live SSL object; `r` is the operation's return value.
    let code = unsafe { sys::SSL_get_error(ssl, r) };
    if code == sys::SSL_ERROR_WANT_READ || code == sys::SSL_ERROR_WANT_WRITE {
        return None;
    }
    let stack = ErrorStack::get();
    let stack = (!stack.errors().is_empty()).then_some(stack);
    Some(Step::Failed(ErrorCode::from_raw(code), stack))
}

/// Waits until the socket is readable (or writable, when the stack wants to write), the QUIC
/// stack's next timer is due, `wake` (the server's stop, chainlab_record::listen::Wake) turns
/// readable, or the deadline, whichever comes first.
pub(super) fn wait(ssl: *mut sys::SSL, fd: RawFd, deadline: Instant, wake: Option<RawFd>) {
    let mut limit = deadline.saturating_duration_since(Instant::now());
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut infinite: libc::c_int = 0;
    // SAFETY: live SSL object; both out-pointers are valid.
    let (has_timer, wants_write) = unsafe {
        (
            sys::SSL_get_event_timeout(ssl, &mut tv, &mut infinite) == 1 && infinite == 0,
            sys::SSL_net_write_desired(ssl) == 1,
        )
    };
    if has_timer {
        let timer = Duration::new(tv.tv_sec.max(0) as u64, (tv.tv_usec.max(0) as u32) * 1000);
        limit = limit.min(timer);
    }
    let mut pollfds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN | if wants_write { libc::POLLOUT } else { 0 },
            revents: 0,
        },
        libc::pollfd {
            fd: wake.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    let count = if wake.is_some() { 2 } else { 1 };
    // SAFETY: `count` valid pollfds and a valid timespec; a null signal mask keeps the
    // current one.
    unsafe { libc::ppoll(pollfds.as_mut_ptr(), count, &ts, std::ptr::null()) };
}

/// How the connection was closed, once it is (terminating or terminated).
pub(super) fn close_info(ssl: *mut sys::SSL) -> Option<QuicClose> {
    // SAFETY: zeroed plain-data struct filled by the call; `reason` points into the
    // connection object and is copied before the next call.
    unsafe {
        let mut info: sys::SSL_CONN_CLOSE_INFO = std::mem::zeroed();
        if sys::SSL_get_conn_close_info(ssl, &mut info, std::mem::size_of_val(&info)) != 1 {
            return None;
        }
        let reason = if info.reason.is_null() || info.reason_len == 0 {
            String::new()
        } else {
            let bytes = std::slice::from_raw_parts(info.reason.cast::<u8>(), info.reason_len);
            String::from_utf8_lossy(bytes).into_owned()
        };
        Some(QuicClose {
            local: info.flags & crate::ossl::SSL_CONN_CLOSE_FLAG_LOCAL != 0,
            transport: info.flags & crate::ossl::SSL_CONN_CLOSE_FLAG_TRANSPORT != 0,
            error_code: info.error_code,
            reason,
        })
    }
}

/// Classifies a failed QUIC handshake from what the connection and the counter saw.
pub(super) fn quic_failure(
    ssl: &SslRef,
    code: ErrorCode,
    stack: Option<&ErrorStack>,
    tally: &Tally,
    timed_out: bool,
    side: Side,
) -> Failure {
    let heard_back = tally.total().datagrams_read > 0;
    errors::quic_failure(
        ssl,
        QuicFailure {
            code,
            stack,
            socket_error: tally.last_error(),
            close: close_info(ssl.as_ptr()),
            timed_out,
            heard_back,
        },
        side,
    )
}
