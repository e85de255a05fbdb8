"""Comparison with the paper (arXiv 2604.06100, CC BY 4.0): its published values, kept in
chainlab/data/paper_table*.csv, side by side with this store's, never hiding a difference.

A paper scenario (Table 1) matches a chainlab scenario when their ids are equal ignoring
case and repeated underscores, or else when they have the same structure: key-exchange
group, depth and algorithm family per position, full handshakes without certificate
compression. Among several structural matches the one with the paper's parameter sets
(ML-DSA-65, SLH-DSA-SHAKE-192s) and the paper's observed chain length (2) is shown and the
others are named.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.registry import produces

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SOURCE = (
    'J. L. Delgado, "Signature Placement in Post-Quantum TLS Certificate Hierarchies", '
    "arXiv 2604.06100, CC BY 4.0"
)
PAPER_ALGORITHMS: dict[str | None, str] = {"ml-dsa": "ML-DSA-65", "slh-dsa": "SLH-DSA-SHAKE-192s"}
PAPER_CHAIN_LEN = 2


def paper_table(number: int) -> pd.DataFrame:
    """The paper's Table `number` as shipped in chainlab/data (comments stripped)."""
    return pd.read_csv(DATA_DIR / f"paper_table{number}.csv", comment="#")


def norm_id(s: str) -> str:
    return re.sub(r"_+", "_", str(s).strip().lower())


def _nz(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def match_table1(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per paper Table 1 scenario: the chainlab scenario shown against it."""
    t1 = paper_table(1)
    by_norm = {norm_id(s): s for s in summary["scenario_id"]} if len(summary) else {}
    rows = []
    for _, p in t1.iterrows():
        sid = by_norm.get(norm_id(p["paper_scenario_id"]))
        how, note = ("id", "") if sid else (None, "")
        if sid is None:
            cands = []
            for _, r in summary.iterrows():
                if str(r["kex"]).upper() != str(p["kex_group"]).upper():
                    continue
                if int(r["depth"]) != int(p["depth"]):
                    continue
                if r["handshake_mode"] != "full" or r["cert_compression"] != "none":
                    continue
                pos = fam.positions(r)
                want = {
                    "root": _nz(p["root_family"]),
                    "int1": _nz(p["int_family"]),
                    "leaf": _nz(p["leaf_family"]),
                }
                if any(fam.family(pos[k]) != v for k, v in want.items()):
                    continue
                exact = all(
                    pos[k] is None or pos[k] == PAPER_ALGORITHMS.get(fam.family(pos[k]))
                    for k in ("root", "int1", "leaf")
                )
                chain_ok = r.get("chain_len") == PAPER_CHAIN_LEN
                cands.append(
                    (not exact, not chain_ok, r["network"] != "loopback", r["scenario_id"], exact)
                )
            cands.sort()
            if cands:
                sid = cands[0][3]
                how = "structure" if cands[0][4] else "structure (other parameter sets)"
                if len(cands) > 1:
                    note = "also matches: " + ", ".join(c[3] for c in cands[1:])
        rows.append(
            {
                "paper_scenario_id": p["paper_scenario_id"],
                "chainlab_scenario_id": sid or "",
                "match": how or "not in this store",
                "note": note,
            }
        )
    return pd.DataFrame(rows)


def _diff_pct(ours, theirs):
    if not (isinstance(ours, int | float) and theirs) or math.isnan(ours):
        return math.nan
    return (ours - theirs) / theirs * 100


def _inside(value, lo, hi):
    if any(not isinstance(v, int | float) or math.isnan(v) for v in (value, lo, hi)):
        return None
    return bool(lo <= value <= hi)


def compare_scenarios(
    summary: pd.DataFrame, mult: pd.DataFrame, baseline: str | None, matches: pd.DataFrame
) -> pd.DataFrame:
    """Paper Table 1 (+ Table 10's client CPU) against the matched chainlab scenarios."""
    t1 = paper_table(1)
    t10 = paper_table(10)
    t10 = t10.assign(_n=t10["paper_scenario_id"].map(norm_id)).set_index("_n")
    idx = summary.set_index("scenario_id") if len(summary) else pd.DataFrame()
    m_idx = mult.set_index("scenario_id") if len(mult) else pd.DataFrame()
    # The paper's own baseline: the Table 1 row matched to chainlab's baseline.
    paper_base = math.nan
    if baseline is not None:
        hits = matches[matches["chainlab_scenario_id"] == baseline]
        if len(hits):
            exact = hits[hits["paper_scenario_id"].map(norm_id) == norm_id(baseline)]
            pick = (exact if len(exact) else hits).iloc[0]["paper_scenario_id"]
            paper_base = float(t1.set_index("paper_scenario_id").at[pick, "mean_ms"])
    rows = []
    for (_, p), (_, m) in zip(t1.iterrows(), matches.iterrows(), strict=True):
        sid = m["chainlab_scenario_id"]
        n10 = norm_id(p["paper_scenario_id"])
        paper_client = float(t10.at[n10, "client_task_ms"]) if n10 in t10.index else math.nan
        row = {
            "paper_scenario_id": p["paper_scenario_id"],
            "chainlab_scenario_id": sid or "",
            "match": m["match"],
            "status": "",
            "n_ok": math.nan,
            "paper_mean_ms": p["mean_ms"],
            "paper_p95_ms": p["p95_ms"],
            "paper_bytes_read": p["bytes_read"],
            "paper_server_cpu_ms": p["server_task_ms"],
            "paper_client_cpu_ms": paper_client,
            "paper_srv_cli_ratio": p["srv_cli_ratio"],
            "paper_latency_x": p["mean_ms"] / paper_base if paper_base == paper_base else math.nan,
            "note": m["note"],
        }
        cols = {
            "mean_ms": "paper_mean_ms",
            "p95_ms": "paper_p95_ms",
            "bytes_read": "paper_bytes_read",
            "server_cpu_ms": "paper_server_cpu_ms",
            "client_cpu_ms": "paper_client_cpu_ms",
            "srv_cli_ratio": "paper_srv_cli_ratio",
        }
        s = idx.loc[sid] if sid else None
        row["status"] = s["status"] if s is not None else "not in this store"
        row["n_ok"] = s["n_ok"] if s is not None else math.nan
        if s is not None and s["chain_len"] == s["chain_len"] and s["chain_len"] != 2:
            # the paper's client always observed 2 certificates (its Appendix B.1)
            seen = f"chainlab's client observed {int(s['chain_len'])} certificate(s), the paper's 2"
            row["note"] = f"{row['note']}; {seen}" if row["note"] else seen
        for ours, theirs in cols.items():
            v = float(s[ours]) if s is not None else math.nan
            lo = float(s[f"{ours}_lo"]) if s is not None else math.nan
            hi = float(s[f"{ours}_hi"]) if s is not None else math.nan
            row[ours], row[f"{ours}_lo"], row[f"{ours}_hi"] = v, lo, hi
            row[f"{ours}_diff_pct"] = _diff_pct(v, row[theirs])
            row[f"{ours}_paper_inside_ci"] = _inside(row[theirs], lo, hi)
        if sid and len(m_idx) and sid in m_idx.index:
            row["latency_x"] = m_idx.at[sid, "latency_x"]
            row["latency_x_lo"] = m_idx.at[sid, "latency_x_lo"]
            row["latency_x_hi"] = m_idx.at[sid, "latency_x_hi"]
        else:
            row["latency_x"] = row["latency_x_lo"] = row["latency_x_hi"] = math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def compare_classes(table7: pd.DataFrame, heavy: str) -> pd.DataFrame:
    """Paper Table 7 against chainlab's Table 7 grouping (only meaningful for SLH-DSA)."""
    if heavy != "slh-dsa":
        return pd.DataFrame()
    p7 = paper_table(7)
    ours = table7.set_index("class") if len(table7) else pd.DataFrame()
    rows = []
    pairs = {
        "n_scenarios": "n_scenarios",
        "mean_elapsed_ms": "mean_ms",
        "median_elapsed_ms": "median_ms",
        "mean_latency_vs_baseline": "mean_latency_x",
        "median_latency_vs_baseline": "median_latency_x",
        "mean_bytes_vs_baseline": "mean_bytes_x",
        "mean_server_cpu_vs_baseline": "mean_server_cpu_x",
        "mean_server_over_elapsed": "mean_server_over_elapsed",
        "mean_client_over_elapsed": "mean_client_over_elapsed",
    }
    for _, p in p7.iterrows():
        g = p["group"]
        row = {"paper_class": p["placement_class"], "class": g}
        have = len(ours) and g in ours.index
        for theirs, mine in pairs.items():
            row[f"paper_{mine}"] = p[theirs]
            row[mine] = ours.at[g, mine] if have else math.nan
            if mine != "n_scenarios":
                row[f"{mine}_lo"] = ours.at[g, f"{mine}_lo"] if have else math.nan
                row[f"{mine}_hi"] = ours.at[g, f"{mine}_hi"] if have else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def compare_correlations(corr: pd.DataFrame, heavy: str) -> pd.DataFrame:
    if heavy != "slh-dsa" or corr.empty:
        return pd.DataFrame()
    p8 = paper_table(8)
    ours = corr.set_index(["subset_key", "metric"])
    rows = []
    for _, p in p8.iterrows():
        key = (p["subset_key"], p["metric_key"])
        o = ours.loc[key] if key in ours.index else None
        row = {
            "subset": p["subset"],
            "metric": p["metric"],
            "paper_n": p["n_scenarios"],
            "n_scenarios": o["n_scenarios"] if o is not None else 0,
            "paper_pearson_r": p["pearson_r"],
            "paper_spearman_rho": p["spearman_rho"],
        }
        for c in ("pearson_r", "spearman_rho"):
            for suffix in ("", "_lo", "_hi"):
                row[c + suffix] = o[c + suffix] if o is not None else math.nan
            row[f"{c}_paper_inside_ci"] = _inside(p[c], row[f"{c}_lo"], row[f"{c}_hi"])
        rows.append(row)
    return pd.DataFrame(rows)


def _chainlab_id(paper_id: str, matches: pd.DataFrame) -> str | None:
    n = norm_id(paper_id)
    hit = matches[matches["paper_scenario_id"].map(norm_id) == n]
    if hit.empty:
        return None
    sid = hit.iloc[0]["chainlab_scenario_id"]
    return sid if isinstance(sid, str) and sid else None


def _pair_row(pairs: pd.DataFrame, a: str | None, b: str | None):
    if pairs.empty or a is None or b is None:
        return None
    hit = pairs[(pairs["from_id"] == a) & (pairs["to_id"] == b)]
    if len(hit):
        return hit.iloc[0], 1
    hit = pairs[(pairs["from_id"] == b) & (pairs["to_id"] == a)]
    if len(hit):
        return hit.iloc[0], -1
    return None


def _ratio(row, name, direction):
    v, lo, hi = row[name], row[f"{name}_lo"], row[f"{name}_hi"]
    if direction == 1:
        return v, lo, hi
    return 1 / v, 1 / hi, 1 / lo


def compare_depth(pairs: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 5 against chainlab's depth pairs between the matched scenarios."""
    rows = []
    for _, p in paper_table(5).iterrows():
        a = _chainlab_id(p["depth2_scenario_id"], matches)
        b = _chainlab_id(p["depth3_scenario_id"], matches)
        hit = _pair_row(pairs, a, b)
        row = {
            "pair_label": p["pair_label"],
            "depth2_scenario_id": a or "not in this store",
            "depth3_scenario_id": b or "not in this store",
            "paper_latency_ratio": p["latency_ratio"],
            "paper_delta_mean_ms": p["delta_mean_ms"],
            "paper_delta_bytes_read": p["delta_bytes_read"],
            "paper_server_cpu_ratio": p["server_task_ratio"],
        }
        if hit is not None:
            r, d = hit
            row["latency_ratio"], row["latency_ratio_lo"], row["latency_ratio_hi"] = _ratio(
                r, "latency_ratio", d
            )
            row["delta_mean_ms"] = d * r["delta_mean_ms"]
            row["delta_bytes_read"] = d * r["delta_bytes_read"]
            (row["server_cpu_ratio"], row["server_cpu_ratio_lo"], row["server_cpu_ratio_hi"]) = (
                _ratio(r, "server_cpu_ratio", d)
            )
        else:
            for c in ("latency_ratio", "server_cpu_ratio"):
                row[c] = row[f"{c}_lo"] = row[f"{c}_hi"] = math.nan
            row["delta_mean_ms"] = row["delta_bytes_read"] = math.nan
        row["latency_ratio_paper_inside_ci"] = _inside(
            row["paper_latency_ratio"], row["latency_ratio_lo"], row["latency_ratio_hi"]
        )
        rows.append(row)
    return pd.DataFrame(rows)


def compare_kex(pairs: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 6 against chainlab's key-exchange pairs between the matched scenarios."""
    rows = []
    for _, p in paper_table(6).iterrows():
        a = _chainlab_id(p["from_scenario_id"], matches)
        b = _chainlab_id(p["to_scenario_id"], matches)
        hit = _pair_row(pairs, a, b)
        row = {
            "comparison_type": p["comparison_type"],
            "family_label": p["family_label"],
            "from_id": a or "not in this store",
            "to_id": b or "not in this store",
            "paper_latency_ratio": p["latency_ratio"],
            "paper_bytes_read_ratio": p["bytes_read_ratio"],
            "paper_server_cpu_ratio": p["server_task_ratio"],
        }
        for c in ("latency_ratio", "bytes_read_ratio", "server_cpu_ratio"):
            if hit is not None:
                row[c], row[f"{c}_lo"], row[f"{c}_hi"] = _ratio(hit[0], c, hit[1])
            else:
                row[c] = row[f"{c}_lo"] = row[f"{c}_hi"] = math.nan
        row["latency_ratio_paper_inside_ci"] = _inside(
            row["paper_latency_ratio"], row["latency_ratio_lo"], row["latency_ratio_hi"]
        )
        rows.append(row)
    return pd.DataFrame(rows)


@produces("paper_matches")
def _analysis_paper_matches(a) -> pd.DataFrame:
    return match_table1(a.reference_summary())


@produces("paper_scenarios")
def _analysis_paper_scenarios(a) -> pd.DataFrame:
    return compare_scenarios(a.reference_summary(), a.multipliers, a.baseline, a.paper_matches)


@produces("paper_classes")
def _analysis_paper_classes(a) -> pd.DataFrame:
    return compare_classes(a.table7, a.config.heavy_family)


@produces("paper_correlations")
def _analysis_paper_correlations(a) -> pd.DataFrame:
    return compare_correlations(a.correlations, a.config.heavy_family)


@produces("paper_depth")
def _analysis_paper_depth(a) -> pd.DataFrame:
    return compare_depth(a.pairs, a.paper_matches)


@produces("paper_kex")
def _analysis_paper_kex(a) -> pd.DataFrame:
    return compare_kex(a.pairs, a.paper_matches)
