"""Calibration: measure a live link and put the measured values beside the configured ones.

Runs `probe.py serve` in the server namespace and `probe.py client` in the client namespace
(see that module for the protocol), bounded in count and time, and summarizes:

  rtt_ms             median of TCP connect times (SYN -> SYN-ACK: one RTT); 15 connects,
                     more with jitter (connects_for)
  expected_rtt_ms    configured RTT + the serialization of a SYN and a SYN-ACK (60 bytes
                     each) at the configured rate: what a perfect link would show
  rate_mbit          bottleneck rate from a UDP packet train (IP bytes, Mbit/s); with an
                     unlimited rate this is the speed of the sender and forwarder
  tcp_goodput_mbit   TCP bulk transfer, application bytes per second past slow start (within
                     BULK_TARGET_S on a link with neither rate nor loss)
  tcp_rate_mbit      the same in IP bytes (goodput x MTU / MSS), comparable to rate_mbit on
                     a loss-free link whose queue keeps the bottleneck busy
  loss               fraction of paced UDP probes lost, both directions together
  timer_late_us_*    how late the forwarder's timer fired (mean, max) during the calibration
  flagged            measured RTT off expected_rtt_ms by more than rtt_allowed_ms: 5 %, at
                     least 0.2 ms (the forwarder's own budget) and at least 3 standard errors
                     of the median under the profile's jitter; or rate_mbit off the
                     configured rate by more than 5 %
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

from chainlab import processes
from chainlab.errors import ChainlabError
from chainlab.network import model
from chainlab.network.pipes import LineReader

PROBE = Path(__file__).resolve().parent / "probe.py"

# Relative tolerance before a profile is flagged (the 5 %).
TOLERANCE = 0.05
# Absolute RTT tolerance floor: the link's own added latency budget (docs/network.md). A
# 0 ms or 1 ms profile cannot be measured closer than the tools and forwarder add.
RTT_FLOOR_MS = 0.2

# TCP connects for the RTT: at least this many; more with jitter (see connects_for).
CONNECTS = 15
# With jitter, enough connects that 3 standard errors of the median RTT fit in the 5 % band,
# but at most this many and this long.
MAX_CONNECTS = 200
MAX_CONNECT_S = 8.0
# Standard error of a sample median = MEDIAN_SE_FACTOR x sd / sqrt(n) (sqrt(pi/2) for a
# normal; close enough for the sum of two jittered one-way delays).
MEDIAN_SE_FACTOR = 1.2533
# Bulk transfer sized to last about this long at the configured rate, within byte bounds.
BULK_TARGET_S = 0.75
BULK_MIN_BYTES = 128 << 10
BULK_MAX_BYTES = 256 << 20
# Hard stop for the sending side of the bulk transfer (a lossy link may crawl).
BULK_MAX_S = 2.0
# ... and on a loss-free link without a rate, where nothing but the sender and forwarder
# bound it, the bulk transfer lasts BULK_TARGET_S: over a 50 ms round trip it had run into
# the 2 s stop every time (92 of 268 MB; wan50's calibrations 3.5-3.6 s, ten composite.toml
# runs of 2026-11-29), 1.25 s of each such run's calibration. There its figure is what TCP
# reached in that time, slow start included; the forwarder's rate is the train's.
# Packet train: at most this many MTU datagrams, lasting at most TRAIN_TARGET_S at the rate,
# and always fewer than the queue holds (a tail drop would not have used the bottleneck).
TRAIN_MAX = 200
TRAIN_MIN = 3
TRAIN_TARGET_S = 0.5
# Loss probes per direction, their load kept under 10 % of the rate (so the queue never
# drops them: only the loss process does), spaced at least 0.2 ms, lasting at most 1 s.
LOSS_PROBES = 500
PROBE_IP_BYTES = 64 + 28
PROBE_LOAD = 0.10
PROBE_MIN_INTERVAL_S = 0.0002
PROBE_MAX_S = 1.0
# Bounds on the probe processes.
READY_TIMEOUT_S = 10.0
CLIENT_TIMEOUT_S = 90.0


def calibrate(
    link,
    *,
    connects: int | None = None,
    loss_probes: int = LOSS_PROBES,
    bulk_bytes: int | None = None,
) -> dict:
    """Measure `link` (a chainlab.network.Link); see the module doc for the result keys.
    `connects` overrides `connects_for(profile)`; `loss_probes` is per direction;
    `bulk_bytes` overrides the rate-derived transfer size."""
    p = link.profile
    plan = plan_for(p, connects=connects, loss_probes=loss_probes)
    if bulk_bytes is not None:
        plan["bulk_bytes"] = bulk_bytes
    started = time.monotonic()
    server = subprocess.Popen(
        link.server_cmd(
            [sys.executable, str(PROBE), "serve", "--bind", link.server_addr,
             "--lifetime-s", str(CLIENT_TIMEOUT_S + 30), "--watch-stdin"]
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        ports = _ready(server)
        argv = [
            sys.executable, str(PROBE), "client",
            "--connect", link.server_addr,
            "--tcp-port", str(ports["tcp_port"]), "--udp-port", str(ports["udp_port"]),
            "--connects", str(plan["connects"]),
            "--bulk-bytes", str(plan["bulk_bytes"]), "--bulk-seconds", str(plan["bulk_seconds"]),
            "--train-packets", str(plan["train_packets"]), "--mtu", str(p.mtu),
            "--loss-probes", str(plan["loss_probes"]),
            "--probe-interval-s", repr(plan["probe_interval_s"]),
            "--settle-s", repr(plan["settle_s"]),
        ]  # fmt: skip
        try:
            done = subprocess.run(
                link.client_cmd(argv), capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise ChainlabError(
                f"calibration of network profile {p.name!r} did not finish in "
                f"{CLIENT_TIMEOUT_S:g} s"
            ) from None
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ChainlabError(f"calibration of network profile {p.name!r} failed: {tail}")
        raw = json.loads(done.stdout)
    finally:
        processes.stop(server)
    result = summarize(p, raw)
    result.update(_forwarder_timing(link))
    flag_late_timer(result, p)
    result["calibration_seconds"] = round(time.monotonic() - started, 3)
    return result


def flag_late_timer(result: dict, p) -> None:
    """Flags the calibration `result` of profile `p` whose forwarder was late on average."""
    late_ms = (result.get("timer_late_us_mean") or 0.0) / 1e3
    if late_ms > link_allowance_ms(p):
        # The forwarder held packets systematically longer than the profile says, e.g. a
        # real-time task throttled by the kernel (sched_rt_runtime_us) on a fast link.
        result["flag_reasons"].append(
            f"forwarder timer {late_ms:.3f} ms late on average (up to "
            f"{(result.get('timer_late_us_max') or 0) / 1e3:.3f}; allowed "
            f"{link_allowance_ms(p):.3f}): real-time throttling? (/proc/sys/kernel/"
            "sched_rt_runtime_us)"
        )
        result["flagged"] = True


def link_allowance_ms(profile) -> float:
    """How much timing error of its own the link may add to its packets on average before a
    measurement over it is flagged: the calibration's tolerance of the RTT, at least its
    floor. (Single late wake-ups of a few ms happen on a loaded machine; the mean is what
    shifts the latencies measured, and the report shows the largest beside it.)"""
    return max(TOLERANCE * 2 * profile.delay_ms, RTT_FLOOR_MS)


def _forwarder_timing(link) -> dict:
    """How late the forwarder's timer fired over the calibration traffic (its own error on
    every delayed packet), and the scheduling policy it runs under."""
    if link.forwarder_pid is None:
        return {}
    timer = link.forwarder_stats().get("timer") or {}
    wakeups = timer.get("wakeups", 0)
    return {
        "forwarder_scheduler": (link.scheduler or {}).get("policy"),
        "timer_wakeups": wakeups,
        "timer_late_us_mean": timer["late_ns_total"] / wakeups / 1e3 if wakeups else None,
        "timer_late_us_max": timer["late_ns_max"] / 1e3 if wakeups else None,
    }


def plan_for(profile, *, connects: int | None = None, loss_probes: int = LOSS_PROBES) -> dict:
    """How much traffic each measurement sends on this profile (bounded in bytes and time)."""
    rate_bps = profile.rate_mbit * 1e6 if profile.rate_mbit else None
    if rate_bps:
        bulk = int(min(max(rate_bps / 8 * BULK_TARGET_S, BULK_MIN_BYTES), BULK_MAX_BYTES))
        by_time = int(rate_bps * TRAIN_TARGET_S / (profile.mtu * 8))
        train = min(TRAIN_MAX, by_time, profile.queue_limit - 1)
        interval = max(PROBE_MIN_INTERVAL_S, PROBE_IP_BYTES * 8 / (PROBE_LOAD * rate_bps))
    else:
        bulk, train, interval = BULK_MAX_BYTES, TRAIN_MAX, PROBE_MIN_INTERVAL_S
    probes = min(loss_probes, max(1, int(PROBE_MAX_S / interval)))
    unbounded = not rate_bps and not profile.loss
    return {
        "connects": connects or connects_for(profile),
        "bulk_bytes": bulk,
        "bulk_seconds": BULK_TARGET_S if unbounded else BULK_MAX_S,
        "train_packets": max(TRAIN_MIN, train),
        "loss_probes": probes,
        "probe_interval_s": interval,
        # Only a reordering link (netem with jitter) needs time for stragglers.
        "settle_s": 0.01 + 2 * profile.jitter_ms / 1000,
    }


def rtt_sd_ms(profile) -> float:
    """Standard deviation of one RTT sample that jitter alone causes: two one-way offsets,
    each at most uniform on [-jitter, +jitter] (sd jitter / sqrt(3); the forwarder's wander
    varies less, so this errs on the wide side)."""
    return math.sqrt(2) * profile.jitter_ms / math.sqrt(3)


def connects_for(profile) -> int:
    """Connects enough that 3 standard errors of the median RTT fit in 5 % of the RTT:
    CONNECTS without jitter; with jitter up to MAX_CONNECTS and MAX_CONNECT_S."""
    sd = rtt_sd_ms(profile)
    if sd == 0 or profile.rtt_ms == 0:
        return CONNECTS
    need = math.ceil((3 * MEDIAN_SE_FACTOR * sd / (TOLERANCE * profile.rtt_ms)) ** 2)
    by_time = int(MAX_CONNECT_S * 1000 / profile.rtt_ms)
    return max(CONNECTS, min(need, MAX_CONNECTS, by_time))


def summarize(profile, raw: dict) -> dict:
    """Measured values from the probe client's raw output, beside the configured ones."""
    rate_cfg = profile.rate_mbit
    ok = [t for t in raw.get("connect_ms", []) if t is not None]
    rtt = statistics.median(ok) if ok else None
    syn_ms = model.syn_serialization_ms(rate_cfg)
    expected_rtt = profile.rtt_ms + syn_ms

    train = raw.get("train") or {}
    rate = None
    if train.get("received", 0) >= 2 and train.get("span_ns", 0) > 0:
        bits = (train["last_seq"] - train["first_seq"]) * train["ip_bytes"] * 8
        rate = bits / train["span_ns"] * 1e3  # bits per ns -> Mbit/s

    bulk = raw.get("bulk") or {}
    goodput = bulk["rate_bps"] / 1e6 if bulk.get("rate_bps") else None
    tcp_rate = goodput * profile.mtu / bulk["mss"] if goodput and bulk.get("mss") else None

    loss_raw = raw.get("loss") or {}
    sent = sum(loss_raw.get(d, {}).get("sent", 0) for d in ("forward", "reverse"))
    got = sum(loss_raw.get(d, {}).get("received", 0) for d in ("forward", "reverse"))

    def fraction_lost(d):
        side = loss_raw.get(d) or {}
        return 1 - side["received"] / side["sent"] if side.get("sent") else None

    reasons = []
    rtt_error = allowed = None
    if rtt is None:
        reasons.append("no TCP connect succeeded")
    else:
        rtt_error = rtt - expected_rtt
        # 5 %, but never less than the floor, nor than 3 standard errors of the median that
        # jitter leaves after the connects that fit (a long RTT with a large jitter).
        se = MEDIAN_SE_FACTOR * rtt_sd_ms(profile) / math.sqrt(len(ok))
        allowed = max(TOLERANCE * expected_rtt, RTT_FLOOR_MS, 3 * se)
        if abs(rtt_error) > allowed:
            reasons.append(
                f"RTT {rtt:.3f} ms vs expected {expected_rtt:.3f} ms (allowed +-{allowed:.3f})"
            )
    rate_error = None
    if rate_cfg:
        if rate is None:
            reasons.append("no packet-train rate measured")
        else:
            rate_error = (rate - rate_cfg) / rate_cfg
            if abs(rate_error) > TOLERANCE:
                reasons.append(f"rate {rate:.3f} Mbit/s vs configured {rate_cfg:g} Mbit/s")
    return {
        "profile": profile.name,
        "backend": profile.backend,
        "rtt_ms": rtt,
        "rtt_ms_min": min(ok) if ok else None,
        "rtt_ms_max": max(ok) if ok else None,
        "rtt_samples": len(ok),
        "rtt_failed": len(raw.get("connect_ms", [])) - len(ok),
        "rate_mbit": rate,
        "train_packets": train.get("sent"),
        "train_received": train.get("received"),
        "tcp_goodput_mbit": goodput,
        "tcp_rate_mbit": tcp_rate,
        "tcp_mss": bulk.get("mss"),
        "bulk_bytes": bulk.get("bytes"),
        "loss": 1 - got / sent if sent else None,
        "loss_forward": fraction_lost("forward"),
        "loss_reverse": fraction_lost("reverse"),
        "loss_probes": sent,
        "configured_rtt_ms": profile.rtt_ms,
        "expected_rtt_ms": expected_rtt,
        "configured_rate_mbit": rate_cfg,
        "configured_loss": profile.loss,
        "rtt_error_ms": rtt_error,
        "rtt_allowed_ms": allowed,
        "rate_error": rate_error,
        "flagged": bool(reasons),
        "flag_reasons": reasons,
    }


def _ready(server: subprocess.Popen) -> dict:
    line = LineReader(processes.pipe(server.stdout).fileno()).readline(timeout=READY_TIMEOUT_S)
    try:
        ready = json.loads(line or "")
    except ValueError:
        ready = None
    if not isinstance(ready, dict) or ready.get("event") != "ready":
        server.kill()
        _, err = server.communicate(timeout=5)
        tail = (err.strip().splitlines() or [line or "no output"])[-1]
        raise ChainlabError(f"calibration probe server did not start: {tail}")
    return ready
