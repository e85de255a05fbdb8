"""Intermediates and trust anchors: what not sending intermediates saves
(docs/methods/levers.md#intermediates-anchors-client-certificates).

Each scenario whose server sends less (or more) than the leaf and its intermediates is set
against its `leaf+intermediates` twin (chainlab.analysis.twins): `leaf` (the client holds
the intermediates as untrusted path material), `intermediate-anchor` (the leaf alone, the
client trusting the leaf's issuer itself: the Trust Anchor IDs model) and `full` (the root
sent too). Per pair:
- bytes: certificates and their DER bytes on the wire, and the bytes the client read less;
- round trips: on an emulated profile, the round trips the measured median implies
  ((median - loopback base - serialization) / RTT, chainlab.analysis.network) beside those
  the projection model predicts from the flights; on loopback, the round trips and latency
  the model (chainlab.network.model) projects at network.LEVER_PROFILE from the scenario's
  mean latency and flights (one network, so every loopback pair is read alike);
- latency: the mean's ratio to the twin's, with its interval;
- client CPU: the difference to the twin's mean, with its interval (an anchor nearer the
  leaf verifies fewer certificates).
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import network, twins
from chainlab.analysis.registry import produces

# The served chain every other policy is read against (what RFC 8446 asks of a server).
REFERENCE_POLICY = "leaf+intermediates"


def per_pair(summary: pd.DataFrame, projection: pd.DataFrame | None, level: float) -> pd.DataFrame:
    """One row per successful scenario with another served chain than REFERENCE_POLICY and
    a successful twin. `projection` is the network analysis's frame of emulated scenarios
    against their loopback twins (None or empty without emulated networks)."""
    rts = network.round_trips(summary, projection)
    rows = []
    for r, twin in twins.pairs(summary, "served_chain", REFERENCE_POLICY):
        ratio, lo, hi = twins.ratio(r, twin, "mean_ms", level)
        cpu, cpu_lo, cpu_hi = twins.difference(r, twin, "client_cpu_ms", level)
        rt, rt_twin = rts.get(r["scenario_id"], {}), rts.get(twin["scenario_id"], {})
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                # Instructions per handshake against the twin, where counted
                # (docs/methods/instructions.md#instructions-per-handshake).
                **twins.instruction_ratios(r, twin, level, {}),
                "hierarchy": r["hierarchy"],
                "depth": r["depth"],
                "network": r["network"],
                "handshake_mode": r["handshake_mode"],
                "policy": r["served_chain"],
                "certificates": r["served_chain_len"],
                "twin_certificates": twin["served_chain_len"],
                "chain_bytes": r["served_chain_der_bytes"],
                "twin_chain_bytes": twin["served_chain_der_bytes"],
                "bytes_read": r["bytes_read"],
                "twin_bytes_read": twin["bytes_read"],
                "read_saving_bytes": twin["bytes_read"] - r["bytes_read"],
                "round_trips_basis": rt.get("basis", ""),
                "round_trips": rt.get("predicted", math.nan),
                "twin_round_trips": rt_twin.get("predicted", math.nan),
                "observed_round_trips": rt.get("observed", math.nan),
                "twin_observed_round_trips": rt_twin.get("observed", math.nan),
                "projected_ms": rt.get("projected_ms", math.nan),
                "twin_projected_ms": rt_twin.get("projected_ms", math.nan),
                "mean_ms": r["mean_ms"],
                "twin_mean_ms": twin["mean_ms"],
                "latency_ratio": ratio,
                "latency_ratio_lo": lo,
                "latency_ratio_hi": hi,
                "client_cpu_diff_ms": cpu,
                "client_cpu_diff_ms_lo": cpu_lo,
                "client_cpu_diff_ms_hi": cpu_hi,
            }
        )
    if not rows:
        return pd.DataFrame()
    order = {"intermediate-anchor": 0, "leaf": 1, "full": 2}
    out = pd.DataFrame(rows)
    out["_o"] = out["policy"].map(order).fillna(3)
    return (
        out.sort_values(["hierarchy", "network", "handshake_mode", "_o"])
        .drop(columns="_o")
        .reset_index(drop=True)
    )


@produces("intermediates")
def _analysis_intermediates(a) -> pd.DataFrame:
    return per_pair(a.summary, a.projection, a.config.confidence_level)
