"""`chainlab report` on the command line: outputs, overrides and one-line errors."""

import pytest
from synthetic import SyntheticScenario, build_store

from chainlab.cli import main

SLH = "SLH-DSA-SHAKE-192s"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    # One scenario keeps the report (and the test) quick; its campaign file names no
    # baseline, so the command line must supply it.
    return build_store(d / "run.duckdb", [SyntheticScenario(n=30, leaf_alg=SLH)])


def test_report_writes_beside_the_store_with_overrides(store, capsys, figures):
    argv = [
        "report",
        str(store),
        "--price-per-vcpu-hour",
        "2",
        "--baseline",
        "x25519mlkem768__ml_root__ml_int__slh_leaf",
    ]
    assert main(argv) == 0
    out = store.with_name("run-report")
    assert (out / "index.html").is_file() and (out / "report.md").is_file()
    assert (out / "tables" / "scenarios.csv").is_file()
    assert (out / "figures" / "mean_latency.png").is_file()
    assert (out / "figures" / "mean_latency.svg").is_file()
    assert str(out / "index.html") in capsys.readouterr().out
    md = (out / "report.md").read_text()
    assert "Baseline: `x25519mlkem768__ml_root__ml_int__slh_leaf` (source: command line)" in md
    assert "| `price_per_vcpu_hour` | 2 (cost units, illustrative) | command line |" in md


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--baseline", "nope"], "--baseline nope: not a successful scenario of"),
        (["--heavy-family", "lms"], "command line: heavy_family: bad value 'lms'; allowed"),
        (["--price-per-vcpu-hour", "-1"], "price_per_vcpu_hour: bad value -1.0; allowed: a"),
        (["--bootstrap-resamples", "5"], "allowed: an integer 200 to 100000"),
    ],
)
@pytest.mark.bad_input
def test_bad_options_exit_2_with_one_line(store, tmp_path, capsys, argv, message):
    assert main(["report", str(store), "--out", str(tmp_path / "r"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.bad_input
def test_missing_store(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.duckdb")]) == 2
    assert "no store at" in capsys.readouterr().err


@pytest.mark.bad_input
def test_refuses_a_folder_that_is_not_a_report(store, tmp_path, capsys):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    assert main(["report", str(store), "--out", str(other)]) == 2
    assert "holds no chainlab report" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "keep me"
