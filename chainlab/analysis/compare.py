"""Comparisons between scenarios: baseline multipliers, placement classes (the paper's
Table 7), operational plausibility and the strategy matrix (Tables 3-4), and paired
comparisons found in the matrix (Tables 2, 5, 6).

Intervals (docs/methods/statistics.md#ratios-between-scenarios, #quantile-ratios,
#over-several-scenarios):
- a ratio of two scenarios' means: log-scale delta method, independent samples;
- a ratio of two scenarios' quantiles: percentile interval of exact order-statistic bootstrap
  replicates (`stats.quantile_bootstrap`), B = bootstrap_resamples;
- a statistic of several scenarios (a class mean or median): Monte Carlo over each scenario
  mean's large-sample log-normal distribution (`stats.lognormal_draws`), B draws, the
  percentile interval of the statistic's draws. The baseline's draws are shared by every
  multiplier so their dependence on one baseline is kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from chainlab import axes
from chainlab.analysis import families as fam
from chainlab.analysis.registry import produces
from chainlab.analysis.twins import instructions_disagree
from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES, AnalysisConfig
from chainlab.stats import (
    lognormal_draws,
    percentile_interval,
    quantile_bootstrap,
    ratio_ci,
    seeded_rng,
)

# Metrics with baseline multipliers: output prefix -> summary column (a mean)
MULTIPLIER_METRICS = {
    "latency_x": "mean_ms",
    "bytes_read_x": "bytes_read",
    "server_cpu_x": "server_cpu_ms",
    "client_cpu_x": "client_cpu_ms",
    # Instructions per handshake, where counted (NaN otherwise;
    # docs/methods/instructions.md#instructions-per-handshake).
    "server_instr_x": "server_instr",
    "client_instr_x": "client_instr",
}


@dataclass
class MonteCarlo:
    """Cached draws per (scenario, metric): log-normal around the estimate with the
    log-scale standard error from the summary; order-statistic bootstrap for quantiles."""

    summary: pd.DataFrame
    cfg: AnalysisConfig
    latencies: dict
    _cache: dict = field(default_factory=dict)

    def __post_init__(self):
        self._rows = self.summary.set_index("scenario_id")

    def mean(self, sid: str, col: str) -> np.ndarray:
        key = ("mean", sid, col)
        if key not in self._cache:
            est = float(self._rows.at[sid, col])
            se = float(self._rows.at[sid, f"{col}_se"])
            rng = seeded_rng(self.cfg.bootstrap_seed, "mean", sid, col)
            self._cache[key] = lognormal_draws(est, se, self.cfg.bootstrap_resamples, rng)
        return self._cache[key]

    def quantile(self, sid: str, q: float) -> np.ndarray:
        key = ("quantile", sid, q)
        if key not in self._cache:
            rng = seeded_rng(self.cfg.bootstrap_seed, "quantile", sid, repr(q))
            lat = self.latencies.get(sid, np.empty(0))
            self._cache[key] = quantile_bootstrap(lat, q, self.cfg.bootstrap_resamples, rng)
        return self._cache[key]


def ratio_of_means(summary_rows: pd.DataFrame, a: str, b: str, col: str, level: float):
    """mean_a / mean_b and its log-scale delta interval (independent scenarios)."""
    if a == b:
        return (1.0, 1.0, 1.0)
    ea, eb = summary_rows.at[a, col], summary_rows.at[b, col]
    sa, sb = summary_rows.at[a, f"{col}_se"], summary_rows.at[b, f"{col}_se"]
    return ratio_ci(ea, sa, eb, sb, level)


def ratio_of_quantiles(mc: MonteCarlo, summary_rows, a: str, b: str, q_col: str, q: float):
    if a == b:
        return (1.0, 1.0, 1.0)
    ea, eb = summary_rows.at[a, q_col], summary_rows.at[b, q_col]
    if not (ea > 0 and eb > 0):
        return (math.nan, math.nan, math.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = mc.quantile(a, q) / mc.quantile(b, q)
    lo, hi = percentile_interval(reps, mc.cfg.confidence_level)
    return (float(ea / eb), lo, hi)


def plausibility(mult: float, bounds: dict) -> tuple[str, int]:
    """Plausibility class and rank (1-4) of a mean-latency multiplier vs the baseline."""
    if not math.isfinite(mult):
        return ("n/a", 0)
    keys = ("reasonable", "penalized", "problematic")
    for rank, (name, key) in enumerate(zip(PLAUSIBILITY_CLASSES[:3], keys, strict=True), 1):
        if mult <= bounds[key]:
            return (name, rank)
    return (PLAUSIBILITY_CLASSES[3], 4)


def baseline_status(summary: pd.DataFrame, cfg: AnalysisConfig) -> tuple[str | None, str]:
    """(usable baseline id or None, a sentence saying which baseline is used or why none)."""
    if cfg.baseline is None:
        return (
            None,
            "No baseline scenario is named in the campaign file (top-level "
            "`baseline` or `[analysis].baseline`), so no baseline-relative "
            "numbers are shown.",
        )
    rows = summary[summary["scenario_id"] == cfg.baseline]
    if rows.empty:
        return (
            None,
            f"The baseline `{cfg.baseline}` named in the campaign file is not in "
            "this store, so no baseline-relative numbers are shown.",
        )
    if rows.iloc[0]["status"] != "ok":
        return (
            None,
            f"The baseline `{cfg.baseline}` failed ({rows.iloc[0]['failure']}), "
            "so no baseline-relative numbers are shown.",
        )
    return (
        cfg.baseline,
        f"Baseline: `{cfg.baseline}` (source: {cfg.sources.get('baseline', 'campaign file')}).",
    )


def baseline_references(summary: pd.DataFrame, baseline: str | None) -> dict[str, str | None]:
    """Like with like (docs/methods/networks.md#emulated-networks): the scenario each successful
    scenario's
    multipliers are relative to: the baseline for scenarios on the baseline's network; for
    a scenario on another network, the baseline's counterpart on that network (the same
    scenario apart from the network), or None when that was not measured successfully."""
    ok = summary[summary["status"] == "ok"]
    if baseline is None or ok.empty:
        return {}
    idx = summary.set_index("scenario_id")
    base_net = idx.at[baseline, "network"]
    # The columns that identify a scenario apart from its network: a scenario's counterpart
    # on another network agrees on all of them.
    keys = axes.scenario_keys()
    want = tuple(_val(idx.at[baseline, k]) for k in keys)
    twin = {}
    for _, r in ok.iterrows():
        if tuple(_val(r[k]) for k in keys) == want:
            twin[r["network"]] = r["scenario_id"]
    return {
        sid: baseline if net == base_net else twin.get(net)
        for sid, net in zip(ok["scenario_id"], ok["network"], strict=True)
    }


def multipliers(summary: pd.DataFrame, mc: MonteCarlo, baseline: str | None) -> pd.DataFrame:
    """Every successful scenario relative to the baseline (on another network than the
    baseline's: relative to the baseline's counterpart there, `baseline_references`), with
    plausibility classes. A scenario without a reference is left out. When the store has
    several networks a `baseline_id` column names each row's reference."""
    cfg = mc.cfg
    ok = summary[summary["status"] == "ok"]
    if baseline is None or ok.empty:
        return pd.DataFrame()
    refs = baseline_references(summary, baseline)
    several = summary["network"].nunique() > 1
    rows_idx = summary.set_index("scenario_id")
    bounds = cfg.plausibility
    out = []
    for _, r in ok.iterrows():
        sid = r["scenario_id"]
        ref = refs.get(sid)
        if ref is None:
            continue
        row = {
            "scenario_id": sid,
            "label": r["label"],
            "placement_class": r["placement_class"],
            "heavy_positions": r["heavy_positions"],
            "mean_ms": r["mean_ms"],
        }
        if several:
            row["baseline_id"] = ref
        for prefix, col in MULTIPLIER_METRICS.items():
            est, lo, hi = ratio_of_means(rows_idx, sid, ref, col, cfg.confidence_level)
            row[prefix], row[f"{prefix}_lo"], row[f"{prefix}_hi"] = est, lo, hi
        est, lo, hi = ratio_of_quantiles(mc, rows_idx, sid, ref, "p95_ms", 0.95)
        row["p95_x"], row["p95_x_lo"], row["p95_x_hi"] = est, lo, hi
        row["machines_differ"] = machines_differ(r, rows_idx.loc[ref])
        row["instr_disagrees"] = instructions_disagree(
            {
                f"{side}_{what}_ratio{end}": row[f"{side}_{what}_x{end}"]
                for side in ("server", "client")
                for what in ("cpu", "instr")
                for end in ("_lo", "_hi")
            }
        )
        name, rank = plausibility(row["latency_x"], bounds)
        lo_name, _ = plausibility(row["latency_x_lo"], bounds)
        hi_name, _ = plausibility(row["latency_x_hi"], bounds)
        row["plausibility"] = name
        row["plausibility_rank"] = rank
        row["plausibility_certain"] = bool(lo_name == name == hi_name)
        out.append(row)
    df = pd.DataFrame(out).sort_values(["latency_x", "scenario_id"]).reset_index(drop=True)
    return df


def machines_differ(a, b) -> bool:
    """Whether two scenarios ran on different machine types (known for both)."""
    ma, mb = a.get("machine", ""), b.get("machine", "")
    return bool(ma and mb and ma != mb)


def strategy_matrix(summary: pd.DataFrame, mult: pd.DataFrame, baseline: str | None):
    """The scenarios that differ from the baseline only in their hierarchy's algorithms
    (same key exchange, depth, served chain, handshake mode, compression, network): the
    paper's Campaign B strategy matrix (Tables 3-4)."""
    if baseline is None or mult.empty:
        return pd.DataFrame()
    b = summary.set_index("scenario_id").loc[baseline]
    fixed = ["kex", "depth", *axes.lever_columns(), "network"]
    same = summary
    for c in fixed:
        same = same[same[c] == b[c]]
    m = mult[mult["scenario_id"].isin(same["scenario_id"])].copy()
    h = summary.set_index("scenario_id")["hierarchy"]
    m.insert(2, "hierarchy", m["scenario_id"].map(h))
    return m.sort_values(["plausibility_rank", "latency_x", "scenario_id"]).reset_index(drop=True)


def group_members(summary: pd.DataFrame, grouping: str) -> dict[str, pd.DataFrame]:
    """Successful scenarios per group: 'exclusive' uses `placement_class` (each scenario
    once); 'table7' the paper's overlapping Table 7 groups (`table7_groups`)."""
    ok = summary[summary["status"] == "ok"]
    if grouping == "exclusive":
        groups = {c: ok[ok["placement_class"] == c] for c in fam.PLACEMENT_CLASSES}
    else:
        groups = {
            g: ok[ok["table7_groups"].str.split(",").apply(lambda gs, g=g: g in gs)]
            for g in fam.TABLE7_GROUPS
        }
    return {g: m for g, m in groups.items() if not m.empty}


def group_stats(
    summary: pd.DataFrame,
    mc: MonteCarlo,
    baseline: str | None,
    grouping: str,
    specs: list[tuple[str, str, str, bool]],
) -> pd.DataFrame:
    """Statistics over the scenarios of each group with Monte-Carlo intervals.

    specs: (output name, summary column, 'mean' | 'median', relative to baseline?).
    A relative statistic is NaN without a baseline.
    """
    cfg = mc.cfg
    fns: dict[str, Callable[..., Any]] = {"mean": np.mean, "median": np.median}
    idx = summary.set_index("scenario_id")
    out = []
    for g, members in group_members(summary, grouping).items():
        ids = list(members["scenario_id"])
        row = {
            "class": g,
            "class_name": fam.class_display(g, cfg.heavy_family),
            "n_scenarios": len(ids),
            "scenarios": " ".join(ids),
        }
        for name, col, fn_name, relative in specs:
            fn = fns[fn_name]
            point = members[col].to_numpy(dtype=float)
            draws = np.column_stack([mc.mean(s, col) for s in ids])
            if relative:
                if baseline is None:
                    row[name] = row[f"{name}_lo"] = row[f"{name}_hi"] = math.nan
                    continue
                point = point / float(idx.at[baseline, col])
                draws = draws / mc.mean(baseline, col)[:, None]
            row[name] = float(fn(point))
            row[f"{name}_lo"], row[f"{name}_hi"] = percentile_interval(
                fn(draws, axis=1), cfg.confidence_level
            )
        out.append(row)
    return pd.DataFrame(out)


def class_table(
    summary: pd.DataFrame, mc: MonteCarlo, baseline: str | None, grouping: str = "exclusive"
) -> pd.DataFrame:
    """Per placement class: latency spread and mean/median multipliers (the paper's Table 7)."""
    specs = [
        ("mean_ms", "mean_ms", "mean", False),
        ("median_ms", "mean_ms", "median", False),
        ("mean_latency_x", "mean_ms", "mean", True),
        ("median_latency_x", "mean_ms", "median", True),
        ("mean_bytes_x", "bytes_read", "mean", True),
        ("mean_server_cpu_x", "server_cpu_ms", "mean", True),
        ("mean_server_over_elapsed", "server_over_elapsed", "mean", False),
        ("mean_client_over_elapsed", "client_over_elapsed", "mean", False),
    ]
    df = group_stats(summary, mc, baseline, grouping, specs)
    if df.empty:
        return df
    members = group_members(summary, grouping)
    df["min_ms"] = [float(members[g]["mean_ms"].min()) for g in df["class"]]
    df["max_ms"] = [float(members[g]["mean_ms"].max()) for g in df["class"]]
    return df


# ---------------------------------------------------------------------------------------
# Paired comparisons

# The hierarchy's own pair axes (a pair differs in one position, or in every position
# alike); the others come from the registry (chainlab.axes), in its order.
HIERARCHY_AXES = {
    "leaf_alg": "leaf algorithm",
    "uniform": "whole-hierarchy algorithm",
    "root_alg": "root algorithm",
    "int1_alg": "first intermediate algorithm",
    "int2_alg": "second intermediate algorithm",
}


def pair_axes() -> dict[str, str]:
    """Every axis a pair of scenarios can differ along (a column) -> its label, in the
    report's order: the hierarchy's positions, depth, key exchange, the levers, network."""
    return {**HIERARCHY_AXES, **axes.labels()}


def _fields() -> tuple[str, ...]:
    return (*axes.scenario_keys(), "network")


def _val(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _sig(r) -> dict:
    return {f: _val(r[f]) for f in _fields()}


def _uniform_alg(sig: dict) -> str | None:
    algs = {sig[p] for p in ("root_alg", "int1_alg", "int2_alg", "leaf_alg") if sig[p]}
    return next(iter(algs)) if len(algs) == 1 else None


def _pair_axis(a: dict, b: dict) -> str | None:
    diff = [f for f in _fields() if a[f] != b[f]]
    others = axes.lever_columns()
    if len(diff) == 1:
        return diff[0]
    if "depth" in diff:
        # A depth change may come with a different served-chain policy (what is sent
        # depends on the topology: the paper sends root + leaf at depth 2 and
        # intermediate + leaf at depth 3); the context then names both policies.
        if any(a[f] != b[f] for f in (*others, "kex", "network") if f != "served_chain"):
            return None
        root_a = a["root_alg"] if a["depth"] >= 2 else a["leaf_alg"]
        root_b = b["root_alg"] if b["depth"] >= 2 else b["leaf_alg"]
        if a["leaf_alg"] == b["leaf_alg"] and root_a == root_b:
            return "depth"
        return None
    if any(a[f] != b[f] for f in (*others, "kex", "network")):
        return None
    ua, ub = _uniform_alg(a), _uniform_alg(b)
    if ua and ub and ua != ub and a["depth"] == b["depth"]:
        return "uniform"
    return None


def _orient(
    axis: str, a: pd.Series, b: pd.Series, heavy: str, network_rank: dict | None = None
) -> bool:
    """True when a -> b is the canonical direction (light -> heavy, shallow -> deep,
    classical -> hybrid -> pure PQ, less served -> more, full -> resumed, none -> compressed,
    loopback -> other; between profiles by `network_rank`: RTT, loss, then lower rate)."""
    if axis == "network" and network_rank:
        ka = network_rank.get(a["network"], (math.inf, math.inf, math.inf, str(a["network"])))
        kb = network_rank.get(b["network"], (math.inf, math.inf, math.inf, str(b["network"])))
        return ka < kb
    if axis in ("leaf_alg", "root_alg", "int1_alg", "int2_alg", "uniform"):
        col = "leaf_alg" if axis == "uniform" else axis
        ha, hb = fam.family(a[col]) == heavy, fam.family(b[col]) == heavy
        if ha != hb:
            return hb
        return str(a[col]) < str(b[col])
    if axis == "depth":
        return int(a["depth"]) < int(b["depth"])
    if axis == "kex":
        oa = axes.KEX.order.get(a["kex_family"], 9)
        ob = axes.KEX.order.get(b["kex_family"], 9)
        return (oa, str(a["kex"])) < (ob, str(b["kex"]))
    order = axes.value_order().get(axis, {})
    return (order.get(a[axis], 9), str(a[axis])) < (order.get(b[axis], 9), str(b[axis]))


def _change(axis: str, a: pd.Series, b: pd.Series) -> tuple[str, str]:
    if axis == "uniform":
        return (str(a["leaf_alg"]), str(b["leaf_alg"]))
    if axis == "kex":
        return (f"{a['kex']} ({a['kex_family']})", f"{b['kex']} ({b['kex_family']})")
    if axis == "depth":
        return (f"depth {a['depth']}", f"depth {b['depth']}")
    return (str(a[axis]), str(b[axis]))


def _context(axis: str, a: pd.Series, b: pd.Series) -> str:
    """What the pair holds fixed, in words."""
    if axis == "depth":
        fa = fam.FAMILY_SHORT.get(fam.family(a["leaf_alg"]), a["leaf_alg"])
        root = a["root_alg"] if int(a["depth"]) >= 2 else a["leaf_alg"]
        fr = fam.FAMILY_SHORT.get(fam.family(root), root)
        ints = [
            b[c]
            for c in ("int1_alg", "int2_alg")
            if int(b["depth"]) >= (3 if c == "int1_alg" else 4)
        ]
        ints_s = ", ".join(fam.FAMILY_SHORT.get(fam.family(i), i) for i in ints)
        extra = f" ({ints_s} intermediate)" if ints_s else ""
        served = ""
        if a["served_chain"] != b["served_chain"]:
            served = f" · sends {a['served_chain']} → {b['served_chain']}"
        return f"{fr} root + {fa} leaf{extra} · {a['kex']}{served}"
    if axis == "uniform":
        return f"depth {a['depth']} uniform hierarchy · {a['kex']}"
    if axis == "kex":
        return f"{a['hierarchy']} (depth {a['depth']})"
    if axis in ("leaf_alg", "root_alg", "int1_alg", "int2_alg"):
        return f"{a['hierarchy']} → {b['hierarchy']} · {a['kex']}"
    return f"{a['hierarchy']} · {a['kex']}"


def find_pairs(
    summary: pd.DataFrame,
    campaigns: pd.DataFrame,
    mc: MonteCarlo,
    network_rank: dict | None = None,
) -> pd.DataFrame:
    """Every pair of successful scenarios that differ along exactly one axis, with ratios
    (to / from) of mean and p95 latency, bytes read, server and client CPU. Network pairs
    point from the milder network to the harsher (`network_rank`, else by name)."""
    cfg = mc.cfg
    heavy = cfg.heavy_family
    level = cfg.confidence_level
    ok = summary[summary["status"] == "ok"].reset_index(drop=True)
    rows_idx = summary.set_index("scenario_id")
    member: dict[str, set[str]] = {}
    if campaigns is not None and not campaigns.empty:
        for c, s in zip(campaigns["campaign"], campaigns["scenario_id"], strict=True):
            member.setdefault(s, set()).add(str(c))
    sigs = [_sig(r) for _, r in ok.iterrows()]
    labels = pair_axes()
    out = []
    for i in range(len(ok)):
        for j in range(i + 1, len(ok)):
            axis = _pair_axis(sigs[i], sigs[j])
            if axis is None:
                continue
            a, b = ok.iloc[i], ok.iloc[j]
            if not _orient(axis, a, b, heavy, network_rank):
                a, b = b, a
            fa, fb = a["scenario_id"], b["scenario_id"]
            frm, to = _change(axis, a, b)
            row = {
                "axis": axis,
                "axis_label": labels[axis],
                "from_id": fa,
                "to_id": fb,
                "from_value": frm,
                "to_value": to,
                "context": _context(axis, a, b),
                "campaigns": ",".join(sorted(member.get(fa, set()) & member.get(fb, set()))),
                "from_mean_ms": a["mean_ms"],
                "to_mean_ms": b["mean_ms"],
                "delta_mean_ms": b["mean_ms"] - a["mean_ms"],
                "from_p95_ms": a["p95_ms"],
                "to_p95_ms": b["p95_ms"],
                "from_bytes_read": a["bytes_read"],
                "to_bytes_read": b["bytes_read"],
                "delta_bytes_read": b["bytes_read"] - a["bytes_read"],
                "from_chain_bytes": a["chain_bytes"],
                "to_chain_bytes": b["chain_bytes"],
                "delta_chain_bytes": b["chain_bytes"] - a["chain_bytes"],
                "from_server_cpu_ms": a["server_cpu_ms"],
                "to_server_cpu_ms": b["server_cpu_ms"],
                "delta_server_cpu_ms": b["server_cpu_ms"] - a["server_cpu_ms"],
                "from_client_cpu_ms": a["client_cpu_ms"],
                "to_client_cpu_ms": b["client_cpu_ms"],
                "machines_differ": machines_differ(a, b),
            }
            for name, col in (
                ("latency_ratio", "mean_ms"),
                ("bytes_read_ratio", "bytes_read"),
                ("chain_bytes_ratio", "chain_bytes"),
                ("server_cpu_ratio", "server_cpu_ms"),
                ("client_cpu_ratio", "client_cpu_ms"),
                ("server_instr_ratio", "server_instr"),
                ("client_instr_ratio", "client_instr"),
            ):
                est, lo, hi = ratio_of_means(rows_idx, fb, fa, col, level)
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est, lo, hi
            row["instr_disagrees"] = instructions_disagree(row)
            est, lo, hi = ratio_of_quantiles(mc, rows_idx, fb, fa, "p95_ms", 0.95)
            row["p95_ratio"], row["p95_ratio_lo"], row["p95_ratio_hi"] = est, lo, hi
            lo, hi = row["latency_ratio_lo"], row["latency_ratio_hi"]
            row["latency_change"] = (
                "higher" if lo > 1 else "lower" if hi < 1 else "not distinguishable"
            )
            out.append(row)
    if not out:
        return pd.DataFrame()
    df = pd.DataFrame(out)
    axis_order = {a: i for i, a in enumerate(labels)}
    df["_o"] = df["axis"].map(axis_order)
    df = df.sort_values(["_o", "context", "from_id", "to_id"]).drop(columns="_o")
    return df.reset_index(drop=True)


@produces("monte_carlo", empty=lambda: None)
def _analysis_monte_carlo(a) -> MonteCarlo:
    return MonteCarlo(a.summary, a.config, a.data.latencies_ms)


# The baseline's note in a store of probes only (chainlab.analysis.registry), where no
# baseline is looked for.
PROBES_ONLY_NOTE = "the store holds probes of servers chainlab did not start only"


@produces("baseline", "baseline_note", empty=lambda: (None, PROBES_ONLY_NOTE))
def _analysis_baseline(a) -> tuple[str | None, str]:
    return baseline_status(a.summary, a.config)


@produces("multipliers")
def _analysis_multipliers(a) -> pd.DataFrame:
    return multipliers(a.summary, a.monte_carlo, a.baseline)


@produces("strategy")
def _analysis_strategy(a) -> pd.DataFrame:
    return strategy_matrix(a.summary, a.multipliers, a.baseline)


@produces("pairs")
def _analysis_pairs(a) -> pd.DataFrame:
    return find_pairs(a.summary, a.data.campaigns, a.monte_carlo, a.network_rank)


# Statistics over several scenarios compare like with like: the reference network's.
@produces("table7")
def _analysis_table7(a) -> pd.DataFrame:
    return class_table(a.reference_summary(), a.monte_carlo, a.baseline, "table7")


@produces("classes")
def _analysis_classes(a) -> pd.DataFrame:
    return class_table(a.reference_summary(), a.monte_carlo, a.baseline, "exclusive")


@produces("placement_study", empty=lambda: False)
def _analysis_placement_study(a) -> bool:
    """Whether the store studies placement: its analysed scenarios vary no lever but the
    served chain (the paper's own exposure axis, its Campaigns A, C and D), so the placement
    study's analyses (classes, the strategy matrix, correlations, capacity and cost,
    findings, the paper comparison) compare hierarchies as the paper did. A store that
    varies another lever is read lever by lever, each scenario against its twin
    (chainlab.analysis.twins; docs/methods/placement.md#which-stores)."""
    summ = a.summary
    ok = summ[summ["status"] == "ok"] if "status" in summ else summ
    if ok.empty:
        return False
    exposure = set(axes.SERVED_CHAIN.column_names)
    columns = [c for c in axes.lever_columns() if c in ok and c not in exposure]
    return all(ok[c].nunique(dropna=False) <= 1 for c in columns)
