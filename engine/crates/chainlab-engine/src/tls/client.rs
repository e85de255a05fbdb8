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

//!
//! The connection slot and the record are `attempt`'s; each transport's attempt is its own
//! module (`tcp::client`, `quic::client`), chosen once per slot here.

use std::time::Duration;

use chainlab_record::drive::{Attempted, Slot};

use chainlab_record::drive::population;

use super::context::{self, ClientContext};
use super::errors::Side;
use crate::cli::{ClientArgs, HandshakeArgs, Transport};
use crate::record::ClientRecord;
use chainlab_record::record::ErrorCategory;

pub(crate) use super::attempt::Client;

/// A population kind's slot on its own context.
fn kind_slot<'a>(ctx: &'a ClientContext, args: &'a ClientArgs) -> Box<dyn Slot + 'a> {
    Box::new(Client::new(ctx, args))
}

pub fn run(args: &HandshakeArgs) -> anyhow::Result<()> {
    if let Some(seed) = args.random_seed {
        crate::random::install(seed, chainlab_record::random::Side::Client)?;
    }
    // One context per kind of client, each with its own groups and schemes.
    if let Some(done) = population::attempts(args, prepare, kind_slot)? {
        return Ok(done);
    }
    let ctx = prepare(&args.client)?;
    if !args.client.mtc_retry {
        return chainlab_record::drive::attempts(&mut Client::new(&ctx, &args.client), args);
    }
    let retry_args = chainlab_record::drive::mtc_retry_args(&args.client)?;
    let mut slot = chainlab_record::drive::MtcRetry {
        first: Client::new(&ctx, &args.client),
        retry: Client::new(&ctx, &retry_args),
    };
    chainlab_record::drive::attempts(&mut slot, args)
}

/// What every client run does first: check the shared options, pin to `--cpus`, build the
/// TLS context (everything that can be wrong with the arguments fails here).
pub(crate) fn prepare(args: &ClientArgs) -> anyhow::Result<ClientContext> {
    chainlab_record::drive::check_client(args)?;
    chainlab_record::features::check_client(crate::build::stack(), None, args)?;
    context::client(args)
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
            resumption: chainlab_record::drive::Resumption::new(args),
            // The transport is chosen here, once per slot.
            attempt_fn: match args.tls.transport {
                Transport::Tcp => super::tcp::client::attempt,
                Transport::Quic => super::quic::client::attempt,
            },
            anchors: super::anchors::ClientAnchors::new(args),
            finished: None,
        }
    }
}

impl Slot for Client<'_> {
    /// One connection, start to finish, over the slot's transport; with
    /// `--trust-anchor-retry`, a certificate that failed verification is followed at once by
    /// a second connection requesting the IDs of the server's available list the client
    /// trusts (draft-ietf-tls-trust-anchor-ids-06, section 5.6), and the two are one record
    /// (`drive::merged`, as the SNI stand-in's retry).
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        let first = (self.attempt_fn)(self, seq, warmup)?;
        Ok(self.retried(first, seq, warmup, false)?.finish())
    }

    /// Over TCP, a handshake that succeeded leaves its close for later; one that failed is
    /// done, retried as `attempt` retries it, and the retry leaves its close for later.
    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        if self.args.tls.transport != Transport::Tcp {
            return self.attempt(seq, warmup).map(Attempted::Done);
        }
        self.tcp_attempt(seq, warmup, true)?
            .then_done(|first| self.retried(first, seq, warmup, true))
    }
}

impl Client<'_> {
    /// `first`, or with `--trust-anchor-retry` where its certificate failed verification,
    /// `first` and the retry as one record (the retry's close left for later where `defer`,
    /// over TCP).
    fn retried(
        &mut self,
        first: ClientRecord,
        seq: u64,
        warmup: bool,
        defer: bool,
    ) -> anyhow::Result<Attempted> {
        if !self.args.trust_anchor_retry
            || first.error_category != Some(ErrorCategory::VerifyFailed)
            || !self.anchors.ask_again()
        {
            return Ok(Attempted::Done(first));
        }
        let second = if defer {
            self.tcp_attempt(seq, warmup, true)?
        } else {
            Attempted::Done((self.attempt_fn)(self, seq, warmup)?)
        };
        Ok(second.after(first))
    }
}
