"""Link benchmark: what the userspace link adds to a loopback-equivalent path.

Run as `chainlab bench link` or `python -m chainlab.bench.link [--rounds N ...]` (root).
Prints figures only (no pass/fail). Two pairs of namespaces exist side by side:

  direct   a plain veth pair between the two namespaces: no forwarder, no emulation
  link     chainlab-link (backend "tun") with a zero-delay, unlimited, loss-free profile

and are measured in interleaved rounds whose order alternates, so drift on a shared machine
falls on both alike:

1. TCP round trip: median of 1-byte ping-pongs on one connection (TCP_NODELAY).
2. TLS handshake: median total latency (connect + handshake, the engine's total_ns) of full
   handshakes, ML-DSA-44 root + leaf, X25519MLKEM768, chainlab-engine serve / handshake.
3. Throughput: a TCP bulk transfer, timed at the receiver past its first quarter (slow
   start), Mbit/s of application bytes; and once more through a link shaped to 200 Mbit/s
   (the forwarder's queue and timer path), in Mbit/s of IP packets.

The added latency is link minus direct; the issue's targets are an added handshake latency of
at most 0.2 ms and a throughput of at least 200 Mbit/s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.errors import ChainlabError
from chainlab.network import emulated_link, require_privileges
from chainlab.network.calibrate import PROBE
from chainlab.network.link import Link
from chainlab.network.pipes import LineReader

CHAIN = "ML-DSA-44,ML-DSA-44"
GROUP = "X25519MLKEM768"
TARGET_ADDED_MS = 0.2
TARGET_MBIT = 200.0
# The shaped link of the last line runs at the throughput target.
SHAPED_MBIT = TARGET_MBIT
# Bounds on waiting for a server and a client; they only decide when a broken run is
# abandoned, never what is measured.
STARTUP_TIMEOUT_S = 10.0
CLIENT_TIMEOUT_S = 60.0
# Handshakes before each measured batch (connection set-up, caches), not counted.
HANDSHAKE_WARMUP = 5


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    require_privileges()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chainlab-bench-link-")))
        direct = stack.enter_context(
            emulated_link({"name": "direct", "backend": "veth"}, "bench-direct", calibrate=False)
        )
        link = stack.enter_context(emulated_link({"name": "zero"}, "bench-link", calibrate=False))
        paths = {"direct": Route(direct, stack), "link": Route(link, stack)}
        engine, why_not = _engine_pki(tmp)
        for name, p in paths.items():
            p.start_probe()
            if engine:
                p.start_engine(engine, tmp, name)
        for r in range(args.rounds):
            order = ["direct", "link"] if r % 2 == 0 else ["link", "direct"]
            for name in order:
                p = paths[name]
                batch = p.pingpong(args.pings)
                p.rtt_ms += batch
                p.round_rtt_ms.append(statistics.median(batch))
                if engine:
                    batch = p.handshakes(engine, tmp, args.handshakes)
                    p.handshake_ms += batch
                    p.round_handshake_ms.append(statistics.median(batch))
                p.mbit.append(p.bulk(args.bulk_seconds))
        timer = link.forwarder_stats().get("timer", {})
        scheduler = (link.scheduler or {}).get("policy", "?")
    shaped = shaped_throughput(args.bulk_seconds)
    load = os.getloadavg()[0]
    print(report(paths, args, why_not, scheduler, timer))
    print(
        f"{f'shaped to {SHAPED_MBIT:.0f} Mbit/s: TCP bulk':34}{'':10}{shaped:10.1f}{'':10}   "
        f"Mbit/s of IP packets (goodput x MTU / MSS)"
    )
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load:.2f} at the end (other work on "
        "the machine widens the per-round spread; the link and direct rounds share it alike)"
    )
    return 0


def shaped_throughput(seconds: float) -> float:
    """TCP bulk through a link shaped to SHAPED_MBIT (zero delay), in Mbit/s of IP packets:
    the shaping itself holds at the target rate, not only the unshaped fast path."""
    profile = {"name": "shaped", "rate_mbit": SHAPED_MBIT}
    with contextlib.ExitStack() as stack:
        link = stack.enter_context(emulated_link(profile, "bench-shaped", calibrate=False))
        route = Route(link, stack)
        route.start_probe()
        goodput = route.bulk(max(seconds, 1.0))
    return goodput * link.profile.mtu / link.profile.mss


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="chainlab bench link", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=16, help="interleaved rounds (default 16)")
    p.add_argument("--pings", type=int, default=300, help="ping-pongs per round (default 300)")
    p.add_argument("--handshakes", type=int, default=30, help="handshakes per round (default 30)")
    p.add_argument(
        "--bulk-seconds", type=float, default=0.3, help="bulk transfer per round (default 0.3)"
    )
    args = p.parse_args(argv)
    for name, lo in (("rounds", 1), ("pings", 10), ("handshakes", 5)):
        if getattr(args, name) < lo:
            p.error(f"--{name} {getattr(args, name)}: must be at least {lo}")
    if not 0.2 <= args.bulk_seconds <= 10:
        p.error(f"--bulk-seconds {args.bulk_seconds}: must be in [0.2, 10]")
    return args


@dataclass
class Route:
    """One measured path between a client and a server namespace (a Link), its servers and
    its samples."""

    link: Link
    stack: contextlib.ExitStack
    rtt_ms: list[float] = field(default_factory=list)
    handshake_ms: list[float] = field(default_factory=list)
    mbit: list[float] = field(default_factory=list)
    # Medians of each round: the added latency is the median of the per-round differences,
    # each taken between batches run back to back, so slow drift cancels.
    round_rtt_ms: list[float] = field(default_factory=list)
    round_handshake_ms: list[float] = field(default_factory=list)
    ports: dict = field(default_factory=dict)
    engine_port: str | None = None

    def start_probe(self) -> None:
        proc = self._spawn(
            self.link.server_cmd(
                [sys.executable, str(PROBE), "serve", "--bind", self.link.server_addr,
                 "--lifetime-s", "600"]
            )
        )  # fmt: skip
        self.ports = _ready_line(proc, "probe server")

    def start_engine(self, engine: str, tmp: Path, name: str) -> None:
        proc = self._spawn(
            self.link.server_cmd(
                [engine, "serve", "--pki", str(tmp / "pki"), "--chain", "leaf+intermediates",
                 "--listen", f"{self.link.server_addr}:0", "--groups", GROUP,
                 "--records", str(tmp / f"server-{name}.jsonl")]
            )
        )  # fmt: skip
        self.engine_port = _ready_line(proc, "engine server")["addr"].rsplit(":", 1)[1]

    def _spawn(self, argv: list[str]) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self.stack.callback(processes.stop, proc)
        return proc

    def _client(self, argv: list[str]) -> str:
        done = subprocess.run(
            self.link.client_cmd(argv), capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ChainlabError(f"benchmark client failed: {tail}")
        return done.stdout

    def _probe(self, *extra: str) -> dict:
        out = self._client(
            [sys.executable, str(PROBE), "client", "--connect", self.link.server_addr,
             "--tcp-port", str(self.ports["tcp_port"]), "--udp-port", str(self.ports["udp_port"]),
             "--connects", "0", *extra]
        )  # fmt: skip
        return json.loads(out)

    def pingpong(self, count: int) -> list[float]:
        return self._probe("--pingpong", str(count))["pingpong_ms"]

    def bulk(self, seconds: float) -> float:
        out = self._probe("--bulk-bytes", str(1 << 40), "--bulk-seconds", repr(seconds))
        return out["bulk"]["rate_bps"] / 1e6

    def handshakes(self, engine: str, tmp: Path, count: int) -> list[float]:
        out = self._client(
            [engine, "handshake", "--connect", f"{self.link.server_addr}:{self.engine_port}",
             "--ca", str(tmp / "pki" / "ca.pem"), "--groups", GROUP, "--count", str(count),
             "--warmup", str(HANDSHAKE_WARMUP), "--records", "-"]
        )  # fmt: skip
        return handshake_latencies(out.splitlines())


def handshake_latencies(lines: list[str]) -> list[float]:
    """total_ns (as ms) of the measured, successful handshakes among engine records."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        rec = json.loads(line)
        if not rec.get("warmup") and rec.get("outcome") == "ok" and rec.get("total_ns"):
            out.append(rec["total_ns"] / 1e6)
    return out


def added(direct: Route, link: Route, kind: str) -> tuple[float, float, float] | None:
    """(direct median, link median, median of the per-round differences link - direct) of
    `kind` ("rtt" or "handshake"), or None without samples."""
    d, lk = getattr(direct, f"{kind}_ms"), getattr(link, f"{kind}_ms")
    rd, rl = getattr(direct, f"round_{kind}_ms"), getattr(link, f"round_{kind}_ms")
    if not d or not lk or not rd or len(rd) != len(rl):
        return None
    diffs = [b - a for a, b in zip(rd, rl, strict=True)]
    return statistics.median(d), statistics.median(lk), statistics.median(diffs)


def p10(values: list[float]) -> float:
    """The 10th percentile (linear interpolation between order statistics)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[0]


def report(paths: dict, args, why_not: str | None, scheduler: str, timer: dict) -> str:
    d, lk = paths["direct"], paths["link"]
    lines = [
        f"chainlab bench link: chainlab-link (tun, zero delay, unlimited, {scheduler}) vs a "
        f"direct veth pair; {args.rounds} interleaved rounds",
        f"{'':34}{'direct':>10}{'link':>10}{'added':>10}   target   (added: median of the "
        "per-round differences)",
    ]
    rtt = added(d, lk, "rtt")
    if rtt is None:
        raise ValueError("the link benchmark measured no round trips")
    lines.append(
        f"{f'TCP round trip, median ms (n={len(lk.rtt_ms)})':34}"
        f"{rtt[0]:10.3f}{rtt[1]:10.3f}{rtt[2]:+10.3f}"
    )
    hs = added(d, lk, "handshake")
    if hs is None:
        lines.append(f"{'TLS handshake':34}not measured: {why_not}")
    else:
        met = "met" if hs[2] <= TARGET_ADDED_MS else "MISSED"
        lines.append(
            f"{f'TLS handshake, median ms (n={len(lk.handshake_ms)})':34}"
            f"{hs[0]:10.3f}{hs[1]:10.3f}{hs[2]:+10.3f}   <= {TARGET_ADDED_MS} ms added: {met}"
        )
        per_round = " ".join(
            f"{lr - dr:+.3f}"
            for dr, lr in zip(d.round_handshake_ms, lk.round_handshake_ms, strict=True)
        )
        lines.append(f"{'  handshake added per round, ms':34}{per_round}")
        # The fastest tenth of each side: the path's own cost with the least interference
        # from other work on the machine (which only ever adds time).
        p10_d, p10_l = p10(d.handshake_ms), p10(lk.handshake_ms)
        lines.append(
            f"{'TLS handshake, 10th percentile ms':34}{p10_d:10.3f}{p10_l:10.3f}"
            f"{p10_l - p10_d:+10.3f}"
        )
    dm, lm = statistics.median(d.mbit), statistics.median(lk.mbit)
    met = "met" if lm >= TARGET_MBIT else "MISSED"
    lines.append(
        f"{'TCP throughput, median Mbit/s':34}{dm:10.0f}{lm:10.0f}{'':10}   "
        f">= {TARGET_MBIT:.0f} Mbit/s: {met}"
    )
    lines.append(
        f"forwarder timer wake-ups: {timer.get('wakeups', 0)} (at zero delay a packet is "
        "written on as soon as it is read; a wake-up means one had to wait)"
    )
    return "\n".join(lines)


def _engine_pki(tmp: Path) -> tuple[str | None, str | None]:
    """The engine binary and a hierarchy in tmp/pki, or (None, why not)."""
    try:
        engine = str(engine_binary.path())
    except ChainlabError as e:
        return None, str(e)
    done = subprocess.run(
        [engine, "pki", "--chain", CHAIN, "--out", str(tmp / "pki")],
        capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S,
    )  # fmt: skip
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["pki failed"])[-1]
    return engine, None


def _ready_line(proc: subprocess.Popen, what: str) -> dict:
    line = LineReader(processes.pipe(proc.stdout).fileno()).readline(timeout=STARTUP_TIMEOUT_S)
    try:
        ready = json.loads(line or "")
    except ValueError:
        ready = None
    if not isinstance(ready, dict) or ready.get("event") != "ready":
        raise ChainlabError(f"{what} did not start (said {line!r})")
    return ready


if __name__ == "__main__":
    sys.exit(main())
