"""Capacity-under-load figures: latency percentiles against offered load (the hockey stick)
and achieved against offered throughput, one line per scenario."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import WIDTH, level, scenario_labels

# Line style per percentile, the colour per scenario (matplotlib's default cycle).
PERCENTILE_STYLES = {"p50_ms": "-", "p90_ms": "--", "p99_ms": "-.", "p999_ms": ":"}


def _load_steps(a):
    steps = a.load_steps
    if steps is None or steps.empty:
        return None
    return steps[steps["kind"] == "step"]


@figure("load_latency", "Latency percentiles versus offered load")
def fig_load_latency(a):
    steps = _load_steps(a)
    if steps is None or steps.empty:
        return None
    ids = sorted(steps["scenario_id"].unique())
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    labels = dict(zip(ids, scenario_labels(a, ids), strict=True))
    for k, sid in enumerate(ids):
        g = steps[steps["scenario_id"] == sid].sort_values("offered_rate")
        colour = f"C{k % 10}"
        x = g["offered_share"].to_numpy(dtype=float)
        for col, style in PERCENTILE_STYLES.items():
            y = g[col].to_numpy(dtype=float)
            err = np.vstack(
                [y - g[f"{col}_lo"].to_numpy(float), g[f"{col}_hi"].to_numpy(float) - y]
            )
            ax.errorbar(x, y, yerr=np.nan_to_num(err, nan=0.0), ls=style, marker="o", ms=3,
                        color=colour, capsize=2, lw=1,
                        label=f"{labels[sid].splitlines()[0]} {col[:-3]}")  # fmt: skip
        lim = g["generator_limited"].to_numpy(dtype=bool)
        if lim.any():
            ax.plot(x[lim], g["p99_ms"].to_numpy(float)[lim], "x", color="black", ms=8)
    ax.set_yscale("log")
    ax.set_xlabel("offered load / the scenario's measured capacity (open loop)")
    ax.set_ylabel(f"latency from the intended start (ms, log; bars: {level(a)} CI)")
    ax.set_title("Latency percentiles versus offered load (x: generator-limited step)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


@figure("load_throughput", "Achieved versus offered throughput")
def fig_load_throughput(a):
    steps = _load_steps(a)
    if steps is None or steps.empty:
        return None
    ids = sorted(steps["scenario_id"].unique())
    labels = dict(zip(ids, scenario_labels(a, ids), strict=True))
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    top = 0.0
    for k, sid in enumerate(ids):
        g = steps[steps["scenario_id"] == sid].sort_values("offered_rate")
        x = g["offered_rate"].to_numpy(float)
        y = g["achieved_rate"].to_numpy(float)
        err = np.vstack(
            [y - g["achieved_rate_lo"].to_numpy(float), g["achieved_rate_hi"].to_numpy(float) - y]
        )
        ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=2, color=f"C{k % 10}",
                    label=labels[sid].splitlines()[0])  # fmt: skip
        top = max(top, float(np.nanmax(x)), float(np.nanmax(y)))
    ax.plot([0, top], [0, top], ls="--", color="grey", lw=0.8, label="achieved = offered")
    ax.set_xlabel("offered load / measured capacity")
    ax.set_ylabel(f"successful handshakes / measured capacity ({level(a)} CI)")
    ax.set_title("Achieved versus offered throughput")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
