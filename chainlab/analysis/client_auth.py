"""Mutual TLS: what a client certificate costs each side
(docs/methods/levers.md#intermediates-anchors-client-certificates).

Each scenario with a client certificate is set against its twin without one (the same
scenario otherwise; chainlab.analysis.twins). With client authentication the client signs a
CertificateVerify with its own leaf's key and the server verifies it and the client's chain,
so the signing cost an SLH-DSA leaf puts on a server moves to the client when the SLH-DSA
leaf is the client's. Per pair: server and client CPU per handshake and their differences to
the twin (Welch intervals), the client's share of the handshake's CPU with and without the
certificate, the latency ratio (delta-method interval), and the client's chain as the server
observed it (certificates, DER bytes) with the bytes the client wrote more.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.registry import produces
from chainlab.axes.algorithms import NO_CLIENT_AUTH


def per_pair(summary: pd.DataFrame, client_chains: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per successful scenario with a client certificate and a successful twin
    without one. `client_chains` is the store's observed_client_chain (may be empty)."""
    chains = {}
    if client_chains is not None and len(client_chains):
        g = client_chains.groupby("scenario_id")
        chains = {
            sid: (
                len(c),
                int(c["der_bytes"].sum()),
                str(c.sort_values("position")["key_alg"].iloc[0]),
            )
            for sid, c in g
        }
    rows = []
    for r, twin in twins.pairs(summary, "client_auth", NO_CLIENT_AUTH):
        server, server_lo, server_hi = twins.difference(r, twin, "server_cpu_ms", level)
        client, client_lo, client_hi = twins.difference(r, twin, "client_cpu_ms", level)
        ratio, lo, hi = twins.ratio(r, twin, "mean_ms", level)
        n_certs, der, observed_leaf = chains.get(r["scenario_id"], (0, math.nan, ""))
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                # Instructions per handshake against the twin, where counted
                # (docs/methods/instructions.md#instructions-per-handshake).
                **twins.instruction_ratios(r, twin, level, {}),
                "hierarchy": r["hierarchy"],
                "client_auth": r["client_auth"],
                "client_leaf": r["client_auth"].split(",")[-1],
                "observed_client_leaf": observed_leaf,
                "client_certificates": n_certs,
                "client_chain_bytes": der,
                "written_more_bytes": r["bytes_written"] - twin["bytes_written"],
                "network": r["network"],
                "handshake_mode": r["handshake_mode"],
                "server_cpu_ms": r["server_cpu_ms"],
                "twin_server_cpu_ms": twin["server_cpu_ms"],
                "server_cpu_diff_ms": server,
                "server_cpu_diff_ms_lo": server_lo,
                "server_cpu_diff_ms_hi": server_hi,
                "client_cpu_ms": r["client_cpu_ms"],
                "twin_client_cpu_ms": twin["client_cpu_ms"],
                "client_cpu_diff_ms": client,
                "client_cpu_diff_ms_lo": client_lo,
                "client_cpu_diff_ms_hi": client_hi,
                "client_share": _share(r),
                "twin_client_share": _share(twin),
                "mean_ms": r["mean_ms"],
                "twin_mean_ms": twin["mean_ms"],
                "latency_ratio": ratio,
                "latency_ratio_lo": lo,
                "latency_ratio_hi": hi,
            }
        )
    if not rows:
        return pd.DataFrame()
    return (
        pd.DataFrame(rows)
        .sort_values(["hierarchy", "network", "handshake_mode", "client_auth"])
        .reset_index(drop=True)
    )


def _share(r: dict) -> float:
    """The client's share of the handshake's CPU (client and server together)."""
    total = r["client_cpu_ms"] + r["server_cpu_ms"]
    return r["client_cpu_ms"] / total if total > 0 else math.nan


@produces("client_auth")
def _analysis_client_auth(a) -> pd.DataFrame:
    return per_pair(a.summary, a.data.observed_client_chain, a.config.confidence_level)
