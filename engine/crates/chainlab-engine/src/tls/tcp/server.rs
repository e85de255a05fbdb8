//! The TCP server of `serve` over OpenSSL: a connection is an `SslStream` over the counting
//! socket, advanced as a state machine (`SSL_accept`, then our close_notify and the
//! client's), so one scaffold (`chainlab_record::serve`) runs it under either model: a
//! thread per connection on a blocking socket, or event loops over non-blocking ones
//! (OpenSSL's WANT_READ / WANT_WRITE say what a connection waits for).

use anyhow::bail;
use openssl::ssl::{ErrorCode, Ssl, SslContext, SslStream};

use chainlab_record::observed::ServerObserved;
use chainlab_record::serve::{self, Conn, Lifecycle, Phase, Step};

use crate::cli::ServeArgs;
use crate::tls::chain::observed_chain;
use foreign_types::ForeignTypeRef;

use crate::tls::context::ServerContext;
use crate::tls::counting::CountingStream;
use crate::tls::errors::{self, Failure, Side};
use crate::tls::serving::EngineFacts;
use crate::tls::{conn_id, group_name, recorded, sigalg_name};

/// `serve` over TCP: the scaffold runs the model asked for until a stop signal or
/// `--max-connections`.
pub fn serve(args: &ServeArgs, server: &ServerContext) -> anyhow::Result<()> {
    let stack = OpensslServer {
        ctx: &server.ctx,
        client_auth: server.client_auth.is_some(),
        second_leaf: server.second_leaf,
    };
    serve::serve(
        &stack,
        args,
        crate::build::stack(),
        &EngineFacts::of(server),
    )
}

/// What every connection shares.
struct OpensslServer<'a> {
    ctx: &'a SslContext,
    /// Mutual TLS: client certificates are required and recorded.
    client_auth: bool,
    /// Dual-chain serving: the address of the second chain's leaf (the X509 object the
    /// connections share with the context), to tell which chain a connection was sent.
    second_leaf: Option<usize>,
}

impl serve::Stack for OpensslServer<'_> {
    type Conn = OpensslConn;

    fn open(&self, socket: CountingStream) -> anyhow::Result<OpensslConn> {
        let ssl = Ssl::new(self.ctx)?;
        Ok(OpensslConn {
            tls: SslStream::new(ssl, socket)?,
            client_auth: self.client_auth,
            second_leaf: self.second_leaf,
            life: Lifecycle::default(),
            shutdown_sent: false,
        })
    }
}

struct OpensslConn {
    tls: SslStream<CountingStream>,
    client_auth: bool,
    second_leaf: Option<usize>,
    life: Lifecycle,
    shutdown_sent: bool,
}

impl Conn for OpensslConn {
    chainlab_record::libssl_server_steps!(|c| c.tls.accept());

    fn finish(self) -> anyhow::Result<ServerObserved> {
        let ssl = self.tls.ssl();
        let ok = self.life.ok();
        if self.life.failure.is_none() && !ok {
            bail!("a connection finished before its handshake ended, with no failure");
        }
        Ok(ServerObserved {
            conn_id: conn_id(ssl),
            handshake_counts: self.life.handshake_counts,
            conn_counts: self.tls.get_ref().counts(),
            datagrams: None,
            peer_close_notify: self.life.peer_close_notify,
            group: group_name(ssl),
            sigalg: sigalg_name(ssl, false),
            resumed: ok.then(|| ssl.session_reused()),
            recorded: recorded(ssl)
                .peer_chain(if self.client_auth {
                    Some(observed_chain(ssl, true)?)
                } else {
                    None
                })
                // The certificate libssl chose, once it signed with its key (a
                // CertificateVerify was sent); before that the connection's certificate is
                // only the default slot.
                .chain_index(self.second_leaf.map(|second| {
                    sigalg_name(ssl, false)
                        .and(ssl.certificate())
                        .map(|c| u8::from(c.as_ptr() as usize == second))
                })),
            failure: self.life.failure,
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
                Err(e) => return self.life.closed(e.code() == ErrorCode::ZERO_RETURN),
            }
        }
    }
}
