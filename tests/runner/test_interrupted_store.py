"""What a store is left with by a run stopped early, and what --resume may continue: a run
stopped before its first scenario ended (Ctrl-C at the first progress line) leaves a store
that reports it holds nothing yet, in one line, and resumes; another campaign file is not
appended to it (issue #39)."""

import signal
import subprocess
import textwrap

import pytest

import chainlab

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
name = "stopped"
[sampling]
mode = "fixed"
count = 200
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
"""


def test_interrupted_before_the_first_scenario_reports_nothing_yet_and_resumes(
    tmp_path, engine_bin, pki_cache, cli
):
    toml = tmp_path / "stopped.toml"
    toml.write_text(textwrap.dedent(CAMPAIGN))
    store = tmp_path / "stopped.duckdb"
    run = ["run", str(toml), "--store", str(store)]
    p = cli.popen(*run, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The first progress line comes before the first scenario starts (primitives, or the
    # plan): interrupt there, as a user's Ctrl-C would.
    first = p.stderr.readline()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert first and p.returncode == 130, first + err
    with chainlab.open(store) as st:
        assert st.scenario_runs.empty, "the scenario did not end before the interrupt"
    report = cli("report", store, "--out", tmp_path / "r", timeout=120)
    assert report.returncode == 2, report
    lines = report.stderr.strip().splitlines()
    assert len(lines) == 1 and "holds no finished scenario yet" in lines[0], report.stderr
    assert "--resume" in lines[0]
    assert not (tmp_path / "r").exists()
    again = cli(*run, "--resume")
    assert again.returncode == 0, again.stderr
    with chainlab.open(store) as st:
        assert len(st.scenario_runs) == 1


@pytest.mark.bad_input
def test_resume_with_another_campaign_file_is_refused_naming_both(
    tmp_path, engine_bin, pki_cache, cli
):
    first, other = tmp_path / "first.toml", tmp_path / "other.toml"
    first.write_text(textwrap.dedent(CAMPAIGN).replace("count = 200", "count = 3"))
    other.write_text(
        textwrap.dedent(CAMPAIGN).replace("count = 200", "count = 3").replace("X25519", "P-256")
    )
    store = tmp_path / "s.duckdb"

    def run(toml, *extra):
        return cli("run", toml, "--store", store, *extra)

    assert run(first).returncode == 0
    refused = run(other, "--resume")
    assert refused.returncode == 2, refused
    line = refused.stderr.strip().splitlines()
    assert len(line) == 1 and "first.toml" in line[0] and "other.toml" in line[0], line
    with chainlab.open(store) as st:
        assert len(st.runs) == 1 and len(st.scenarios) == 1, "nothing appended"
    assert run(first, "--resume").returncode == 0
