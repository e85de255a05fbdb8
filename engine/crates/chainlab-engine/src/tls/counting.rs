//! Byte counting at the socket: the stream OpenSSL reads and writes through. What it counts
//! is TLS records as they cross the socket (record headers included, TCP/IP headers not).
//!
//! OpenSSL reads exactly the bytes of the record it needs (no read-ahead for TLS), so a
//! snapshot taken when `SSL_connect`/`SSL_accept` returns holds the handshake's bytes and
//! nothing the peer sent afterwards.

use std::io::{self, Read, Write};
use std::net::TcpStream;

/// Bytes that crossed the socket so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub read: u64,
    pub written: u64,
}

/// The stream under an `SslStream`: a socket that may know how many bytes crossed it (the
/// counting adapter does, a bare `TcpStream` used with `--no-instrument` does not).
pub trait SocketStream: Read + Write {
    fn tcp(&self) -> &TcpStream;
    fn counts(&self) -> Option<Counts>;
    /// The last socket error the stream saw, if it keeps track (used to classify failures
    /// that OpenSSL reports without the underlying `io::Error`).
    fn last_error(&self) -> Option<io::ErrorKind>;
}

/// `TcpStream` wrapper counting every byte read and written.
#[derive(Debug)]
pub struct CountingStream {
    inner: TcpStream,
    counts: Counts,
    last_error: Option<io::ErrorKind>,
}

impl CountingStream {
    pub fn new(inner: TcpStream) -> Self {
        Self {
            inner,
            counts: Counts::default(),
            last_error: None,
        }
    }
}

impl Read for CountingStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.counts.read += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.last_error = Some(e.kind());
                Err(e)
            }
        }
    }
}

impl Write for CountingStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.inner.write(buf) {
            Ok(n) => {
                self.counts.written += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.last_error = Some(e.kind());
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl SocketStream for CountingStream {
    fn tcp(&self) -> &TcpStream {
        &self.inner
    }

    fn counts(&self) -> Option<Counts> {
        Some(self.counts)
    }

    fn last_error(&self) -> Option<io::ErrorKind> {
        self.last_error
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn counts_both_directions_at_the_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            s.write_all(b"0123456789").unwrap();
        });
        let mut c = CountingStream::new(TcpStream::connect(addr).unwrap());
        c.write_all(b"hello").unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        peer.join().unwrap();
        assert_eq!(got.len(), 10);
        assert_eq!(
            c.counts(),
            Some(Counts {
                read: 10,
                written: 5
            })
        );
        assert_eq!(c.last_error(), None);
    }
}
