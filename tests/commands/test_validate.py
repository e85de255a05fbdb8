"""`chainlab validate` as a new user meets it: what it counts, what it suggests, and a bad
option refused before anything is printed."""

import textwrap
from pathlib import Path

import pytest

from chainlab.schema import allowed, counted, edits

REPO = Path(__file__).resolve().parents[2]
ONE = """
[campaign]
name = "one"
[sampling]
mode = "fixed"
count = 5
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
"""


def validate(main, *args):
    return main("validate", *args, cwd=REPO)


def test_one_scenario_is_counted_in_the_singular(tmp_path, main):
    f = tmp_path / "one.toml"
    f.write_text(textwrap.dedent(ONE))
    out = validate(main, str(f))
    assert out.returncode == 0, out.stderr
    assert "campaign 'one', 1 scenario (campaigns: one (1))" in out.stdout
    assert "1 scenarios" not in out.stdout
    assert counted(1, "scenario") == "1 scenario" and counted(2, "scenario") == "2 scenarios"


@pytest.mark.bad_input
def test_workers_is_refused_before_the_plan_is_printed(tmp_path, main):
    f = tmp_path / "one.toml"
    f.write_text(textwrap.dedent(ONE))
    out = validate(main, str(f), "--workers", "0")
    assert out.returncode == 2
    assert out.stdout == ""
    assert "--workers 0: allowed: at least 1" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_suggested_command_names_the_file_as_given(tmp_path, main, monkeypatch):
    # No primitives cached for this machine: the built-in table, and a command to measure.
    empty = str(tmp_path / "cache")
    monkeypatch.setenv("XDG_CACHE_HOME", empty)
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", empty)
    out = validate(main, "campaigns/quick.toml")
    assert out.returncode == 0, out.stderr
    assert "`chainlab predict campaigns/quick.toml`" in out.stdout


def test_did_you_mean_names_the_closest_spelling():
    algs = ["SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-192f", "SLH-DSA-SHAKE-256f"]
    assert "(did you mean 'SLH-DSA-SHAKE-128f'?)" in allowed(algs, "SLH-DSA-SHAKE-129f")
    assert "(did you mean 'SLH-DSA-SHAKE-192f'?)" in allowed(algs, "slh-dsa-shake-192F")
    assert "did you mean" not in allowed(algs, "ECDSA")
    assert edits("129f", "128f") == 1 and edits("129f", "192f") == 2 and edits("", "ab") == 2


def test_a_misspelled_alias_is_one_problem_with_the_closest_suggestion(tmp_path, main):
    f = tmp_path / "typo.toml"
    f.write_text(
        textwrap.dedent(ONE)
        .replace("[sampling]", '[aliases]\nslh = "SLH-DSA-SHAKE-129f"\n[sampling]')
        .replace('"ML-DSA-44", "ML-DSA-44"', '"slh", "ML-DSA-44"')
    )
    out = validate(main, str(f))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "aliases.slh: unknown algorithm 'SLH-DSA-SHAKE-129f'" in lines[0]
    assert "(did you mean 'SLH-DSA-SHAKE-128f'?)" in lines[0]
