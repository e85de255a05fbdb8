//! Driving a rustls connection over a blocking socket, the way the OpenSSL engine's
//! `SSL_connect` / `SSL_accept` do: one TLS record read at a time (OpenSSL reads no further
//! ahead for TLS), so the byte counts at the end of a handshake hold the handshake's bytes
//! and nothing the peer sent after it.

use std::io::{self, Read, Write};

pub use chainlab_record::counting::Socket;
use rustls::{ConnectionCommon, SideData};

/// TLS record header: content type, legacy version, length.
const RECORD_HEADER: usize = 5;

/// The socket under a rustls connection: counting (instrumented) or bare (`--no-instrument`),
/// read at most one TLS record per `read`.
pub struct RecordReads<S> {
    inner: S,
    /// The current record's header, read whole from the socket (`header_got` of it so far:
    /// a non-blocking socket may deliver it in pieces), and how much of it the caller has
    /// taken (it is handed out before the body, in as many reads as it takes).
    header: [u8; RECORD_HEADER],
    header_got: usize,
    header_taken: usize,
    /// Bytes of the current record's body still to read.
    left: usize,
}

impl<S: Socket> RecordReads<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            header: [0; RECORD_HEADER],
            header_got: 0,
            header_taken: RECORD_HEADER,
            left: 0,
        }
    }

    pub fn socket(&self) -> &S {
        &self.inner
    }
}

impl<S: Socket> Read for RecordReads<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.header_taken == RECORD_HEADER && self.left == 0 {
            // The next record: its header, read whole, then handed out, then its body. A
            // read that would block keeps what arrived of the header for the next call.
            while self.header_got < RECORD_HEADER {
                let n = self.inner.read(&mut self.header[self.header_got..])?;
                if n == 0 {
                    if self.header_got == 0 {
                        return Ok(0);
                    }
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                self.header_got += n;
            }
            self.header_got = 0;
            self.header_taken = 0;
            self.left = u16::from_be_bytes([self.header[3], self.header[4]]) as usize;
        }
        if self.header_taken < RECORD_HEADER {
            let n = (RECORD_HEADER - self.header_taken).min(buf.len());
            buf[..n].copy_from_slice(&self.header[self.header_taken..self.header_taken + n]);
            self.header_taken += n;
            return Ok(n);
        }
        let want = self.left.min(buf.len());
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n;
        Ok(n)
    }
}

impl<S: Socket> Write for RecordReads<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }
    /// rustls writes its queued records with one vectored write: passed on whole, so a
    /// flight leaves in as few packets as over a bare socket.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.inner.write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Why driving a connection stopped.
#[derive(Debug)]
pub enum Stop {
    /// The socket failed (timeout, reset, EOF: `UnexpectedEof`).
    Io(io::Error),
    /// rustls refused what arrived (its alert, if any, was sent).
    Tls(rustls::Error),
}

/// Runs the handshake to its end: everything this side has to send for it is written
/// (the client's Finished; the server's tickets) when it returns Ok.
pub fn handshake<D: SideData, S: Socket>(
    conn: &mut ConnectionCommon<D>,
    io: &mut RecordReads<S>,
) -> Result<(), Stop> {
    while conn.is_handshaking() {
        flush(conn, io).map_err(Stop::Io)?;
        if !conn.is_handshaking() {
            break;
        }
        receive(conn, io)?;
    }
    flush(conn, io).map_err(Stop::Io)
}

/// Reads one record and processes it; an alert rustls queues in reply is sent before the
/// error returns.
fn receive<D: SideData, S: Socket>(
    conn: &mut ConnectionCommon<D>,
    io: &mut RecordReads<S>,
) -> Result<rustls::IoState, Stop> {
    match conn.read_tls(io) {
        Ok(0) => return Err(Stop::Io(io::ErrorKind::UnexpectedEof.into())),
        Ok(_) => {}
        Err(e) => return Err(Stop::Io(e)),
    }
    match conn.process_new_packets() {
        Ok(state) => Ok(state),
        Err(e) => {
            let _ = flush(conn, io);
            Err(Stop::Tls(e))
        }
    }
}

pub fn flush<D: SideData, S: Socket>(
    conn: &mut ConnectionCommon<D>,
    io: &mut RecordReads<S>,
) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(io)?;
    }
    io.flush()
}

/// Reads (processing tickets on the way) until the peer's close_notify: true when it came,
/// false for anything else that ended the connection (EOF, reset, timeout, an error).
pub fn await_close_notify<D: SideData, S: Socket>(
    conn: &mut ConnectionCommon<D>,
    io: &mut RecordReads<S>,
) -> bool {
    loop {
        match receive(conn, io) {
            Ok(state) if state.peer_has_closed() => return true,
            Ok(_) => {
                // Application data is never sent by either engine; discard what arrives.
                let mut sink = [0u8; 4096];
                while matches!(conn.reader().read(&mut sink), Ok(n) if n > 0) {}
            }
            Err(_) => return false,
        }
    }
}

/// Lingering close after a failure this side detected (its alert is on the way): stop
/// writing, then read and discard until the peer closes (bounded by the read timeout), so
/// the peer reads the alert instead of a reset.
pub fn drain<S: Socket>(io: &mut RecordReads<S>) {
    let _ = io.socket().tcp().shutdown(std::net::Shutdown::Write);
    let mut buf = [0u8; 16 * 1024];
    while matches!(io.inner.read(&mut buf), Ok(n) if n > 0) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use chainlab_record::counting::CountingStream;
    use std::net::TcpListener;
    use std::net::TcpStream;

    /// Three records sent in one write come back one record at a time (never a byte of the
    /// next with the current one), whatever the size of the caller's buffer.
    #[test]
    fn reads_stop_at_each_record_even_through_small_buffers() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut wire = vec![23, 3, 3, 0, 4, 1, 2, 3, 4]; // 9 bytes
        wire.extend([21, 3, 3, 0, 2, 9, 9]); // 7 bytes
        wire.extend([23, 3, 3, 0, 1, 7]); // 6 bytes
        let sent = wire.clone();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(&sent).unwrap();
        });
        let mut io = RecordReads::new(CountingStream::new(TcpStream::connect(addr).unwrap()));
        peer.join().unwrap();
        let read_record = |io: &mut RecordReads<CountingStream>, size: usize, len: usize| {
            let mut buf = vec![0u8; size];
            let mut got = Vec::new();
            while got.len() < len {
                let n = io.read(&mut buf).unwrap();
                assert!(n > 0, "EOF inside a record");
                got.extend_from_slice(&buf[..n]);
            }
            got
        };
        assert_eq!(read_record(&mut io, 64, 9), wire[..9]);
        assert_eq!(io.socket().counts().read, 9);
        // The second record through a 2-byte buffer: its header handed out in pieces, and
        // nothing of the third read with it.
        assert_eq!(read_record(&mut io, 2, 7), wire[9..16]);
        assert_eq!(io.socket().counts().read, 16);
        assert_eq!(read_record(&mut io, 64, 6), wire[16..]);
        assert_eq!(io.read(&mut [0u8; 8]).unwrap(), 0);
    }
}
