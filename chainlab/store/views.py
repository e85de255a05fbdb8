"""The reads the analysis makes of a store, as raw frames: which scenario run counts, per
scenario moments aggregated in DuckDB, sorted latencies as numpy arrays.

Which samples count:
- a scenario's samples are those of its chosen scenario run: the latest *completed* run of
  that scenario, or, if it never completed, its latest failed run (a `--resume` that re-ran a
  failed scenario supersedes the failure);
- latency, bytes and CPU statistics use measured (warmup = false) handshakes with
  outcome = 'ok'; failures are counted separately by error category.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from chainlab.store.rows import Connection

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


def measured_query(sql: str) -> str:
    """An axis's frame query (`Axis.frames`) over `measured`: the measured attempts (warm-ups
    left out, failed ones in) of each scenario's chosen run."""
    return "WITH " + _CHOSEN + sql


# QUIC's datagram counts per scenario (successful measured handshakes; stores of version 5
# and later, NULL over TCP): means, and the range of the datagrams the client sent before
# the server's flight was complete.
_DATAGRAMS = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id,
    avg(datagrams_read) AS datagrams_read_mean,
    avg(datagrams_written) AS datagrams_written_mean,
    avg(conn_datagrams_read) AS conn_datagrams_read_mean,
    avg(conn_datagrams_written) AS conn_datagrams_written_mean,
    avg(flight_datagrams) AS flight_datagrams_mean,
    min(flight_datagrams) AS flight_datagrams_min,
    max(flight_datagrams) AS flight_datagrams_max
FROM measured
WHERE outcome = 'ok' AND total_ns IS NOT NULL AND datagrams_read IS NOT NULL
GROUP BY scenario_id
"""
)

# What the clients' Merkle Tree Certificate verification checked per scenario (successful
# measured handshakes; stores of version 7 and later, NULL for X.509).
_MTC = (
    "WITH "
    + _CHOSEN
    + """
SELECT scenario_id,
    avg(mtc_proof_hashes) AS mtc_proof_hashes_mean,
    avg(mtc_signatures_checked) AS mtc_signatures_checked_mean,
    min(mtc_kind) AS mtc_kind
FROM measured
WHERE outcome = 'ok' AND mtc_kind IS NOT NULL
GROUP BY scenario_id
"""
)

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
    var_samp(server_handshake_ns) AS server_handshake_var,
    -- the client's CPU whether or not the server recorded the connection (a target's)
    count(client_cpu_ns) AS client_cpu_alone_n, avg(client_cpu_ns) AS client_cpu_alone_mean,
    var_samp(client_cpu_ns) AS client_cpu_alone_var
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
    covar_samp(client_cpu_ns, total_ns) AS cov_client_total,
    count(server_conn_cpu_ns) AS conn_cpu_n,
    avg(server_conn_cpu_ns) AS server_conn_cpu_mean,
    var_samp(server_conn_cpu_ns) AS server_conn_cpu_var,
    count_if(resumed) AS n_resumed,
    count(server_instructions) AS instructions_n,
    avg(client_instructions) AS client_instructions_mean,
    avg(server_instructions) AS server_instructions_mean
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

# One scenario's sorted latencies (its chosen run's successful measured handshakes), fetched
# scenario by scenario as one integer column: a store of millions of handshakes never holds
# a string per handshake, and DuckDB sorts one scenario at a time.
_LATENCIES = """
SELECT s.total_ns FROM samples s
WHERE s.run_id = ? AND s.scenario_id = ? AND NOT s.warmup
    AND s.outcome = 'ok' AND s.total_ns IS NOT NULL
ORDER BY s.total_ns
"""

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


# The load steps of each scenario's chosen run, and the successful attempts' latencies (from
# the intended start) sorted per step, for percentiles.
_LOAD_STEPS = (
    "WITH "
    + _CHOSEN
    + """
SELECT ls.* FROM load_steps ls JOIN chosen c USING (run_id, scenario_id)
ORDER BY scenario_id, step
"""
)
_LOAD_LATENCIES = (
    "WITH "
    + _CHOSEN
    + """
SELECT l.scenario_id, l.step, l.latency_ns FROM load_samples l
JOIN chosen c USING (run_id, scenario_id)
WHERE l.outcome = 'ok' AND l.latency_ns IS NOT NULL
ORDER BY l.scenario_id, l.step, l.latency_ns
"""
)

# Per load step: the successful attempts that completed within a window as long as the
# step's schedule, starting at their median latency (completion = intended start + latency
# from it). A step that kept up completes about its offer in it; an overloaded one, what the
# server sustained, without the tail of its backlog (or of a lossy path's retransmissions)
# draining after the schedule (chainlab.analysis.load_capacity).
_LOAD_WINDOWS = (
    "WITH "
    + _CHOSEN
    + """,
ok AS (
    SELECT l.scenario_id, l.step, l.intended_ns + l.latency_ns AS done_ns, l.latency_ns
    FROM load_samples l JOIN chosen c USING (run_id, scenario_id)
    WHERE l.outcome = 'ok' AND l.latency_ns IS NOT NULL AND l.intended_ns IS NOT NULL
),
med AS (
    SELECT scenario_id, step, quantile_disc(latency_ns, 0.5) AS m FROM ok GROUP BY ALL
),
steps AS (
    SELECT ls.scenario_id, ls.step, ls.duration_s FROM load_steps ls
    JOIN chosen c USING (run_id, scenario_id)
)
SELECT st.scenario_id, st.step, st.duration_s AS window_s,
       count(o.done_ns) FILTER (
           WHERE o.done_ns >= md.m AND o.done_ns < md.m + st.duration_s * 1e9
       ) AS n_window
FROM steps st
LEFT JOIN med md USING (scenario_id, step)
LEFT JOIN ok o USING (scenario_id, step)
GROUP BY ALL
ORDER BY st.scenario_id, st.step
"""
)

_HOST_REFERENCE = (
    "WITH "
    + _CHOSEN
    + """
SELECT h.* FROM host_reference h JOIN chosen c USING (run_id, scenario_id)
ORDER BY scenario_id, step, phase DESC
"""
)

# Tables a store may lack (older or partial stores): read as empty frames.
_OPTIONAL_TABLES = (
    "campaign_scenarios",
    "certificates",
    "observed_chain",
    "observed_client_chain",
    "network_profiles",
)


# Instructions per handshake and side (docs/methods/instructions.md#instructions-per-handshake):
# counted under callgrind where
# the scenario's [measure] asked for it (instruction_samples, version 9), else the hardware
# counter's where the host has one (samples); measured successful handshakes, the same
# connections on both sides. `{seeded}`: what the source adds for handshakes that drew
# seeded random bytes (`_instructions_sql`).
_INSTRUCTIONS = (
    "WITH "
    + _CHOSEN
    + """,
counted AS (
    SELECT i.scenario_id, i.client_instructions AS c, i.server_instructions AS s,
        i.source || {seeded} AS source
    FROM instruction_samples i JOIN chosen USING (run_id, scenario_id)
    WHERE NOT i.warmup AND i.outcome = 'ok'
        AND i.client_instructions IS NOT NULL AND i.server_instructions IS NOT NULL
),
pmu AS (
    SELECT scenario_id, client_instructions AS c, server_instructions AS s,
        'hardware counter (perf_event)' AS source
    FROM measured
    WHERE outcome = 'ok' AND client_instructions IS NOT NULL AND server_instructions IS NOT NULL
        AND scenario_id NOT IN (SELECT scenario_id FROM counted)
)
SELECT scenario_id, count(*) AS instr_n,
    avg(c) AS client_instr_mean, var_samp(c) AS client_instr_var,
    avg(s) AS server_instr_mean, var_samp(s) AS server_instr_var,
    min(source) AS instr_source
FROM (SELECT * FROM counted UNION ALL SELECT * FROM pmu)
GROUP BY scenario_id
"""
)

# What an instruction source says of seeded random bytes ([measure] random, version 10).
SEEDED_SUFFIX = ", seeded random bytes"


def _instructions_sql(con: Connection) -> str:
    """_INSTRUCTIONS for this store: a version-9 store (read as it is) has no `random`
    column, its handshakes drew the system's random bytes."""
    seeded = (
        f"CASE WHEN i.random = 'seeded' THEN '{SEEDED_SUFFIX}' ELSE '' END"
        if "random" in _columns(con, "instruction_samples")
        else "''"
    )
    return _INSTRUCTIONS.replace("{seeded}", seeded)


# Staged rollout (store version 8): every measured attempt of a scenario with a client
# population or a second chain, with its kind of client and the chain it was sent, failures
# included (a kind no chain serves is counted by the server's category); and every attempt
# of its load steps.
_ROLLOUT_IDS = """
rollout AS (
    SELECT scenario_id FROM scenarios
    WHERE population <> 'none' OR second_chain <> 'none'
)
"""
_ROLLOUT_ATTEMPTS = (
    "WITH "
    + _CHOSEN
    + ","
    + _ROLLOUT_IDS
    + """
SELECT m.scenario_id, m.client_kind, m.chain_index, m.outcome, m.error_category,
    m.server_error_category, m.total_ns, m.server_cpu_ns, m.client_cpu_ns, m.bytes_read,
    m.bytes_written
FROM measured m JOIN rollout USING (scenario_id)
ORDER BY m.scenario_id, m.seq
"""
)
# Landmark lag (version 15): what each attempt of a population's kind was sent and verified.
_LANDMARK_ATTEMPTS = (
    "WITH "
    + _CHOSEN
    + """
SELECT m.scenario_id, m.client_kind, m.outcome, m.mtc_kind, m.mtc_landmark, m.retried
FROM measured m JOIN scenarios s USING (scenario_id)
WHERE s.population <> 'none' AND s.certificate = 'mtc-landmark'
ORDER BY m.scenario_id, m.seq
"""
)
_ROLLOUT_LOAD = (
    "WITH "
    + _CHOSEN
    + ","
    + _ROLLOUT_IDS
    + """
SELECT l.scenario_id, l.step, l.client_kind, l.chain_index, l.outcome, l.error_category,
    l.latency_ns
FROM load_samples l JOIN chosen c USING (run_id, scenario_id) JOIN rollout USING (scenario_id)
ORDER BY l.scenario_id, l.step, l.seq
"""
)


# The same for a version-1 store: no whole-connection server CPU (NULL columns).
_CPU_V1 = (
    _CPU.replace("count(server_conn_cpu_ns)", "0::BIGINT")
    .replace("avg(server_conn_cpu_ns)", "NULL::DOUBLE")
    .replace("var_samp(server_conn_cpu_ns)", "NULL::DOUBLE")
)
# Stores before version 3: no instruction counts.
_NO_INSTRUCTIONS = {
    "count(server_instructions)": "0::BIGINT",
    "avg(client_instructions)": "NULL::DOUBLE",
    "avg(server_instructions)": "NULL::DOUBLE",
}


def _cpu_sql(columns: set[str]) -> str:
    sql = _CPU if "server_conn_cpu_ns" in columns else _CPU_V1
    if "server_instructions" not in columns:
        for old, new in _NO_INSTRUCTIONS.items():
            sql = sql.replace(old, new)
    return sql


# The cost model's inputs: one row per primitive (implementation, subject, op, message) or
# reference handshake (implementation: the stack that ran it), over the distinct rows a store
# holds (a resumed run keeps the rows it reused). A store before schema 13 has no
# implementation column: its rows (the OpenSSL 3.5 engine's) read with NULL. `host_mean` is
# the host reading the rows' CPU mean was taken at: where rows carry different readings (a
# primitive's batches, a reference's rounds) the one that scales the mean as scaling each
# row by its own would (mean CPU over mean CPU per reading; chainlab.model.host_speed), else
# their mean.
PRIMITIVE_SUMMARY = """
WITH d AS (
    SELECT DISTINCT {implementation} AS implementation, subject, op, message, message_bytes,
           measured_run, seq, wall_ns, cpu_ns, server_cpu_ns, kib, measured_at,
           {host_cpu_ns} AS host_cpu_ns
    FROM primitive_samples{where}
)
SELECT implementation, subject, op, message, any_value(message_bytes) AS message_bytes,
       count(*) AS n,
       avg(cpu_ns) AS cpu_mean, var_samp(cpu_ns) AS cpu_var,
       avg(wall_ns) AS wall_mean, var_samp(wall_ns) AS wall_var,
       avg(server_cpu_ns) AS server_mean, var_samp(server_cpu_ns) AS server_var,
       avg(kib) AS kib, sum(cpu_ns) AS cpu_total, min(measured_at) AS first_measured,
       max(measured_at) AS last_measured, count(DISTINCT measured_run) AS measuring_runs,
       CASE WHEN count(host_cpu_ns) = count(*) AND min(host_cpu_ns) > 0
            THEN avg(cpu_ns) / avg(cpu_ns::DOUBLE / host_cpu_ns)
            ELSE avg(host_cpu_ns) END AS host_mean
FROM d GROUP BY implementation, subject, op, message
ORDER BY implementation NULLS FIRST, subject, op, message
"""


def _primitive_summary_sql(columns: set[str], of_run: bool = False) -> str:
    implementation = "implementation" if "implementation" in columns else "NULL::VARCHAR"
    host_cpu_ns = "host_cpu_ns" if "host_cpu_ns" in columns else "NULL::BIGINT"
    return PRIMITIVE_SUMMARY.format(
        implementation=implementation,
        host_cpu_ns=host_cpu_ns,
        where=" WHERE run_id = $run_id" if of_run else "",
    )


def primitive_summary(con: Connection, tables: set[str], run_id: str | None = None) -> pd.DataFrame:
    """PRIMITIVE_SUMMARY (of one run's rows, with `run_id`), empty (with its columns) in a
    store without primitives."""
    if "primitive_samples" in tables:
        sql = _primitive_summary_sql(_columns(con, "primitive_samples"), run_id is not None)
        params = {"run_id": run_id} if run_id is not None else {}
        return con.execute(sql, params).df()
    return pd.DataFrame(
        columns=[
            "implementation",
            "subject",
            "op",
            "message",
            "message_bytes",
            "n",
            "cpu_mean",
            "cpu_var",
        ]
    )


def summarize_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """PRIMITIVE_SUMMARY over rows in memory (primitives not yet in a store)."""
    with duckdb.connect() as mem:
        mem.register("primitive_samples", rows)
        return mem.execute(_primitive_summary_sql(set(rows.columns))).df()


def _columns(con: Connection, table: str) -> set[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
    ).fetchall()
    return {r[0] for r in rows}


def _latencies(con: Connection, chosen: pd.DataFrame) -> dict[str, np.ndarray]:
    """Scenario id -> its successful measured latencies (ns, int64), sorted."""
    out = {}
    for run_id, sid in zip(chosen["run_id"], chosen["scenario_id"], strict=True):
        got = con.execute(_LATENCIES, [run_id, sid]).fetchnumpy()["total_ns"]
        out[str(sid)] = np.asarray(got, dtype=np.int64)
    return out
