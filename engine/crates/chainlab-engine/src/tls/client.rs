//! `handshake`: the measuring client. One record per attempt, warm-ups included.
//!
//! Each attempt is a fresh TCP connection and a full TLS 1.3 handshake (or, with `--resume`,
//! one offering the previous connection's ticket; with `--resume-ratio r`, one offering it
//! with probability r). Nothing is retried: a failed attempt is
//! recorded with its category and the loop goes on; the process exits 0 whatever the peer
//! did, and non-zero only for bad arguments.
//!
//! Timed span: connect() starts → connect returns (`connect_ns`) → `SSL_connect` returns
//! (`handshake_ns`). Context, SSL object and session setup happen before it; closing the
//! connection, chain capture and writing the record after it.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::bail;
use openssl::ssl::{ErrorCode, ShutdownResult, Ssl, SslSession, SslStream};
use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use super::chain::observed_chain;
use super::context::{self, ClientContext};
use super::counting::{CountingStream, Counts, SocketStream};
use super::errors::{self, Failure, Side};
use super::{conn_id, group_name, ns_between, sigalg_name, unix_ns};
use crate::cli::{ClientArgs, HandshakeArgs, Transport};
use crate::cpu::ThreadCpu;
use crate::record::{ClientRecord, Datagrams, ObservedCert, Outcome, RecordWriter, SCHEMA};

pub fn run(args: &HandshakeArgs) -> anyhow::Result<()> {
    if args.count.is_none() && args.duration_ms.is_none() {
        bail!("one of --count N or --duration-ms MS is required");
    }
    let ctx = prepare(&args.client)?;
    let mut writer = RecordWriter::open(&args.client.records)?;
    let mut client = Client::new(&ctx, &args.client);
    let mut seq = args.client.seq_start;
    let mut one = |client: &mut Client, warmup: bool| -> anyhow::Result<()> {
        let record = client.attempt(seq, warmup)?;
        // Serialised and flushed after the timed span, one line per attempt.
        writer.write(&record)?;
        seq += 1;
        Ok(())
    };
    for _ in 0..args.warmup {
        one(&mut client, true)?;
    }
    if let Some(count) = args.count {
        for _ in 0..count {
            one(&mut client, false)?;
        }
    } else if let Some(ms) = args.duration_ms {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            one(&mut client, false)?;
        }
    }
    Ok(())
}

/// What every client run does first: check the shared options, pin to `--cpus`, build the
/// TLS context (everything that can be wrong with the arguments fails here).
pub(crate) fn prepare(args: &ClientArgs) -> anyhow::Result<ClientContext> {
    if args.timeout_ms == 0 {
        bail!("--timeout-ms 0: must be at least 1");
    }
    if let Some(ratio) = args.resume_ratio {
        if !(0.0..=1.0).contains(&ratio) {
            bail!("--resume-ratio {ratio}: must be a probability from 0 to 1");
        }
    }
    if let Some(cpus) = &args.cpus {
        crate::cpu::pin(cpus)?;
    }
    context::client(args)
}

/// One connection slot: attempts run one after another on the calling thread.
pub(crate) struct Client<'a> {
    pub(super) ctx: &'a ClientContext,
    pub(super) side: Side,
    pub(super) args: &'a ClientArgs,
    pub(super) timeout: Duration,
    /// The last completed connection's session, offered next time with `--resume` (or when
    /// the `--resume-ratio` draw says so).
    pub(super) session: Option<SslSession>,
    /// The `--resume-ratio` draws, one per attempt.
    draws: Option<ChaCha8Rng>,
}

/// What one attempt observed, before it becomes a record.
#[derive(Default)]
pub(super) struct Observed {
    pub(super) connect_ns: u64,
    pub(super) handshake_ns: Option<u64>,
    pub(super) cpu: Option<ThreadCpu>,
    pub(super) handshake_counts: Option<Counts>,
    pub(super) conn_counts: Option<Counts>,
    pub(super) peer_close_notify: Option<bool>,
    pub(super) conn_id: Option<String>,
    pub(super) local_port: Option<u16>,
    pub(super) group: Option<String>,
    pub(super) sigalg: Option<String>,
    pub(super) resumed: Option<bool>,
    pub(super) resume_offered: Option<bool>,
    pub(super) peer_chain: Option<Vec<ObservedCert>>,
    pub(super) failure: Option<Failure>,
    /// QUIC: datagram counts.
    pub(super) datagrams: Option<Datagrams>,
}

impl<'a> Client<'a> {
    pub(crate) fn new(ctx: &'a ClientContext, args: &'a ClientArgs) -> Self {
        Client {
            side: Side::Client {
                verify: ctx.verify,
                sigalgs_restricted: ctx.sigalgs_restricted,
            },
            ctx,
            args,
            timeout: Duration::from_millis(args.timeout_ms),
            session: None,
            draws: args
                .resume_ratio
                .map(|_| ChaCha8Rng::seed_from_u64(args.resume_seed)),
        }
    }

    /// One connection, start to finish. Errors only for local failures (out of memory, a
    /// broken OpenSSL); everything the network or the peer does ends up in the record.
    pub(crate) fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        if self.args.tls.transport == Transport::Quic {
            return super::quic::attempt(self, seq, warmup);
        }
        let instrument = !self.args.no_instrument;
        let (ssl, offered) = self.new_ssl()?;
        let mut seen = Observed {
            resume_offered: self.args.resume_ratio.map(|_| offered),
            ..Observed::default()
        };

        let start_unix_ns = unix_ns();
        let cpu_start = instrument.then(ThreadCpu::now);
        let start = Instant::now();
        let connected = TcpStream::connect_timeout(&self.args.connect, self.timeout)
            .and_then(|s| self.prepare_socket(s));
        let connect_end = Instant::now();
        seen.connect_ns = ns_between(start, connect_end);
        match connected {
            Err(e) => {
                seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
                if instrument {
                    seen.handshake_counts = Some(Counts::default());
                    seen.conn_counts = Some(Counts::default());
                }
                seen.failure = Some(errors::connect_failure(&e));
            }
            Ok(stream) if instrument => {
                let stream = CountingStream::new(stream);
                self.handshake(ssl, stream, connect_end, cpu_start, &mut seen)?
            }
            Ok(stream) => self.handshake(ssl, stream, connect_end, cpu_start, &mut seen)?,
        }
        Ok(self.record(seq, warmup, start_unix_ns, seen))
    }

    /// The SSL object for the next connection: SNI and the session to resume, if any; and
    /// whether a ticket is offered.
    pub(super) fn new_ssl(&mut self) -> anyhow::Result<(Ssl, bool)> {
        let mut ssl = Ssl::new(&self.ctx.ctx)?;
        // SNI carries host names only (RFC 6066); an IP address is checked but not sent.
        if self.args.servername.parse::<std::net::IpAddr>().is_err() {
            ssl.set_hostname(&self.args.servername)?;
        }
        // One draw per attempt, whether or not a ticket is kept yet: the mix is the seed's.
        let wanted = match (&mut self.draws, self.args.resume_ratio) {
            (Some(draws), Some(ratio)) => draws.random::<f64>() < ratio,
            _ => self.args.resume,
        };
        let mut offered = false;
        if wanted {
            if let Some(session) = &self.session {
                // SAFETY: the session came from a connection of this same context.
                unsafe { ssl.set_session(session)? };
                offered = true;
            }
        }
        Ok((ssl, offered))
    }

    fn prepare_socket(&self, stream: TcpStream) -> std::io::Result<TcpStream> {
        // Each flight leaves in one write (libssl buffers a flight); no Nagle delay on it.
        stream.set_nodelay(true)?;
        // A server that stops answering is cut off after --timeout-ms without progress
        // (recorded as handshake_timeout), and so is one that stops reading.
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        Ok(stream)
    }

    /// SSL_connect over a connected socket, then the close and what the record needs.
    fn handshake<S: SocketStream>(
        &mut self,
        ssl: Ssl,
        stream: S,
        connect_end: Instant,
        cpu_start: Option<ThreadCpu>,
        seen: &mut Observed,
    ) -> anyhow::Result<()> {
        let mut tls = SslStream::new(ssl, stream)?;
        let result = tls.connect();
        let end = Instant::now();
        seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
        seen.handshake_ns = Some(ns_between(connect_end, end));
        seen.handshake_counts = tls.get_ref().counts();
        // End of the timed span.

        let instrument = seen.handshake_counts.is_some();
        match result {
            Ok(()) => {
                let closed = close(&mut tls, self.ctx.client_cert);
                if let (Err(e), true) = (&closed, self.ctx.client_cert) {
                    // TLS 1.3 client authentication: SSL_connect returns once the client's
                    // Finished is sent, and a server that rejects the certificate says so
                    // with an alert the close reads.
                    seen.failure = errors::client_cert_rejected(e);
                }
                seen.peer_close_notify = instrument.then_some(closed.is_ok());
                if self.args.resume || self.args.resume_ratio.is_some() {
                    self.session = tls.ssl().session().map(|s| s.to_owned());
                }
                if instrument {
                    let ssl = tls.ssl();
                    let resumed = ssl.session_reused();
                    seen.resumed = Some(resumed);
                    seen.sigalg = sigalg_name(ssl, true);
                    // A resumed handshake carries no Certificate message.
                    if !resumed {
                        seen.peer_chain = observed_chain(ssl, false)?;
                    }
                }
            }
            Err(e) => {
                let failure =
                    errors::handshake_failure(&e, tls.ssl(), tls.get_ref().last_error(), self.side);
                if errors::peer_still_connected(failure.category) {
                    drain(tls.get_mut());
                }
                seen.failure = Some(failure);
            }
        }
        if instrument {
            let ssl = tls.ssl();
            seen.group = group_name(ssl);
            seen.conn_id = conn_id(ssl);
            seen.local_port = tls.get_ref().tcp().local_addr().ok().map(|a| a.port());
            seen.conn_counts = tls.get_ref().counts();
        }
        Ok(())
    }

    /// The record of one attempt. Without instrumentation only the latency (`total_ns`),
    /// the outcome and the failure category are kept.
    pub(super) fn record(
        &self,
        seq: u64,
        warmup: bool,
        start_unix_ns: u128,
        seen: Observed,
    ) -> ClientRecord {
        let instrument = !self.args.no_instrument;
        let total_ns = seen.connect_ns + seen.handshake_ns.unwrap_or(0);
        ClientRecord {
            schema: SCHEMA,
            side: "client",
            stack: crate::info::stack(),
            transport: self.args.tls.transport,
            seq,
            warmup,
            conn_id: seen.conn_id,
            local_port: seen.local_port,
            start_unix_ns,
            connect_ns: instrument.then_some(seen.connect_ns),
            handshake_ns: seen.handshake_ns.filter(|_| instrument),
            total_ns: Some(total_ns),
            cpu_ns: seen.cpu.map(|c| c.total_ns),
            cpu_user_us: seen.cpu.map(|c| c.user_us),
            cpu_sys_us: seen.cpu.map(|c| c.sys_us),
            instructions: seen.cpu.and_then(|c| c.instructions),
            bytes_read: seen.handshake_counts.map(|c| c.read),
            bytes_written: seen.handshake_counts.map(|c| c.written),
            conn_bytes_read: seen.conn_counts.map(|c| c.read),
            conn_bytes_written: seen.conn_counts.map(|c| c.written),
            datagrams: seen.datagrams,
            peer_close_notify: seen.peer_close_notify,
            group: seen.group,
            sigalg: seen.sigalg,
            resumed: seen.resumed,
            resume_offered: seen.resume_offered,
            verify: self.ctx.verify,
            peer_chain: seen.peer_chain,
            outcome: if seen.failure.is_none() {
                Outcome::Ok
            } else {
                Outcome::Failed
            },
            error_category: seen.failure.as_ref().map(|f| f.category),
            error_detail: seen.failure.map(|f| f.detail),
            intended_ns: None,
            sched_lag_ns: None,
            latency_ns: None,
        }
    }
}

/// Sends close_notify, then reads until the server's (session tickets sent after the
/// handshake are read and processed on the way). Ok once the server's close_notify arrived;
/// the error when the close failed (an alert from the server, a reset, a timeout).
///
/// With a client certificate the order is reversed (`read_first`): TLS 1.3 lets the server
/// reject the certificate only after the client's Finished, with an alert, and a server that
/// has sent it closes at once; writing our close_notify first would meet the closed socket
/// and lose the alert. The engine's server always answers (a close_notify or an alert).
fn close<S: SocketStream>(
    tls: &mut SslStream<S>,
    read_first: bool,
) -> Result<(), openssl::ssl::Error> {
    if read_first {
        read_to_close(tls)?;
        tls.shutdown()?;
        return Ok(());
    }
    if tls.shutdown()? == ShutdownResult::Received {
        return Ok(());
    }
    read_to_close(tls)
}

/// Reads (and discards: the engine's server sends no application data) until the peer's
/// close_notify; an error for anything else that ends the connection.
fn read_to_close<S: SocketStream>(tls: &mut SslStream<S>) -> Result<(), openssl::ssl::Error> {
    // Large enough for any record the server sends after the handshake (tickets).
    let mut buf = [0u8; 4096];
    loop {
        match tls.ssl_read(&mut buf) {
            Ok(_) => continue,
            Err(e) if e.code() == ErrorCode::ZERO_RETURN => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Lingering close after a failure our side detected (an alert is on its way to the
/// server): stop writing, then read and discard until the server closes (bounded by the
/// read timeout). Closing at once with the rest of the server's flight unread would reset
/// the connection, and the server would record a reset instead of the alert.
fn drain<S: SocketStream>(stream: &mut S) {
    let _ = stream.tcp().shutdown(std::net::Shutdown::Write);
    // Any size works; 16 KiB is one maximal TLS record per read.
    let mut buf = [0u8; 16 * 1024];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}
