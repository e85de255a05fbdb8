//! Byte counting at the socket, as the OpenSSL side uses it: the stream under an
//! `SslStream` is either the shared counting adapter (`chainlab_record::counting`) or, with
//! `--no-instrument`, a bare `TcpStream`.
//!
//! OpenSSL reads exactly the bytes of the record it needs (no read-ahead for TLS), so a
//! snapshot taken when `SSL_connect`/`SSL_accept` returns holds the handshake's bytes and
//! nothing the peer sent afterwards.

use std::io::{self, Read, Write};
use std::net::TcpStream;

pub use chainlab_record::counting::{CountingStream, Counts};

/// The stream under an `SslStream`: a socket that may know how many bytes crossed it (the
/// counting adapter does, a bare `TcpStream` used with `--no-instrument` does not).
pub trait SocketStream: Read + Write {
    fn tcp(&self) -> &TcpStream;
    fn counts(&self) -> Option<Counts>;
    /// The last socket error the stream saw, if it keeps track (used to classify failures
    /// that OpenSSL reports without the underlying `io::Error`).
    fn last_error(&self) -> Option<io::ErrorKind>;
}

impl SocketStream for CountingStream {
    fn tcp(&self) -> &TcpStream {
        CountingStream::tcp(self)
    }

    fn counts(&self) -> Option<Counts> {
        Some(CountingStream::counts(self))
    }

    fn last_error(&self) -> Option<io::ErrorKind> {
        CountingStream::last_error(self)
    }
}

impl SocketStream for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }

    fn counts(&self) -> Option<Counts> {
        None
    }

    fn last_error(&self) -> Option<io::ErrorKind> {
        None
    }
}
