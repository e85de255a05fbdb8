"""The cost model checked in instructions (docs/methods/instructions.md#instructions-per-handshake):
each scenario's operations
(chainlab.model.cost, as for CPU) priced with primitives counted under callgrind the way
handshakes are, plus the TLS overhead in instructions fitted as a line in the KiB the
handshake carries, as the CPU model's overhead is (docs/methods/cost-model.md#cost-model). Neither
side of the
check moves with the host's speed, so the error left is the model's own.

Each side is priced as the CPU model prices it: with the implementations its stack runs
(`implementations.measured_key`: aws-lc's ML-DSA for a rustls side, OpenSSL 3.5's for an
OpenSSL 3.5 side), each counted with the engine that times it. The overhead's line is a
side's stack's own, fitted on the store's scenarios of that stack, leaving out the one
predicted (leave-one-out): a scenario's prediction never uses its own measurement.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab.analysis.cost_model import error_medians, scenario_of
from chainlab.axes.handshake import view as handshake_view
from chainlab.campaign.model import Scenario
from chainlab.model import cost, estimate, flights, implementations

SIDES = ("server", "client")


def needed(summary: pd.DataFrame) -> dict[cost.TimingKey, implementations.Timer]:
    """The primitives the counted scenarios' operations use, as each side's stack runs
    them (implementation, subject, op, message), and the engine that times each."""
    out: dict[cost.TimingKey, implementations.Timer] = {}
    for r in _counted(summary).to_dict("records"):
        out |= dict(_priced(scenario_of(r)).values())
    return out


def _priced(
    s: Scenario,
) -> dict[cost.Operation, tuple[cost.TimingKey, implementations.Timer]]:
    """Each operation of a scenario and what prices it (`implementations.measured_key`)."""
    stacks, signing = handshake_view(s).stacks, estimate.signing(s)
    return {
        o: implementations.measured_key(
            stacks[0] if o.side == "client" else stacks[1], signing, *o.key
        )
        for o in estimate.scenario_operations(s)
    }


def _counted(summary: pd.DataFrame) -> pd.DataFrame:
    if summary.empty or "server_instr" not in summary:
        return pd.DataFrame()
    ok = summary[(summary["status"] == "ok") & summary["server_instr"].notna()]
    return ok[ok["client_instr"].notna()]


def per_scenario(summary: pd.DataFrame, instructions: dict) -> pd.DataFrame:
    """Per scenario with instruction counts: each side's stack, measured instructions per
    handshake, its primitives' instructions (`instructions`: timing key -> instructions per
    operation), the residual, and the prediction with its stack's overhead line fitted on
    that stack's other scenarios (a flat line through one; none without), with its error."""
    ok = _counted(summary)
    rows = []
    for r in ok.to_dict("records"):
        s = scenario_of(r)
        priced = _priced(s)
        if any(key not in instructions for key, _timer in priced.values()):
            continue
        client_b, server_b = flights.flight_bytes(s)
        stacks = handshake_view(s).stacks
        row = {
            "scenario_id": r["scenario_id"],
            "kib": (client_b + server_b + flights.client_certificate_bytes(s)) / 1024,
        }
        for side, stack in zip(("client", "server"), stacks, strict=True):
            prim = sum(
                o.count * instructions[key] for o, (key, _t) in priced.items() if o.side == side
            )
            row[f"{side}_stack"] = stack
            row[f"{side}_measured"] = r[f"{side}_instr"]
            row[f"{side}_primitives"] = prim
            row[f"{side}_residual"] = r[f"{side}_instr"] - prim
        rows.append(row)
    df = pd.DataFrame(rows)
    if len(df) < 3:
        return df
    for side in SIDES:
        predicted = []
        for i in range(len(df)):
            rest = df.drop(index=df.index[i])
            rest = rest[rest[f"{side}_stack"] == df[f"{side}_stack"].iloc[i]]
            predicted.append(
                df[f"{side}_primitives"].iloc[i] + _line_at(rest, side, df["kib"].iloc[i])
            )
        df[f"{side}_predicted"] = predicted
        df[f"{side}_error"] = df[f"{side}_predicted"] / df[f"{side}_measured"] - 1
    return df


def _line_at(rest: pd.DataFrame, side: str, kib: float) -> float:
    """The overhead line through `rest`'s residuals at `kib`: fitted on two or more
    scenarios of distinct sizes, flat at their mean otherwise; nan without any."""
    if rest.empty:
        return math.nan
    if rest["kib"].nunique() < 2:
        return float(rest[f"{side}_residual"].mean())
    slope, intercept = np.polyfit(rest["kib"], rest[f"{side}_residual"], 1)
    return float(intercept + slope * kib)


def median_abs_error(df: pd.DataFrame, side: str) -> float:
    col = f"{side}_error"
    return float(df[col].abs().median()) if col in df and len(df) else math.nan


def per_stack(df: pd.DataFrame) -> pd.DataFrame:
    """Per side and stack: scenarios and the median |error| in instructions."""
    rows = []
    for side in SIDES:
        if f"{side}_error" not in df:
            continue
        for stack, g in df.dropna(subset=[f"{side}_error"]).groupby(f"{side}_stack"):
            rows.append(error_medians(side, str(stack), g[f"{side}_error"]))
    return pd.DataFrame(rows)
