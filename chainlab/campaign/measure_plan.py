"""The campaign file's [measure] table (docs/campaigns.md, "Instruction counts"): whether each
scenario also counts the instructions of a few handshakes per side under valgrind's
callgrind, how many, with which random bytes, and [[measure.override]] counts for the
scenarios a `where` table matches. `v` is the campaign loader's validator, whose problems
these report into.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake
    from chainlab.campaign.model import Scenario
    from chainlab.campaign.tables import TableReaders

import shutil
from dataclasses import replace

from chainlab.axes import stack as stacks
from chainlab.campaign.matrix import matches
from chainlab.campaign.model import INSTRUCTION_SOURCES, RANDOM_SOURCES, MeasurePlan
from chainlab.schema import Int, Str

MEASURE_FIELDS = {
    "instructions": Str(choices=INSTRUCTION_SOURCES),
    # Handshakes counted per scenario: callgrind runs each side ~50x slower, and a count per
    # connection is exact up to the algorithm's own variation (ML-DSA signing's rejection
    # sampling), so a few suffice.
    "count": Int(1, 1000),
    # Handshakes before them in the same processes (first-use set-up: lazy tables, caches).
    "warmup": Int(0, 100),
    # The counted handshakes' random bytes: 'seeded' repeats them run to run, so a count that
    # depends on them (ML-DSA signing's rejection sampling) repeats too.
    "random": Str(choices=RANDOM_SOURCES),
}
OVERRIDE_KEYS = ("count", "warmup")
# The stack capability `random = "seeded"` needs (the engines' --random-seed).
SEEDED = "seeded_random"
# Callgrind's slowdown of a handshake's CPU work, the least a counted handshake takes whatever
# its work, and the start of the two processes under valgrind: fitted on the 15 scenarios of
# signature-placement-instructions.toml (2026-12-01, least squares over each scenario's
# counting time against its count times its native mean): 101 ML-DSA-65 leaves in 5.3-6.1 s
# (1.2-1.4 ms natively), under an SLH-DSA root 8.5-9.1 s (2.3-2.6 ms), 2 SLH-DSA-SHAKE-192s
# leaves in 51.9-55.4 s (1.12-1.19 s); each within 1.2 s of 3.2 s + 21.8 x native, no floor
# fitted. With 30x, a 0.15 s floor (a benchmark's time per attempt, valgrind's start
# included) and 3.0 s, the campaign's estimate was 1.35 of its wall time.
CALLGRIND_SLOWDOWN = 22
CALLGRIND_HANDSHAKE_FLOOR_S = 0.02
CALLGRIND_START_S = 3.2


def read(v: TableReaders, value: Any) -> MeasurePlan:
    """[measure], and its overrides into `v.measure_overrides`."""
    v.measure_overrides = []
    if value is None:
        return MeasurePlan()
    table = v.table(value, "measure")
    got = v.p.check(MEASURE_FIELDS, table, "measure", also=("override",))
    fields = {k: MEASURE_FIELDS[k] for k in OVERRIDE_KEYS}
    v.measure_overrides = v.read_overrides(table.get("override", []), "measure.override", fields)
    plan = MeasurePlan(**{k: x for k, x in got.items() if x is not None})
    if plan.counts_instructions and shutil.which("valgrind") is None:
        v.bad(
            "measure.instructions",
            "'callgrind' needs valgrind, which is not installed here; allowed: 'none', or "
            "install valgrind (`make setup` does)",
        )
    return plan


def for_scenario(
    v: TableReaders, plan: MeasurePlan, parts: dict[str, Any], h: Handshake, sid: str
) -> MeasurePlan | None:
    """The scenario's plan with the overrides it matches applied in order (None: no
    instruction counting); a scenario the counted span cannot cover is refused."""
    if not plan.counts_instructions:
        return None
    for where, values in v.measure_overrides:
        if matches(where, parts, sid) and None not in values.values():
            plan = replace(plan, **values)
    why = None
    if h.quic:
        why = "transport 'quic' (a QUIC server's connections share one loop)"
    elif h.target is not None:
        why = f"target {h.target!r} (its server is not chainlab's to count)"
    if why:
        v.bad(
            "measure.instructions",
            f"scenario {sid}: instruction counts with {why}; allowed: TCP scenarios of "
            "chainlab's own servers (exclude the others, or instructions = 'none')",
        )
    if plan.random == "seeded":
        for side, stack in zip(("client", "server"), h.stacks, strict=True):
            if not stacks.has(stack, SEEDED):
                v.bad(
                    "measure.random",
                    f"scenario {sid}: {side} stack {stack} cannot do "
                    f"{stacks.FEATURES[SEEDED].text} (missing capability: {SEEDED}); allowed: "
                    "random = 'system' (or exclude its scenarios)",
                )
    return plan


def seconds(s: Scenario, handshake_ms: float, path_ms: float = 0.0) -> float:
    """Estimated wall time of a scenario's instruction counting (0 without): each counted
    handshake's CPU work (`handshake_ms`, on loopback) slowed by callgrind, plus what its
    emulated path adds to one attempt (`path_ms`: the link's delays, which callgrind does
    not slow; over a 50 ms round trip 11 counted rustls handshakes took 6.1-7.8 s against
    3.9-6.0 s on loopback, composite.toml 2026-11-30)."""
    plan = s.measure
    if plan is None:
        return 0.0
    n = plan.count + plan.warmup
    each = max(CALLGRIND_HANDSHAKE_FLOOR_S, handshake_ms * CALLGRIND_SLOWDOWN / 1000)
    return CALLGRIND_START_S + n * (each + path_ms / 1000)
