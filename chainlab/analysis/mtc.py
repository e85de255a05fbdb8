"""Merkle Tree Certificates against X.509 chains with the same leaf
(docs/methods/mtc.md#merkle-tree-certificates).

Each MTC scenario is set against every X.509 scenario that differs from it only in the
certificate and in the positions above the leaf: the same leaf algorithm (so the same leaf
key, `pki` derives it from the seed and the role), key exchange, stacks, transport, network
and levers. Per pair: the certificate bytes the server sent (DER), the client's bytes each
way, the latency and both sides' CPU as ratios with intervals (chainlab.analysis.twins),
round trips (chainlab.analysis.network.round_trips: on an emulated profile those the median
implies, on loopback those projected at the reference network), and the capacity per core
where load steps ran.

Two further tables: each MTC's inclusion proof against its batch, beside the draft's size
rule (a subtree of n entries takes ceil(log2 n) hashes of 32 bytes; its estimate for an
hourly landmark of ~4.4 M entries is 23 hashes, 736 bytes), and the standalone certificates'
signatures against bytes and client CPU.
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab import axes
from chainlab.analysis import network, twins
from chainlab.analysis.registry import produces
from chainlab.axes import credential as certificates
from chainlab.axes.credential import HASH_BYTES, draft_hashes, subtree_entries

# The draft's Size Estimates (draft-ietf-plants-merkle-tree-certs-07): per-CA issuance of
# ~4.4 M certificates an hour, a landmark every hour; a checkpoint every 2 s spans ~2,500.
DRAFT_LANDMARK_ENTRIES = 4_400_000
DRAFT_CHECKPOINT_ENTRIES = 2_500

# What an MTC and its X.509 counterparts may differ in.
_FREE = (*axes.CERTIFICATE.column_names, "depth", "root_alg", "int1_alg", "int2_alg")


def per_pair(
    summary: pd.DataFrame, projection, load_capacity: pd.DataFrame, level: float
) -> pd.DataFrame:
    """One row per (successful MTC scenario, successful X.509 scenario with its leaf)."""
    if summary.empty or "certificate" not in summary:
        return pd.DataFrame()
    ok = summary[summary["status"] == "ok"]
    keys = [k for k in twins.identity() if k not in _FREE and k in ok]
    x509 = ok[ok["certificate"] == certificates.X509]
    rts = network.round_trips(summary, projection)
    # Capacity per core: the sustained rate (the report's headline) and the overload
    # throughput, each where the store has it (chainlab.analysis.load_capacity).
    cap, sus = (
        (
            load_capacity.set_index("scenario_id")[col].to_dict()
            if len(load_capacity) and col in load_capacity
            else {}
        )
        for col in ("capacity_per_core", "sustained_per_core")
    )

    def key(r: dict) -> tuple:
        return tuple(None if pd.isna(r[k]) else r[k] for k in keys)

    by_key: dict[tuple, list[dict]] = {}
    for r in x509.to_dict("records"):
        by_key.setdefault(key(r), []).append(r)
    rows = []
    for r in ok[ok["certificate"] != certificates.X509].to_dict("records"):
        for twin in by_key.get(key(r), []):
            lat = twins.ratio(r, twin, "mean_ms", level)
            srv = twins.ratio(r, twin, "server_cpu_ms", level)
            cli = twins.ratio(r, twin, "client_cpu_ms", level)
            rt, rt_twin = rts.get(r["scenario_id"], {}), rts.get(twin["scenario_id"], {})
            rows.append(
                {
                    "scenario_id": r["scenario_id"],
                    "twin_id": twin["scenario_id"],
                    "certificate": r["certificate"],
                    "mtc_kind": r.get("mtc_kind"),
                    "mtc_batch": int(r["mtc_batch"]),
                    "mtc_signers": r["mtc_signers"],
                    "leaf_alg": r["leaf_alg"],
                    "twin_hierarchy": twin["hierarchy"],
                    "twin_depth": int(twin["depth"]),
                    "kex": r["kex"],
                    "transport": r["transport"],
                    "stack": r["stack"],
                    "network": r["network"],
                    "cert_bytes": r["chain_bytes"],
                    "twin_cert_bytes": twin["chain_bytes"],
                    "bytes_read": r["bytes_read"],
                    "twin_bytes_read": twin["bytes_read"],
                    "bytes_written": r["bytes_written"],
                    "twin_bytes_written": twin["bytes_written"],
                    "mean_ms": r["mean_ms"],
                    "twin_mean_ms": twin["mean_ms"],
                    "latency_ratio": lat[0],
                    "latency_ratio_lo": lat[1],
                    "latency_ratio_hi": lat[2],
                    "server_cpu_ratio": srv[0],
                    "server_cpu_ratio_lo": srv[1],
                    "server_cpu_ratio_hi": srv[2],
                    "client_cpu_ratio": cli[0],
                    "client_cpu_ratio_lo": cli[1],
                    "client_cpu_ratio_hi": cli[2],
                    # The same ratios in instructions, where counted
                    # (docs/methods/instructions.md#instructions-per-handshake).
                    **twins.instruction_ratios(
                        r,
                        twin,
                        level,
                        {
                            "server_cpu_ratio_lo": srv[1],
                            "server_cpu_ratio_hi": srv[2],
                            "client_cpu_ratio_lo": cli[1],
                            "client_cpu_ratio_hi": cli[2],
                        },
                    ),
                    "flight_datagrams": r.get("flight_datagrams", math.nan),
                    "twin_flight_datagrams": twin.get("flight_datagrams", math.nan),
                    "round_trips_basis": rt.get("basis", ""),
                    "round_trips": rt.get("predicted", math.nan),
                    "twin_round_trips": rt_twin.get("predicted", math.nan),
                    "observed_round_trips": rt.get("observed", math.nan),
                    "twin_observed_round_trips": rt_twin.get("observed", math.nan),
                    "capacity_per_core": cap.get(r["scenario_id"], math.nan),
                    "twin_capacity_per_core": cap.get(twin["scenario_id"], math.nan),
                    "sustained_per_core": sus.get(r["scenario_id"], math.nan),
                    "twin_sustained_per_core": sus.get(twin["scenario_id"], math.nan),
                }
            )
    if not rows:
        return pd.DataFrame()
    return (
        pd.DataFrame(rows)
        .sort_values(["leaf_alg", "transport", "network", "certificate", "mtc_batch", "twin_depth"])
        .reset_index(drop=True)
    )


def proofs(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per successful MTC scenario: the proof hashes its clients verified beside the
    draft's rule for the subtree `pki` proves inclusion in, the signatures they checked,
    the certificate's DER bytes, the bytes read and the client's CPU."""
    if summary.empty or "certificate" not in summary:
        return pd.DataFrame()
    mtc = summary[(summary["status"] == "ok") & (summary["certificate"] != certificates.X509)]
    rows = []
    for r in mtc.to_dict("records"):
        batch = int(r["mtc_batch"])
        expected = draft_hashes(subtree_entries(batch))
        hashes = r["mtc_proof_hashes"]
        signers = r["mtc_signers"]
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "certificate": r["certificate"],
                "sent": r.get("mtc_kind") or "",
                "mtc_batch": batch,
                "mtc_signers": signers,
                "mtc_landmark_held": r["mtc_landmark_held"],
                "n_signers": 0 if signers == "none" else len(signers.split(",")),
                "proof_hashes": hashes,
                "proof_bytes": hashes * HASH_BYTES,
                "subtree_entries": subtree_entries(batch),
                "draft_hashes": expected,
                # A full (power-of-two) subtree's proof has exactly the rule's hashes; an
                # entry in the smaller right subtree of another batch has fewer.
                "agrees": bool(
                    hashes == expected if batch & (batch - 1) == 0 else hashes <= expected
                ),
                "signatures_checked": r["mtc_signatures_checked"],
                "cert_bytes": r["chain_bytes"],
                "bytes_read": r["bytes_read"],
                "client_cpu_ms": r["client_cpu_ms"],
                "client_cpu_ms_lo": r["client_cpu_ms_lo"],
                "client_cpu_ms_hi": r["client_cpu_ms_hi"],
            }
        )
    if not rows:
        return pd.DataFrame()
    return (
        pd.DataFrame(rows)
        .sort_values(["mtc_batch", "n_signers", "scenario_id"])
        .reset_index(drop=True)
    )


def draft_estimates() -> list[tuple[str, int, int]]:
    """(what, entries, proof bytes) of the draft's own estimates, by its rule."""
    return [
        (what, n, draft_hashes(n) * HASH_BYTES)
        for what, n in (
            ("checkpoint every 2 s", DRAFT_CHECKPOINT_ENTRIES),
            ("hourly landmark", DRAFT_LANDMARK_ENTRIES),
            ("2^32 entries", 1 << 32),
        )
    ]


@produces("mtc")
def _analysis_mtc(a) -> pd.DataFrame:
    return per_pair(a.summary, a.projection, a.load_capacity, a.config.confidence_level)


@produces("mtc_proofs")
def _analysis_mtc_proofs(a) -> pd.DataFrame:
    return proofs(a.summary)
