"""Client and server CPU figures (the paper's Figures 13-17)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from chainlab.analysis import families as fam
from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import (
    WIDTH,
    baseline_line,
    by_class,
    class_colour,
    classes_of,
    err_bars,
    fig_height,
    hbars,
    legend_above,
    legend_classes,
    level,
    log_axis,
    ok_ids,
    set_title,
    side_bars,
)


@figure("server_cpu", "Server CPU by scenario")
def fig_server_cpu(a):
    ids = ok_ids(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    hbars(a, ax, ids, "server_cpu_ms", failed_note=False)
    baseline_line(a, ax, "server_cpu_ms")
    ax.set_xlabel(f"server CPU per handshake (ms, log scale; bars: {level(a)} CI)")
    set_title(ax, "Server CPU time per handshake")
    legend_classes(ax, classes_of(a, ids), a.config.heavy_family)
    return fig


@figure("client_server_cpu", "Client versus server CPU by scenario")
def fig_client_server_cpu(a):
    ids = ok_ids(a)
    if not ids:
        return None
    fig, ax = side_bars(a, ids, "cpu_ms")
    ax.invert_yaxis()
    log_axis(ax, "x")
    ax.set_xlabel("CPU per handshake (ms, log scale)")
    ax.set_title("Client versus server CPU per handshake")
    legend_above(ax)
    return fig


@figure("cpu_loglog", "Client versus server CPU, log-log")
def fig_cpu_loglog(a):
    s = a.summary[a.summary["status"] == "ok"]
    if s.empty:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    for cls, g in by_class(s):
        ax.errorbar(
            g["client_cpu_ms"],
            g["server_cpu_ms"],
            xerr=err_bars(g["client_cpu_ms"], g["client_cpu_ms_lo"], g["client_cpu_ms_hi"]),
            yerr=err_bars(g["server_cpu_ms"], g["server_cpu_ms_lo"], g["server_cpu_ms_hi"]),
            fmt="o",
            color=class_colour(cls),
            ms=6,
            capsize=2,
            label=fam.class_display(cls, a.config.heavy_family),
        )
    vals = np.concatenate([s["client_cpu_ms"], s["server_cpu_ms"]]).astype(float)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if vals.size:
        lo, hi = vals.min() / 2, vals.max() * 2
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="parity (server = client)")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    log_axis(ax, "x")
    log_axis(ax, "y")
    ax.set_xlabel("client CPU per handshake (ms)")
    ax.set_ylabel("server CPU per handshake (ms)")
    ax.set_title("Client vs server CPU (log-log_axis)")
    ax.legend(loc="lower right")
    return fig


@figure("cpu_over_elapsed", "CPU over elapsed time")
def fig_cpu_over_elapsed(a):
    ids = ok_ids(a)
    if not ids:
        return None
    fig, ax = side_bars(a, ids, "over_elapsed")
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.invert_yaxis()
    ax.set_xlabel("CPU time / end-to-end latency (mean ratio; 1 = busy the whole handshake)")
    ax.set_title("CPU over elapsed time, per side")
    legend_above(ax)
    return fig


@figure("srv_cli_ratio", "Server-to-client CPU ratio")
def fig_srv_cli_ratio(a):
    ids = ok_ids(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    hbars(a, ax, ids, "srv_cli_ratio", failed_note=False)
    r = a.config.cpu_regimes
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    for v in (r["balanced_low"], r["balanced_high"], r["server_bound"]):
        ax.axvline(v, color="#777777", lw=0.6, ls=":")
    ax.set_xlabel(
        f"server CPU / client CPU (log scale; dotted: regime bounds "
        f"{r['balanced_low']:g}, {r['balanced_high']:g}, {r['server_bound']:g})"
    )
    set_title(ax, "Server-to-client CPU ratio by scenario")
    legend_classes(ax, classes_of(a, ids), a.config.heavy_family)
    return fig
