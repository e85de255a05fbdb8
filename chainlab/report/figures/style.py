"""What every figure shares: matplotlib set-up, sizes, scenario order and labels, colours,
legends, horizontal bars with intervals, log axes."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    NullFormatter,
)

from chainlab.analysis import families as fam

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


def plain_ticks(v, _pos=None) -> str:
    """Tick label without mathtext (which is slow to lay out): 0.01, 1, 1,000, 1e+06."""
    if v <= 0 or not math.isfinite(v):
        return ""
    if 1e-3 <= v < 1e6:
        return f"{v:,.10g}"
    return f"{v:.0e}"


def log_axis(ax, which: str = "x") -> None:
    """Log scale with plain decimal labels on major ticks only."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_formatter(FuncFormatter(plain_ticks))
    # minor ticks at 2 and 5 only: enough to read values, a quarter of the tick artists
    axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_minor_formatter(NullFormatter())


def fig_height(n: int, extra: float = 1.3) -> float:
    return max(2.6, extra + ROW_HEIGHT * n)


def class_colour(cls: str) -> str:
    return fam.PLACEMENT_COLOURS.get(cls, "#333333")


def legend_classes(ax, classes, heavy: str, loc="above", lift: float = 0.3):
    """Legend of the placement classes present; 'above' puts it in one row over the axes
    (never over data), so the title must leave room (`title`)."""
    seen = [c for c in fam.PLACEMENT_CLASSES if c in set(classes)]
    if "failed" in set(classes):
        seen.append("failed")
    handles = [Patch(color=class_colour(c), label=fam.class_display(c, heavy)) for c in seen]
    if not handles:
        return
    if loc == "above":
        chars = sum(len(str(h.get_label())) for h in handles)
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


def legend_above(ax) -> None:
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


def set_title(ax, text: str) -> None:
    """Title above an 'above' legend."""
    ax.set_title(text, pad=24)


def log_floor(ax, values) -> None:
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


def scenario_labels(a, ids) -> list[str]:
    s = a.summary.set_index("scenario_id")
    return [f"{s.at[i, 'label_chain']}\n{s.at[i, 'label_kex']}" for i in ids]


def err_bars(est, lo, hi):
    est, lo, hi = (np.asarray(v, dtype=float) for v in (est, lo, hi))
    lower = np.where(np.isfinite(lo), est - lo, 0.0)
    upper = np.where(np.isfinite(hi), hi - est, 0.0)
    return np.vstack([np.clip(lower, 0, None), np.clip(upper, 0, None)])


def hbars(a, ax, ids, col, log=True, failed_note=True, show_ci=True):
    s = a.summary.set_index("scenario_id")
    y = np.arange(len(ids))
    est = s.loc[ids, col].to_numpy(dtype=float)
    lo = s.loc[ids, f"{col}_lo"].to_numpy(dtype=float) if show_ci else est
    hi = s.loc[ids, f"{col}_hi"].to_numpy(dtype=float) if show_ci else est
    colours = [class_colour(s.at[i, "placement_class"]) for i in ids]
    ok = np.isfinite(est)
    ax.barh(y[ok], est[ok], color=np.array(colours)[ok], height=0.7)
    if show_ci:
        ax.errorbar(
            est[ok],
            y[ok],
            xerr=err_bars(est[ok], lo[ok], hi[ok]),
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
        )
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    if log:
        log_axis(ax, "x")
        log_floor(ax, np.concatenate([est[ok], lo[ok]]))
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


def baseline_line(a, ax, col):
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


def classes_of(a, ids):
    s = a.summary.set_index("scenario_id")
    return [s.at[i, "placement_class"] if s.at[i, "status"] == "ok" else "failed" for i in ids]


def by_class(s: pd.DataFrame):
    """(class, rows) in the fixed class order, so legends list classes the same way."""
    for cls in fam.PLACEMENT_CLASSES:
        g = s[s["placement_class"] == cls]
        if len(g):
            yield cls, g


def side_bars(a, ids, metric: str):
    """Client and server bars side by side per scenario, with their CIs, for the summary
    columns client_<metric> and server_<metric>."""
    s = a.summary.set_index("scenario_id")
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    y = np.arange(len(ids))
    for off, side, colour in ((-0.18, "client", "#56B4E9"), (0.18, "server", "#D55E00")):
        col = f"{side}_{metric}"
        est = s.loc[ids, col].to_numpy(dtype=float)
        ax.barh(y + off, est, height=0.36, color=colour, label=side)
        ax.errorbar(
            est,
            y + off,
            xerr=err_bars(est, s.loc[ids, f"{col}_lo"], s.loc[ids, f"{col}_hi"]),
            fmt="none",
            ecolor="black",
            elinewidth=0.7,
            capsize=1.5,
        )
    ax.set_yticks(y, scenario_labels(a, ids))
    return fig, ax


def ok_ids(a):
    ok = set(a.summary.loc[a.summary["status"] == "ok", "scenario_id"])
    return [i for i in scenario_order(a) if i in ok]


def ratio_scale(ax, values, which: str = "x") -> None:
    """Log scale for ratios spanning more than 3x, else linear (a narrow log axis would show
    no labelled tick)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size and v.max() / v.min() > 3:
        log_axis(ax, which)


def level(a) -> str:
    """The confidence level of the report's intervals, as figure labels say it: '95 %'."""
    return f"{a.config.confidence_level * 100:g} %"
