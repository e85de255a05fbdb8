//! Seeded pseudo-random numbers for the loss and jitter processes.
//!
//! SplitMix64 (Steele, Lea and Flood; the generator Java's `SplittableRandom` uses): 64 bits of
//! state, full period 2^64, passes BigCrush, and is a few instructions per draw. It is written
//! out here so a seed means the same packet fate on every build and platform, which a
//! dependency's "default" generator does not promise.

/// Increment of the SplitMix64 state: the 64-bit golden ratio (odd, so the period is 2^64).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Stream number `stream` of `seed`: independent streams for the loss and jitter draws of
    /// each direction, so traffic in one direction never shifts the other's pattern.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let mut mixer = SplitMix64 {
            state: seed ^ stream.wrapping_mul(GOLDEN).rotate_left(17),
        };
        SplitMix64 {
            state: mixer.next_u64(),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The `k`-th draw of `next_unit` from this stream's current state, without advancing
    /// it (SplitMix64's state after k steps is state + k x GOLDEN, so any draw is one step).
    pub fn nth_unit(&self, k: u64) -> f64 {
        let mut at = SplitMix64 {
            state: self.state.wrapping_add(k.wrapping_mul(GOLDEN)),
        };
        at.next_unit()
    }

    /// Uniform in [0, 1), with 53 bits of precision (every representable step of an f64
    /// mantissa is equally likely).
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // Reference outputs of SplitMix64 started from state 1234567.
        let mut rng = SplitMix64 { state: 1_234_567 };
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(rng.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let mut a = SplitMix64::stream(7, 1);
        let mut b = SplitMix64::stream(7, 1);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_and_seeds_differ() {
        let first = |seed, stream| SplitMix64::stream(seed, stream).next_u64();
        assert_ne!(first(7, 1), first(7, 2));
        assert_ne!(first(7, 1), first(8, 1));
        assert_ne!(first(0, 0), first(0, 1));
    }

    #[test]
    fn nth_unit_is_the_kth_sequential_draw() {
        let rng = SplitMix64::stream(3, 9);
        let mut seq = rng.clone();
        for k in 0..50 {
            assert_eq!(rng.nth_unit(k), seq.next_unit());
        }
    }

    #[test]
    fn unit_draws_are_uniform_enough() {
        let mut rng = SplitMix64::stream(42, 0);
        let n = 100_000;
        let mut below_tenth = 0;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = rng.next_unit();
            assert!((0.0..1.0).contains(&u));
            sum += u;
            if u < 0.1 {
                below_tenth += 1;
            }
        }
        // Binomial(100000, 0.1): sd ~ 95, so +-600 is > 6 sd.
        assert!((below_tenth as i64 - 10_000).abs() < 600, "{below_tenth}");
        assert!((sum / n as f64 - 0.5).abs() < 0.01);
    }
}
