"""Scenarios set against their twins: the scenario identical in every axis but one, at that
axis's reference value (compression against none, a served-chain policy against
leaf+intermediates, a client certificate against none). The operator's levers are read this
way (compression, intermediates, client certificates).

Intervals (docs/methods/statistics.md#ratios-between-scenarios,
docs/methods/levers.md#intermediates-anchors-client-certificates): a ratio of two independent means
on the log scale, with
the delta-method standard errors the summary carries (`<name>_se`, relative); a difference
of two independent means with their standard errors added in quadrature (Welch).
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab import axes
from chainlab.stats import difference_ci, ratio_ci


def identity() -> tuple[str, ...]:
    """Everything that identifies a scenario in the summary: every axis's columns
    (chainlab.axes), the hierarchy by its algorithm at each position (its label
    names families only: ML-DSA-44 and ML-DSA-65 read alike), a target never (targets are
    not in the lab's summary)."""
    return tuple(c for a in axes.registered() if a is not axes.TARGET for c in a.column_names)


def _columns_of(axis: str) -> tuple[str, ...]:
    """The summary columns an axis (its key, or one of its columns) sets."""
    for a in axes.registered():
        if axis == a.key or axis in a.column_names:
            return a.column_names
    return (axis,)


def pairs(summary: pd.DataFrame, axis: str, reference: str) -> list[tuple[dict, dict]]:
    """(scenario, twin) for every successful scenario whose `axis` is not `reference` and
    whose twin (the same scenario with `axis` = `reference`) succeeded too. `axis` is a
    summary column; `stack` (the pair's label) stands for both sides' stacks."""
    if summary.empty or axis not in summary:
        return []
    ok = summary[summary["status"] == "ok"]
    own = _columns_of(axis)
    others = [k for k in identity() if k not in own and k != axis and k in ok]

    def key(r: dict) -> tuple:
        # Missing positions (a depth-2 chain has no intermediate) are NaN: equal as None.
        return tuple(None if pd.isna(r[k]) else r[k] for k in others)

    twins = {key(r): r for r in ok[ok[axis] == reference].to_dict("records")}
    out = []
    for r in ok[ok[axis] != reference].to_dict("records"):
        twin = twins.get(key(r))
        if twin is not None:
            out.append((r, twin))
    return out


def ratio(a: dict, b: dict, name: str, level: float) -> tuple[float, float, float]:
    """a[name] / b[name] with its interval (independent means, log scale: stats.ratio_ci)."""
    return ratio_ci(a[name], a[f"{name}_se"], b[name], b[f"{name}_se"], level)


def difference(a: dict, b: dict, name: str, level: float) -> tuple[float, float, float]:
    """a[name] - b[name] with its interval (independent means: stats.difference_ci, with
    absolute standard errors from the relative ones the summary carries)."""
    se_a, se_b = a[name] * a[f"{name}_se"], b[name] * b[f"{name}_se"]
    return difference_ci(a[name], se_a, b[name], se_b, level)


def instruction_ratios(a: dict, b: dict, level: float, cpu: dict) -> dict:
    """a / b in instructions per handshake, server and client
    (docs/methods/instructions.md#instructions-per-handshake), with
    the sides whose CPU ratio (`cpu`: a row holding server_/client_cpu_ratio and their
    bounds) and instruction ratio disagree beyond their intervals."""
    out: dict = {}
    for side in ("server", "client"):
        name = f"{side}_instr"
        if name in a and name in b:
            est, lo, hi = ratio(a, b, name, level)
        else:
            est = lo = hi = math.nan
        out[f"{name}_ratio"], out[f"{name}_ratio_lo"], out[f"{name}_ratio_hi"] = est, lo, hi
    out["instr_disagrees"] = instructions_disagree({**cpu, **out})
    return out


def instructions_disagree(row: dict) -> str:
    """The sides whose CPU ratio and instruction ratio disagree beyond their intervals (the
    two intervals do not overlap): '' when they agree or either is missing."""
    out = []
    for side in ("server", "client"):
        c_lo, c_hi = row.get(f"{side}_cpu_ratio_lo"), row.get(f"{side}_cpu_ratio_hi")
        i_lo, i_hi = row.get(f"{side}_instr_ratio_lo"), row.get(f"{side}_instr_ratio_hi")
        bounds = [x for x in (c_lo, c_hi, i_lo, i_hi) if isinstance(x, float) and math.isfinite(x)]
        if len(bounds) < 4:
            continue
        c_lo, c_hi, i_lo, i_hi = bounds
        if c_hi < i_lo or i_hi < c_lo:
            out.append(side)
    return ", ".join(out)
