//! Command line of `chainlab-link`, and its validation into a forwarder `Config`. Every
//! rejected value gives one line naming the option, the value and what is allowed.

use clap::Parser;

use crate::forward::{Config, Endpoint};
use crate::shaper::Params;
use crate::tun;

/// Emulated link between two network namespaces: a TUN device in each, and a userspace
/// forwarder between them that delays, paces, queues and drops packets.
#[derive(Debug, Parser)]
#[command(name = "chainlab-link", version)]
pub struct Cli {
    /// Namespace of side A (a name under /run/netns, or a path to a namespace file).
    #[arg(long)]
    pub a_netns: String,
    /// TUN device to create in side A's namespace.
    #[arg(long, default_value = "chainlab0")]
    pub a_dev: String,
    /// Namespace of side B.
    #[arg(long)]
    pub b_netns: String,
    /// TUN device to create in side B's namespace.
    #[arg(long, default_value = "chainlab0")]
    pub b_dev: String,
    /// One-way delay in each direction, milliseconds (RTT = 2 x delay).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub delay_ms: f64,
    /// Jitter, milliseconds: the delay wanders within [-jitter, +jitter] over time (a
    /// piecewise-linear curve through random points 4 x jitter apart), keeping packet order
    /// and the mean delay; at most the delay.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub jitter_ms: f64,
    /// Bottleneck rate in each direction, Mbit/s (10^6 bits); omit for unlimited.
    #[arg(long, allow_negative_numbers = true)]
    pub rate_mbit: Option<f64>,
    /// Random loss probability per packet in each direction, a fraction in [0, 1].
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub loss: f64,
    /// Largest IP packet carried, bytes (68-65535); larger packets are dropped.
    #[arg(long, default_value_t = 1500)]
    pub mtu: usize,
    /// Bottleneck queue limit in packets (drop-tail); needs --rate-mbit.
    #[arg(long)]
    pub queue_packets: Option<usize>,
    /// Bottleneck queue limit in bytes (drop-tail); needs --rate-mbit.
    #[arg(long)]
    pub queue_bytes: Option<usize>,
    /// Seed of the loss and jitter processes (same seed, same packet fates).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop (as on SIGTERM) when the process that started the link exits.
    #[arg(long)]
    pub exit_with_parent: bool,
    /// Run under SCHED_FIFO at this priority (1-99), so timer wake-ups are not queued behind
    /// other work on a busy machine; if the kernel refuses, the link runs at normal priority
    /// and says so in its ready line.
    #[arg(long)]
    pub realtime_priority: Option<i32>,
    /// Pass TCP frames of up to 64 KB (TSO/GRO, as a veth pair does) instead of one packet per
    /// segment; only without --rate-mbit and --loss, where a frame's segments would all be
    /// released at the same instant anyway.
    #[arg(long)]
    pub offload: bool,
}

/// Smallest MTU IPv4 allows (RFC 791).
const MIN_MTU: usize = 68;
/// Largest IP packet length.
const MAX_MTU: usize = 65_535;
/// Longest delay accepted: a minute; far above any path on Earth, low enough that release
/// times stay far from overflow.
const MAX_DELAY_MS: f64 = 60_000.0;

impl Cli {
    pub fn into_config(self) -> Result<Config, String> {
        let delay_ns = milliseconds("--delay-ms", self.delay_ms)?;
        let jitter_ns = milliseconds("--jitter-ms", self.jitter_ms)?;
        if jitter_ns > delay_ns {
            return Err(format!(
                "--jitter-ms {}: must not exceed --delay-ms ({}), or packets would arrive before they were sent",
                self.jitter_ms, self.delay_ms
            ));
        }
        let rate_bps = match self.rate_mbit {
            None => None,
            Some(mbit) if mbit.is_finite() && mbit > 0.0 && mbit <= 1e6 => {
                Some((mbit * 1e6).round() as u64)
            }
            Some(mbit) => {
                return Err(format!(
                    "--rate-mbit {mbit}: must be a number of Mbit/s in (0, 1000000]; omit it for unlimited"
                ))
            }
        };
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!(
                "--loss {}: must be a fraction in [0, 1] (0.01 is 1 %)",
                self.loss
            ));
        }
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) {
            return Err(format!(
                "--mtu {}: must be in {MIN_MTU}-{MAX_MTU} bytes",
                self.mtu
            ));
        }
        for (option, value) in [
            ("--queue-packets", self.queue_packets),
            ("--queue-bytes", self.queue_bytes),
        ] {
            match value {
                Some(0) => return Err(format!("{option} 0: must be at least 1")),
                Some(_) if rate_bps.is_none() => {
                    return Err(format!(
                        "{option}: a queue builds only behind a bottleneck; give --rate-mbit too"
                    ))
                }
                _ => {}
            }
        }
        if let Some(bytes) = self.queue_bytes {
            if bytes < self.mtu {
                return Err(format!(
                    "--queue-bytes {bytes}: must hold at least one packet of --mtu {}",
                    self.mtu
                ));
            }
        }
        for (option, dev) in [("--a-dev", &self.a_dev), ("--b-dev", &self.b_dev)] {
            tun::check_dev_name(dev).map_err(|why| format!("{option}: {why}"))?;
        }
        for (option, netns) in [("--a-netns", &self.a_netns), ("--b-netns", &self.b_netns)] {
            if netns.is_empty() {
                return Err(format!("{option}: must name a network namespace"));
            }
        }
        if let Some(priority) = self.realtime_priority {
            if !(1..=99).contains(&priority) {
                return Err(format!(
                    "--realtime-priority {priority}: must be a SCHED_FIFO priority in 1-99"
                ));
            }
        }
        if self.offload && (rate_bps.is_some() || self.loss > 0.0) {
            return Err(
                "--offload: a frame of several segments can neither be paced nor lose one \
                 segment; allowed only without --rate-mbit and with --loss 0"
                    .to_string(),
            );
        }
        if self.a_netns == self.b_netns {
            return Err(format!(
                "--a-netns and --b-netns are both {:?}: the two sides must be different namespaces",
                self.a_netns
            ));
        }
        Ok(Config {
            a: Endpoint {
                netns: self.a_netns,
                dev: self.a_dev,
            },
            b: Endpoint {
                netns: self.b_netns,
                dev: self.b_dev,
            },
            params: Params {
                delay_ns,
                jitter_ns,
                rate_bps,
                loss: self.loss,
                mtu: self.mtu,
                queue_packets: self.queue_packets,
                queue_bytes: self.queue_bytes,
            },
            seed: self.seed,
            exit_with_parent: self.exit_with_parent,
            realtime_priority: self.realtime_priority,
            offload: self.offload,
        })
    }
}

fn milliseconds(option: &str, ms: f64) -> Result<u64, String> {
    if !ms.is_finite() || !(0.0..=MAX_DELAY_MS).contains(&ms) {
        return Err(format!(
            "{option} {ms}: must be a number of milliseconds in [0, {MAX_DELAY_MS}]"
        ));
    }
    Ok((ms * 1e6).round() as u64)
}
