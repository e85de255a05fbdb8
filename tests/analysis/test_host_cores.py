"""A scenario's host speed read on each CPU (analysis.load_capacity.host_speed): how far apart
its CPUs were, and the cost model's comparison set apart where they were too far."""

import json
import math
from types import SimpleNamespace

import pandas as pd

from chainlab.analysis.load_capacity import host_speed
from chainlab.runner.host import HOST_DRIFT_LIMIT


def reading(sid, phase, per_cpu, step=-1):
    walls = list(per_cpu.values()) if per_cpu else [40e6]
    return {
        "scenario_id": sid,
        "step": step,
        "phase": phase,
        "wall_ns": sum(walls) / len(walls),
        "cpu_ns": sum(walls) / len(walls),
        "steal_ns": None,
        "per_cpu_ns": json.dumps({c: [w, w] for c, w in per_cpu.items()}) if per_cpu else None,
    }


def test_cpus_apart_at_the_start_or_end_set_a_scenario_apart():
    rows = [
        reading("even", "start", {"0": 40e6, "1": 41e6}),
        reading("even", "end", {"0": 40e6, "1": 40e6}),
        # CPU 1 took 1.6x CPU 0's time at the end (this VM, 2026-11-30: 23 ms against 38).
        reading("apart", "start", {"0": 40e6, "1": 40e6}),
        reading("apart", "end", {"0": 25e6, "1": 40e6}),
        # A load step's readings are pinned to the server's cores: not compared.
        reading("apart", "start", {"0": 10e6, "1": 40e6}, step=0),
        reading("pinned", "start", None),
        reading("pinned", "end", None),
    ]
    h = host_speed(SimpleNamespace(host_reference=pd.DataFrame(rows))).set_index("scenario_id")
    assert h.loc["even", "uneven"] == 41 / 40 - 1 and not h.loc["even", "cores_apart"]
    assert h.loc["apart", "uneven"] == 40 / 25 - 1 > HOST_DRIFT_LIMIT
    assert h.loc["apart", "cores_apart"]
    # The mean of its CPUs moved too (40 -> 32.5 ms), apart from the CPUs' own gap.
    assert h.loc["apart", "moved"]
    assert math.isnan(h.loc["pinned", "uneven"]) and not h.loc["pinned", "cores_apart"]
