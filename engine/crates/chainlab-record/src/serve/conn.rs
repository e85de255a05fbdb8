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
