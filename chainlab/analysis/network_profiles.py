"""The network profiles of a store: each as configured (the stored campaign file's
`[network.<name>]` or the run's `network_profiles` row) and as calibrated, with the
deviations and flags the report shows (docs/methods/networks.md#emulated-networks)."""

from __future__ import annotations

import math
import tomllib

import pandas as pd

from chainlab.analysis.load import StoreData, parse_json
from chainlab.errors import ChainlabError
from chainlab.network.calibrate import TOLERANCE
from chainlab.network.profile import LOOPBACK, parse_profile

# The link columns of a profile row (as chainlab.network.model.profiles_table names them).
PROFILE_FIELDS = ("rtt_ms", "rate_mbit", "loss", "jitter_ms", "mtu", "mss", "initcwnd")


def _parse(spec: dict, where: str):
    try:
        return parse_profile(spec)
    except ChainlabError as err:
        raise ChainlabError(f"{where}: {err}") from None


def _campaign_profiles(data: StoreData) -> dict[str, dict]:
    """[network.<name>] tables of the latest run's campaign file (a fallback for a profile
    with no calibration row)."""
    text = data.runs.iloc[-1]["campaign_toml"]
    try:
        doc = tomllib.loads(text) if isinstance(text, str) else {}
    except tomllib.TOMLDecodeError:
        return {}
    nets = doc.get("network", {})
    return {k: dict(v) for k, v in nets.items() if isinstance(v, dict)}


def profile_rows(data: StoreData) -> dict[tuple[str, str | None], dict]:
    """(profile, run_id) -> {'configured', 'measured', 'flagged', 'source'} for every
    profile name used by an emulated scenario, from `network_profiles` (the scenario's own
    run's row, else the latest row of that name) or the campaign file."""
    stored = data.network_profiles
    run_order = {r: i for i, r in enumerate(data.runs["run_id"])}
    campaign = _campaign_profiles(data)
    out: dict[tuple[str, str | None], dict] = {}
    scen = data.scenarios
    for (net, run_id), _g in scen[scen["network"] != LOOPBACK].groupby(["network", "run_id"]):
        rows = stored[stored["profile"] == net] if len(stored) else stored
        own = rows[rows["run_id"] == run_id] if len(rows) else rows
        if len(own):
            r = own.iloc[0]
            source = "calibrated in this run"
        elif len(rows):
            r = rows.assign(_o=rows["run_id"].map(run_order).fillna(-1)).sort_values("_o").iloc[-1]
            source = f"calibrated in run {r['run_id']}"
        else:
            r = None
        if r is not None:
            flagged = r["flagged"]
            out[(net, run_id)] = {
                "configured": parse_json(r["configured"]),
                "measured": parse_json(r["measured"]) or None,
                "flagged": None if pd.isna(flagged) else bool(flagged),
                "source": source if parse_json(r["measured"]) else "stored, not calibrated",
                "calibration_run": r["run_id"],
            }
        elif net in campaign:
            out[(net, run_id)] = {
                "configured": campaign[net],
                "measured": None,
                "flagged": None,
                "source": "campaign file (no calibration stored)",
                "calibration_run": None,
            }
        else:
            out[(net, run_id)] = {
                "configured": None,
                "measured": None,
                "flagged": None,
                "source": "not recorded",
                "calibration_run": None,
            }
    return out


def num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def tristate(df: pd.DataFrame, *cols: str) -> None:
    """Keep yes / no / unknown columns as Python True / False / None (object dtype), so
    `is True` tests hold whether or not a column happens to have no unknowns."""
    for c in cols:
        df[c] = pd.Series(
            [None if v is None or v != v else bool(v) for v in df[c]], index=df.index, dtype=object
        )


def _rel(measured: float, configured: float) -> float:
    return measured / configured - 1 if configured and configured > 0 else math.nan


def profiles_frame(data: StoreData) -> pd.DataFrame:
    """One row per (profile, run) used: configured, measured, deviations, the stored flag."""
    rows = []
    where = f"store {data.path}"
    counts = data.scenarios[data.scenarios["network"] != LOOPBACK].groupby(["network", "run_id"])
    n_scen = counts.size().to_dict()
    for (net, run_id), info in profile_rows(data).items():
        row = {"profile": net, "run_id": run_id, "source": info["source"]}
        row["calibration_run_id"] = info["calibration_run"]
        row["n_scenarios"] = int(n_scen.get((net, run_id), 0))
        cfg = info["configured"]
        if cfg is None:
            row.update({k: math.nan for k in (*PROFILE_FIELDS, "delay_ms", "window_bytes")})
            row.update(queue_packets=math.nan, backend=None)
        else:
            spec = {k: v for k, v in cfg.items() if k not in ("run_id", "profile")}
            spec["name"] = net
            p = _parse(spec, f"{where}: network profile {net!r} (run {run_id})")
            row.update(
                rtt_ms=p.rtt_ms,
                delay_ms=p.delay_ms,
                jitter_ms=p.jitter_ms,
                rate_mbit=p.rate_mbit if p.rate_mbit is not None else math.nan,
                loss=p.loss,
                mtu=p.mtu,
                mss=p.mss,
                initcwnd=p.initcwnd,
                window_bytes=p.mss * p.initcwnd,
                queue_packets=p.queue_limit if p.queue_limit is not None else math.nan,
                backend=p.backend,
            )
        m = info["measured"] or {}
        row.update(
            measured_rtt_ms=num(m.get("rtt_ms")),
            measured_rtt_min_ms=num(m.get("rtt_ms_min")),
            measured_rtt_max_ms=num(m.get("rtt_ms_max")),
            rtt_samples=num(m.get("rtt_samples")),
            expected_rtt_ms=num(m.get("expected_rtt_ms")),
            measured_rate_mbit=num(m.get("rate_mbit")),
            tcp_rate_mbit=num(m.get("tcp_rate_mbit")),
            measured_loss=num(m.get("loss")),
            loss_probes=num(m.get("loss_probes")),
            tcp_mss=num(m.get("tcp_mss")),
        )
        row["rtt_deviation"] = _rel(row["measured_rtt_ms"], row.get("rtt_ms", math.nan))
        row["rate_deviation"] = _rel(row["measured_rate_mbit"], row.get("rate_mbit", math.nan))
        row["flagged"] = info["flagged"]
        cal_flag = m.get("flagged")
        row["calibration_flagged"] = None if cal_flag is None else bool(cal_flag)
        reasons = m.get("flag_reasons") or []
        row["calibration_reasons"] = "; ".join(str(x) for x in reasons)
        row["mss_confirmed"] = (
            None
            if math.isnan(row["tcp_mss"]) or math.isnan(num(row.get("mss")))
            else bool(row["tcp_mss"] == row["mss"])
        )
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    tristate(df, "flagged", "calibration_flagged", "mss_confirmed")
    # The stored flag and the calibration's own verdict disagree (a run that judged the flag
    # itself, against the configured RTT and rate alone).
    df["flag_differs"] = (
        df["flagged"].notna()
        & df["calibration_flagged"].notna()
        & (df["flagged"] != df["calibration_flagged"])
    )
    # Accepted although the RTT is more than TOLERANCE off: within the calibration's
    # absolute slack (calibrate.RTT_FLOOR_MS), below which a small RTT cannot be resolved.
    df["accepted_within_slack"] = (df["flagged"] == False) & (  # noqa: E712 (None: no flag)
        df["rtt_deviation"].abs() > TOLERANCE
    )
    return df.sort_values(["rtt_ms", "loss", "profile", "run_id"], na_position="last").reset_index(
        drop=True
    )
