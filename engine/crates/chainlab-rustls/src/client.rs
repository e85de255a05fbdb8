//! `handshake`: the measuring client over rustls, the OpenSSL engine's client in every
//! respect a record shows. One record per attempt, warm-ups included; nothing is retried.
//!
//! Timed span: connect() starts → connect returns (`connect_ns`) → the handshake's last
//! flight (the client's Finished) is written (`handshake_ns`). The configuration is built
//! before the first attempt; the `ClientConnection` is made inside the span, because rustls
//! generates the key share and the ClientHello there (OpenSSL does so in `SSL_connect`).
//! Closing the connection, chain capture and writing the record come after it.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use chainlab_record::counting::CountingStream;
use chainlab_record::drive::{self, Attempted, Drain, ReadClose, Slot, Started};
use chainlab_record::observed::ClientIdentity;
use chainlab_record::record::{ClientRecord, ObservedCert};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, HandshakeKind};

use crate::capabilities::{self, STACK};
use crate::chain::observed_chain;
use crate::errors::{self, Side};
use crate::io::{self as tlsio, RecordReads, Socket, Stop};
use crate::tls;
use chainlab_record::args::{ClientArgs, HandshakeArgs, LoadArgs};

pub fn run(args: &HandshakeArgs) -> anyhow::Result<()> {
    chainlab_record::features::check_seed(capabilities::STACK, args.random_seed)?;
    if let Some(kinds) = drive::population::kinds(&args.client)? {
        // One configuration per kind of client, each with its own groups and schemes.
        let slots = kinds
            .iter()
            .map(|k| Client::new(&k.args, prepare(&k.args)?))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut mixed =
            drive::population::Population::new(&kinds, slots, args.client.population_seed);
        return drive::attempts(&mut mixed, args);
    }
    let config = prepare(&args.client)?;
    if !args.client.mtc_retry {
        return drive::attempts(&mut Client::new(&args.client, config)?, args);
    }
    let retry_args = drive::mtc_retry_args(&args.client)?;
    let mut slot = drive::MtcRetry {
        first: Client::new(&args.client, config.clone())?,
        retry: Client::new(&retry_args, config)?,
    };
    drive::attempts(&mut slot, args)
}

/// `load`: the scaffold's open-loop generator (`chainlab_record::drive::load`) over slots of
/// this client. The slots share one configuration, and so, with `--resume`, one session
/// cache: a slot may resume a ticket another slot received (the server's tickets are
/// stateless, so to the server that is the same).
pub fn load(args: &LoadArgs) -> anyhow::Result<()> {
    if let Some(kinds) = drive::population::kinds(&args.client)? {
        // Every connection slot draws its kinds from its own seed: --population-seed + the
        // slot's number, in the order the generator opens slots.
        let configs = kinds
            .iter()
            .map(|k| prepare(&k.args))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let who = Client::new(&kinds[0].args, configs[0].clone())?.identity();
        let next = std::sync::atomic::AtomicU64::new(args.client.population_seed);
        return drive::load(args, who, || {
            let slots = kinds
                .iter()
                .zip(&configs)
                .map(|(k, c)| Client::new(&k.args, c.clone()))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(drive::population::Population::new(&kinds, slots, seed))
        });
    }
    let config = prepare(&args.client)?;
    let who = Client::new(&args.client, config.clone())?.identity();
    drive::load(args, who, || Client::new(&args.client, config.clone()))
}

/// What every client run does first: check the options (the shared ones and what this
/// stack cannot do), pin to `--cpus`, build the configuration.
fn prepare(args: &ClientArgs) -> anyhow::Result<Arc<ClientConfig>> {
    drive::check_client(args)?;
    chainlab_record::features::check_client(
        capabilities::STACK,
        Some(capabilities::CERT_COMPRESSIONS),
        args,
    )?;
    tls::client(args)
}

struct Client<'a> {
    args: &'a ClientArgs,
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    timeout: Duration,
    side: Side,
    /// The last chain observed: its certificates and what was read off them. A chain is a
    /// function of its bytes, so the same bytes again (every handshake to one server) are
    /// not parsed again; the OpenSSL engine reads the same fields off certificates its
    /// library has parsed already, and this keeps the two engines' own work alike.
    last_chain: RefCell<Option<(Vec<CertificateDer<'static>>, Vec<ObservedCert>)>>,
}

/// What one attempt observed, before it becomes a record.
type Observed = chainlab_record::observed::ClientObserved;

impl<'a> Client<'a> {
    fn new(args: &'a ClientArgs, config: Arc<ClientConfig>) -> anyhow::Result<Self> {
        let server_name = ServerName::try_from(args.servername.clone())
            .map_err(|e| anyhow!("--servername {:?}: {e}", args.servername))?;
        Ok(Client {
            config,
            server_name,
            timeout: Duration::from_millis(args.timeout_ms),
            side: Side::Client {
                sigalgs_restricted: args.tls.sigalgs.is_some(),
                server_hello_seen: false,
            },
            args,
            last_chain: RefCell::new(None),
        })
    }

    /// The observed chain of `certs`, from the last one when the bytes are the same.
    fn observe(&self, certs: &[CertificateDer<'_>]) -> anyhow::Result<Vec<ObservedCert>> {
        let mut last = self.last_chain.borrow_mut();
        if let Some((ders, observed)) = last.as_ref() {
            if ders.len() == certs.len() && ders.iter().zip(certs).all(|(a, b)| a == b) {
                return Ok(observed.clone());
            }
        }
        let observed = observed_chain(certs)?;
        let ders = certs.iter().map(|c| c.clone().into_owned()).collect();
        *last = Some((ders, observed.clone()));
        Ok(observed)
    }

    /// Who writes this client's records.
    fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            stack: STACK,
            transport: self.args.tls.transport,
            verify: !self.args.no_verify,
            instrument: !self.args.no_instrument,
        }
    }

    /// One connection; with `defer`, its close is left for later (`Slot::
    /// attempt_deferring_close`) where nothing of it is needed before the next attempt (no
    /// ticket to resume with). Errors only for local failures.
    fn one(&self, seq: u64, warmup: bool, defer: bool) -> anyhow::Result<Attempted> {
        let instrument = !self.args.no_instrument;
        let mut seen = Observed::default();
        tls::take_scheme();
        crate::mtc::take_checked();
        let (started, stream) =
            drive::connect_tcp(&self.args.connect, self.timeout, instrument, &mut seen);
        let defer = defer && !self.args.resume;
        let (later, drain) = match stream {
            None => (None, None),
            Some(stream) if instrument => {
                let io = RecordReads::new(CountingStream::new(stream));
                self.handshake(io, &started, &mut seen, defer)?
            }
            Some(stream) => self.handshake(RecordReads::new(stream), &started, &mut seen, defer)?,
        };
        let (who, start) = (self.identity(), started.start_unix_ns);
        Ok(Attempted::observed(who, seq, warmup, start, seen, later).draining(drain))
    }

    /// The handshake over a connected socket and what the record needs of it; once it
    /// succeeded, our close_notify goes first and the record's facts are read while the
    /// server answers, then its close_notify, read now or (`defer`) by what this gives back.
    /// One that failed with the server still sending is read to its end now, or (`defer`)
    /// by the `Drain` this gives back.
    fn handshake<S: Socket + 'static>(
        &self,
        mut io: RecordReads<S>,
        started: &Started,
        seen: &mut Observed,
        defer: bool,
    ) -> anyhow::Result<(Option<ReadClose>, Option<Drain>)> {
        let mut conn = ClientConnection::new(self.config.clone(), self.server_name.clone())?;
        let connect = |io: &mut RecordReads<S>| tlsio::handshake(&mut conn, io);
        let result = drive::timed_handshake(seen, started, &mut io, connect, RecordReads::socket);

        let instrument = seen.handshake_counts.is_some();
        let mut lingering = false;
        let flushed = match result {
            Ok(()) => {
                conn.send_close_notify();
                let flushed = tlsio::flush(&mut conn, &mut io).is_ok();
                if instrument {
                    let resumed = conn.handshake_kind() == Some(HandshakeKind::Resumed);
                    seen.resumed = Some(resumed);
                    seen.sigalg = tls::take_scheme().map(capabilities::scheme_name);
                    seen.mtc = crate::mtc::take_checked();
                    if !resumed {
                        seen.peer_chain = conn
                            .peer_certificates()
                            .map(|c| self.observe(c))
                            .transpose()?;
                    }
                }
                Some(flushed)
            }
            Err(stop) => {
                let failure = match &stop {
                    Stop::Io(e) => errors::io_failure(e),
                    Stop::Tls(e) => {
                        let side = match self.side {
                            Side::Client {
                                sigalgs_restricted, ..
                            } => Side::Client {
                                sigalgs_restricted,
                                server_hello_seen: conn.negotiated_key_exchange_group().is_some(),
                            },
                            side => side,
                        };
                        errors::tls_failure(e, side)
                    }
                };
                lingering = errors::peer_still_connected(failure.category);
                if lingering && !defer {
                    tlsio::drain(&mut io);
                }
                seen.failure = Some(failure);
                None
            }
        };
        if instrument {
            seen.group = conn
                .negotiated_key_exchange_group()
                .map(|g| capabilities::group_name(g.name()));
            seen.conn_id = io.socket().hello_conn_id(true);
            seen.local_port = io.socket().tcp().local_addr().ok().map(|a| a.port());
        }
        if lingering && defer {
            // Our FIN goes now and the bytes so far are the record's; the rest of the
            // server's flight is read later, its bytes added then.
            let _ = io.socket().tcp().shutdown(std::net::Shutdown::Write);
            if instrument {
                seen.conn_counts = io.socket().counts();
            }
            let drain = drive::drain_later(
                io,
                |io| io.socket().counts().map_or(0, |c| c.read),
                tlsio::drain,
            );
            return Ok((None, Some(drain)));
        }
        let deferred = defer && flushed.is_some();
        if deferred {
            // Our FIN goes at once too, as it would have after the close.
            let _ = io.socket().tcp().shutdown(std::net::Shutdown::Write);
        }
        // The server's close_notify (and tickets before it), once ours went; the bytes of
        // the whole connection.
        let mut close = move |seen: &mut Observed| {
            if let Some(flushed) = flushed {
                let closed = flushed && tlsio::await_close_notify(&mut conn, &mut io);
                seen.peer_close_notify = instrument.then_some(closed);
            }
            if instrument {
                seen.conn_counts = io.socket().counts();
            }
        };
        if deferred {
            return Ok((Some(Box::new(close)), None));
        }
        close(seen);
        Ok((None, None))
    }
}

impl Slot for Client<'_> {
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        Ok(self.one(seq, warmup, false)?.finish())
    }

    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        self.one(seq, warmup, true)
    }
}
