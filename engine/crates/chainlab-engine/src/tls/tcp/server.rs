//! The TCP server of `serve`: `--workers` threads accept on one listener, each handling a
//! connection start to finish (see `tls::server` for the lifecycle and the spans).

use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use openssl::ssl::{ErrorCode, Ssl, SslContext, SslStream};

use crate::cli::{ServeArgs, Transport};
use crate::cpu::ThreadCpu;
use crate::record::{ErrorCategory, Outcome, RecordWriter, ServerRecord, SCHEMA};
use crate::tls::chain::observed_chain;
use crate::tls::context::ServerContext;
use crate::tls::counting::{CountingStream, SocketStream};
use crate::tls::errors::{self, Failure, Side};
use crate::tls::serving::{print_ready, StopSignals, STOP_GRACE};
use crate::tls::{conn_id, group_name, ns_between, sigalg_name, unix_ns};
use chainlab_record::listen::accept_until;

/// How long the main thread waits for a signal before checking whether the workers are done
/// (`--max-connections` reached). Only affects how soon the process exits after that.
const SIGNAL_WAIT: Duration = Duration::from_millis(50);

/// Everything the workers share.
struct Shared<'a> {
    ctx: &'a SslContext,
    /// Mutual TLS: client certificates are required and recorded.
    client_auth: bool,
    listener: &'a TcpListener,
    records: Option<&'a Mutex<RecordWriter>>,
    io_timeout: Duration,
    max_connections: Option<u64>,
    /// Set by the main thread on SIGTERM/SIGINT, or by a worker that hit a fatal error.
    stop: AtomicBool,
    /// Connections claimed against `--max-connections`.
    claimed: AtomicU64,
    /// Next record sequence number (accept order).
    next_seq: AtomicU64,
    /// Workers that have returned.
    finished: AtomicUsize,
    /// Each worker's current connection.
    in_flight: Vec<InFlight>,
}

/// `serve` over TCP: bind, print the ready line, serve with `--workers` threads until a stop
/// signal or `--max-connections`.
pub fn serve(args: &ServeArgs, server: &ServerContext) -> anyhow::Result<()> {
    let listener = TcpListener::bind(args.listen)
        .map_err(|e| anyhow!("cannot listen on {}: {e}", args.listen))?;
    // Workers poll() the listener so they can notice the stop flag; accept() itself must
    // then never block.
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let records = if args.no_instrument {
        None
    } else {
        Some(Mutex::new(RecordWriter::open(&args.records)?))
    };
    let signals = StopSignals::block()?;
    print_ready(server, addr, Transport::Tcp)?;

    let shared = Shared {
        ctx: &server.ctx,
        client_auth: server.client_auth.is_some(),
        listener: &listener,
        records: records.as_ref(),
        io_timeout: Duration::from_millis(args.io_timeout_ms),
        max_connections: args.max_connections,
        stop: AtomicBool::new(false),
        claimed: AtomicU64::new(0),
        next_seq: AtomicU64::new(0),
        finished: AtomicUsize::new(0),
        in_flight: (0..args.workers).map(|_| InFlight::default()).collect(),
    };
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let shared = &shared;
        let handles: Vec<_> = (0..args.workers)
            .map(|index| {
                scope.spawn(move || {
                    let result = worker(shared, &shared.in_flight[index]);
                    if result.is_err() {
                        shared.stop.store(true, Ordering::SeqCst);
                    }
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                    result
                })
            })
            .collect();
        let mut stopping_since: Option<Instant> = None;
        let mut cut = false;
        while shared.finished.load(Ordering::SeqCst) < args.workers {
            let signalled = signals.wait(SIGNAL_WAIT);
            if signalled || shared.stop.load(Ordering::SeqCst) {
                shared.stop.store(true, Ordering::SeqCst);
                let since = *stopping_since.get_or_insert_with(Instant::now);
                if !cut && since.elapsed() >= STOP_GRACE {
                    shared.in_flight.iter().for_each(InFlight::abandon);
                    cut = true;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a server worker panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    Ok(())
}

/// One worker: accept, handle, record, until told to stop.
fn worker(shared: &Shared, slot: &InFlight) -> anyhow::Result<()> {
    loop {
        if let Some(max) = shared.max_connections {
            if shared.claimed.fetch_add(1, Ordering::SeqCst) >= max {
                return Ok(());
            }
        }
        let Some((stream, peer)) = accept_until(shared.listener, &shared.stop)? else {
            return Ok(());
        };
        // The measured span starts the moment accept() hands over the connection.
        let accept_unix_ns = unix_ns();
        let start = Instant::now();
        let cpu_start = shared.records.map(|_| ThreadCpu::now());
        let seq = shared.next_seq.fetch_add(1, Ordering::SeqCst);
        // Accepted sockets do not inherit O_NONBLOCK on Linux; set it anyway so the
        // read/write timeouts below are what bounds a stalled peer.
        stream.set_nonblocking(false)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(shared.io_timeout))?;
        stream.set_write_timeout(Some(shared.io_timeout))?;
        let accepted = Accepted {
            seq,
            peer,
            accept_unix_ns,
            start,
            cpu_start,
        };
        let Some(records) = shared.records else {
            serve_connection(shared, stream, accepted, slot)?;
            continue;
        };
        let stream = CountingStream::new(stream);
        if let Some(record) = serve_connection(shared, stream, accepted, slot)? {
            records
                .lock()
                .map_err(|_| anyhow!("records writer poisoned by a panicked worker"))?
                .write(&record)?;
        }
    }
}

/// What the worker knew when accept() returned.
struct Accepted {
    seq: u64,
    peer: SocketAddr,
    accept_unix_ns: u128,
    start: Instant,
    /// `None` without instrumentation.
    cpu_start: Option<ThreadCpu>,
}

/// Runs one connection to its end. Returns its record on the instrumented path (a counting
/// stream and a CPU start reading), `None` otherwise.
fn serve_connection<S: SocketStream>(
    shared: &Shared,
    stream: S,
    accepted: Accepted,
    slot: &InFlight,
) -> anyhow::Result<Option<ServerRecord>> {
    let ssl = Ssl::new(shared.ctx)?;
    let mut tls = SslStream::new(ssl, stream)?;
    // Declared after `tls`, so dropped (unregistered) before the socket closes.
    let registered = slot.enter(tls.get_ref().tcp().as_raw_fd());
    let result = tls.accept();
    let end = Instant::now();
    let cpu = accepted
        .cpu_start
        .map(|start| ThreadCpu::now().since(start));
    let handshake_counts = tls.get_ref().counts();

    let (outcome, failure, peer_close_notify) = match &result {
        Ok(()) => (Outcome::Ok, None, Some(await_close(&mut tls))),
        Err(_) if slot.abandoned.load(Ordering::SeqCst) => {
            let failure = Failure {
                category: ErrorCategory::IoError,
                detail: "abandoned: the server was stopping (SIGTERM/SIGINT)".to_owned(),
            };
            (Outcome::Failed, Some(failure), None)
        }
        Err(e) => {
            let side = Side::Server {
                client_auth: shared.client_auth,
            };
            let failure = errors::handshake_failure(e, tls.ssl(), tls.get_ref().last_error(), side);
            (Outcome::Failed, Some(failure), None)
        }
    };
    let (Some(cpu), Some(handshake_counts), Some(conn_counts)) =
        (cpu, handshake_counts, tls.get_ref().counts())
    else {
        return Ok(None);
    };
    let ssl = tls.ssl();
    let mut record = ServerRecord {
        schema: SCHEMA,
        side: "server",
        stack: crate::info::stack(),
        transport: Transport::Tcp,
        seq: accepted.seq,
        conn_id: conn_id(ssl),
        peer_port: Some(accepted.peer.port()),
        accept_unix_ns: accepted.accept_unix_ns,
        handshake_ns: Some(ns_between(accepted.start, end)),
        cpu_ns: Some(cpu.total_ns),
        cpu_user_us: Some(cpu.user_us),
        cpu_sys_us: Some(cpu.sys_us),
        instructions: cpu.instructions,
        conn_ns: None, // once the socket is closed, below
        conn_cpu_ns: None,
        bytes_read: Some(handshake_counts.read),
        bytes_written: Some(handshake_counts.written),
        conn_bytes_read: Some(conn_counts.read),
        conn_bytes_written: Some(conn_counts.written),
        datagrams: None,
        peer_close_notify,
        group: group_name(ssl),
        sigalg: sigalg_name(ssl, false),
        resumed: result.is_ok().then(|| ssl.session_reused()),
        peer_chain: if shared.client_auth {
            Some(observed_chain(ssl, true)?)
        } else {
            None
        },
        outcome,
        error_category: failure.as_ref().map(|f| f.category),
        error_detail: failure.map(|f| f.detail),
    };
    drop(registered);
    drop(tls); // closes the socket before the record is written
               // The whole connection: accept() returning to close() returned.
    record.conn_ns = Some(ns_between(accepted.start, Instant::now()));
    record.conn_cpu_ns = accepted
        .cpu_start
        .map(|start| ThreadCpu::now().since(start).total_ns);
    Ok(Some(record))
}

/// After the handshake: send our close_notify at once, then read until the client's
/// (application data, which the engine's client never sends, is discarded). Sending first
/// means the client, which also sends then reads, finds ours already queued: closing costs
/// no extra round trip in the client's handshake loop, while both sides still count every
/// byte of the connection. True if the client's close_notify arrived; false on EOF, reset
/// or `--io-timeout-ms` without one.
fn await_close<S: SocketStream>(tls: &mut SslStream<S>) -> bool {
    // A failure to send our close_notify (client already gone) shows in the read below.
    let _ = tls.shutdown();
    // Large enough for any record a misbehaving client might send; no data is expected.
    let mut buf = [0u8; 4096];
    loop {
        match tls.ssl_read(&mut buf) {
            Ok(_) => continue,
            Err(e) => break e.code() == ErrorCode::ZERO_RETURN,
        }
    }
}

/// A worker's current connection, so that a stopping server can cut it short: shutting the
/// socket down makes the worker's blocked read return at once.
#[derive(Default)]
struct InFlight {
    fd: Mutex<Option<RawFd>>,
    /// Set when `abandon` cut the connection (its record then says so).
    abandoned: AtomicBool,
}

impl InFlight {
    fn enter(&self, fd: RawFd) -> Registered<'_> {
        self.abandoned.store(false, Ordering::SeqCst);
        *self.fd.lock().unwrap_or_else(|p| p.into_inner()) = Some(fd);
        Registered(self)
    }

    /// Shuts the current connection's socket down, if there is one. The lock guarantees the
    /// descriptor is still the connection's: the worker unregisters (under the lock) before
    /// it closes the socket.
    fn abandon(&self) {
        let fd = self.fd.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fd) = *fd {
            self.abandoned.store(true, Ordering::SeqCst);
            // SAFETY: `fd` is an open socket (see above); shutdown() does not close it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
    }
}

/// Unregisters the connection when dropped.
struct Registered<'a>(&'a InFlight);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        *self.0.fd.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}
