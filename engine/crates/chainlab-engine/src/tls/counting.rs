//! Byte counting at the socket, as the OpenSSL side uses it: the stream under an
//! `SslStream` is a `chainlab_record::counting::Socket`, the shared counting adapter or, with
//! `--no-instrument`, a bare `TcpStream`.
//!
//! OpenSSL reads exactly the bytes of the record it needs (no read-ahead for TLS), so a
//! snapshot taken when `SSL_connect`/`SSL_accept` returns holds the handshake's bytes and
//! nothing the peer sent afterwards.

pub use chainlab_record::counting::{CountingStream, Counts, Socket as SocketStream};
