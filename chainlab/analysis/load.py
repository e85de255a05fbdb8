"""Read a chainlab store (DuckDB, chainlab/store/schema.sql) for analysis, read-only.

Aggregation happens in DuckDB SQL (counts, means, variances, covariances per scenario); only
the sorted latencies of each scenario come back as numpy arrays (for quantiles). Which samples
count:
- a scenario's samples are those of its chosen scenario run: the latest *completed* run of
  that scenario, or, if it never completed, its latest failed run (a `--resume` that re-ran a
  failed scenario supersedes the failure);
- latency, bytes and CPU statistics use measured (warmup = false) handshakes with
  outcome = 'ok'; failures are counted separately by error category.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from chainlab.analysis.config import AnalysisConfig, from_campaign_toml
from chainlab.errors import ChainlabError

SCHEMA_VERSION = "1"
# The network profile name of scenarios that ran over loopback (no emulated link).
LOOPBACK = "loopback"

_REQUIRED_TABLES = ("meta", "runs", "scenarios", "scenario_runs", "samples")

_CHOSEN = """
chosen AS (
    SELECT run_id, scenario_id FROM (
        SELECT run_id, scenario_id, row_number() OVER (
            PARTITION BY scenario_id
            ORDER BY (status = 'completed') DESC, ended_at DESC, run_id DESC) AS rk
        FROM scenario_runs)
    WHERE rk = 1
),
measured AS (
    SELECT s.* FROM samples s JOIN chosen c USING (run_id, scenario_id)
    WHERE NOT s.warmup
)
"""

# Per-scenario moments of successful measured handshakes. Variances are sample variances
# (n - 1), covariances likewise; NULL where fewer than two values exist.
_MOMENTS = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id,
    count(*) AS n_ok,
    avg(total_ns) AS total_mean, var_samp(total_ns) AS total_var,
    count(connect_ns) AS connect_n, avg(connect_ns) AS connect_mean,
    var_samp(connect_ns) AS connect_var,
    count(handshake_ns) AS handshake_n, avg(handshake_ns) AS handshake_mean,
    var_samp(handshake_ns) AS handshake_var,
    count(bytes_read) AS bytes_read_n, avg(bytes_read) AS bytes_read_mean,
    var_samp(bytes_read) AS bytes_read_var,
    count(bytes_written) AS bytes_written_n, avg(bytes_written) AS bytes_written_mean,
    var_samp(bytes_written) AS bytes_written_var,
    count(chain_der_bytes) AS chain_bytes_n, avg(chain_der_bytes) AS chain_bytes_mean,
    var_samp(chain_der_bytes) AS chain_bytes_var,
    min(chain_der_bytes) AS chain_bytes_min, max(chain_der_bytes) AS chain_bytes_max,
    mode(chain_len) AS chain_len_mode, min(chain_len) AS chain_len_min,
    max(chain_len) AS chain_len_max,
    mode(grp) AS negotiated_group, mode(sigalg) AS negotiated_sigalg,
    avg(CAST(resumed AS INTEGER)) AS resumed_fraction,
    count(*) FILTER (WHERE server_cpu_ns IS NULL) AS n_server_missing,
    count(server_handshake_ns) AS server_handshake_n,
    avg(server_handshake_ns) AS server_handshake_mean,
    var_samp(server_handshake_ns) AS server_handshake_var
FROM measured
WHERE outcome = 'ok' AND total_ns IS NOT NULL
GROUP BY scenario_id
"""
)

# CPU moments over the handshakes that have client CPU, server CPU and latency, so ratios
# of these means are paired (same connections) and their covariances are meaningful.
_CPU = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id,
    count(*) AS cpu_n,
    avg(client_cpu_ns) AS client_cpu_mean, var_samp(client_cpu_ns) AS client_cpu_var,
    avg(server_cpu_ns) AS server_cpu_mean, var_samp(server_cpu_ns) AS server_cpu_var,
    avg(total_ns) AS cpu_total_mean, var_samp(total_ns) AS cpu_total_var,
    covar_samp(server_cpu_ns, client_cpu_ns) AS cov_server_client,
    covar_samp(server_cpu_ns, total_ns) AS cov_server_total,
    covar_samp(client_cpu_ns, total_ns) AS cov_client_total
FROM measured
WHERE outcome = 'ok' AND total_ns IS NOT NULL
    AND client_cpu_ns IS NOT NULL AND server_cpu_ns IS NOT NULL
GROUP BY scenario_id
"""
)

_COUNTS = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id,
    count(*) AS n_measured,
    count(*) FILTER (WHERE outcome <> 'ok') AS n_failed_samples
FROM measured GROUP BY scenario_id
"""
)

_FAILURES = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id, coalesce(error_category, 'unknown') AS error_category, count(*) AS n,
    any_value(error_detail) AS example_detail
FROM measured WHERE outcome <> 'ok'
GROUP BY ALL ORDER BY scenario_id, n DESC, error_category
"""
)

_LATENCIES = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id, total_ns FROM measured
WHERE outcome = 'ok' AND total_ns IS NOT NULL
ORDER BY scenario_id, total_ns
"""
)

# Per-handshake columns the network analyses need (chainlab.network.model.predict and the
# initial-window check), fetched only when the store has emulated scenarios.
_NETWORK_SAMPLES = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id, total_ns, bytes_written, server_bytes_written
FROM measured
WHERE outcome = 'ok' AND total_ns IS NOT NULL
ORDER BY scenario_id, seq
"""
)

_SCENARIO_RUNS = (
    "WITH "
    + _CHOSEN
    + """
SELECT sr.* FROM scenario_runs sr JOIN chosen c USING (run_id, scenario_id)
"""
)


@dataclass
class StoreData:
    """A store's content as the analysis needs it (all frames keyed by scenario_id)."""

    path: Path
    meta: dict
    runs: pd.DataFrame
    scenarios: pd.DataFrame  # scenarios + chosen scenario_runs + moments; one row each
    campaigns: pd.DataFrame  # campaign, scenario_id
    failures: pd.DataFrame  # scenario_id, error_category, n, example_detail
    certificates: pd.DataFrame
    observed_chain: pd.DataFrame
    network_profiles: pd.DataFrame
    # measured ok handshakes of every scenario (see _NETWORK_SAMPLES); empty unless some
    # scenario ran on an emulated network
    network_samples: pd.DataFrame = field(default_factory=pd.DataFrame)
    latencies_ms: dict[str, np.ndarray] = field(default_factory=dict)  # sorted, per scenario
    config: AnalysisConfig = field(default_factory=AnalysisConfig)
    campaign_name: str | None = None
    campaign_sha256: str | None = None
    campaign_hashes: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # registered, never executed


def _table_names(con) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    return {r[0] for r in rows}


def load_store(path, config: AnalysisConfig | None = None) -> StoreData:
    """Open the store at `path` read-only and gather what the analysis needs.

    `config`, when given, replaces the settings parsed from the stored campaign file.
    """
    p = Path(path)
    if not p.is_file():
        raise ChainlabError(f"store {p}: no such file; give the .duckdb file `chainlab run` wrote")
    try:
        con = duckdb.connect(str(p), read_only=True)
    except duckdb.Error as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "lock" in first.lower():
            raise ChainlabError(
                f"store {p}: in use by another process (a running `chainlab run`?); report "
                "it when the run ends, or on a copy of the file"
            ) from err
        raise ChainlabError(f"store {p}: cannot be opened as a DuckDB database ({first})") from err
    try:
        return _load(con, p, config)
    finally:
        con.close()


def _load(con, p: Path, config: AnalysisConfig | None) -> StoreData:
    tables = _table_names(con)
    missing = [t for t in _REQUIRED_TABLES if t not in tables]
    if missing:
        raise ChainlabError(
            f"store {p}: not a chainlab result store (missing table {missing[0]!r}); "
            "stores are written by `chainlab run`"
        )
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ChainlabError(
            f"store {p}: schema version {version!r}, this chainlab reads version "
            f"{SCHEMA_VERSION}; report it with the chainlab version that wrote it "
            f"(meta 'created_by' = {meta.get('created_by')!r})"
        )
    runs = con.execute("SELECT * FROM runs ORDER BY started_at, run_id").df()
    if runs.empty:
        raise ChainlabError(f"store {p}: holds no run (the runs table is empty)")
    scen = con.execute("SELECT * FROM scenarios ORDER BY scenario_id").df()
    chosen = con.execute(_SCENARIO_RUNS).df()
    moments = con.execute(_MOMENTS).df()
    cpu = con.execute(_CPU).df()
    counts = con.execute(_COUNTS).df()
    failures = con.execute(_FAILURES).df()
    opt = {
        name: con.execute(f"SELECT * FROM {name}").df() if name in tables else pd.DataFrame()
        for name in ("campaign_scenarios", "certificates", "observed_chain", "network_profiles")
    }
    lat = con.execute(_LATENCIES).fetchnumpy()

    # Only scenarios that were executed (have a scenario run) are analysed.
    chosen = chosen.rename(
        columns={
            "status": "run_status",
            "n_measured": "sr_n_measured",
            "n_ok": "sr_n_ok",
            "n_failed": "sr_n_failed",
            "n_warmup": "sr_n_warmup",
        }
    )
    df = scen.merge(chosen, on="scenario_id", how="inner")
    not_run = sorted(set(scen["scenario_id"]) - set(chosen["scenario_id"]))
    for extra in (moments, cpu, counts):
        df = df.merge(extra, on="scenario_id", how="left")
    for c in ("n_ok", "n_measured", "n_failed_samples", "cpu_n", "n_server_missing"):
        df[c] = df[c].fillna(0).astype(int)
    df["failed"] = (df["run_status"] != "completed") | (df["n_ok"] == 0)
    df["failure_note"] = [_failure_note(r) if r["failed"] else None for _, r in df.iterrows()]
    df = df.sort_values("scenario_id").reset_index(drop=True)

    latencies: dict[str, np.ndarray] = {}
    ids = lat["scenario_id"]
    if len(ids):
        ids = np.asarray(ids, dtype=object)
        values = np.asarray(lat["total_ns"], dtype=np.float64) / 1e6
        bounds = np.flatnonzero(ids[1:] != ids[:-1]) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [len(ids)]])
        for s, e in zip(starts, ends, strict=True):
            latencies[str(ids[s])] = values[s:e]

    emulated = (df["network"] != LOOPBACK).any() if len(df) else False
    net_samples = con.execute(_NETWORK_SAMPLES).df() if emulated else pd.DataFrame()

    last = runs.iloc[-1]
    where = f"store {p}, campaign file {last['campaign_file_name']}"
    cfg = config if config is not None else from_campaign_toml(last["campaign_toml"], where)
    return StoreData(
        path=p,
        meta=meta,
        runs=runs,
        scenarios=df,
        campaigns=opt["campaign_scenarios"],
        failures=failures,
        certificates=opt["certificates"],
        observed_chain=opt["observed_chain"],
        network_profiles=opt["network_profiles"],
        network_samples=net_samples,
        latencies_ms=latencies,
        config=cfg,
        campaign_name=str(last["campaign_file_name"]),
        campaign_sha256=str(last["campaign_file_sha256"]),
        campaign_hashes=sorted(set(runs["campaign_file_sha256"].astype(str))),
        not_run=not_run,
    )


def _failure_note(r) -> str:
    if r["run_status"] != "completed":
        cause = r.get("failure_cause")
        cause = cause if isinstance(cause, str) and cause else "no cause recorded"
        detail = r.get("failure_detail")
        if isinstance(detail, str) and detail:
            cause = f"{cause} - {detail}"
        return (
            f"scenario run {r['run_status']}: {cause} ({int(r['sr_n_failed'])} of "
            f"{int(r['sr_n_measured'])} measured handshakes failed)"
        )
    return "no successful measured handshake"


def parse_json(value) -> dict:
    """A JSON column value as a dict (DuckDB returns JSON as text)."""
    if isinstance(value, dict):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}
    try:
        out = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}
