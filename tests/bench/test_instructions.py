"""bench instructions --stores: two runs' instruction counts side by side."""

import shutil
from pathlib import Path

import duckdb

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
    assert "server instructions over the baseline's: 0.0000%" in out
    # A version-9 store's handshakes drew the system's random bytes.
    assert "random bytes of the counted handshakes: system / system" in out


def test_a_changed_count_shows_as_the_difference_between_runs(tmp_path, capsys):
    other = tmp_path / "other.duckdb"
    shutil.copy(KEPT, other)
    con = duckdb.connect(str(other))
    con.execute(
        "UPDATE instruction_samples SET server_instructions = server_instructions * 1.5 "
        "WHERE scenario_id = 'x25519mlkem768__ml_root__slhf_leaf'"
    )
    con.close()
    instructions.compare_runs(KEPT, other)
    out = capsys.readouterr().out
    slh = next(line for line in out.splitlines() if "__slhf_leaf:" in line)
    assert "(+50.0000%, det.)" in slh, slh
    assert "largest run-to-run difference of a deterministic side: 50.0000%" in out
    assert "(+50.0000%)" in slh.split("server / baseline")[1], slh
    assert "server instructions over the baseline's: 50.0000%" in out
