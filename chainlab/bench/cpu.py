"""`chainlab bench cpu`: how much of each server process's CPU its connections' records
account for, and where the rest went.

For each server stack, model and transport (an ML-DSA-65 root + leaf, X25519MLKEM768, one
server worker, every server pinned to core 0 and the OpenSSL 3.5 engine's client to core 1):
the server starts, `--handshakes` connections run one at a time, and the server stops. The
server process's CPU is read from the kernel, the same way for every stack: the sum over
its threads of /proc/<pid>/task/*/schedstat's run time (the clock CLOCK_THREAD_CPUTIME_ID
and CLOCK_PROCESS_CPUTIME_ID read, so the engines' own figures are on the same scale),
once at its ready line and once before it is stopped; with `perf` installed, `perf stat -e
task-clock` around the whole process as well.

Printed per server: the connections' `conn_cpu_ns` summed, over the process's CPU while it
served (ready to stop) and over perf's task-clock (exec to exit, start-up included); then
the rest, itemized from the server's own accounts (`server_thread` records): waiting for
connections (accept's poll, the event loop's epoll), the serving threads' own remainder,
the other threads (records writer, main thread's signal wait, a runtime's helpers), and the
start-up before the ready line. Connections whose CPU the engine leaves null (another was
in flight) are counted and excluded from nothing: one at a time there should be none.

Prints figures only (no pass/fail).

    chainlab bench cpu [-- --handshakes N] [--stack STACK ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab import processes
from chainlab.bench.engine import GROUP, bench_pki
from chainlab.runner import records, server_cpu

CHAIN = "ML-DSA-65,ML-DSA-65"
SERVER_CPU, CLIENT_CPU = "0", "1"
# (stack, model, transport): every server the engines have, one worker each. Over QUIC one
# socket serves every connection (the model names the ready line only).
SERVERS = (
    *(
        (stack, model, "tcp")
        for stack in ("openssl-3.5", "rustls", "boringssl", "go")
        for model in ("threads", "event")
    ),
    ("openssl-3.5", "threads", "quic"),
    ("go", "event", "quic"),
)
# 1000 connections: ~1.5 s of server CPU, so start-up (a few ms) and the writer's periodic
# wake-ups are each well under a per cent, and a per-connection leak of 1 us shows as 0.07 %.
HANDSHAKES = 1000
# After the last connection, before the server is stopped: its records reach the file
# (the OpenSSL scaffold's writer turns every 50 ms) and nothing more is in flight.
SETTLE_S = 0.3


# How the report words each part of the rest (chainlab.runner.server_cpu.rest).
REST_LABELS = {
    "waiting": "waiting (accept's poll, epoll; Go: all)",
    "threads_rest": "serving threads' remainder",
    "other": "other threads (writer, main, runtime)",
}


@dataclass
class Coverage:
    """One server: the process's CPU while serving (ready to stop, ns) and what its records
    account for (`cpu`: the runner's sums of its connections and `server_thread` accounts),
    perf's task-clock over its life (None without perf), start-up (exec to ready line)."""

    cpu: server_cpu.ServerCpu
    connections: int
    null_cpu: int
    serving_ns: int
    startup_ns: int
    perf_ns: int | None

    @property
    def conn_ns(self) -> int:
        return self.cpu.conn_ns

    @property
    def of_serving(self) -> float:
        return self.conn_ns / self.serving_ns if self.serving_ns else float("nan")

    @property
    def of_perf(self) -> float | None:
        return self.conn_ns / self.perf_ns if self.perf_ns else None

    def rest(self) -> dict[str, int]:
        """What the connections do not account for while serving, by where it went (ns),
        as the server's own accounts say; without accounts, one figure."""
        if not self.cpu.accounts:
            return {"not itemized (no server_thread account)": self.serving_ns - self.conn_ns}
        c = self.cpu
        left = server_cpu.rest(self.serving_ns, c.conn_ns, c.threads_ns, c.wait_ns)
        return {REST_LABELS[k]: v for k, v in left.items()}


def coverage(lines: list[dict], serving_ns: int, startup_ns: int, perf_ns: int | None) -> Coverage:
    """The figures of one server from its records (connections and `server_thread`
    accounts) and the kernel's readings."""
    cpu = server_cpu.ServerCpu()
    cpu.add_visit(serving_ns, lines)
    conns = [r for r in lines if r.get("side") == "server"]
    return Coverage(
        cpu=cpu,
        connections=len(conns),
        null_cpu=sum(r.get("conn_cpu_ns") is None for r in conns),
        serving_ns=serving_ns,
        startup_ns=startup_ns,
        perf_ns=perf_ns,
    )


def perf_task_clock_ns(text: str) -> int | None:
    """task-clock from `perf stat -x,` output (msec), in ns; None when absent."""
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2] == "task-clock" and fields[0] not in ("", "<not counted>"):
            return round(float(fields[0]) * 1e6)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="chainlab bench cpu", description=__doc__.split("\n")[0])
    ap.add_argument("--handshakes", type=int, default=HANDSHAKES, help="connections per server")
    ap.add_argument("--stack", action="append", help="only these server stacks (repeatable)")
    args = ap.parse_args(argv)
    if args.handshakes < 1:
        ap.error("--handshakes must be at least 1")
    perf = shutil.which("perf")
    eng = str(engine_binary.path())
    servers = [s for s in SERVERS if not args.stack or s[0] in args.stack]
    print(
        f"chainlab bench cpu: {args.handshakes} ML-DSA-65 handshakes one at a time per server; "
        f"perf: {perf or 'not installed (task-clock column empty)'}"
    )
    with tempfile.TemporaryDirectory(prefix="chainlab-bench-cpu-") as tmp_name:
        tmp = Path(tmp_name)
        bench_pki(eng, tmp, CHAIN)
        for stack, model, transport in servers:
            c = measure(eng, stack, model, transport, tmp, args.handshakes, perf)
            print_coverage(f"{stack} {model} {transport}", c)
    return 0


def measure(
    eng: str, stack: str, model: str, transport: str, tmp: Path, n: int, perf: str | None
) -> Coverage:
    key = f"{stack}-{model}-{transport}"
    rec, err, perf_out = (tmp / f"{key}.{x}" for x in ("jsonl", "stderr", "perf"))
    argv = [
        str(engine_binary.stack_path(stack)), "serve", "--pki", str(tmp / "pki"),
        "--groups", GROUP, "--cpus", SERVER_CPU, "--server-model", model, "--workers", "1",
        "--transport", transport, "--records", str(rec),
    ]  # fmt: skip
    if perf:
        argv = [perf, "stat", "-e", "task-clock", "-x,", "-o", str(perf_out), *argv]
    with err.open("wb") as errf:
        server = processes.spawn(argv, subprocess.PIPE, errf)
    try:
        ready = processes.wait_ready(server, 20.0, err)
        pid = int(ready["pid"])  # the engine's own (perf is its parent)
        at_ready = server_cpu.process_cpu_ns(pid)
        subprocess.run(
            [eng, "handshake", "--connect", ready["addr"], "--ca", str(tmp / "pki" / "ca.pem"),
             "--groups", GROUP, "--transport", transport, "--cpus", CLIENT_CPU,
             "--count", str(n), "--records", str(tmp / f"{key}-client.jsonl")],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        time.sleep(SETTLE_S)
        before_stop = server_cpu.process_cpu_ns(pid)
        if at_ready is None or before_stop is None:
            raise SystemExit(f"chainlab bench cpu: cannot read /proc/{pid}/task (the server)")
        os.kill(pid, 15)
        processes.wait_exit(server, 20.0)
    finally:
        processes.stop_group(server)
    perf_ns = perf_task_clock_ns(perf_out.read_text()) if perf and perf_out.exists() else None
    return coverage(records.read(rec), before_stop - at_ready, at_ready, perf_ns)


def print_coverage(label: str, c: Coverage) -> None:
    of_perf = f"{c.of_perf:.2%}" if c.of_perf is not None else "n/a"
    print(
        f"\n{label}: {c.connections} connections ({c.null_cpu} without CPU): their CPU "
        f"{c.conn_ns / 1e6:.1f} ms = {c.of_serving:.2%} of the process's while serving "
        f"({c.serving_ns / 1e6:.1f} ms), {of_perf} of perf's task-clock"
    )
    for what, ns in c.rest().items():
        share = ns / c.serving_ns if c.serving_ns else float("nan")
        print(f"  {what:40s} {ns / 1e6:8.2f} ms  {share:7.2%}")
    print(f"  {'start-up (before ready; not serving)':40s} {c.startup_ns / 1e6:8.2f} ms")


if __name__ == "__main__":
    raise SystemExit(main())
