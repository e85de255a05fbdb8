//! The QUIC client: one connection of `handshake` start to finish (see `super` for its spans).

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use anyhow::bail;
use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, SslRef};
use openssl_sys as sys;

use crate::cpu::ThreadCpu;
use crate::record::{ClientRecord, Datagrams};
use crate::tls::attempt::{Client, Observed};
use crate::tls::chain::observed_chain;
use crate::tls::datagrams::{self, BioAddr, DatagramCounts, Tally};
use crate::tls::errors::{self};
use crate::tls::{conn_id, group_name, ns_between, sigalg_name, unix_ns};

use super::{
    bio_for, close_info, drive, quic_failure, wait, Step, CLOSE_TIMEOUT,
    SSL_DEFAULT_STREAM_MODE_NONE,
};

// -- the client ----------------------------------------------------------------------------

/// One QUIC connection of `handshake`, start to finish (see the module docs for its spans).
pub(crate) fn attempt(
    client: &mut Client<'_>,
    seq: u64,
    warmup: bool,
) -> anyhow::Result<ClientRecord> {
    let instrument = !client.args.no_instrument;
    let server = client.args.connect;
    // Declared first, dropped last: the BIO callback points at it until the SSL is freed.
    let tally = Tally::client();
    let mut seen = Observed::default();
    // SAFETY: clears this thread's error queue, so a failure reads only its own errors.
    unsafe { sys::ERR_clear_error() };

    // Before the span, as the TCP client's SSL object: the UDP socket (its connect() sends
    // nothing) and the connection object with SNI, the session to resume and the counter.
    let socket = match udp_socket(server) {
        Ok(socket) => socket,
        Err(e) => {
            seen.failure = Some(errors::connect_failure(&e));
            return Ok(client.record(seq, warmup, unix_ns(), seen));
        }
    };
    let (ssl, offered) = client.new_ssl()?;
    seen.resume_offered = client.args.resume_ratio.map(|_| offered);
    quic_client(&ssl, client, &socket, instrument.then_some(&*tally))?;
    let ptr = ssl.as_ptr();
    // SAFETY: `tally` outlives `ssl` (declared before it).
    unsafe { datagrams::note_handshake_done(ptr, &tally) };
    let fd = socket.as_raw_fd();

    let start_unix_ns = unix_ns();
    let cpu_start = instrument.then(ThreadCpu::now);
    let start = Instant::now();
    let deadline = start + client.timeout;
    // SAFETY (this and the calls below): `ptr` is the live QUIC connection object.
    let step = drive(ptr, fd, deadline, || unsafe { sys::SSL_connect(ptr) });
    let end = Instant::now();
    seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
    seen.connect_ns = 0;
    seen.handshake_ns = Some(ns_between(start, end));
    let at_handshake = tally.total();
    // End of the timed span.

    match step {
        Step::Done => {
            // Wait for the server's HANDSHAKE_DONE (and what travels with it) before closing,
            // so the server sends nothing the client never reads: per connection, the bytes
            // one side sent are the bytes the other received.
            let wants_ticket = client.args.resume || client.args.resume_ratio.is_some();
            await_handshake_done(ptr, fd, &tally, wants_ticket);
            // TLS 1.3 lets a server reject a client certificate only after the client's
            // Finished: its CONNECTION_CLOSE then arrives instead of HANDSHAKE_DONE.
            match close_info(ptr).filter(|c| !c.local) {
                Some(close) => {
                    seen.failure = Some(errors::quic_closed_after_handshake(
                        &close,
                        client.ctx.client_cert,
                    ))
                }
                None => close_rapidly(ptr, fd, instrument.then_some(&*tally)),
            }
            if wants_ticket {
                client.resumption.session = ssl.session().map(|s| s.to_owned());
            }
            if instrument {
                let resumed = ssl.session_reused();
                seen.resumed = Some(resumed);
                seen.sigalg = sigalg_name(&ssl, true);
                // A resumed handshake carries no Certificate message.
                if !resumed {
                    seen.peer_chain = observed_chain(&ssl, false)?;
                    seen.mtc = crate::tls::mtc::checked(&ssl);
                }
            }
        }
        Step::Failed(code, stack) => {
            seen.failure = Some(quic_failure(
                &ssl,
                code,
                stack.as_ref(),
                &tally,
                false,
                client.side,
            ));
        }
        Step::TimedOut => {
            seen.failure = Some(quic_failure(
                &ssl,
                ErrorCode::WANT_READ,
                None,
                &tally,
                true,
                client.side,
            ));
        }
    }
    if instrument {
        seen.group = group_name(&ssl);
        seen.conn_id = conn_id(&ssl);
        seen.local_port = socket.local_addr().ok().map(|a| a.port());
        let total = tally.total();
        seen.handshake_counts = Some(as_counts(at_handshake));
        seen.conn_counts = Some(as_counts(total));
        seen.datagrams = Some(Datagrams {
            datagrams_read: at_handshake.datagrams_read,
            datagrams_written: at_handshake.datagrams_written,
            conn_datagrams_read: total.datagrams_read,
            conn_datagrams_written: total.datagrams_written,
            flight_datagrams: Some(at_handshake.written_before_last_read),
        });
    }
    drop(ssl);
    Ok(client.record(seq, warmup, start_unix_ns, seen))
}

/// A fresh UDP socket connected to the server (so ICMP errors come back as ECONNREFUSED),
/// non-blocking: the QUIC stack is driven by `ppoll`.
fn udp_socket(server: SocketAddr) -> std::io::Result<UdpSocket> {
    let local: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(local)?;
    socket.connect(server)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// Makes the client's connection object (SNI and session already set) a QUIC client over
/// `socket`: the server's address, the datagram counter (when instrumented), non-blocking,
/// no streams.
fn quic_client(
    ssl: &SslRef,
    client: &Client<'_>,
    socket: &UdpSocket,
    tally: Option<&Tally>,
) -> anyhow::Result<()> {
    let peer = BioAddr::new(client.args.connect)?;
    // SAFETY: `ssl` is a fresh QUIC connection object; the BIO is handed to it (one
    // reference for both directions) and freed with it; the socket outlives it (BIO_NOCLOSE).
    unsafe {
        let bio = bio_for(socket, tally)?;
        sys::SSL_set_bio(ssl.as_ptr(), bio, bio);
        if sys::SSL_set1_initial_peer_addr(ssl.as_ptr(), peer.as_ptr()) != 1
            || sys::SSL_set_blocking_mode(ssl.as_ptr(), 0) != 1
            || sys::SSL_set_default_stream_mode(ssl.as_ptr(), SSL_DEFAULT_STREAM_MODE_NONE) != 1
        {
            bail!("cannot set up the QUIC connection: {}", ErrorStack::get());
        }
    }
    Ok(())
}

/// Ticks the client's connection until the server's HANDSHAKE_DONE arrived, and with
/// `ticket` a NewSessionTicket too, or the connection closed (bounded by `CLOSE_TIMEOUT`).
fn await_handshake_done(ssl: *mut sys::SSL, fd: RawFd, tally: &Tally, ticket: bool) {
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    loop {
        // SAFETY: live QUIC connection object.
        unsafe { sys::SSL_handle_events(ssl) };
        let done = tally.handshake_done() && (!ticket || tally.ticket_received());
        if done || close_info(ssl).is_some() || Instant::now() >= deadline {
            return;
        }
        wait(ssl, fd, deadline, None);
    }
}

/// Closes the connection at once: one CONNECTION_CLOSE (application code 0), then the
/// connection is freed without waiting out the closing state (3 PTO, tens of milliseconds
/// on loopback, during which a closing endpoint only repeats its CONNECTION_CLOSE). Returns
/// once the CONNECTION_CLOSE has left (the counter saw a datagram go out) or the stack says
/// the close is complete; without a counter (`--no-instrument`), after the first call, which
/// sends it.
fn close_rapidly(ssl: *mut sys::SSL, fd: RawFd, tally: Option<&Tally>) {
    let sent_before = tally.map(|t| t.total().datagrams_written);
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    loop {
        // SAFETY: live QUIC connection object; NULL args means a zeroed SSL_SHUTDOWN_EX_ARGS.
        let r = unsafe {
            sys::SSL_shutdown_ex(
                ssl,
                crate::ossl::SSL_SHUTDOWN_FLAG_RAPID,
                std::ptr::null(),
                0,
            )
        };
        let sent = match (tally, sent_before) {
            (Some(t), Some(before)) => t.total().datagrams_written > before,
            _ => true,
        };
        if r != 0 || sent || Instant::now() >= deadline {
            return;
        }
        wait(ssl, fd, deadline, None);
    }
}

fn as_counts(d: DatagramCounts) -> crate::tls::counting::Counts {
    crate::tls::counting::Counts {
        read: d.bytes_read,
        written: d.bytes_written,
    }
}
