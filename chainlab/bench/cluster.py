"""`chainlab bench cluster`: what running on a Dask cluster costs beyond the scenarios
themselves, beside the local executor's own overhead, in one run.

Set-up (outside every timed part): `campaigns/quick.toml` with its primitives phase off (the
cost model's input is the same either way and is not what is measured here), hierarchies
generated once by a first local run into a throw-away store.

1. Local: the campaign on this machine (the local executor).
2. Cluster: the same campaign on a local Dask cluster of two worker processes, each
   declaring host=1 and preloading chainlab as the README starts workers
   (`distributed.LocalCluster`, started before the timer).

For each, from its store: the run's wall time (runs.started_at to ended_at), the time
covered by scenarios (the union of the scenario runs' [started_at, ended_at] spans, so two
workers in parallel count once), and the rest: dispatch, transfer and commit on a cluster;
start-up, store writes and progress locally. Target (issue #15): the cluster's share outside
scenarios at most 3 % of its wall time. On a two-core machine the two workers' scenarios
compete for the cores: the scenarios themselves take longer, which this figure leaves out.

Prints figures only (no pass/fail).

    chainlab bench cluster
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import chainlab
from chainlab.campaign import load
from chainlab.engine import REPO
from chainlab.runner.campaign import RunOptions, run
from chainlab.runner.executors import HOST_RESOURCE

CAMPAIGN = REPO / "campaigns" / "quick.toml"
WORKERS = 2


def main(argv=None) -> int:
    # Deferred: `chainlab bench` lists every benchmark at start; only this one needs Dask.
    from distributed import LocalCluster

    with tempfile.TemporaryDirectory(prefix="chainlab-bench-cluster-") as tmp_name:
        tmp = Path(tmp_name)
        f = tmp / "quick.toml"
        text = CAMPAIGN.read_text()
        f.write_text(text.split("\n[primitives]")[0] + "\n[primitives]\nmeasure = false\n")
        campaign = load(f)
        # Hierarchies into the cache, outside every timed run.
        run(campaign, RunOptions(store=tmp / "warm.duckdb", live_progress=False))
        local = tmp / "local.duckdb"
        run(campaign, RunOptions(store=local, live_progress=False))
        with LocalCluster(
            n_workers=WORKERS, threads_per_worker=1, processes=True,
            resources={HOST_RESOURCE: 1}, dashboard_address=None,
            preload=["chainlab.runner.executors"],  # as the README starts workers
        ) as cluster:  # fmt: skip
            remote = tmp / "cluster.duckdb"
            run(
                campaign,
                RunOptions(store=remote, live_progress=False, cluster=cluster.scheduler_address),
            )
        print(f"{CAMPAIGN.name} ({len(campaign.scenarios)} scenarios, primitives off):")
        for name, store in (("local", local), (f"Dask, {WORKERS} workers", remote)):
            wall, covered = spans(store)
            outside = wall - covered
            first, last = edges(store)
            print(
                f"  {name:<16} wall {wall:6.1f} s, scenarios {covered:6.1f} s, outside "
                f"scenarios {outside:5.2f} s = {100 * outside / wall:4.1f} % of the wall time "
                f"(before the first scenario {first:.2f} s, after the last {last:.2f} s)"
            )
    return 0


def edges(store: Path) -> tuple[float, float]:
    """Seconds from the run's start to its first scenario's, and from its last scenario's
    end to the run's end."""
    with chainlab.open(store) as st:
        runs = st.runs
        sr = st.scenario_runs
    return (
        (sr["started_at"].min() - runs["started_at"].min()).total_seconds(),
        (runs["ended_at"].max() - sr["ended_at"].max()).total_seconds(),
    )


def spans(store: Path) -> tuple[float, float]:
    """(the run's wall seconds, seconds covered by at least one scenario run)."""
    with chainlab.open(store) as st:
        runs = st.runs
        sr = st.scenario_runs.sort_values("started_at")
    wall = (runs["ended_at"].max() - runs["started_at"].min()).total_seconds()
    covered, end = 0.0, None
    for start, stop in zip(sr["started_at"], sr["ended_at"], strict=True):
        if end is None or start > end:
            covered += (stop - start).total_seconds()
            end = stop
        elif stop > end:
            covered += (stop - end).total_seconds()
            end = stop
    return wall, covered
