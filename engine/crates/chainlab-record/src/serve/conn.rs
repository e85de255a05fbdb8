//! What a stack gives the scaffold: its TLS server (`Stack`) and each connection as a state
//! machine (`Conn`) that says what it waits for after a step (`Step`).

use std::net::TcpStream;

use crate::counting::CountingStream;
use crate::failure::Failure;
use crate::observed::ServerObserved;

/// What a connection waits for after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Bytes from the peer (the socket would block on a read).
    Read,
    /// Room in the socket's send buffer.
    Write,
    /// The handshake just ended (successfully); advance again for the close.
    Handshaken,
    /// The connection is over (closed, failed or the peer went away): `finish` it.
    Closed,
}

/// A stack's TLS server: opens a connection over each accepted socket.
pub trait Stack: Sync {
    type Conn: Conn;
    /// A server connection over `socket` (connected; blocking or not, as the model set it).
    fn open(&self, socket: CountingStream) -> anyhow::Result<Self::Conn>;
}

/// One TLS server connection as a state machine: handshake, then our close_notify, then the
/// peer's.
pub trait Conn {
    /// Advances as far as the socket allows: to a blocked read or write, to the end of the
    /// handshake, or to the end of the connection. On a blocking socket a `Read`/`Write`
    /// means its timeout expired.
    fn advance(&mut self) -> Step;
    /// Stops the connection where it stands (a peer that stalled past `--io-timeout-ms`, or
    /// a stopping server): during the handshake `failure` is its outcome; after it, the
    /// peer's close_notify simply never came.
    fn interrupt(&mut self, failure: Failure);
    fn socket(&self) -> &TcpStream;
    /// What the connection observed; the socket is closed when this returns.
    fn finish(self) -> anyhow::Result<ServerObserved>;
}

/// The `advance`, `interrupt` and `socket` of a libssl stack's `Conn` (OpenSSL's, BoringSSL's:
/// the rust-openssl family, one fork apart), inside its `impl Conn`: the connection has a
/// `tls` stream over a `CountingStream`, a `life` (`Lifecycle`), a `client_auth` flag and a
/// `close()`; `|$conn| $accept` takes one handshake step (`|c| c.tls.accept()`). The caller's
/// `ErrorCode`, `Side`, `Step`, `Phase` and `errors::handshake_failure` are the stack's.
#[macro_export]
macro_rules! libssl_server_steps {
    (|$conn:ident| $accept:expr) => {
        fn advance(&mut self) -> Step {
            // What an earlier step's socket said is no cause of what this step meets.
            self.tls.get_mut().clear_last_error();
            match self.life.phase() {
                Phase::Handshake => {
                    let $conn = &mut *self;
                    match $accept {
                        Ok(()) => self.life.handshaken(self.tls.get_ref().counts()),
                        Err(e) if e.code() == ErrorCode::WANT_READ => Step::Read,
                        Err(e) if e.code() == ErrorCode::WANT_WRITE => Step::Write,
                        Err(e) => {
                            let side = Side::Server {
                                client_auth: self.client_auth,
                            };
                            let last = self.tls.get_ref().last_error();
                            let failure = errors::handshake_failure(&e, self.tls.ssl(), last, side);
                            self.life.fail(failure)
                        }
                    }
                }
                Phase::Closing => self.close(),
                Phase::Done => Step::Closed,
            }
        }

        fn interrupt(&mut self, failure: Failure) {
            self.life.interrupt(failure);
        }

        fn socket(&self) -> &std::net::TcpStream {
            self.tls.get_ref().tcp()
        }
    };
}
