//! What a client attempt is over any transport: the connection slot (`Client`: context,
//! options, the kept session and the resumption draws), what one attempt observed
//! (`Observed`), the SSL object for the next connection, and the record an attempt becomes.
//! `tcp::client` and `quic::client` make attempts; `client` runs them.

use std::time::Duration;

use openssl::ssl::{Ssl, SslSession};
use rand::Rng as _;
use rand_chacha::ChaCha8Rng;

use crate::cli::ClientArgs;
use crate::cpu::ThreadCpu;
use crate::record::{ClientRecord, Datagrams, ObservedCert, Outcome, SCHEMA};
use crate::tls::context::ClientContext;
use crate::tls::counting::Counts;
use crate::tls::errors::{Failure, Side};

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
    pub(super) draws: Option<ChaCha8Rng>,
    /// The transport's attempt (TCP or QUIC), chosen once when the slot is made.
    pub(super) attempt_fn: AttemptFn,
}

/// One attempt over a transport: `tcp::client::attempt` or `quic::client::attempt`.
pub(crate) type AttemptFn = fn(&mut Client<'_>, u64, bool) -> anyhow::Result<ClientRecord>;

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

impl Client<'_> {
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
