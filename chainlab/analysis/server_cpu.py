"""The server's CPU accounted (docs/methods/capacity.md#server-cpu-accounted): per scenario
run, the server process's CPU while it served and the shares of it that its connections'
records (`conn_cpu_ns`), its serving threads' waits for connections, the rest of its serving
threads and its other threads (records writer, main thread, a runtime's helpers) took, from
the columns the runner stored (chainlab.runner.server_cpu; stores from version 12).
"""

from __future__ import annotations

import math

import pandas as pd

from chainlab.analysis.registry import produces
from chainlab.runner import server_cpu

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
    rows = []
    for r in s.to_dict("records"):
        process, conn, threads, wait = (
            float(r[c]) if r[c] is not None else math.nan
            for c in (
                "server_process_cpu_ns",
                "server_conn_cpu_ns",
                "server_threads_cpu_ns",
                "server_wait_cpu_ns",
            )
        )
        left = server_cpu.rest(process, conn, threads, wait)
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "process_ms": process / 1e6,
                "conn_share": conn / process,
                "wait_share": left["waiting"] / process,
                "threads_rest_share": left["threads_rest"] / process,
                "other_share": left["other"] / process,
            }
        )
    out = pd.DataFrame(rows)
    out["accounted"] = out["conn_share"] >= ACCOUNTED
    return out.sort_values("scenario_id").reset_index(drop=True)


@produces("server_cpu")
def _analysis_server_cpu(a) -> pd.DataFrame:
    return accounted(a.data.scenarios)
