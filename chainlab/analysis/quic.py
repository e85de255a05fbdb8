"""TCP and QUIC: each QUIC scenario set against its TCP twin (docs/methods/quic.md#tcp-and-quic).

The twin is the same scenario in every other axis (chainlab.analysis.twins). Per pair:
- latency: the mean's ratio to the TCP twin's, with its interval;
- server and client CPU: ratios to the TCP twin's means, with intervals;
- bytes: the client's bytes read and written over the handshake (TLS records over TCP, UDP
  payload over QUIC), and QUIC's datagrams each way;
- the anti-amplification footprint: the datagrams the QUIC client had sent when the
  server's flight was complete (mean and range);
- round trips: on an emulated profile, those the measured median implies ((median -
  loopback base - serialization) / RTT, chainlab.analysis.network) beside those the
  projection model predicts (chainlab.network.model: TCP's connect plus slow start, QUIC's
  anti-amplification budget then slow start); on loopback, the model's round trips and
  latency projected at network.LEVER_PROFILE from each scenario's mean latency and bytes.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis import network, twins
from chainlab.analysis.registry import produces

# The transport every other one is read against.
REFERENCE_TRANSPORT = "tcp"


def per_pair(summary: pd.DataFrame, projection: pd.DataFrame | None, level: float) -> pd.DataFrame:
    """One row per successful QUIC scenario with a successful TCP twin. `projection` is the
    network analysis's frame of emulated scenarios against their loopback twins."""
    rts = network.round_trips(summary, projection)
    rows = []
    for r, twin in twins.pairs(summary, "transport", REFERENCE_TRANSPORT):
        lat, lat_lo, lat_hi = twins.ratio(r, twin, "mean_ms", level)
        srv, srv_lo, srv_hi = twins.ratio(r, twin, "server_cpu_ms", level)
        cli, cli_lo, cli_hi = twins.ratio(r, twin, "client_cpu_ms", level)
        rt, rt_twin = rts.get(r["scenario_id"], {}), rts.get(twin["scenario_id"], {})
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                "transport": r["transport"],
                "hierarchy": r["hierarchy"],
                "kex": r["kex"],
                "served_chain": r["served_chain"],
                "network": r["network"],
                "mean_ms": r["mean_ms"],
                "twin_mean_ms": twin["mean_ms"],
                "latency_ratio": lat,
                "latency_ratio_lo": lat_lo,
                "latency_ratio_hi": lat_hi,
                "server_cpu_ratio": srv,
                "server_cpu_ratio_lo": srv_lo,
                "server_cpu_ratio_hi": srv_hi,
                "client_cpu_ratio": cli,
                "client_cpu_ratio_lo": cli_lo,
                "client_cpu_ratio_hi": cli_hi,
                # The same ratios in instructions, where counted
                # (docs/methods/instructions.md#instructions-per-handshake).
                **twins.instruction_ratios(
                    r,
                    twin,
                    level,
                    {
                        "server_cpu_ratio_lo": srv_lo,
                        "server_cpu_ratio_hi": srv_hi,
                        "client_cpu_ratio_lo": cli_lo,
                        "client_cpu_ratio_hi": cli_hi,
                    },
                ),
                "bytes_read": r["bytes_read"],
                "twin_bytes_read": twin["bytes_read"],
                "bytes_written": r["bytes_written"],
                "twin_bytes_written": twin["bytes_written"],
                "datagrams_read": r.get("datagrams_read", math.nan),
                "datagrams_written": r.get("datagrams_written", math.nan),
                "flight_datagrams": r.get("flight_datagrams", math.nan),
                "flight_datagrams_min": r.get("flight_datagrams_min", math.nan),
                "flight_datagrams_max": r.get("flight_datagrams_max", math.nan),
                "round_trips_basis": rt.get("basis", ""),
                "round_trips": rt.get("predicted", math.nan),
                "twin_round_trips": rt_twin.get("predicted", math.nan),
                "observed_round_trips": rt.get("observed", math.nan),
                "twin_observed_round_trips": rt_twin.get("observed", math.nan),
                "projected_ms": rt.get("projected_ms", math.nan),
                "twin_projected_ms": rt_twin.get("projected_ms", math.nan),
            }
        )
    if not rows:
        return pd.DataFrame()
    return (
        pd.DataFrame(rows)
        .sort_values(["hierarchy", "kex", "served_chain", "network"])
        .reset_index(drop=True)
    )


@produces("quic")
def _analysis_quic(a) -> pd.DataFrame:
    return per_pair(a.summary, a.projection, a.config.confidence_level)
