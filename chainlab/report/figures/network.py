"""Emulated-network figures: latency against RTT and against loss, per hierarchy."""

from __future__ import annotations

from typing import Literal

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.network import EXCEED_MARK_SHARE
from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import (
    WIDTH,
    class_colour,
    err_bars,
    level,
    log_axis,
)

# Marker per hierarchy line within a panel (the colour is the panel's placement class); line
# style and marker fill per profile family, in the family's order (dashed is the model's).
NETWORK_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "h", "<", ">", "p")


FAMILY_STYLES = ("-", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (1, 3)), (0, (8, 2)))


FillStyle = Literal["full", "left", "right", "bottom", "top", "none"]
FAMILY_FILLS: tuple[FillStyle, ...] = ("full", "none", "left", "bottom", "right", "top")


# Points of different families at the same x are set apart by this share of the x range.
FAMILY_DODGE = 0.025


# Profile ticks closer than this share of the x range are merged into one label.
PROFILE_TICK_GAP = 0.06


def _inv_rate(rate) -> float:
    return 1 / rate if rate == rate and rate else 0.0  # NaN / 0 = unlimited


def _family_order(pts: pd.DataFrame, axis: str) -> list[str]:
    """Family labels, mildest first: for RTT families by loss, then lower rate, jitter;
    for loss families by RTT, then lower rate, jitter."""
    col = "rtt_family" if axis == "rtt" else "loss_family"
    first = pts[pts[col].notna()].drop_duplicates(col)
    lead = "loss" if axis == "rtt" else "rtt_ms"

    def key(r):
        vals = (r[lead], _inv_rate(r["rate_mbit"]), r["jitter_ms"], r["mtu"], r["initcwnd"])
        return (*vals, r[col])

    return [r[col] for r in sorted((r for _, r in first.iterrows()), key=key)]


def _families(line_pts: pd.DataFrame, axis: str) -> dict[str, pd.DataFrame]:
    """Family label -> this line's points in the family, loopback included where it is
    the family's zero point, sorted along the axis."""
    col = "rtt_family" if axis == "rtt" else "loss_family"
    joins = "joins_loopback_rtt" if axis == "rtt" else "joins_loopback_loss"
    xcol = "rtt_ms" if axis == "rtt" else "loss"
    loop = line_pts[~line_pts["emulated"]]
    out = {}
    for label, g in line_pts[line_pts["emulated"]].groupby(col, sort=False):
        if g[joins].any() and len(loop):
            g = pd.concat([loop, g])
        out[label] = g.sort_values(xcol)
    return out


def _model_points(g, pred: dict, base_of: dict, x: dict):
    """The model's latency at a family's points: at an emulated point the prediction from
    its loopback twin, at the loopback point the model's base (its loopback median)."""
    xs, ys = [], []
    for _, r in g.iterrows():
        if r["emulated"]:
            y = pred.get((r["loopback_id"], r["network"]))
        else:
            y = base_of.get(r["scenario_id"])
        if y is not None:
            xs.append(x[r["scenario_id"]])
            ys.append(float(y))
    order = np.argsort(xs)
    return np.asarray(xs)[order], np.asarray(ys)[order]


def _profile_ticks(ax, pts, xcol: str, scale: float, fmt) -> None:
    """Ticks at the x values of the profiles drawn, labelled with their names; a flagged
    profile says so. Values closer than PROFILE_TICK_GAP of the axis span share one tick
    (a 1 ms LAN beside loopback's 0), which names each value."""
    labels: dict[float, list[str]] = {}
    for _, r in pts.drop_duplicates("network").iterrows():
        name = str(r["network"]) + (" (flagged)" if r["flagged"] is True else "")
        labels.setdefault(float(r[xcol]) * scale, []).append(name)
    xs = sorted(labels)
    span = (xs[-1] - xs[0]) or 1.0
    groups: list[list[float]] = []
    for x in xs:
        if groups and x - groups[-1][-1] < PROFILE_TICK_GAP * span:
            groups[-1].append(x)
        else:
            groups.append([x])
    ticks, texts = [], []
    for g in groups:
        ticks.append(g[0])
        if len(g) == 1:
            texts.append(f"{fmt(g[0])}\n" + "\n".join(sorted(labels[g[0]])))
        else:
            texts.append("\n".join(f"{fmt(x)} {', '.join(sorted(labels[x]))}" for x in g))
    ax.set_xticks(ticks, texts, fontsize=7)


def _network_figure(a, axis: str):
    """Latency across profiles per hierarchy line: one panel per placement class; points
    with intervals at the report's confidence level, lines within a profile family, the
    model's prediction dashed, a ring where most handshakes' server flight exceeded the
    initial window."""
    net = a.network
    if net is None or net.points.empty:
        return None
    xcol, scale = ("rtt_ms", 1.0) if axis == "rtt" else ("loss", 100.0)  # loss in %
    ycol = "median_ms" if axis == "rtt" else "mean_ms"
    pts = net.points[np.isfinite(net.points[xcol].to_numpy(dtype=float))]
    # which points to draw: every profile on the RTT axis; on the loss axis only families
    # in which the loss varies (elsewhere loss is not what differs between the points)
    keep: dict[int, dict[str, pd.DataFrame]] = {}
    for line, lp in pts.groupby("line", sort=True):
        fams = _families(lp, axis)
        if axis == "loss":
            fams = {f: g for f, g in fams.items() if g["loss"].nunique() >= 2}
        if fams:
            keep[line] = fams
    if not keep:
        return None
    drawn = pd.concat([g for fams in keep.values() for g in fams.values()]).drop_duplicates(
        "scenario_id"
    )
    order = _family_order(drawn, axis)
    style = {f: FAMILY_STYLES[i % len(FAMILY_STYLES)] for i, f in enumerate(order)}
    fill = {f: FAMILY_FILLS[i % len(FAMILY_FILLS)] for i, f in enumerate(order)}
    span = float(drawn[xcol].max() - drawn[xcol].min()) * scale or 1.0
    fam_col = "rtt_family" if axis == "rtt" else "loss_family"
    # x positions: families present at the same x are set apart a little
    x: dict[str, float] = {}
    for xv, g in drawn.groupby(xcol):
        present = [f for f in order if f in set(g[fam_col].dropna())]
        for _, r in g.iterrows():
            dodge = 0.0
            if r["emulated"] and len(present) > 1:
                k = present.index(r[fam_col])
                dodge = (k - (len(present) - 1) / 2) * FAMILY_DODGE * span
            x[r["scenario_id"]] = float(xv) * scale + dodge
    proj = net.projection
    pred = {(r["loopback_id"], r["profile"]): r["predicted_ms"] for _, r in proj.iterrows()}
    base_of = {r["loopback_id"]: r["base_ms"] for _, r in proj.iterrows()}
    panels = [c for c in fam.PLACEMENT_CLASSES if c in set(drawn["placement_class"])]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(WIDTH, 4.9), squeeze=False, layout="constrained"
    )
    handles = []
    ringed = False
    for ax, cls in zip(axes[0], panels, strict=True):
        colour = class_colour(cls)
        lines = [ln for ln in keep if drawn[drawn["line"] == ln]["placement_class"].iloc[0] == cls]
        for k, line in enumerate(lines):
            marker = NETWORK_MARKERS[k % len(NETWORK_MARKERS)]
            seen: set[str] = set()
            for f in [f for f in order if f in keep[line]]:
                g = keep[line][f]
                gx = np.array([x[s] for s in g["scenario_id"]])
                y = g[ycol].to_numpy(dtype=float)
                if len(g) >= 2:
                    ax.plot(gx, y, ls=style[f], color=colour, lw=1.2, zorder=2)
                    if axis == "loss":
                        ax.plot(gx, g["p95_ms"], ls=style[f], color=colour, lw=0.6, zorder=2)
                mx, my = _model_points(g, pred, base_of, x)
                if mx.size:
                    ax.plot(mx, my, ls="--", marker="_", ms=12, color=colour, lw=0.8, zorder=3)
                new = ~g["scenario_id"].isin(seen).to_numpy()
                seen |= set(g["scenario_id"])
                gn = g[new]
                yn = y[new]
                xn = gx[new]
                fills = [fill[f] if e else "full" for e in gn["emulated"]]
                for xi, yi, lo, hi, fs in zip(
                    xn, yn, gn[f"{ycol}_lo"], gn[f"{ycol}_hi"], fills, strict=True
                ):
                    ax.errorbar(
                        [xi],
                        [yi],
                        yerr=err_bars([yi], [lo], [hi]),
                        fmt=marker,
                        fillstyle=fs,
                        mfc=colour if fs != "none" else "white",
                        mfcalt="white",
                        color=colour,
                        ms=6,
                        capsize=2,
                        zorder=4,
                    )
                if axis == "loss":
                    ax.plot(xn, gn["p95_ms"], marker, mfc="white", mec=colour, ms=4, zorder=4)
                share = gn["exceed_share"].to_numpy(dtype=float)
                mark = np.isfinite(share) & (share >= EXCEED_MARK_SHARE)
                if mark.any():
                    ringed = True
                    ax.plot(xn[mark], yn[mark], "o", ms=14, mfc="none", mec="black", mew=0.9)
            label = drawn[drawn["line"] == line]["line_label"].iloc[0]
            handles.append(plt.Line2D([], [], color=colour, marker=marker, ls="none", label=label))
        cp = drawn[drawn["placement_class"] == cls]
        if axis == "rtt":
            _profile_ticks(ax, cp, xcol, scale, lambda v: f"{v:g} ms")
            ax.set_xlabel("configured RTT")
        else:
            _profile_ticks(ax, cp, xcol, scale, lambda v: f"{v:g} %")
            vals = np.concatenate([cp[c].to_numpy(dtype=float) for c in ("mean_ms_lo", "p95_ms")])
            vals = vals[np.isfinite(vals) & (vals > 0)]
            if vals.size and vals.max() / vals.min() > 10:  # a loss tail spans decades
                log_axis(ax, "y")
            ax.set_xlabel("configured loss per packet and direction")
        ax.set_title(fam.class_display(cls, a.config.heavy_family), fontsize=9)
    axes[0, 0].set_ylabel(
        f"median latency (ms; bars: {level(a)} CI)"
        if axis == "rtt"
        else f"latency (ms): mean ± {level(a)} CI (filled), p95 (small, open)"
    )
    for f in order:
        handles.append(
            plt.Line2D(
                [], [], color="#555555", ls=style[f], marker="o", fillstyle=fill[f],
                mfcalt="white", label=f,
            )
        )  # fmt: skip
    handles.append(
        plt.Line2D([], [], color="#555555", ls="--", marker="_", ms=12, label="model from loopback")
    )
    if ringed:
        handles.append(
            plt.Line2D(
                [], [], marker="o", ms=11, mfc="none", mec="black", ls="none",
                label="server flight > initial window",
            )
        )  # fmt: skip
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=7, frameon=False)
    what = "RTT" if axis == "rtt" else "loss"
    fig.suptitle(f"Handshake latency versus {what} per hierarchy (colour: placement class)")
    fig.draw_without_rendering()  # constrained layout now; the sink then saves as is
    return fig


@figure("network_rtt", "Latency versus RTT per hierarchy")
def fig_network_rtt(a):
    return _network_figure(a, "rtt")


@figure("network_loss", "Latency versus loss per hierarchy")
def fig_network_loss(a):
    return _network_figure(a, "loss")
