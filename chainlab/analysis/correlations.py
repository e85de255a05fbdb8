"""Transport versus cryptography (the paper's §7.2, Tables 8-9).

Correlations are computed over scenarios (one point per successful scenario: its mean
latency against its mean bytes read or mean observed chain DER bytes), for all scenarios and
for the heavy-leaf / not-heavy-leaf subsets. Pearson's r gets a Fisher z interval, Spearman's
rho a Fisher z interval with the Bonett-Wright standard error
(docs/methods/statistics.md#correlations).

A counterexample to a wire-size-only explanation is an ordered pair of scenarios where the
first reads more bytes (or is sent a larger chain) yet is faster, with the latency ratio's
interval excluding 1.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.registry import produces
from chainlab.campaign.analysis_settings import AnalysisConfig
from chainlab.stats import pearson_ci, spearman_ci, z_value

TRANSPORT_METRICS = {"bytes_read": "bytes read (mean)", "chain_bytes": "observed chain DER bytes"}


def subsets(summary: pd.DataFrame, heavy: str) -> dict[str, tuple[str, pd.DataFrame]]:
    """key -> (display name, successful scenarios of that subset)."""
    ok = summary[summary["status"] == "ok"]
    h = fam.FAMILY_DISPLAY.get(heavy, heavy)
    leaf = ok["placement_class"] == "leaf"
    return {
        "all": ("all scenarios", ok),
        "not_heavy_leaf": (f"leaf not {h}", ok[~leaf]),
        "heavy_leaf": (f"{h} leaf only", ok[leaf]),
    }


def correlations(summary: pd.DataFrame, cfg: AnalysisConfig) -> pd.DataFrame:
    rows = []
    level = cfg.confidence_level
    for key, (name, df) in subsets(summary, cfg.heavy_family).items():
        for metric, label in TRANSPORT_METRICS.items():
            d = df[["mean_ms", metric]].dropna()
            r, rlo, rhi = pearson_ci(d[metric], d["mean_ms"], level)
            rho, slo, shi = spearman_ci(d[metric], d["mean_ms"], level)
            note = ""
            if len(d) < 3:
                note = "needs at least 3 scenarios"
            elif len(d) < 4:
                note = "interval needs at least 4 scenarios"
            elif math.isnan(r):
                note = "a variable is constant across these scenarios"
            rows.append(
                {
                    "subset_key": key,
                    "subset": name,
                    "n_scenarios": len(d),
                    "metric": metric,
                    "metric_label": label,
                    "pearson_r": r,
                    "pearson_r_lo": rlo,
                    "pearson_r_hi": rhi,
                    "spearman_rho": rho,
                    "spearman_rho_lo": slo,
                    "spearman_rho_hi": shi,
                    "note": note,
                }
            )
    return pd.DataFrame(rows)


def counterexamples(summary: pd.DataFrame, cfg: AnalysisConfig) -> pd.DataFrame:
    """All 'more bytes, lower latency' pairs, strongest first (largest byte difference,
    then largest latency ratio), ranked per metric. Vectorised over all ordered pairs."""
    ok = summary[summary["status"] == "ok"].reset_index(drop=True)
    z = z_value(cfg.confidence_level)
    lat = ok["mean_ms"].to_numpy(dtype=float)
    se = ok["mean_ms_se"].to_numpy(dtype=float)
    ids = ok["scenario_id"].to_numpy()
    cls = ok["placement_class"].to_numpy()
    frames = []
    for metric in TRANSPORT_METRICS:
        m = ok[metric].to_numpy(dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            more = (m[:, None] - m[None, :]) >= 1
            faster = lat[:, None] < lat[None, :]
            ratio = lat[None, :] / lat[:, None]
            se_r = np.sqrt(se[:, None] ** 2 + se[None, :] ** 2)
            lo = ratio * np.exp(-z * se_r)
            hi = ratio * np.exp(z * se_r)
        ia, ib = np.nonzero(more & faster & (lo > 1))
        df = pd.DataFrame(
            {
                "metric": metric,
                "more_bytes_lower_latency": ids[ia],
                "less_bytes_higher_latency": ids[ib],
                "more_bytes_class": cls[ia],
                "less_bytes_class": cls[ib],
                "more_bytes": m[ia],
                "less_bytes": m[ib],
                "bytes_diff": m[ia] - m[ib],
                "lower_latency_ms": lat[ia],
                "higher_latency_ms": lat[ib],
                "latency_ratio": ratio[ia, ib],
                "latency_ratio_lo": lo[ia, ib],
                "latency_ratio_hi": hi[ia, ib],
            }
        )
        df = df.sort_values(
            [
                "bytes_diff",
                "latency_ratio",
                "more_bytes_lower_latency",
                "less_bytes_higher_latency",
            ],
            ascending=[False, False, True, True],
        )
        df.insert(0, "rank", np.arange(1, len(df) + 1))
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@produces("correlations")
def _analysis_correlations(a) -> pd.DataFrame:
    return correlations(a.reference_summary(), a.config)


@produces("counterexamples")
def _analysis_counterexamples(a) -> pd.DataFrame:
    return counterexamples(a.reference_summary(), a.config)
