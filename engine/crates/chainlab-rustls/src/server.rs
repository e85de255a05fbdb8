//! `serve`: the TLS 1.3 server over rustls. One record per accepted connection.
//!
//! A connection is rustls' `ServerConnection` state machine over the counting socket, read
//! one TLS record at a time (`io::RecordReads`, as OpenSSL reads), advanced until the socket
//! would block: the scaffold every engine shares (`chainlab_record::serve`) runs it thread
//! per connection or in event loops (`--server-model`), and its spans are those of the
//! OpenSSL engine: accept() returns → handshake (tickets included) → handshake span ends:
//! CPU and byte counts → our close_notify → the client's (bounded by `--io-timeout-ms`) →
//! close → connection span ends (`conn_ns`, `conn_cpu_ns`).

use std::io;

use chainlab_record::counting::CountingStream;
use chainlab_record::failure::Failure;
use chainlab_record::observed::ServerObserved;
use chainlab_record::record::ServerRecorded;
use chainlab_record::serve::{self, Conn, Lifecycle, Phase, Step};
use rustls::{HandshakeKind, ServerConnection, SignatureScheme};
use serde::Serialize;

use crate::capabilities::{self, STACK};
use crate::errors::{self, Side};
use crate::io::RecordReads;
use crate::tls::{self, ServerSetup};
use chainlab_record::args::ServeArgs;

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    serve::prepare(
        capabilities::STACK,
        Some(capabilities::CERT_COMPRESSIONS),
        args,
    )?;
    let setup = tls::server(args)?;
    let facts = Facts {
        rustls: crate::info::RUSTLS_VERSION,
        served_chain: ServedChain {
            policy: args.chain,
            certificates: setup.chain_der.len(),
            der_bytes: setup.chain_der.iter().sum(),
        },
        cert_compression: &setup.compression,
    };
    serve::serve(&RustlsServer(&setup), args, STACK, &facts)
}

/// What this engine's ready line says beyond what every engine says.
#[derive(Serialize)]
struct Facts<'a> {
    rustls: &'static str,
    served_chain: ServedChain,
    cert_compression: &'a tls::CompressionSetup,
}

#[derive(Serialize)]
struct ServedChain {
    policy: chainlab_record::args::ChainPolicy,
    certificates: usize,
    der_bytes: usize,
}

struct RustlsServer<'a>(&'a ServerSetup);

impl serve::Stack for RustlsServer<'_> {
    type Conn = RustlsConn;

    fn open(&self, socket: CountingStream) -> anyhow::Result<RustlsConn> {
        tls::take_scheme(); // nothing of an earlier connection of this thread
        tls::take_chain();
        Ok(RustlsConn {
            conn: ServerConnection::new(self.0.config.clone())?,
            io: RecordReads::new(socket),
            life: Lifecycle::default(),
            close_sent: false,
            peer_has_closed: false,
            sigalg: None,
            chain: None,
            dual: self.0.dual,
        })
    }
}

struct RustlsConn {
    conn: ServerConnection,
    io: RecordReads<CountingStream>,
    life: Lifecycle,
    close_sent: bool,
    /// The client's close_notify has been processed.
    peer_has_closed: bool,
    /// The scheme this connection's CertificateVerify was signed with. The signing key notes
    /// it in a thread-local while rustls processes the ClientHello, within one step of this
    /// connection, so it is taken right after each step.
    sigalg: Option<SignatureScheme>,
    /// Dual-chain serving: the chain the resolver chose, and whether there were two.
    chain: Option<u8>,
    dual: bool,
}

/// How a read or write of the socket went.
enum Io {
    Done,
    Blocked(Step),
    Failed(io::Error),
}

impl Conn for RustlsConn {
    fn advance(&mut self) -> Step {
        match self.life.phase() {
            Phase::Handshake => self.handshake(),
            Phase::Closing => self.close(),
            Phase::Done => Step::Closed,
        }
    }

    fn interrupt(&mut self, failure: Failure) {
        self.life.interrupt(failure);
    }

    fn socket(&self) -> &std::net::TcpStream {
        self.io.socket().tcp()
    }

    fn finish(self) -> anyhow::Result<ServerObserved> {
        let ok = self.life.ok();
        let resumed = self.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        Ok(ServerObserved {
            conn_id: self.io.socket().hello_conn_id(false),
            handshake_counts: self.life.handshake_counts,
            conn_counts: CountingStream::counts(self.io.socket()),
            datagrams: None,
            peer_close_notify: self.life.peer_close_notify,
            group: self
                .conn
                .negotiated_key_exchange_group()
                .map(|g| capabilities::group_name(g.name())),
            sigalg: self.sigalg.map(capabilities::scheme_name),
            resumed: ok.then_some(resumed),
            // The chain sent, once its key signed a CertificateVerify.
            recorded: ServerRecorded::default().chain_index(
                self.dual
                    .then(|| self.chain.filter(|_| self.sigalg.is_some())),
            ),
            failure: self.life.failure,
        })
        // `self.io` drops here: the socket closes.
    }
}

impl RustlsConn {
    /// Until the handshake is over and everything it sends (the server's tickets included)
    /// is written, or the socket would block, or it failed.
    fn handshake(&mut self) -> Step {
        loop {
            match self.write_pending() {
                Io::Done => {}
                Io::Blocked(step) => return step,
                Io::Failed(e) => return self.life.fail(errors::io_failure(&e)),
            }
            if !self.conn.is_handshaking() {
                return self
                    .life
                    .handshaken(CountingStream::counts(self.io.socket()));
            }
            match self.read_record() {
                Ok(Io::Done) => {}
                Ok(Io::Blocked(step)) => return step,
                Ok(Io::Failed(e)) => return self.life.fail(errors::io_failure(&e)),
                Err(e) => {
                    // The alert rustls queued in reply goes out before the close.
                    let _ = self.write_pending();
                    return self.life.fail(errors::tls_failure(&e, Side::Server));
                }
            }
        }
    }

    /// After the handshake: send our close_notify at once, then read until the client's.
    fn close(&mut self) -> Step {
        if !self.close_sent {
            self.conn.send_close_notify();
            self.close_sent = true;
        }
        match self.write_pending() {
            Io::Done => {}
            Io::Blocked(step) => return step,
            Io::Failed(_) => return self.life.closed(false),
        }
        loop {
            match self.read_record() {
                Ok(Io::Done) => {
                    if self.peer_has_closed {
                        return self.life.closed(true);
                    }
                    // Application data is never sent by either engine; discard it.
                    let mut sink = [0u8; 4096];
                    while matches!(io::Read::read(&mut self.conn.reader(), &mut sink), Ok(n) if n > 0)
                    {
                    }
                }
                Ok(Io::Blocked(step)) => return step,
                Ok(Io::Failed(_)) | Err(_) => return self.life.closed(false),
            }
        }
    }

    /// Writes what rustls has queued.
    fn write_pending(&mut self) -> Io {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.io) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Io::Blocked(Step::Write),
                Err(e) => return Io::Failed(e),
            }
        }
        Io::Done
    }

    /// Reads one TLS record and processes it; `Err` when rustls refused it.
    fn read_record(&mut self) -> Result<Io, rustls::Error> {
        match self.conn.read_tls(&mut self.io) {
            Ok(0) => return Ok(Io::Failed(io::ErrorKind::UnexpectedEof.into())),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Io::Blocked(Step::Read)),
            Err(e) => return Ok(Io::Failed(e)),
        }
        let processed = self.conn.process_new_packets();
        if let Some(scheme) = tls::take_scheme() {
            self.sigalg = Some(scheme);
        }
        if let Some(index) = tls::take_chain() {
            self.chain = Some(index);
        }
        let state = processed?;
        self.peer_has_closed = state.peer_has_closed();
        Ok(Io::Done)
    }
}
