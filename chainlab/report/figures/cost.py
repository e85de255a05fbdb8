"""Capacity and cost figures (the paper's Figures 18-20) and the comparison with the paper."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import (
    FuncFormatter,
    NullFormatter,
    SymmetricalLogLocator,
)

from chainlab.analysis import families as fam
from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import (
    WIDTH,
    class_colour,
    err_bars,
    fig_height,
    legend_classes,
    log_axis,
    ok_ids,
    scenario_labels,
    set_title,
)


@figure("infra_multiplier", "Infrastructure multiplier")
def fig_infra_multiplier(a):
    c = a.capacity
    if c.empty or a.baseline is None:
        return None
    ids = [i for i in ok_ids(a) if i in set(c["scenario_id"])]
    c = c.set_index("scenario_id").loc[ids]
    fig, ax = plt.subplots(figsize=(WIDTH, fig_height(len(ids))))
    y = np.arange(len(ids))
    est = c["infra_multiplier"].to_numpy(dtype=float)
    ax.barh(y, est, color=[class_colour(k) for k in c["placement_class"]], height=0.7)
    ax.errorbar(
        est,
        y,
        xerr=err_bars(est, c["infra_multiplier_lo"], c["infra_multiplier_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
    )
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    log_axis(ax, "x")
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("server cores needed for the baseline's throughput (× baseline, log scale)")
    set_title(ax, "Infrastructure multiplier needed to preserve baseline throughput")
    legend_classes(ax, c["placement_class"], a.config.heavy_family)
    return fig


@figure("cost_per_million", "Cost per million handshakes")
def fig_cost_per_million(a):
    c = a.capacity
    if c.empty:
        return None
    ids = [i for i in ok_ids(a) if i in set(c["scenario_id"])]
    c = c.set_index("scenario_id").loc[ids]
    has_extra = a.baseline is not None
    fig, axes = plt.subplots(
        1, 2 if has_extra else 1, figsize=(WIDTH, fig_height(len(ids))), sharey=True, squeeze=False
    )
    y = np.arange(len(ids))
    colours = [class_colour(k) for k in c["placement_class"]]
    ax = axes[0, 0]
    est = c["cost_per_million"].to_numpy(dtype=float)
    ax.barh(y, est, color=colours, height=0.7)
    ax.errorbar(
        est,
        y,
        xerr=err_bars(est, c["cost_per_million_lo"], c["cost_per_million_hi"]),
        fmt="none",
        ecolor="black",
        elinewidth=0.8,
        capsize=2,
    )
    log_axis(ax, "x")
    ax.set_yticks(y, scenario_labels(a, ids))
    ax.invert_yaxis()
    ax.set_xlabel("cost per million handshakes (log)")
    if has_extra:
        ax2 = axes[0, 1]
        ex = c["extra_cost_per_million"].to_numpy(dtype=float)
        ax2.barh(y, ex, color=colours, height=0.7)
        ax2.errorbar(
            ex,
            y,
            xerr=err_bars(ex, c["extra_cost_per_million_lo"], c["extra_cost_per_million_hi"]),
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


@figure("service_classes", "Monthly cost by service class")
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
            color=class_colour(cls),
            label=fam.class_display(cls, a.config.heavy_family),
        )
        ax.errorbar(
            xs,
            est,
            yerr=err_bars(est, g["median_monthly_cost_lo"], g["median_monthly_cost_hi"]),
            fmt="none",
            ecolor="black",
            capsize=2,
        )
    log_axis(ax, "y")
    vol = sc.drop_duplicates("service_class").set_index("service_class")["handshakes_per_month"]
    ax.set_xticks(x, [f"{s}\n({vol[s]:,.0f} handshakes/month)" for s in services])
    ax.set_ylabel("median monthly server cost (log; cost units)")
    ax.set_title("Monthly cost by service class and placement class (illustrative)")
    ax.legend()
    return fig


@figure("paper_vs_chainlab", "Paper versus this store")
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
            yerr=err_bars(yv, c[f"{ours}_lo"], c[f"{ours}_hi"]),
            fmt="none",
            ecolor="black",
            capsize=2,
        )
        ax.scatter(
            x, yv, c=[class_colour(cls.get(s, "none")) for s in c["chainlab_scenario_id"]], zorder=3
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
                log_axis(ax, "x")
                log_axis(ax, "y")
        ax.set_xlabel(f"paper: {label}")
        ax.set_ylabel(f"chainlab: {label}")
    fig.suptitle("This store against the paper's Table 1 (dashed: equality)")
    fig.tight_layout()
    return fig
