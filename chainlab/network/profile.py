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

import math
import re
from dataclasses import asdict, dataclass

from chainlab.errors import ChainlabError

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

KEYS = (  # every key a profile may set (the campaign loader validates against it)
    "name",
    "delay_ms",
    "jitter_ms",
    "rate_mbit",
    "loss",
    "mtu",
    "queue_packets",
    "initcwnd",
    "backend",
    "seed",
    "congestion_control",
    "description",
)


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


def parse_profile(spec: dict) -> Profile:
    """Validate a profile dict (see the module doc); ChainlabError names the bad key."""
    if not isinstance(spec, dict):
        raise ChainlabError(f"network profile: expected a table of settings, got {spec!r}")
    name = spec.get("name", "unnamed")
    if not isinstance(name, str) or not name:
        raise ChainlabError(f"network profile: name = {name!r}; allowed: a non-empty string")
    where = f"network profile {name!r}"
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ChainlabError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(KEYS)}")

    def number(key, default, lo, hi):
        value = spec.get(key)
        if value is None:
            return default
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not lo <= value <= hi:
            raise ChainlabError(f"{where}: {key} = {value!r}; allowed: a number in [{lo}, {hi}]")
        return float(value)

    def integer(key, default, lo, hi):
        value = spec.get(key)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise ChainlabError(f"{where}: {key} = {value!r}; allowed: an integer in [{lo}, {hi}]")
        return value

    delay = number("delay_ms", 0.0, 0.0, 10_000.0)
    jitter = number("jitter_ms", 0.0, 0.0, 10_000.0)
    if jitter > delay:
        raise ChainlabError(
            f"{where}: jitter_ms = {jitter:g} exceeds delay_ms = {delay:g}; allowed: at most "
            "delay_ms (a packet cannot arrive before it was sent)"
        )
    rate = spec.get("rate_mbit")
    if rate is not None:
        rate = number("rate_mbit", None, 0.001, 100_000.0)
    backend = spec.get("backend") or "tun"
    if backend not in BACKENDS:
        raise ChainlabError(f"{where}: backend = {backend!r}; allowed: {', '.join(BACKENDS)}")
    cc = spec.get("congestion_control") or DEFAULT_CONGESTION_CONTROL
    if not isinstance(cc, str) or not re.fullmatch(r"[a-z0-9_]{1,15}", cc):
        raise ChainlabError(
            f"{where}: congestion_control = {cc!r}; allowed: a kernel algorithm name such as "
            "cubic, reno or bbr"
        )
    prof = Profile(
        name=name,
        delay_ms=delay,
        jitter_ms=jitter,
        rate_mbit=rate,
        loss=number("loss", 0.0, 0.0, 1.0),
        mtu=integer("mtu", 1500, 576, 65535),
        queue_packets=integer("queue_packets", None, 1, 1_000_000),
        initcwnd=integer("initcwnd", DEFAULT_INITCWND, 1, 1000),
        backend=backend,
        seed=integer("seed", DEFAULT_SEED, 0, 2**64 - 1),
        congestion_control=cc,
    )
    if backend == "veth":
        shaped = [k for k in ("delay_ms", "jitter_ms", "rate_mbit", "loss") if spec.get(k)]
        if shaped:
            raise ChainlabError(
                f"{where}: backend 'veth' emulates nothing, yet {shaped[0]} is set; allowed: "
                "backend 'tun' or 'netem' for a shaped link"
            )
    return prof
