"""Signature families by position (docs/methods/families.md#families-by-position): every algorithm
ranked at each
position of a hierarchy, and which family is best where.

A position's candidates come from one context (every axis but the hierarchy fixed: key
exchange, network, stack, levers) and one depth, over full handshakes only (a resumed one
carries no certificate): a uniform hierarchy (every position the same
algorithm, the base) and the hierarchies that differ from it at exactly that position. So at
the leaf of an ML-DSA-44 depth-3 hierarchy, Falcon-512 is read against MAYO-2 and the
all-ML-DSA-44 chain with the root and intermediate held fixed. Hierarchies that differ at
two or more positions (the guide's ECDSA + Falcon chain) are not ranked here; the placement
tables show them.

Per candidate: latency, server and client CPU per handshake (means with their intervals from
the summary) and the bytes the client read, each ranked (1 = least). The best at a position
is the least latency; `clear` says whether its interval lies wholly below the runner-up's.
(liboqs' ML-DSA against the stack's own, `signature_impl`, is a lever: the pairs section
reads it like every other.)
"""

from __future__ import annotations

import pandas as pd

from chainlab import axes
from chainlab.analysis.families import POSITIONS, family
from chainlab.analysis.registry import produces

# How the report names a position.
POSITION_NAMES = {"root": "root", "int1": "intermediate", "int2": "second intermediate"}
POSITION_NAMES["leaf"] = "leaf"
# What a candidate is ranked on: (summary column, name in the report); least is best.
METRICS = (
    ("mean_ms", "latency"),
    ("server_cpu_ms", "server CPU"),
    ("client_cpu_ms", "client CPU"),
    ("bytes_read", "bytes to the client"),
)
# The summary column of each position's algorithm.
ALG_COLUMNS = {"root": "root_alg", "int1": "int1_alg", "int2": "int2_alg", "leaf": "leaf_alg"}


def _chain(r: dict) -> tuple:
    """The algorithm at each position present, top-down (depth 1: the leaf alone)."""
    return tuple(r[ALG_COLUMNS[p]] for p in POSITIONS if isinstance(r.get(ALG_COLUMNS[p]), str))


def _positions(depth: int) -> tuple[str, ...]:
    return {1: ("leaf",), 2: ("root", "leaf"), 3: ("root", "int1", "leaf")}.get(depth, POSITIONS)


def contexts(summary: pd.DataFrame):
    """The completed full-handshake scenarios of each context (key exchange, network, stack,
    levers, depth), as lists of summary records: what is compared by position. Full
    handshakes only: a resumed one carries no certificate, so where its signatures sit does
    not show (a resumption mix pools the two)."""
    ok = summary[summary["status"] == "ok"]
    mode = axes.HANDSHAKE_MODE
    if mode.key in ok:
        ok = ok[ok[mode.key].fillna(mode.default) == mode.default]
    context = [c for c in ("kex", "network", "stack", *axes.lever_columns()) if c in ok]
    for _, group in ok.groupby([*context, "depth"], dropna=False, sort=True):
        yield group.to_dict("records")


def ranking(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (context, base, position, candidate algorithm), ranked within its group."""
    if summary.empty:
        return pd.DataFrame()
    ok = summary[summary["status"] == "ok"]
    rows = []
    for records in contexts(summary):
        # The levers the context holds at other values than their defaults, in words.
        levers = " · ".join(axes.lever_labels(records[0], only=set(ok.columns)))
        chains = {_chain(r): r for r in records}
        for base_chain, base in chains.items():
            if len(set(base_chain)) != 1 or len(base_chain) < 2:
                continue
            names = _positions(len(base_chain))
            for i, position in enumerate(names):
                candidates = [base] + [
                    r
                    for chain, r in chains.items()
                    if len(chain) == len(base_chain)
                    and chain[i] != base_chain[i]
                    and all(
                        a == b
                        for j, (a, b) in enumerate(zip(chain, base_chain, strict=True))
                        if j != i
                    )
                ]
                if len(candidates) < 2:
                    continue
                rows += _ranked(candidates, position, base_chain[0], i, levers)
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame(rows)
    order = {p: i for i, p in enumerate(POSITIONS)}
    out["position_order"] = out["position"].map(order)
    return (
        out.sort_values(["network", "stack", "levers", "base", "position_order", "rank_latency"])
        .drop(columns="position_order")
        .reset_index(drop=True)
    )


def _ranked(
    candidates: list[dict], position: str, base: str, index: int, levers: str
) -> list[dict]:
    rows = []
    for r in candidates:
        alg = _chain(r)[index]
        row = {
            "scenario_id": r["scenario_id"],
            "network": r["network"],
            "stack": r["stack"],
            "levers": levers,
            "kex": r["kex"],
            "depth": int(r["depth"]),
            "base": base,
            "position": position,
            "position_name": POSITION_NAMES[position],
            "algorithm": alg,
            "family": family(alg),
        }
        for col, _ in METRICS:
            for suffix in ("", "_lo", "_hi"):
                row[f"{col}{suffix}"] = r[f"{col}{suffix}"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    for col, _ in METRICS:
        frame[f"rank_{col}"] = frame[col].rank(method="min").astype(int)
    frame = frame.rename(columns={"rank_mean_ms": "rank_latency"})
    best = frame.sort_values("mean_ms")
    clear = len(best) > 1 and best["mean_ms_hi"].iloc[0] < best["mean_ms_lo"].iloc[1]
    frame["best"] = frame["rank_latency"] == 1
    frame["clear"] = frame["best"] & clear
    return frame.to_dict("records")


def best(ranked: pd.DataFrame) -> pd.DataFrame:
    """The best candidate at each (network, stack, levers, key exchange, base, position) by
    each metric: candidates of one context only."""
    if ranked.empty:
        return pd.DataFrame()
    rows = []
    keys = ["network", "stack", "levers", "kex", "base", "position"]
    for _, g in ranked.groupby(keys, sort=False):
        first = g.iloc[0]
        row = {k: first[k] for k in keys}
        row["position_name"] = first["position_name"]
        row["candidates"] = len(g)
        for col, _ in METRICS:
            top = g.sort_values([col, "algorithm"]).iloc[0]
            row[f"best_{col}"] = top["algorithm"]
            row[f"best_{col}_family"] = top["family"]
            for suffix in ("", "_lo", "_hi"):
                row[f"{col}{suffix}"] = top[f"{col}{suffix}"]
        row["clear"] = bool(g["clear"].any())
        rows.append(row)
    return pd.DataFrame(rows)


@produces("by_position")
def _analysis_by_position(a) -> pd.DataFrame:
    return ranking(a.summary)


@produces("by_position_best")
def _analysis_by_position_best(a) -> pd.DataFrame:
    return best(a.by_position)
