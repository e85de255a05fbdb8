"""The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) and the MTC retry:
per scenario, what the client requested and the server answered, and what it cost
(docs/methods/mtc.md#trust-anchor-ids).

A scenario's context is everything but the requested list: its certificate, stacks,
transport, network and the rest of its axes. Within a context, the ClientHello growth of a
scenario is its client's bytes written over the handshake minus those of the context's
scenario that requests the fewest IDs (the stand-in, which sends no extension, when there is
one): every other message the client writes is the same, so the difference is the
extension's bytes. The latency ratio sets the scenario against the same base.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab import axes
from chainlab.analysis.registry import produces
from chainlab.axes import trust_anchors as anchors

# Identity columns of the context besides the requested list (and the network).
_EXCLUDED = {"trust_anchors"}
# The hierarchy, position by position.
_POSITIONS = ("root_alg", "int1_alg", "int2_alg", "leaf_alg")


def _requested(value) -> float:
    n = anchors.requested(str(value)) if isinstance(value, str) else None
    return -1.0 if n is None else float(n)


def table(summary: pd.DataFrame, per: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario that sent the extension or retried, with its context's base."""
    if summary.empty or per.empty or "trust_anchors" not in summary:
        return pd.DataFrame()
    ok = summary[~summary["failed"]] if "failed" in summary else summary
    context_cols = [
        c for c in ("kex", *_POSITIONS, *axes.lever_columns(), "network")
        if c in summary and c not in _EXCLUDED
    ]  # fmt: skip
    wanted = set(per["scenario_id"])
    rows = []
    for _, g in ok.groupby(context_cols, dropna=False, sort=True):
        if not wanted & set(g["scenario_id"]):
            continue
        g = g.assign(_n=[_requested(v) for v in g["trust_anchors"]]).sort_values("_n")
        first = g.iloc[0]
        for _, r in g.iterrows():
            if r["scenario_id"] not in wanted:
                continue
            p = per[per["scenario_id"] == r["scenario_id"]].iloc[0]
            # A scenario alone in its setting has nothing to be set against.
            base = first if first["scenario_id"] != r["scenario_id"] else None
            rows.append(
                {
                    "scenario_id": r["scenario_id"],
                    "certificate": r.get("certificate"),
                    "held": r.get("mtc_landmark_held"),
                    "stacks": f"{r['client_stack']} → {r['server_stack']}",
                    "network": r.get("network"),
                    "trust_anchors": r["trust_anchors"],
                    # The IDs the scenario's first ClientHello requests (NaN: the stand-in,
                    # no extension); the records' own count is the last connection's, which
                    # after a retry is the retry's request.
                    "ids": r["_n"] if r["_n"] >= 0 else math.nan,
                    "requested": p["trust_anchors_requested"],
                    "matched_share": p["matched_share"],
                    "available": p["trust_anchors_available"],
                    "retried_share": p["retried_share"],
                    "bytes_written": r["bytes_written"],
                    "bytes_read": r["bytes_read"],
                    "base_id": None if base is None else base["scenario_id"],
                    "growth_bytes": (
                        math.nan if base is None else r["bytes_written"] - base["bytes_written"]
                    ),
                    "mean_ms": r["mean_ms"],
                    "median_ms": r["median_ms"],
                    "latency_ratio": (
                        math.nan if base is None else _ratio(r["median_ms"], base["median_ms"])
                    ),
                    **{
                        f"{side}_cpu_ms{end}": r[f"{side}_cpu_ms{end}"]
                        for side in ("client", "server")
                        for end in ("", "_lo", "_hi")
                    },
                }
            )
    return pd.DataFrame(rows)


def _ratio(a, b) -> float:
    return a / b if b and math.isfinite(a) and math.isfinite(b) else math.nan


@produces("trust_anchors")
def _analysis_trust_anchors(a) -> pd.DataFrame:
    return table(a.summary, a.data.frame("anchors"))
