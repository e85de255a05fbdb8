"""Resumption mixes (`resumption_ratio`, handshake modes resumeNN): what a connection costs
when a share r of them resume, measured, beside the line the full (r = 0) and the resumed
(r = 1) scenario of the same configuration predict: L(r) = (1 - r) F + r R.

Per scenario of a configuration that has both ends, for server CPU, client CPU, latency
and capacity per core (1 / the server's connection CPU): the measured mean with its
interval, the line's value at the share that actually resumed (the two ends' standard
errors, weighted, in quadrature), and whether the point falls off the line (the difference
exceeds z times the standard error of the difference). Capacity's "line" is 1 / the
connection-CPU line (capacity itself does not mix linearly). The share that resumed, with
its Wilson interval, beside the asked r.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.registry import produces
from chainlab.axes.algorithms import resumption_ratio
from chainlab.stats import proportion_ci, z_value

# Metric -> (summary column, unit); capacity is derived from the connection's server CPU.
METRICS = {
    "server_cpu": ("server_cpu_ms", "ms"),
    "client_cpu": ("client_cpu_ms", "ms"),
    "latency": ("mean_ms", "ms"),
    "capacity": ("capacity_cpu_ms", "handshakes/core-s"),
}


def _value(r: dict, metric: str) -> tuple[float, float]:
    """(estimate, standard error) of a scenario's metric (capacity: of its CPU, in ms)."""
    col, _ = METRICS[metric]
    mean, log_se = r[col], r[f"{col}_se"]
    return mean, mean * log_se


def per_scenario(summary: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """One row per scenario of a configuration measured at r = 0 and r = 1 and at least one
    mix between (empty when the store has none)."""
    if summary.empty:
        return pd.DataFrame()
    ok = summary[summary["status"] == "ok"].copy()
    ok["ratio"] = [resumption_ratio(m) for m in ok["handshake_mode"]]
    z = z_value(level)
    rows = []
    # dropna=False: a depth-2 chain has no intermediates (NaN), and is a line all the same.
    # A configuration without its handshake mode: the scenarios of one line share these.
    line_keys = [k for k in twins.identity() if k != "handshake_mode"]
    for _key, g in ok.groupby(line_keys, sort=False, dropna=False):
        ends = {r["ratio"]: r for r in g.to_dict("records") if r["ratio"] in (0.0, 1.0)}
        if len(ends) < 2 or not ((g["ratio"] > 0) & (g["ratio"] < 1)).any():
            continue
        full, resumed = ends[0.0], ends[1.0]
        for r in g.sort_values("ratio").to_dict("records"):
            x = r["ratio"]
            share, share_lo, share_hi = proportion_ci(int(r["n_resumed"]), int(r["cpu_n"]), level)
            out = {
                "scenario_id": r["scenario_id"],
                "line": full["scenario_id"],
                "hierarchy": r["hierarchy"],
                "label_chain": r["label_chain"],
                "ratio": x,
                "resumed_share": share,
                "resumed_share_lo": share_lo,
                "resumed_share_hi": share_hi,
            }
            w = share  # the line at the share that resumed
            for metric in METRICS:
                m, se = _value(r, metric)
                f, f_se = _value(full, metric)
                q, q_se = _value(resumed, metric)
                line = (1 - w) * f + w * q
                line_se = math.hypot((1 - w) * f_se, w * q_se)
                off = 0 < x < 1 and abs(m - line) > z * math.hypot(se, line_se)
                bounds: list[tuple[float, ...]] = [
                    (m, m - z * se, m + z * se),
                    (line, line - z * line_se, line + z * line_se),
                ]
                if metric == "capacity":  # per core-second: 1000 / CPU ms, bounds swap
                    bounds = [
                        tuple(1000 / v if v > 0 else math.nan for v in (e, hi, lo))
                        for e, lo, hi in bounds
                    ]
                (out[metric], out[f"{metric}_lo"], out[f"{metric}_hi"]) = bounds[0]
                (out[f"{metric}_line"], out[f"{metric}_line_lo"], out[f"{metric}_line_hi"]) = (
                    bounds[1]
                )
                out[f"{metric}_off_line"] = bool(off)
            rows.append(out)
    return pd.DataFrame(rows)


@produces("resumption")
def _analysis_resumption(a) -> pd.DataFrame:
    return per_scenario(a.summary, a.config.confidence_level)
