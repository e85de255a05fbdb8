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


def test_an_unexpected_exception_is_one_line_naming_its_traceback_log(monkeypatch, capsys):
    """The outermost handler: a fault of chainlab's own (injected here into `validate`) is
    one line with exit status 1 and the path of a log holding the traceback, never a
    traceback on screen."""
    from chainlab.commands import validate

    def broken(args):
        raise RuntimeError("injected fault\nwith a second line")

    monkeypatch.setattr(validate, "run", broken)
    assert main(["validate", str(REPO / "campaigns" / "quick.toml")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith("chainlab: internal error: RuntimeError: injected fault")
    assert "Traceback" not in line and "the traceback is in " in line
    log = Path(line.rsplit("the traceback is in ", 1)[1].rstrip(")"))
    try:
        text = log.read_text()
        assert "Traceback (most recent call last)" in text and "injected fault" in text
        assert "command: chainlab validate" in text
    finally:
        log.unlink()


def test_an_import_time_fault_is_caught_too(monkeypatch, capsys):
    """A command module that fails to load is the same one line."""
    import importlib

    real = importlib.import_module

    def failing(name, *a, **kw):
        if name == "chainlab.commands.export":
            raise ImportError("injected: no such module")
        return real(name, *a, **kw)

    monkeypatch.setattr(importlib, "import_module", failing)
    assert main(["validate", str(REPO / "campaigns" / "quick.toml")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error: ImportError: injected" in err[0]
    Path(err[0].rsplit("the traceback is in ", 1)[1].rstrip(")")).unlink()


def test_a_run_says_which_scenarios_failed_and_why_in_its_exit_status(capsys):
    """0 every scenario completed, 3 some failed, 4 none completed, 130 interrupted; each
    failed scenario named with its cause (README, "Exit status")."""
    from chainlab.commands.run import SHOWN_FAILURES, run_status
    from chainlab.runner.campaign import RunSummary

    def summary(completed, failed, interrupted=False):
        s = RunSummary("r", Path("s.duckdb"), completed, failed, [], interrupted, 1.0, 1.0)
        s.failures = {sid: f"server_exited: the server of {sid} exited" for sid in failed}
        return s

    assert run_status(summary(["a", "b"], [])) == 0
    assert capsys.readouterr().err == ""
    assert run_status(summary(["a"], ["b"])) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "chainlab: failed: b: server_exited: the server of b exited"
    assert "1 of 2 scenarios failed (exit status 3)" in err[-1]
    assert run_status(summary([], ["a", "b"])) == 4
    assert "no scenario completed (exit status 4)" in capsys.readouterr().err
    many = [f"s{i}" for i in range(SHOWN_FAILURES + 5)]
    assert run_status(summary([], many)) == 4
    err = capsys.readouterr().err.splitlines()
    assert sum(ln.startswith("chainlab: failed: s") for ln in err) == SHOWN_FAILURES
    assert "5 more; `chainlab report s.duckdb` lists every one" in "\n".join(err)
    assert run_status(summary(["a"], ["b"], interrupted=True)) == 130


@pytest.mark.bad_input
def test_an_unknown_option_is_refused_with_its_commands_usage(main):
    """An option the subcommand does not take is named with that subcommand's usage, not
    the top level's `chainlab COMMAND ...`."""
    out = main("probe", "--connect", "127.0.0.1:443")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("usage: chainlab probe ")
    last = out.stderr.strip().splitlines()[-1]
    assert last == (
        "chainlab probe: error: unrecognized arguments: --connect "
        "(its options: chainlab probe --help)"
    ), out.stderr
