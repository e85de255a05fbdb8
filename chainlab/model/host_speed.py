"""The cost model at the host's speed (docs/methods/cost-model.md#the-hosts-speed).

A shared VM's speed swings: this one's fixed reference workload took 40 to 77 ms within one
run, and a primitive timed in a fast minute priced every later scenario as if the host were
still that fast (composite.toml's OpenSSL server, measured on a host 1.6x faster than its
cached primitives: +59 % predicted). So each primitive and reference handshake is stored with
the host reference workload's wall time around its measurement (`primitive_samples.
host_cpu_ns`, `chainlab.runner.host.at_host`):

- `normalised` brings every input to one host speed, the median reading of the inputs that
  have one (`CostModel.host_ns`);
- `at_speed` scales the whole model, every CPU figure and loopback latency, to another
  reading: a scenario's is the mean of the readings at its start and end.

Both take the CPU-bound work of a handshake to slow as the reference workload does, as the
report's normalised latency does (chainlab.analysis.load_capacity.normalised_latency); a
link's delay is no CPU and is not scaled (chainlab.model.estimate.network_cost adds it).
Inputs without a reading (a store before schema 16) are taken as they are, and a model none
of whose inputs has one is never scaled.

The host also spreads a handshake's latency: its own jitter (`host_sd_ms`, from the stacks'
reference handshakes) and other processes' load read as a run starts (`contention_cv`,
`contention_sd_ms`), which the run-time estimate's adaptive counts take.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from chainlab.model.cost import CostModel, Line, Overhead, Timing

# A summary row's figures that are times (scaled); its counts and KiB are not.
_MEANS = ("cpu_mean", "wall_mean", "server_mean")
_VARIANCES = ("cpu_var", "wall_var", "server_var")
# A reference's or an extra's figures that are times, as cost_fit names them.
_TIMES = ("latency", "latency_se", "client", "client_se", "server", "server_se")


def normalised(rows: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], float | None]:
    """The summary rows (Store.primitive_summary) each brought to the median host reading of
    those that have one (`host_mean`), and that reading (None: no row has one, the rows as
    they are)."""
    out = [dict(r) for r in rows]
    readings = [float(r["host_mean"]) for r in out if _reading(r.get("host_mean"))]
    if not readings:
        return out, None
    host_ns = statistics.median(readings)
    for r in out:
        if _reading(r.get("host_mean")):
            f = host_ns / float(r["host_mean"])
            for k in _MEANS:
                if _number(r.get(k)):
                    r[k] = float(r[k]) * f
            for k in _VARIANCES:
                if _number(r.get(k)):
                    r[k] = float(r[k]) * f * f
    return out, host_ns


def factor(model: CostModel, host_ns: float | None) -> float | None:
    """How much slower than the model's inputs a host reading `host_ns` is (None: the model
    or the reading has no host speed)."""
    if model.host_ns is None or host_ns is None or not _reading(host_ns):
        return None
    return host_ns / model.host_ns


def at_reading(model: CostModel | None, host_ns: float | None) -> CostModel | None:
    """`model` at the speed a host reading `host_ns` shows (`factor`, `at_speed`); as it is
    without a reading or a model with one. The run-time estimate prices a run so, from the
    reading as it starts: over 31 runs of 2026-11-29 and -30 (their first reading as the
    start's), estimate / wall time fell within 15 % in 25 so against 21 unscaled, the worst
    1.51 against 1.88; the host read 21 ms against the cached primitives' 43 ms for hours."""
    if model is None:
        return None
    f = factor(model, host_ns)
    return model if f is None else at_speed(model, f)


def at_speed(model: CostModel, f: float) -> CostModel:
    """The model on a host `f` times as slow as its inputs' (every time scaled by `f`)."""
    return replace(
        model,
        timings={k: Timing(t.mean_ms * f, t.se_ms * f, t.n) for k, t in model.timings.items()},
        overheads={k: _overhead(o, f) for k, o in model.overheads.items()},
        stack_references={
            stack: {key: _times(ref, f) for key, ref in refs.items()}
            for stack, refs in model.stack_references.items()
        },
        path_extras={
            k: {side: _line(line, f) for side, line in sides.items()}
            for k, sides in model.path_extras.items()
        },
        peer_extras={k: _times(v, f) for k, v in model.peer_extras.items()},
        wait_extras={k: _times(v, f) for k, v in model.wait_extras.items()},
        host_ns=None if model.host_ns is None else model.host_ns * f,
    )


# How long a run watches the CPUs for other processes' load before it estimates
# (chainlab.runner.host.foreign_load).
LOAD_WINDOW_S = 0.3


def contention_cv(busy: float) -> float:
    """The latency spread a handshake gets from another process keeping one of the CPUs its
    two sides run on busy a share `busy` of the time, in spells longer than a handshake: the
    side on that CPU (about half the handshake's work) runs at half speed while the other
    process does, so a handshake takes 1 or 1.5 times as long, the latter with probability
    `busy`: sd 0.5 sqrt(busy (1 - busy)) over mean 1 + busy / 2. A neighbour busy half of
    each tenth of a second gives 0.2; the scenarios run beside one spread by a cv of about
    0.22 (ECDSA and SLH-DSA-SHAKE-128f leaves, 2026-11-30). A core always busy slows its
    side steadily (0.0 here: no spread), an idle one none."""
    b = min(max(busy, 0.0), 1.0)
    return 0.5 * math.sqrt(b * (1 - b)) / (1 + b / 2)


def with_contention(model: CostModel | None, busy: float | None) -> CostModel | None:
    """`model` with the spread other processes' load makes (`contention_cv`; `busy`: the
    busiest CPU's share, chainlab.runner.host.foreign_load), as it is without a reading."""
    if model is None or busy is None:
        return model
    return replace(model, noise_cv=contention_cv(busy))


def _overhead(o: Overhead, f: float) -> Overhead:
    return Overhead(
        {k: _line(v, f) for k, v in o.full.items()},
        {k: _line(v, f) for k, v in o.resumed.items()},
    )


def _line(line: Line, f: float) -> Line:
    return Line(line.intercept_ms * f, line.per_kib_ms * f, line.se_ms * f)


def _times(figures: Mapping[str, float], f: float) -> dict[str, float]:
    return {k: v * f if k in _TIMES else v for k, v in figures.items()}


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def _reading(x: Any) -> bool:
    return _number(x) and x > 0


# A scenario's start and end host readings (chainlab.runner.host) bracket the window it ran
# in, up to this long: a scenario starting less than WINDOW_S after the window's first
# reading takes that reading as its start, and one that ends before the window is over
# waits for the reading that closes it as its end (chainlab.runner.window), so scenarios
# shorter than a reading's worth share one pair, and are written together. A reading cost
# ~40 ms on 2026-11-30 (its workload and a process start) and a store commit ~50 ms;
# interop.toml read the host 250 times for 249 scenarios of 54 ms of handshakes each and
# committed each alone: 22.6 s of its 49.4 s. Windows of 0.5, 1 and 2 s took 35, 20 and 10
# readings in one run each; the scenarios whose readings moved more than 10 % were 88, 96
# and 171 of 249 (87 reading each scenario).
WINDOW_S = 1.0
# A window's own cost: its reading and its store commit (interop.toml, 2026-11-30: 36-40 ms
# and 51-52 ms each over 14-17 windows).
WINDOW_COST_S = 0.09


def windows(seconds: list[float]) -> int:
    """The windows scenarios taking `seconds` each, in the order they run, fill: one closes
    as a scenario ends WINDOW_S or more after it opened."""
    n, open_s = 0, 0.0
    for s in seconds:
        open_s += s
        if open_s >= WINDOW_S:
            n, open_s = n + 1, 0.0
    return n + (open_s > 0)


# -- the spread of a handshake's latency on this host -------------------------------------
# The spread of a loopback handshake's latency (chainlab.model.estimate.latency_sd_ms) is at
# least the spread this host showed in the stacks' own reference handshakes (the cost model's
# ECDSA full one: no rejection loop, so its spread is the host's and the stack's). On this
# VM (2026-11-29) the reference workload between scenarios moved by a cv of 0.16-0.28 and
# loopback handshakes by a median cv of 0.16-0.27 (nine stores); with 1.7 %, composite.toml's
# rustls ML-DSA and composite scenarios were estimated at 100-190 handshakes, took 392-711.
# That spread is the host's jitter, short delays a handshake collects while it runs: its
# variance grows with the handshake's length, so its sd with the square root of it
# (`host_sd_ms`), not in proportion. Taken in proportion, a 0.2 spread of 0.65 ms ECDSA
# handshakes gave 38 ms SLH-DSA-SHAKE-128f leaves 7.7 ms and the time cap's 129 handshakes
# where they spread by 0.01-0.03 and met their 2 % at the minimum of 20 (quick.toml,
# 2026-12-01); over that day's adaptive loopback scenarios of five campaigns the expected
# handshake time went from 1.21-1.97 of what they took to 1.02-1.21 (quick.toml, beside
# other load at its start, 2.94 to 1.94).
NOISE_REFERENCE = ("ecdsa", "full")
# Other load spreads a long handshake less than in proportion: within one spell of the load
# its sd grows with the length to the power CONTENTION_GROWTH (part of its work moves to the
# idle core), and a handshake longer than CONTENTION_SPELL_MS spans several spells, whose
# delays add like independent ones: beyond it the sd grows with the square root of the
# length. Beside a process busy on one core half of each tenth of a second (noise_cv 0.20 at
# OpenSSL's 0.66 ms references), ML-DSA-65 chains (1.5-3 ms) spread by 0.27-0.42, SLH-DSA
# leaves of 12-100 ms by 0.01-0.12, of 0.24-1.18 s by 0.003-0.021 (0.005-0.031 in one run);
# one power alone (0.72, with no spell) put those of 1.18 s at 0.025 and four runs of
# signature-placement.toml, which took 162, 169, 190 and 318 s, at 1.73, 1.82, 1.57 and 0.96
# of their wall time. Over 27 stored runs of ten campaigns beside that load, powers 0.72-0.9
# by spells of 20, 50, 100 ms or none: 0.8 by 20 ms had 23 within 15 % (one power alone 22,
# the nearest pair 22), signature-placement.toml's at 1.03, 1.09, 0.94 and 0.58 (the 318 s
# run took 24-48 handshakes where the others took 10), all-placements.toml's at 0.94, 0.88
# and 0.78, quick.toml's at 1.12, 0.99 and 0.99 (2026-12-01; `chainlab bench model`).
CONTENTION_GROWTH = 0.8
CONTENTION_SPELL_MS = 20.0


def host_cv(model: CostModel | None, stack: str) -> float:
    """The latency spread (sd over mean) of the stack's NOISE_REFERENCE handshakes as the
    cost model holds them, 0 where it holds none."""
    got = (model.stack_references.get(stack, {}) if model is not None else {}).get(NOISE_REFERENCE)
    if not got or got.get("latency", 0.0) <= 0:
        return 0.0
    return float(got.get("latency_se", 0.0) * math.sqrt(got.get("n", 0)) / got["latency"])


def host_sd_ms(model: CostModel | None, stack: str, base_ms: float) -> float:
    """The host's jitter in a `base_ms` handshake on the stack: the least spread (`host_cv`)
    of any stack's NOISE_REFERENCE handshakes the model holds, at this stack's reference
    latency, growing with the square root of the handshake's length (see NOISE_REFERENCE); 0
    where the model holds no reference of the stack. The jitter is the host's, and each
    stack's references were taken at another moment: on 2026-12-01 those taken in the first
    minutes after a fresh build spread by 0.20-0.35 (OpenSSL 3.5, BoringSSL, Go), rustls'
    four minutes later 0.08, and the scenarios' ECDSA handshakes 0.05-0.12 for the next hour.
    With each stack's own, browser.toml was estimated at 1.27 of its wall time and
    stacks.toml at 1.25; with the least, 1.06 and 1.12."""
    if model is None or host_cv(model, stack) <= 0:
        return 0.0
    cv = min(c for c in (host_cv(model, st) for st in model.stack_references) if c > 0)
    reference_ms = float(model.stack_references[stack][NOISE_REFERENCE]["latency"])
    return cv * math.sqrt(reference_ms * max(base_ms, 0.0))


def contention_sd_ms(model: CostModel | None, stack: str, base_ms: float) -> float:
    """The spread other processes' load makes (`model.noise_cv`, `contention_cv`) in
    a `base_ms` handshake on the stack: that cv at the stack's NOISE_REFERENCE latency, its sd
    growing with the length to the power CONTENTION_GROWTH up to CONTENTION_SPELL_MS (in
    proportion where the model holds no reference), with its square root beyond."""
    if model is None or model.noise_cv <= 0:
        return 0.0
    noise = float(model.noise_cv)
    length = max(base_ms, 0.0)
    got = model.stack_references.get(stack, {}).get(NOISE_REFERENCE)
    reference_ms = float(got["latency"]) if got and got.get("latency", 0.0) > 0 else None
    spell = max(CONTENTION_SPELL_MS, reference_ms or 0.0)
    within, spells = min(length, spell), math.sqrt(max(length / spell, 1.0))
    if reference_ms is None:
        return noise * within * spells
    return float(noise * reference_ms * (within / reference_ms) ** CONTENTION_GROWTH * spells)
