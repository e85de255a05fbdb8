//! Byte counting at the socket: the stream a TLS library reads and writes through. What it
//! counts is TLS records as they cross the socket (record headers included, TCP/IP headers
//! not).
//!
//! It also keeps the first bytes each way, enough to read the ClientHello's random: the
//! `conn_id` both sides of a connection record, whichever TLS library handled it.

use std::io::{self, Read, Write};
use std::net::TcpStream;

/// Bytes that crossed the socket so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub read: u64,
    pub written: u64,
}

/// Bytes of the ClientHello random that make up `conn_id`: 64 random bits, so two
/// connections of one run collide with probability ~n²/2⁶⁵ (negligible for any campaign).
pub const CONN_ID_BYTES: usize = 8;

/// Where the random starts in the first TLS record of a connection: record header (type,
/// version, length: 5 bytes), handshake header (type, length: 4), legacy_version (2).
const RANDOM_OFFSET: usize = 5 + 4 + 2;
/// The bytes kept each way: up to the end of `conn_id`'s part of the random.
const HEAD: usize = RANDOM_OFFSET + CONN_ID_BYTES;
/// TLS record type handshake(22) and handshake type client_hello(1).
const RECORD_HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;

/// `conn_id` from the random bytes themselves: hex, `None` when all zero (no random).
pub fn conn_id_hex(random: &[u8]) -> Option<String> {
    if random.len() < CONN_ID_BYTES || random.iter().all(|&b| b == 0) {
        return None;
    }
    Some(
        random[..CONN_ID_BYTES]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// `TcpStream` wrapper counting every byte read and written.
#[derive(Debug)]
pub struct CountingStream {
    inner: TcpStream,
    counts: Counts,
    last_error: Option<io::ErrorKind>,
    head_read: [u8; HEAD],
    head_written: [u8; HEAD],
}

impl CountingStream {
    pub fn new(inner: TcpStream) -> Self {
        Self {
            inner,
            counts: Counts::default(),
            last_error: None,
            head_read: [0; HEAD],
            head_written: [0; HEAD],
        }
    }

    pub fn tcp(&self) -> &TcpStream {
        &self.inner
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The last socket error the stream saw (to classify failures a TLS library reports
    /// without the underlying `io::Error`).
    pub fn last_error(&self) -> Option<io::ErrorKind> {
        self.last_error
    }

    /// Forgets the last error: a non-blocking socket's "would block" is a wait, not a
    /// failure, and must not be read as the cause of a later one.
    pub fn clear_last_error(&mut self) {
        self.last_error = None;
    }

    /// `conn_id` of the ClientHello this side sent (`sent`, a client) or received (a
    /// server): `None` when the first record that crossed was no ClientHello, or too short.
    pub fn hello_conn_id(&self, sent: bool) -> Option<String> {
        let (head, seen) = if sent {
            (&self.head_written, self.counts.written)
        } else {
            (&self.head_read, self.counts.read)
        };
        if (seen as usize) < HEAD || head[0] != RECORD_HANDSHAKE || head[5] != CLIENT_HELLO {
            return None;
        }
        conn_id_hex(&head[RANDOM_OFFSET..])
    }
}

/// The socket under a TLS library: the counting adapter (instrumented), or a bare
/// `TcpStream` (`--no-instrument`) that knows nothing of what crossed it. Both engines read
/// and write through it.
pub trait Socket: Read + Write {
    fn tcp(&self) -> &TcpStream;
    fn counts(&self) -> Option<Counts>;
    /// The last socket error seen, where the socket keeps track (to classify failures a TLS
    /// library reports without the underlying `io::Error`).
    fn last_error(&self) -> Option<io::ErrorKind>;
    /// `conn_id` of the ClientHello sent (`sent`) or received, where the socket keeps it.
    fn hello_conn_id(&self, sent: bool) -> Option<String>;
    /// Where the peer's first bytes were no TLS record (a plain-HTTP port answering a
    /// ClientHello): what they were, for the failure's detail; None otherwise or unknown.
    fn reply_not_tls(&self) -> Option<String> {
        None
    }
}

impl Socket for CountingStream {
    fn tcp(&self) -> &TcpStream {
        CountingStream::tcp(self)
    }
    fn counts(&self) -> Option<Counts> {
        Some(CountingStream::counts(self))
    }
    fn last_error(&self) -> Option<io::ErrorKind> {
        CountingStream::last_error(self)
    }
    fn hello_conn_id(&self, sent: bool) -> Option<String> {
        CountingStream::hello_conn_id(self, sent)
    }
    fn reply_not_tls(&self) -> Option<String> {
        not_tls(&self.head_read, self.counts.read)
    }
}

/// What the peer's first bytes were, where they were no TLS record: a record starts with
/// its content type (20 change_cipher_spec, 21 alert, 22 handshake, 23 application_data)
/// and a 3.x version.
pub fn not_tls(head: &[u8], read: u64) -> Option<String> {
    let n = (read as usize).min(head.len());
    if n == 0 || (n >= 2 && (20..=23).contains(&head[0]) && head[1] == 3) {
        return None;
    }
    if n == 1 && (20..=23).contains(&head[0]) {
        return None;
    }
    let text: String = head[..n]
        .iter()
        .map(|&b| match b {
            0x20..=0x7e => b as char,
            _ => '.',
        })
        .collect();
    let plain_http = head[..n].starts_with(b"HTTP/");
    Some(format!(
        "the server's reply is not TLS: its first bytes are {text:?}{}",
        if plain_http {
            " (a plain-HTTP port?)"
        } else {
            ""
        }
    ))
}

impl Socket for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
    fn counts(&self) -> Option<Counts> {
        None
    }
    fn last_error(&self) -> Option<io::ErrorKind> {
        None
    }
    fn hello_conn_id(&self, _sent: bool) -> Option<String> {
        None
    }
}

/// Copies what of `data` falls within the first `HEAD` bytes of the stream (`seen` bytes
/// crossed before it).
fn keep_head(head: &mut [u8; HEAD], seen: u64, data: &[u8]) {
    let at = seen as usize;
    if at < HEAD {
        let n = (HEAD - at).min(data.len());
        head[at..at + n].copy_from_slice(&data[..n]);
    }
}

impl Read for CountingStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                keep_head(&mut self.head_read, self.counts.read, &buf[..n]);
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
                keep_head(&mut self.head_written, self.counts.written, &buf[..n]);
                self.counts.written += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.last_error = Some(e.kind());
                Err(e)
            }
        }
    }

    /// One `writev` for every buffer, as the bare socket does: a TLS stack that queues a
    /// flight as several records (rustls) sends it in as few packets as without counting.
    /// (The default would write the first buffer alone: one packet run per record, and with
    /// TCP_NODELAY more packets than the initial window holds for a flight that fits.)
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self.inner.write_vectored(bufs) {
            Ok(n) => {
                let mut left = n;
                for buf in bufs {
                    let take = left.min(buf.len());
                    keep_head(&mut self.head_written, self.counts.written, &buf[..take]);
                    self.counts.written += take as u64;
                    left -= take;
                    if left == 0 {
                        break;
                    }
                }
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
            Counts {
                read: 10,
                written: 5
            }
        );
        assert_eq!(c.last_error(), None);
        // Neither direction began with a ClientHello.
        assert_eq!(c.hello_conn_id(true), None);
        assert_eq!(c.hello_conn_id(false), None);
    }

    /// The start of a ClientHello record whose random is 1, 2, ..., 32.
    fn client_hello() -> Vec<u8> {
        let mut hello = vec![RECORD_HANDSHAKE, 3, 1, 0, 60, CLIENT_HELLO, 0, 0, 56, 3, 3];
        hello.extend(1u8..=32); // the random
        hello.extend([0u8; 20]);
        hello
    }

    /// A vectored write goes to the socket as one call with every buffer (rustls' flight),
    /// counted whole, its head kept across the buffers.
    #[test]
    fn a_vectored_write_sends_every_buffer_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let hello = client_hello();
        let total = hello.len();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; total];
            s.read_exact(&mut buf).unwrap();
            buf
        });
        let mut c = CountingStream::new(TcpStream::connect(addr).unwrap());
        let (a, rest) = hello.split_at(3);
        let (b, d) = rest.split_at(20);
        let slices = [
            io::IoSlice::new(a),
            io::IoSlice::new(b),
            io::IoSlice::new(d),
        ];
        assert_eq!(
            c.write_vectored(&slices).unwrap(),
            total,
            "one call, every buffer"
        );
        assert_eq!(peer.join().unwrap(), hello);
        assert_eq!(c.counts().written, total as u64);
        assert_eq!(c.hello_conn_id(true).as_deref(), Some("0102030405060708"));
    }

    #[test]
    fn reads_conn_id_from_a_client_hello_written_in_pieces() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let hello = client_hello();
        let sent = hello.clone();
        let peer = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut s = CountingStream::new(s);
            let mut buf = vec![0u8; sent.len()];
            s.read_exact(&mut buf).unwrap();
            s.hello_conn_id(false)
        });
        let mut c = CountingStream::new(TcpStream::connect(addr).unwrap());
        // Split inside the random: the head is assembled across writes.
        c.write_all(&hello[..14]).unwrap();
        c.write_all(&hello[14..]).unwrap();
        let expected = Some("0102030405060708".to_owned());
        assert_eq!(c.hello_conn_id(true), expected);
        assert_eq!(peer.join().unwrap(), expected);
    }
}
