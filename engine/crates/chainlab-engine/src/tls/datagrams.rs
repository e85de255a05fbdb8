//! Datagram counting at the UDP socket, for QUIC: what `counting` is for TCP.
//!
//! OpenSSL's QUIC stack moves every datagram through `BIO_sendmmsg` / `BIO_recvmmsg` on the
//! socket's datagram BIO. A BIO callback on that BIO sees each call after it returns and
//! adds each datagram's UDP payload to the tally of its peer address. The server's listener
//! serves every client through one socket, so its tally is kept per peer address; every
//! client attempt uses a fresh socket (a fresh source port), so one peer address is one
//! connection. What is counted is UDP payload (QUIC packets), not UDP/IP headers.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_long};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use openssl_sys::{BIO, BIO_ADDR, BIO_MSG};

use super::unix_ns;
use crate::cpu::ThreadCpu;
use crate::ossl;

/// The smallest datagram that can open a QUIC connection: a client's first Initial is padded
/// to at least 1200 bytes (RFC 9000, Section 14.1), and OpenSSL's listener ignores shorter
/// ones from unknown peers. Shorter datagrams from unknown peers open no tally either.
pub const MIN_INITIAL_DATAGRAM: usize = 1200;

/// How long a finished connection's address is remembered, so that its stragglers (a
/// retransmitted CONNECTION_CLOSE) are not counted. A new client on the same address (the
/// kernel reuses ephemeral ports: under open-loop load, hundreds of sockets a second, a
/// port comes back within seconds) is told apart by its first datagram, an Initial packet.
const STRAGGLER_WINDOW: Duration = Duration::from_secs(2);

/// Whether a datagram starts with a QUIC v1 Initial packet: long header (0x80), fixed bit
/// (0x40), packet type 0 (bits 0x30), RFC 9000 Section 17.2.2. A client sends Initial
/// packets only at the start of its connection.
fn is_initial(first_byte: u8) -> bool {
    first_byte & 0xf0 == 0xc0
}

/// Datagrams and their UDP payload bytes, each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub datagrams_read: u64,
    pub datagrams_written: u64,
    /// Datagrams this side had sent when the latest datagram it received arrived. Read at a
    /// client's handshake completion, it is what the client had to send before the server's
    /// flight was complete (the footprint of the anti-amplification limit).
    pub written_before_last_read: u64,
}

/// When a peer's first datagram arrived: a server connection's measured span starts here.
#[derive(Debug, Clone, Copy)]
pub struct FirstRead {
    pub at: Instant,
    pub unix_ns: u128,
    /// The reading thread's CPU clock at that moment (`None`: not instrumented).
    pub cpu: Option<ThreadCpu>,
}

#[derive(Debug)]
struct Peer {
    counts: DatagramCounts,
    first_read: FirstRead,
    /// Handed to a connection by `claim_newest`.
    claimed: bool,
    /// The connection ended at this instant; later datagrams are stragglers.
    finished: Option<Instant>,
    /// Order of arrival, for `claim_newest`.
    order: u64,
}

/// Counts of one socket, per peer address. Lives behind the BIO callback's argument
/// pointer, so its state is interior-mutable (the callbacks and the engine's own reads take
/// turns on the one thread driving the QUIC stack; each borrow lasts one call).
#[derive(Debug, Default)]
pub struct Tally {
    inner: RefCell<Inner>,
    /// Client: the server's HANDSHAKE_DONE frame arrived (the handshake is confirmed; set by
    /// the callback `note_handshake_done` installs).
    handshake_done: Cell<bool>,
    /// Client: a NewSessionTicket arrived (set by the same callback).
    ticket_received: Cell<bool>,
    /// The last socket error a receive saw (ICMP port unreachable shows as ECONNREFUSED on a
    /// connected socket).
    last_error: Cell<Option<io::ErrorKind>>,
}

#[derive(Debug, Default)]
struct Inner {
    peers: HashMap<Option<SocketAddr>, Peer>,
    next_order: u64,
    /// Read the thread's CPU clock at each new peer's first datagram.
    cpu: bool,
    /// A client's socket: one peer (its server), whatever address a datagram names.
    single_peer: bool,
}

impl Tally {
    /// A listener's tally: per peer address, a new peer's first read timed (`cpu`: with the
    /// thread's CPU clock).
    pub fn server(cpu: bool) -> Box<Self> {
        Self::boxed(Inner {
            cpu,
            ..Inner::default()
        })
    }

    /// A client socket's tally: everything is its one server's.
    pub fn client() -> Box<Self> {
        Self::boxed(Inner {
            single_peer: true,
            ..Inner::default()
        })
    }

    fn boxed(inner: Inner) -> Box<Self> {
        Box::new(Self {
            inner: RefCell::new(inner),
            ..Self::default()
        })
    }

    pub fn handshake_done(&self) -> bool {
        self.handshake_done.get()
    }

    pub fn ticket_received(&self) -> bool {
        self.ticket_received.get()
    }

    pub fn last_error(&self) -> Option<io::ErrorKind> {
        self.last_error.get()
    }

    pub fn total(&self) -> DatagramCounts {
        self.inner.borrow().total()
    }

    pub fn claim_oldest(&self) -> Option<(SocketAddr, FirstRead)> {
        self.inner.borrow_mut().claim_oldest()
    }

    /// Peers that sent an Initial and were not handed to a connection yet.
    pub fn pending(&self) -> usize {
        self.inner.borrow().pending()
    }

    pub fn counts(&self, addr: SocketAddr) -> DatagramCounts {
        self.inner.borrow().counts(addr)
    }

    pub fn finish(&self, addr: SocketAddr) {
        self.inner.borrow_mut().finish(addr)
    }
}

impl Inner {
    /// Everything counted, all peers together (a client's socket has only its server).
    fn total(&self) -> DatagramCounts {
        self.peers
            .values()
            .fold(DatagramCounts::default(), |acc, p| DatagramCounts {
                bytes_read: acc.bytes_read + p.counts.bytes_read,
                bytes_written: acc.bytes_written + p.counts.bytes_written,
                datagrams_read: acc.datagrams_read + p.counts.datagrams_read,
                datagrams_written: acc.datagrams_written + p.counts.datagrams_written,
                written_before_last_read: acc.written_before_last_read
                    + p.counts.written_before_last_read,
            })
    }

    /// A server's new connection: the oldest peer not yet handed to a connection. OpenSSL's
    /// listener queues connections in the order their first Initial arrived, and the server
    /// accepts them in that order.
    fn claim_oldest(&mut self) -> Option<(SocketAddr, FirstRead)> {
        let (addr, peer) = self
            .peers
            .iter_mut()
            .filter(|(addr, p)| addr.is_some() && !p.claimed && p.finished.is_none())
            .min_by_key(|(_, p)| p.order)?;
        peer.claimed = true;
        Some(((*addr)?, peer.first_read))
    }

    fn pending(&self) -> usize {
        self.peers
            .iter()
            .filter(|(addr, p)| addr.is_some() && !p.claimed && p.finished.is_none())
            .count()
    }

    fn counts(&self, addr: SocketAddr) -> DatagramCounts {
        self.peers
            .get(&Some(addr))
            .map(|p| p.counts)
            .unwrap_or_default()
    }

    /// The connection with this peer is over: its later datagrams are stragglers for a
    /// while, then the address may open a new tally. Peers finished long ago, and unclaimed
    /// ones older than the window (a client that gave up), are forgotten.
    fn finish(&mut self, addr: SocketAddr) {
        let now = Instant::now();
        if let Some(peer) = self.peers.get_mut(&Some(addr)) {
            peer.finished = Some(now);
        }
        self.peers.retain(|_, p| match p.finished {
            Some(at) => now.duration_since(at) < STRAGGLER_WINDOW,
            None => p.claimed || now.duration_since(p.first_read.at) < STRAGGLER_WINDOW,
        });
    }

    fn read(&mut self, peer: Option<SocketAddr>, len: usize, first_byte: u8) {
        let peer = peer.filter(|_| !self.single_peer);
        let now = Instant::now();
        let opens = peer.is_some() && len >= MIN_INITIAL_DATAGRAM && is_initial(first_byte);
        let stale = self.peers.get(&peer).is_some_and(|p| {
            p.finished.is_some_and(|at| {
                // A new connection from a reused address, or the old one long gone.
                opens || now.duration_since(at) >= STRAGGLER_WINDOW
            })
        });
        if stale {
            self.peers.remove(&peer);
        }
        if !self.peers.contains_key(&peer) {
            if peer.is_some() && !opens {
                return; // cannot open a connection: not one of ours to count
            }
            let first_read = FirstRead {
                at: now,
                unix_ns: unix_ns(),
                cpu: self.cpu.then(ThreadCpu::now),
            };
            let order = self.next_order;
            self.next_order += 1;
            self.peers.insert(
                peer,
                Peer {
                    counts: DatagramCounts::default(),
                    first_read,
                    claimed: false,
                    finished: None,
                    order,
                },
            );
        }
        if let Some(p) = self.peers.get_mut(&peer) {
            if p.finished.is_some() {
                return; // a straggler of a finished connection
            }
            p.counts.bytes_read += len as u64;
            p.counts.datagrams_read += 1;
            p.counts.written_before_last_read = p.counts.datagrams_written;
        }
    }

    fn written(&mut self, peer: Option<SocketAddr>, len: usize) {
        let peer = peer.filter(|_| !self.single_peer);
        // A client writes before it reads: its server's tally opens on the first send.
        let entry = self.peers.entry(peer).or_insert_with(|| Peer {
            counts: DatagramCounts::default(),
            first_read: FirstRead {
                at: Instant::now(),
                unix_ns: unix_ns(),
                cpu: None,
            },
            claimed: true,
            finished: None,
            order: 0,
        });
        if entry.finished.is_some() {
            return;
        }
        entry.counts.bytes_written += len as u64;
        entry.counts.datagrams_written += 1;
    }
}

/// Installs the counting callback on a datagram BIO.
///
/// # Safety
/// `bio` must be a valid BIO, and `tally` must outlive every use of it (free the SSL object
/// that owns the BIO before the tally).
pub unsafe fn attach(bio: *mut BIO, tally: &Tally) {
    ossl::BIO_set_callback_arg(bio, (tally as *const Tally).cast_mut().cast::<c_char>());
    ossl::BIO_set_callback_ex(bio, Some(count_datagrams));
}

/// `HANDSHAKE_DONE` frame type (RFC 9000, Section 19.20).
const FRAME_HANDSHAKE_DONE: u8 = 0x1e;
/// `SSL3_RT_HANDSHAKE` (ssl3.h): the message callback's content type of a TLS handshake
/// message, and the NewSessionTicket message type (RFC 8446, Section 4).
const SSL3_RT_HANDSHAKE: c_int = 22;
const HANDSHAKE_NEW_SESSION_TICKET: u8 = 4;

/// Marks `tally.handshake_done` when the server's HANDSHAKE_DONE frame is received.
///
/// # Safety
/// `ssl` must be a valid QUIC connection object, and `tally` must outlive it.
pub unsafe fn note_handshake_done(ssl: *mut openssl_sys::SSL, tally: &Tally) {
    openssl_sys::SSL_ctrl(
        ssl,
        ossl::SSL_CTRL_SET_MSG_CALLBACK_ARG,
        0,
        (tally as *const Tally).cast_mut().cast(),
    );
    ossl::SSL_set_msg_callback(ssl, Some(on_frame));
}

/// The message callback: one comparison per received frame.
unsafe extern "C" fn on_frame(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const std::ffi::c_void,
    len: usize,
    _ssl: *mut openssl_sys::SSL,
    arg: *mut std::ffi::c_void,
) {
    if write_p != 0 || len == 0 || arg.is_null() {
        return;
    }
    // SAFETY: `buf` holds `len` >= 1 bytes (a QUIC frame from its type byte, or a TLS
    // handshake message from its type byte); `arg` is the tally `note_handshake_done`
    // registered.
    let first = *buf.cast::<u8>();
    let tally = &*arg.cast::<Tally>();
    if content_type == ossl::SSL3_RT_QUIC_FRAME_FULL && first == FRAME_HANDSHAKE_DONE {
        tally.handshake_done.set(true);
    } else if content_type == SSL3_RT_HANDSHAKE && first == HANDSHAKE_NEW_SESSION_TICKET {
        tally.ticket_received.set(true);
    }
}

/// The BIO callback: after each send/receive batch, add every datagram it moved. Returns
/// `ret` unchanged, so the BIO's operations behave exactly as without it.
unsafe extern "C" fn count_datagrams(
    bio: *mut BIO,
    oper: c_int,
    argp: *const c_char,
    _len: usize,
    _argi: c_int,
    _argl: c_long,
    ret: c_int,
    _processed: *mut usize,
) -> c_long {
    let is_send = oper == (ossl::BIO_CB_SENDMMSG | ossl::BIO_CB_RETURN);
    let is_recv = oper == (ossl::BIO_CB_RECVMMSG | ossl::BIO_CB_RETURN);
    if !(is_send || is_recv) || argp.is_null() {
        return ret as c_long;
    }
    let tally = ossl::BIO_get_callback_arg(bio).cast::<Tally>();
    if tally.is_null() {
        return ret as c_long;
    }
    // SAFETY: `attach` set the argument to a live Tally; only this thread touches it, and
    // no borrow of its state is held across an OpenSSL call.
    let tally = &*tally;
    // SAFETY: for the two mmsg operations `argp` is a BIO_MMSG_CB_ARGS (bio_lib.c).
    let args = &*argp.cast::<ossl::BioMmsgCbArgs>();
    if ret <= 0 {
        if is_recv {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::ConnectionRefused {
                tally.last_error.set(Some(err.kind()));
            }
        }
        return ret as c_long;
    }
    let done = if args.msgs_processed.is_null() {
        0
    } else {
        *args.msgs_processed
    };
    let Ok(mut inner) = tally.inner.try_borrow_mut() else {
        return ret as c_long;
    };
    for i in 0..done.min(args.num_msg) {
        // SAFETY: messages are `stride` bytes apart, `done` of them were moved.
        let msg = &*(args.msg.cast::<u8>().add(i * args.stride)).cast::<BIO_MSG>();
        let peer = socket_addr(msg.peer);
        if is_recv {
            let first = if msg.data.is_null() || msg.data_len == 0 {
                0
            } else {
                *msg.data.cast::<u8>()
            };
            inner.read(peer, msg.data_len, first);
        } else {
            inner.written(peer, msg.data_len);
        }
    }
    ret as c_long
}

/// A `BIO_ADDR` as a `SocketAddr`; `None` for a null or non-IP address.
///
/// # Safety
/// `addr` must be null or a valid BIO_ADDR.
pub unsafe fn socket_addr(addr: *const BIO_ADDR) -> Option<SocketAddr> {
    if addr.is_null() {
        return None;
    }
    let port = u16::from_be(ossl::BIO_ADDR_rawport(addr));
    let mut raw = [0u8; 16];
    let mut len = raw.len();
    if ossl::BIO_ADDR_rawaddress(addr, raw.as_mut_ptr().cast(), &mut len) != 1 {
        return None;
    }
    let ip = match (ossl::BIO_ADDR_family(addr), len) {
        (libc::AF_INET, 4) => IpAddr::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3])),
        (libc::AF_INET6, 16) => IpAddr::V6(Ipv6Addr::from(raw)),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// An owned `BIO_ADDR` made from a `SocketAddr` (for `SSL_set1_initial_peer_addr`).
pub struct BioAddr(*mut BIO_ADDR);

impl BioAddr {
    pub fn new(addr: SocketAddr) -> anyhow::Result<Self> {
        // SAFETY: BIO_ADDR_new returns an owned address or null; rawmake copies `where_`.
        unsafe {
            let ptr = ossl::BIO_ADDR_new();
            if ptr.is_null() {
                anyhow::bail!("BIO_ADDR_new failed");
            }
            let owned = Self(ptr);
            let port = addr.port().to_be();
            let ok = match addr.ip() {
                IpAddr::V4(ip) => {
                    let raw = ip.octets();
                    ossl::BIO_ADDR_rawmake(ptr, libc::AF_INET, raw.as_ptr().cast(), 4, port)
                }
                IpAddr::V6(ip) => {
                    let raw = ip.octets();
                    ossl::BIO_ADDR_rawmake(ptr, libc::AF_INET6, raw.as_ptr().cast(), 16, port)
                }
            };
            if ok != 1 {
                anyhow::bail!("BIO_ADDR_rawmake failed for {addr}");
            }
            Ok(owned)
        }
    }

    pub fn as_ptr(&self) -> *const BIO_ADDR {
        self.0
    }
}

impl Drop for BioAddr {
    fn drop(&mut self) {
        // SAFETY: owned since BIO_ADDR_new.
        unsafe { ossl::BIO_ADDR_free(self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First bytes of a datagram: a long-header Initial packet, and a short-header one.
    const INITIAL: u8 = 0xc3;
    const SHORT: u8 = 0x43;

    fn addr(port: u16) -> Option<SocketAddr> {
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    #[test]
    fn a_peer_opens_with_an_initial_sized_datagram_only() {
        let mut t = Inner::default();
        t.read(addr(1), 100, INITIAL);
        assert!(t.claim_oldest().is_none(), "a short datagram opens nothing");
        t.read(addr(1), 1200, INITIAL);
        t.written(addr(1), 3000);
        t.read(addr(1), 100, INITIAL);
        let (peer, _) = t.claim_oldest().expect("claimed");
        assert_eq!(Some(peer), addr(1));
        let c = t.counts(peer);
        assert_eq!((c.bytes_read, c.datagrams_read), (1300, 2));
        assert_eq!((c.bytes_written, c.datagrams_written), (3000, 1));
        assert_eq!(c.written_before_last_read, 1);
    }

    #[test]
    fn peers_are_claimed_in_arrival_order_and_stragglers_are_not_counted() {
        let mut t = Inner::default();
        t.read(addr(1), 1200, INITIAL);
        t.read(addr(2), 1250, INITIAL);
        assert_eq!(t.pending(), 2);
        let (first, _) = t.claim_oldest().unwrap();
        assert_eq!(Some(first), addr(1));
        assert!(t.claim_oldest().is_some_and(|(a, _)| Some(a) == addr(2)));
        assert_eq!(t.pending(), 0);
        t.finish(first);
        t.read(addr(1), 1200, SHORT); // a straggler of the finished connection
        assert_eq!(t.counts(first).datagrams_read, 1);
        assert!(t.claim_oldest().is_none());
        // A new client that got the same port: its Initial opens a new tally.
        t.read(addr(1), 1200, INITIAL);
        assert_eq!(t.pending(), 1);
        assert_eq!(t.claim_oldest().map(|(a, _)| Some(a)), Some(addr(1)));
        assert_eq!(t.counts(first).datagrams_read, 1);
    }

    #[test]
    fn a_client_counts_everything_under_its_one_server() {
        let mut t = Inner {
            single_peer: true,
            ..Inner::default()
        };
        t.written(addr(9), 1200);
        t.read(None, 1200, SHORT);
        t.read(addr(9), 1200, SHORT);
        t.written(None, 1200);
        t.read(addr(9), 40, SHORT);
        let c = t.total();
        assert_eq!((c.datagrams_written, c.datagrams_read), (2, 3));
        assert_eq!(c.written_before_last_read, 2);
        assert_eq!(c.bytes_read, 2440);
    }
}
