"""A browser's ClientHello against the engine's own: what a Chrome user pays per placement
(docs/methods/levers.md#client-profiles).

Each scenario with a client profile is set against its twin without one (the same scenario
otherwise; chainlab.analysis.twins): the same client stack, server, chain and network, only
the ClientHello differs (Chrome's groups and two key shares, its schemes, TLS 1.2 suites,
ALPN, OCSP and SCT requests, GREASE and a GREASE ECH extension, permuted extensions). Per
pair: the bytes the client wrote more, the latency ratio (delta-method interval), and both
sides' CPU differences (Welch intervals).
"""

from __future__ import annotations

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.registry import produces
from chainlab.axes.client_profile import NONE


def per_pair(summary: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per successful scenario with a client profile and a successful twin
    without one."""
    rows = []
    for r, twin in twins.pairs(summary, "client_profile", NONE):
        ratio, lo, hi = twins.ratio(r, twin, "mean_ms", level)
        server, server_lo, server_hi = twins.difference(r, twin, "server_cpu_ms", level)
        client, client_lo, client_hi = twins.difference(r, twin, "client_cpu_ms", level)
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                "client_profile": r["client_profile"],
                "hierarchy": r["hierarchy"],
                "leaf_alg": r["leaf_alg"],
                "trust_anchors": r.get("trust_anchors"),
                "network": r["network"],
                "stacks": f"{r['client_stack']} → {r['server_stack']}",
                "negotiated_sigalg": r.get("negotiated_sigalg"),
                "bytes_written": r["bytes_written"],
                "written_more_bytes": r["bytes_written"] - twin["bytes_written"],
                "mean_ms": r["mean_ms"],
                "twin_mean_ms": twin["mean_ms"],
                "latency_ratio": ratio,
                "latency_ratio_lo": lo,
                "latency_ratio_hi": hi,
                "server_cpu_diff_ms": server,
                "server_cpu_diff_ms_lo": server_lo,
                "server_cpu_diff_ms_hi": server_hi,
                "client_cpu_diff_ms": client,
                "client_cpu_diff_ms_lo": client_lo,
                "client_cpu_diff_ms_hi": client_hi,
            }
        )
    if not rows:
        return pd.DataFrame()
    return (
        pd.DataFrame(rows)
        .sort_values(["network", "trust_anchors", "mean_ms"])
        .reset_index(drop=True)
    )


@produces("client_profiles")
def _analysis_client_profiles(a) -> pd.DataFrame:
    return per_pair(a.summary, a.config.confidence_level)
