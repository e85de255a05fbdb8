//! One direction of the emulated link, as a pure function of packet arrival times.
//!
//! A packet that arrives at time `t` with `len` bytes (its IP packet, as read from the TUN
//! device) goes through, in this order:
//!
//! 1. the MTU check: larger than the link's MTU is dropped (`oversize`);
//! 2. the bottleneck queue: if the packets (or bytes) admitted to the bottleneck and not yet
//!    fully serialized reach the queue limit, the packet is dropped at the tail (`queue`);
//! 3. serialization at the configured rate: it leaves the bottleneck at
//!    `depart = max(t, previous depart) + len * 8 / rate` (at once when the rate is unlimited);
//! 4. random loss on the wire: with probability `loss` it is lost (`loss`), after having used
//!    its share of the bottleneck, as a corrupted frame on a real wire does;
//! 5. propagation: it is released to the other side at `depart + delay + wander(depart)`.
//!
//! Jitter is a delay that wanders within [-jitter, +jitter] over time: `wander` is the
//! piecewise-linear curve through independent uniform points in [-jitter, +jitter] spaced
//! `JITTER_PERIODS` x jitter apart. It changes by at most half the time that passes, so a
//! later packet is never released before an earlier one (a link keeps order, as a queue
//! does), and its mean is 0, so the mean delay is the configured one whatever the traffic.
//! (Independent per-packet draws cannot do both: keeping order would hold each packet behind
//! the slowest before it, raising the mean delay of every burst.)
//!
//! Every arriving packet consumes exactly one loss draw from its direction's seeded stream,
//! whatever happens to it, so whether the n-th packet in a direction is lost depends on the
//! seed and n alone; the wander's points depend on the seed and their index alone.

use std::collections::VecDeque;

use serde::Serialize;

use crate::rng::SplitMix64;

/// What the link does to packets in one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// One-way propagation delay.
    pub delay_ns: u64,
    /// Bound of the delay's wander around `delay_ns` (at most `delay_ns`).
    pub jitter_ns: u64,
    /// Bottleneck rate in bits per second; `None` is unlimited.
    pub rate_bps: Option<u64>,
    /// Probability that a packet is lost, in [0, 1].
    pub loss: f64,
    /// Largest IP packet the link carries, bytes.
    pub mtu: usize,
    /// Drop-tail limit of the bottleneck queue in packets (only with a rate).
    pub queue_packets: Option<usize>,
    /// Drop-tail limit of the bottleneck queue in bytes (only with a rate).
    pub queue_bytes: Option<usize>,
}

impl Params {
    /// A link that emulates nothing: no delay, no rate limit, no loss, a 1500-byte MTU.
    /// Tests and callers start from it and set what they shape.
    pub fn unshaped() -> Self {
        Params {
            delay_ns: 0,
            jitter_ns: 0,
            rate_bps: None,
            loss: 0.0,
            mtu: 1500,
            queue_packets: None,
            queue_bytes: None,
        }
    }
}

/// What happens to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Hand it to the other side at this time (CLOCK_MONOTONIC ns).
    Deliver {
        release_ns: u64,
    },
    Drop(DropReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    Oversize,
    QueueFull,
    Loss,
}

/// Counters of one direction. `forwarded`, `write_errors`, `dropped_overflow` and
/// `multi_segment` are kept by the forwarder, which owns the delay line; the rest by the
/// shaper. In offload mode a "packet" is a frame of one or more TCP segments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub packets_in: u64,
    /// Frames that carried more than one segment (offload mode only).
    pub multi_segment: u64,
    pub bytes_in: u64,
    pub forwarded: u64,
    pub bytes_forwarded: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub dropped_oversize: u64,
    pub dropped_overflow: u64,
    pub write_errors: u64,
    /// Time admitted packets waited for the bottleneck before their serialization began
    /// (rate-limited profiles only): the queueing delay the link added, total and largest.
    pub queue_wait_ns_total: u64,
    pub queue_wait_ns_max: u64,
    /// The largest since the last statistics line (`Stats::new_window`): one scenario's, on
    /// a link that serves several one after another.
    pub queue_wait_ns_max_window: u64,
}

impl Stats {
    /// A statistics line was printed: the window's maxima start again.
    pub fn new_window(&mut self) {
        self.queue_wait_ns_max_window = 0;
    }
}

/// One direction's state.
#[derive(Debug, Clone)]
pub struct Shaper {
    params: Params,
    loss_rng: SplitMix64,
    wander: Wander,
    /// When the bottleneck finishes serializing the last admitted packet.
    busy_until_ns: u64,
    /// Packets admitted to the bottleneck and not fully serialized: (depart_ns, len).
    backlog: VecDeque<(u64, usize)>,
    backlog_bytes: usize,
    /// Release time of the previous delivered packet (order keeping).
    last_release_ns: u64,
    pub stats: Stats,
}

impl Shaper {
    /// `direction` (0 or 1) selects the random streams, so both directions of a link with one
    /// seed are independent.
    pub fn new(params: Params, seed: u64, direction: u64) -> Self {
        Shaper {
            wander: Wander::new(params.jitter_ns, seed, 2 * direction + 1),
            params,
            loss_rng: SplitMix64::stream(seed, 2 * direction),
            busy_until_ns: 0,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            last_release_ns: 0,
            stats: Stats::default(),
        }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Decide the fate of a packet of `len` bytes arriving at `now_ns`. Arrival times must not
    /// decrease from call to call (they come from CLOCK_MONOTONIC).
    pub fn admit(&mut self, now_ns: u64, len: usize) -> Verdict {
        self.admit_frame(now_ns, len, len)
    }

    /// `admit` for a frame that may carry several TCP segments (offload mode): `len` bytes in
    /// all, none of its segments larger than `largest_segment` (what the MTU applies to).
    pub fn admit_frame(&mut self, now_ns: u64, len: usize, largest_segment: usize) -> Verdict {
        self.stats.packets_in += 1;
        self.stats.bytes_in += len as u64;
        let loss_draw = self.loss_rng.next_unit();

        if largest_segment > self.params.mtu {
            self.stats.dropped_oversize += 1;
            return Verdict::Drop(DropReason::Oversize);
        }
        let depart_ns = match self.params.rate_bps {
            None => now_ns,
            Some(rate_bps) => {
                self.expire_backlog(now_ns);
                if self.queue_full(len) {
                    self.stats.dropped_queue += 1;
                    return Verdict::Drop(DropReason::QueueFull);
                }
                let start = now_ns.max(self.busy_until_ns);
                let wait = start - now_ns;
                self.stats.queue_wait_ns_total += wait;
                self.stats.queue_wait_ns_max = self.stats.queue_wait_ns_max.max(wait);
                self.stats.queue_wait_ns_max_window = self.stats.queue_wait_ns_max_window.max(wait);
                let depart = start + serialization_ns(len, rate_bps);
                self.busy_until_ns = depart;
                self.backlog.push_back((depart, len));
                self.backlog_bytes += len;
                depart
            }
        };
        // `loss < 1.0` draws are in [0, 1), so loss = 0 never drops and loss = 1 always does.
        if loss_draw < self.params.loss {
            self.stats.dropped_loss += 1;
            return Verdict::Drop(DropReason::Loss);
        }
        // |offset| <= jitter_ns <= delay_ns (validated by the CLI): never before departure.
        let offset = self.wander.offset_ns(depart_ns);
        let arrival_ns = (depart_ns + self.params.delay_ns)
            .saturating_add_signed(offset)
            .max(depart_ns);
        let release_ns = arrival_ns.max(self.last_release_ns);
        self.last_release_ns = release_ns;
        Verdict::Deliver { release_ns }
    }

    /// Packets currently held by the bottleneck at `now_ns` (waiting or being serialized).
    pub fn queued_packets(&mut self, now_ns: u64) -> usize {
        self.expire_backlog(now_ns);
        self.backlog.len()
    }

    fn expire_backlog(&mut self, now_ns: u64) {
        while let Some(&(depart, len)) = self.backlog.front() {
            if depart > now_ns {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= len;
        }
    }

    fn queue_full(&self, len: usize) -> bool {
        let packets_full = self
            .params
            .queue_packets
            .is_some_and(|limit| self.backlog.len() >= limit);
        let bytes_full = self
            .params
            .queue_bytes
            .is_some_and(|limit| self.backlog_bytes + len > limit);
        packets_full || bytes_full
    }
}

/// Spacing of the wander's points, in multiples of the jitter bound: the curve's slope is at
/// most 2 x jitter / spacing = 1/2, below the 1 that would let packets overtake each other.
const JITTER_PERIODS: u64 = 4;

/// The delay's wander over time (see the module doc): a piecewise-linear curve through
/// uniform points in [-bound, +bound], point k at `origin + k * period`.
#[derive(Debug, Clone)]
struct Wander {
    bound_ns: u64,
    period_ns: u64,
    points: SplitMix64,
    /// Time of point 0: the first packet's departure.
    origin_ns: Option<u64>,
}

impl Wander {
    fn new(bound_ns: u64, seed: u64, stream: u64) -> Self {
        Wander {
            bound_ns,
            period_ns: bound_ns * JITTER_PERIODS,
            points: SplitMix64::stream(seed, stream),
            origin_ns: None,
        }
    }

    fn offset_ns(&mut self, t_ns: u64) -> i64 {
        if self.bound_ns == 0 {
            return 0;
        }
        let origin = *self.origin_ns.get_or_insert(t_ns);
        let since = t_ns.saturating_sub(origin);
        let k = since / self.period_ns;
        let fraction = (since % self.period_ns) as f64 / self.period_ns as f64;
        let (a, b) = (self.point(k), self.point(k + 1));
        (a + (b - a) * fraction).round() as i64
    }

    /// Point k, from the k-th draw of this stream (random access: no state to advance
    /// through an idle gap).
    fn point(&self, k: u64) -> f64 {
        self.bound_ns as f64 * (2.0 * self.points.nth_unit(k) - 1.0)
    }
}

/// Time to put `len` bytes on a wire of `rate_bps`, rounded up to a whole nanosecond (the
/// rounding adds under 1 ns per packet: below anything the timers resolve).
pub fn serialization_ns(len: usize, rate_bps: u64) -> u64 {
    let bits = len as u128 * 8 * 1_000_000_000;
    bits.div_ceil(rate_bps as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Params {
        Params::unshaped()
    }

    #[test]
    fn a_plain_link_releases_at_once() {
        let mut s = Shaper::new(plain(), 1, 0);
        assert_eq!(s.admit(1000, 100), Verdict::Deliver { release_ns: 1000 });
        assert_eq!(s.admit(1000, 1500), Verdict::Deliver { release_ns: 1000 });
    }

    #[test]
    fn oversize_packets_are_dropped() {
        let mut s = Shaper::new(plain(), 1, 0);
        assert_eq!(s.admit(0, 1501), Verdict::Drop(DropReason::Oversize));
        assert_eq!(s.stats.dropped_oversize, 1);
    }

    #[test]
    fn a_new_window_starts_the_largest_queue_wait_again_and_keeps_the_whole_links() {
        let params = Params {
            rate_bps: Some(10_000_000),
            ..plain()
        };
        let mut s = Shaper::new(params, 1, 0);
        // Two 1500-byte packets at once at 10 Mbit/s: the second waits 1.2 ms.
        s.admit(0, 1500);
        s.admit(0, 1500);
        assert_eq!(s.stats.queue_wait_ns_max, 1_200_000);
        assert_eq!(s.stats.queue_wait_ns_max_window, 1_200_000);
        s.stats.new_window();
        // Later, one packet behind another: 0.8 ms of the first's 1.2 left.
        s.admit(10_000_000, 1500);
        s.admit(10_400_000, 1500);
        assert_eq!(s.stats.queue_wait_ns_max_window, 800_000);
        assert_eq!(s.stats.queue_wait_ns_max, 1_200_000);
    }

    #[test]
    fn serialization_time_is_exact_for_round_numbers() {
        // 1500 bytes at 10 Mbit/s: 12000 bits / 1e7 = 1.2 ms.
        assert_eq!(serialization_ns(1500, 10_000_000), 1_200_000);
        assert_eq!(serialization_ns(1, 3), 2_666_666_667);
    }
}
