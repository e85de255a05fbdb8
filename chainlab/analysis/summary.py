"""Per-scenario summary: latency, transport, chain, CPU, each with its interval.

Columns follow one convention: `<metric>` is the estimate, `<metric>_lo` / `<metric>_hi` its
interval at the configured level, and `<metric>_se` (for means and ratios of means) the
standard error of log(<metric>), which `compare`, `capacity` and the Monte-Carlo class
statistics combine. Times are milliseconds, sizes bytes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chainlab import axes
from chainlab.analysis import families as fam
from chainlab.analysis.load import StoreData, parse_json
from chainlab.analysis.registry import empty_summary, produces
from chainlab.axes.stack import label as stack_label
from chainlab.network.profile import LOOPBACK
from chainlab.stats import (
    log_interval,
    mean_ci_from_moments,
    quantile_ci,
    ratio_ci,
    ratio_log_se,
    se_mean,
)

# The share of end-to-end latency the server must spend on CPU, in addition to a
# server/client CPU ratio at or above cpu_regimes.server_bound, to call a scenario
# 'overwhelmingly server-bound' (the paper's leaf-SLH scenarios sit at 0.997-0.999).
SERVER_BOUND_ELAPSED_SHARE = 0.9

# Means carried with intervals: output name -> (SQL mean, SQL variance, SQL count, scale)
MEANS = {
    "mean_ms": ("total_mean", "total_var", "n_ok", 1e-6),
    "connect_ms": ("connect_mean", "connect_var", "connect_n", 1e-6),
    "tls_ms": ("handshake_mean", "handshake_var", "handshake_n", 1e-6),
    "bytes_read": ("bytes_read_mean", "bytes_read_var", "bytes_read_n", 1.0),
    "bytes_written": ("bytes_written_mean", "bytes_written_var", "bytes_written_n", 1.0),
    "chain_bytes": ("chain_bytes_mean", "chain_bytes_var", "chain_bytes_n", 1.0),
    "server_cpu_ms": ("server_cpu_mean", "server_cpu_var", "cpu_n", 1e-6),
    # The server's whole connection (accept to close), NaN in version-1 stores.
    "server_conn_cpu_ms": ("server_conn_cpu_mean", "server_conn_cpu_var", "conn_cpu_n", 1e-6),
    "client_cpu_ms": ("client_cpu_mean", "client_cpu_var", "cpu_n", 1e-6),
    "server_tls_ms": ("server_handshake_mean", "server_handshake_var", "server_handshake_n", 1e-6),
    # Instructions per handshake (callgrind, or the hardware counter: `instr_source`).
    "server_instr": ("server_instr_mean", "server_instr_var", "instr_n", 1.0),
    "client_instr": ("client_instr_mean", "client_instr_var", "instr_n", 1.0),
}

QUANTILES = {"median_ms": 0.5, "p95_ms": 0.95, "p99_ms": 0.99}


def _cv(mean, var) -> float:
    m, v = _num(mean), _num(var)
    return math.sqrt(v) / m if m > 0 and v >= 0 else math.nan


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def log_se(mean: float, var: float, n: float) -> float:
    """Standard error of log(mean): √(var/n)/mean (delta method); NaN when undefined."""
    mean, var, n = _num(mean), _num(var), _num(n)
    if not (n >= 2 and mean > 0 and math.isfinite(var)):
        return math.nan
    return se_mean(var, int(n)) / mean


def paired_ratio(mx, vx, my, vy, cxy, n) -> tuple[float, float]:
    """mean_x / mean_y over the same n observations and the log-scale delta standard error
    √((vx/mx² + vy/my² - 2·cxy/(mx·my))/n) (Casella & Berger §5.5.4)."""
    mx, vx, my, vy, cxy, n = map(_num, (mx, vx, my, vy, cxy, n))
    n = int(n) if math.isfinite(n) else 0
    return ratio_log_se(mx, vx, n, my, vy, n, cxy)


def host_label(host) -> str:
    """Where a scenario ran, short: the worker's address on a cluster (server → client when
    split), else the host's name; '' in stores before version 4."""
    if not isinstance(host, str):
        return ""
    h = parse_json(host)

    def one(x: dict) -> str:
        return x.get("worker") or x.get("hostname") or ""

    if h.get("placement") == "split":
        return f"{one(h.get('server') or {})} → {one(h.get('client') or {})}"
    return one(h)


# What makes two hosts measure alike (scenario_runs.host): scenarios on hosts that differ
# in these ran on different machine types.
MACHINE_TYPE = ("cpu_model", "cores", "kernel", "arch")


def machine_type(host) -> str:
    """The machine type a scenario ran on (both sides' when split); '' when unknown."""
    if not isinstance(host, str):
        return ""
    h = parse_json(host)

    def one(x: dict) -> str:
        return ", ".join(str(x.get(k)) for k in MACHINE_TYPE)

    if h.get("placement") == "split":
        return f"server {one(h.get('server') or {})}; client {one(h.get('client') or {})}"
    return one(h)


def cpu_regime(ratio: float, server_share: float, bands: dict) -> str:
    """Client/server regime from the server/client CPU ratio (thresholds in config)."""
    if not math.isfinite(ratio):
        return "n/a"
    if ratio < bands["balanced_low"]:
        return "client-skewed"
    if ratio <= bands["balanced_high"]:
        return "balanced"
    if ratio >= bands["server_bound"] and server_share >= SERVER_BOUND_ELAPSED_SHARE:
        return "overwhelmingly server-bound"
    return "server-skewed"


def instr_server_share(row: dict, network: str) -> float:
    """The server's share of a handshake's elapsed time for the instruction regime. On
    loopback a handshake's time is its two sides' work in turn, so the share is the server's
    part of both sides' instructions (host-independent, as the counts are); over an emulated
    link the link's delay is time no instruction counts, so the wall-clock share stays."""
    if network != LOOPBACK:
        return row["server_over_elapsed"]
    srv, cli = row["server_instr"], row["client_instr"]
    return srv / (srv + cli) if srv + cli > 0 else math.nan


def scenario_summary(data: StoreData) -> pd.DataFrame:
    """One row per executed scenario (failed ones included, with NaN statistics)."""
    cfg = data.config
    level = cfg.confidence_level
    heavy = cfg.heavy_family
    scen = data.scenarios
    labels = fam.scenario_labels(scen) if len(scen) else {}
    rows = []
    for _, r in scen.iterrows():
        sid = r["scenario_id"]
        failed = bool(r["failed"])
        out = {
            "scenario_id": sid,
            "label": " · ".join(labels[sid]),
            "label_chain": labels[sid][0],
            "label_kex": labels[sid][1],
            "kex": r["kex"],
            "kex_family": r["kex_family"],
            "depth": int(r["depth"]),
            "hierarchy": fam.hierarchy_label(r),
            "root_alg": r["root_alg"],
            "int1_alg": r["int1_alg"],
            "int2_alg": r["int2_alg"],
            "leaf_alg": r["leaf_alg"],
            # Every lever's columns (chainlab.axes), as the store has them.
            **{c: r[c] for c in axes.lever_columns()},
            "stack": stack_label(r["client_stack"], r["server_stack"]),
            "network": r["network"],
            "host": host_label(r.get("host")),
            "machine": machine_type(r.get("host")),
            "placement_class": fam.placement_class(r, heavy),
            "heavy_positions": "+".join(fam.heavy_positions(r, heavy)) or "none",
            "table7_groups": ",".join(fam.table7_groups(r, heavy)),
            "status": "failed" if failed else "ok",
            "failure": r["failure_note"] if failed else None,
            "run_id": r["run_id"],
            "n_measured": int(r["n_measured"]),
            "n_ok": int(r["n_ok"]),
            "n_failed": int(r["n_failed_samples"]),
            "n_warmup": int(_num(r.get("sr_n_warmup")) if pd.notna(r.get("sr_n_warmup")) else 0),
            "stop_reason": r.get("stop_reason"),
            "runner_ci_rel_halfwidth": _num(r.get("ci_rel_halfwidth")),
            "served_chain_der_bytes": _num(r.get("served_chain_der_bytes")),
            "served_chain_len": _num(r.get("served_chain_len")),
            "chain_len": _num(r.get("chain_len_mode")),
            "chain_len_varies": bool(
                _num(r.get("chain_len_min")) != _num(r.get("chain_len_max"))
                and math.isfinite(_num(r.get("chain_len_min")))
            ),
            "negotiated_group": r.get("negotiated_group"),
            "negotiated_sigalg": r.get("negotiated_sigalg"),
            "n_server_missing": int(r["n_server_missing"]),
            # Measured handshakes that resumed (ok ones with CPU on both sides).
            "n_resumed": int(_num(r.get("n_resumed")) if pd.notna(r.get("n_resumed")) else 0),
            "cpu_n": int(_num(r.get("cpu_n")) if pd.notna(r.get("cpu_n")) else 0),
            # The server's ready line on certificate compression (NaN: none, or an older store).
            "cert_message_bytes": _num(r.get("cert_message_bytes")),
            "cert_compressed_bytes": _num(r.get("cert_compressed_bytes")),
            "cert_compression_installed": bool(r.get("cert_compression_installed") is True),
            # QUIC: mean datagrams each way over the handshake, and the datagrams the client
            # sent before the server's flight was complete (NaN over TCP).
            "datagrams_read": _num(r.get("datagrams_read_mean")),
            "datagrams_written": _num(r.get("datagrams_written_mean")),
            "flight_datagrams": _num(r.get("flight_datagrams_mean")),
            "flight_datagrams_min": _num(r.get("flight_datagrams_min")),
            "flight_datagrams_max": _num(r.get("flight_datagrams_max")),
            # Merkle Tree Certificates: how the client accepted them (landmark | standalone),
            # mean proof hashes and signatures verified (NaN, None for X.509).
            "mtc_kind": r.get("mtc_kind") if isinstance(r.get("mtc_kind"), str) else None,
            "mtc_proof_hashes": _num(r.get("mtc_proof_hashes_mean")),
            "mtc_signatures_checked": _num(r.get("mtc_signatures_checked_mean")),
            # Mean user-mode instructions per handshake (NaN: no hardware counter).
            "client_instructions": _num(r.get("client_instructions_mean")),
            "server_instructions": _num(r.get("server_instructions_mean")),
            # Where server_instr / client_instr come from, and their spread per handshake
            # (coefficient of variation: ~0 for deterministic code paths, ML-DSA signing's
            # rejection sampling moves the server's).
            "instr_source": r.get("instr_source") if isinstance(r.get("instr_source"), str) else "",
            "instr_n": _num(r.get("instr_n")),
            "server_instr_cv": _cv(r.get("server_instr_mean"), r.get("server_instr_var")),
            "client_instr_cv": _cv(r.get("client_instr_mean"), r.get("client_instr_var")),
        }
        for name, (m, v, n, scale) in MEANS.items():
            if failed:
                out[name] = out[f"{name}_lo"] = out[f"{name}_hi"] = out[f"{name}_se"] = math.nan
                continue
            mean = _num(r.get(m)) * scale
            var = _num(r.get(v)) * scale * scale
            cnt = _num(r.get(n))
            est, lo, hi = mean_ci_from_moments(mean, var, int(cnt) if cnt == cnt else 0, level)
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = est, lo, hi
            out[f"{name}_se"] = log_se(mean, var, cnt)
        # Capacity is derived from the server's whole connection where the store has it
        # (accept to close), else from its handshake span (version-1 stores).
        basis = "server_conn_cpu_ms" if out["server_conn_cpu_ms"] > 0 else "server_cpu_ms"
        for suffix in ("", "_lo", "_hi", "_se"):
            out[f"capacity_cpu_ms{suffix}"] = out[f"{basis}{suffix}"]
        out["capacity_cpu_basis"] = "connection" if basis == "server_conn_cpu_ms" else "handshake"
        lat = data.latencies_ms.get(sid, np.empty(0))
        for name, q in QUANTILES.items():
            est, lo, hi = quantile_ci(lat, q, level) if not failed else (math.nan,) * 3
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = est, lo, hi
        ratios = {
            "srv_cli_ratio": (
                "server_cpu_mean",
                "server_cpu_var",
                "client_cpu_mean",
                "client_cpu_var",
                "cov_server_client",
            ),
            "server_over_elapsed": (
                "server_cpu_mean",
                "server_cpu_var",
                "cpu_total_mean",
                "cpu_total_var",
                "cov_server_total",
            ),
            "client_over_elapsed": (
                "client_cpu_mean",
                "client_cpu_var",
                "cpu_total_mean",
                "cpu_total_var",
                "cov_client_total",
            ),
        }
        for name, (mx, vx, my, vy, cxy) in ratios.items():
            if failed:
                est, se = math.nan, math.nan
            else:
                est, se = paired_ratio(
                    r.get(mx), r.get(vx), r.get(my), r.get(vy), r.get(cxy), r.get("cpu_n")
                )
            out[name], out[f"{name}_se"] = est, se
            out[f"{name}_lo"], out[f"{name}_hi"] = log_interval(est, se, level)
        out["connect_share"] = (
            out["connect_ms"] / out["mean_ms"] if out["mean_ms"] and not failed else math.nan
        )
        out["cpu_regime"] = (
            cpu_regime(out["srv_cli_ratio"], out["server_over_elapsed"], cfg.cpu_regimes)
            if not failed
            else "n/a"
        )
        # The same split in instructions (independent means: the counted handshakes' two
        # sides), and its regime by the same bands
        # (docs/methods/instructions.md#instructions-per-handshake).
        est, lo, hi = ratio_ci(
            out["server_instr"], out["server_instr_se"], out["client_instr"],
            out["client_instr_se"], level,
        )  # fmt: skip
        out["instr_srv_cli_ratio"], out["instr_srv_cli_ratio_lo"] = est, lo
        out["instr_srv_cli_ratio_hi"] = hi
        out["instr_regime"] = (
            cpu_regime(est, instr_server_share(out, r["network"]), cfg.cpu_regimes)
            if not failed and math.isfinite(est)
            else "n/a"
        )
        rows.append(out)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return df.reset_index(drop=True)


def chain_exposure(data: StoreData) -> pd.DataFrame:
    """What each scenario's server sends: declared (certificates.served) and observed by the
    client (observed_chain of the chosen run), with DER sizes."""
    rows = []
    certs = data.certificates
    obs = data.observed_chain
    for _, r in data.scenarios.iterrows():
        sid = r["scenario_id"]
        declared = "n/a"
        if not certs.empty:
            c = certs[certs["scenario_id"] == sid].sort_values("position")
            sent = c[c["served"].astype(bool)]
            declared = (
                " + ".join(
                    f"{row.role} {row.algorithm} ({int(row.der_bytes)} B)"
                    for row in sent.itertuples()
                )
                or "none"
            )
        observed = "not recorded"
        n_obs = math.nan
        obs_bytes = math.nan
        if not obs.empty:
            o = obs[(obs["scenario_id"] == sid) & (obs["run_id"] == r["run_id"])]
            o = o.sort_values("position")
            if len(o):
                observed = " + ".join(
                    f"{row.key_alg} ({int(row.der_bytes)} B)" for row in o.itertuples()
                )
                n_obs = len(o)
                obs_bytes = float(o["der_bytes"].sum())
        rows.append(
            {
                "scenario_id": sid,
                "depth": int(r["depth"]),
                "served_chain": r["served_chain"],
                "declared_sent": declared,
                "served_chain_len": _num(r.get("served_chain_len")),
                "served_chain_der_bytes": _num(r.get("served_chain_der_bytes")),
                "observed_chain": observed,
                "observed_chain_len": n_obs,
                "observed_chain_der_bytes": obs_bytes,
                "root_sent": bool(
                    not certs.empty
                    and certs[(certs["scenario_id"] == sid) & (certs["role"] == "root")]["served"]
                    .astype(bool)
                    .any()
                ),
            }
        )
    return pd.DataFrame(rows)


def failures_table(data: StoreData, summary: pd.DataFrame) -> pd.DataFrame:
    """Failed handshakes per scenario and error category, and failed scenarios with cause."""
    f = data.failures.copy()
    if f.empty:
        f = pd.DataFrame(columns=["scenario_id", "error_category", "n", "example_detail"])
    status = summary.set_index("scenario_id")[["status", "failure", "n_measured"]]
    f = f.join(status, on="scenario_id")
    failed_ids = summary.loc[summary["status"] == "failed", "scenario_id"]
    extra = [
        {
            "scenario_id": sid,
            "error_category": "(none recorded)",
            "n": 0,
            "example_detail": None,
            **status.loc[sid].to_dict(),
        }
        for sid in failed_ids
        if sid not in set(f["scenario_id"])
    ]
    if extra:
        f = pd.concat([f, pd.DataFrame(extra)], ignore_index=True)
    f["share"] = f["n"] / f["n_measured"].where(f["n_measured"] > 0)
    return (
        f[["scenario_id", "status", "failure", "error_category", "n", "share", "example_detail"]]
        .sort_values(["scenario_id", "n"], ascending=[True, False])
        .reset_index(drop=True)
    )


@produces("summary", empty=empty_summary)
def _analysis_summary(a) -> pd.DataFrame:
    summ = scenario_summary(a.data)
    return empty_summary() if summ.empty else summ


@produces("failures")
def _analysis_failures(a) -> pd.DataFrame:
    return failures_table(a.data, a.summary)


@produces("exposure")
def _analysis_exposure(a) -> pd.DataFrame:
    return chain_exposure(a.data)
