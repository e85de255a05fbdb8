"""Intermediates and trust anchors: what not sending intermediates saves (docs/methods.md
§17).

Each scenario whose server sends less (or more) than the leaf and its intermediates is set
against its `leaf+intermediates` twin (chainlab.analysis.twins): `leaf` (the client holds
the intermediates as untrusted path material), `intermediate-anchor` (the leaf alone, the
client trusting the leaf's issuer itself: the Trust Anchor IDs model) and `full` (the root
sent too). Per pair:
- bytes: certificates and their DER bytes on the wire, and the bytes the client read less;
- round trips: on an emulated profile, the round trips the measured median implies
  ((median - loopback base - serialization) / RTT, chainlab.analysis.network) beside those
  the projection model predicts from the flights; on loopback, the round trips and latency
  the model (chainlab.network.model) projects at REFERENCE_PROFILE from the scenario's mean
  latency and flights (one network, so every loopback pair is read alike);
- latency: the mean's ratio to the twin's, with its interval;
- client CPU: the difference to the twin's mean, with its interval (an anchor nearer the
  leaf verifies fewer certificates).
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.network import REFERENCE_PROFILES
from chainlab.network import model
from chainlab.network.profile import DEFAULT_INITCWND, LOOPBACK, TCP_IP_OVERHEAD

# The served chain every other policy is read against (what RFC 8446 asks of a server).
REFERENCE_POLICY = "leaf+intermediates"
# The projected network of loopback pairs: the cross-continent reference profile, with an
# emulated profile's defaults (MTU 1500, initial window 10 segments).
REFERENCE_PROFILE = REFERENCE_PROFILES[1]
REFERENCE_MTU = 1500


def per_pair(summary: pd.DataFrame, projection: pd.DataFrame | None, level: float) -> pd.DataFrame:
    """One row per successful scenario with another served chain than REFERENCE_POLICY and
    a successful twin. `projection` is the network analysis's frame of emulated scenarios
    against their loopback twins (None or empty without emulated networks)."""
    rts = _round_trips(summary, projection)
    rows = []
    for r, twin in twins.pairs(summary, "served_chain", REFERENCE_POLICY):
        ratio, lo, hi = twins.ratio(r, twin, "mean_ms", level)
        cpu, cpu_lo, cpu_hi = twins.difference(r, twin, "client_cpu_ms", level)
        rt, rt_twin = rts.get(r["scenario_id"], {}), rts.get(twin["scenario_id"], {})
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
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


def _round_trips(summary: pd.DataFrame, projection) -> dict[str, dict]:
    """scenario_id -> {predicted, observed, projected_ms, basis}: an emulated scenario's from
    the projection frame, a loopback scenario's projected at REFERENCE_PROFILE."""
    out: dict[str, dict] = {}
    p = REFERENCE_PROFILE
    ok = summary[(summary["status"] == "ok") & (summary["network"] == LOOPBACK)]
    for r in ok.to_dict("records"):
        client = max(r["bytes_written"] - model.CLIENT_FINAL_FLIGHT_BYTES, 0)
        if not all(math.isfinite(x) for x in (r["mean_ms"], client, r["bytes_read"])):
            continue
        pred = model.predict_handshake(
            base_ms=r["mean_ms"],
            client_flight_bytes=client,
            server_flight_bytes=r["bytes_read"],
            rtt_ms=2 * p["delay_ms"],
            rate_mbit=p["rate_mbit"],
            mss=REFERENCE_MTU - TCP_IP_OVERHEAD,
            initcwnd=DEFAULT_INITCWND,
        )
        out[r["scenario_id"]] = {
            "predicted": pred.round_trips,
            "observed": math.nan,
            "projected_ms": pred.latency_ms,
            "basis": f"projected at {p['name']}",
        }
    if projection is not None and len(projection):
        for r in projection.to_dict("records"):
            out[r["emulated_id"]] = {
                "predicted": r["round_trips"],
                "observed": r["observed_round_trips"],
                "projected_ms": math.nan,
                "basis": f"{r['profile']} (RTT {r['rtt_ms']:g} ms)",
            }
    return out
