//! Driving a rustls connection over a blocking socket, the way the OpenSSL engine's
//! `SSL_connect` / `SSL_accept` do: one TLS record read at a time (OpenSSL reads no further
//! ahead for TLS), so the byte counts at the end of a handshake hold the handshake's bytes
//! and nothing the peer sent after it.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use chainlab_record::counting::{CountingStream, Counts};
use rustls::{ConnectionCommon, SideData};

/// TLS record header: content type, legacy version, length.
const RECORD_HEADER: usize = 5;

/// The socket under a rustls connection: counting (instrumented) or bare (`--no-instrument`),
/// read at most one TLS record per `read`.
pub struct RecordReads<S> {
    inner: S,
    /// Bytes of the current record's body still to read (0: a header is next).
    left: usize,
}

/// What a socket says about itself, whether it counts or not.
pub trait Socket: Read + Write {
    fn tcp(&self) -> &TcpStream;
    fn counts(&self) -> Option<Counts>;
    /// `conn_id` of the ClientHello sent (`sent`) or received, where the socket keeps it.
    fn hello_conn_id(&self, sent: bool) -> Option<String>;
}

impl Socket for CountingStream {
    fn tcp(&self) -> &TcpStream {
        CountingStream::tcp(self)
    }
    fn counts(&self) -> Option<Counts> {
        Some(CountingStream::counts(self))
    }
    fn hello_conn_id(&self, sent: bool) -> Option<String> {
        CountingStream::hello_conn_id(self, sent)
    }
}

impl Socket for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
    fn counts(&self) -> Option<Counts> {
        None
    }
    fn hello_conn_id(&self, _sent: bool) -> Option<String> {
        None
    }
}

impl<S: Socket> RecordReads<S> {
    pub fn new(inner: S) -> Self {
        Self { inner, left: 0 }
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
        if self.left == 0 {
            // A header, read whole (rustls' buffer always has room for one): then its body.
            if buf.len() < RECORD_HEADER {
                return self.inner.read(buf);
            }
            let mut got = 0;
            while got < RECORD_HEADER {
                let n = self.inner.read(&mut buf[got..RECORD_HEADER])?;
                if n == 0 {
                    if got == 0 {
                        return Ok(0);
                    }
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                got += n;
            }
            self.left = u16::from_be_bytes([buf[3], buf[4]]) as usize;
            return Ok(RECORD_HEADER);
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
