"""The report's figures (matplotlib, Agg): the paper's Figures 1-20 and a few more.

Every per-scenario figure lists scenarios in the same order (by mean latency) with the same
two-line labels (hierarchy, then key exchange and whatever else varies) and colours each by
its placement class (families.PLACEMENT_COLOURS). Intervals are drawn wherever the table
behind the figure has one. Each function returns a Figure or None when the store has nothing
to plot (e.g. no baseline, no pairs).

Each figure is registered once (`registry.figure`) with its name and title; `REGISTRY` maps
names to figures. Modules by subject: latency, placement, cpu, cost, model (the cost model),
resumption, levers (operators' levers), network, load; `style` holds what they share.
"""

import matplotlib

# Render off-screen (no display on a server or in CI); set before any module draws.
matplotlib.use("Agg")

from chainlab.report.figures import (  # noqa: E402
    cost,
    cpu,
    latency,
    levers,
    load,
    model,
    network,
    placement,
    resumption,
)
from chainlab.report.figures.registry import REGISTRY, Entry  # noqa: E402

__all__ = [
    "REGISTRY",
    "Entry",
    "cost",
    "cpu",
    "latency",
    "levers",
    "load",
    "model",
    "network",
    "placement",
    "resumption",
]
