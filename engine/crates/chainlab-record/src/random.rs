//! Seeded random bytes (`--random-seed`), for instruction counting only.
//!
//! A handshake's instruction count depends on the random bytes it draws: ML-DSA signing's
//! rejection sampling repeats its loop a number of times set by the message (the transcript,
//! whose randoms and key shares are random) and the signer's random input, so the server's
//! count moves ~40 % per handshake and a mean of ten moves from run to run. With a seed, every
//! random byte a TLS stack draws comes from a ChaCha20 stream fixed by the seed, the side and
//! the unit (a server connection's or a client attempt's `seq`): the k-th handshake of a run
//! draws the same bytes, so has the same transcript and the same count, in every run, while
//! the handshakes of one run still differ from each other as random ones do. rustls' own
//! instruction benchmarks (ci-bench) fix their randomness for the same reason.
//!
//! The bytes are predictable: a measurement mode, never a deployment. An engine installs its
//! stack's hook (the OpenSSL engine: a RAND_METHOD drawing from `fill`) and calls `enable`
//! before its stack draws anything; the serving and attempt loops call `begin_unit` before
//! each unit. Units must run one at a time (a server of one worker thread, the `handshake`
//! client), or their draws would interleave in a different order every run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Which side a stream belongs to: the two sides of one connection draw different bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server = 0,
    Client = 1,
}

/// The stream of the start-up (before the first unit: context set-up, ticket keys); no
/// unit's `seq` comes near it.
const START_UP_UNIT: u64 = u64::MAX >> 1;

struct Seeded {
    seed: u64,
    side: Side,
    stream: ChaCha20Rng,
}

static STATE: Mutex<Option<Seeded>> = Mutex::new(None);
/// Whether STATE holds a stream: lets `begin_unit` return without the lock when unseeded,
/// as every ordinary run is (it sits inside a server connection's CPU accounting).
static SEEDED: AtomicBool = AtomicBool::new(false);

fn stream(seed: u64, side: Side, unit: u64) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    // One ChaCha20 stream (nonce) per side and unit of the seed's key.
    rng.set_stream((unit << 1) | side as u64);
    rng
}

/// Draws from now on come from `seed`'s start-up stream for `side`.
pub fn enable(seed: u64, side: Side) {
    let stream = stream(seed, side, START_UP_UNIT);
    *lock() = Some(Seeded { seed, side, stream });
    SEEDED.store(true, Ordering::Release);
}

/// The unit `seq` starts: its draws come from its own stream. Nothing without a seed.
pub fn begin_unit(seq: u64) {
    if !SEEDED.load(Ordering::Acquire) {
        return;
    }
    if let Some(s) = lock().as_mut() {
        s.stream = stream(s.seed, s.side, seq);
    }
}

/// Fills `buf` from the current stream; false (and `buf` untouched) without a seed.
pub fn fill(buf: &mut [u8]) -> bool {
    match lock().as_mut() {
        Some(s) => {
            s.stream.fill_bytes(buf);
            true
        }
        None => false,
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<Seeded>> {
    // A panic while holding the lock leaves a stream mid-draw, still a valid stream.
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(seed: u64, side: Side, unit: Option<u64>) -> [u8; 48] {
        enable(seed, side);
        if let Some(u) = unit {
            begin_unit(u);
        }
        let mut buf = [0u8; 48];
        assert!(fill(&mut buf));
        buf
    }

    // One test: the state is process-wide, and tests run on parallel threads.
    #[test]
    fn each_seed_side_and_unit_has_its_own_repeatable_stream() {
        let a = draw(7, Side::Server, Some(3));
        assert_eq!(a, draw(7, Side::Server, Some(3)), "same seed, side, unit");
        assert_ne!(a, draw(7, Side::Server, Some(4)), "another unit");
        assert_ne!(a, draw(7, Side::Client, Some(3)), "the other side");
        assert_ne!(a, draw(8, Side::Server, Some(3)), "another seed");
        assert_ne!(a, draw(7, Side::Server, None), "the start-up stream");
        // A unit's stream starts afresh whatever was drawn before it.
        enable(7, Side::Server);
        let mut before = [0u8; 100];
        fill(&mut before);
        begin_unit(3);
        let mut buf = [0u8; 48];
        fill(&mut buf);
        assert_eq!(a, buf);
    }
}
