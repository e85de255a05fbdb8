"""A run or a report killed at any moment leaves nothing chainlab cannot read (issue #39):
SIGINT, SIGTERM and SIGKILL at points taken from the run's own progress lines (measuring
primitives, a load step, the second scenario) and from the report's own output (its first
figure written): the store opens, reports what it holds (or says in one line that it holds
nothing yet), and resumes to the end; no engine process outlives the run; a report stopped
midway leaves no report folder, and the next report writes a whole one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

import chainlab

from .conftest import engine_processes

pytestmark = pytest.mark.slow

# Primitives at a wide target and a short cap: what is stopped and resumed is the measuring,
# not its precision. One offered load step after the capacity steps is a load step to stop
# in, as two were.
CAMPAIGN = """
[campaign]
name = "killed"
order = "declared"
[primitives]
target_rel_halfwidth = 0.2
time_cap_s = 0.3
[sampling]
mode = "fixed"
count = 5
warmup = 1
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"], ["ML-DSA-44", "ML-DSA-65"]]
[load]
fractions = [0.5]
step_s = 1
capacity_s = 1
search_steps = 0
"""
# Where to stop, as the run's standard error says it is there.
MOMENTS = {
    "primitives": lambda line: line.startswith("chainlab: primitives: ") and "operations" in line,
    # The first load step after the capacity steps (their number varies: the offer doubles
    # while the server keeps up).
    "load step": lambda line: re.search(r": load step \d+: offering", line) is not None,
    "second scenario": lambda line: line.startswith("[1/2]"),
}
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
# Bounds: a tiny run reaches any moment in well under this; a stopped one ends at once.
REACH_S = 240
END_S = 120


def stop_at(cli, args, env, moment, sig) -> tuple[subprocess.Popen, str]:
    """Start `chainlab args`, read its standard error until `moment`'s line, send `sig`,
    wait."""
    p = cli.popen(*args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + REACH_S
    seen = []
    try:
        while time.monotonic() < deadline:
            line = p.stderr.readline()
            if not line:
                pytest.fail(f"the run ended before {moment!r}:\n{''.join(seen)}")
            seen.append(line)
            if MOMENTS[moment](line):
                break
        else:
            pytest.fail(f"{moment!r} not reached in {REACH_S} s")
        p.send_signal(sig)
        p.stderr.read()
        p.wait(timeout=END_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p, "".join(seen)


def no_engine_left(marker: str) -> None:
    """Engines die with the run (SIGKILL: by their parent-death signal, at once)."""
    deadline = time.monotonic() + 15
    while engine_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engine_processes(marker) == []


@pytest.fixture(scope="module")
def warm_primitives(tmp_path_factory):
    """A primitives cache the moments after the primitives share (each resume reads it)."""
    return tmp_path_factory.mktemp("primitives")


@pytest.mark.parametrize(
    "moment,sig",
    [
        ("primitives", "SIGINT"),
        ("primitives", "SIGKILL"),
        ("load step", "SIGINT"),
        ("load step", "SIGTERM"),
        ("load step", "SIGKILL"),
        ("second scenario", "SIGTERM"),
        ("second scenario", "SIGKILL"),
    ],
)
def test_a_run_stopped_at_any_moment_reports_and_resumes(
    tmp_path, engine_bin, pki_cache, warm_primitives, moment, sig, cli
):
    toml = tmp_path / "killed.toml"
    toml.write_text(textwrap.dedent(CAMPAIGN))
    store = tmp_path / "killed.duckdb"
    env = dict(os.environ)
    # Measuring primitives is a moment only where the cache holds none.
    cache = tmp_path / "primitives" if moment == "primitives" else warm_primitives
    env["CHAINLAB_PRIMITIVES_CACHE"] = str(cache)
    # The run's work directory goes where this test sees it.
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    args = ["run", str(toml), "--store", str(store)]
    p, seen = stop_at(cli, args, env, moment, SIGNALS[sig])
    if sig == "SIGKILL":
        assert p.returncode == -signal.SIGKILL
    else:
        assert p.returncode == 130, seen
    no_engine_left(str(pki_cache))
    # Only a SIGKILL leaves the work directory behind; the next run removes it.
    left = list((tmp_path / "tmp").glob("chainlab-run-*"))
    assert len(left) == (1 if sig == "SIGKILL" else 0), left

    # The store opens and says what it holds.
    with chainlab.open(store) as st:
        done = int((st.scenario_runs["status"] == "completed").sum()) if len(st.runs) else 0
    out = cli("report", str(store), "--out", str(tmp_path / "r"), env=env)
    if done:
        assert out.returncode == 0, out.stderr
    else:
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr
        assert "holds no finished scenario yet" in lines[0] and "--resume" in lines[0]
    # And resumes to the end.
    again = cli(*args, "--resume", env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
    assert ("removed 1 work directory of killed runs" in again.stderr) == (sig == "SIGKILL")
    with chainlab.open(store) as st:
        completed = st.scenario_runs[st.scenario_runs["status"] == "completed"]
        assert sorted(completed["scenario_id"]) == sorted(set(st.scenarios["scenario_id"]))
        assert len(completed) == 2
    no_engine_left(str(pki_cache))


@pytest.fixture(scope="module")
def finished_store(tmp_path_factory, engine_bin, pki_cache, warm_primitives, cli):
    d = tmp_path_factory.mktemp("finished")
    toml = d / "done.toml"
    toml.write_text(textwrap.dedent(CAMPAIGN).split("[load]")[0])
    store = d / "done.duckdb"
    env = {**os.environ, "CHAINLAB_PRIMITIVES_CACHE": str(warm_primitives)}
    out = cli("run", str(toml), "--store", str(store), env=env)
    assert out.returncode == 0, out.stderr
    return store


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_report_stopped_midway_leaves_no_report_folder(
    tmp_path, finished_store, sig, cli, figures
):
    out_dir = tmp_path / "report"
    p = cli.popen(
        "report", finished_store, "--out", out_dir, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    # The report's progress: its first figure in the folder it builds.
    deadline = time.monotonic() + REACH_S
    partial = []
    while time.monotonic() < deadline and p.poll() is None:
        partial = list(tmp_path.glob(".report.partial-*/figures/*.svg"))
        if partial:
            break
        time.sleep(0.01)
    assert partial, "the report wrote no figure before it ended"
    p.send_signal(SIGNALS[sig])
    p.communicate(timeout=END_S)
    assert p.returncode == (-signal.SIGKILL if sig == "SIGKILL" else 130), p.returncode
    assert not out_dir.exists(), "nothing half-written where the report goes"
    left = list(tmp_path.glob(".report.partial-*"))
    assert left == [] if sig != "SIGKILL" else len(left) == 1
    # The next report is whole and removes what a killed one left.
    again = cli("report", str(finished_store), "--out", str(out_dir))
    assert again.returncode == 0, again.stderr
    assert (out_dir / "index.html").exists() and list((out_dir / "figures").glob("*.svg"))
    assert list(tmp_path.glob(".report.partial-*")) == []
    with chainlab.open(finished_store) as st:
        assert len(st.scenario_runs) == 2


def test_the_report_folder_replaced_in_place_keeps_what_is_not_a_report_file(
    tmp_path, finished_store, cli
):
    out_dir = tmp_path / "r"
    assert cli("report", str(finished_store), "--out", str(out_dir)).returncode == 0
    (out_dir / "notes.txt").write_text("mine")
    stale = out_dir / "tables" / "gone.csv"
    stale.write_text("x")
    assert cli("report", str(finished_store), "--out", str(out_dir)).returncode == 0
    assert (out_dir / "notes.txt").read_text() == "mine"
    assert not stale.exists() and (out_dir / "index.html").exists()
    assert list(Path(tmp_path).glob(".r.partial-*")) == []
