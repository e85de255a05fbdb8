//! What every stack's client does around one attempt's TLS library calls, whatever the
//! library: whether to offer the kept session (`Resumption`), the name SNI carries
//! (`server_name`) and the handshake's timed span (`handshake_span`). A stack's client keeps
//! only its library's calls: building the SSL object, setting the session and the name,
//! driving the handshake.

use std::time::Instant;

use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use crate::args::ClientArgs;
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

/// The handshake's timed span: `handshake` (the library's connect) from the end of the TCP
/// connect to its return, and the thread's CPU since `cpu_start`, into `seen`. What is
/// read after it (counts, the connection's facts, the close) is outside the span.
pub fn handshake_span<R>(
    seen: &mut ClientObserved,
    connect_end: Instant,
    cpu_start: Option<ThreadCpu>,
    handshake: impl FnOnce() -> R,
) -> R {
    let result = handshake();
    let end = Instant::now();
    seen.cpu = cpu_start.map(|c| ThreadCpu::now().since(c));
    seen.handshake_ns = Some(crate::ns_between(connect_end, end));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::test_args as args;

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
