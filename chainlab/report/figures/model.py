"""Cost-model figures: what each scenario's handshake cost is made of, per side."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from chainlab.model.cost import CATEGORIES
from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import WIDTH, fig_height, scenario_labels

# Height below the axes that the legend's two rows take, in inches.
LEGEND_BAND_IN = 0.55
# One colour per operation category (and the residual), the same on both sides.
CATEGORY_COLOURS = {
    "sign": "#b2182b",
    "key exchange": "#2166ac",
    "verify CertificateVerify": "#ef8a62",
    "verify certificates": "#fddbc7",
    "decompress": "#67a9cf",
    "residual": "#bbbbbb",
}


@figure("cost_breakdown", "Cost breakdown by operation and side")
def fig_cost_breakdown(a):
    m = a.cost_model
    if m.empty:
        return None
    m = m.sort_values("server_measured").reset_index(drop=True)
    ids = list(m["scenario_id"])
    labels = scenario_labels(a, ids)
    fig, axes = plt.subplots(
        1, 2, figsize=(WIDTH, fig_height(len(ids)) + LEGEND_BAND_IN), sharey=True
    )
    y = np.arange(len(ids))
    for ax, side in zip(axes, ("server", "client"), strict=True):
        left = np.zeros(len(ids))
        for category in (*CATEGORIES, "residual"):
            col = f"{side}_residual" if category == "residual" else f"{side}_{category}"
            width = np.clip(m[col].to_numpy(dtype=float), 0, None)
            if not width.any():
                continue
            ax.barh(y, width, left=left, color=CATEGORY_COLOURS[category], label=category)
            left += width
        ax.plot(m[f"{side}_measured"], y, "k|", markersize=12, label="measured mean")
        ax.plot(m[f"{side}_predicted"], y, "kx", markersize=5, label="predicted")
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlabel(f"{side} CPU per handshake (ms, symlog)")
        ax.set_title(side)
    axes[0].set_yticks(y, labels)
    axes[0].invert_yaxis()
    handles = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    legend = fig.legend(
        handles.values(), handles.keys(), loc="lower center", ncol=4, fontsize=8, frameon=False
    )
    legend.set_in_layout(False)
    fig.suptitle("What a handshake's CPU is made of: primitives and the residual")
    # Lay out here, leaving the bottom band to the legend (the report keeps this layout).
    fig.tight_layout(rect=(0, LEGEND_BAND_IN / fig.get_figheight(), 1, 1))
    return fig
