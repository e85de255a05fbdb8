"""`chainlab bench path`: is a server's CPU per handshake a property of the path?

The same server (OpenSSL 3.5 engine, ML-DSA-65 root + leaf, X25519MLKEM768, pinned to core
0; every client and the link's forwarder on core 1) on loopback, over an emulated 50 ms round
trip, and over the same round trip at 10 Mbit/s (network.toml's `wan`, where a flight's
segments arrive 1.2 ms apart), side by side in one run, in two ways:

1. one connection at a time (`handshake --count`, the threads model, one worker): what a
   scenario's single-connection phase measures;
2. under load (the event model, one loop): the rustls generator offering a fixed rate, the
   same on both paths (a share of loopback's derived capacity: by default half, so both
   sustain it; `--share` above 1 overloads the server, as a capacity step does).

Around the measured part only, `perf stat -p <server> -e task-clock,context-switches,
raw_syscalls:sys_enter` counts the server process's CPU, its context switches (each a
sleep and a wake-up) and its system calls; divided by the successful handshakes. One at a
time, the client process is counted the same way (`perf stat` around it: its start-up is in
every path's figure alike, so compare the differences between paths). The
connections' own records (`conn_cpu_ns`) give the CPU they account for beside it. A figure
that moves with the path while the work (system calls) does not is the cost of waking up
and of cold caches after a wait; more system calls per handshake is more work.

Prints figures only (no pass/fail). Needs root (network namespaces) and perf.

    chainlab bench path [-- --count N] [--seconds S] [--share F]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.bench.engine import GROUP, bench_pki
from chainlab.network import emulated_link
from chainlab.runner import records, server_cpu

CHAIN = "ML-DSA-65,ML-DSA-65"
SERVER_CPU, CLIENT_CPU = "0", "1"
# 50 ms of round trip, nothing else, as bench load's path; and the same at network.toml's
# `wan` rate.
PATHS = {
    "rtt50": {"name": "rtt50", "delay_ms": 25},
    "rtt50-10M": {"name": "rtt50r", "delay_ms": 25, "rate_mbit": 10},
}
# One at a time: 300 handshakes take ~0.5 s of server CPU on loopback and 15 s over the path.
COUNT = 300
# Under load: the offered rate as a share of loopback's derived capacity (1 / CPU per
# handshake), low enough that the server sustains it on both paths.
SHARE = 0.5
# Above 1 the offer exceeds what the server can serve (the load campaign's capacity step,
# where the issue saw 1.77 ms per handshake over 50 ms against 1.30 on loopback); the
# connection slots (SLOTS) bound what waits.
MAX_SHARE = 3.0
SECONDS = 5
# Connection slots over the path: rate x ~0.15 s of a connection's life, with room.
SLOTS = 512
# Handshakes before anything is counted: the server's first connections.
WARMUP = 20
EVENTS = ("task-clock", "context-switches", "raw_syscalls:sys_enter")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="chainlab bench path", description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=COUNT, help="handshakes one at a time")
    ap.add_argument("--seconds", type=int, default=SECONDS, help="length of the load run")
    ap.add_argument(
        "--share",
        type=float,
        default=SHARE,
        help=f"offer / loopback capacity (above 1 the server is overloaded; at most {MAX_SHARE})",
    )
    args = ap.parse_args(argv)
    if args.count < 1 or args.seconds < 1 or not 0 < args.share <= MAX_SHARE:
        ap.error(f"--count and --seconds must be at least 1, --share in (0, {MAX_SHARE}]")
    if os.geteuid() != 0 or shutil.which("perf") is None or (os.cpu_count() or 1) < 2:
        print("chainlab bench path: needs root (network namespaces), perf and 2 CPUs")
        return 0
    eng = str(engine_binary.path())
    out: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-path-") as tmp_name:
        tmp = Path(tmp_name)
        bench_pki(eng, tmp, CHAIN)
        for path in ("loopback", *PATHS):
            out[(path, "one at a time")] = run(eng, tmp, path, "threads", None, args)
        rate = args.share * 1000 / out[("loopback", "one at a time")]["cpu_ms"]
        for path in ("loopback", "rtt50"):
            out[(path, f"load {rate:.0f}/s")] = run(eng, tmp, path, "event", rate, args)
    report(out)
    return 0


def run(eng: str, tmp: Path, path: str, model: str, rate: float | None, args) -> dict:
    """One server on `path`: `args.count` handshakes one at a time (rate None) or `rate`/s
    under load, counted by perf around the measured part."""
    name = f"{path}-{model}"
    if path == "loopback":
        return _measure(eng, tmp, name, model, rate, args, None)
    with emulated_link(
        PATHS[path], f"bench-{name}"[:40], calibrate=False, forwarder_cpus={int(CLIENT_CPU)}
    ) as link:
        return _measure(eng, tmp, name, model, rate, args, link)


def _measure(eng, tmp, name, model, rate, args, link) -> dict:
    def server_side(cmd):
        return link.server_cmd(cmd) if link is not None else cmd

    def client_side(cmd):
        return link.client_cmd(cmd) if link is not None else cmd

    listen = f"{link.server_addr}:0" if link is not None else "127.0.0.1:0"
    srv_rec, err = tmp / f"server-{name}.jsonl", tmp / f"server-{name}.stderr"
    with err.open("wb") as errf:
        server = processes.spawn(
            server_side(
                [eng, "serve", "--pki", str(tmp / "pki"), "--groups", GROUP, "--listen", listen,
                 "--cpus", SERVER_CPU, "--server-model", model, "--workers", "1",
                 "--records", str(srv_rec)]
            ),
            subprocess.PIPE, errf,
        )  # fmt: skip
    try:
        ready = processes.wait_ready(server, 20.0, err)
        pid = server_cpu.engine_pid(ready, eng)
        if pid is None:
            raise RuntimeError(f"cannot find the server process of {name}")
        head = ["--connect", ready["addr"], "--ca", str(tmp / "pki" / "ca.pem"), "--groups",
                GROUP, "--cpus", CLIENT_CPU]  # fmt: skip
        subprocess.run(
            client_side([eng, "handshake", *head, "--count", str(WARMUP),
                         "--records", str(tmp / f"warm-{name}.jsonl")]),
            check=True, timeout=120, capture_output=True,
        )  # fmt: skip
        time.sleep(0.2)  # the warm-up's records written, its connections closed
        seen_before = len(records.read(srv_rec))
        rec = tmp / f"client-{name}.jsonl"
        client_perf = tmp / f"perf-client-{name}.csv"
        if rate is None:
            cmd = ["perf", "stat", "-x", ",", "-o", str(client_perf), "-e", ",".join(EVENTS),
                   "--", eng, "handshake", *head, "--count", str(args.count),
                   "--records", str(rec)]  # fmt: skip
        else:
            gen = str(engine_binary.stack_path("rustls"))
            cmd = [gen, "load", *head, "--no-verify", "--rate", f"{rate:.3f}",
                   "--duration-ms", str(args.seconds * 1000), "--max-in-flight", str(SLOTS),
                   "--records", str(rec)]  # fmt: skip
        counted, perf = _perf(pid, tmp / f"perf-{name}.csv")
        try:
            subprocess.run(client_side(cmd), check=True, timeout=600, capture_output=True)
            time.sleep(0.2)  # the last connections' closes
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=30)
        time.sleep(0.1)
    finally:
        processes.stop_group(server)
    events = _read_perf(counted)
    got = [r for r in records.read(rec) if r.get("side") == "client" and not r.get("warmup")]
    ok = sum(r["outcome"] == "ok" for r in got)
    conns = [r for r in records.read(srv_rec) if r.get("side") == "server"][seen_before:]
    conn_cpu = [r["conn_cpu_ns"] for r in conns if r.get("conn_cpu_ns") is not None]
    n = max(ok, 1)
    client = _read_perf(client_perf) if rate is None else None
    return {
        "client_cpu_ms": client["task-clock"] / n if client else float("nan"),
        "client_switches": client["context-switches"] / n if client else float("nan"),
        "client_syscalls": client["raw_syscalls:sys_enter"] / n if client else float("nan"),
        "handshakes": ok,
        "attempts": len(got),
        "cpu_ms": events["task-clock"] / n,  # perf's task-clock is in ms
        "switches": events["context-switches"] / n,
        "syscalls": events["raw_syscalls:sys_enter"] / n,
        "conn_cpu_ms": statistics.fmean(conn_cpu) / 1e6 if conn_cpu else float("nan"),
        "conn_share": (sum(conn_cpu) / 1e6 / events["task-clock"]) if conn_cpu else float("nan"),
    }


def _perf(pid: int, out: Path) -> tuple[Path, subprocess.Popen]:
    perf = subprocess.Popen(
        ["perf", "stat", "-x", ",", "-o", str(out), "-e", ",".join(EVENTS), "-p", str(pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.3)  # perf attached before the first measured connection
    return out, perf


def _read_perf(path: Path) -> dict[str, float]:
    """perf stat -x, lines: value,unit,event,..."""
    got = {}
    for line in path.read_text().splitlines():
        parts = line.split(",")
        if len(parts) >= 3 and parts[2] in EVENTS:
            got[parts[2]] = float(parts[0]) if parts[0][:1].isdigit() else float("nan")
    missing = [e for e in EVENTS if e not in got]
    if missing:
        raise RuntimeError(f"perf counted no {', '.join(missing)} ({path.read_text()[:200]})")
    return got


def report(out: dict) -> None:
    print("per successful handshake (perf stat around the measured part):")
    print(
        f"  {'mode':<16} {'path':<10} {'handshakes':>10} {'server CPU ms':>13} {'switches':>8} "
        f"{'syscalls':>8} {'conn CPU ms':>11} {'conns/CPU':>9} {'client CPU ms':>13} "
        f"{'switches':>8} {'syscalls':>8}"
    )
    for (path, mode), r in out.items():
        print(
            f"  {mode:<16} {path:<10} {r['handshakes']:>10} {r['cpu_ms']:>13.3f} "
            f"{r['switches']:>8.2f} {r['syscalls']:>8.1f} {r['conn_cpu_ms']:>11.3f} "
            f"{100 * r['conn_share']:>8.1f}% {r.get('client_cpu_ms', NAN):>13.3f} "
            f"{r.get('client_switches', NAN):>8.2f} {r.get('client_syscalls', NAN):>8.1f}"
        )
    for path, mode in out:
        if path == "loopback":
            continue
        a, b = out[("loopback", mode)], out[(path, mode)]
        line = (
            f"  {mode}, {path} - loopback: server CPU {b['cpu_ms'] - a['cpu_ms']:+.3f} ms "
            f"({b['cpu_ms'] / a['cpu_ms']:.3f}x), context switches "
            f"{b['switches'] - a['switches']:+.2f}, system calls "
            f"{b['syscalls'] - a['syscalls']:+.1f}"
        )
        if b.get("client_cpu_ms") == b.get("client_cpu_ms"):  # measured (not NaN)
            line += (
                f"; client CPU {b['client_cpu_ms'] - a['client_cpu_ms']:+.3f} ms, context "
                f"switches {b['client_switches'] - a['client_switches']:+.2f}, system calls "
                f"{b['client_syscalls'] - a['client_syscalls']:+.1f}"
            )
        print(line)


NAN = float("nan")
