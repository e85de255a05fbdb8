"""Client/server cost decomposition (the paper's §8, Table 10) from per-connection CPU.

Each handshake row pairs the client's and the server's CPU time for the same connection
(getrusage of each process around the handshake), so per scenario:
- server/client CPU ratio = mean server CPU / mean client CPU (paired delta interval);
- CPU over elapsed = mean CPU of a side / mean end-to-end latency (total_ns), the paper's
  'task-clock over elapsed';
- the regime: client-skewed / balanced / server-skewed / overwhelmingly server-bound from
  the ratio bands in [analysis.cpu_regimes] (docs/methods/placement.md#classes-pairs-regimes).
"""

from __future__ import annotations

import pandas as pd

from chainlab.analysis.compare import MonteCarlo, group_stats
from chainlab.analysis.registry import produces

SCENARIO_COLUMNS = [
    "scenario_id",
    "label",
    "placement_class",
    "n_ok",
    "mean_ms",
    "client_cpu_ms",
    "client_cpu_ms_lo",
    "client_cpu_ms_hi",
    "server_cpu_ms",
    "server_cpu_ms_lo",
    "server_cpu_ms_hi",
    "client_over_elapsed",
    "client_over_elapsed_lo",
    "client_over_elapsed_hi",
    "server_over_elapsed",
    "server_over_elapsed_lo",
    "server_over_elapsed_hi",
    "srv_cli_ratio",
    "srv_cli_ratio_lo",
    "srv_cli_ratio_hi",
    "cpu_regime",
    "n_server_missing",
    # The same split in instructions, where counted
    # (docs/methods/instructions.md#instructions-per-handshake).
    "instr_srv_cli_ratio",
    "instr_srv_cli_ratio_lo",
    "instr_srv_cli_ratio_hi",
    "instr_regime",
]


def per_scenario(summary: pd.DataFrame) -> pd.DataFrame:
    ok = summary[summary["status"] == "ok"]
    return ok[SCENARIO_COLUMNS].reset_index(drop=True)


def per_class(summary: pd.DataFrame, mc: MonteCarlo) -> pd.DataFrame:
    """Means over the scenarios of each exclusive placement class (the paper's §8.2-8.4)."""
    specs = [
        ("mean_client_cpu_ms", "client_cpu_ms", "mean", False),
        ("mean_server_cpu_ms", "server_cpu_ms", "mean", False),
        ("mean_client_over_elapsed", "client_over_elapsed", "mean", False),
        ("mean_server_over_elapsed", "server_over_elapsed", "mean", False),
        ("mean_srv_cli_ratio", "srv_cli_ratio", "mean", False),
    ]
    return group_stats(summary, mc, None, "exclusive", specs)


@produces("decomposition")
def _analysis_decomposition(a) -> pd.DataFrame:
    return per_scenario(a.reference_summary())


@produces("decomposition_classes")
def _analysis_decomposition_classes(a) -> pd.DataFrame:
    return per_class(a.reference_summary(), a.monte_carlo)
