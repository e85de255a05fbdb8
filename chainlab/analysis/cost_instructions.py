"""The cost model checked in instructions (docs/methods/instructions.md#instructions-per-handshake):
each scenario's operations
(chainlab.model.cost, as for CPU) priced with primitives counted under callgrind the way
handshakes are, plus the TLS overhead in instructions fitted as a line in the KiB the
handshake carries, as the CPU model's overhead is (docs/methods/cost-model.md#cost-model). Neither
side of the
check moves with the host's speed, so the error left is the model's own.

The overhead's line is fitted on the store's own scenarios, leaving out the one predicted
(leave-one-out): a scenario's prediction never uses its own measurement.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab.analysis.cost_model import scenario_of
from chainlab.model import cost, estimate, flights

SIDES = ("server", "client")


def needed(summary: pd.DataFrame) -> set[tuple[str, str, str | None]]:
    """The primitives (subject, op, message) the counted scenarios' operations use."""
    out: set = set()
    for r in _counted(summary).to_dict("records"):
        out |= cost.primitive_keys(estimate.scenario_operations(scenario_of(r)))
    return out


def _counted(summary: pd.DataFrame) -> pd.DataFrame:
    if summary.empty or "server_instr" not in summary:
        return pd.DataFrame()
    ok = summary[(summary["status"] == "ok") & summary["server_instr"].notna()]
    return ok[ok["client_instr"].notna()]


def per_scenario(summary: pd.DataFrame, instructions: dict) -> pd.DataFrame:
    """Per scenario with instruction counts: each side's measured instructions per
    handshake, its primitives' instructions (`instructions`: key -> instructions per
    operation), the residual, and the prediction with the overhead line fitted on the
    other scenarios, with its error."""
    ok = _counted(summary)
    rows = []
    for r in ok.to_dict("records"):
        s = scenario_of(r)
        ops = estimate.scenario_operations(s)
        if any(o.key not in instructions for o in ops):
            continue
        client_b, server_b = flights.flight_bytes(s)
        row = {
            "scenario_id": r["scenario_id"],
            "kib": (client_b + server_b + flights.client_certificate_bytes(s)) / 1024,
        }
        for side in SIDES:
            prim = sum(o.count * instructions[o.key] for o in ops if o.side == side)
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
            slope, intercept = np.polyfit(rest["kib"], rest[f"{side}_residual"], 1)
            predicted.append(
                df[f"{side}_primitives"].iloc[i] + intercept + slope * df["kib"].iloc[i]
            )
        df[f"{side}_predicted"] = predicted
        df[f"{side}_error"] = df[f"{side}_predicted"] / df[f"{side}_measured"] - 1
    return df


def median_abs_error(df: pd.DataFrame, side: str) -> float:
    col = f"{side}_error"
    return float(df[col].abs().median()) if col in df and len(df) else math.nan
