"""Scenarios on a Dask cluster (chainlab.runner.executors): a scheduler and plain
`dask worker` processes started here from the project's environment, as the README says,
each declaring the resource host=1. The store has the shape of a local run's, a worker host
never runs two scenarios at once, a worker killed mid-scenario gives `worker_lost` (and
`--resume` completes it), a worker with another engine build is refused, and Ctrl-C leaves
no engine process behind."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import chainlab
from chainlab import engine

from .conftest import engines

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).parent / "dask"
# How long a scheduler or worker may take to come up, and any driver to finish.
START_S = 60
RUN_S = 300

QUICK = REPO / "campaigns" / "quick.toml"
# Three scenarios of a few seconds each: one is in flight when a worker is killed.
SLOW = """
[campaign]
name = "slow"
order = "declared"
[sampling]
mode = "fixed"
count = 60
warmup = 1
[primitives]
measure = false
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "SLH-DSA-SHAKE-128f"], ["ML-DSA-65", "SLH-DSA-SHAKE-128f"],
             ["ML-DSA-87", "SLH-DSA-SHAKE-128f"]]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and workers as separate processes (no nanny: a killed worker stays
    dead, as a lost host does)."""

    def __init__(self, tmp: Path, env: dict, workers: int = 2):
        self.tmp, self.env = tmp, env
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.procs: list[subprocess.Popen] = []
        port = self.address.rsplit(":", 1)[1]
        self._spawn(
            "scheduler",
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
        )
        for i in range(workers):
            self.add_worker(f"w{i}")
        self.wait_workers(workers)

    def _spawn(self, name, argv, env=None):
        log = (self.tmp / f"{name}.log").open("wb")
        p = subprocess.Popen(argv, stdout=log, stderr=log, env=env or self.env)
        self.procs.append(p)
        return p

    def add_worker(self, name, env=None):
        return self._spawn(
            name,
            [str(DASK), "worker", self.address, "--nthreads", "1", "--resources", "host=1",
             "--no-dashboard", "--no-nanny", "--name", name],
            env,
        )  # fmt: skip

    def wait_workers(self, n):
        from distributed import Client

        with Client(self.address, timeout=START_S) as c:
            c.wait_for_workers(n, timeout=START_S)

    def close(self):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def cluster_env(pki_cache, tmp_path):
    env = dict(os.environ)
    env["CHAINLAB_PKI_CACHE"] = str(pki_cache)
    return env


def chainlab_run(*args, env, tmp_path, wait=True):
    argv = [sys.executable, "-m", "chainlab", "run", *map(str, args)]
    out = (tmp_path / "driver.log").open("ab")
    p = subprocess.Popen(argv, stdout=out, stderr=out, env=env)
    if wait:
        p.wait(RUN_S)
    return p


def wait_for_engine(marker: str, subcommand: str, timeout_s: float = 120):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        found = [e for e in engines(marker) if f" {subcommand} " in e[2]]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no engine {subcommand} started")


def test_quick_on_two_workers_has_the_shape_of_a_local_run(
    engine_bin, pki_cache, cluster_env, tmp_path
):
    cluster = Cluster(tmp_path, cluster_env)
    try:
        remote = tmp_path / "cluster.duckdb"
        p = chainlab_run(QUICK, "--store", remote, "--cluster", cluster.address,
                         env=cluster_env, tmp_path=tmp_path)  # fmt: skip
        assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    finally:
        cluster.close()
    local = tmp_path / "local.duckdb"
    p = chainlab_run(QUICK, "--store", local, env=cluster_env, tmp_path=tmp_path)
    assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    with chainlab.open(remote) as r, chainlab.open(local) as lo:
        assert set(r.scenarios["scenario_id"]) == set(lo.scenarios["scenario_id"])
        for table in ("scenario_runs", "samples", "certificates", "observed_chain"):
            assert list(r.table(table).columns) == list(lo.table(table).columns), table
        runs = r.scenario_runs
        assert (runs["status"] == "completed").all()
        assert runs["scenario_id"].is_unique  # one row (one transaction) per scenario
        assert set(r.samples["scenario_id"]) == set(runs["scenario_id"])
        hosts = r.query(
            "SELECT scenario_id, started_at, ended_at, host->>'worker' AS worker, "
            "host->>'executor' AS executor FROM scenario_runs ORDER BY worker, started_at"
        )
        assert set(hosts["executor"]) == {"dask"} and hosts["worker"].nunique() == 2
        assert set(lo.query("SELECT host->>'executor' AS e FROM scenario_runs")["e"]) == {"local"}
    # Exclusivity: on each worker host, one scenario's span ends before the next begins.
    for _, g in hosts.groupby("worker"):
        starts, ends = list(g["started_at"]), list(g["ended_at"])
        assert all(ends[i] <= starts[i + 1] for i in range(len(g) - 1)), g


def test_a_worker_lost_mid_scenario_is_recorded_and_resumed(
    engine_bin, pki_cache, cluster_env, tmp_path
):
    f = tmp_path / "slow.toml"
    f.write_text(SLOW)
    store = tmp_path / "slow.duckdb"
    cluster = Cluster(tmp_path, cluster_env)
    try:
        driver = chainlab_run(f, "--store", store, "--cluster", cluster.address,
                              env=cluster_env, tmp_path=tmp_path, wait=False)  # fmt: skip
        _, worker_pid, _ = wait_for_engine(str(pki_cache), "handshake")
        os.kill(worker_pid, signal.SIGKILL)  # the worker host is lost mid-scenario
        assert driver.wait(RUN_S) == 0, (tmp_path / "driver.log").read_text()
        with chainlab.open(store) as st:
            runs = st.scenario_runs.set_index("scenario_id")
        lost = runs[runs["status"] == "failed"]
        assert list(lost["failure_cause"]) == ["worker_lost"], runs[["status", "failure_cause"]]
        assert (runs["status"] == "completed").sum() == 2  # the rest of the campaign ran
        # --resume runs the lost scenario again, on the worker left.
        p = chainlab_run(f, "--store", store, "--resume", "--cluster", cluster.address,
                         env=cluster_env, tmp_path=tmp_path)  # fmt: skip
        assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    finally:
        cluster.close()
    with chainlab.open(store) as st:
        assert set(st.query("SELECT scenario_id FROM scenario_runs WHERE status = 'completed'")[
            "scenario_id"]) == set(runs.index)  # fmt: skip
    assert not engines(str(pki_cache))


def test_a_worker_with_another_engine_build_is_refused(
    engine_bin, pki_cache, cluster_env, tmp_path
):
    other = tmp_path / "chainlab-engine"
    shutil.copy(engine.path(), other)
    with other.open("ab") as fh:
        fh.write(b"\0")  # the same program, another binary: another build
    cluster = Cluster(tmp_path, cluster_env, workers=1)
    try:
        cluster.add_worker("odd", env={**cluster_env, "CHAINLAB_ENGINE": str(other)})
        cluster.wait_workers(2)
        f = tmp_path / "slow.toml"
        f.write_text(SLOW.replace("count = 60", "count = 5"))
        store = tmp_path / "odd.duckdb"
        p = chainlab_run(f, "--store", store, "--cluster", cluster.address,
                         env=cluster_env, tmp_path=tmp_path)  # fmt: skip
        log = (tmp_path / "driver.log").read_text()
        assert p.returncode == 0, log
    finally:
        cluster.close()
    assert "refusing worker" in log and "binary" in log
    with chainlab.open(store) as st:
        workers = st.query("SELECT DISTINCT host->>'worker' AS w FROM scenario_runs")["w"]
        assert (st.scenario_runs["status"] == "completed").all()
    assert len(workers) == 1  # every scenario ran on the worker with the driver's build


def test_ctrl_c_on_the_driver_leaves_no_engine_on_any_worker(
    engine_bin, pki_cache, cluster_env, tmp_path
):
    f = tmp_path / "slow.toml"
    f.write_text(SLOW.replace("count = 60", "count = 400"))
    cluster = Cluster(tmp_path, cluster_env)
    try:
        driver = chainlab_run(f, "--store", tmp_path / "c.duckdb", "--cluster",
                              cluster.address, env=cluster_env, tmp_path=tmp_path,
                              wait=False)  # fmt: skip
        wait_for_engine(str(pki_cache), "handshake")
        driver.send_signal(signal.SIGINT)
        assert driver.wait(RUN_S) == 130
        end = time.monotonic() + 10
        while engines(str(pki_cache)) and time.monotonic() < end:
            time.sleep(0.1)
        assert not engines(str(pki_cache))
    finally:
        cluster.close()
