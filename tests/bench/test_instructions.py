"""bench instructions --stores: two runs' instruction counts side by side."""

from pathlib import Path

from chainlab.bench import instructions

KEPT = Path(__file__).parents[1] / "data" / "stores" / "v9-instructions.duckdb"


def test_a_run_against_itself_differs_by_nothing(capsys):
    instructions.compare_runs(KEPT, KEPT)
    out = capsys.readouterr().out
    assert "x25519mlkem768__ml_root__slhf_leaf: server" in out
    # The SLH-DSA leaf's signing is one code path: deterministic within the run.
    slh = next(line for line in out.splitlines() if "__slhf_leaf:" in line)
    assert "det." in slh and "server / baseline" in slh
    assert "largest run-to-run difference of a deterministic side: 0.0000%" in out
