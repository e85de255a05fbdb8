//! The forwarder: two TUN devices, one per namespace, and the packets between them.
//!
//! Single-threaded event loop over epoll: each TUN descriptor (a packet to admit), one
//! CLOCK_MONOTONIC timerfd (the earliest release time of a held packet) and a signalfd (stop,
//! or print statistics). Each direction has a `Shaper` deciding every packet's release time
//! and a FIFO delay line of held packets; release times in a direction never decrease (the
//! shaper keeps order), so the FIFO head is always the next packet due and no heap is needed.
//! The loop sleeps in `epoll_wait` until a packet or the timer arrives: no busy polling.
//!
//! Output on stdout, one JSON object per line: `{"event":"ready",...}` once both devices
//! exist, `{"event":"stats","final":false,...}` on SIGUSR1 and `{"event":"stats","final":true,
//! ...}` on SIGTERM, SIGINT or SIGHUP (or the parent's death with `--exit-with-parent`), after
//! which it exits 0. Held packets are discarded on exit, as a link that goes down discards them.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use serde::Serialize;
use serde_json::json;

use crate::shaper::{Params, Shaper, Stats, Verdict};
use crate::sys::{self, Epoll, Signals, Timer};
use crate::tun;

/// One side of the link: a namespace and the TUN device to create in it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub netns: String,
    pub dev: String,
}

/// Everything the forwarder needs, validated by `cli`.
#[derive(Debug, Clone)]
pub struct Config {
    pub a: Endpoint,
    pub b: Endpoint,
    pub params: Params,
    pub seed: u64,
    pub exit_with_parent: bool,
    pub realtime_priority: Option<i32>,
    /// Frames of several TCP segments (TSO/GRO) instead of one packet per segment; only
    /// without rate and loss (validated by `cli`).
    pub offload: bool,
}

/// Packets read from one device before the loop turns to the other device and the timer:
/// bounds how long a burst in one direction can hold up the other (32 reads of a few
/// microseconds each), while still amortising the epoll round trip over a burst.
const READ_BATCH: usize = 32;

/// Packets held in one direction's delay line at most. A wire of any configured delay and
/// rate holds far fewer (1 Gbit/s x 500 ms of 1500-byte packets is about 42,000); the cap only
/// bounds memory if a sender outruns an unlimited link with a long delay. Overflow drops are
/// counted (`dropped_overflow`).
const MAX_HELD: usize = 65_536;

/// Packet buffers kept for reuse, so steady forwarding does not allocate.
const POOL_MAX: usize = 1024;

/// Largest packet a TUN device can hand over (an IP packet of the largest MTU).
const MAX_PACKET: usize = 65_536;

const TOKEN_A: u64 = 0;
const TOKEN_B: u64 = 1;
const TOKEN_TIMER: u64 = 2;
const TOKEN_SIGNALS: u64 = 3;

/// Create both devices, print the ready line, forward until told to stop, print the final
/// statistics.
pub fn run(config: &Config) -> anyhow::Result<()> {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let signals = Signals::block(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1])?;
    if config.exit_with_parent && !sys::exit_with_parent(parent)? {
        // The parent died before we could ask to follow it: it can no longer use the link.
        anyhow::bail!("the parent process exited before the link started");
    }
    sys::minimal_timer_slack()?;
    let scheduler = match config.realtime_priority {
        None => json!({"policy": "other"}),
        Some(priority) => match sys::realtime(priority) {
            Ok(()) => json!({"policy": "fifo", "priority": priority}),
            Err(e) => json!({"policy": "other", "error": format!("SCHED_FIFO refused: {e}")}),
        },
    };

    let fd_a = tun::create_in_namespace(&config.a.netns, &config.a.dev, config.offload)?;
    let fd_b = tun::create_in_namespace(&config.b.netns, &config.b.dev, config.offload)?;
    let mut link = Link::new(config, &fd_a, &fd_b);
    let epoll = Epoll::new()?;
    let mut timer = Timer::new()?;
    epoll.add_readable(fd_a.as_raw_fd(), TOKEN_A)?;
    epoll.add_readable(fd_b.as_raw_fd(), TOKEN_B)?;
    epoll.add_readable(timer.raw(), TOKEN_TIMER)?;
    epoll.add_readable(signals.raw(), TOKEN_SIGNALS)?;

    let mut ready = ready_line(config);
    ready["scheduler"] = scheduler;
    emit(&ready);
    let started_ns = sys::monotonic_ns();
    let result = link.forward(&epoll, &mut timer, &signals, started_ns);
    emit(&link.stats_line(true, started_ns));
    result
}

fn ready_line(config: &Config) -> serde_json::Value {
    let p = &config.params;
    json!({
        "event": "ready",
        "pid": std::process::id(),
        "a": {"netns": config.a.netns, "dev": config.a.dev},
        "b": {"netns": config.b.netns, "dev": config.b.dev},
        "delay_ns": p.delay_ns,
        "jitter_ns": p.jitter_ns,
        "rate_bps": p.rate_bps,
        "loss": p.loss,
        "mtu": p.mtu,
        "queue_packets": p.queue_packets,
        "queue_bytes": p.queue_bytes,
        "seed": config.seed,
        "offload": config.offload,
    })
}

/// One JSON line on stdout. A closed stdout (the parent went away) is not an error worth
/// dying for: the counters are lost, the forwarding is not.
fn emit(value: &serde_json::Value) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

struct Link {
    /// [a -> b, b -> a]
    directions: [Direction; 2],
    timing: TimerLateness,
    pool: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    /// Bytes of virtio-net header in front of each frame (0 without offload).
    vnet: usize,
}

struct Direction {
    from: RawFd,
    to: RawFd,
    shaper: Shaper,
    line: VecDeque<Held>,
    /// Bytes of virtio-net header in front of each frame (offload mode), which `bytes_in`
    /// does not count and `bytes_forwarded` must not either.
    vnet: usize,
}

struct Held {
    release_ns: u64,
    packet: Vec<u8>,
}

enum Wake {
    Continue,
    Stop,
}

impl Link {
    fn new(config: &Config, fd_a: &OwnedFd, fd_b: &OwnedFd) -> Self {
        let (a, b) = (fd_a.as_raw_fd(), fd_b.as_raw_fd());
        let vnet = if config.offload { tun::VNET_HDR_LEN } else { 0 };
        let direction = |from, to, index| Direction {
            from,
            to,
            shaper: Shaper::new(config.params.clone(), config.seed, index),
            line: VecDeque::new(),
            vnet,
        };
        Link {
            directions: [direction(a, b, 0), direction(b, a, 1)],
            timing: TimerLateness::default(),
            pool: Vec::new(),
            scratch: vec![0; MAX_PACKET],
            vnet,
        }
    }

    fn forward(
        &mut self,
        epoll: &Epoll,
        timer: &mut Timer,
        signals: &Signals,
        started_ns: u64,
    ) -> anyhow::Result<()> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 4];
        loop {
            let ready = epoll.wait(&mut events)?;
            for event in &events[..ready] {
                let token = event.u64;
                match token {
                    TOKEN_A | TOKEN_B => self.receive(token as usize)?,
                    TOKEN_TIMER => {
                        if let Some(deadline) = timer.armed() {
                            self.timing
                                .record(sys::monotonic_ns().saturating_sub(deadline));
                        }
                        timer.acknowledge()?
                    }
                    _ => {
                        if let Wake::Stop = self.handle_signals(signals, started_ns)? {
                            return Ok(());
                        }
                    }
                }
            }
            let now = sys::monotonic_ns();
            for index in 0..2 {
                self.release_due(index, now);
            }
            let next = self
                .directions
                .iter()
                .filter_map(|d| d.line.front().map(|held| held.release_ns))
                .min();
            timer.set(next)?;
        }
    }

    fn handle_signals(&mut self, signals: &Signals, started_ns: u64) -> anyhow::Result<Wake> {
        while let Some(signal) = signals.next()? {
            if signal == libc::SIGUSR1 {
                emit(&self.stats_line(false, started_ns));
                self.timing.late_ns_max_window = 0;
                for d in &mut self.directions {
                    d.shaper.stats.new_window();
                }
            } else {
                return Ok(Wake::Stop);
            }
        }
        Ok(Wake::Continue)
    }

    /// Read up to READ_BATCH packets from direction `index`'s source and admit each.
    fn receive(&mut self, index: usize) -> anyhow::Result<()> {
        let direction = &mut self.directions[index];
        for _ in 0..READ_BATCH {
            let len = match sys::read(direction.from, &mut self.scratch) {
                Ok(0) => break,
                Ok(len) => len,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(anyhow::anyhow!("reading a TUN device: {e}")),
            };
            if len <= self.vnet {
                continue; // no IP packet behind the header: nothing to forward
            }
            let now = sys::monotonic_ns();
            let frame = &self.scratch[..len];
            let verdict = if self.vnet == 0 {
                direction.shaper.admit(now, len)
            } else {
                let (segment, several) = largest_segment(frame, self.vnet);
                if several {
                    direction.shaper.stats.multi_segment += 1;
                }
                direction.shaper.admit_frame(now, len - self.vnet, segment)
            };
            let Verdict::Deliver { release_ns } = verdict else {
                continue;
            };
            let packet = frame;
            if release_ns <= now && direction.line.is_empty() {
                // Due already (zero delay, unlimited rate) and nothing ahead of it: no copy,
                // no timer.
                direction.send(packet);
            } else if direction.line.len() >= MAX_HELD {
                direction.shaper.stats.dropped_overflow += 1;
            } else {
                let mut buffer = self.pool.pop().unwrap_or_default();
                buffer.clear();
                buffer.extend_from_slice(packet);
                direction.line.push_back(Held {
                    release_ns,
                    packet: buffer,
                });
            }
        }
        Ok(())
    }

    fn release_due(&mut self, index: usize, now: u64) {
        let direction = &mut self.directions[index];
        while direction
            .line
            .front()
            .is_some_and(|held| held.release_ns <= now)
        {
            let Some(held) = direction.line.pop_front() else {
                break;
            };
            direction.send(&held.packet);
            if self.pool.len() < POOL_MAX {
                self.pool.push(held.packet);
            }
        }
    }

    fn stats_line(&self, last: bool, started_ns: u64) -> serde_json::Value {
        let stats = |index: usize| -> &Stats { &self.directions[index].shaper.stats };
        json!({
            "event": "stats",
            "final": last,
            "uptime_ns": sys::monotonic_ns().saturating_sub(started_ns),
            "a_to_b": stats(0),
            "b_to_a": stats(1),
            "held": [self.directions[0].line.len(), self.directions[1].line.len()],
            "timer": self.timing,
        })
    }
}

/// The largest IP packet a frame stands for (what the MTU applies to) and whether it carries
/// more than one TCP segment. A frame is a virtio-net header (gso_type at byte 1, gso_size at
/// bytes 4-5, native byte order) and an IP packet; a segment is the IP and TCP headers plus at
/// most gso_size bytes of payload.
fn largest_segment(frame: &[u8], vnet: usize) -> (usize, bool) {
    let ip = &frame[vnet..];
    let gso_type = frame[1];
    let gso_size = u16::from_ne_bytes([frame[4], frame[5]]) as usize;
    if gso_type == 0 || gso_size == 0 {
        return (ip.len(), false);
    }
    let headers = ip_tcp_header_len(ip).unwrap_or(0);
    let segment = (headers + gso_size).min(ip.len());
    (segment, ip.len() > segment)
}

/// Bytes of the IPv4 or IPv6 header plus the TCP header of `ip`, if it is TCP and complete.
fn ip_tcp_header_len(ip: &[u8]) -> Option<usize> {
    let (ip_len, protocol) = match ip.first()? >> 4 {
        4 => (usize::from(ip[0] & 0x0f) * 4, *ip.get(9)?),
        6 => (40, *ip.get(6)?),
        _ => return None,
    };
    const TCP: u8 = 6;
    if protocol != TCP {
        return None;
    }
    let data_offset = usize::from(ip.get(ip_len + 12)? >> 4) * 4;
    Some(ip_len + data_offset)
}

/// How late the timer fired after the deadline it was armed for: the link's own timing
/// error, added to every delayed packet released by that wake-up.
#[derive(Debug, Default, Serialize)]
struct TimerLateness {
    wakeups: u64,
    late_ns_total: u64,
    late_ns_max: u64,
    /// The largest since the last statistics line (SIGUSR1): one scenario's, on a link that
    /// serves several one after another.
    late_ns_max_window: u64,
}

impl TimerLateness {
    fn record(&mut self, late_ns: u64) {
        self.wakeups += 1;
        self.late_ns_total += late_ns;
        self.late_ns_max = self.late_ns_max.max(late_ns);
        self.late_ns_max_window = self.late_ns_max_window.max(late_ns);
    }
}

impl Direction {
    /// Hand a packet to the destination device. A write that fails (the device is down, the
    /// kernel refused the packet) is that packet's loss, counted, not the link's end.
    fn send(&mut self, packet: &[u8]) {
        match sys::write(self.to, packet) {
            Ok(_) => {
                self.shaper.stats.forwarded += 1;
                // The IP packet's bytes, as `bytes_in` counts them (no virtio-net header).
                self.shaper.stats.bytes_forwarded += (packet.len() - self.vnet) as u64;
            }
            Err(_) => self.shaper.stats.write_errors += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A virtio-net header and an IPv4/TCP packet with `payload` bytes behind 20 + 32 bytes
    /// of headers (TCP with timestamps).
    fn frame(gso_type: u8, gso_size: u16, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; tun::VNET_HDR_LEN];
        f[1] = gso_type;
        f[4..6].copy_from_slice(&gso_size.to_ne_bytes());
        let mut ip = vec![0u8; 20 + 32 + payload];
        ip[0] = 0x45; // IPv4, 5 words
        ip[9] = 6; // TCP
        ip[20 + 12] = 8 << 4; // data offset: 8 words
        f.extend(ip);
        f
    }

    #[test]
    fn a_plain_frame_is_one_segment() {
        let f = frame(0, 0, 1448);
        assert_eq!(largest_segment(&f, tun::VNET_HDR_LEN), (1500, false));
    }

    #[test]
    fn a_tso_frame_is_measured_by_its_segments() {
        // GSO TCPv4 (1), 1448-byte segments, 10 of them.
        let f = frame(1, 1448, 14_480);
        assert_eq!(largest_segment(&f, tun::VNET_HDR_LEN), (1500, true));
        // A segment above a 1400-byte MTU is caught even inside a frame.
        let f = frame(1, 1400, 2800);
        assert_eq!(largest_segment(&f, tun::VNET_HDR_LEN), (1452, true));
    }

    #[test]
    fn headers_of_non_tcp_or_truncated_packets_are_unknown() {
        assert_eq!(ip_tcp_header_len(&[0x45, 0, 0, 0, 0, 0, 0, 0, 0, 17]), None);
        assert_eq!(ip_tcp_header_len(&[0x45]), None);
        assert_eq!(ip_tcp_header_len(&[]), None);
    }
}
