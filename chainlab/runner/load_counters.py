"""What the kernel counts for a load step's server (chainlab.runner.load): its process's CPU,
its cores' busy and total time, listen-queue overflows and drops on loopback, and the
emulated link's timer lateness; read before and after each step, their deltas go into the
step's `load_steps` row."""

from __future__ import annotations

import os
from pathlib import Path

from chainlab.campaign.model import cpu_list
from chainlab.runner.scenario_state import Visit, load_plan_of


def server(ex: Visit) -> dict:
    """What the kernel counts for the server: its process's CPU, its cores' busy and total
    time, and (on loopback: the counters are per network namespace) listen-queue drops."""
    link = ex.link
    out = {
        "link": link.forwarder_stats().get("timer") if link is not None else None,
        "process": process_cpu_s(ex.server_pid),
        "cores": cores_time(cpu_list(load_plan_of(ex).server_cpus)),
        "netstat": listen_counters() if ex.on_loopback else None,
    }
    return out


def deltas(before: dict, after: dict, wall_s: float, cores: int) -> dict:
    def delta(key):
        a, b = before[key], after[key]
        return None if a is None or b is None else tuple(y - x for x, y in zip(a, b, strict=True))

    proc = None
    if before["process"] is not None and after["process"] is not None:
        proc = after["process"] - before["process"]
    busy = delta("cores")
    net = delta("netstat")
    link = None
    if before["link"] and after["link"]:
        wakeups = after["link"]["wakeups"] - before["link"]["wakeups"]
        late = after["link"]["late_ns_total"] - before["link"]["late_ns_total"]
        link = late / wakeups / 1e3 if wakeups else None
    return {
        "link_timer_late_us_mean": link,
        "server_process_cpu_s": proc,
        "server_cores_busy": busy[0] / busy[1] if busy and busy[1] > 0 else None,
        "listen_overflows": net[0] if net else None,
        "listen_drops": net[1] if net else None,
    }


def process_cpu_s(pid: int | None) -> float | None:
    """utime + stime of a process, seconds (/proc/<pid>/stat fields 14 and 15)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cores_time(cpus: list[int]) -> tuple[int, int] | None:
    """(busy, total) jiffies of the given CPUs from /proc/stat: busy is all but idle and
    iowait, so it includes the kernel's network work for the server."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    busy = total = 0
    wanted = {f"cpu{c}" for c in cpus}
    for line in lines:
        parts = line.split()
        if parts and parts[0] in wanted:
            values = [int(x) for x in parts[1:9]]
            total += sum(values)
            busy += sum(values) - values[3] - values[4]
    return (busy, total)


def listen_counters() -> tuple[int, int] | None:
    """(ListenOverflows, ListenDrops) of TcpExt in /proc/net/netstat."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=True))
            return int(table.get("ListenOverflows", 0)), int(table.get("ListenDrops", 0))
    return None
