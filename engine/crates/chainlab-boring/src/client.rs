//! `handshake` and `load`: the measuring client over BoringSSL, the other engines' client
//! in every respect a record shows. One record per attempt, warm-ups included; nothing is
//! retried: a failed attempt is recorded with its category and the loop goes on.
//!
//! Timed span: connect() starts → connect returns (`connect_ns`) → `SSL_connect` returns
//! (`handshake_ns`). Context, SSL object and session setup happen before it; closing the
//! connection, chain capture and writing the record after it. The schedule of `load`, the
//! slots' threads and a population's draws are the scaffold's (`chainlab_record::drive`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use boring::ssl::{ErrorCode, ShutdownResult, Ssl, SslRef, SslSession, SslStream};
use boring_sys as ffi;
use chainlab_record::counting::{conn_id_hex, CountingStream, Socket, CONN_ID_BYTES};
use chainlab_record::drive::{
    self, connect_tcp, population, Attempted, Drain, ReadClose, Resumption, Slot, Started,
};
use chainlab_record::observed::{ClientIdentity, ClientObserved};
use chainlab_record::record::{ClientRecord, ErrorCategory};
use foreign_types::ForeignTypeRef;

use crate::anchors;
use crate::capabilities::{self, STACK};
use crate::chain::observed_chain;
use crate::context::{self, ClientContext};
use crate::errors::{self, Side};
use chainlab_record::args::{ClientArgs, HandshakeArgs, LoadArgs};

/// A population kind's slot on its own context.
fn kind_slot<'a>(ctx: &'a ClientContext, args: &'a ClientArgs) -> Box<dyn Slot + 'a> {
    Box::new(Client::new(ctx, args))
}

pub fn run(args: &HandshakeArgs) -> anyhow::Result<()> {
    chainlab_record::features::check_seed(STACK, args.random_seed)?;
    // One context per kind of client, each with its own groups and schemes.
    if let Some(done) = population::attempts(args, prepare, kind_slot)? {
        return Ok(done);
    }
    let ctx = prepare(&args.client)?;
    drive::attempts(&mut Client::new(&ctx, &args.client), args)
}

/// `load`: the scaffold's open-loop generator over slots of this client.
pub fn load(args: &LoadArgs) -> anyhow::Result<()> {
    if let Some(kinds) = population::kinds(&args.client)? {
        // Every connection slot draws its kinds from its own seed: --population-seed + the
        // slot's number, in the order the generator opens slots.
        let ctxs = kinds
            .iter()
            .map(|k| prepare(&k.args))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let who = Client::new(&ctxs[0], &kinds[0].args).identity();
        let next = AtomicU64::new(args.client.population_seed);
        return drive::load(args, who, || {
            let slots = kinds
                .iter()
                .zip(&ctxs)
                .map(|(k, ctx)| Client::new(ctx, &k.args))
                .collect();
            let seed = next.fetch_add(1, Ordering::Relaxed);
            Ok(population::Population::new(&kinds, slots, seed))
        });
    }
    let ctx = prepare(&args.client)?;
    let who = Client::new(&ctx, &args.client).identity();
    drive::load(args, who, || Ok(Client::new(&ctx, &args.client)))
}

/// What every client run does first: check the shared options and what this stack cannot
/// do, build the TLS context (everything that can be wrong with the arguments fails here).
fn prepare(args: &ClientArgs) -> anyhow::Result<ClientContext> {
    drive::check_client(args)?;
    chainlab_record::features::check_client(
        capabilities::STACK,
        Some(capabilities::CERT_COMPRESSIONS),
        args,
    )?;
    crate::profile::check(args)?;
    context::client(args)
}

/// First 8 bytes of the ClientHello random, hex: the same value on both sides of a
/// connection (and the value every engine records). `None` before a ClientHello.
pub fn conn_id(ssl: &SslRef) -> Option<String> {
    let mut random = [0u8; CONN_ID_BYTES];
    if ssl.client_random(&mut random) < CONN_ID_BYTES {
        return None;
    }
    conn_id_hex(&random)
}

/// One connection slot: attempts run one after another on the calling thread.
struct Client<'a> {
    ctx: &'a ClientContext,
    side: Side,
    args: &'a ClientArgs,
    timeout: Duration,
    /// The session offered next time, and the `--resume-ratio` draws.
    resumption: Resumption<SslSession>,
    /// `--trust-anchors`: how many IDs the context requests (None: no extension).
    requested: Option<u64>,
    /// `--trust-anchor-retry`: the IDs the client trusts, and the server's available list
    /// (wire format) as the last connection's verification saw it.
    trusted: Vec<String>,
    available: Vec<u8>,
}

impl<'a> Client<'a> {
    fn new(ctx: &'a ClientContext, args: &'a ClientArgs) -> Self {
        Client {
            side: Side::Client {
                verify: ctx.verify,
                sigalgs_restricted: ctx.sigalgs_restricted,
            },
            ctx,
            args,
            timeout: Duration::from_millis(args.timeout_ms),
            resumption: Resumption::new(args),
            // Both were read (and checked) when the context was built.
            requested: chainlab_record::anchors::requested(args)
                .ok()
                .flatten()
                .map(|(_, n)| n)
                .or_else(|| crate::profile::default_requested(args)),
            trusted: if args.trust_anchor_retry {
                chainlab_record::anchors::trusted_ids(args).unwrap_or_default()
            } else {
                Vec::new()
            },
            available: Vec::new(),
        }
    }

    /// Who writes this slot's records.
    fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            stack: STACK,
            transport: self.args.tls.transport,
            verify: self.ctx.verify,
            instrument: !self.args.no_instrument,
        }
    }

    /// The SSL object for the next connection: SNI, the trust anchors a retry requests
    /// instead of the context's, and the session to resume, if any; and whether a ticket is
    /// offered.
    fn new_ssl(&mut self, retry: Option<&[u8]>) -> anyhow::Result<(Ssl, bool)> {
        let mut ssl = Ssl::new(&self.ctx.ctx)?;
        crate::profile::apply_ssl(&ssl, self.args.client_profile)?;
        // Before the timed span: nothing of an earlier connection of this thread.
        context::take_ticket();
        anchors::take_noted();
        if let Some(wire) = retry {
            // SAFETY: a valid SSL object of ours; the list is copied.
            let ok = unsafe {
                ffi::SSL_set1_requested_trust_anchors(ssl.as_ptr(), wire.as_ptr(), wire.len())
            };
            if ok != 1 {
                anyhow::bail!("BoringSSL refused the retry's trust anchor list");
            }
        }
        if let Some(name) = drive::server_name(self.args) {
            ssl.set_hostname(name)?;
        }
        let offered = self.resumption.next(self.args);
        if let Some(session) = offered {
            // SAFETY: the session came from a connection of this same context.
            unsafe { ssl.set_session(session)? };
        }
        Ok((ssl, offered.is_some()))
    }

    /// One TCP connection, start to finish. Errors only for local failures; everything the
    /// network or the peer does ends up in the record.
    fn tcp_attempt(
        &mut self,
        seq: u64,
        warmup: bool,
        retry: Option<(Vec<u8>, u64)>,
        defer: bool,
    ) -> anyhow::Result<Attempted> {
        let instrument = !self.args.no_instrument;
        let (ssl, offered) = self.new_ssl(retry.as_ref().map(|(w, _)| w.as_slice()))?;
        let requested = retry.map(|(_, n)| n).or(self.requested);
        let mut seen = ClientObserved {
            resume_offered: self.args.resume_ratio.map(|_| offered),
            ..ClientObserved::default()
        };
        let (started, stream) =
            connect_tcp(&self.args.connect, self.timeout, instrument, &mut seen);
        let (later, drain) = match stream {
            None => (None, None),
            Some(stream) if instrument => {
                let tls = SslStream::new(ssl, CountingStream::new(stream))?;
                self.handshake(tls, &started, &mut seen, defer)?
            }
            Some(stream) => {
                let tls = SslStream::new(ssl, stream)?;
                self.handshake(tls, &started, &mut seen, defer)?
            }
        };
        let noted = anchors::take_noted();
        if let Some(n) = requested {
            seen.trust_anchors = Some(anchors::seen(n, &noted));
        }
        if seen.failure.is_none() && seen.mtc.is_none() && self.ctx.mtc {
            // A certificate chainlab's relying party checked (landmark-relative).
            seen.mtc = noted.mtc.clone();
        }
        if let (Some(f), Some(text)) = (seen.failure.as_mut(), &noted.mtc_failure) {
            // BoringSSL knows the failure only as "application verification failure".
            f.detail = format!("certificate verify failed: {text}");
        }
        self.available = noted.available;
        let (who, start) = (self.identity(), started.start_unix_ns);
        Ok(Attempted::observed(who, seq, warmup, start, seen, later).draining(drain))
    }

    /// SSL_connect over a connected socket, then BoringSSL's close (the server's tickets and
    /// a client certificate's verdict read before our close_notify) and what the record needs.
    /// With `defer`, where the next attempt needs nothing of the close (no ticket, no client
    /// certificate), only our close_notify and FIN go now; the server's close_notify is read
    /// by what this gives back (`Slot::attempt_deferring_close`). A handshake that failed with
    /// the server still sending is read to its end now, or with `defer` by the `Drain` this
    /// gives back.
    fn handshake<S: Socket + 'static>(
        &mut self,
        mut tls: SslStream<S>,
        started: &Started,
        seen: &mut ClientObserved,
        defer: bool,
    ) -> anyhow::Result<(Option<ReadClose>, Option<Drain>)> {
        let connect = SslStream::connect;
        let result = drive::timed_handshake(seen, started, &mut tls, connect, SslStream::get_ref);

        let instrument = seen.handshake_counts.is_some();
        let mut sent = None;
        let mut lingering = false;
        match result {
            Ok(()) => {
                // Read first where the server's tickets matter: BoringSSL processes no
                // record after this side's close_notify, and the engines' servers send
                // theirs at once after the handshake.
                let wants_ticket = self.args.resume || self.args.resume_ratio.is_some();
                let read_first = self.ctx.client_cert || wants_ticket;
                if defer && !read_first {
                    sent = Some(tls.shutdown());
                    // Our FIN goes at once too, as it would have after the close.
                    let _ = tls.get_ref().tcp().shutdown(std::net::Shutdown::Write);
                } else {
                    let closed = close(&mut tls, read_first);
                    if let (Err(e), true) = (&closed, self.ctx.client_cert) {
                        // TLS 1.3 client authentication: SSL_connect returns once the
                        // client's Finished is sent; a server that rejects the certificate
                        // says so with an alert the close reads.
                        seen.failure = errors::client_cert_rejected(e);
                    }
                    seen.peer_close_notify = instrument.then_some(closed.is_ok());
                }
                if wants_ticket {
                    // The ticket the close read (none: the next attempt is a full one).
                    self.resumption.session = context::take_ticket();
                }
                if instrument {
                    let ssl = tls.ssl();
                    let resumed = ssl.session_reused();
                    seen.resumed = Some(resumed);
                    // A resumed handshake carries no CertificateVerify (BoringSSL would name
                    // the original session's scheme) and no Certificate message.
                    if !resumed {
                        // SAFETY: valid SSL pointer.
                        let peer = unsafe { ffi::SSL_get_peer_signature_algorithm(ssl.as_ptr()) };
                        seen.sigalg = capabilities::scheme_name(peer);
                        seen.peer_chain = observed_chain(ssl, false)?;
                        if self.ctx.mtc {
                            let leaf = ssl.peer_certificate().map(|c| c.to_der()).transpose()?;
                            let landmark =
                                leaf.as_deref().is_some_and(anchors::is_landmark_relative);
                            if !landmark {
                                seen.mtc = leaf.as_deref().and_then(crate::mtc::checked);
                            }
                        }
                    }
                }
            }
            Err(e) => {
                let last = tls.get_ref().last_error();
                let failure = errors::handshake_failure(&e, tls.ssl(), last, self.side);
                lingering = errors::peer_still_connected(failure.category);
                if lingering && !defer {
                    drain(tls.get_mut());
                }
                seen.failure = Some(failure);
            }
        }
        if instrument {
            let ssl = tls.ssl();
            // SAFETY: valid SSL pointer.
            seen.group = capabilities::group_name(unsafe { ffi::SSL_get_group_id(ssl.as_ptr()) });
            seen.conn_id = conn_id(ssl);
            seen.local_port = tls.get_ref().tcp().local_addr().ok().map(|a| a.port());
        }
        let Some(sent) = sent else {
            if instrument {
                seen.conn_counts = tls.get_ref().counts();
            }
            if !(lingering && defer) {
                return Ok((None, None));
            }
            // Our FIN goes now and the bytes so far are the record's; the rest of the
            // server's flight is read later, its bytes added then.
            let _ = tls.get_ref().tcp().shutdown(std::net::Shutdown::Write);
            let drain = drive::drain_later(
                tls,
                |tls| tls.get_ref().counts().map_or(0, |c| c.read),
                |tls| drain(tls.get_mut()),
            );
            return Ok((None, Some(drain)));
        };
        let later: ReadClose = Box::new(move |seen: &mut ClientObserved| {
            let closed = match sent {
                Ok(ShutdownResult::Received) => Ok(()),
                Ok(ShutdownResult::Sent) => read_to_close(&mut tls),
                Err(e) => Err(e),
            };
            seen.peer_close_notify = instrument.then_some(closed.is_ok());
            if instrument {
                seen.conn_counts = tls.get_ref().counts();
            }
        });
        Ok((Some(later), None))
    }
}

impl Slot for Client<'_> {
    /// One attempt; with `--trust-anchor-retry`, a certificate that failed verification is
    /// followed at once by a second connection requesting the IDs of the server's available
    /// list the client trusts (draft-ietf-tls-trust-anchor-ids-06, section 5.6), and the two
    /// are one record (`drive::merged`, as the SNI stand-in's retry).
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        let first = self.tcp_attempt(seq, warmup, None, false)?.finish();
        Ok(self.retried(first, seq, warmup, false)?.finish())
    }

    /// A handshake that succeeded leaves its close for later; one that failed is done,
    /// retried as `attempt` retries it, and the retry leaves its close for later.
    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        self.tcp_attempt(seq, warmup, None, true)?
            .then_done(|first| self.retried(first, seq, warmup, true))
    }
}

impl Client<'_> {
    /// `first`, or with `--trust-anchor-retry` where its certificate failed verification,
    /// `first` and the retry as one record (the retry's close left for later where
    /// `defer`).
    fn retried(
        &mut self,
        first: ClientRecord,
        seq: u64,
        warmup: bool,
        defer: bool,
    ) -> anyhow::Result<Attempted> {
        if !self.args.trust_anchor_retry
            || first.error_category != Some(ErrorCategory::VerifyFailed)
        {
            return Ok(Attempted::Done(first));
        }
        let Some(request) = chainlab_record::anchors::retry_request(&self.available, &self.trusted)
        else {
            return Ok(Attempted::Done(first));
        };
        Ok(self
            .tcp_attempt(seq, warmup, Some(request), defer)?
            .after(first))
    }
}

/// Sends close_notify, then reads until the server's (session tickets sent after the
/// handshake are read and processed on the way). With a client certificate the order is
/// reversed (`read_first`): the server may reject the certificate only after the client's
/// Finished, with an alert, and closes at once.
fn close<S: Socket>(tls: &mut SslStream<S>, read_first: bool) -> Result<(), boring::ssl::Error> {
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

/// Reads (and discards) until the peer's close_notify; an error for anything else.
fn read_to_close<S: Socket>(tls: &mut SslStream<S>) -> Result<(), boring::ssl::Error> {
    // Large enough for any record the server sends after the handshake (tickets).
    let mut buf = [0u8; 4096];
    loop {
        match tls.ssl_read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => continue,
            Err(e) if e.code() == ErrorCode::ZERO_RETURN => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Lingering close after a failure our side detected (an alert is on its way): stop
/// writing, then read and discard until the server closes (bounded by the read timeout).
fn drain<S: Socket>(stream: &mut S) {
    let _ = stream.tcp().shutdown(std::net::Shutdown::Write);
    // Any size works; 16 KiB is one maximal TLS record per read.
    let mut buf = [0u8; 16 * 1024];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}
