//! `serve`: the TLS 1.3 server over BoringSSL. One record per accepted connection.
//!
//! A connection is an `SslStream` over the counting socket, advanced as a state machine
//! (`SSL_accept`, then our close_notify and the client's), so the scaffold every engine
//! shares (`chainlab_record::serve`) runs it thread per connection or in event loops
//! (`--server-model`), and its spans are those of the other engines: accept() returns →
//! handshake (tickets included) → handshake span ends: CPU and byte counts → our
//! close_notify → the client's (bounded by `--io-timeout-ms`) → close → connection span
//! ends (`conn_ns`, `conn_cpu_ns`).

use anyhow::bail;
use boring::ssl::{ErrorCode, Ssl, SslContext, SslStream};
use boring_sys as ffi;
use chainlab_record::counting::CountingStream;
use chainlab_record::observed::ServerObserved;
use chainlab_record::record::ServerRecorded;
use chainlab_record::serve::{self, Conn, Lifecycle, Phase, Step};
use foreign_types::ForeignTypeRef;
use serde::Serialize;

use crate::capabilities::{self, STACK};
use crate::chain::observed_chain;
use crate::compression::CompressionSetup;
use crate::context::{self, ClientAuth, ServedChain};
use crate::errors::{self, Failure, Side};
use chainlab_record::args::ServeArgs;

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    serve::prepare(
        capabilities::STACK,
        Some(capabilities::CERT_COMPRESSIONS),
        args,
    )?;
    let server = context::server(args)?;
    let facts = Facts {
        boringssl: crate::info::BORING_SYS_VERSION,
        max_cert_list: server.max_cert_list,
        served_chain: &server.served_chain,
        cert_compression: &server.cert_compression,
        client_auth: server.client_auth.as_ref(),
    };
    let stack = BoringServer {
        ctx: &server.ctx,
        client_auth: server.client_auth.is_some(),
        second: server.second,
    };
    serve::serve(&stack, args, STACK, &facts)
}

/// What this engine's ready line says beyond what every engine says.
#[derive(Serialize)]
struct Facts<'a> {
    /// The boring-sys release whose BoringSSL this is.
    boringssl: &'static str,
    max_cert_list: u64,
    served_chain: &'a ServedChain,
    cert_compression: &'a CompressionSetup,
    client_auth: Option<&'a ClientAuth>,
}

/// What every connection shares.
struct BoringServer<'a> {
    ctx: &'a SslContext,
    /// Mutual TLS: client certificates are required and recorded.
    client_auth: bool,
    /// Dual-chain serving: the second credential's address.
    second: Option<usize>,
}

impl serve::Stack for BoringServer<'_> {
    type Conn = BoringConn;

    fn open(&self, socket: CountingStream) -> anyhow::Result<BoringConn> {
        let ssl = Ssl::new(self.ctx)?;
        context::take_signed(); // nothing of an earlier connection of this thread
        Ok(BoringConn {
            tls: SslStream::new(ssl, socket)?,
            client_auth: self.client_auth,
            second: self.second,
            life: Lifecycle::default(),
            shutdown_sent: false,
            signed: (0, 0),
        })
    }
}

struct BoringConn {
    tls: SslStream<CountingStream>,
    client_auth: bool,
    second: Option<usize>,
    life: Lifecycle,
    shutdown_sent: bool,
    /// The scheme its CertificateVerify was signed with and the credential that signed
    /// (`context::take_signed`, taken after each step of the handshake).
    signed: (u16, usize),
}

impl Conn for BoringConn {
    chainlab_record::libssl_server_steps!(|c| c.accept());

    fn finish(self) -> anyhow::Result<ServerObserved> {
        let ssl = self.tls.ssl();
        let ok = self.life.ok();
        if self.life.failure.is_none() && !ok {
            bail!("a connection finished before its handshake ended, with no failure");
        }
        // SAFETY: valid SSL pointer; the call reads the connection's state.
        let group = unsafe { ffi::SSL_get_group_id(ssl.as_ptr()) };
        // A resumed handshake signs nothing (BoringSSL would name the session's scheme).
        let resumed = ssl.session_reused();
        let (signed, chosen) = if resumed { (0, 0) } else { self.signed };
        // The credential BoringSSL chose, once its key signed a CertificateVerify.
        let chain_index = self
            .second
            .map(|second| (signed != 0 && chosen != 0).then_some(u8::from(chosen == second)));
        Ok(ServerObserved {
            conn_id: crate::client::conn_id(ssl),
            handshake_counts: self.life.handshake_counts,
            conn_counts: self.tls.get_ref().counts(),
            datagrams: None,
            peer_close_notify: self.life.peer_close_notify,
            group: capabilities::group_name(group),
            sigalg: capabilities::scheme_name(signed),
            resumed: ok.then_some(resumed),
            recorded: ServerRecorded::default()
                .peer_chain(if self.client_auth {
                    Some(observed_chain(ssl, true)?)
                } else {
                    None
                })
                .chain_index(chain_index),
            failure: self.life.failure,
        })
        // `self.tls` drops here: the socket closes.
    }
}

impl BoringConn {
    /// One step of SSL_accept, and what it signed with if the handshake finished in it.
    fn accept(&mut self) -> Result<(), boring::ssl::Error> {
        let result = self.tls.accept();
        let signed = context::take_signed();
        if signed.0 != 0 {
            self.signed = signed;
        }
        result
    }

    /// After the handshake: send our close_notify at once, then read until the client's
    /// (application data, which the engines' clients never send, is discarded).
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
                Ok(0) => return self.life.closed(true),
                Ok(_) => continue,
                Err(e) if e.code() == ErrorCode::WANT_READ => return Step::Read,
                Err(e) if e.code() == ErrorCode::WANT_WRITE => return Step::Write,
                Err(e) => return self.life.closed(e.code() == ErrorCode::ZERO_RETURN),
            }
        }
    }
}
