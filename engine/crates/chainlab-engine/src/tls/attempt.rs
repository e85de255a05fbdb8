//! What a client attempt is over any transport: the connection slot (`Client`: context,
//! options, the kept session and the resumption draws), what one attempt observed
//! (`Observed`), the SSL object for the next connection, and the record an attempt becomes.
//! `tcp::client` and `quic::client` make attempts; `client` runs them.

use std::time::Duration;

use chainlab_record::drive::Resumption;
use chainlab_record::observed::ClientIdentity;
use openssl::ssl::{Ssl, SslSession};

use crate::cli::ClientArgs;
use crate::record::ClientRecord;
use crate::tls::anchors::ClientAnchors;
use crate::tls::context::ClientContext;
use crate::tls::errors::Side;

/// One connection slot: attempts run one after another on the calling thread.
pub(crate) struct Client<'a> {
    pub(super) ctx: &'a ClientContext,
    pub(super) side: Side,
    pub(super) args: &'a ClientArgs,
    pub(super) timeout: Duration,
    /// The session offered next time, and the `--resume-ratio` draws.
    pub(super) resumption: Resumption<SslSession>,
    /// The transport's attempt (TCP or QUIC), chosen once when the slot is made.
    pub(super) attempt_fn: AttemptFn,
    /// The trust_anchors extension (`--trust-anchors`) and its retry.
    pub(super) anchors: ClientAnchors,
    /// The previous TCP connection, closed at the TLS level and measured, whose freeing
    /// (SSL_free, the socket's close: ~40 us of CPU) waits for the next connection's close,
    /// where it overlaps the wait for the server's close_notify instead of adding to the gap
    /// between handshakes (`tcp::client`). Never inside a timed span.
    pub(super) finished: Option<Box<dyn std::any::Any>>,
}

/// One attempt over a transport: `tcp::client::attempt` or `quic::client::attempt`.
pub(crate) type AttemptFn = fn(&mut Client<'_>, u64, bool) -> anyhow::Result<ClientRecord>;

/// What one attempt observed, before it becomes a record (the one definition every engine
/// fills).
pub(super) type Observed = chainlab_record::observed::ClientObserved;

impl Client<'_> {
    /// The SSL object for the next connection: SNI, the trust anchors it requests and the
    /// session to resume, if any; and whether a ticket is offered.
    pub(super) fn new_ssl(&mut self) -> anyhow::Result<(Ssl, bool)> {
        let mut ssl = Ssl::new(&self.ctx.ctx)?;
        self.anchors.prepare(&mut ssl)?;
        if let Some(name) = chainlab_record::drive::server_name(self.args) {
            ssl.set_hostname(name)?;
        }
        let offered = self.resumption.next(self.args);
        if let Some(session) = offered {
            // SAFETY: the session came from a connection of this same context.
            unsafe { ssl.set_session(session)? };
        }
        Ok((ssl, offered.is_some()))
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
        ClientRecord::observed(self.identity(), seq, warmup, start_unix_ns, seen)
    }

    /// Who writes this slot's records.
    pub(crate) fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            stack: crate::build::stack(),
            transport: self.args.tls.transport,
            verify: self.ctx.verify,
            instrument: !self.args.no_instrument,
        }
    }
}
