"""The host's speed, measured: `chainlab-engine reference` (a fixed SHAKE-256 workload) timed
on given cores, so measurements minutes apart can be read against how fast the host was.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

# Rounds of the engine's reference workload: ~40 ms on this machine kind, so timing it
# before and after each scenario costs about 0.1 s (a few per cent of a scenario's overhead).
ROUNDS = 16
# Far above the workload's time on any machine that can run a campaign.
TIMEOUT_S = 60.0


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
    return {"wall_ns": out["wall_ns"], "cpu_ns": out["cpu_ns"], "cpus": cpus}
