"""The answers a reader wants first, each computed from this store's tables with intervals:
the regime of each placement class, the effect of depth when a heavy root stops being sent,
transport versus cryptography, key-exchange sensitivity and where the CPU goes.

Each finding says what was checked, the numbers, and whether it holds here ('yes', 'no' or
'not testable' when the store lacks the scenarios). Criteria are stated in the text; none is
tuned to the paper's numbers.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.registry import produces


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or not isinstance(x, int | float) or math.isnan(x):
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _ci(row, name) -> str:
    return f"{_fmt(row[name])}× [{_fmt(row[name + '_lo'])}, {_fmt(row[name + '_hi'])}]"


def findings(a) -> list[dict]:
    """`a` is an analyze.Analysis; returns rows of (topic, finding, holds). Every finding
    is about the scenarios on the reference network (like with like,
    docs/methods/networks.md#emulated-networks)."""
    cfg = a.config
    h = fam.FAMILY_DISPLAY.get(cfg.heavy_family, cfg.heavy_family)
    out = []
    ref_summary = a.reference_summary()
    ref = set(ref_summary["scenario_id"]) if len(ref_summary) else set()
    mult = a.multipliers
    if len(mult):
        mult = mult[mult["scenario_id"].isin(ref)]
    pairs = a.pairs
    if len(pairs):
        pairs = pairs[pairs["from_id"].isin(ref) & pairs["to_id"].isin(ref)]
    bounds = cfg.plausibility

    # 1. heavy leaf regime
    if mult.empty:
        out.append(
            {
                "topic": f"{h} in the leaf",
                "holds": "not testable",
                "finding": "No baseline multipliers (see the baseline note).",
            }
        )
    else:
        leaf = mult[mult["placement_class"] == "leaf"]
        if leaf.empty:
            out.append(
                {
                    "topic": f"{h} in the leaf",
                    "holds": "not testable",
                    "finding": f"No successful scenario has {h} in the leaf.",
                }
            )
        else:
            lo = leaf["latency_x_lo"].min()
            spread = leaf["mean_ms"].max() / leaf["mean_ms"].min()
            holds = lo > bounds["problematic"]
            out.append(
                {
                    "topic": f"{h} in the leaf",
                    "holds": "yes" if holds else "no",
                    "finding": (
                        f"{len(leaf)} scenario(s) with {h} in the leaf: mean latency "
                        f"{_fmt(leaf['latency_x'].min())}× to {_fmt(leaf['latency_x'].max())}× "
                        f"the baseline (lowest interval bound {_fmt(lo)}×); their means span a "
                        f"factor of {spread:.3f}. Criterion: every interval above the "
                        f"'problematic' bound ({_fmt(bounds['problematic'])}×)."
                    ),
                }
            )
        upper = mult[mult["placement_class"].isin(["root", "intermediate"])]
        if upper.empty:
            out.append(
                {
                    "topic": f"{h} above the leaf only",
                    "holds": "not testable",
                    "finding": f"No successful scenario has {h} only above the leaf.",
                }
            )
        else:
            worst = upper.sort_values("latency_x").iloc[-1]
            holds = upper["latency_x_hi"].max() <= bounds["penalized"]
            out.append(
                {
                    "topic": f"{h} above the leaf only",
                    "holds": "yes" if holds else "no",
                    "finding": (
                        f"{len(upper)} scenario(s) keep {h} out of the leaf; the slowest, "
                        f"`{worst['scenario_id']}`, runs at {_ci(worst, 'latency_x')} the "
                        f"baseline. Criterion: every upper interval bound within the "
                        f"'penalized' bound ({_fmt(bounds['penalized'])}×)."
                    ),
                }
            )

    # 2. depth with a heavy root that stops being sent
    exp = a.exposure.set_index("scenario_id") if len(a.exposure) else pd.DataFrame()
    dp = pairs[pairs["axis"] == "depth"] if len(pairs) else pd.DataFrame()
    cases = []
    for _, p in dp.iterrows():
        s_from = a.summary.set_index("scenario_id").loc[p["from_id"]]
        if s_from["placement_class"] != "root" or len(exp) == 0:
            continue
        if bool(exp.at[p["from_id"], "root_sent"]) and not bool(exp.at[p["to_id"], "root_sent"]):
            cases.append(p)
    if not cases:
        out.append(
            {
                "topic": "depth and chain exposure",
                "holds": "not testable",
                "finding": f"No depth pair has a {h} root (with a non-{h} leaf) that is "
                "sent at the smaller depth and not sent at the larger one.",
            }
        )
    else:
        txt = "; ".join(
            f"`{p['from_id']}` → `{p['to_id']}`: latency {_ci(p, 'latency_ratio')}" for p in cases
        )
        holds = all(p["latency_ratio_hi"] < 1 for p in cases)
        out.append(
            {
                "topic": "depth and chain exposure",
                "holds": "yes" if holds else "no",
                "finding": f"Adding depth while the {h} root stops being sent: {txt}. "
                "Criterion: the deeper hierarchy is faster (interval below 1).",
            }
        )

    # 3. transport vs cryptography
    c = a.correlations
    if c.empty:
        out.append(
            {
                "topic": "transport vs cryptography",
                "holds": "not testable",
                "finding": "No correlations (fewer than 3 successful scenarios).",
            }
        )
    else:
        br = c[c["metric"] == "bytes_read"].set_index("subset_key")
        outside, inside = br.loc["not_heavy_leaf"], br.loc["heavy_leaf"]
        testable = not (math.isnan(outside["pearson_r"]) or math.isnan(inside["pearson_r"]))
        holds = testable and outside["pearson_r_lo"] > inside["pearson_r"]
        out.append(
            {
                "topic": "transport vs cryptography",
                "holds": ("yes" if holds else "no") if testable else "not testable",
                "finding": (
                    f"Pearson r of mean latency with bytes read: "
                    f"{_fmt(outside['pearson_r'])} [{_fmt(outside['pearson_r_lo'])}, "
                    f"{_fmt(outside['pearson_r_hi'])}] outside the {h}-leaf regime "
                    f"(n = {outside['n_scenarios']}), {_fmt(inside['pearson_r'])} "
                    f"[{_fmt(inside['pearson_r_lo'])}, {_fmt(inside['pearson_r_hi'])}] inside "
                    f"(n = {inside['n_scenarios']}). Criterion: the outside interval lies "
                    "above the inside estimate."
                ),
            }
        )

    # 4. key exchange sensitivity
    kp = pairs[pairs["axis"] == "kex"] if len(pairs) else pd.DataFrame()
    if kp.empty:
        out.append(
            {
                "topic": "key exchange",
                "holds": "not testable",
                "finding": "No pair of scenarios differs only in the key exchange.",
            }
        )
    else:
        cls = a.summary.set_index("scenario_id")["placement_class"]
        heavy = kp[kp["from_id"].map(cls) == "leaf"]
        light = kp[kp["from_id"].map(cls) != "leaf"]

        def dev(df):
            return (
                (df["latency_ratio"].map(lambda r: abs(math.log(r)))).max() if len(df) else math.nan
            )

        dh, dl = dev(heavy), dev(light)
        testable = not (math.isnan(dh) or math.isnan(dl))
        out.append(
            {
                "topic": "key exchange",
                "holds": ("yes" if dh < dl else "no") if testable else "not testable",
                "finding": (
                    f"Largest latency change from the key exchange alone: "
                    f"{_fmt(math.exp(dl) if dl == dl else math.nan)}× with a non-{h} leaf "
                    f"({len(light)} pair(s)), {_fmt(math.exp(dh) if dh == dh else math.nan)}× "
                    f"with a {h} leaf ({len(heavy)} pair(s)). Criterion: the key exchange "
                    f"matters less once {h} is in the leaf."
                ),
            }
        )

    # 5. where the CPU goes
    s = ref_summary[ref_summary["status"] == "ok"] if len(ref_summary) else ref_summary
    if s.empty:
        out.append(
            {
                "topic": "client/server CPU",
                "holds": "not testable",
                "finding": "No successful scenario.",
            }
        )
    else:
        out.append(_split(s, cfg, "srv_cli_ratio", "cpu_regime", "CPU"))
        # Again in instructions where every scenario has counts
        # (docs/methods/instructions.md#instructions-per-handshake): the
        # host's speed and contention do not move them.
        if "instr_regime" in s and (s["instr_regime"] != "n/a").all():
            out.append(_split(s, cfg, "instr_srv_cli_ratio", "instr_regime", "instructions"))
    return out


def _split(s: pd.DataFrame, cfg, ratio: str, regime: str, measure: str) -> dict:
    """The client/server finding by one measure (CPU or instructions): each placement
    class's server/client range and regimes; it holds when every heavy-leaf scenario is
    overwhelmingly server-bound."""
    parts = []
    for c_name in fam.PLACEMENT_CLASSES:
        g = s[s["placement_class"] == c_name]
        if g.empty:
            continue
        reg = ", ".join(f"{n} {r}" for r, n in g[regime].value_counts().items())
        parts.append(
            f"{fam.class_display(c_name, cfg.heavy_family)}: server/client {measure} "
            f"{_fmt(g[ratio].min())}–{_fmt(g[ratio].max())} ({reg})"
        )
    leaf = s[s["placement_class"] == "leaf"]
    holds = (leaf[regime] == "overwhelmingly server-bound").all()
    heavy = fam.FAMILY_DISPLAY.get(cfg.heavy_family, cfg.heavy_family)
    return {
        "topic": f"client/server {measure}",
        "holds": ("yes" if holds else "no") if len(leaf) else "not testable",
        "finding": "; ".join(parts) + f". Criterion: every {heavy}-leaf scenario is "
        "overwhelmingly server-bound" + ("." if measure == "CPU" else f" in {measure}."),
    }


@produces("findings", empty=list)
def _analysis_findings(a) -> list[dict]:
    return findings(a)
