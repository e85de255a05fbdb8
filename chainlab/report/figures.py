"""The report's figures (matplotlib, Agg): the paper's Figures 1-20 and a few more.

Every per-scenario figure lists scenarios in the same order (by mean latency) with the same
two-line labels (hierarchy, then key exchange and whatever else varies) and colours each by
its placement class (families.PLACEMENT_COLOURS). Intervals are drawn wherever the table
behind the figure has one. Each function returns a Figure or None when the store has nothing
to plot (e.g. no baseline, no pairs).
"""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedFormatter,
    FixedLocator,
    FuncFormatter,
    LogLocator,
    NullFormatter,
    NullLocator,
    SymmetricalLogLocator,
)

from chainlab.analysis import families as fam  # noqa: E402
from chainlab.analysis.compare import AXES  # noqa: E402
from chainlab.analysis.network import EXCEED_MARK_SHARE  # noqa: E402
from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES  # noqa: E402

plt.rcParams.update(
    {
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "legend.fontsize": 8,
        "ytick.labelsize": 8,
        "xtick.labelsize": 8,
        "svg.fonttype": "none",  # text stays text in the SVG: small and searchable
        "svg.hashsalt": "chainlab",  # stable element ids, so SVGs are reproducible
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.axisbelow": True,
    }
)

WIDTH = 9.0  # inches; the HTML page shows figures at up to 1100 px
ROW_HEIGHT = 0.42  # inches per scenario row in per-scenario charts (two label lines)
PLAUSIBILITY_SHADES = ("#e8f4ea", "#fdf6dc", "#fde7d3", "#f9d6d5")


def _plain(v, _pos=None) -> str:
    """Tick label without mathtext (which is slow to lay out): 0.01, 1, 1,000, 1e+06."""
    if v <= 0 or not math.isfinite(v):
        return ""
    if 1e-3 <= v < 1e6:
        return f"{v:,.10g}"
    return f"{v:.0e}"


def _log(ax, which: str = "x") -> None:
    """Log scale with plain decimal labels on major ticks only."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_formatter(FuncFormatter(_plain))
    # minor ticks at 2 and 5 only: enough to read values, a quarter of the tick artists
    axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_minor_formatter(NullFormatter())


def _height(n: int, extra: float = 1.3) -> float:
    return max(2.6, extra + ROW_HEIGHT * n)


def _colour(cls: str) -> str:
    return fam.PLACEMENT_COLOURS.get(cls, "#333333")


def _legend_classes(ax, classes, heavy: str, loc="above", lift: float = 0.3):
    """Legend of the placement classes present; 'above' puts it in one row over the axes
    (never over data), so the title must leave room (`_title`)."""
    seen = [c for c in fam.PLACEMENT_CLASSES if c in set(classes)]
    if "failed" in set(classes):
        seen.append("failed")
    handles = [Patch(color=_colour(c), label=fam.class_display(c, heavy)) for c in seen]
    if not handles:
        return
    if loc == "above":
        chars = sum(len(h.get_label()) for h in handles)
        ncol = len(handles) if chars <= 90 else 2
        ax.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncol=ncol,
            frameon=False,
            borderaxespad=lift,
        )
        rows = math.ceil(len(handles) / ncol)
        # keep the title clear of the legend rows (and of what `lift` leaves room for)
        ax.set_title(ax.get_title(), pad=6 + 14 * rows + lift * 8)
    else:
        ax.legend(handles=handles, loc=loc, framealpha=0.9)


def _legend_above(ax) -> None:
    """The axes' own legend in one row over the plot (never over bars), title above it."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(0.0, 1.0),
        ncol=len(handles),
        frameon=False,
        borderaxespad=0.3,
    )
    ax.set_title(ax.get_title(), pad=22)


def _title(ax, text: str) -> None:
    """Title above an 'above' legend."""
    ax.set_title(text, pad=24)


def _log_floor(ax, values) -> None:
    """Start a log value axis a little below the smallest value so short bars stay visible."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size:
        ax.set_xlim(left=10 ** math.floor(math.log10(v.min() * 0.5)))


def scenario_order(a) -> list[str]:
    """Successful scenarios by mean latency, then failed ones by id."""
    s = a.summary
    ok = s[s["status"] == "ok"].sort_values(["mean_ms", "scenario_id"])
    failed = s[s["status"] != "ok"].sort_values("scenario_id")
    return list(ok["scenario_id"]) + list(failed["scenario_id"])


def _labels(a, ids) -> list[str]:
    s = a.summary.set_index("scenario_id")
    return [f"{s.at[i, 'label_chain']}\n{s.at[i, 'label_kex']}" for i in ids]


def _err(est, lo, hi):
    est, lo, hi = (np.asarray(v, dtype=float) for v in (est, lo, hi))
    lower = np.where(np.isfinite(lo), est - lo, 0.0)
    upper = np.where(np.isfinite(hi), hi - est, 0.0)
    return np.vstack([np.clip(lower, 0, None), np.clip(upper, 0, None)])


def _hbars(a, ax, ids, col, log=True, failed_note=True, show_ci=True):
    s = a.summary.set_index("scenario_id")
    y = np.arange(len(ids))
    est = s.loc[ids, col].to_numpy(dtype=float)
    lo = s.loc[ids, f"{col}_lo"].to_numpy(dtype=float) if show_ci else est
    hi = s.loc[ids, f"{col}_hi"].to_numpy(dtype=float) if show_ci else est
    colours = [_colour(s.at[i, "placement_class"]) for i in ids]
    ok = np.isfinite(est)
    ax.barh(y[ok], est[ok], color=np.array(colours)[ok], height=0.7)
    if show_ci:
        ax.errorbar(
            est[ok],
            y[ok],
            xerr=_err(est[ok], lo[ok], hi[ok]),
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
        )
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    if log:
        _log(ax, "x")
        _log_floor(ax, np.concatenate([est[ok], lo[ok]]))
    if failed_note:
        for yy, i in zip(y, ids, strict=True):
            if s.at[i, "status"] != "ok":
                ax.annotate(
                    "failed (see failures table)",
                    (0.01, yy),
                    xycoords=("axes fraction", "data"),
                    va="center",
                    fontsize=7,
                    color=fam.PLACEMENT_COLOURS["failed"],
                )
    return est


def _baseline_line(a, ax, col):
    if a.baseline is None:
        return
    v = float(a.summary.set_index("scenario_id").at[a.baseline, col])
    ax.axvline(v, color="black", ls="--", lw=0.8)
    ax.annotate(
        "baseline",
        (v, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(3, -10),
        textcoords="offset points",
        fontsize=7,
    )


def _classes_of(a, ids):
    s = a.summary.set_index("scenario_id")
    return [s.at[i, "placement_class"] if s.at[i, "status"] == "ok" else "failed" for i in ids]


def fig_mean_latency(a):
    ids = scenario_order(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    _hbars(a, ax, ids, "mean_ms")
    _baseline_line(a, ax, "mean_ms")
    ax.set_xlabel("mean handshake latency (ms, log scale; bars: 95 % CI)")
    _title(ax, "Mean handshake latency by scenario")
    _legend_classes(ax, _classes_of(a, ids), a.config.heavy_family)
    return fig


def fig_p95_latency(a):
    ids = scenario_order(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    _hbars(a, ax, ids, "p95_ms")
    s = a.summary.set_index("scenario_id")
    y = np.arange(len(ids))
    p99 = s.loc[ids, "p99_ms"].to_numpy(dtype=float)
    ax.plot(p99, y, "k|", ms=9, label="p99")
    _baseline_line(a, ax, "p95_ms")
    ax.set_xlabel("p95 handshake latency (ms, log scale; bars: 95 % order-statistic CI; | = p99)")
    _title(ax, "p95 (and p99) handshake latency by scenario")
    _legend_classes(ax, _classes_of(a, ids), a.config.heavy_family)
    return fig


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
        ax.plot(q, grid, color=_colour(r["placement_class"]), lw=1, alpha=0.8)
    _log(ax, "x")
    ax.set_xlabel("handshake latency (ms, log scale)")
    ax.set_ylabel("fraction of handshakes ≤ x")
    ax.set_title("Latency distributions (empirical CDF per scenario)")
    _legend_classes(ax, s["placement_class"], a.config.heavy_family, loc="lower right")
    return fig


def fig_connect_tls(a):
    ids = [
        i
        for i in scenario_order(a)
        if i in set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    ]
    if not ids:
        return None
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    y = np.arange(len(ids))
    conn = s.loc[ids, "connect_ms"].to_numpy(dtype=float)
    tls = s.loc[ids, "tls_ms"].to_numpy(dtype=float)
    ax.barh(y - 0.18, conn, height=0.36, color="#56B4E9", label="TCP connect")
    ax.barh(y + 0.18, tls, height=0.36, color="#CC79A7", label="TLS handshake")
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    _log(ax, "x")
    ax.set_xlabel("mean time (ms, log scale)")
    ax.set_title("TCP connect vs TLS handshake time")
    _legend_above(ax)
    return fig


def fig_transport_bytes(a):
    ids = [
        i
        for i in scenario_order(a)
        if i in set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    ]
    if not ids:
        return None
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    y = np.arange(len(ids))
    rd = s.loc[ids, "bytes_read"].to_numpy(dtype=float)
    wr = s.loc[ids, "bytes_written"].to_numpy(dtype=float)
    ch = s.loc[ids, "chain_bytes"].to_numpy(dtype=float)
    colours = [_colour(s.at[i, "placement_class"]) for i in ids]
    ax.barh(
        y, rd, height=0.7, color=colours, label="bytes read by the client (colour: placement class)"
    )
    ax.barh(y, wr, left=rd, height=0.7, color="#bbbbbb", label="bytes written by the client")
    ax.plot(ch, y, "kD", ms=4, label="observed chain DER bytes")
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("bytes per handshake (to the end of the handshake)")
    ax.set_title("Transport bytes by scenario")
    _legend_above(ax)
    return fig


def fig_plausibility(a):
    m = a.multipliers
    if m.empty:
        return None
    ids = list(m.sort_values(["latency_x", "scenario_id"])["scenario_id"])
    m = m.set_index("scenario_id").loc[ids]
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
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
    ax.barh(y, est, color=[_colour(c) for c in m["placement_class"]], height=0.6, zorder=2)
    ax.errorbar(
        est,
        y,
        xerr=_err(est, m["latency_x_lo"], m["latency_x_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
        zorder=3,
    )
    _log(ax, "x")
    ax.set_xlim(lo_x, hi_x)
    # class names over their bands, on a top axis set after the scale (which resets ticks)
    top = ax.secondary_xaxis("top")
    top.xaxis.set_major_locator(FixedLocator(mids))
    top.xaxis.set_major_formatter(FixedFormatter(names))
    top.xaxis.set_minor_locator(NullLocator())
    top.tick_params(length=0, labelsize=7)
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("mean latency relative to the baseline (log scale; bars: 95 % CI)")
    ax.set_title("Operational plausibility: latency multiplier vs baseline")
    _legend_classes(ax, m["placement_class"], a.config.heavy_family, lift=2.8)
    return fig


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
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids), 1.6)))
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
    ax.set_yticks(range(len(ids)), _labels(a, ids))
    ax.grid(False)
    cb = fig.colorbar(im, ax=ax, fraction=0.04)
    cb.set_label("log10 multiplier vs baseline")
    for t, cls in zip(ax.get_yticklabels(), m["placement_class"], strict=True):
        t.set_color(_colour(cls))
    ax.set_title(
        "Strategy matrix: multipliers vs the baseline (same key exchange, depth, served chain)"
    )
    return fig


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
        ax.plot(k + jitter, pts, "o", color=_colour(r["class"]), alpha=0.6, ms=5)
        ax.errorbar(
            [k + 0.3],
            [r["mean_ms"]],
            yerr=_err([r["mean_ms"]], [r["mean_ms_lo"]], [r["mean_ms_hi"]]),
            fmt="s",
            color="black",
            ms=6,
            capsize=3,
        )
    _log(ax, "y")
    ax.set_xticks(x, [f"{r['class_name']}\n(n = {r['n_scenarios']})" for _, r in c.iterrows()])
    ax.set_ylabel("mean latency (ms, log scale)")
    ax.set_title("Signature placement: scenario means (dots) and class mean with 95 % CI (square)")
    return fig


def _by_class(s: pd.DataFrame):
    """(class, rows) in the fixed class order, so legends list classes the same way."""
    for cls in fam.PLACEMENT_CLASSES:
        g = s[s["placement_class"] == cls]
        if len(g):
            yield cls, g


def _scatter(a, xcol, xlabel, title, subset_metric):
    s = a.reference_summary()  # the scenarios the class / correlation statistics use
    s = s[s["status"] == "ok"]
    if len(s) < 2:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    for cls, g in _by_class(s):
        ax.errorbar(
            g[xcol],
            g["mean_ms"],
            yerr=_err(g["mean_ms"], g["mean_ms_lo"], g["mean_ms_hi"]),
            fmt="o",
            color=_colour(cls),
            ms=6,
            capsize=2,
            label=fam.class_display(cls, a.config.heavy_family),
        )
    _log(ax, "y")
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
    ax.set_title(title)
    return fig


def fig_bytes_vs_latency(a):
    return _scatter(
        a,
        "bytes_read",
        "bytes read by the client per handshake (mean)",
        "Bytes read versus mean handshake latency",
        "bytes_read",
    )


def fig_chain_vs_latency(a):
    return _scatter(
        a,
        "chain_bytes",
        "observed chain size (DER bytes)",
        "Observed chain size versus mean handshake latency",
        "chain_bytes",
    )


def _side_bars(a, ids, metric: str):
    """Client and server bars side by side per scenario, with their CIs, for the summary
    columns client_<metric> and server_<metric>."""
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    y = np.arange(len(ids))
    for off, side, colour in ((-0.18, "client", "#56B4E9"), (0.18, "server", "#D55E00")):
        col = f"{side}_{metric}"
        est = s.loc[ids, col].to_numpy(dtype=float)
        ax.barh(y + off, est, height=0.36, color=colour, label=side)
        ax.errorbar(
            est,
            y + off,
            xerr=_err(est, s.loc[ids, f"{col}_lo"], s.loc[ids, f"{col}_hi"]),
            fmt="none",
            ecolor="black",
            elinewidth=0.7,
            capsize=1.5,
        )
    ax.set_yticks(y, _labels(a, ids))
    return fig, ax


def _ok_ids(a):
    ok = set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    return [i for i in scenario_order(a) if i in ok]


def fig_server_cpu(a):
    ids = _ok_ids(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    _hbars(a, ax, ids, "server_cpu_ms", failed_note=False)
    _baseline_line(a, ax, "server_cpu_ms")
    ax.set_xlabel("server CPU per handshake (ms, log scale; bars: 95 % CI)")
    _title(ax, "Server CPU time per handshake")
    _legend_classes(ax, _classes_of(a, ids), a.config.heavy_family)
    return fig


def fig_client_server_cpu(a):
    ids = _ok_ids(a)
    if not ids:
        return None
    fig, ax = _side_bars(a, ids, "cpu_ms")
    ax.invert_yaxis()
    _log(ax, "x")
    ax.set_xlabel("CPU per handshake (ms, log scale)")
    ax.set_title("Client versus server CPU per handshake")
    _legend_above(ax)
    return fig


def fig_cpu_loglog(a):
    s = a.summary[a.summary["status"] == "ok"]
    if s.empty:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    for cls, g in _by_class(s):
        ax.errorbar(
            g["client_cpu_ms"],
            g["server_cpu_ms"],
            xerr=_err(g["client_cpu_ms"], g["client_cpu_ms_lo"], g["client_cpu_ms_hi"]),
            yerr=_err(g["server_cpu_ms"], g["server_cpu_ms_lo"], g["server_cpu_ms_hi"]),
            fmt="o",
            color=_colour(cls),
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
    _log(ax, "x")
    _log(ax, "y")
    ax.set_xlabel("client CPU per handshake (ms)")
    ax.set_ylabel("server CPU per handshake (ms)")
    ax.set_title("Client vs server CPU (log-log)")
    ax.legend(loc="lower right")
    return fig


def fig_cpu_over_elapsed(a):
    ids = _ok_ids(a)
    if not ids:
        return None
    fig, ax = _side_bars(a, ids, "over_elapsed")
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.invert_yaxis()
    ax.set_xlabel("CPU time / end-to-end latency (mean ratio; 1 = busy the whole handshake)")
    ax.set_title("CPU over elapsed time, per side")
    _legend_above(ax)
    return fig


def fig_srv_cli_ratio(a):
    ids = _ok_ids(a)
    if not ids:
        return None
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    _hbars(a, ax, ids, "srv_cli_ratio", failed_note=False)
    r = a.config.cpu_regimes
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    for v in (r["balanced_low"], r["balanced_high"], r["server_bound"]):
        ax.axvline(v, color="#777777", lw=0.6, ls=":")
    ax.set_xlabel(
        f"server CPU / client CPU (log scale; dotted: regime bounds "
        f"{r['balanced_low']:g}, {r['balanced_high']:g}, {r['server_bound']:g})"
    )
    _title(ax, "Server-to-client CPU ratio by scenario")
    _legend_classes(ax, _classes_of(a, ids), a.config.heavy_family)
    return fig


def fig_infra_multiplier(a):
    c = a.capacity
    if c.empty or a.baseline is None:
        return None
    ids = [i for i in _ok_ids(a) if i in set(c["scenario_id"])]
    c = c.set_index("scenario_id").loc[ids]
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(ids))))
    y = np.arange(len(ids))
    est = c["infra_multiplier"].to_numpy(dtype=float)
    ax.barh(y, est, color=[_colour(k) for k in c["placement_class"]], height=0.7)
    ax.errorbar(
        est,
        y,
        xerr=_err(est, c["infra_multiplier_lo"], c["infra_multiplier_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
    )
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    _log(ax, "x")
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("server cores needed for the baseline's throughput (× baseline, log scale)")
    _title(ax, "Infrastructure multiplier needed to preserve baseline throughput")
    _legend_classes(ax, c["placement_class"], a.config.heavy_family)
    return fig


def fig_cost_per_million(a):
    c = a.capacity
    if c.empty:
        return None
    ids = [i for i in _ok_ids(a) if i in set(c["scenario_id"])]
    c = c.set_index("scenario_id").loc[ids]
    has_extra = a.baseline is not None
    fig, axes = plt.subplots(
        1, 2 if has_extra else 1, figsize=(WIDTH, _height(len(ids))), sharey=True, squeeze=False
    )
    y = np.arange(len(ids))
    colours = [_colour(k) for k in c["placement_class"]]
    ax = axes[0, 0]
    est = c["cost_per_million"].to_numpy(dtype=float)
    ax.barh(y, est, color=colours, height=0.7)
    ax.errorbar(
        est,
        y,
        xerr=_err(est, c["cost_per_million_lo"], c["cost_per_million_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
    )
    _log(ax, "x")
    ax.set_yticks(y, _labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("cost per million handshakes (log)")
    if has_extra:
        ax2 = axes[0, 1]
        ex = c["extra_cost_per_million"].to_numpy(dtype=float)
        ax2.barh(y, ex, color=colours, height=0.7)
        ax2.errorbar(
            ex,
            y,
            xerr=_err(ex, c["extra_cost_per_million_lo"], c["extra_cost_per_million_hi"]),
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
        )
        finite = np.abs(ex[np.isfinite(ex) & (ex != 0)])
        # Symmetric log: four decades below the largest difference are shown in log scale,
        # anything smaller is in the linear band around 0 (differences can be negative).
        top = float(finite.max()) if finite.size else 1.0
        ax2.set_xscale("symlog", linthresh=top / 1e4)
        ax2.xaxis.set_major_locator(SymmetricalLogLocator(base=10, linthresh=top / 1e4, subs=[1.0]))
        ax2.xaxis.set_major_formatter(
            FuncFormatter(
                lambda v, _p: "0" if v == 0 else f"{v:.0e}" if abs(v) < 1e-3 else f"{v:,.10g}"
            )
        )
        ax2.xaxis.set_minor_formatter(NullFormatter())
        ax2.tick_params(axis="x", labelrotation=45)
        ax2.axvline(0, color="black", lw=0.8)
        ax2.set_xlabel("extra cost per million vs baseline (symmetric log)")
    fig.suptitle(
        f"Cost per million handshakes at {a.config.price_per_vcpu_hour:g} cost units "
        "per vCPU-hour (illustrative)"
    )
    return fig


def fig_service_classes(a):
    sc = a.service_classes
    if sc.empty:
        return None
    services = list(dict.fromkeys(sc["service_class"]))
    classes = [c for c in fam.PLACEMENT_CLASSES if c in set(sc["class"])]
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    width = 0.8 / max(1, len(classes))
    x = np.arange(len(services))
    for k, cls in enumerate(classes):
        g = sc[sc["class"] == cls].set_index("service_class").loc[services]
        est = g["median_monthly_cost"].to_numpy(dtype=float)
        xs = x + (k - (len(classes) - 1) / 2) * width
        ax.bar(
            xs,
            est,
            width=width,
            color=_colour(cls),
            label=fam.class_display(cls, a.config.heavy_family),
        )
        ax.errorbar(
            xs,
            est,
            yerr=_err(est, g["median_monthly_cost_lo"], g["median_monthly_cost_hi"]),
            fmt="none",
            ecolor="black",
            capsize=2,
        )
    _log(ax, "y")
    vol = sc.drop_duplicates("service_class").set_index("service_class")["handshakes_per_month"]
    ax.set_xticks(x, [f"{s}\n({vol[s]:,.0f} handshakes/month)" for s in services])
    ax.set_ylabel("median monthly server cost (log; cost units)")
    ax.set_title("Monthly cost by service class and placement class (illustrative)")
    ax.legend()
    return fig


def _ratio_scale(ax, values, which: str = "x") -> None:
    """Log scale for ratios spanning more than 3x, else linear (a narrow log axis would show
    no labelled tick)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size and v.max() / v.min() > 3:
        _log(ax, which)


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
        ax1.plot(r["to_mean_ms"], k, "D", color=_colour(cls[r["to_id"]]), ms=6, zorder=3)
        ax1.plot(
            r["from_mean_ms"],
            k,
            "o",
            mfc="none",
            mec=_colour(cls[r["from_id"]]),
            mew=1.8,
            ms=10,
            zorder=4,
        )
    _log(ax1, "x")
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
        xerr=_err(est, p["latency_ratio_lo"], p["latency_ratio_hi"]),
        fmt="none",
        ecolor="black",
        capsize=2,
    )
    ax2.scatter(est, y, c=colours, zorder=3)
    ax2.axvline(1.0, color="black", lw=0.8, ls="--")
    _ratio_scale(ax2, np.concatenate([est, p["latency_ratio_lo"], p["latency_ratio_hi"], [1]]))
    ax2.set_xlabel("latency ratio to / from (95 % CI)")
    title = f"Paired comparisons along one axis: {AXES[axis]}"
    fig.suptitle(title + (f" ({changes[0]})" if same_change else ""))
    return fig


def fig_paper_vs_chainlab(a):
    c = a.paper_scenarios
    if c.empty or not (c["chainlab_scenario_id"] != "").any():
        return None
    c = c[(c["chainlab_scenario_id"] != "") & (c["status"] == "ok")]
    if c.empty:
        return None
    cls = a.summary.set_index("scenario_id")["placement_class"]
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH + 1.5, 3.9))
    panels = [
        ("mean_ms", "paper_mean_ms", "mean latency (ms)"),
        ("server_cpu_ms", "paper_server_cpu_ms", "server CPU (ms)"),
        ("bytes_read", "paper_bytes_read", "bytes read"),
    ]
    for ax, (ours, theirs, label) in zip(axes, panels, strict=True):
        x = c[theirs].to_numpy(dtype=float)
        yv = c[ours].to_numpy(dtype=float)
        ax.errorbar(
            x,
            yv,
            yerr=_err(yv, c[f"{ours}_lo"], c[f"{ours}_hi"]),
            fmt="none",
            ecolor="black",
            capsize=2,
        )
        ax.scatter(
            x, yv, c=[_colour(cls.get(s, "none")) for s in c["chainlab_scenario_id"]], zorder=3
        )
        vals = np.concatenate([x, yv])
        vals = vals[np.isfinite(vals) & (vals > 0)]
        if vals.size:
            wide = vals.max() / vals.min() > 20
            lo, hi = (vals.min() / 1.5, vals.max() * 1.5) if wide else (0, vals.max() * 1.1)
            ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            if wide:
                _log(ax, "x")
                _log(ax, "y")
        ax.set_xlabel(f"paper: {label}")
        ax.set_ylabel(f"chainlab: {label}")
    fig.suptitle("This store against the paper's Table 1 (dashed: equality)")
    fig.tight_layout()
    return fig


# name -> (function, title); the document decides where each goes.
FIGURES = {
    "mean_latency": (fig_mean_latency, "Mean handshake latency by scenario"),
    "p95_latency": (fig_p95_latency, "p95 handshake latency by scenario"),
    "latency_ecdf": (fig_latency_ecdf, "Latency distributions"),
    "connect_vs_tls": (fig_connect_tls, "TCP connect vs TLS handshake time"),
    "transport_bytes": (fig_transport_bytes, "Transport bytes by scenario"),
    "plausibility": (fig_plausibility, "Operational plausibility ranking"),
    "strategy_matrix": (fig_strategy_heatmap, "Normalised strategy matrix"),
    "placement_classes": (fig_placement_classes, "Signature placement summary"),
    "bytes_vs_latency": (fig_bytes_vs_latency, "Bytes read versus mean latency"),
    "chain_vs_latency": (fig_chain_vs_latency, "Observed chain size versus mean latency"),
    "server_cpu": (fig_server_cpu, "Server CPU by scenario"),
    "client_server_cpu": (fig_client_server_cpu, "Client versus server CPU by scenario"),
    "cpu_loglog": (fig_cpu_loglog, "Client versus server CPU, log-log"),
    "cpu_over_elapsed": (fig_cpu_over_elapsed, "CPU over elapsed time"),
    "srv_cli_ratio": (fig_srv_cli_ratio, "Server-to-client CPU ratio"),
    "infra_multiplier": (fig_infra_multiplier, "Infrastructure multiplier"),
    "cost_per_million": (fig_cost_per_million, "Cost per million handshakes"),
    "service_classes": (fig_service_classes, "Monthly cost by service class"),
    "paper_vs_chainlab": (fig_paper_vs_chainlab, "Paper versus this store"),
}


# -- emulated networks ---------------------------------------------------------------------

# Marker per hierarchy line within a panel (the colour is the panel's placement class); line
# style and marker fill per profile family, in the family's order (dashed is the model's).
NETWORK_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "h", "<", ">", "p")
FAMILY_STYLES = ("-", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (1, 3)), (0, (8, 2)))
FAMILY_FILLS = ("full", "none", "left", "bottom", "right", "top")
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
    with 95 % intervals, lines within a profile family, the model's prediction dashed, a
    ring where most handshakes' server flight exceeded the initial window."""
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
        colour = _colour(cls)
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
                        yerr=_err([yi], [lo], [hi]),
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
                _log(ax, "y")
            ax.set_xlabel("configured loss per packet and direction")
        ax.set_title(fam.class_display(cls, a.config.heavy_family), fontsize=9)
    axes[0, 0].set_ylabel(
        "median latency (ms; bars: 95 % CI)"
        if axis == "rtt"
        else "latency (ms): mean ± 95 % CI (filled), p95 (small, open)"
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


def fig_network_rtt(a):
    return _network_figure(a, "rtt")


def fig_network_loss(a):
    return _network_figure(a, "loss")


# Drawn only for stores with emulated networks (None otherwise).
NETWORK_FIGURES = {
    "network_rtt": (fig_network_rtt, "Latency versus RTT per hierarchy"),
    "network_loss": (fig_network_loss, "Latency versus loss per hierarchy"),
}
