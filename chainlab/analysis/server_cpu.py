"""The server's CPU accounted (docs/methods/capacity.md#server-cpu-accounted): per scenario
run, the server process's CPU while it served and the shares of it that its connections'
records (`conn_cpu_ns`), its serving threads' waits for connections, the rest of its serving
threads and its other threads (records writer, main thread, a runtime's helpers) took, from
the columns the runner stored (chainlab.runner.server_cpu; stores from version 12).
"""

from __future__ import annotations

import pandas as pd

from chainlab.analysis.registry import produces

# A run whose connections' CPU covers at least this share of the server process's is
# accounted for: what is left is the engine's own work (records, waiting), not a leak.
ACCOUNTED = 0.98


def accounted(scenarios: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario run with a server CPU reading: its process's CPU (ms) and the
    shares of it (connections, waiting, serving threads' rest, other threads; the last
    three NaN for a server that writes no thread accounts)."""
    if scenarios.empty or "server_process_cpu_ns" not in scenarios:
        return pd.DataFrame()
    s = scenarios[scenarios["server_process_cpu_ns"].fillna(0) > 0]
    if s.empty:
        return pd.DataFrame()
    process = s["server_process_cpu_ns"].astype(float)
    conn = s["server_conn_cpu_ns"].astype(float)
    threads = s["server_threads_cpu_ns"].astype(float)
    wait = s["server_wait_cpu_ns"].astype(float)
    out = pd.DataFrame(
        {
            "scenario_id": s["scenario_id"],
            "process_ms": process / 1e6,
            "conn_share": conn / process,
            "wait_share": wait / process,
            "threads_rest_share": ((threads - conn - wait) / process).clip(lower=0),
            "other_share": ((process - threads) / process).clip(lower=0),
        }
    )
    out["accounted"] = out["conn_share"] >= ACCOUNTED
    return out.sort_values("scenario_id").reset_index(drop=True)


@produces("server_cpu")
def _analysis_server_cpu(a) -> pd.DataFrame:
    return accounted(a.data.scenarios)
