"""Capacity under load (docs/methods/capacity.md#capacity-under-load): each scenario's open-loop
load steps, its
measured capacity beside the capacity derived from single-connection server CPU, and the
paper's Tables 11-13 recomputed from the measured figure.

- A step's **latency** is measured from each attempt's intended start (so waiting for a
  stalled server counts); its percentiles are nearest-rank order statistics of the
  successful attempts with distribution-free intervals (stats.quantile_ci). An attempt that
  never started (`generator_saturated`) or failed is counted as a failure, never averaged in.
- A step's **achieved rate** is its successful handshakes completed within a window as long
  as its schedule, starting at their median latency, per second of that window, with the
  exact Poisson interval of the count (stats.poisson_rate_ci): an overloaded step's backlog
  or a lossy path's retransmission tail draining after the schedule no longer stretches the
  time (the step's wall time instead where a store has no per-attempt intended starts).
- The **measured capacity** is the highest achieved rate of the capacity steps (past it an
  overloaded server's goodput falls as timeouts waste its work). A step is
  **saturated** only when it fell behind its offer (some attempts could not start, or the
  achieved rate well below the offered) *and* the server was the cause: its cores at least
  SERVER_BUSY busy, or its listen queue overflowing. Whatever else held a step back is said
  in words per step (`limited_by`, `step_limit`): the generator (its CPU, or scheduling lag
  that delayed attempts), the connection slots (`max_in_flight` open at once: the offered
  rate times the latency, which a long round trip inflates), or an unexplained shortfall
  with the server's cores idle. A step whose generator was the limit gives a lower bound
  for the server, and says so.
- The **derived capacity** per core is 1e3 / server CPU ms per connection of the
  single-connection phase (chainlab.analysis.capacity); measured / derived (per core) has the
  delta-method interval of a ratio of two independent estimates.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from chainlab.analysis.load import StoreData
from chainlab.analysis.registry import produces
from chainlab.runner import host
from chainlab.runner.load import LATENCY_BOUND, fell_behind, latency_unbounded, servable
from chainlab.stats import poisson_rate_ci, quantile_ci, ratio_ci

# A step fell behind because of the server only if the server's cores were at least this
# busy (/proc/stat over the step: user, system and the kernel's network work).
SERVER_BUSY = 0.85

# A step's link was the limit when its handshakes' bytes at the achieved rate filled at least
# this share of the path's configured rate in the busier direction (a bottleneck queue
# builds before the link is wholly busy).
LINK_BUSY = 0.9

# The latency percentiles of every load step, by column name.
PERCENTILES = {"p50_ms": 0.5, "p90_ms": 0.9, "p99_ms": 0.99, "p999_ms": 0.999}


def steps_frame(data: StoreData, level: float) -> pd.DataFrame:
    """One row per load step with its rates, failures, percentiles and generator health."""
    steps = data.load_steps
    if steps is None or steps.empty:
        return pd.DataFrame()
    rows = []
    for _, r in steps.iterrows():
        sid, step = str(r["scenario_id"]), int(r["step"])
        measured = int(r["n_ok"]) + int(r["n_failed"])
        rate, rate_lo, rate_hi = poisson_rate_ci(*_completions(r), level)
        row = {
            "scenario_id": sid,
            "step": step,
            "kind": r["kind"],
            "fraction": r["fraction"],
            "offered_rate": float(r["offered_rate"]),
            # The offer less its attempts refused by an answer (a client no chain serves).
            "servable_rate": servable(r),
            "achieved_rate": rate,
            "achieved_rate_lo": rate_lo,
            "achieved_rate_hi": rate_hi,
            "achieved_share": rate / float(r["offered_rate"]) if r["offered_rate"] else math.nan,
            "n_attempts": measured,
            "n_ok": int(r["n_ok"]),
            "n_failed": int(r["n_failed"]),
            "n_saturated": int(r["n_saturated"]),
            "failed_share": int(r["n_failed"]) / measured if measured else math.nan,
            "failures": r["failures"],
            "server_utilisation": (
                float(r["server_cpu_s"]) / float(r["wall_s"]) / int(r["server_cores"])
                if r["wall_s"] and pd.notna(r["server_cpu_s"])
                else math.nan
            ),
            "generator_utilisation": float(r["generator_cpu_s"])
            / float(r["wall_s"])
            / int(r["generator_cores"])
            if r["wall_s"]
            else math.nan,
            # The server process's CPU over the step that no connection's record holds (its
            # accept loop, records writer, timers), as a share of it: accounted, not lost.
            "cpu_outside_connections": _outside(r),
            "generator_limited": bool(r["generator_limited"]),
            "generator_note": r["generator_note"] if isinstance(r["generator_note"], str) else "",
            "server_cores": int(r["server_cores"]),
            "server_cores_busy": _float(r.get("server_cores_busy")),
            "listen_overflows": _float(r.get("listen_overflows")),
            "listen_drops": _float(r.get("listen_drops")),
            "link_timer_late_us_mean": _float(r.get("link_timer_late_us_mean")),
        }
        lat = data.load_latencies_ms.get((sid, step), np.empty(0))
        for name, q in PERCENTILES.items():
            row[name], row[f"{name}_lo"], row[f"{name}_hi"] = quantile_ci(lat, q, level)
        rows.append(row)
    df = pd.DataFrame(rows)
    # The path's configured rate and the share of it the step's handshakes used.
    links = link_loads(data)
    df["link_rate_mbit"] = df["scenario_id"].map(lambda sid: links.get(sid, (math.nan,))[0])
    df["link_share"] = [
        r["achieved_rate"] * links[r["scenario_id"]][1] * 8 / (links[r["scenario_id"]][0] * 1e6)
        if r["scenario_id"] in links
        else math.nan
        for r in df.to_dict("records")
    ]
    # Each step's latency bound: LATENCY_BOUND times its scenario's lightest step's p99.
    lightest = df.sort_values("offered_rate").groupby("scenario_id")["p99_ms"].first()
    df["p99_bound_ms"] = df["scenario_id"].map(lightest) * LATENCY_BOUND
    limits = [step_limit(r) for r in df.to_dict("records")]
    df["server_saturated"] = [lim[0] for lim in limits]
    df["limited_by"] = [lim[1] for lim in limits]
    df["kept_up"] = [lim[1] == KEPT_UP for lim in limits]
    # Offered and achieved load relative to the scenario's measured capacity (the most a
    # capacity step achieved), so scenarios of any speed share one scale.
    cap = df[df["kind"] == "capacity"].groupby("scenario_id")["achieved_rate"].max()
    per = df["scenario_id"].map(cap)
    df["offered_share"] = df["offered_rate"] / per
    df["achieved_share_of_capacity"] = df["achieved_rate"] / per
    df["achieved_share_of_capacity_lo"] = df["achieved_rate_lo"] / per
    df["achieved_share_of_capacity_hi"] = df["achieved_rate_hi"] / per
    return df


def link_loads(data: StoreData) -> dict[str, tuple[float, float]]:
    """Per scenario on a path with a configured rate: (its rate in Mbit/s, the mean bytes
    one handshake moves in the busier direction, from its single-connection phase)."""
    prof, samples = data.network_profiles, data.network_samples
    if prof is None or prof.empty or samples is None or samples.empty:
        return {}
    rates: dict[str, float] = {}
    for r in prof.to_dict("records"):
        configured = r.get("configured")
        cfg = json.loads(configured) if isinstance(configured, str) else (configured or {})
        if cfg.get("rate_mbit"):
            rates.setdefault(r["profile"], float(cfg["rate_mbit"]))
    network = data.scenarios.set_index("scenario_id")["network"].to_dict()
    out = {}
    for sid, g in samples.groupby("scenario_id"):
        rate = rates.get(network.get(sid))
        if rate:
            busier = max(g["bytes_written"].mean(), g["server_bytes_written"].mean())
            out[str(sid)] = (rate, float(busier))
    return out


def capacity_frame(
    steps: pd.DataFrame,
    summary: pd.DataFrame,
    capacity: pd.DataFrame,
    cfg,
    host: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per scenario with load steps: measured capacity (last capacity step), the derived
    figures, their ratio, and the paper's Tables 11-13 quantities from the measured one."""
    if steps.empty:
        return pd.DataFrame()
    level = cfg.confidence_level
    derived = capacity.set_index("scenario_id") if len(capacity) else pd.DataFrame()
    summ = summary.set_index("scenario_id")
    speed = host.set_index("scenario_id") if host is not None and len(host) else None
    rows = []
    for sid, g in steps.groupby("scenario_id", sort=True):
        cap = g[g["kind"] == "capacity"].sort_values("step")
        if cap.empty:
            continue
        # The capacity is the most a capacity step achieved (chainlab.runner.load); whether
        # the server was saturated, the last step (the heaviest offer) says.
        best = cap.loc[cap["achieved_rate"].idxmax()]
        last = cap.iloc[-1]
        cores = int(last["server_cores"])
        per_core = best["achieved_rate"] / cores
        row = {
            "scenario_id": sid,
            "server_cores": cores,
            "capacity": best["achieved_rate"],
            "capacity_lo": best["achieved_rate_lo"],
            "capacity_hi": best["achieved_rate_hi"],
            "capacity_per_core": per_core,
            "capacity_per_core_lo": best["achieved_rate_lo"] / cores,
            "capacity_per_core_hi": best["achieved_rate_hi"] / cores,
            "saturated": bool(last["server_saturated"]),
            "limited_by": last["limited_by"],
            "generator_limited": bool(best["generator_limited"]),
            "server_utilisation": best["server_utilisation"],
            # How far the host's speed moved over the scenario (host_speed): measured and
            # derived capacity were taken minutes apart.
            "host_drift": float(speed.at[sid, "drift"])
            if speed is not None and sid in speed.index
            else math.nan,
        }
        # The sustainable rate, per core too (nan where no step kept up).
        kept = sustained(g)
        for name in ("sustained", "not_sustained"):
            for end in ("", "_lo", "_hi"):
                value = kept.get(name + end, math.nan) if name == "sustained" or not end else None
                if value is None:
                    continue
                row[name + end] = value
                row[f"{name}_per_core{end}"] = value / cores
        row["sustained_step"] = kept.get("sustained_step", "")
        if sid in derived.index:
            d = derived.loc[sid]
            row["derived_per_core"] = d["handshakes_per_core_s"]
            row["derived_per_core_lo"] = d["handshakes_per_core_s_lo"]
            row["derived_per_core_hi"] = d["handshakes_per_core_s_hi"]
            row["derived_handshake_only"] = d["handshakes_per_core_s_handshake_only"]
            # log(measured) has se 1/sqrt(n) (a Poisson count); log(derived) the log-scale se
            # of its mean CPU.
            se_m = 1 / math.sqrt(best["n_ok"]) if best["n_ok"] > 0 else math.nan
            se_d = float(summ.at[sid, "capacity_cpu_ms_se"]) if sid in summ.index else math.nan
            ratio, lo, hi = ratio_ci(per_core, se_m, d["handshakes_per_core_s"], se_d, level)
            row["measured_over_derived"] = ratio
            row["measured_over_derived_lo"], row["measured_over_derived_hi"] = lo, hi
        # The paper's Tables 11-13 from the measured capacity per core.
        price = cfg.price_per_vcpu_hour
        row["handshakes_per_vcpu_hour"] = per_core * 3600
        row["cost_per_million"] = 1e6 / (per_core * 3600) * price if per_core > 0 else math.nan
        for name, volume in cfg.service_classes.items():
            row[f"monthly_cost_{name}"] = volume * row["cost_per_million"] / 1e6
        rows.append(row)
    return pd.DataFrame(rows)


# What `step_limit` says of a step that kept up (its offer achieved, its p99 bounded).
KEPT_UP = "nothing: the server kept up with the offer"


def sustained(g: pd.DataFrame) -> dict:
    """The highest offered rate a scenario's steps (`g`, steps_frame rows) show the server
    sustaining: the heaviest step that kept up (its achieved rate's interval reaches the
    offer and its p99 stayed bounded), with that interval, and the lightest heavier offer
    that did not keep up (None: no heavier step failed to), between which the sustainable
    rate lies. The overload throughput of a capacity step is not it: an overloaded event
    loop batches its work and completes more per second than it sustains with bounded
    latency."""
    kept = g[g["kept_up"]].sort_values("offered_rate")
    if kept.empty:
        return {}
    best = kept.iloc[-1]
    above = g[(~g["kept_up"]) & (g["offered_rate"] > best["offered_rate"])]
    return {
        "sustained": best["offered_rate"],
        "sustained_lo": best["achieved_rate_lo"],
        "sustained_hi": best["achieved_rate_hi"],
        "sustained_step": f"{best['kind']} {int(best['step'])}",
        "not_sustained": above["offered_rate"].min() if len(above) else math.nan,
    }


def step_limit(r: dict) -> tuple[bool, str]:
    """(whether the server was saturated, what limited the step in words) of a steps_frame
    row. A step kept up only when it achieved its offer within its interval (the upper end
    of the achieved rate's interval reaches the offer, less its attempts refused by an
    answer: `servable_rate`; without one, SATURATED of it) and its
    p99 stayed within its bound (`p99_bound_ms`, where known). Otherwise: the server, only
    with busy cores or an overflowing listen queue; else the generator, the connection
    slots, the latency, or a shortfall the counters do not explain."""
    hi = r.get("achieved_rate_hi", math.nan)
    offer = r.get("servable_rate", r["offered_rate"])
    behind = fell_behind(r["n_saturated"], r["achieved_rate"], hi, offer)
    share = r["achieved_rate"] / offer if offer else math.nan
    of_offer = "of the offer" if offer == r["offered_rate"] else "of the servable offer"
    p99, bound = r.get("p99_ms", math.nan), r.get("p99_bound_ms", math.nan)
    unbounded = latency_unbounded(p99, bound)
    latency = f"p99 {p99:.3g} ms, above its bound of {bound:.3g} ms" if unbounded else ""
    busy, overflows = r["server_cores_busy"], r["listen_overflows"]
    causes = []
    if busy == busy and busy >= SERVER_BUSY:
        causes.append(f"server CPU ({busy:.0%} of its cores busy)")
    if overflows == overflows and overflows > 0:
        causes.append(f"server listen queue ({overflows:.0f} overflows)")
    link = r.get("link_share", math.nan)
    link_cause = (
        f"link ({link:.0%} of its {r['link_rate_mbit']:g} Mbit/s used, busier direction)"
        if link == link and link >= LINK_BUSY
        else ""
    )
    detail = [] if not behind else [f"achieved {share:.0%} {of_offer}"]
    detail += [latency] if unbounded else []
    if (behind or unbounded) and causes:
        return True, "; ".join(causes + [link_cause] * bool(link_cause)) + f" ({', '.join(detail)})"
    if (behind or unbounded) and link_cause:
        return False, f"{link_cause} ({', '.join(detail)})"
    if r["generator_limited"]:
        return False, f"generator ({r['generator_note']})"
    if not behind and not unbounded:
        return False, KEPT_UP
    idle = f"server cores {busy:.0%} busy" if busy == busy else "server cores not measured"
    if not behind:
        return False, f"latency: {latency} ({idle})"
    if r["n_saturated"] > 0:
        return False, (
            f"connection slots: {r['n_saturated']} attempts found every slot open "
            f"(offered rate x latency above max_in_flight; {idle})"
        )
    return False, f"not the server: achieved {share:.0%} {of_offer} ({idle})"


def _outside(r) -> float:
    """1 − the step's connections' CPU / its server process's CPU (nan where not measured;
    /proc counts the process in clock ticks, 10 ms here, so a step of a second of CPU reads
    it to about 1 %)."""
    conn, proc = _float(r.get("server_cpu_s")), _float(r.get("server_process_cpu_s"))
    if conn != conn or proc != proc or proc <= 0:
        return math.nan
    return 1.0 - conn / proc


def _completions(r) -> tuple[int, float]:
    """(successful attempts, seconds) a step's achieved rate is counted over: those that
    completed within a window as long as its schedule, from their median latency on (the
    store's load windows), so neither the backlog an overload leaves nor a lossy path's
    retransmission tail stretches the time; all of them over the step's wall time where the
    store has no windows."""
    n, window = r.get("n_window"), r.get("window_s")
    if n is not None and window is not None and n == n and window == window and window > 0:
        return int(n), float(window)
    return int(r["n_ok"]), float(r["wall_s"])


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def host_speed(data: StoreData) -> pd.DataFrame:
    """Per scenario: the reference workload's time at its start and end and its fastest and
    slowest over the scenario's load steps too; drift = end / start - 1 (positive: the host
    got slower), spread = slowest / fastest - 1."""
    ref = data.host_reference
    if ref is None or ref.empty:
        return pd.DataFrame()
    rows = []
    for sid, g in ref.groupby("scenario_id", sort=True):
        wall = g["wall_ns"].to_numpy(dtype=float) / 1e6
        own = g[g["step"] == -1].set_index("phase")["wall_ns"] / 1e6
        start = float(own.get("start", math.nan))
        end = float(own.get("end", math.nan))
        rows.append(
            {
                "scenario_id": sid,
                "n": len(g),
                "start_ms": start,
                "end_ms": end,
                "fastest_ms": float(wall.min()),
                "slowest_ms": float(wall.max()),
                "drift": _or_nan(host.drift(g.to_dict("records"))),
                "spread": float(wall.max() / wall.min() - 1) if wall.min() > 0 else math.nan,
                "shared_core": bool(
                    (g["wall_ns"] > 1.2 * g["cpu_ns"]).any()
                ),  # the workload waited for its core
                # The machine's steal time between the scenario's start and end (all CPUs;
                # NaN where the kernel reports none, or in stores before version 9).
                "steal_ms": _steal_ms(g),
                # How far apart the CPUs were at its start or end, the larger (readings on
                # each CPU, schema 16 on; NaN: pinned, or one reading wherever it landed).
                "uneven": _uneven(g),
            }
        )
    df = pd.DataFrame(rows)
    df["moved"] = df["drift"].abs() > host.HOST_DRIFT_LIMIT
    # Its CPUs' speeds apart by more than the drift limit: a side's speed depends on the CPU
    # it ran on, which no reading says.
    df["cores_apart"] = df["uneven"] > host.HOST_DRIFT_LIMIT
    return df


def _uneven(g: pd.DataFrame) -> float:
    if "per_cpu_ns" not in g:
        return math.nan
    own = g[g["step"] == -1]
    got = [u for u in map(host.uneven, own["per_cpu_ns"]) if u is not None]
    return max(got) if got else math.nan


def _or_nan(x: float | None) -> float:
    return math.nan if x is None else x


def _steal_ms(g: pd.DataFrame) -> float:
    if "steal_ns" not in g:
        return math.nan
    own = g[g["step"] == -1].set_index("phase")["steal_ns"]
    start, end = own.get("start"), own.get("end")
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return math.nan
    return (float(end) - float(start)) / 1e6


def normalised_latency(host: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per scenario with a host reference: its mean latency scaled to the run's median host
    speed, mean_ms x (median of every scenario's reference time / this scenario's, the mean
    of its start and end). A label, not a measurement: it assumes the whole handshake slows
    as the reference workload does (CPU-bound work does; round trips on a link do not)."""
    if host is None or host.empty or summary.empty:
        return pd.DataFrame()
    h = host.set_index("scenario_id")
    own = (h["start_ms"] + h["end_ms"]) / 2
    median = float(own.median())
    out = summary[["scenario_id", "mean_ms", "mean_ms_lo", "mean_ms_hi"]].copy()
    factor = out["scenario_id"].map(median / own)
    for c in ("mean_ms", "mean_ms_lo", "mean_ms_hi"):
        out[f"normalised_{c}"] = out[c] * factor
    out["host_factor"] = factor
    return out[out["host_factor"].notna()].reset_index(drop=True)


@produces("load_steps")
def _analysis_load_steps(a) -> pd.DataFrame:
    return steps_frame(a.data, a.config.confidence_level)


@produces("host_speed")
def _analysis_host_speed(a) -> pd.DataFrame:
    return host_speed(a.data)


@produces("load_capacity")
def _analysis_load_capacity(a) -> pd.DataFrame:
    return capacity_frame(a.load_steps, a.summary, a.all_capacity, a.config, a.host_speed)
