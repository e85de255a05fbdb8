"""Latency and transport figures: per-scenario latency, distributions, bytes, scatter plots."""

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
    scenario_labels,
    scenario_order,
    set_title,
)


@figure("mean_latency", "Mean handshake latency by scenario")
def fig_mean_latency(a):
    ids = scenario_order(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    hbars(a, ax, ids, "mean_ms")
    baseline_line(a, ax, "mean_ms")
    ax.set_xlabel(f"mean handshake latency (ms, log scale; bars: {level(a)} CI)")
    set_title(ax, "Mean handshake latency by scenario")
    legend_classes(ax, classes_of(a, ids), a.config.heavy_family)
    return fig


@figure("p95_latency", "p95 handshake latency by scenario")
def fig_p95_latency(a):
    ids = scenario_order(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    hbars(a, ax, ids, "p95_ms")
    s = a.summary.set_index("scenario_id")
    y = np.arange(len(ids))
    p99 = s.loc[ids, "p99_ms"].to_numpy(dtype=float)
    ax.plot(p99, y, "k|", ms=9, label="p99")
    baseline_line(a, ax, "p95_ms")
    ax.set_xlabel(
        f"p95 handshake latency (ms, log scale; bars: {level(a)} order-statistic CI; | = p99)"
    )
    set_title(ax, "p95 (and p99) handshake latency by scenario")
    legend_classes(ax, classes_of(a, ids), a.config.heavy_family)
    return fig


@figure("latency_ecdf", "Latency distributions")
def fig_latency_ecdf(a):
    s = a.summary[a.summary["status"] == "ok"]
    if s.empty:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    grid = np.linspace(0, 1, 401)
    for _, r in s.iterrows():
        lat = a.data.latencies_ms.get(r["scenario_id"])
        if lat is None or lat.size == 0:
            continue
        q = np.quantile(lat, grid)
        ax.plot(q, grid, color=class_colour(r["placement_class"]), lw=1, alpha=0.8)
    log_axis(ax, "x")
    ax.set_xlabel("handshake latency (ms, log scale)")
    ax.set_ylabel("fraction of handshakes ≤ x")
    ax.set_title("Latency distributions (empirical CDF per scenario)")
    legend_classes(ax, s["placement_class"], a.config.heavy_family, loc="lower right")
    return fig


@figure("connect_vs_tls", "TCP connect vs TLS handshake time")
def fig_connect_tls(a):
    ids = [
        i
        for i in scenario_order(a)
        if i in set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    ]
    if not ids:
        return None
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    y = np.arange(len(ids))
    conn = s.loc[ids, "connect_ms"].to_numpy(dtype=float)
    tls = s.loc[ids, "tls_ms"].to_numpy(dtype=float)
    ax.barh(y - 0.18, conn, height=0.36, color="#56B4E9", label="TCP connect")
    ax.barh(y + 0.18, tls, height=0.36, color="#CC79A7", label="TLS handshake")
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    log_axis(ax, "x")
    ax.set_xlabel("mean time (ms, log scale)")
    ax.set_title("TCP connect vs TLS handshake time")
    legend_above(ax)
    return fig


@figure("transport_bytes", "Transport bytes by scenario")
def fig_transport_bytes(a):
    ids = [
        i
        for i in scenario_order(a)
        if i in set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    ]
    if not ids:
        return None
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    y = np.arange(len(ids))
    rd = s.loc[ids, "bytes_read"].to_numpy(dtype=float)
    wr = s.loc[ids, "bytes_written"].to_numpy(dtype=float)
    ch = s.loc[ids, "chain_bytes"].to_numpy(dtype=float)
    colours = [class_colour(s.at[i, "placement_class"]) for i in ids]
    ax.barh(
        y, rd, height=0.7, color=colours, label="bytes read by the client (colour: placement class)"
    )
    ax.barh(y, wr, left=rd, height=0.7, color="#bbbbbb", label="bytes written by the client")
    ax.plot(ch, y, "kD", ms=4, label="observed chain DER bytes")
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("bytes per handshake (to the end of the handshake)")
    ax.set_title("Transport bytes by scenario")
    legend_above(ax)
    return fig


def _scatter(a, xcol, xlabel, title, subset_metric):
    s = a.reference_summary()  # the scenarios the class / correlation statistics use
    s = s[s["status"] == "ok"]
    if len(s) < 2:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    for cls, g in by_class(s):
        ax.errorbar(
            g[xcol],
            g["mean_ms"],
            yerr=err_bars(g["mean_ms"], g["mean_ms_lo"], g["mean_ms_hi"]),
            fmt="o",
            color=class_colour(cls),
            ms=6,
            capsize=2,
            label=fam.class_display(cls, a.config.heavy_family),
        )
    log_axis(ax, "y")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("mean latency (ms, log scale)")
    c = a.correlations
    if not c.empty:
        lines = []
        for _, r in c[c["metric"] == subset_metric].iterrows():
            if np.isfinite(r["pearson_r"]):
                lines.append(
                    f"{r['subset']} (n={r['n_scenarios']}): r = {r['pearson_r']:.2f}, "
                    f"ρ = {r['spearman_rho']:.2f}"
                )
        if lines:
            ax.text(
                0.01,
                0.99,
                "\n".join(lines),
                transform=ax.transAxes,
                va="top",
                fontsize=7,
                bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "#cccccc"},
            )
    ax.legend(loc="lower right")
    ax.set_title(set_title)
    return fig


@figure("bytes_vs_latency", "Bytes read versus mean latency")
def fig_bytes_vs_latency(a):
    return _scatter(
        a,
        "bytes_read",
        "bytes read by the client per handshake (mean)",
        "Bytes read versus mean handshake latency",
        "bytes_read",
    )


@figure("chain_vs_latency", "Observed chain size versus mean latency")
def fig_chain_vs_latency(a):
    return _scatter(
        a,
        "chain_bytes",
        "observed chain size (DER bytes)",
        "Observed chain size versus mean handshake latency",
        "chain_bytes",
    )
