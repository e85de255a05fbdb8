//! The TCP client of `handshake` and `load`: a fresh TCP connection per attempt, the timed
//! span connect() → `SSL_connect` returned (see `tls::client`), then the close.

use openssl::ssl::{ErrorCode, ShutdownResult, Ssl, SslStream};

use crate::record::ClientRecord;
use crate::tls::chain::observed_chain;
use chainlab_record::drive::{self, connect_tcp, Attempted, Drain, ReadClose, Started};

use crate::tls::counting::{CountingStream, SocketStream};
use crate::tls::errors::{self};
use crate::tls::{conn_id, group_name, sigalg_name};

use crate::tls::attempt::{Client, Observed};

/// One TCP attempt of a connection slot (`tls::attempt::AttemptFn`).
pub(crate) fn attempt(
    client: &mut Client<'_>,
    seq: u64,
    warmup: bool,
) -> anyhow::Result<ClientRecord> {
    Ok(client.tcp_attempt(seq, warmup, false)?.finish())
}

/// How a handshake ended: its close to read, or failed (with the rest of what the server sent
/// to read later, where that was left for later).
enum Ended<S: SocketStream> {
    Succeeded(Close<S>),
    Failed(Option<Drain>),
}

/// A handshake's close, from our close_notify (sent, or for a client certificate still to
/// send) to the server's.
struct Close<S: SocketStream> {
    tls: SslStream<S>,
    /// Our close_notify's sending (`SSL_shutdown`); None with a client certificate, whose
    /// close reads first (`close_reading_first`).
    sent: Option<Result<ShutdownResult, openssl::ssl::Error>>,
    client_cert: bool,
    instrument: bool,
}

impl<S: SocketStream> Close<S> {
    /// Reads to the server's close_notify, notes what the close gives the record (a client
    /// certificate's verdict, whether the close_notify came, the connection's bytes), sends
    /// our FIN, and gives the connection back to be freed.
    fn read(mut self, seen: &mut Observed) -> SslStream<S> {
        let closed = match self.sent.take() {
            None => close_reading_first(&mut self.tls),
            Some(Ok(ShutdownResult::Received)) => Ok(()),
            Some(Ok(ShutdownResult::Sent)) => read_to_close(&mut self.tls),
            Some(Err(e)) => Err(e),
        };
        if let (Err(e), true) = (&closed, self.client_cert) {
            // TLS 1.3 client authentication: SSL_connect returns once the client's Finished
            // is sent, and a server that rejects the certificate says so with an alert the
            // close reads.
            seen.failure = errors::client_cert_rejected(e);
        }
        seen.peer_close_notify = self.instrument.then_some(closed.is_ok());
        self.end(seen)
    }

    /// The connection's end: its bytes counted, our FIN sent (so whatever stands between us
    /// and the server, a relay that serves one connection at a time, sees it end), and the
    /// connection given back to be freed.
    fn end(self, seen: &mut Observed) -> SslStream<S> {
        if self.instrument {
            seen.conn_counts = self.tls.get_ref().counts();
        }
        let _ = self.tls.get_ref().tcp().shutdown(std::net::Shutdown::Write);
        self.tls
    }
}

impl Client<'_> {
    /// One TCP connection; with `defer`, its close is left for later (`Slot::
    /// attempt_deferring_close`) where nothing of it is needed before the next attempt.
    /// Errors only for local failures (out of memory, a broken OpenSSL); everything the
    /// network or the peer does ends up in the record.
    pub(crate) fn tcp_attempt(
        &mut self,
        seq: u64,
        warmup: bool,
        defer: bool,
    ) -> anyhow::Result<Attempted> {
        let instrument = !self.args.no_instrument;
        let (ssl, offered) = self.new_ssl()?;
        let mut seen = Observed {
            resume_offered: self.args.resume_ratio.map(|_| offered),
            ..Observed::default()
        };

        let (started, stream) =
            connect_tcp(&self.args.connect, self.timeout, instrument, &mut seen);
        let (later, drain) = match stream {
            None => (None, None),
            Some(stream) if instrument => {
                let stream = CountingStream::new(stream);
                self.connection(ssl, stream, &started, &mut seen, defer)?
            }
            Some(stream) => self.connection(ssl, stream, &started, &mut seen, defer)?,
        };
        let (who, start) = (self.identity(), started.start_unix_ns);
        Ok(Attempted::observed(who, seq, warmup, start, seen, later).draining(drain))
    }

    /// The handshake over a connected socket, then its close (`close`); with `defer`, what
    /// is left for later: a successful handshake's close to read, or a failed one's rest.
    fn connection<S: SocketStream + 'static>(
        &mut self,
        ssl: Ssl,
        stream: S,
        started: &Started,
        seen: &mut Observed,
        defer: bool,
    ) -> anyhow::Result<(Option<ReadClose>, Option<Drain>)> {
        Ok(match self.handshake(ssl, stream, started, seen, defer)? {
            Ended::Succeeded(close) => (self.close(close, seen, defer), None),
            Ended::Failed(drain) => (None, drain),
        })
    }

    /// SSL_connect over a connected socket and what the record needs of it; once it
    /// succeeded, our close_notify goes first (a client certificate's close reads first:
    /// `close_reading_first`) and the record's facts are read while the server answers.
    /// The close to read, where the handshake succeeded; where it failed with the server
    /// still sending (`drain`), with `defer`, the rest to read after the next attempt's
    /// timed span.
    fn handshake<S: SocketStream + 'static>(
        &mut self,
        ssl: Ssl,
        stream: S,
        started: &Started,
        seen: &mut Observed,
        defer: bool,
    ) -> anyhow::Result<Ended<S>> {
        let mut tls = SslStream::new(ssl, stream)?;
        let connect = SslStream::connect;
        let result = drive::timed_handshake(seen, started, &mut tls, connect, SslStream::get_ref);

        let instrument = seen.handshake_counts.is_some();
        let mut lingering = false;
        let sent = match result {
            Ok(()) => {
                let sent = (!self.ctx.client_cert).then(|| tls.shutdown());
                // The previous connection is freed here, while the server answers.
                self.finished = None;
                if instrument {
                    let ssl = tls.ssl();
                    let resumed = ssl.session_reused();
                    seen.resumed = Some(resumed);
                    seen.sigalg = sigalg_name(ssl, true);
                    // A resumed handshake carries no Certificate message.
                    if !resumed {
                        seen.peer_chain = observed_chain(ssl, false)?;
                        seen.mtc = crate::tls::mtc::checked(ssl);
                    }
                }
                Some(sent)
            }
            Err(e) => {
                let failure =
                    errors::handshake_failure(&e, tls.ssl(), tls.get_ref().last_error(), self.side);
                lingering = errors::peer_still_connected(failure.category);
                seen.failure = Some(failure);
                None
            }
        };
        seen.trust_anchors = self.anchors.observe(tls.ssl());
        if instrument {
            let ssl = tls.ssl();
            seen.group = group_name(ssl);
            seen.conn_id = conn_id(ssl);
            seen.local_port = tls.get_ref().tcp().local_addr().ok().map(|a| a.port());
        }
        let close = Close {
            tls,
            sent: None,
            client_cert: self.ctx.client_cert,
            instrument,
        };
        match sent {
            Some(sent) => Ok(Ended::Succeeded(Close { sent, ..close })),
            None if lingering && defer => {
                // Our FIN goes now and the bytes so far are the record's; the rest of the
                // server's flight is read later, its bytes added then.
                let tls = close.end(seen);
                Ok(Ended::Failed(Some(drive::drain_later(
                    tls,
                    |tls| tls.get_ref().counts().map_or(0, |c| c.read),
                    |tls| drain(tls.get_mut()),
                ))))
            }
            None => {
                let mut close = close;
                if lingering {
                    drain(close.tls.get_mut());
                }
                // A failed handshake's connection is over: its bytes, our FIN, freed later.
                let tls = close.end(seen);
                self.finished = Some(Box::new(tls));
                Ok(Ended::Failed(None))
            }
        }
    }

    /// The close read now, the session it brought kept for the next attempt and the
    /// connection freed during the next one's close (`Client::finished`); or, with `defer`
    /// where the next attempt needs nothing of it (no ticket to resume with, no client
    /// certificate), its reading, left for later.
    fn close<S: SocketStream + 'static>(
        &mut self,
        close: Close<S>,
        seen: &mut Observed,
        defer: bool,
    ) -> Option<ReadClose> {
        let resumes = self.args.resume || self.args.resume_ratio.is_some();
        if defer && !resumes && !close.client_cert {
            // Our FIN goes at once too, as it would have after the close.
            let _ = close
                .tls
                .get_ref()
                .tcp()
                .shutdown(std::net::Shutdown::Write);
            return Some(Box::new(move |seen: &mut Observed| drop(close.read(seen))));
        }
        let tls = close.read(seen);
        if resumes {
            // Tickets arrive after the handshake: the close read them.
            self.resumption.session = tls.ssl().session().map(|s| s.to_owned());
        }
        self.finished = Some(Box::new(tls));
        None
    }
}

/// With a client certificate: reads until the server's close_notify (session tickets sent
/// after the handshake are read and processed on the way), then sends ours. TLS 1.3 lets the
/// server reject the certificate only after the client's Finished, with an alert, and a
/// server that has sent it closes at once; writing our close_notify first would meet the
/// closed socket and lose the alert. The engine's server always answers (a close_notify or
/// an alert). Without a client certificate the client sends first (`handshake`). Ok once the
/// server's close_notify arrived; the error when the close failed (an alert, a reset, a
/// timeout).
fn close_reading_first<S: SocketStream>(tls: &mut SslStream<S>) -> Result<(), openssl::ssl::Error> {
    read_to_close(tls)?;
    tls.shutdown()?;
    Ok(())
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
