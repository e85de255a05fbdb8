"""Network profiles: what an emulated link does, validated from the dict a campaign gives.

Keys (the campaign file's `[network.<name>]` table, plus `name` and optionally `seed`):

  delay_ms       one-way delay in each direction, ms (RTT = 2 x delay_ms)     default 0
  jitter_ms      the delay wanders within [-jitter, +jitter] over time, ms    default 0
                 (at most delay_ms; packet order and the mean delay are kept)
  rate_mbit      bottleneck rate in each direction, Mbit/s; None = unlimited   default None
  loss           random loss probability per packet and direction, 0..1        default 0
  mtu            largest IP packet, bytes                                      default 1500
  queue_packets  drop-tail bottleneck queue, packets; None = 1000 with a rate  default None
  initcwnd       TCP initial congestion window on both routes, segments;      default None
                 None = 10 (Linux's default, set explicitly so it is recorded)
  backend        "tun" (userspace forwarder) or "netem" (veth + sch_netem)     default "tun"
                 ("veth": a plain veth pair that emulates nothing, the reference the link
                 benchmark compares the forwarder against)
  seed           seed of the loss and jitter processes                         default 1
  congestion_control  TCP congestion control of both ends                      default "cubic"
                 (Linux's default; set explicitly because a namespace inherits the host's,
                 which may be e.g. bbr, whose paced start-up the slow-start model does not
                 describe)
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from chainlab.schema import ConfigError, Int, Num, Problems, Str, fmt

# The network of scenarios that run over loopback, with no emulated link: a profile name no
# `[network.<name>]` table may take.
LOOPBACK = "loopback"

BACKENDS = ("tun", "netem", "veth")

# The bottleneck queue when a rate is set and the profile names none: 1000 packets, netem's
# default `limit` and Linux's default txqueuelen, so results compare with netem-based studies.
DEFAULT_QUEUE_PACKETS = 1000
# Linux's initial congestion window since 2.6.39 (RFC 6928).
DEFAULT_INITCWND = 10
DEFAULT_SEED = 1
DEFAULT_CONGESTION_CONTROL = "cubic"

# TCP/IPv4 header bytes per segment on these links: IPv4 20 + TCP 20 + the timestamp option
# 12 that Linux negotiates by default. MSS = MTU - this.
TCP_IP_OVERHEAD = 52

# A kernel TCP congestion control name (TCP_CA_NAME_MAX is 16 with the NUL).
CONGESTION_CONTROL_RE = re.compile(r"^[a-z0-9_]{1,15}$")
# Keys that shape a link; a "veth" profile may set none of them.
SHAPING_KEYS = ("delay_ms", "jitter_ms", "rate_mbit", "loss")

# Every key a profile may set, with its type and range: the one definition both the campaign
# loader (`[network.<name>]`) and the link's parser check against.
FIELDS = {
    "name": Str(what="a profile name"),
    "delay_ms": Num(0.0, 10_000.0),
    "jitter_ms": Num(0.0, 10_000.0),
    "rate_mbit": Num(0.001, 100_000.0),
    # Up to 0.99: a link that loses every packet carries no handshake to measure.
    "loss": Num(0.0, 0.99),
    "mtu": Int(576, 65535),
    "queue_packets": Int(1, 1_000_000),
    "initcwnd": Int(1, 1000),
    # The link takes any unsigned 64-bit seed, as a run derives them (chainlab.runner.seeds);
    # a campaign file's TOML integers stop at 2**63 - 1 (chainlab.campaign.fields).
    "seed": Int(0, 2**64 - 1),
    "congestion_control": Str(
        pattern=CONGESTION_CONTROL_RE,
        what="a kernel congestion control name of 1-15 lower-case letters, digits or '_' "
        "(e.g. cubic, reno, bbr)",
    ),
    "description": Str(),
    "backend": Str(choices=BACKENDS),
}
KEYS = tuple(FIELDS)


@dataclass(frozen=True)
class Profile:
    name: str
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    rate_mbit: float | None = None
    loss: float = 0.0
    mtu: int = 1500
    queue_packets: int | None = None
    initcwnd: int = DEFAULT_INITCWND
    backend: str = "tun"
    seed: int = DEFAULT_SEED
    congestion_control: str = DEFAULT_CONGESTION_CONTROL

    @property
    def rtt_ms(self) -> float:
        return 2 * self.delay_ms

    @property
    def mss(self) -> int:
        """TCP payload bytes per full segment on this link."""
        return self.mtu - TCP_IP_OVERHEAD

    @property
    def queue_limit(self) -> int | None:
        """The bottleneck queue in effect: None without a rate (no bottleneck, no queue)."""
        if self.rate_mbit is None:
            return None
        return self.queue_packets or DEFAULT_QUEUE_PACKETS

    def to_dict(self) -> dict:
        return asdict(self)


def check_rules(values: dict, at: str, problems: Problems) -> dict:
    """The rules between keys of checked `values` (only those present, None where bad):
    jitter at most the delay; a 'veth' profile shapes nothing. A value breaking one is
    reported and set to None."""
    jitter, delay = values.get("jitter_ms"), values.get("delay_ms", 0.0)
    if jitter is not None and delay is not None and jitter > delay:
        problems.bad(
            f"{at}.jitter_ms" if at else "jitter_ms",
            f"bad value {jitter:g}; allowed: at most delay_ms ({delay:g}): a packet "
            "cannot arrive before it was sent",
        )
        values["jitter_ms"] = None
    if values.get("backend") == "veth":
        for k in SHAPING_KEYS:
            if values.get(k):
                problems.bad(
                    f"{at}.{k}" if at else k,
                    f"bad value {fmt(values[k])}: backend 'veth' emulates nothing; allowed: "
                    "0 or unset with 'veth', or backend 'tun' or 'netem' for a shaped link",
                )
                values[k] = None
    return values


def parse_profile(spec: dict) -> Profile:
    """Validate a profile dict (see the module doc); ConfigError lists every problem, each
    naming the profile, the key, the value and what is allowed."""
    if not isinstance(spec, dict):
        raise ConfigError([f"network profile: expected a table of settings, got {fmt(spec)}"])
    name = spec.get("name") or "unnamed"
    problems = Problems(f"network profile {name!r}")
    present = {k: v for k, v in spec.items() if v is not None}  # None: the default
    values = check_rules(problems.check(FIELDS, present, ""), "", problems)
    problems.raise_if_any()
    values.pop("description", None)
    return Profile(**{**values, "name": name})
