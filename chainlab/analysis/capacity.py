"""Capacity and cost (the paper's §9, Tables 11-13): an interpretation layer over the measured
server CPU time per connection, with illustrative parameters
(docs/methods/capacity.md#capacity-from-cpu). Where the
store has it, the CPU is the server's whole connection (accept to close: `server_conn_cpu_ns`),
else its handshake span (version-1 stores); `capacity_cpu_basis` says which. Capacity
measured under load is chainlab.analysis.load_capacity's.

Model: one fully busy core (one vCPU) completes 1e9 / (mean server CPU ns per connection)
handshakes per second. It assumes handshakes are CPU-bound on the server, scale linearly
across cores and that nothing else runs; it ignores the kernel's network work outside the
server process, memory and the client side.

- handshakes per core-second = 1e9 / mean server_cpu_ns; per vCPU-hour = that x 3600;
- retained capacity = baseline server CPU / scenario server CPU; capacity loss = 1 - that;
- infrastructure multiplier = scenario server CPU / baseline server CPU (cores needed to keep
  the baseline's throughput);
- CPU-hours per million handshakes = mean server CPU s x 1e6 / 3600; cost per million = that x
  price_per_vcpu_hour; extra cost = scenario cost - baseline cost;
- monthly cost of a service class = cost per handshake x the class's handshakes per month.

Every quantity is a monotone function of one or two means, so intervals come from the
log-scale delta interval of the mean or of the ratio; differences (extra cost) and the class
aggregates use the Monte-Carlo draws of `compare.MonteCarlo`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab.analysis.compare import MonteCarlo, group_members, ratio_of_means
from chainlab.analysis.registry import produces
from chainlab.stats import log_interval, percentile_interval


def per_scenario(summary: pd.DataFrame, mc: MonteCarlo, baseline: str | None) -> pd.DataFrame:
    cfg = mc.cfg
    level = cfg.confidence_level
    price = cfg.price_per_vcpu_hour
    ok = summary[summary["status"] == "ok"]
    idx = summary.set_index("scenario_id")
    rows = []
    for _, r in ok.iterrows():
        sid = r["scenario_id"]
        cpu_ms, se = r["capacity_cpu_ms"], r["capacity_cpu_ms_se"]
        lo_ms, hi_ms = log_interval(cpu_ms, se, level)
        per_s = 1e3 / cpu_ms if cpu_ms > 0 else math.nan
        row = {
            "scenario_id": sid,
            "label": r["label"],
            "kex_family": r["kex_family"],
            "depth": r["depth"],
            "placement_class": r["placement_class"],
            "server_cpu_s": cpu_ms / 1e3,
            "cpu_basis": r["capacity_cpu_basis"],
            "handshake_cpu_s": r["server_cpu_ms"] / 1e3,
            "handshakes_per_core_s_handshake_only": (
                1e3 / r["server_cpu_ms"] if r["server_cpu_ms"] > 0 else math.nan
            ),
            "handshakes_per_core_s": per_s,
            "handshakes_per_core_s_lo": 1e3 / hi_ms if hi_ms > 0 else math.nan,
            "handshakes_per_core_s_hi": 1e3 / lo_ms if lo_ms > 0 else math.nan,
        }
        row["handshakes_per_vcpu_hour"] = per_s * 3600
        row["handshakes_per_vcpu_hour_lo"] = row["handshakes_per_core_s_lo"] * 3600
        row["handshakes_per_vcpu_hour_hi"] = row["handshakes_per_core_s_hi"] * 3600
        if baseline is not None:
            x, xlo, xhi = ratio_of_means(idx, sid, baseline, "capacity_cpu_ms", level)
        else:
            x = xlo = xhi = math.nan
        row["infra_multiplier"], row["infra_multiplier_lo"], row["infra_multiplier_hi"] = (
            x,
            xlo,
            xhi,
        )
        row["retained_capacity"] = 1 / x if x > 0 else math.nan
        row["retained_capacity_lo"] = 1 / xhi if xhi > 0 else math.nan
        row["retained_capacity_hi"] = 1 / xlo if xlo > 0 else math.nan
        row["capacity_loss_pct"] = (1 - row["retained_capacity"]) * 100
        hours = cpu_ms / 1e3 * 1e6 / 3600
        row["cpu_hours_per_million"] = hours
        row["cost_per_million"] = hours * price
        row["cost_per_million_lo"] = lo_ms / 1e3 * 1e6 / 3600 * price
        row["cost_per_million_hi"] = hi_ms / 1e3 * 1e6 / 3600 * price
        if baseline is not None:
            base_ms = float(idx.at[baseline, "capacity_cpu_ms"])
            row["extra_cost_per_million"] = (cpu_ms - base_ms) / 1e3 * 1e6 / 3600 * price
            if sid == baseline:
                row["extra_cost_per_million_lo"] = row["extra_cost_per_million_hi"] = 0.0
            else:
                d = (mc.mean(sid, "capacity_cpu_ms") - mc.mean(baseline, "capacity_cpu_ms")) / 1e3
                lo, hi = percentile_interval(d * 1e6 / 3600 * price, level)
                row["extra_cost_per_million_lo"], row["extra_cost_per_million_hi"] = lo, hi
        else:
            row["extra_cost_per_million"] = math.nan
            row["extra_cost_per_million_lo"] = row["extra_cost_per_million_hi"] = math.nan
        row["cost_multiplier"] = x
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return df.sort_values(["server_cpu_s", "scenario_id"]).reset_index(drop=True)


def service_classes_per_scenario(cap: pd.DataFrame, cfg) -> pd.DataFrame:
    """Monthly cost per scenario and service class (cost per handshake x volume)."""
    rows = []
    for _, r in cap.iterrows():
        for name, volume in cfg.service_classes.items():
            f = volume / 1e6
            rows.append(
                {
                    "service_class": name,
                    "handshakes_per_month": volume,
                    "scenario_id": r["scenario_id"],
                    "placement_class": r["placement_class"],
                    "monthly_cost": r["cost_per_million"] * f,
                    "monthly_cost_lo": r["cost_per_million_lo"] * f,
                    "monthly_cost_hi": r["cost_per_million_hi"] * f,
                    "extra_monthly_cost": r["extra_cost_per_million"] * f,
                    "extra_monthly_cost_lo": r["extra_cost_per_million_lo"] * f,
                    "extra_monthly_cost_hi": r["extra_cost_per_million_hi"] * f,
                }
            )
    return pd.DataFrame(rows)


def service_classes_per_class(
    summary: pd.DataFrame, mc: MonteCarlo, baseline: str | None
) -> pd.DataFrame:
    """Per service class and placement class: mean and median monthly cost and extra monthly
    cost vs the baseline over the class's scenarios (the paper's Table 13), with
    Monte-Carlo intervals."""
    cfg = mc.cfg
    level = cfg.confidence_level
    per_ms = 1e-3 / 3600 * cfg.price_per_vcpu_hour  # cost of one server CPU millisecond
    rows = []
    groups = group_members(summary, "exclusive")
    for name, volume in cfg.service_classes.items():
        for g, members in groups.items():
            ids = list(members["scenario_id"])
            cpu = members["capacity_cpu_ms"].to_numpy(dtype=float)
            draws = np.column_stack([mc.mean(s, "capacity_cpu_ms") for s in ids])
            row = {
                "service_class": name,
                "handshakes_per_month": volume,
                "class": g,
                "n_scenarios": len(ids),
            }
            cost = cpu * per_ms * volume
            cost_d = draws * per_ms * volume
            for stat, fn in (("mean", np.mean), ("median", np.median)):
                row[f"{stat}_monthly_cost"] = float(fn(cost))
                lo, hi = percentile_interval(fn(cost_d, axis=1), level)
                row[f"{stat}_monthly_cost_lo"], row[f"{stat}_monthly_cost_hi"] = lo, hi
            for stat, fn in (("mean", np.mean), ("median", np.median)):
                key = f"{stat}_extra_monthly_cost"
                if baseline is None:
                    row[key] = row[f"{key}_lo"] = row[f"{key}_hi"] = math.nan
                    continue
                base = float(summary.set_index("scenario_id").at[baseline, "capacity_cpu_ms"])
                base_d = mc.mean(baseline, "capacity_cpu_ms")[:, None]
                row[key] = float(fn((cpu - base) * per_ms * volume))
                lo, hi = percentile_interval(fn((draws - base_d) * per_ms * volume, axis=1), level)
                row[f"{key}_lo"], row[f"{key}_hi"] = lo, hi
            rows.append(row)
    return pd.DataFrame(rows)


@produces("capacity")
def _analysis_capacity(a) -> pd.DataFrame:
    return per_scenario(a.reference_summary(), a.monte_carlo, a.baseline)


@produces("all_capacity")
def _analysis_all_capacity(a) -> pd.DataFrame:
    """The derived capacity of every scenario with load steps, whatever its network."""
    if not len(a.load_steps):
        return a.capacity
    return per_scenario(a.summary, a.monte_carlo, a.baseline)


@produces("service_scenarios")
def _analysis_service_scenarios(a) -> pd.DataFrame:
    return service_classes_per_scenario(a.capacity, a.config)


@produces("service_classes")
def _analysis_service_classes(a) -> pd.DataFrame:
    return service_classes_per_class(a.reference_summary(), a.monte_carlo, a.baseline)
