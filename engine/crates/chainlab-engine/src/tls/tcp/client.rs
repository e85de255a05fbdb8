//! The TCP client of `handshake` and `load`: a fresh TCP connection per attempt, the timed
//! span connect() → `SSL_connect` returned (see `tls::client`), then the close.

use openssl::ssl::{ErrorCode, ShutdownResult, Ssl, SslStream};

use crate::record::ClientRecord;
use crate::tls::chain::observed_chain;
use chainlab_record::drive::{self, connect_tcp, Started};

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
    client.tcp_attempt(seq, warmup)
}

impl Client<'_> {
    /// One TCP connection, start to finish. Errors only for local failures (out of memory,
    /// a broken OpenSSL); everything the network or the peer does ends up in the record.
    fn tcp_attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        let instrument = !self.args.no_instrument;
        let (ssl, offered) = self.new_ssl()?;
        let mut seen = Observed {
            resume_offered: self.args.resume_ratio.map(|_| offered),
            ..Observed::default()
        };

        let (started, stream) =
            connect_tcp(&self.args.connect, self.timeout, instrument, &mut seen);
        match stream {
            None => {}
            Some(stream) if instrument => {
                let stream = CountingStream::new(stream);
                self.handshake(ssl, stream, &started, &mut seen)?
            }
            Some(stream) => self.handshake(ssl, stream, &started, &mut seen)?,
        }
        Ok(self.record(seq, warmup, started.start_unix_ns, seen))
    }

    /// SSL_connect over a connected socket, then OpenSSL's close (our close_notify first, the
    /// record's facts read while the server answers) and what the record needs.
    fn handshake<S: SocketStream + 'static>(
        &mut self,
        ssl: Ssl,
        stream: S,
        started: &Started,
        seen: &mut Observed,
    ) -> anyhow::Result<()> {
        let mut tls = SslStream::new(ssl, stream)?;
        let connect = SslStream::connect;
        let result = drive::timed_handshake(seen, started, &mut tls, connect, SslStream::get_ref);

        let instrument = seen.handshake_counts.is_some();
        match result {
            Ok(()) => {
                // Our close_notify goes first, then the record's facts are read while the
                // server answers on its own core, then its close_notify (`read_to_close`).
                // A client certificate's verdict is read first (`close_reading_first`).
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
                let closed = match sent {
                    None => close_reading_first(&mut tls),
                    Some(Ok(ShutdownResult::Received)) => Ok(()),
                    Some(Ok(ShutdownResult::Sent)) => read_to_close(&mut tls),
                    Some(Err(e)) => Err(e),
                };
                if let (Err(e), true) = (&closed, self.ctx.client_cert) {
                    // TLS 1.3 client authentication: SSL_connect returns once the client's
                    // Finished is sent, and a server that rejects the certificate says so
                    // with an alert the close reads.
                    seen.failure = errors::client_cert_rejected(e);
                }
                seen.peer_close_notify = instrument.then_some(closed.is_ok());
                if self.args.resume || self.args.resume_ratio.is_some() {
                    // Tickets arrive after the handshake: the close read them.
                    self.resumption.session = tls.ssl().session().map(|s| s.to_owned());
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
        seen.trust_anchors = self.anchors.observe(tls.ssl());
        if instrument {
            let ssl = tls.ssl();
            seen.group = group_name(ssl);
            seen.conn_id = conn_id(ssl);
            seen.local_port = tls.get_ref().tcp().local_addr().ok().map(|a| a.port());
            seen.conn_counts = tls.get_ref().counts();
        }
        // Our FIN goes now, so whatever stands between us and the server (a relay that
        // serves one connection at a time) sees this connection end; the socket and the SSL
        // object are freed during the next connection's close (`Client::finished`).
        let _ = tls.get_ref().tcp().shutdown(std::net::Shutdown::Write);
        self.finished = Some(Box::new(tls));
        Ok(())
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
