"""The `chainlab` command line: dispatch, exit codes, one-line errors."""

from pathlib import Path

import pytest

from chainlab.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("validate", "run", "export", "report", "bench"):
        assert cmd in out


def test_validate_prints_scenarios_and_an_estimate(capsys):
    assert main(["validate", str(REPO / "campaigns" / "signature-placement.toml")]) == 0
    out = capsys.readouterr().out
    assert "15 scenarios" in out
    assert "x25519mlkem768__slh_root__ml_int__ml_leaf" in out
    assert "estimated run time:" in out
    assert "shared by several campaigns and run once" in out


def test_validate_one_campaign(capsys):
    assert main(["validate", str(REPO / "campaigns" / "signature-placement.toml"),
                 "--campaign", "A"]) == 0  # fmt: skip
    assert "4 scenarios" in capsys.readouterr().out
    assert main(["validate", str(REPO / "campaigns" / "quick.toml"), "--campaign", "E"]) == 2
    assert "no campaign 'E'; allowed: kex, depth" in capsys.readouterr().err


@pytest.mark.bad_input
def test_missing_inputs_are_one_line_errors(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.toml: cannot read campaign file" in err[0]
    assert main(["export", str(tmp_path / "nope.duckdb")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no store at" in err[0]


@pytest.mark.bad_input
def test_run_refuses_an_existing_store_without_resume(tmp_path, capsys):
    store = tmp_path / "s.duckdb"
    store.write_bytes(b"")
    assert main(["run", str(REPO / "campaigns" / "quick.toml"), "--store", str(store)]) == 2
    assert "pass --resume to continue it" in capsys.readouterr().err


def test_module_entry_point_exit_status(tmp_path, cli):
    out = cli("validate", tmp_path / "x.toml", timeout=60)
    assert out.returncode == 2 and out.stderr.startswith("chainlab: error: ")
