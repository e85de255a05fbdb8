"""The rows one scenario run adds to a store, as the runner produces them.

Everything that writes scenario results (the runner; test and benchmark stores) hands the
store a `ScenarioRows`, so every store is written by the same code from the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

# A row as the store inserts it (column name -> value), and an open store connection.
Row = dict[str, Any]
Connection = duckdb.DuckDBPyConnection

# The tables a scenario adds rows to, each the `ScenarioRows` field of the same name (besides
# `scenario_runs`, `certificates` and `network_profiles`, which it adds to differently).
TABLES_OF_A_SCENARIO = (
    "samples",
    "observed_chain",
    "observed_client_chain",
    "load_steps",
    "host_reference",
    "load_samples",
    "instruction_samples",
)


@dataclass
class ScenarioRows:
    """One scenario run's rows, committed in one transaction by `Store.write_scenarios`.

    - scenario_run: the `scenario_runs` row (column -> value; dicts are stored as JSON);
    - samples: `samples` rows (chainlab.runner.records.sample_rows pairs client and server
      engine records into them);
    - observed_chain: `observed_chain` rows (the chain of the first successful handshake);
    - observed_client_chain: with a client certificate, the client's chain as the server
      observed it in that handshake (`observed_client_chain` rows);
    - certificates: `certificates` rows of the scenario's hierarchy;
    - network: the run's `network_profiles` row of the scenario's emulated profile, or None;
    - load_steps, load_samples: the scenario's open-loop load steps (campaign [load]) and
      their attempts (chainlab.runner.load), empty without [load];
    - host_reference: the host-speed workload timed around the scenario and its steps;
    - instruction_samples: instructions per connection and side counted under callgrind
      ([measure]; chainlab.runner.instructions), empty without;
    - counting_seconds: not a table's: the wall time of those counts (valgrind's starts
      included), for the run's summary of where its time went.
    """

    scenario_run: Row
    samples: list[Row]
    observed_chain: list[Row]
    certificates: list[Row]
    network: Row | None
    load_steps: list[Row] = field(default_factory=list)
    load_samples: list[Row] = field(default_factory=list)
    host_reference: list[Row] = field(default_factory=list)
    observed_client_chain: list[Row] = field(default_factory=list)
    instruction_samples: list[Row] = field(default_factory=list)
    counting_seconds: float = 0.0

    @property
    def status(self) -> str:
        return str(self.scenario_run["status"])
