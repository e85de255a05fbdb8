"""Landmark lag: Merkle Tree Certificates for a population whose clients hold landmarks of
different ages (docs/methods/mtc.md#landmark-lag, chainlab.axes.landmark_lag).

A *lag scenario* is a landmark-relative MTC server (`certificate` mtc-landmark with its last
`renewals` landmarks) met by a population whose kinds say which landmarks they hold. For
each: the share of attempts that fell back to the standalone MTC, predicted from the kinds'
shares and measured from the records (what each client verified, `mtc_kind`; Wilson
interval); p50/p99 one at a time and at the [load] fractions, bytes the client read and
server CPU per connection, capacity per server core (chainlab.analysis.rollout's
`per_share`, whose figures these are); each against the X.509 dual chain serving
post-quantum clients on the same server stack and path (the scenario whose population is
all post-quantum capable and which holds a second chain), as ratios with their intervals;
and the rollback rule (p99 over the guide's factor times the all-classical X.509 baseline
of the same stack and path, chainlab.analysis.rollout) per load, with the landmark interval
(entries per landmark, `mtc_batch`) from which it rolls back.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab.analysis.registry import produces
from chainlab.analysis.rollout import crossings, loads, rollback_factor
from chainlab.axes import credential, landmark_lag
from chainlab.stats import proportion_ci, ratio_ci

# What the lag scenarios are compared with: per-connection figures (summary column, label).
_PER_CONNECTION = (
    ("mean_ms", "latency"),
    ("bytes_read", "bytes"),
    ("server_cpu_ms", "server CPU"),
)


def is_lag(r: dict) -> bool:
    """A stored scenario of landmark lag: a landmark-relative MTC and lagging kinds."""
    return r.get("certificate") == credential.LANDMARK and landmark_lag.lagging(
        str(r.get("population", "none"))
    )


def _x509(summary: pd.DataFrame, pq_share: float) -> pd.DataFrame:
    """The X.509 dual-chain scenarios whose population's PQ share is `pq_share`."""
    if "second_chain" not in summary:
        return summary.iloc[0:0]
    s = summary[
        (summary["certificate"] == credential.X509)
        & (summary["second_chain"] != "none")
        & (pd.to_numeric(summary["pq_share"], errors="coerce") == pq_share)
    ]
    return s


def _match(candidates: pd.DataFrame, r: dict) -> dict | None:
    """The candidate on `r`'s server stack and path (the first, by id)."""
    if candidates.empty:
        return None
    m = candidates[
        (candidates["server_stack"] == r["server_stack"]) & (candidates["network"] == r["network"])
    ].sort_values("scenario_id")
    return m.iloc[0].to_dict() if len(m) else None


def fallback(attempts: pd.DataFrame, level: float) -> dict[str, tuple[float, float, float, int]]:
    """Per lag scenario: the measured share of its successful attempts that verified the
    standalone MTC (at once or after the retry), with its Wilson interval, and n."""
    if attempts is None or attempts.empty:
        return {}
    ok = attempts[attempts["outcome"] == "ok"]
    out = {}
    for sid, g in ok.groupby("scenario_id", sort=True):
        k = int((g["mtc_kind"] == "standalone").sum())
        out[str(sid)] = (*proportion_ci(k, len(g), level), len(g))
    return out


def populations(
    summary: pd.DataFrame, shares: pd.DataFrame, attempts: pd.DataFrame, level: float
) -> pd.DataFrame:
    """One row per lag scenario: its server, path, landmark interval and renewals, the
    fallback share predicted and measured, its figures (one at a time, under load, per
    connection, capacity), and each per-connection figure and the p99 against the X.509
    dual chain serving post-quantum clients on the same stack and path."""
    if summary.empty or "population" not in summary:
        return pd.DataFrame()
    lag = [r for r in summary.to_dict("records") if is_lag(r)]
    if not lag:
        return pd.DataFrame()
    by_share = shares.set_index("scenario_id") if len(shares) else pd.DataFrame()
    measured = fallback(attempts, level)
    dual = _x509(summary, 1.0)
    rows = []
    for r in lag:
        sid = r["scenario_id"]
        renewals = int(r["mtc_renewals"]) if str(r.get("mtc_renewals", "1")).isdigit() else 1
        share, lo, hi, n = measured.get(sid, (math.nan, math.nan, math.nan, 0))
        row = {
            "scenario_id": sid,
            "server_stack": r["server_stack"],
            "network": r["network"],
            "mtc_batch": int(r["mtc_batch"]),
            "renewals": renewals,
            "proof_hashes": r.get("mtc_proof_hashes", math.nan),
            "population": r["population"],
            "fallback_predicted": landmark_lag.fallback_share(r["population"], renewals),
            "fallback_measured": share,
            "fallback_measured_lo": lo,
            "fallback_measured_hi": hi,
            "n_ok": n,
        }
        for column, _ in _PER_CONNECTION:
            for end in ("", "_lo", "_hi"):
                row[f"{column}{end}"] = r.get(f"{column}{end}", math.nan)
        for name in [
            f"p{q}_ms_{load}{end}"
            for q in (50, 99)
            for load in loads()
            for end in ("", "_lo", "_hi")
        ] + [  # fmt: skip
            f"{base}{end}"
            for base in ("capacity_per_core", "sustained_per_core")
            for end in ("", "_lo", "_hi")
        ]:
            known = sid in by_share.index and name in by_share.columns
            row[name] = by_share.at[sid, name] if known else math.nan
        x = _match(dual, r)
        row["x509_id"] = x["scenario_id"] if x else None
        for column, _ in _PER_CONNECTION:
            est = (math.nan,) * 3
            if x is not None:
                est = ratio_ci(
                    float(r[column]), _log_se(r, column), float(x[column]), _log_se(x, column),
                    level,
                )  # fmt: skip
            row[f"{column}_vs_x509"], row[f"{column}_vs_x509_lo"], row[f"{column}_vs_x509_hi"] = est
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values(
        ["server_stack", "network", "mtc_batch", "fallback_predicted"]
    ).reset_index(drop=True)


def _log_se(r: dict, column: str) -> float:
    """The standard error of log(mean) of a summary row's `column` (its `_se` column,
    chainlab.analysis.summary)."""
    return float(r.get(f"{column}_se", math.nan))


def rule(lag: pd.DataFrame, shares: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The rollback rule per lag scenario and load: its p99 over the all-classical X.509
    baseline's on the same stack and path, the conservative interval of the ratio (its low
    end over the baseline's high end, and back), and the verdict ('rolls back' above the
    factor, 'holds' below, 'undecided' across it)."""
    if lag.empty:
        return pd.DataFrame()
    factor, _, _ = rollback_factor()
    classical = _x509(summary, 0.0)
    p99 = shares.set_index("scenario_id") if len(shares) else pd.DataFrame()
    rows = []
    for r in lag.to_dict("records"):
        base = _match(classical, r)
        if base is None or base["scenario_id"] not in p99.index:
            continue
        b = p99.loc[base["scenario_id"]]
        for load in loads():
            col = f"p99_ms_{load}"
            if not (np.isfinite(r[col]) and np.isfinite(b[col])):
                continue
            lo, hi = r[f"{col}_lo"] / b[f"{col}_hi"], r[f"{col}_hi"] / b[f"{col}_lo"]
            verdict = "rolls back" if lo > factor else "holds" if hi < factor else "undecided"
            rows.append(
                {
                    "scenario_id": r["scenario_id"],
                    "server_stack": r["server_stack"],
                    "network": r["network"],
                    "mtc_batch": r["mtc_batch"],
                    "population": r["population"],
                    "fallback_predicted": r["fallback_predicted"],
                    "load": load,
                    "p99_ms": r[col],
                    "baseline_id": base["scenario_id"],
                    "baseline_p99_ms": b[col],
                    "ratio": r[col] / b[col],
                    "ratio_lo": lo,
                    "ratio_hi": hi,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(rows)


def crossing(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per server stack, path and load: the smallest landmark interval (entries per
    landmark) at which some population rolls back (`rolls_back_at`), the smallest at which
    one may (`may_roll_back_at`, undecided), and the largest measured (`highest`); NaN where
    none does."""
    return crossings(verdicts, ["server_stack", "network", "load"], "mtc_batch")


@produces("landmark_lag")
def _analysis_landmark_lag(a) -> pd.DataFrame:
    return populations(
        a.summary, a.rollout_shares, a.data.landmark_attempts, a.config.confidence_level
    )


@produces("landmark_lag_rule")
def _analysis_landmark_lag_rule(a) -> pd.DataFrame:
    return rule(a.landmark_lag, a.rollout_shares, a.summary)
