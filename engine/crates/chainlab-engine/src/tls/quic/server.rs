//! The QUIC server: `serve --transport quic`, one listener thread advancing every connection
//! (see `super` for its spans).

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use foreign_types::ForeignType;
use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, Ssl, SslContext};
use openssl_sys as sys;

use crate::cli::{ServeArgs, Transport};
use crate::cpu::ThreadCpu;
use crate::record::{Datagrams, ErrorCategory, RecordWriter, ServerRecord};
use crate::tls::chain::observed_chain;
use crate::tls::context::ServerContext;
use crate::tls::datagrams::{DatagramCounts, FirstRead, Tally};
use crate::tls::errors::{Failure, Side};
use crate::tls::{conn_id, group_name, ns_between, recorded, sigalg_name, unix_ns};
use chainlab_record::args::ServerModel;
use chainlab_record::counting::Counts;
use chainlab_record::listen::Wake;
use chainlab_record::observed::ServerIdentity;
use chainlab_record::observed::{ServerObserved, ServerSpans};

use super::{
    bio_for, close_info, outcome, quic_failure, wait, Step, POLL_INTERVAL,
    SSL_INCOMING_STREAM_POLICY_REJECT,
};

// -- the server ----------------------------------------------------------------------------

/// `serve --transport quic`: one listener on one UDP socket, one connection at a time.
pub fn serve(args: &ServeArgs, server: &ServerContext) -> anyhow::Result<()> {
    if args.server_model != ServerModel::Threads {
        bail!(
            "--server-model {} with --transport quic: the QUIC server handles one connection \
             at a time; use --server-model threads",
            args.server_model.name()
        );
    }
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
    let signals = chainlab_record::serve::StopSignals::block()?;
    let who = ServerIdentity {
        stack: crate::build::stack(),
        transport: Transport::Quic,
        model: ServerModel::Threads,
    };
    let facts = crate::tls::serving::EngineFacts::of(server);
    chainlab_record::serve::print_ready(addr, who, 1, &facts)?;

    let stop = AtomicBool::new(false);
    // Readable once stopping: the listener's wait ends at once, not at its next poll interval
    // (50 ms a stop, where a TCP server's took 2 ms).
    let wake = Wake::new()?;
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
                (&stop, &wake),
            );
            finished.store(true, Ordering::SeqCst);
            result
        });
        // Until the listener ends by itself (--max-connections) or a stop signal comes; then
        // the listener is joined at once.
        while !finished.load(Ordering::SeqCst) {
            // A sync (SIGUSR1) is for the TCP scaffold's servers, which chainlab keeps for
            // several scenarios; a QUIC server is never kept, and takes it as nothing.
            if signals.wait(POLL_INTERVAL) == Some(chainlab_record::serve::Signal::Stop) {
                stop.store(true, Ordering::SeqCst);
                wake.wake();
                break;
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
    (stop, wake): (&AtomicBool, &Wake),
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
        let cut = stopping_since.is_some_and(|t| t.elapsed() >= chainlab_record::serve::STOP_GRACE);
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
            // Once stopping, the wake stays readable: the grace period's waits are the
            // connections' own.
            let woken_by = stopping_since.is_none().then(|| wake.as_raw_fd());
            wait(listener.as_ptr(), fd, next, woken_by);
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
        let seen = ServerObserved {
            conn_id: conn_id(conn),
            handshake_counts: Some(Counts {
                read: at.bytes_read,
                written: at.bytes_written,
            }),
            conn_counts: Counts {
                read: total.bytes_read,
                written: total.bytes_written,
            },
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
            // Mutual TLS: the client's chain as this server saw it (absent without); dual
            // chains are served over TCP only.
            recorded: recorded(conn).peer_chain(match each.side {
                Side::Server { client_auth: true } => Some(observed_chain(conn, true)?),
                _ => None,
            }),
            failure,
        };
        let handshake_ns = ns_between(self.first.at, end);
        drop(self.conn);
        if let Some(peer) = self.peer {
            tally.finish(peer);
        }
        let spans = ServerSpans {
            seq: self.seq,
            peer_port: self.peer.map(|p| p.port()),
            accept_unix_ns: self.first.unix_ns,
            handshake_ns,
            cpu,
            conn_ns: ns_between(self.first.at, Instant::now()),
            conn_cpu_ns: self
                .first
                .cpu
                .map_or(0, |start| ThreadCpu::now().since(start).total_ns),
        };
        let who = ServerIdentity {
            stack: crate::build::stack(),
            transport: Transport::Quic,
            model: ServerModel::Threads,
        };
        let mut record = ServerRecord::observed(who, spans, seen);
        // One thread serves every connection: its CPU clock is a connection's only over a
        // span no other connection shared.
        if !alone {
            record.cpu_ns = None;
            record.cpu_user_us = None;
            record.cpu_sys_us = None;
            record.instructions = None;
        }
        if !conn_alone {
            record.conn_cpu_ns = None;
        }
        Ok(Some(record))
    }
}
