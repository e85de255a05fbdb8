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

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, Ssl, SslContext, SslRef};
use openssl_sys as sys;

use super::chain::observed_chain;
use super::client::{Client, Observed};
use super::context::ServerContext;
use super::datagrams::{self, BioAddr, DatagramCounts, FirstRead, Tally};
use super::errors::{self, Failure, QuicClose, QuicFailure, Side};
use super::{conn_id, group_name, ns_between, sigalg_name, unix_ns};
use crate::cli::{ServeArgs, Transport};
use crate::cpu::ThreadCpu;
use crate::record::{
    ClientRecord, Datagrams, ErrorCategory, Outcome, RecordWriter, ServerRecord, SCHEMA,
};

/// How long the listener waits for a datagram before re-checking the stop flag (as the TCP
/// server's poll interval: it bounds how late SIGTERM is noticed, and adds no latency).
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long a client's close may take: a rapid close sends one CONNECTION_CLOSE and returns,
/// so this only bounds a stuck stack.
const CLOSE_TIMEOUT: Duration = Duration::from_millis(500);

/// `SSL_DEFAULT_STREAM_MODE_NONE` (ssl.h): the connection opens no stream by itself; the
/// engine never sends application data.
const SSL_DEFAULT_STREAM_MODE_NONE: u32 = 0;
/// `SSL_INCOMING_STREAM_POLICY_REJECT` (ssl.h).
const SSL_INCOMING_STREAM_POLICY_REJECT: libc::c_int = 2;

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
                client.session = ssl.session().map(|s| s.to_owned());
            }
            if instrument {
                let resumed = ssl.session_reused();
                seen.resumed = Some(resumed);
                seen.sigalg = sigalg_name(&ssl, true);
                // A resumed handshake carries no Certificate message.
                if !resumed {
                    seen.peer_chain = observed_chain(&ssl, false)?;
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
        wait(ssl, fd, deadline);
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
        wait(ssl, fd, deadline);
    }
}

fn as_counts(d: DatagramCounts) -> super::counting::Counts {
    super::counting::Counts {
        read: d.bytes_read,
        written: d.bytes_written,
    }
}

// -- the server ----------------------------------------------------------------------------

/// `serve --transport quic`: one listener on one UDP socket, one connection at a time.
pub fn serve(args: &ServeArgs, server: &ServerContext) -> anyhow::Result<()> {
    if args.workers != 1 {
        bail!(
            "--workers {} with --transport quic: the QUIC server handles one connection at a \
             time; use --workers 1",
            args.workers
        );
    }
    let socket = UdpSocket::bind(args.listen)
        .map_err(|e| anyhow!("cannot listen on {} (UDP): {e}", args.listen))?;
    socket.set_nonblocking(true)?;
    let addr = socket.local_addr()?;
    let records = if args.no_instrument {
        None
    } else {
        Some(Mutex::new(RecordWriter::open(&args.records)?))
    };
    let signals = super::server::StopSignals::block()?;
    super::server::print_ready(server, addr, Transport::Quic)?;

    let stop = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let listener = scope.spawn(|| {
            let client_auth = server.client_auth.is_some();
            let result = listen(
                args,
                &server.ctx,
                client_auth,
                &socket,
                records.as_ref(),
                &stop,
            );
            finished.store(true, Ordering::SeqCst);
            result
        });
        while !finished.load(Ordering::SeqCst) {
            if signals.wait(POLL_INTERVAL) {
                stop.store(true, Ordering::SeqCst);
            }
        }
        listener
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the QUIC listener thread panicked")))
    });
    result
}

/// The listener loop: accept every queued connection, advance each one in flight, record each
/// when it ends; until stopped (in-flight connections get `STOP_GRACE` to finish) or
/// `--max-connections` connections have been served.
fn listen(
    args: &ServeArgs,
    ctx: &SslContext,
    client_auth: bool,
    socket: &UdpSocket,
    records: Option<&Mutex<RecordWriter>>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let instrument = records.is_some();
    // Declared before the listener: the BIO callback points at it until the listener is freed.
    let tally = Tally::server(instrument);
    let fd = socket.as_raw_fd();
    // SAFETY: a listener on a valid context; the BIO (one reference, both directions) is
    // handed to it; the socket outlives it (BIO_NOCLOSE). `Ssl` frees the listener.
    let listener = unsafe {
        let ptr =
            crate::ossl::SSL_new_listener(ctx.as_ptr(), crate::ossl::SSL_LISTENER_FLAG_NO_VALIDATE);
        if ptr.is_null() {
            bail!("cannot create the QUIC listener: {}", ErrorStack::get());
        }
        let listener = Ssl::from_ptr(ptr);
        let bio = bio_for(socket, instrument.then_some(&*tally))?;
        sys::SSL_set_bio(ptr, bio, bio);
        if sys::SSL_set_blocking_mode(ptr, 0) != 1 || crate::ossl::SSL_listen(ptr) != 1 {
            bail!("cannot start the QUIC listener: {}", ErrorStack::get());
        }
        listener
    };
    let each = Each {
        tally: &tally,
        io_timeout: Duration::from_millis(args.io_timeout_ms),
        side: Side::Server { client_auth },
        instrument,
    };
    let mut accepted = 0u64;
    let mut live: Vec<Live> = Vec::new();
    let mut stopping_since: Option<Instant> = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            stopping_since.get_or_insert_with(Instant::now);
        }
        let room = |n: u64| args.max_connections.is_none_or(|max| n < max);
        if (stopping_since.is_some() || !room(accepted)) && live.is_empty() {
            return Ok(());
        }
        let mut progressed = false;
        while stopping_since.is_none() && room(accepted) {
            // SAFETY: live listener; a non-null result is a connection object we now own.
            let conn = unsafe {
                crate::ossl::SSL_accept_connection(
                    listener.as_ptr(),
                    crate::ossl::SSL_ACCEPT_CONNECTION_NO_BLOCK,
                )
            };
            if conn.is_null() {
                break;
            }
            // SAFETY: owned connection object (freed when dropped).
            let conn = unsafe { Ssl::from_ptr(conn) };
            live.push(Live::new(conn, accepted, &each));
            accepted += 1;
            progressed = true;
        }
        let live_count = live.len();
        // Where spans overlap, the thread's CPU can no longer be told apart: a handshake's
        // CPU is its own while no other connection is handshaking (one that is closing only
        // reads a CONNECTION_CLOSE), a connection's while no other is in flight at all.
        let handshaking = live.iter().filter(|l| l.handshaking()).count();
        for l in live.iter_mut() {
            if handshaking > 1 && l.handshaking() {
                l.handshake_alone = false;
            }
            if live_count > 1 {
                l.alone = false;
            }
        }
        let cut = stopping_since.is_some_and(|t| t.elapsed() >= super::server::STOP_GRACE);
        let mut i = 0;
        while i < live.len() {
            if !live[i].advance(&each, cut) {
                i += 1;
                continue;
            }
            progressed = true;
            let record = live.remove(i).finish(&each)?;
            if let (Some(records), Some(record)) = (records, record) {
                records
                    .lock()
                    .map_err(|_| anyhow!("records writer poisoned"))?
                    .write(&record)?;
            }
        }
        if !progressed {
            let next = live
                .iter()
                .map(|l| l.deadline)
                .min()
                .unwrap_or_else(|| Instant::now() + POLL_INTERVAL)
                .min(Instant::now() + POLL_INTERVAL);
            wait(listener.as_ptr(), fd, next);
        }
    }
}

/// What every connection of the listener shares.
struct Each<'a> {
    tally: &'a Tally,
    io_timeout: Duration,
    side: Side,
    instrument: bool,
}

/// Where a connection is.
enum Phase {
    /// Until the handshake completes (the client's Finished processed).
    Handshaking,
    /// Then until the client's CONNECTION_CLOSE.
    Closing,
}

/// A connection in flight: from its first datagram to the client's CONNECTION_CLOSE.
struct Live {
    conn: Ssl,
    seq: u64,
    peer: Option<SocketAddr>,
    first: FirstRead,
    phase: Phase,
    /// The current phase's deadline (`--io-timeout-ms` without progress).
    deadline: Instant,
    /// No other connection was handshaking during its handshake: the thread's CPU over that
    /// span is its own. OpenSSL advances every connection on each call, so under concurrent
    /// handshakes CPU is not recorded.
    handshake_alone: bool,
    /// No other connection was in flight at all during its span (for `conn_cpu_ns`).
    alone: bool,
    handshake_end: Option<Instant>,
    cpu: Option<ThreadCpu>,
    at_handshake: DatagramCounts,
    failure: Option<Failure>,
    peer_close_notify: Option<bool>,
}

impl Live {
    fn new(conn: Ssl, seq: u64, each: &Each<'_>) -> Self {
        let (peer, first) = match each.tally.claim_oldest() {
            Some((peer, first)) => (Some(peer), first),
            // Not instrumented (no counter), or the first datagram was not seen: start now.
            None => (
                None,
                FirstRead {
                    at: Instant::now(),
                    unix_ns: unix_ns(),
                    cpu: each.instrument.then(ThreadCpu::now),
                },
            ),
        };
        // SAFETY: live connection object.
        unsafe {
            let _ = sys::SSL_set_blocking_mode(conn.as_ptr(), 0);
            let _ = sys::SSL_set_incoming_stream_policy(
                conn.as_ptr(),
                SSL_INCOMING_STREAM_POLICY_REJECT,
                0,
            );
        }
        Live {
            conn,
            seq,
            peer,
            deadline: first.at + each.io_timeout,
            first,
            phase: Phase::Handshaking,
            handshake_alone: true,
            alone: true,
            handshake_end: None,
            cpu: None,
            at_handshake: DatagramCounts::default(),
            failure: None,
            peer_close_notify: None,
        }
    }

    fn handshaking(&self) -> bool {
        matches!(self.phase, Phase::Handshaking)
    }

    /// One step; true once the connection has ended (`cut`: the server is stopping and the
    /// grace period is over).
    fn advance(&mut self, each: &Each<'_>, cut: bool) -> bool {
        let ptr = self.conn.as_ptr();
        match self.phase {
            Phase::Handshaking => {
                // SAFETY: this thread's error queue, then the live connection object.
                let r = unsafe {
                    sys::ERR_clear_error();
                    sys::SSL_do_handshake(ptr)
                };
                match outcome(ptr, r) {
                    Some(Step::Done) => {
                        let now = Instant::now();
                        self.handshake_end = Some(now);
                        self.cpu = self.first.cpu.map(|c| ThreadCpu::now().since(c));
                        self.at_handshake =
                            self.peer.map(|p| each.tally.counts(p)).unwrap_or_default();
                        if each.tally.pending() > 0 {
                            // a client not yet accepted was being served too
                            self.handshake_alone = false;
                            self.alone = false;
                        }
                        self.phase = Phase::Closing;
                        self.deadline = now + each.io_timeout;
                        return false;
                    }
                    Some(Step::Failed(code, stack)) => {
                        self.failure = Some(quic_failure(
                            &self.conn,
                            code,
                            stack.as_ref(),
                            each.tally,
                            false,
                            each.side,
                        ));
                    }
                    // Still waiting for the network (`outcome` never says TimedOut).
                    _ if cut => {
                        self.failure = Some(Failure {
                            category: ErrorCategory::IoError,
                            detail: "abandoned: the server was stopping (SIGTERM/SIGINT)"
                                .to_owned(),
                        });
                    }
                    _ if Instant::now() >= self.deadline => {
                        self.failure = Some(quic_failure(
                            &self.conn,
                            ErrorCode::WANT_READ,
                            None,
                            each.tally,
                            true,
                            each.side,
                        ));
                    }
                    _ => return false,
                }
                self.handshake_end = Some(Instant::now());
                self.cpu = self.first.cpu.map(|c| ThreadCpu::now().since(c));
                self.at_handshake = self.peer.map(|p| each.tally.counts(p)).unwrap_or_default();
                true
            }
            Phase::Closing => {
                // SAFETY: live connection object.
                unsafe { sys::SSL_handle_events(ptr) };
                if let Some(close) = close_info(ptr) {
                    self.peer_close_notify =
                        Some(!close.local && !close.transport && close.error_code == 0);
                    return true;
                }
                if cut || Instant::now() >= self.deadline {
                    self.peer_close_notify = Some(false);
                    return true;
                }
                false
            }
        }
    }

    /// The record of an ended connection (`None` without instrumentation); frees it.
    fn finish(self, each: &Each<'_>) -> anyhow::Result<Option<ServerRecord>> {
        let tally = each.tally;
        let (Some(cpu), Some(end)) = (self.cpu, self.handshake_end) else {
            if let Some(peer) = self.peer {
                tally.finish(peer);
            }
            return Ok(None);
        };
        let conn = &self.conn;
        let total = self.peer.map(|p| tally.counts(p)).unwrap_or_default();
        let at = self.at_handshake;
        let alone = self.handshake_alone;
        let conn_alone = alone && self.alone && tally.pending() == 0;
        let failure = self.failure;
        let mut record = ServerRecord {
            schema: SCHEMA,
            side: "server",
            stack: crate::info::stack(),
            transport: Transport::Quic,
            seq: self.seq,
            conn_id: conn_id(conn),
            peer_port: self.peer.map(|p| p.port()),
            accept_unix_ns: self.first.unix_ns,
            handshake_ns: Some(ns_between(self.first.at, end)),
            cpu_ns: alone.then_some(cpu.total_ns),
            cpu_user_us: alone.then_some(cpu.user_us),
            cpu_sys_us: alone.then_some(cpu.sys_us),
            instructions: cpu.instructions.filter(|_| alone),
            conn_ns: None,
            conn_cpu_ns: None,
            bytes_read: Some(at.bytes_read),
            bytes_written: Some(at.bytes_written),
            conn_bytes_read: Some(total.bytes_read),
            conn_bytes_written: Some(total.bytes_written),
            datagrams: Some(Datagrams {
                datagrams_read: at.datagrams_read,
                datagrams_written: at.datagrams_written,
                conn_datagrams_read: total.datagrams_read,
                conn_datagrams_written: total.datagrams_written,
                flight_datagrams: None,
            }),
            peer_close_notify: self.peer_close_notify,
            group: group_name(conn),
            sigalg: sigalg_name(conn, false),
            resumed: failure.is_none().then(|| conn.session_reused()),
            // Mutual TLS: the client's chain as this server saw it (absent without).
            peer_chain: match each.side {
                Side::Server { client_auth: true } => Some(observed_chain(conn, true)?),
                _ => None,
            },
            outcome: if failure.is_none() {
                Outcome::Ok
            } else {
                Outcome::Failed
            },
            error_category: failure.as_ref().map(|f| f.category),
            error_detail: failure.map(|f| f.detail),
        };
        drop(self.conn);
        if let Some(peer) = self.peer {
            tally.finish(peer);
        }
        record.conn_ns = Some(ns_between(self.first.at, Instant::now()));
        record.conn_cpu_ns = self
            .first
            .cpu
            .filter(|_| conn_alone)
            .map(|start| ThreadCpu::now().since(start).total_ns);
        Ok(Some(record))
    }
}

// -- shared ----------------------------------------------------------------------------------

/// A datagram BIO over the socket, counting into `tally` when given.
///
/// # Safety
/// The socket must outlive the BIO, and the tally every use of the BIO.
unsafe fn bio_for(socket: &UdpSocket, tally: Option<&Tally>) -> anyhow::Result<*mut sys::BIO> {
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
enum Step {
    Done,
    Failed(ErrorCode, Option<ErrorStack>),
    TimedOut,
}

/// Repeats a non-blocking operation (`SSL_connect`) until it completes, fails, or the
/// deadline passes.
fn drive(
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
        wait(ssl, fd, deadline);
    }
}

/// What a non-blocking operation's return value `r` says: done, failed (with OpenSSL's
/// error queue), or `None` while it waits for the network.
fn outcome(ssl: *mut sys::SSL, r: libc::c_int) -> Option<Step> {
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
/// stack's next timer is due, or the deadline, whichever comes first.
fn wait(ssl: *mut sys::SSL, fd: RawFd, deadline: Instant) {
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
    let mut pollfd = libc::pollfd {
        fd,
        events: libc::POLLIN | if wants_write { libc::POLLOUT } else { 0 },
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd and timespec; a null signal mask keeps the current one.
    unsafe { libc::ppoll(&mut pollfd, 1, &ts, std::ptr::null()) };
}

/// How the connection was closed, once it is (terminating or terminated).
fn close_info(ssl: *mut sys::SSL) -> Option<QuicClose> {
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
fn quic_failure(
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
