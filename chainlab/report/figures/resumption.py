"""Resumption-mix figure: cost per connection against the share that resumes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import WIDTH

PANELS = (("server_cpu", "server CPU per connection (ms)"), ("latency", "latency (ms)"))


@figure("resumption_mix", "Cost per connection against the resumption ratio")
def fig_resumption_mix(a):
    r = a.resumption
    if r.empty:
        return None
    fig, axes = plt.subplots(1, len(PANELS), figsize=(WIDTH, 4.2))
    for ax, (metric, label) in zip(axes, PANELS, strict=True):
        for _, g in r.groupby("line", sort=False):
            g = g.sort_values("resumed_share")
            err = [g[metric] - g[f"{metric}_lo"], g[f"{metric}_hi"] - g[metric]]
            points = ax.errorbar(g["resumed_share"], g[metric], yerr=err, fmt="o", capsize=3,
                                 label=g["label_chain"].iloc[0])  # fmt: skip
            # The line between the two ends, drawn densely (straight only on a linear axis).
            full = g[g["ratio"] == 0][metric].iloc[0]
            resumed = g[g["ratio"] == 1][metric].iloc[0]
            w = np.linspace(0, 1, 50)
            ax.plot(w, (1 - w) * full + w * resumed, "-", color=points[0].get_color(), lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("share of connections that resumed")
        ax.set_ylabel(label + ", log scale")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Cost per connection against the resumption ratio")
    return fig
