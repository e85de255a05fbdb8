//! What every stack's client does around one attempt's TLS library calls, whatever the
//! library: whether to offer the kept session (`Resumption`), the name SNI carries
//! (`server_name`) and the handshake's timed span (`timed_handshake`). A stack's client keeps
//! only its library's calls: building the SSL object, setting the session and the name,
//! driving the handshake.

use std::time::Instant;

use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use crate::args::ClientArgs;
use crate::counting::Socket;
use crate::cpu::ThreadCpu;
use crate::observed::ClientObserved;

/// A connection slot's resumption: the last completed connection's session `S` (the
/// library's), offered next time with `--resume` or when the `--resume-ratio` draw says
/// so; the draws are one per attempt from `--resume-seed`, the stream every engine draws.
pub struct Resumption<S> {
    pub session: Option<S>,
    draws: Option<ChaCha8Rng>,
}

impl<S> Resumption<S> {
    pub fn new(args: &ClientArgs) -> Self {
        Resumption {
            session: None,
            draws: args
                .resume_ratio
                .map(|_| ChaCha8Rng::seed_from_u64(args.resume_seed)),
        }
    }

    /// The session to offer on the next attempt, if any. One draw per attempt, whether or
    /// not a session is kept yet: the mix is the seed's.
    pub fn next(&mut self, args: &ClientArgs) -> Option<&S> {
        let wanted = match (&mut self.draws, args.resume_ratio) {
            (Some(draws), Some(ratio)) => draws.random::<f64>() < ratio,
            _ => args.resume,
        };
        if wanted {
            self.session.as_ref()
        } else {
            None
        }
    }
}

/// The name the ClientHello's SNI carries: `--servername`, unless it is an IP address
/// (SNI carries host names only, RFC 6066; an address is checked but not sent).
pub fn server_name(args: &ClientArgs) -> Option<&str> {
    let name = args.servername.as_str();
    name.parse::<std::net::IpAddr>().is_err().then_some(name)
}

/// Where a TCP attempt's timed span stands once connect() returned.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// Wall-clock start, for the record's ordering.
    pub start_unix_ns: u128,
    /// The thread's CPU at the span's start (instrumented only).
    pub cpu_start: Option<ThreadCpu>,
    /// connect() returned: the handshake's span starts here.
    pub connect_end: Instant,
}

/// The handshake's timed span: `handshake` (the library's connect over `tls`) from the end
/// of the TCP connect (`started`) to its return, and the thread's CPU since then, into `seen`.
/// Then, outside the span, what the socket under `tls` (`socket`) counted and, where the
/// handshake failed, the peer's reply if it was no TLS. What the caller reads next (the
/// connection's facts, the close) is outside the span too.
pub fn timed_handshake<T, S: Socket + ?Sized, R, E>(
    seen: &mut ClientObserved,
    started: &Started,
    tls: &mut T,
    handshake: impl FnOnce(&mut T) -> Result<R, E>,
    socket: impl Fn(&T) -> &S,
) -> Result<R, E> {
    let result = handshake(tls);
    let end = Instant::now();
    seen.cpu = started.cpu_start.map(|c| ThreadCpu::now().since(c));
    seen.handshake_ns = Some(crate::ns_between(started.connect_end, end));
    seen.handshake_counts = socket(tls).counts();
    seen.reply_not_tls = result
        .as_ref()
        .err()
        .and_then(|_| socket(tls).reply_not_tls());
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::test_args as args;

    /// A connected loopback pair: the client's counting socket and the server's end.
    fn pair() -> (crate::counting::CountingStream, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let client = std::net::TcpStream::connect(listener.local_addr().expect("its address"))
            .expect("connecting to it");
        let (server, _) = listener.accept().expect("accepting");
        (crate::counting::CountingStream::new(client), server)
    }

    #[test]
    fn a_timed_handshake_records_its_span_counts_and_a_reply_that_is_no_tls_only_on_failure() {
        use std::io::{Read as _, Write as _};
        for fails in [false, true] {
            let (mut socket, mut server) = pair();
            server
                .write_all(b"HTTP/1.1 400 Bad Request")
                .expect("the server's reply");
            let mut seen = ClientObserved::default();
            let started = Started {
                start_unix_ns: 0,
                cpu_start: Some(ThreadCpu::now()),
                connect_end: Instant::now(),
            };
            let result = timed_handshake(
                &mut seen,
                &started,
                &mut socket,
                |s| {
                    s.write_all(&[22, 3, 1, 0, 1, 1])
                        .map_err(|e| e.to_string())?;
                    let mut head = [0u8; 8];
                    s.read_exact(&mut head).map_err(|e| e.to_string())?;
                    if fails {
                        Err("not a ServerHello".to_owned())
                    } else {
                        Ok(head.len())
                    }
                },
                |s| s,
            );
            assert_eq!(result.is_err(), fails);
            let counts = seen.handshake_counts.expect("a counting socket counts");
            assert_eq!((counts.written, counts.read), (6, 8));
            assert!(seen.handshake_ns.is_some() && seen.cpu.is_some());
            let reply = seen.reply_not_tls.as_deref();
            assert_eq!(reply.is_some(), fails, "{reply:?}");
            assert!(reply.is_none_or(|r| r.contains("HTTP/1.1")), "{reply:?}");
        }
    }

    #[test]
    fn a_ratio_draws_once_per_attempt_from_the_seed_whether_or_not_a_session_is_kept() {
        let a = args(&["--resume-ratio", "0.5", "--resume-seed", "7"]);
        let mut empty = Resumption::<u32>::new(&a);
        let mut kept = Resumption::<u32>::new(&a);
        kept.session = Some(1);
        let offered: Vec<bool> = (0..64).map(|_| kept.next(&a).is_some()).collect();
        // The empty slot draws the same stream: none offered, the mix unchanged.
        assert!((0..64).all(|_| empty.next(&a).is_none()));
        let mut again = Resumption::<u32>::new(&a);
        again.session = Some(1);
        assert_eq!(
            offered,
            (0..64)
                .map(|_| again.next(&a).is_some())
                .collect::<Vec<_>>()
        );
        assert!(offered.iter().any(|&o| o) && offered.iter().any(|&o| !o));
    }

    #[test]
    fn resume_offers_every_time_and_sni_leaves_out_an_address() {
        let mut r = Resumption::new(&args(&["--resume"]));
        assert!(r.next(&args(&["--resume"])).is_none());
        r.session = Some("s");
        assert_eq!(r.next(&args(&["--resume"])), Some(&"s"));
        assert!(Resumption::<u8>::new(&args(&[])).next(&args(&[])).is_none());
        assert_eq!(
            server_name(&args(&["--servername", "example.test"])),
            Some("example.test")
        );
        assert_eq!(server_name(&args(&["--servername", "127.0.0.1"])), None);
    }
}
