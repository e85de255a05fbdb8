"""Staged rollout: figures split by kind of client, each population's share of post-quantum
clients against its figures, and the guide's rollback rule evaluated on them
(docs/methods/rollout.md#staged-rollout).

A *rollout group* is the scenarios that differ only in their population: one server (its
chains, groups, stack) on one path. Within a group, the all-classical population (PQ share
0) is the baseline; the rule (chainlab/data/guide_claims.csv, `rollback_p99_factor`) rolls
back when the p99 handshake latency exceeds that factor times the baseline's. It is read at
each load the store measured: one connection at a time, and each [load] fraction of the
scenario's own capacity.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab import axes
from chainlab.analysis.compression import guide_claim
from chainlab.analysis.registry import produces
from chainlab.axes import rollout
from chainlab.stats import mean_ci, quantile_ci

ALL_KINDS = "all"
# The loads the rule is read at: one connection at a time ("single"), then these [load]
# fractions of the scenario's capacity; per_share's columns are f"p99_ms_{load}[_lo|_hi]".
SINGLE = "single"
LOAD_FRACTIONS = (0.5, 0.9)
_FRACTION_SLACK = 1e-6
# What a group is: every scenario column but the population's.
_POPULATION_COLUMNS = set(axes.POPULATION.column_names)


def rollback_factor() -> tuple[float, str, int]:
    """The guide's rollback threshold (a multiple of the baseline's p99), quote, line."""
    claim = guide_claim("rollback_p99_factor")
    return float(claim["low"]), str(claim["quote"]), int(claim["line"])


def by_kind(attempts: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per rollout scenario and kind of client, and for all kinds together: attempts,
    failures by category (the server's where it saw the attempt), the chain sent, and the
    means (latency, CPU each side, bytes each way) and p99 with their intervals."""
    if attempts is None or attempts.empty:
        return pd.DataFrame()
    df = attempts.copy()
    df["client_kind"] = df["client_kind"].fillna("one client")
    rows = []
    for sid, g in df.groupby("scenario_id", sort=True):
        kinds = [(k, gk) for k, gk in g.groupby("client_kind", sort=True)]
        if len(kinds) > 1:
            kinds.append((ALL_KINDS, g))
        for kind, gk in kinds:
            rows.append({"scenario_id": sid, "kind": kind, **_figures(gk, level)})
    return pd.DataFrame(rows)


def _figures(g: pd.DataFrame, level: float) -> dict:
    ok = g[g["outcome"] == "ok"]
    failed = g[g["outcome"] != "ok"]
    cats = failed["server_error_category"].fillna(failed["error_category"]).fillna("unknown")
    chains = ok["chain_index"].dropna().astype(int)
    out = {
        "n": len(g),
        "n_ok": len(ok),
        "n_failed": len(failed),
        "failures": ", ".join(f"{c} {n}" for c, n in cats.value_counts().sort_index().items()),
        "chain_sent": ", ".join(str(c) for c in sorted(chains.unique())) if len(chains) else "",
    }
    for name, column, scale in (
        ("latency_ms", "total_ns", 1e-6),
        ("server_cpu_ms", "server_cpu_ns", 1e-6),
        ("client_cpu_ms", "client_cpu_ns", 1e-6),
        ("bytes_read", "bytes_read", 1.0),
        ("bytes_written", "bytes_written", 1.0),
    ):
        v = ok[column].dropna().to_numpy(dtype=float) * scale
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = (
            mean_ci(v, level) if len(v) >= 2 else (math.nan,) * 3
        )
    lat = np.sort(ok["total_ns"].dropna().to_numpy(dtype=float) / 1e6)
    out["p99_ms"], out["p99_ms_lo"], out["p99_ms_hi"] = quantile_ci(lat, 0.99, level)
    return out


def load_by_kind(load: pd.DataFrame, steps: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per rollout scenario, load step and kind (and all together): attempts, failures, and
    p50 / p99 latency from the intended start with intervals."""
    if load is None or load.empty or steps.empty:
        return pd.DataFrame()
    fraction = steps.set_index(["scenario_id", "step"])["fraction"]
    df = load.copy()
    # Without a kind: one client (no population), or an attempt never started.
    drew = df.groupby("scenario_id")["client_kind"].transform(lambda k: k.notna().any())
    df["client_kind"] = df["client_kind"].fillna(
        drew.map({True: "never started", False: "one client"})
    )
    rows = []
    for (sid, step), g in df.groupby(["scenario_id", "step"], sort=True):
        kinds = [(k, gk) for k, gk in g.groupby("client_kind", sort=True)]
        if len(kinds) > 1:
            kinds.append((ALL_KINDS, g))
        for kind, gk in kinds:
            lat = np.sort(gk.loc[gk["outcome"] == "ok", "latency_ns"].dropna().to_numpy() / 1e6)
            row = {
                "scenario_id": sid,
                "step": int(step),
                "fraction": fraction.get((sid, step), math.nan),
                "kind": kind,
                "n": len(gk),
                "n_failed": int((gk["outcome"] != "ok").sum()),
            }
            for name, q in (("p50_ms", 0.5), ("p99_ms", 0.99)):
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = quantile_ci(lat, q, level)
            rows.append(row)
    return pd.DataFrame(rows)


def group_label(r) -> str:
    """A rollout group's name: its chains (and the server's group order where it has one)."""
    chains = str(r["hierarchy"])
    if r["second_chain"] != rollout.NO_SECOND_CHAIN:
        chains += " + " + " / ".join(r["second_chain"].split(","))
    if r["server_groups"] != rollout.CLIENT_ORDER:
        chains += f" (server prefers {r['server_groups']})"
    if r.get("chain_order", rollout.CLIENT_ORDER) != rollout.CLIENT_ORDER:
        chains += f" (chain by the {r['chain_order']}'s order)"
    return chains


def pq_chain_share(attempts: pd.DataFrame, summary: pd.DataFrame) -> dict[str, float]:
    """Per dual-chain scenario whose one chain is post-quantum: the share of its successful
    attempts the server sent that chain, read from the records (`chain_index`: 0 the
    hierarchy's, 1 the second chain's), not from the configuration."""
    if attempts is None or attempts.empty or "second_chain" not in summary:
        return {}
    pq_index = {}
    for r in summary.to_dict("records"):
        if r["second_chain"] == rollout.NO_SECOND_CHAIN or not isinstance(r["leaf_alg"], str):
            continue
        leaves = (r["leaf_alg"], r["second_chain"].split(",")[-1])
        pq = [i for i, alg in enumerate(leaves) if rollout.is_post_quantum(alg)]
        if len(pq) == 1:
            pq_index[r["scenario_id"]] = pq[0]
    out = {}
    ok = attempts[(attempts["outcome"] == "ok") & attempts["chain_index"].notna()]
    for sid, g in ok.groupby("scenario_id"):
        if sid in pq_index:
            out[sid] = float((g["chain_index"].astype(int) == pq_index[sid]).mean())
    return out


def per_share(
    summary: pd.DataFrame,
    steps: pd.DataFrame,
    capacity: pd.DataFrame,
    attempts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per rollout scenario with a population: its group, PQ share (of kinds that
    offer post-quantum), the share of attempts sent the post-quantum chain (measured),
    capacity per core, p50 / p99 one at a time and at each LOAD_FRACTIONS of its capacity,
    and bytes."""
    if summary.empty or "population" not in summary:
        return pd.DataFrame()
    s = summary[summary["population"] != rollout.NO_POPULATION]
    if s.empty:
        return pd.DataFrame()
    cap = capacity.set_index("scenario_id") if len(capacity) else pd.DataFrame()
    sent_pq = pq_chain_share(attempts, s)
    key_columns = [c for c in axes.scenario_keys() if c not in _POPULATION_COLUMNS]
    rows = []
    for r in s.to_dict("records"):
        row = {
            "scenario_id": r["scenario_id"],
            "group": group_label(r),
            "group_key": "|".join(str(r[c]) for c in key_columns),
            "network": r["network"],
            "pq_share": float(r["pq_share"]),
            "pq_chain_share": sent_pq.get(r["scenario_id"], math.nan),
            "population": r["population"],
            "bytes_read": r["bytes_read"],
            "bytes_written": r["bytes_written"],
        }
        sid = r["scenario_id"]
        for base in ("capacity_per_core", "sustained_per_core"):
            for name in (base, f"{base}_lo", f"{base}_hi"):
                known = sid in cap.index and name in cap.columns
                row[name] = cap.at[sid, name] if known else math.nan
        # What set the capacity (the server's cores, or the generator: load_capacity).
        row["capacity_limited_by"] = cap.at[sid, "limited_by"] if sid in cap.index else ""
        for q in ("p50", "p99"):
            src = "median_ms" if q == "p50" else "p99_ms"
            for end in ("", "_lo", "_hi"):
                row[f"{q}_ms_{SINGLE}{end}"] = r.get(f"{src}{end}", math.nan)
        for frac in LOAD_FRACTIONS:
            st = steps[
                (steps["scenario_id"] == r["scenario_id"])
                & ((steps["fraction"] - frac).abs() < _FRACTION_SLACK)
            ] if len(steps) else pd.DataFrame()  # fmt: skip
            for q in ("p50", "p99"):
                for end in ("", "_lo", "_hi"):
                    v = st.iloc[-1][f"{q}_ms{end}"] if len(st) else math.nan
                    row[f"{q}_ms_{frac:g}{end}"] = v
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values(["group", "network", "pq_share"]).reset_index(drop=True)


def loads() -> tuple[str, ...]:
    """The loads the rule is read at, as per_share's column suffixes."""
    return (SINGLE, *(f"{f:g}" for f in LOAD_FRACTIONS))


def load_label(load: str) -> str:
    return "one at a time" if load == SINGLE else f"{load} of capacity"


def rollback(shares: pd.DataFrame) -> pd.DataFrame:
    """The rule at every PQ share and load of every group and path: the p99 over the
    group's all-classical baseline at the same load, with the interval of that ratio from
    both p99 intervals (conservative: the low end over the baseline's high end), and the
    verdict: 'rolls back' when the interval lies above the factor, 'holds' below it,
    'undecided' across it."""
    if shares.empty:
        return pd.DataFrame()
    factor, _, _ = rollback_factor()
    rows = []
    for (_, network), g in shares.groupby(["group_key", "network"], sort=False):
        base = g[g["pq_share"] == 0]
        for load in loads():
            col = f"p99_ms_{load}"
            b = base.iloc[0] if len(base) else None
            for r in g.to_dict("records"):
                p99, lo, hi = r[col], r[f"{col}_lo"], r[f"{col}_hi"]
                if b is None or r["scenario_id"] == b["scenario_id"]:
                    continue  # the baseline against itself
                if not np.isfinite(p99) or not np.isfinite(b[col]):
                    continue
                ratio = p99 / b[col]
                # NaN ends (too few attempts for the interval) leave the verdict undecided.
                r_lo = lo / b[f"{col}_hi"]
                r_hi = hi / b[f"{col}_lo"]
                verdict = (
                    "rolls back" if r_lo > factor else "holds" if r_hi < factor else "undecided"
                )
                rows.append(
                    {
                        "group": r["group"],
                        "network": network,
                        "load": load,
                        "pq_share": r["pq_share"],
                        "p99_ms": p99,
                        "baseline_p99_ms": b[col],
                        "ratio": ratio,
                        "ratio_lo": r_lo,
                        "ratio_hi": r_hi,
                        "verdict": verdict,
                    }
                )
    return pd.DataFrame(rows)


def first_crossing(rule: pd.DataFrame) -> pd.DataFrame:
    """Per group, path and load: the lowest PQ share at which the rule rolls back (NaN when
    none does), and the lowest at which it may (undecided)."""
    return crossings(rule, ["group", "network", "load"], "pq_share", sort=False)


def crossings(
    verdicts: pd.DataFrame, keys: list[str], over: str, sort: bool = True
) -> pd.DataFrame:
    """Per `keys`: the lowest value of `over` at which the rule rolls back
    (`rolls_back_at`, NaN when none does), the lowest at which it may (`may_roll_back_at`:
    not 'holds'), the highest measured (`highest`) and the largest p99 ratio."""
    if verdicts.empty:
        return pd.DataFrame()
    rows = []
    for key, g in verdicts.groupby(keys, sort=sort):
        back = g[g["verdict"] == "rolls back"][over]
        maybe = g[g["verdict"] != "holds"][over]
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "rolls_back_at": back.min() if len(back) else math.nan,
                "may_roll_back_at": maybe.min() if len(maybe) else math.nan,
                "highest": g[over].max(),
                "max_ratio": g["ratio"].max(),
            }
        )
    return pd.DataFrame(rows)


@produces("rollout_kinds")
def _analysis_rollout_kinds(a) -> pd.DataFrame:
    return by_kind(a.data.rollout_attempts, a.config.confidence_level)


@produces("rollout_load_kinds")
def _analysis_rollout_load_kinds(a) -> pd.DataFrame:
    return load_by_kind(a.data.rollout_load, a.load_steps, a.config.confidence_level)


@produces("rollout_shares")
def _analysis_rollout_shares(a) -> pd.DataFrame:
    return per_share(a.summary, a.load_steps, a.load_capacity, a.data.rollout_attempts)


@produces("rollout_rule")
def _analysis_rollout_rule(a) -> pd.DataFrame:
    return rollback(a.rollout_shares)
