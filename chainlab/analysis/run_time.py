"""A stored run's wall time beside its run-time estimate (chainlab.model.run_estimate):
the estimate it started with (`runs.estimate`, schema 14) and the same estimate made again
now from the store alone (its campaign file, its primitives, what the run had to make), so a
change to the estimate's model is checked against runs that really took place
(`chainlab bench model`; tests/model/test_run_estimate_stores.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from chainlab.analysis.cost_model import model_of
from chainlab.analysis.load import stored_campaign
from chainlab.model import host_speed, run_estimate

# Estimate over wall time, within this on every bundled campaign (issue 40's target).
ESTIMATE_TARGET = 0.15


@dataclass(frozen=True)
class RunTime:
    wall_s: float
    stored: run_estimate.RunEstimate  # the estimate the run started with
    again: run_estimate.RunEstimate  # made now from the store

    @property
    def ratio(self) -> float:
        """The estimate made now over the wall time."""
        return self.again.expected_s / self.wall_s


def of_store(st) -> RunTime | str:
    """The run time of the store's run, or why there is none (a string): it needs one
    completed run that recorded what it had to make."""
    runs = st.runs
    if len(runs) != 1 or runs.iloc[0]["status"] != "completed":
        return "needs one completed run in the store (no resume)"
    run = runs.iloc[0]
    stored = run.get("estimate")
    if stored is None or not isinstance(stored, str | dict):
        return (
            "the run recorded no estimate (it was made before schema 14, or not by `chainlab run`)"
        )
    stored = json.loads(stored) if isinstance(stored, str) else stored
    wall = (run["ended_at"] - run["started_at"]).total_seconds()
    campaign = stored_campaign(run)
    options = run["options"]
    options = json.loads(options) if isinstance(options, str) else options
    order = st.query(
        "SELECT scenario_id FROM scenario_runs WHERE run_id = ? ORDER BY started_at",
        [run["run_id"]],
    )["scenario_id"].tolist()
    by_id = {s.scenario_id: s for s in campaign.select(options.get("campaigns"))}
    scenarios = [by_id[sid] for sid in order if sid in by_id]
    fresh = run_estimate.Fresh.from_json(stored.get("fresh", {}))
    # At the host reading the run's estimate priced at (none before it took one).
    reading = stored.get("host_reading_ns")
    model = host_speed.at_reading(model_of(st.primitive_summary()), reading)
    if model is not None:
        # The spread the run's estimate took from the host's load at its start (none before).
        model = replace(model, noise_cv=float(stored.get("noise_cv") or 0.0))
    # A run before host-reading windows read the host and committed once per scenario.
    windowed = "windows" in stored.get("phases", {})
    again = run_estimate.run(
        scenarios, model, fresh, campaign.primitives, "noise_cv" in stored, windowed, reading
    )
    before = run_estimate.RunEstimate(
        stored["low_s"], stored["expected_s"], stored["high_s"], stored["phases"], fresh
    )
    return RunTime(wall, before, again)
