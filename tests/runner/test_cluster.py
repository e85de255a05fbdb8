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

# Four quick scenarios: both workers get some, each handles its one at a time. (The bundled
# quick.toml runs end to end in test_run.py; here what counts is the cluster's shape.)
FOUR = """
[campaign]
name = "four"
order = "declared"
[sampling]
mode = "fixed"
count = 20
warmup = 1
[primitives]
measure = false
[matrix.m]
kex = ["X25519", "X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"], ["ML-DSA-65", "ML-DSA-65"]]
"""
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
             "--no-dashboard", "--no-nanny", "--name", name,
             "--preload", "chainlab.runner.executors"],
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


def chainlab_run(cli, *args, env, tmp_path, wait=True):
    out = (tmp_path / "driver.log").open("ab")
    p = cli.popen("run", *args, stdout=out, stderr=out, env=env)
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


def test_a_run_on_two_workers_has_the_shape_of_a_local_run(
    engine_bin, pki_cache, cluster_env, tmp_path, cli
):
    four = tmp_path / "four.toml"
    four.write_text(FOUR)
    cluster = Cluster(tmp_path, cluster_env)
    try:
        remote = tmp_path / "cluster.duckdb"
        p = chainlab_run(cli, four, "--store", remote, "--cluster", cluster.address,
                         env=cluster_env, tmp_path=tmp_path)  # fmt: skip
        assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    finally:
        cluster.close()
    # The driver times no part of its workers' scenarios: no line of the rest's parts.
    assert "the rest in parts" not in (tmp_path / "driver.log").read_text()
    local = tmp_path / "local.duckdb"
    p = chainlab_run(cli, four, "--store", local, env=cluster_env, tmp_path=tmp_path)
    assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    assert "the rest in parts" in (tmp_path / "driver.log").read_text()
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
    engine_bin, pki_cache, cluster_env, tmp_path, cli
):
    f = tmp_path / "slow.toml"
    f.write_text(SLOW)
    store = tmp_path / "slow.duckdb"
    cluster = Cluster(tmp_path, cluster_env)
    try:
        driver = chainlab_run(cli, f, "--store", store, "--cluster", cluster.address,
                              env=cluster_env, tmp_path=tmp_path, wait=False)  # fmt: skip
        _, worker_pid, _ = wait_for_engine(str(pki_cache), "handshake")
        os.kill(worker_pid, signal.SIGKILL)  # the worker host is lost mid-scenario
        # Some scenarios failed, the rest completed: exit status 3.
        assert driver.wait(RUN_S) == 3, (tmp_path / "driver.log").read_text()
        with chainlab.open(store) as st:
            runs = st.scenario_runs.set_index("scenario_id")
        lost = runs[runs["status"] == "failed"]
        assert list(lost["failure_cause"]) == ["worker_lost"], runs[["status", "failure_cause"]]
        assert (runs["status"] == "completed").sum() == 2  # the rest of the campaign ran
        # --resume runs the lost scenario again, on the worker left.
        p = chainlab_run(cli, f, "--store", store, "--resume", "--cluster", cluster.address,
                         env=cluster_env, tmp_path=tmp_path)  # fmt: skip
        assert p.returncode == 0, (tmp_path / "driver.log").read_text()
    finally:
        cluster.close()
    with chainlab.open(store) as st:
        assert set(st.query("SELECT scenario_id FROM scenario_runs WHERE status = 'completed'")[
            "scenario_id"]) == set(runs.index)  # fmt: skip
    assert not engines(str(pki_cache))


@pytest.mark.bad_input
def test_a_worker_with_another_engine_build_is_refused(
    engine_bin, pki_cache, cluster_env, tmp_path, cli
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
        p = chainlab_run(cli, f, "--store", store, "--cluster", cluster.address,
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
    engine_bin, pki_cache, cluster_env, tmp_path, cli
):
    f = tmp_path / "slow.toml"
    f.write_text(SLOW.replace("count = 60", "count = 400"))
    cluster = Cluster(tmp_path, cluster_env)
    try:
        driver = chainlab_run(cli, f, "--store", tmp_path / "c.duckdb", "--cluster",
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


@pytest.mark.netns
def test_split_placement_pairs_two_namespaces_as_loopback_does(
    engine_bin, pki_cache, cluster_env, tmp_path
):
    """Two network namespaces joined by a veth pair, one Dask worker in each (the scheduler
    and the driver in the first): the server's records come from one namespace, the
    client's from the other, and every connection's bytes pair exactly."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces")
    tag = f"cl{os.getpid() % 100000}"
    ns = [f"chainlab-{tag}-a", f"chainlab-{tag}-b"]
    ips = ["10.231.7.1", "10.231.7.2"]

    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True)

    procs: list[subprocess.Popen] = []
    try:
        for n in ns:
            ip("netns", "add", n)
            ip("-n", n, "link", "set", "lo", "up")
        ip("link", "add", f"{tag}a", "type", "veth", "peer", "name", f"{tag}b")
        for n, end, addr in zip(ns, ("a", "b"), ips, strict=True):
            ip("link", "set", f"{tag}{end}", "netns", n)
            ip("-n", n, "addr", "add", f"{addr}/24", "dev", f"{tag}{end}")
            ip("-n", n, "link", "set", f"{tag}{end}", "up")
        port = free_port()
        address = f"tcp://{ips[0]}:{port}"

        def spawn(n, name, argv):
            log = (tmp_path / f"{name}.log").open("wb")
            procs.append(
                subprocess.Popen(
                    ["ip", "netns", "exec", n, *argv], stdout=log, stderr=log, env=cluster_env
                )  # fmt: skip
            )

        spawn(ns[0], "scheduler", [str(DASK), "scheduler", "--host", ips[0], "--port",
                                   str(port), "--no-dashboard"])  # fmt: skip
        for i, n in enumerate(ns):
            worker = [str(DASK), "worker", address, "--nthreads", "1", "--resources", "host=1",
                      "--no-dashboard", "--no-nanny", "--host", ips[i]]  # fmt: skip
            spawn(n, f"w{i}", worker)
        f = tmp_path / "split.toml"
        f.write_text(SLOW.replace("count = 60", "count = 10"))
        store = tmp_path / "split.duckdb"
        wait = subprocess.run(
            ["ip", "netns", "exec", ns[0], sys.executable, "-c",
             f"from distributed import Client; c = Client({address!r}, timeout=60); "
             "c.wait_for_workers(2, timeout=60)"],
            capture_output=True, text=True, timeout=START_S * 2, env=cluster_env,
        )  # fmt: skip
        assert wait.returncode == 0, wait.stderr
        driver = subprocess.run(
            ["ip", "netns", "exec", ns[0], sys.executable, "-m", "chainlab", "run", str(f),
             "--store", str(store), "--cluster", address, "--placement", "split"],
            capture_output=True, text=True, timeout=RUN_S, env=cluster_env,
        )  # fmt: skip
        assert driver.returncode == 0, driver.stderr
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        for n in ns:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
    with chainlab.open(store) as st:
        runs = st.query(
            "SELECT scenario_id, status, host->'server'->>'worker' AS server, "
            "host->'client'->>'worker' AS client, host->>'placement' AS placement "
            "FROM scenario_runs"
        )
        samples = st.samples
    assert (runs["status"] == "completed").all() and (runs["placement"] == "split").all()
    for r in runs.to_dict("records"):
        # The server in one namespace, the client in the other.
        assert {
            r["server"].split("//")[1].split(":")[0],
            r["client"].split("//")[1].split(":")[0],
        } == set(ips)
    m = samples[~samples["warmup"]]
    assert m["server_outcome"].notna().all()  # every connection paired with the server's record
    assert (m["bytes_read"] == m["server_bytes_written"]).all()
    assert (m["bytes_written"] == m["server_bytes_read"]).all()
