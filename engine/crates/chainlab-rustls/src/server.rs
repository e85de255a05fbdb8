//! `serve`: the TLS 1.3 server over rustls. One record per accepted connection, one
//! connection at a time (`--workers 1`).
//!
//! Lifecycle: build the configuration (everything that can be wrong with the arguments fails
//! here), bind, print the ready line, then accept until SIGTERM/SIGINT or
//! `--max-connections`. The signal handler only sets a flag (installed with SA_RESTART, so
//! no socket call of a connection is interrupted); the accept loop polls the listener and
//! checks the flag every 50 ms.
//!
//! Per connection, as the OpenSSL engine: accept() returns → start the clocks → handshake
//! (tickets included) → handshake span ends: CPU and byte counts → send our close_notify →
//! wait for the client's (bounded by `--io-timeout-ms`) → close → connection span ends
//! (`conn_ns`, `conn_cpu_ns`) → write the record.

use std::io::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use chainlab_record::counting::CountingStream;
use chainlab_record::cpu::{self, ThreadCpu};
use chainlab_record::listen::accept_until;
use chainlab_record::record::{Outcome, RecordWriter, ServerRecord, Transport, SCHEMA};
use chainlab_record::{ns_between, unix_ns};
use rustls::{HandshakeKind, ServerConnection};
use serde::Serialize;

use crate::capabilities::{self, STACK};
use crate::cli::ServeArgs;
use crate::errors::{self, Side};
use crate::io::{self as tlsio, RecordReads, Socket, Stop};
use crate::tls::{self, ServerSetup};

/// Set by SIGTERM/SIGINT.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    if args.io_timeout_ms == 0 {
        bail!("--io-timeout-ms 0: must be at least 1");
    }
    capabilities::check_serve(args)?;
    if let Some(cpus) = &args.cpus {
        cpu::pin(cpus)?;
    }
    let setup = tls::server(args)?;
    let listener = TcpListener::bind(args.listen)
        .map_err(|e| anyhow!("cannot listen on {}: {e}", args.listen))?;
    listener.set_nonblocking(true)?;
    let mut records = if args.no_instrument {
        None
    } else {
        Some(RecordWriter::open(&args.records)?)
    };
    install_stop_handler()?;
    print_ready(args, &setup, listener.local_addr()?)?;

    let io_timeout = Duration::from_millis(args.io_timeout_ms);
    let mut seq = 0u64;
    while args.max_connections.is_none_or(|max| seq < max) {
        let Some((stream, peer)) = accept_until(&listener, &STOP)? else {
            break;
        };
        let accepted = Accepted {
            seq,
            peer,
            accept_unix_ns: unix_ns(),
            start: Instant::now(),
            cpu_start: records.as_ref().map(|_| ThreadCpu::now()),
        };
        seq += 1;
        stream.set_nonblocking(false)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(io_timeout))?;
        stream.set_write_timeout(Some(io_timeout))?;
        match records.as_mut() {
            None => {
                serve_connection(&setup, RecordReads::new(stream), accepted)?;
            }
            Some(writer) => {
                let io = RecordReads::new(CountingStream::new(stream));
                if let Some(record) = serve_connection(&setup, io, accepted)? {
                    writer.write(&record)?;
                }
            }
        }
    }
    Ok(())
}

fn install_stop_handler() -> anyhow::Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: sigaction is plain data, zeroed is valid; the handler only stores to an
        // atomic (async-signal-safe); SA_RESTART keeps blocking socket calls uninterrupted.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            bail!("sigaction: {}", std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The one line a caller waits for before connecting (docs/engine-records.md).
#[derive(Serialize)]
struct Ready<'a> {
    event: &'static str,
    addr: String,
    transport: Transport,
    pid: u32,
    stack: &'static str,
    rustls: &'static str,
    served_chain: ServedChain,
    cert_compression: &'a tls::CompressionSetup,
    record_schema: &'static str,
}

#[derive(Serialize)]
struct ServedChain {
    policy: crate::cli::ChainPolicy,
    certificates: usize,
    der_bytes: usize,
}

fn print_ready(args: &ServeArgs, setup: &ServerSetup, addr: SocketAddr) -> anyhow::Result<()> {
    let ready = Ready {
        event: "ready",
        addr: addr.to_string(),
        transport: Transport::Tcp,
        pid: std::process::id(),
        stack: STACK,
        rustls: crate::info::RUSTLS_VERSION,
        served_chain: ServedChain {
            policy: args.chain,
            certificates: setup.chain_der.len(),
            der_bytes: setup.chain_der.iter().sum(),
        },
        cert_compression: &setup.compression,
        record_schema: SCHEMA,
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &ready)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

struct Accepted {
    seq: u64,
    peer: SocketAddr,
    accept_unix_ns: u128,
    start: Instant,
    cpu_start: Option<ThreadCpu>,
}

/// Runs one connection to its end; its record on the instrumented path.
fn serve_connection<S: Socket>(
    setup: &ServerSetup,
    mut io: RecordReads<S>,
    accepted: Accepted,
) -> anyhow::Result<Option<ServerRecord>> {
    tls::take_scheme();
    let mut conn = ServerConnection::new(setup.config.clone())?;
    let result = tlsio::handshake(&mut conn, &mut io);
    let end = Instant::now();
    let cpu = accepted.cpu_start.map(|s| ThreadCpu::now().since(s));
    let handshake_counts = io.socket().counts();

    let (failure, peer_close_notify) = match &result {
        Ok(()) => {
            conn.send_close_notify();
            let closed = tlsio::flush(&mut conn, &mut io).is_ok()
                && tlsio::await_close_notify(&mut conn, &mut io);
            (None, Some(closed))
        }
        Err(Stop::Io(e)) => (Some(errors::io_failure(e)), None),
        Err(Stop::Tls(e)) => (Some(errors::tls_failure(e, Side::Server)), None),
    };
    let conn_id = io.socket().hello_conn_id(false);
    let conn_counts = io.socket().counts();
    drop(io); // the socket closes here: the end of the connection span
    let conn_end = Instant::now();
    let (Some(cpu), Some(handshake_counts), Some(conn_counts)) =
        (cpu, handshake_counts, conn_counts)
    else {
        return Ok(None);
    };
    let conn_cpu = accepted.cpu_start.map(|s| ThreadCpu::now().since(s));
    let ok = failure.is_none();
    let resumed = conn.handshake_kind() == Some(HandshakeKind::Resumed);
    Ok(Some(ServerRecord {
        schema: SCHEMA,
        side: "server",
        stack: STACK,
        transport: Transport::Tcp,
        seq: accepted.seq,
        conn_id,
        peer_port: Some(accepted.peer.port()),
        accept_unix_ns: accepted.accept_unix_ns,
        handshake_ns: Some(ns_between(accepted.start, end)),
        cpu_ns: Some(cpu.total_ns),
        cpu_user_us: Some(cpu.user_us),
        cpu_sys_us: Some(cpu.sys_us),
        instructions: cpu.instructions,
        conn_ns: Some(ns_between(accepted.start, conn_end)),
        conn_cpu_ns: conn_cpu.map(|c| c.total_ns),
        bytes_read: Some(handshake_counts.read),
        bytes_written: Some(handshake_counts.written),
        conn_bytes_read: Some(conn_counts.read),
        conn_bytes_written: Some(conn_counts.written),
        datagrams: None,
        peer_close_notify,
        group: conn
            .negotiated_key_exchange_group()
            .map(|g| capabilities::group_name(g.name())),
        sigalg: tls::take_scheme().map(capabilities::scheme_name),
        resumed: ok.then_some(resumed),
        peer_chain: None,
        outcome: if ok { Outcome::Ok } else { Outcome::Failed },
        error_category: failure.as_ref().map(|f| f.category),
        error_detail: failure.map(|f| f.detail),
    }))
}
