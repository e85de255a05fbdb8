"""What `chainlab bench engine` measured, summarized and printed: one client run's figures,
pooled rates, CPU per handshake, latency ratios, instruction counts, and the tables it
prints (chainlab/bench/engine.py runs the programs)."""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from chainlab.errors import ChainlabError

STIME_LINE = re.compile(r"^(\d+) connections in (\d+) real seconds", re.MULTILINE)


RATE_LABELS = {
    "s_time": "s_server + s_time -new",
    "engine_verify": "serve + handshake (verify on)",
    "engine_noverify": "serve + handshake (verify off)",
}


TRANSPORT_LABELS = {
    "tcp": "TCP, instrumented (both sides)",
    "quic": "QUIC, instrumented (both sides)",
    "quic_no_instrument": "QUIC, --no-instrument (both sides)",
}

OVERHEAD_LABELS = {
    "instrumented": "instrumented (both sides)",
    "no_instrument": "--no-instrument (both sides)",
    "no_instrument_again": "--no-instrument again (A/A)",
}


WHAT_EACH_SIDE_DOES = {
    "s_time": (
        "openssl s_server -tls1_3 -groups X25519MLKEM768 -num_tickets 0 -quiet (one thread)",
        "openssl s_time -new: new TCP connection + full handshake; chain checked without a "
        "trust store (result ignored), no hostname check; no close_notify (closes with RST)",
    ),
    "engine_verify": (
        "chainlab-engine serve --workers 1 --tickets 0, instrumented, records to a file",
        "chainlab-engine handshake: new TCP connection + full handshake; chain verified "
        "against the root + hostname check; close_notify both ways; a record per handshake",
    ),
    "engine_noverify": (
        "(the same server)",
        "chainlab-engine handshake --no-verify: as above, without chain verification",
    ),
}


@dataclass
class Run:
    """One client run: completed handshakes over the client process's wall time."""

    handshakes: int
    failed: int
    wall_s: float
    latencies_ns: list[int]
    client_cpu_s: float = 0.0
    server_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.handshakes / self.wall_s if self.wall_s > 0 else 0.0


def report_rates(rates: dict[str, list[Run]]) -> None:
    print()
    print("1. Full handshakes per wall second (client process wall time)")
    print_rounds(
        RATE_LABELS, rates, lambda r: f"{r.rate:8.1f}", lambda rs: f"{pooled_rate(rs):8.1f}"
    )
    base = pooled_rate(rates["s_time"])
    for key in ("engine_verify", "engine_noverify"):
        ratio = pooled_rate(rates[key]) / base if base else float("nan")
        pairs = zip(rates[key], rates["s_time"], strict=True)
        per_round = [e.rate / s.rate for e, s in pairs if s.rate]
        median = statistics.median(per_round) if per_round else float("nan")
        print(
            f"   ratio {RATE_LABELS[key]} / s_time: {ratio:.3f} (target >= 1); "
            f"median of per-round ratios {median:.3f}"
        )
    print("   CPU per handshake, ms (client process / server process, all rounds):")
    for key, label in RATE_LABELS.items():
        client, server = cpu_per_handshake_ms(rates[key])
        print(f"     {label:34} {client:7.3f} / {server:7.3f}")
    print("   what each side does:")
    for key, (server_does, client_does) in WHAT_EACH_SIDE_DOES.items():
        print(
            f"     {RATE_LABELS[key]}:\n       server: {server_does}\n       client: {client_does}"
        )


def report_overhead(overhead: dict[str, list[Run]]) -> None:
    print()
    print("2. Instrumentation overhead: mean client latency per handshake (total_ns, ms)")
    print_rounds(
        OVERHEAD_LABELS,
        overhead,
        lambda r: f"{mean_ms(r.latencies_ns):8.3f}",
        lambda rs: f"{mean_ms([x for r in rs for x in r.latencies_ns]):8.3f}",
    )
    bare = overhead["no_instrument"]
    for key, name in (("instrumented", "instrumented"), ("no_instrument_again", "A/A control")):
        runs = overhead[key]
        latency = latency_ratio(runs, bare)
        per_round = [latency_ratio([a], [b]) for a, b in zip(runs, bare, strict=True)]
        (c, s), (bc, bs) = cpu_per_handshake_ms(runs), cpu_per_handshake_ms(bare)
        target = " (target within 3 %)" if key == "instrumented" else ""
        print(
            f"   {name} / no-instrument: latency {latency:.4f} ({(latency - 1) * 100:+.2f} %)"
            f"{target}; per round {', '.join(f'{x:.3f}' for x in per_round)}"
        )
        print(
            f"     rate {pooled_rate(runs):.1f}/s vs {pooled_rate(bare):.1f}/s; CPU per "
            f"handshake client / server {c:.3f} / {s:.3f} ms vs {bc:.3f} / {bs:.3f} ms "
            f"(client+server ratio {(c + s) / (bc + bs):.4f})"
        )


def report_transports(runs: dict[str, list[Run]]) -> None:
    """QUIC beside TCP (same hierarchy, group and verification), and QUIC's own
    instrumentation overhead (its datagram counter, clocks and records, on vs off)."""
    print()
    print("4. QUIC beside TCP: full handshakes per wall second, one connection at a time")
    print_rounds(
        TRANSPORT_LABELS, runs, lambda r: f"{r.rate:8.1f}", lambda rs: f"{pooled_rate(rs):8.1f}"
    )
    tcp, quic = pooled_rate(runs["tcp"]), pooled_rate(runs["quic"])
    print(f"   ratio QUIC / TCP (both instrumented): {quic / tcp if tcp else float('nan'):.3f}")
    latency = latency_ratio(runs["quic"], runs["quic_no_instrument"])
    print(
        f"   QUIC instrumented / --no-instrument: latency {latency:.4f} "
        f"({(latency - 1) * 100:+.2f} %)"
    )
    print("   CPU per handshake, ms (client process / server process, all rounds):")
    for key, label in TRANSPORT_LABELS.items():
        client, server = cpu_per_handshake_ms(runs[key])
        print(f"     {label:34} {client:7.3f} / {server:7.3f}")


def report_instructions(ins: dict[str, float]) -> None:
    print()
    print("3. Instructions per handshake (valgrind callgrind; independent of machine load)")
    rows = [
        ("client: openssl s_time -new", "s_time"),
        ("client: engine handshake, verify on", "engine_verify"),
        ("client: engine handshake, verify off", "engine_noverify"),
        ("server: openssl s_server", "s_server"),
        ("server: engine serve (instrumented)", "engine_server"),
    ]
    for label, key in rows:
        print(f"   {label:40} {ins[key] / 1e6:8.3f} M")
    pairs = [
        ("client, engine (verify off) / s_time", "engine_noverify", "s_time"),
        ("client, engine (verify on) / s_time", "engine_verify", "s_time"),
        ("server, engine / s_server", "engine_server", "s_server"),
    ]
    for label, a, b in pairs:
        print(f"   {label:40} {ins[a] / ins[b]:8.3f} (below 1: the engine does less work)")
    both = (ins["engine_noverify"] + ins["engine_server"]) / (ins["s_time"] + ins["s_server"])
    print(
        f"   client + server, engine (verify off) / openssl {both:8.3f}: on one loopback "
        "connection at a time the two processes mostly take turns, so this ratio bounds "
        "the rate ratio from the other side"
    )


def callgrind_total(path: Path) -> int:
    """Total instructions from a callgrind output file's `totals:` (or `summary:`) line."""
    for line in path.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise ChainlabError(f"no totals line in callgrind output {path.name}")


def print_rounds(labels: dict[str, str], results: dict[str, list[Run]], cell, pooled) -> None:
    rounds = len(next(iter(results.values())))
    header = "".join(f"{'round ' + str(i + 1):>9}" for i in range(rounds))
    print(f"   {'':34}{header}{'all':>9}")
    for key, label in labels.items():
        cells = "".join(f" {cell(r)}" for r in results[key])
        print(f"   {label:34}{cells} {pooled(results[key])}")


def parse_s_time(stdout: str, stderr: str = "") -> int:
    """Connections completed, from s_time's "N connections in T real seconds" line."""
    m = STIME_LINE.search(stdout)
    if m is None:
        tail = (stderr.strip() or stdout.strip())[-300:]
        raise ChainlabError(f"openssl s_time printed no 'connections in' line: {tail}")
    return int(m.group(1))


def summarize_records(lines: list[str], wall_s: float) -> Run:
    """A client run from its records: measured (non-warm-up) handshakes only."""
    records = [json.loads(line) for line in lines if line.strip()]
    measured = [r for r in records if not r["warmup"]]
    ok = [r for r in measured if r["outcome"] == "ok"]
    return Run(
        handshakes=len(ok),
        failed=len(measured) - len(ok),
        wall_s=wall_s,
        latencies_ns=[r["total_ns"] for r in ok],
    )


def pooled_rate(runs: list[Run]) -> float:
    wall = sum(r.wall_s for r in runs)
    return sum(r.handshakes for r in runs) / wall if wall > 0 else 0.0


def cpu_per_handshake_ms(runs: list[Run]) -> tuple[float, float]:
    """(client, server) CPU milliseconds per completed handshake over all runs."""
    n = sum(r.handshakes for r in runs)
    if n == 0:
        return float("nan"), float("nan")
    return (
        1000 * sum(r.client_cpu_s for r in runs) / n,
        1000 * sum(r.server_cpu_s for r in runs) / n,
    )


def latency_ratio(runs: list[Run], base: list[Run]) -> float:
    """Mean client latency of `runs` over that of `base` (all their completed handshakes)."""
    a = [x for r in runs for x in r.latencies_ns]
    b = [x for r in base for x in r.latencies_ns]
    return statistics.fmean(a) / statistics.fmean(b) if a and b else float("nan")


def mean_ms(latencies_ns: list[int]) -> float:
    return statistics.fmean(latencies_ns) / 1e6 if latencies_ns else float("nan")
