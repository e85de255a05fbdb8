"""Figures of placement: plausibility against the baseline, the strategy matrix, classes, pairs."""

from __future__ import annotations

import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import (
    FixedFormatter,
    FixedLocator,
    NullLocator,
)

from chainlab.analysis.compare import pair_axes
from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES
from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import (
    PLAUSIBILITY_SHADES,
    WIDTH,
    class_colour,
    err_bars,
    fig_height,
    legend_classes,
    level,
    log_axis,
    ratio_scale,
    scenario_labels,
)


@figure("plausibility", "Operational plausibility ranking")
def fig_plausibility(a):
    m = a.multipliers
    if m.empty:
        return None
    ids = list(m.sort_values(["latency_x", "scenario_id"])["scenario_id"])
    m = m.set_index("scenario_id").loc[ids]
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    y = np.arange(len(ids))
    b = a.config.plausibility
    bounds = [0, b["reasonable"], b["penalized"], b["problematic"], math.inf]
    est = m["latency_x"].to_numpy(dtype=float)
    lo_x = min(np.nanmin(m["latency_x_lo"]), b["reasonable"]) / 1.5
    hi_x = max(np.nanmax(m["latency_x_hi"]), b["problematic"]) * 1.5
    mids, names = [], []
    for k in range(4):
        left, right = max(bounds[k], lo_x), min(bounds[k + 1], hi_x)
        if left >= right:
            continue
        ax.axvspan(left, right, color=PLAUSIBILITY_SHADES[k], zorder=0)
        mids.append(math.sqrt(left * right))
        names.append(PLAUSIBILITY_CLASSES[k].replace(" for ", "\nfor ").replace(" but ", "\nbut "))
    ax.barh(y, est, color=[class_colour(c) for c in m["placement_class"]], height=0.6, zorder=2)
    ax.errorbar(
        est,
        y,
        xerr=err_bars(est, m["latency_x_lo"], m["latency_x_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
        zorder=3,
    )
    log_axis(ax, "x")
    ax.set_xlim(lo_x, hi_x)
    # class names over their bands, on a top axis set after the scale (which resets ticks)
    top = ax.secondary_xaxis("top")
    top.xaxis.set_major_locator(FixedLocator(mids))
    top.xaxis.set_major_formatter(FixedFormatter(names))
    top.xaxis.set_minor_locator(NullLocator())
    top.tick_params(length=0, labelsize=7)
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel(f"mean latency relative to the baseline (log scale; bars: {level(a)} CI)")
    ax.set_title("Operational plausibility: latency multiplier vs baseline")
    legend_classes(ax, m["placement_class"], a.config.heavy_family, lift=2.8)
    return fig


@figure("strategy_matrix", "Normalised strategy matrix")
def fig_strategy_heatmap(a):
    m = a.strategy
    if m.empty:
        return None
    cols = [
        ("latency_x", "mean\nlatency"),
        ("p95_x", "p95\nlatency"),
        ("bytes_read_x", "bytes\nread"),
        ("server_cpu_x", "server\nCPU"),
        ("client_cpu_x", "client\nCPU"),
    ]
    vals = m[[c for c, _ in cols]].to_numpy(dtype=float)
    ids = list(m["scenario_id"])
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids), 1.6)))
    with np.errstate(divide="ignore", invalid="ignore"):
        logv = np.log10(vals)
    lim = max(1.0, np.nanmax(np.abs(logv)))
    im = ax.imshow(logv, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            txt = "n/a" if not np.isfinite(v) else (f"{v:,.0f}×" if v >= 100 else f"{v:.3g}×")
            ax.text(
                j,
                i,
                txt,
                ha="center",
                va="center",
                fontsize=8,
                color="white"
                if np.isfinite(logv[i, j]) and abs(logv[i, j]) > lim * 0.6
                else "black",
            )
    ax.set_xticks(range(len(cols)), [c for _, c in cols])
    ax.set_yticks(range(len(ids)), scenario_labels(a, ids))
    ax.grid(False)
    cb = fig.colorbar(im, ax=ax, fraction=0.04)
    cb.set_label("log10 multiplier vs baseline")
    for t, cls in zip(ax.get_yticklabels(), m["placement_class"], strict=True):
        t.set_color(class_colour(cls))
    ax.set_title(
        "Strategy matrix: multipliers vs the baseline (same key exchange, depth, served chain)"
    )
    return fig


@figure("placement_classes", "Signature placement summary")
def fig_placement_classes(a):
    c = a.classes
    if c.empty:
        return None
    s = a.reference_summary()  # the scenarios the class / correlation statistics use
    s = s[s["status"] == "ok"]
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    x = np.arange(len(c))
    for k, (_, r) in enumerate(c.iterrows()):
        pts = s[s["placement_class"] == r["class"]]["mean_ms"].to_numpy(dtype=float)
        jitter = (np.arange(pts.size) - (pts.size - 1) / 2) * 0.04
        ax.plot(k + jitter, pts, "o", color=class_colour(r["class"]), alpha=0.6, ms=5)
        ax.errorbar(
            [k + 0.3],
            [r["mean_ms"]],
            yerr=err_bars([r["mean_ms"]], [r["mean_ms_lo"]], [r["mean_ms_hi"]]),
            fmt="s",
            color="black",
            ms=6,
            capsize=3,
        )
    log_axis(ax, "y")
    ax.set_xticks(x, [f"{r['class_name']}\n(n = {r['n_scenarios']})" for _, r in c.iterrows()])
    ax.set_ylabel("mean latency (ms, log scale)")
    ax.set_title(
        f"Signature placement: scenario means (dots) and class mean with {level(a)} CI (square)"
    )
    return fig


@figure("pairs", lambda axis: f"Paired comparisons: {pair_axes()[axis]}")
def fig_pairs(a, axis: str):
    p = a.pairs[a.pairs["axis"] == axis] if len(a.pairs) else pd.DataFrame()
    if p.empty:
        return None
    changes = [f"{x} → {y}" for x, y in zip(p["from_value"], p["to_value"], strict=True)]
    same_change = len(set(changes)) == 1
    labels = []
    for change, ctx in zip(changes, p["context"], strict=True):
        lines = textwrap.wrap(ctx, 58)[:3]
        labels.append("\n".join(lines if same_change else [change, *lines]))
    n_lines = max(lab.count("\n") + 1 for lab in labels)
    n = len(p)
    height = max(2.6, 1.5 + n * (0.2 + 0.14 * n_lines))
    fig, (ax1, ax2) = plt.subplots(
        1, 2, figsize=(WIDTH + 1.5, height), sharey=True, gridspec_kw={"width_ratios": [1.4, 1]}
    )
    y = np.arange(n)
    cls = a.summary.set_index("scenario_id")["placement_class"]
    for k, (_, r) in enumerate(p.iterrows()):
        ax1.plot([r["from_mean_ms"], r["to_mean_ms"]], [k, k], color="#999999", lw=1.2)
        ax1.plot(r["to_mean_ms"], k, "D", color=class_colour(cls[r["to_id"]]), ms=6, zorder=3)
        ax1.plot(
            r["from_mean_ms"],
            k,
            "o",
            mfc="none",
            mec=class_colour(cls[r["from_id"]]),
            mew=1.8,
            ms=10,
            zorder=4,
        )
    log_axis(ax1, "x")
    ax1.set_xlabel("mean latency (ms, log): ○ from, ◆ to")
    ax1.set_yticks(y, labels, fontsize=7)
    ax1.invert_yaxis()
    est = p["latency_ratio"].to_numpy(dtype=float)
    colours = [
        "#D55E00" if c == "higher" else "#0072B2" if c == "lower" else "#999999"
        for c in p["latency_change"]
    ]
    ax2.errorbar(
        est,
        y,
        xerr=err_bars(est, p["latency_ratio_lo"], p["latency_ratio_hi"]),
        fmt="none",
        ecolor="black",
        capsize=2,
    )
    ax2.scatter(est, y, c=colours, zorder=3)
    ax2.axvline(1.0, color="black", lw=0.8, ls="--")
    ratio_scale(ax2, np.concatenate([est, p["latency_ratio_lo"], p["latency_ratio_hi"], [1]]))
    ax2.set_xlabel(f"latency ratio to / from ({level(a)} CI)")
    title = f"Paired comparisons along one axis: {pair_axes()[axis]}"
    fig.suptitle(title + (f" ({changes[0]})" if same_change else ""))
    return fig
