"""Servers chainlab did not start ([targets.<name>], `chainlab probe`): what the client saw,
held against the lab's own scenarios (docs/methods/probes.md#probes).

Per target scenario: the handshakes attempted, completed and failed (by category, with an
example of the detail), the negotiated group and signature scheme, the share that resumed,
the latency (mean with its t interval; median and p95 with their order-statistic intervals,
docs/methods/statistics.md#per-scenario-statistics), the client's CPU (mean, t interval),
the bytes each way and the chain the server sent as observed (subjects, key and signature
algorithms, DER sizes). The server's side is not measured: its fields stay empty.

Under load (a probe's `rates`): each step's offered and achieved rate, failures and latency
percentiles from the intended start, as for the lab's load steps
(docs/methods/capacity.md#capacity-under-load), without the server's side.

Beside the lab: the store's own successful scenarios with the same key exchange, handshake
mode and leaf algorithm as the target's observed leaf, with the target's latency and
client CPU over theirs (ratios of independent means, delta-method intervals,
docs/methods/statistics.md#ratios-between-scenarios).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd

from chainlab.analysis import load_capacity, twins
from chainlab.analysis.registry import produces
from chainlab.analysis.summary import MEANS, log_se
from chainlab.stats import mean_ci_from_moments, quantile_ci

# Means carried with intervals, as chainlab.analysis.summary names them; the client's CPU
# over every successful handshake (no server record pairs with a target's).
_MEANS = {
    **{k: MEANS[k] for k in ("mean_ms", "connect_ms", "bytes_read", "bytes_written")},
    "client_cpu_ms": ("client_cpu_alone_mean", "client_cpu_alone_var", "client_cpu_alone_n", 1e-6),
}
_QUANTILES = {"median_ms": 0.5, "p95_ms": 0.95}


def per_target(data, level: float) -> pd.DataFrame:
    """One row per target scenario (see the module doc)."""
    t = data.targets
    if t is None or t.empty:
        return pd.DataFrame()
    failures = data.target_failures
    rows = []
    for r in t.to_dict("records"):
        sid = r["scenario_id"]
        spec = _params(r).get("target", {})
        failed = r["run_status"] != "completed" or int(r["n_ok"]) == 0
        f = failures[failures["scenario_id"] == sid] if len(failures) else failures
        out = {
            "scenario_id": sid,
            "target": r["target"],
            "address": spec.get("address", ""),
            "servername": spec.get("servername", ""),
            "ca": spec.get("ca", ""),
            "kex": r["kex"],
            "handshake_mode": r["handshake_mode"],
            "cert_compression": r["cert_compression"],
            "status": "failed" if failed else "ok",
            "failure_cause": r.get("failure_cause") if failed else None,
            "failure_detail": r.get("failure_detail") if failed else None,
            "n_measured": int(r["n_measured"]),
            "n_ok": int(r["n_ok"]),
            "n_failed": int(r["n_failed_samples"]),
            "failures": "; ".join(
                f"{x['error_category']} {int(x['n'])}: {x['example_detail']}"
                for x in f.to_dict("records")
            ),
            "negotiated_group": r.get("negotiated_group"),
            "negotiated_sigalg": r.get("negotiated_sigalg"),
            "resumed_fraction": _num(r.get("resumed_fraction")),
            "chain_len": _num(r.get("chain_len_mode")),
            "chain_bytes": _num(r.get("chain_bytes_mean")),
        }
        for name, (m, v, n, scale) in _MEANS.items():
            mean, var, cnt = _num(r.get(m)) * scale, _num(r.get(v)) * scale**2, _num(r.get(n))
            est, lo, hi = mean_ci_from_moments(mean, var, int(cnt) if cnt == cnt else 0, level)
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = est, lo, hi
            out[f"{name}_se"] = log_se(mean, var, cnt)
        lat = data.latencies_ms.get(sid, np.empty(0))
        for name, q in _QUANTILES.items():
            est, lo, hi = quantile_ci(lat, q, level) if len(lat) else (math.nan,) * 3
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = est, lo, hi
        rows.append(out)
    return pd.DataFrame(rows)


def load_steps(data, level: float) -> pd.DataFrame:
    """The targets' load steps, as chainlab.analysis.load_capacity reads the lab's."""
    steps = data.target_load_steps
    if steps is None or steps.empty:
        return pd.DataFrame()
    return load_capacity.steps_frame(replace(data, load_steps=steps), level)


def observed_chains(data) -> pd.DataFrame:
    """The chain each target scenario's server sent, leaf first (position 0)."""
    obs = data.observed_chain
    if obs is None or obs.empty or data.targets.empty:
        return pd.DataFrame()
    ids = set(data.targets["scenario_id"])
    o = obs[obs["scenario_id"].isin(ids)]
    return o.sort_values(["scenario_id", "position"]).reset_index(drop=True)


def beside_lab(targets: pd.DataFrame, chains: pd.DataFrame, lab: pd.DataFrame, level: float):
    """Each successful target scenario against the lab's scenarios with its key exchange,
    handshake mode and observed leaf algorithm."""
    if targets.empty or chains.empty or lab.empty or "leaf_alg" not in lab:
        return pd.DataFrame()
    leaf = chains[chains["position"] == 0].set_index("scenario_id")["key_alg"]
    ok = lab[lab["status"] == "ok"]
    rows = []
    for t in targets[targets["status"] == "ok"].to_dict("records"):
        alg = leaf.get(t["scenario_id"])
        same = ok[
            (ok["leaf_alg"] == alg)
            & (ok["kex"] == t["kex"])
            & (ok["handshake_mode"] == t["handshake_mode"])
        ]
        for r in same.to_dict("records"):
            lat, lat_lo, lat_hi = twins.ratio(t, r, "mean_ms", level)
            cpu, cpu_lo, cpu_hi = twins.ratio(t, r, "client_cpu_ms", level)
            rows.append(
                {
                    "target_id": t["scenario_id"],
                    "lab_id": r["scenario_id"],
                    "leaf_alg": alg,
                    "lab_hierarchy": r["hierarchy"],
                    "lab_network": r["network"],
                    "target_mean_ms": t["mean_ms"],
                    "lab_mean_ms": r["mean_ms"],
                    "latency_ratio": lat,
                    "latency_ratio_lo": lat_lo,
                    "latency_ratio_hi": lat_hi,
                    "client_cpu_ratio": cpu,
                    "client_cpu_ratio_lo": cpu_lo,
                    "client_cpu_ratio_hi": cpu_hi,
                    "target_bytes_read": t["bytes_read"],
                    "lab_bytes_read": r["bytes_read"],
                }
            )
    return pd.DataFrame(rows)


def _params(r: dict) -> dict:
    p = r.get("params")
    if isinstance(p, dict):
        return p
    try:
        return json.loads(p) if p else {}
    except (TypeError, ValueError):
        return {}


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


@produces("targets", probes=True)
def _analysis_targets(a) -> pd.DataFrame:
    return per_target(a.data, a.config.confidence_level)


@produces("target_chains", probes=True)
def _analysis_target_chains(a) -> pd.DataFrame:
    return observed_chains(a.data)


@produces("target_beside", probes=True)
def _analysis_target_beside(a) -> pd.DataFrame:
    return beside_lab(a.targets, a.target_chains, a.summary, a.config.confidence_level)


@produces("target_load", probes=True)
def _analysis_target_load(a) -> pd.DataFrame:
    return load_steps(a.data, a.config.confidence_level)
