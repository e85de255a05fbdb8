"""Emulated networks (docs/methods/networks.md#emulated-networks): each profile as configured and as
calibrated, the
handshakes whose server flight exceeded TCP's initial window, latency across profiles per
hierarchy, and the projection of loopback measurements onto networks (chainlab.network.model).

A store whose scenarios all ran over loopback has no network analysis (`analyze` returns None).

Definitions used throughout:
- a scenario's **line** is everything that defines it except the network (the scenario keys
  of chainlab.campaign.model.SCENARIO_KEYS); the latency plots draw one line per hierarchy;
- a profile's **MSS** is its MTU − 52 (chainlab.network.profile.TCP_IP_OVERHEAD: IPv4 20 +
  TCP 20 + the 12-byte timestamp option Linux negotiates by default), its **initial window**
  initcwnd × MSS bytes (initcwnd: the profile's, 10 when unset, as the link sets it);
- an **RTT family** is the profiles that differ only in RTT (same rate, loss, jitter, MTU,
  initcwnd); a **loss family** those that differ only in loss (same RTT, rate, jitter, MTU,
  initcwnd). Loopback is the 0 ms point of every RTT family with an unlimited rate, no loss
  and no jitter, and the 0 % point of a loss family only at 0 ms RTT with no rate limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.load import StoreData
from chainlab.analysis.network_profiles import (
    PROFILE_FIELDS,
    num,
    profile_rows,
    profiles_frame,
    tristate,
)
from chainlab.analysis.registry import produces
from chainlab.campaign.model import SCENARIO_KEYS
from chainlab.model.flights import KEY_SHARE_BYTES
from chainlab.network import model
from chainlab.network.profile import DEFAULT_INITCWND, LOOPBACK, TCP_IP_OVERHEAD
from chainlab.stats import percentile_interval, proportion_ci

# Un-emulated links every loopback scenario is projected onto: a nearby server (10 ms), a
# cross-continent path (100 ms) and a satellite or poor mobile path (300 ms), all at
# 10 Mbit/s (a modest access link, where serialization of a large chain is visible) with the
# defaults of an emulated profile (MTU 1500, initcwnd 10, no loss).
REFERENCE_PROFILES: tuple[dict[str, Any], ...] = (
    {"name": "10 ms, 10 Mbit/s", "delay_ms": 5.0, "rate_mbit": 10.0},
    {"name": "100 ms, 10 Mbit/s", "delay_ms": 50.0, "rate_mbit": 10.0},
    {"name": "300 ms, 10 Mbit/s", "delay_ms": 150.0, "rate_mbit": 10.0},
)

# A point of the latency plots is marked as 'exceeded the initial window' when at least this
# share of its handshakes did (the table gives every share with its interval).
EXCEED_MARK_SHARE = 0.5


@dataclass
class NetworkAnalysis:
    """The network section's tables (all frames; see the module doc for the terms)."""

    reference_network: str | None
    profiles: pd.DataFrame  # one row per (profile, run) the emulated scenarios used
    points: pd.DataFrame  # successful scenarios on a line with an emulated member
    projection: pd.DataFrame  # predicted vs emulated, per emulated scenario with a twin
    reference: pd.DataFrame  # every loopback scenario projected onto REFERENCE_PROFILES
    reference_profiles: pd.DataFrame  # model.profiles_table(REFERENCE_PROFILES)
    notes: list[str] = field(default_factory=list)
    # Per emulated scenario: the forwarder's timer lateness and bottleneck queueing while it
    # carried the scenario, flagged against the profile's tolerance (empty: not recorded).
    link_timing: pd.DataFrame = field(default_factory=pd.DataFrame)


def has_emulated(summary: pd.DataFrame) -> bool:
    return bool(len(summary) and "network" in summary and (summary["network"] != LOOPBACK).any())


def reference_network(summary: pd.DataFrame, baseline: str | None) -> str | None:
    """The network whose scenarios the cross-scenario statistics use
    (docs/methods/networks.md#emulated-networks):
    the baseline's; without a baseline loopback if any scenario ran there; else the network
    with the most scenarios (ties: the first name)."""
    if summary.empty or "network" not in summary:
        return None
    if baseline is not None:
        return str(summary.set_index("scenario_id").at[baseline, "network"])
    nets = summary["network"].astype(str)
    if (nets == LOOPBACK).any():
        return LOOPBACK
    counts = nets.value_counts()
    top = counts[counts == counts.max()].index
    return sorted(top)[0]


def line_key(row) -> tuple:
    """A scenario's identity apart from its network (missing positions as None)."""
    out = []
    for k in SCENARIO_KEYS:
        v = row[k]
        out.append(None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
    return tuple(out)


# -- profiles ------------------------------------------------------------------------------


# -- per-scenario points -------------------------------------------------------------------


def _family_label(kind: str, key: tuple, varies: dict) -> str:
    """Words for a family key; MTU and initcwnd only when they vary in the store."""
    if kind == "rtt":
        rate, loss, jitter, mtu, icw = key
        parts = [f"{rate:g} Mbit/s" if rate == rate and rate else "unlimited rate"]
        parts.append(f"{loss * 100:g} % loss" if loss else "no loss")
    else:
        rtt, rate, jitter, mtu, icw = key
        parts = [f"{rtt:g} ms RTT"]
        parts.append(f"{rate:g} Mbit/s" if rate == rate and rate else "unlimited rate")
    if jitter:
        parts.append(f"±{jitter:g} ms jitter")
    if varies.get("mtu"):
        parts.append(f"MTU {mtu:g}")
    if varies.get("initcwnd"):
        parts.append(f"initcwnd {icw:g}")
    return ", ".join(parts)


def _rate_key(rate) -> float:
    return rate if rate == rate and rate else 0.0  # NaN / None / 0 = unlimited


def points_frame(data: StoreData, summary: pd.DataFrame, profiles: pd.DataFrame) -> pd.DataFrame:
    """Successful scenarios of every line that has an emulated member, with their profile,
    latency statistics, the initial-window check and their loopback twin."""
    ok = summary[summary["status"] == "ok"]
    scen = data.scenarios.set_index("scenario_id")
    keys = {sid: line_key(scen.loc[sid]) for sid in ok["scenario_id"]}
    emulated_lines = {
        keys[s] for s, n in zip(ok["scenario_id"], ok["network"], strict=True) if n != LOOPBACK
    }
    members = ok[[keys[s] in emulated_lines for s in ok["scenario_id"]]]
    if members.empty:
        return pd.DataFrame()
    # line numbers and labels: one representative scenario per line, network left out
    order = sorted(emulated_lines, key=lambda k: tuple("" if v is None else str(v) for v in k))
    line_no = {k: i for i, k in enumerate(order)}
    reps = []
    for k in order:
        sid = next(s for s in members["scenario_id"] if keys[s] == k)
        reps.append(scen.loc[sid].to_dict() | {"scenario_id": sid, "network": LOOPBACK})
    labels = fam.scenario_labels(pd.DataFrame(reps))
    line_label = {
        keys[r["scenario_id"]]: " · ".join(labels[r["scenario_id"]]).replace("\n", " ")
        for r in reps
    }
    prof = profiles.set_index(["profile", "run_id"]) if len(profiles) else profiles
    varies = {
        c: profiles[c].nunique(dropna=False) > 1 if len(profiles) else False
        for c in ("mtu", "initcwnd")
    }
    samples = data.network_samples
    by_sid = dict(tuple(samples.groupby("scenario_id"))) if len(samples) else {}
    loop_of = {
        keys[s]: s
        for s, n in zip(members["scenario_id"], members["network"], strict=True)
        if n == LOOPBACK
    }
    level = data.config.confidence_level
    medians = ok.set_index("scenario_id")["median_ms"]
    rows = []
    for _, r in members.iterrows():
        sid, net = r["scenario_id"], r["network"]
        k = keys[sid]
        row = {
            "scenario_id": sid,
            "line": line_no[k],
            "line_label": line_label[k],
            "hierarchy": r["hierarchy"],
            "kex": r["kex"],
            "placement_class": r["placement_class"],
            "network": net,
            "emulated": net != LOOPBACK,
        }
        if net == LOOPBACK:
            row.update(rtt_ms=0.0, rate_mbit=math.nan, loss=0.0, jitter_ms=0.0)
            row.update(mtu=math.nan, mss=math.nan, initcwnd=math.nan, window_bytes=math.nan)
            row["flagged"] = None
        elif len(prof) and (net, r["run_id"]) in prof.index:
            p = prof.loc[(net, r["run_id"])]
            for c in (*PROFILE_FIELDS, "window_bytes"):
                row[c] = num(p[c])
            row["flagged"] = p["flagged"]
        else:
            row.update({c: math.nan for c in (*PROFILE_FIELDS, "window_bytes")})
            row["flagged"] = None
        for c in ("n_ok", "mean_ms", "median_ms", "p95_ms"):
            row[c] = r[c]
            if c != "n_ok":
                row[f"{c}_lo"], row[f"{c}_hi"] = r[f"{c}_lo"], r[f"{c}_hi"]
        s = by_sid.get(sid)
        srv = s["server_bytes_written"].dropna() if s is not None else pd.Series(dtype=float)
        row["server_flight_bytes"] = float(srv.median()) if len(srv) else math.nan
        row["n_server"] = int(len(srv))
        if row["emulated"] and len(srv) and math.isfinite(row["mss"]):
            exceed = model.exceeds_initial_window(
                srv.to_numpy(dtype=float), row["mss"], row["initcwnd"]
            )
            k_ex = int(np.count_nonzero(exceed))
            row["n_exceed"] = k_ex
            est, lo, hi = proportion_ci(k_ex, len(srv), level)
        else:
            row["n_exceed"] = math.nan  # loopback, or a profile of unknown MSS
            est = lo = hi = math.nan
        row["exceed_share"], row["exceed_share_lo"], row["exceed_share_hi"] = est, lo, hi
        twin = loop_of.get(k)
        row["loopback_id"] = twin if row["emulated"] else None
        twin_median = float(medians[twin]) if twin and row["emulated"] else math.nan
        row["loopback_median_ms"] = twin_median
        row["extra_median_ms"] = row["median_ms"] - twin_median
        rows.append(row)
    df = pd.DataFrame(rows)
    tristate(df, "flagged")
    em = df[df["emulated"]]
    shown = {
        "mtu": em["mtu"].nunique(dropna=False) > 1 or varies["mtu"],
        "initcwnd": em["initcwnd"].nunique(dropna=False) > 1 or varies["initcwnd"],
    }
    rtt_fam: list[str | None] = []
    loss_fam: list[str | None] = []
    for _, r in df.iterrows():
        if not r["emulated"]:
            rtt_fam.append(None)
            loss_fam.append(None)
            continue
        rk = (_rate_key(r["rate_mbit"]), r["loss"], r["jitter_ms"], r["mtu"], r["initcwnd"])
        lk = (r["rtt_ms"], _rate_key(r["rate_mbit"]), r["jitter_ms"], r["mtu"], r["initcwnd"])
        ok_keys = all(isinstance(v, float | int) and v == v for v in rk + lk)
        rtt_fam.append(_family_label("rtt", rk, shown) if ok_keys else None)
        loss_fam.append(_family_label("loss", lk, shown) if ok_keys else None)
    df["rtt_family"] = rtt_fam
    df["loss_family"] = loss_fam
    df["joins_loopback_rtt"] = [
        bool(r["emulated"] and _rate_key(r["rate_mbit"]) == 0 and r["loss"] == 0
             and r["jitter_ms"] == 0)
        for _, r in df.iterrows()
    ]  # fmt: skip
    df["joins_loopback_loss"] = [
        bool(r["emulated"] and r["rtt_ms"] == 0 and _rate_key(r["rate_mbit"]) == 0
             and r["jitter_ms"] == 0)
        for _, r in df.iterrows()
    ]  # fmt: skip
    return df.sort_values(["line", "emulated", "rtt_ms", "loss", "network"]).reset_index(drop=True)


# -- projection ----------------------------------------------------------------------------


def _configured_specs(data: StoreData) -> list[dict]:
    """The configured profile of every emulated profile name (latest run's if several)."""
    specs = {}
    info = profile_rows(data)
    order = {r: i for i, r in enumerate(data.runs["run_id"])}
    for (net, _run), v in sorted(info.items(), key=lambda kv: order.get(kv[0][1], -1)):
        if v["configured"] is None:
            continue
        spec = {k: x for k, x in v["configured"].items() if k not in ("run_id", "profile")}
        spec["name"] = net
        specs[net] = spec
    return list(specs.values())


def _measured_specs(profiles: pd.DataFrame, data: StoreData) -> list[dict]:
    """Each calibrated profile as the link measured it: its propagation RTT (measured RTT
    less the SYN and SYN-ACK serialization at the measured rate), its measured rate where
    a rate was configured (an unlimited link's train measures the forwarder, not a
    bottleneck) and its measured loss."""
    out = []
    for spec in _configured_specs(data):
        rows = profiles[profiles["profile"] == spec["name"]]
        rows = rows[np.isfinite(rows["measured_rtt_ms"].to_numpy(dtype=float))]
        if rows.empty:
            continue
        r = rows.iloc[-1]
        rate = spec.get("rate_mbit")
        m_rate = r["measured_rate_mbit"]
        m_rate = m_rate if rate and math.isfinite(m_rate) else None
        syn_ms = model.syn_serialization_ms(m_rate)
        delay = max(0.0, (r["measured_rtt_ms"] - syn_ms) / 2)
        m = dict(spec)
        m["delay_ms"] = delay
        m["jitter_ms"] = min(float(spec.get("jitter_ms") or 0.0), delay)
        if m_rate:
            m["rate_mbit"] = float(m_rate)
        if math.isfinite(r["measured_loss"]):
            m["loss"] = float(min(max(r["measured_loss"], 0.0), 1.0))
        out.append(m)
    return out


def _predict(data: StoreData, summary: pd.DataFrame, specs: list[dict]) -> pd.DataFrame:
    if not specs:
        return pd.DataFrame()
    ok_ids = set(summary.loc[summary["status"] == "ok", "scenario_id"])
    scen = data.scenarios[data.scenarios["scenario_id"].isin(ok_ids)]
    samples = data.network_samples
    samples = samples[samples["scenario_id"].isin(ok_ids)]
    shares = {group: client for group, (client, _) in KEY_SHARE_BYTES.items()}
    return model.predict(
        samples, scen, model.profiles_table(specs), keys=SCENARIO_KEYS, key_share_bytes=shares
    )


def projection_frame(
    data: StoreData, summary: pd.DataFrame, profiles: pd.DataFrame, mc
) -> pd.DataFrame:
    """Predicted (chainlab.network.model.predict, from the loopback twin) beside emulated
    latency for every successful emulated scenario with a successful loopback twin."""
    pred = _predict(data, summary, _configured_specs(data))
    if pred.empty:
        return pd.DataFrame()
    pred = pred[pred["emulated_scenario_id"].notna()].copy()
    if pred.empty:
        return pd.DataFrame()
    measured = _predict(data, summary, _measured_specs(profiles, data))
    at_measured = {}
    if len(measured):
        for _, r in measured.iterrows():
            at_measured[(r["loopback_scenario_id"], r["profile"])] = (
                r["predicted_ms"],
                r["rtt_ms"],
            )
    s = summary.set_index("scenario_id")
    level = data.config.confidence_level
    rows = []
    for _, r in pred.iterrows():
        loop, em = r["loopback_scenario_id"], r["emulated_scenario_id"]
        row = {
            "loopback_id": loop,
            "emulated_id": em,
            "profile": r["profile"],
            "placement_class": s.at[em, "placement_class"],
            "hierarchy": s.at[em, "hierarchy"],
            "rtt_ms": r["rtt_ms"],
            "base_ms": r["base_ms"],
            "client_flight_bytes": r["client_flight_bytes"],
            "server_flight_bytes": r["server_flight_bytes"],
            "round_trips": r["round_trips"],
            "extra_round_trips": r["extra_round_trips"],
            "serialization_ms": r["serialization_ms"],
            "exceeds_initcwnd": bool(r["exceeds_initcwnd"]),
            "p_no_loss": r["p_no_loss"],
            "predicted_ms": r["predicted_ms"],
        }
        # The prediction is the loopback median plus a fixed network term, so its interval
        # is the loopback median's shifted by that term (measurement uncertainty only).
        net_term = r["predicted_ms"] - r["base_ms"]
        row["predicted_ms_lo"] = s.at[loop, "median_ms_lo"] + net_term
        row["predicted_ms_hi"] = s.at[loop, "median_ms_hi"] + net_term
        pm, prtt = at_measured.get((loop, r["profile"]), (math.nan, math.nan))
        row["predicted_measured_link_ms"] = pm
        row["measured_link_rtt_ms"] = prtt
        row["emulated_n"] = int(s.at[em, "n_ok"])
        row["emulated_median_ms"] = s.at[em, "median_ms"]
        row["emulated_median_ms_lo"] = s.at[em, "median_ms_lo"]
        row["emulated_median_ms_hi"] = s.at[em, "median_ms_hi"]
        row["emulated_mean_ms"] = s.at[em, "mean_ms"]
        row["emulated_p95_ms"] = s.at[em, "p95_ms"]
        pred_ms = r["predicted_ms"]
        ratio = row["emulated_median_ms"] / pred_ms if pred_ms > 0 else math.nan
        reps = mc.quantile(em, 0.5) / (mc.quantile(loop, 0.5) + net_term)
        lo, hi = percentile_interval(reps, level)
        row["ratio"], row["ratio_lo"], row["ratio_hi"] = ratio, lo, hi
        row["ratio_measured_link"] = (
            row["emulated_median_ms"] / pm if pm == pm and pm > 0 else math.nan
        )
        rtt = r["rtt_ms"]
        row["observed_round_trips"] = (
            (row["emulated_median_ms"] - r["base_ms"] - r["serialization_ms"]) / rtt
            if rtt > 0
            else math.nan
        )
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["loopback_id", "rtt_ms", "profile"]).reset_index(drop=True)


def reference_frame(data: StoreData, summary: pd.DataFrame) -> pd.DataFrame:
    """Every successful loopback scenario projected onto REFERENCE_PROFILES."""
    pred = _predict(data, summary, [dict(p) for p in REFERENCE_PROFILES])
    if pred.empty:
        return pd.DataFrame()
    s = summary.set_index("scenario_id")
    order = {p["name"]: i for i, p in enumerate(REFERENCE_PROFILES)}
    out = pd.DataFrame(
        {
            "scenario_id": pred["loopback_scenario_id"],
            "placement_class": pred["loopback_scenario_id"].map(s["placement_class"]),
            "profile": pred["profile"],
            "rtt_ms": pred["rtt_ms"],
            "rate_mbit": pred["profile"].map(
                {p["name"]: p.get("rate_mbit") for p in REFERENCE_PROFILES}
            ),
            "base_ms": pred["base_ms"],
            "client_flight_bytes": pred["client_flight_bytes"],
            "server_flight_bytes": pred["server_flight_bytes"],
            "round_trips": pred["round_trips"],
            "extra_round_trips": pred["extra_round_trips"],
            "serialization_ms": pred["serialization_ms"],
            "exceeds_initcwnd": pred["exceeds_initcwnd"].astype(bool),
            "predicted_ms": pred["predicted_ms"],
        }
    )
    out["_o"] = out["profile"].map(order)
    return out.sort_values(["scenario_id", "_o"]).drop(columns="_o").reset_index(drop=True)


# -- the whole section ---------------------------------------------------------------------


def analyze(data: StoreData, summary: pd.DataFrame, mc, baseline: str | None):
    """The network analysis of a store, or None when every scenario ran over loopback."""
    if not has_emulated(summary):
        return None
    profiles = profiles_frame(data)
    points = points_frame(data, summary, profiles)
    projection = projection_frame(data, summary, profiles, mc)
    reference = reference_frame(data, summary)
    notes = []
    em_ok = summary[(summary["network"] != LOOPBACK) & (summary["status"] == "ok")]
    twinned = set(projection["emulated_id"]) if len(projection) else set()
    lonely = sorted(set(em_ok["scenario_id"]) - twinned)
    if lonely:
        notes.append(
            "No successful loopback twin (same scenario on loopback), so no prediction for: "
            + ", ".join(f"`{x}`" for x in lonely)
            + "."
        )
    failed = summary[(summary["network"] != LOOPBACK) & (summary["status"] != "ok")]
    if len(failed):
        notes.append(
            "Failed emulated scenarios (see the failures table), left out here: "
            + ", ".join(f"`{x}`" for x in failed["scenario_id"])
            + "."
        )
    unknown = profiles[profiles["source"] == "not recorded"] if len(profiles) else profiles
    if len(unknown):
        notes.append(
            "Profiles with neither a stored calibration nor a `[network.<name>]` table in the "
            "campaign file (their RTT is unknown): "
            + ", ".join(f"`{x}`" for x in unknown["profile"])
            + "."
        )
    return NetworkAnalysis(
        reference_network=reference_network(summary, baseline),
        profiles=profiles,
        points=points,
        projection=projection,
        reference=reference,
        reference_profiles=model.profiles_table([dict(p) for p in REFERENCE_PROFILES]),
        notes=notes,
        link_timing=link_timing(data),
    )


def network_rank(profiles: pd.DataFrame) -> dict[str, tuple]:
    """Sort key per network name for the direction of network pairs: loopback first, then
    by RTT, loss, and a lower rate after a higher one."""
    rank: dict[str, tuple] = {LOOPBACK: (0.0, 0.0, 0.0, "")}
    if profiles is None or profiles.empty:
        return rank
    for _, r in profiles.iterrows():
        rate = r["rate_mbit"]
        inv = 1 / rate if rate == rate and rate else 0.0
        key = tuple(0.0 if v != v else float(v) for v in (r["rtt_ms"], r["loss"], inv))
        rank.setdefault(r["profile"], (*key, r["profile"]))
    return rank


def link_timing(data: StoreData) -> pd.DataFrame:
    """The link timing the runner stored per scenario run (scenario_runs.link_*)."""
    scen = data.scenarios
    if "link_timer_late_us_max" not in scen:
        return pd.DataFrame()
    rows = scen[scen["link_timer_late_us_max"].notna()]
    cols = ["scenario_id", "network", "link_timer_late_us_mean", "link_timer_late_us_max",
            "link_queue_wait_us_max", "link_flagged"]  # fmt: skip
    out = rows[cols].reset_index(drop=True)
    out["link_flagged"] = out["link_flagged"].astype(bool)
    return out


# Where the levers' loopback pairs are projected (served chains, QUIC against TCP): the
# cross-continent reference profile, with an emulated profile's defaults (MTU 1500, initial
# window 10 segments), so every loopback pair is read against one network.
LEVER_PROFILE = REFERENCE_PROFILES[1]
LEVER_MTU = 1500


def round_trips(summary: pd.DataFrame, projection) -> dict[str, dict]:
    """scenario_id -> {predicted, observed, projected_ms, basis}: an emulated scenario's from
    the projection frame (`projection_frame`: the model of its own transport, and the round
    trips its median implies), a loopback scenario's projected at LEVER_PROFILE (TCP segments
    of LEVER_MTU) from its mean latency and bytes."""
    p, mtu = LEVER_PROFILE, LEVER_MTU
    out: dict[str, dict] = {}
    rtt = 2 * p["delay_ms"]
    ok = summary[(summary["status"] == "ok") & (summary["network"] == LOOPBACK)]
    for r in ok.to_dict("records"):
        if not all(math.isfinite(x) for x in (r["mean_ms"], r["bytes_written"], r["bytes_read"])):
            continue
        if r.get("transport") == "quic":
            share = KEY_SHARE_BYTES.get(r["kex"], (math.nan, math.nan))[0]
            if not math.isfinite(share):
                continue
            pred = model.predict_quic_handshake(
                base_ms=r["mean_ms"],
                client_initial_bytes=model.quic_client_initial_bytes(share),
                server_flight_bytes=r["bytes_read"],
                rtt_ms=rtt,
                rate_mbit=p["rate_mbit"],
            )
        else:
            pred = model.predict_handshake(
                base_ms=r["mean_ms"],
                client_flight_bytes=max(r["bytes_written"] - model.CLIENT_FINAL_FLIGHT_BYTES, 0),
                server_flight_bytes=r["bytes_read"],
                rtt_ms=rtt,
                rate_mbit=p["rate_mbit"],
                mss=mtu - TCP_IP_OVERHEAD,
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


@produces("network", empty=lambda: None)
def _analysis_network(a) -> NetworkAnalysis | None:
    return analyze(a.data, a.summary, a.monte_carlo, a.baseline)


@produces("reference_network", empty=lambda: None)
def _analysis_reference_network(a) -> str | None:
    return reference_network(a.summary, a.baseline)


@produces("network_rank", empty=lambda: None)
def _analysis_network_rank(a):
    return network_rank(a.network.profiles) if a.network is not None else None


@produces("projection", empty=lambda: None)
def _analysis_projection(a):
    """The projection model's predictions per scenario (None: every scenario on loopback)."""
    return a.network.projection if a.network is not None else None
