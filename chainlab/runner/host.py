"""The host's speed, measured: `chainlab-engine reference` (a fixed SHAKE-256 workload) timed
on given cores, so measurements minutes apart can be read against how fast the host was.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

# Rounds of the engine's reference workload: ~20 ms on this machine kind (16 rounds took
# 40.4-40.9 ms in three runs' 30-64 readings on 2026-11-27, their spells up to 66 ms), so
# timing it before and after each scenario costs about 0.05 s. Twenty milliseconds are
# thousands of clock resolutions and many scheduler ticks: enough to read a 10 % move
# (HOST_DRIFT_LIMIT), while each reading was 6 % of a warm paper-matrix scenario's overhead.
ROUNDS = 8
# Far above the workload's time on any machine that can run a campaign.
TIMEOUT_S = 60.0
# A scenario whose host speed (the workload's time at its end over its start, minus 1)
# moved more than this is flagged in the progress and the report: the wall-clock figures of
# its start and end were taken on hosts that far apart. This VM's fixed workload took 40 to
# 77 ms within one run; 10 % is past the few per cent one scenario's own noise moves it.
HOST_DRIFT_LIMIT = 0.10


class ReferenceError(Exception):
    pass


def reference(engine: Path, cpus: str | None) -> dict:
    """{wall_ns, cpu_ns, cpus} of one run of the reference workload."""
    argv = [str(engine), "reference", "--rounds", str(ROUNDS)]
    if cpus is not None:
        argv += ["--cpus", cpus]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ReferenceError(f"the reference workload took over {TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        raise ReferenceError(f"reference workload: {done.stderr.strip() or done.returncode}")
    out = json.loads(done.stdout)
    return {
        "wall_ns": out["wall_ns"],
        "cpu_ns": out["cpu_ns"],
        "cpus": cpus,
        "steal_ns": steal_ns(),
    }


def steal_ns(stat: Path = Path("/proc/stat")) -> int | None:
    """The machine's steal time so far, all CPUs (the hypervisor ran something else while a
    CPU of this guest was runnable): the `cpu` line's 8th value, in clock ticks. None where
    the kernel does not report it."""
    try:
        line = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if line[0] != "cpu" or len(line) < 9:
        return None
    return int(line[8]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def drift(rows: list[dict]) -> float | None:
    """The scenario's host drift from its reference rows (step -1): end over start, minus 1
    (positive: the host got slower); None until both are timed."""
    own = {r["phase"]: r["wall_ns"] for r in rows if r["step"] == -1}
    start, end = own.get("start"), own.get("end")
    if start and end and start > 0 and end > 0:
        return end / start - 1
    return None
