//! The TCP server of `serve` over OpenSSL: a connection is an `SslStream` over the counting
//! socket, advanced as a state machine (`SSL_accept`, then our close_notify and the
//! client's), so one scaffold (`chainlab_record::serve`) runs it under either model: a
//! thread per connection on a blocking socket, or event loops over non-blocking ones
//! (OpenSSL's WANT_READ / WANT_WRITE say what a connection waits for).

use anyhow::bail;
use openssl::ssl::{ErrorCode, Ssl, SslContext, SslStream};

use chainlab_record::observed::ServerObserved;
use chainlab_record::serve::{self, Conn, Step};

use crate::cli::ServeArgs;
use crate::tls::chain::observed_chain;
use crate::tls::context::ServerContext;
use crate::tls::counting::CountingStream;
use crate::tls::errors::{self, Failure, Side};
use crate::tls::serving::EngineFacts;
use crate::tls::{conn_id, group_name, sigalg_name};

/// `serve` over TCP: the scaffold runs the model asked for until a stop signal or
/// `--max-connections`.
pub fn serve(args: &ServeArgs, server: &ServerContext) -> anyhow::Result<()> {
    let stack = OpensslServer {
        ctx: &server.ctx,
        client_auth: server.client_auth.is_some(),
    };
    serve::serve(&stack, args, crate::info::stack(), &EngineFacts::of(server))
}

/// What every connection shares.
struct OpensslServer<'a> {
    ctx: &'a SslContext,
    /// Mutual TLS: client certificates are required and recorded.
    client_auth: bool,
}

impl serve::Stack for OpensslServer<'_> {
    type Conn = OpensslConn;

    fn open(&self, socket: CountingStream) -> anyhow::Result<OpensslConn> {
        let ssl = Ssl::new(self.ctx)?;
        Ok(OpensslConn {
            tls: SslStream::new(ssl, socket)?,
            client_auth: self.client_auth,
            phase: Phase::Handshake,
            handshake_counts: None,
            shutdown_sent: false,
            peer_close_notify: None,
            failure: None,
        })
    }
}

enum Phase {
    Handshake,
    /// After the handshake: our close_notify, then the client's.
    Closing,
    Done,
}

struct OpensslConn {
    tls: SslStream<CountingStream>,
    client_auth: bool,
    phase: Phase,
    handshake_counts: Option<chainlab_record::counting::Counts>,
    shutdown_sent: bool,
    peer_close_notify: Option<bool>,
    failure: Option<Failure>,
}

impl Conn for OpensslConn {
    fn advance(&mut self) -> Step {
        // What an earlier step's socket said is no cause of what this step meets.
        self.tls.get_mut().clear_last_error();
        match self.phase {
            Phase::Handshake => match self.tls.accept() {
                Ok(()) => {
                    self.handshake_counts = Some(self.tls.get_ref().counts());
                    self.phase = Phase::Closing;
                    Step::Handshaken
                }
                Err(e) if e.code() == ErrorCode::WANT_READ => Step::Read,
                Err(e) if e.code() == ErrorCode::WANT_WRITE => Step::Write,
                Err(e) => {
                    let side = Side::Server {
                        client_auth: self.client_auth,
                    };
                    let last = self.tls.get_ref().last_error();
                    self.failure = Some(errors::handshake_failure(&e, self.tls.ssl(), last, side));
                    self.phase = Phase::Done;
                    Step::Closed
                }
            },
            Phase::Closing => self.close(),
            Phase::Done => Step::Closed,
        }
    }

    fn interrupt(&mut self, failure: Failure) {
        match self.phase {
            Phase::Handshake => self.failure = Some(failure),
            Phase::Closing => self.peer_close_notify = Some(false),
            Phase::Done => {}
        }
        self.phase = Phase::Done;
    }

    fn socket(&self) -> &std::net::TcpStream {
        self.tls.get_ref().tcp()
    }

    fn finish(self) -> anyhow::Result<ServerObserved> {
        let ssl = self.tls.ssl();
        let ok = self.failure.is_none() && self.handshake_counts.is_some();
        if self.failure.is_none() && self.handshake_counts.is_none() {
            bail!("a connection finished before its handshake ended, with no failure");
        }
        Ok(ServerObserved {
            conn_id: conn_id(ssl),
            handshake_counts: self.handshake_counts,
            conn_counts: self.tls.get_ref().counts(),
            datagrams: None,
            peer_close_notify: self.peer_close_notify,
            group: group_name(ssl),
            sigalg: sigalg_name(ssl, false),
            resumed: ok.then(|| ssl.session_reused()),
            peer_chain: if self.client_auth {
                Some(observed_chain(ssl, true)?)
            } else {
                None
            },
            failure: self.failure,
        })
        // `self.tls` drops here: the socket closes.
    }
}

impl OpensslConn {
    /// After the handshake: send our close_notify at once, then read until the client's
    /// (application data, which the engine's client never sends, is discarded). Sending
    /// first means the client, which also sends then reads, finds ours already queued:
    /// closing costs no extra round trip in the client's handshake loop, while both sides
    /// still count every byte of the connection. The peer's close_notify, or EOF, reset or
    /// a timeout without one, ends it.
    fn close(&mut self) -> Step {
        if !self.shutdown_sent {
            match self.tls.shutdown() {
                Err(e) if e.code() == ErrorCode::WANT_WRITE => return Step::Write,
                Err(e) if e.code() == ErrorCode::WANT_READ => return Step::Read,
                // Sent, or the client is already gone: the read below says which.
                _ => self.shutdown_sent = true,
            }
        }
        // Large enough for any record a misbehaving client might send; no data is expected.
        let mut buf = [0u8; 4096];
        loop {
            match self.tls.ssl_read(&mut buf) {
                Ok(_) => continue,
                Err(e) if e.code() == ErrorCode::WANT_READ => return Step::Read,
                Err(e) if e.code() == ErrorCode::WANT_WRITE => return Step::Write,
                Err(e) => {
                    self.peer_close_notify = Some(e.code() == ErrorCode::ZERO_RETURN);
                    self.phase = Phase::Done;
                    return Step::Closed;
                }
            }
        }
    }
}
