"""Host speed: how far the machine's speed moved during each scenario, from a fixed
CPU-bound workload timed at its start and end (and around each load step)."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, codes, ints, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


@section(30)
def build(b: Builder) -> Section | None:
    h = b.a.host_speed
    if h is None or h.empty:
        return None
    s = Section("host", "Host speed during each scenario")
    s.blocks.append(
        "A fixed workload (`chainlab-engine reference`: SHAKE-256 over a fixed buffer, the Keccak "
        "work SLH-DSA-SHAKE and ML-DSA spend most of their time in) timed at each "
        "scenario's start and end and around each load step (on the server's cores where "
        "a campaign's [load] pins the server). Its "
        "time moves only with the host: a drift or a spread of several per cent explains "
        "wider intervals and shifts between scenarios measured minutes apart (this VM's "
        "speed is known to drift), and capacity can be read per unit of host speed. "
        "'shared core': the workload waited for its core (wall time over 1.2 × its CPU)."
    )
    cols = [
        ("scenario", codes(h["scenario_id"])),
        ("timings", ints(h["n"])),
        ("start ms", nums(h["start_ms"], 4)),
        ("end ms", nums(h["end_ms"], 4)),
        ("fastest ms", nums(h["fastest_ms"], 4)),
        ("slowest ms", nums(h["slowest_ms"], 4)),
        ("drift (end / start − 1)", [f.pct(x * 100) if x == x else "n/a" for x in h["drift"]]),
        ("spread (slowest / fastest − 1)", percents(h["spread"])),
        ("shared core", [f.yes_no(x) for x in h["shared_core"]]),
    ]
    s.blocks.append(
        b.table("host_speed", "Reference workload per scenario", "Lower is faster.", h, cols)
    )
    return s
