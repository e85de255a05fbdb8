"""The cost model checked in instructions: primitives' counts plus an overhead line fitted
on the other scenarios (leave-one-out)."""

from pathlib import Path

import pytest

from chainlab.analysis import cost_instructions
from chainlab.analysis.analyze import analyze

KEPT = Path(__file__).parents[1] / "data" / "stores" / "v9-instructions.duckdb"


@pytest.fixture(scope="module")
def summary():
    return analyze(KEPT).summary


def test_every_counted_scenario_is_priced_and_its_own_count_is_left_out(summary):
    keys = cost_instructions.needed(summary)
    assert ("SLH-DSA-SHAKE-128f", "sign", "cv") in keys
    counts = {k: 1_000_000.0 for k in keys}
    m = cost_instructions.per_scenario(summary, counts).set_index("scenario_id")
    assert len(m) == 3
    assert (m["server_primitives"] > 0).all() and (m["client_residual"].notna()).all()
    # Moving one scenario's measurement moves every prediction but its own.
    sid = "x25519mlkem768__ml_root__slhf_leaf"
    moved = summary.copy()
    moved.loc[moved["scenario_id"] == sid, "server_instr"] *= 3
    m2 = cost_instructions.per_scenario(moved, counts).set_index("scenario_id")
    assert m2.at[sid, "server_predicted"] == pytest.approx(m.at[sid, "server_predicted"])
    others = [s for s in m.index if s != sid]
    assert (m2.loc[others, "server_predicted"] != m.loc[others, "server_predicted"]).all()


def test_a_missing_primitive_leaves_the_scenario_out(summary):
    keys = cost_instructions.needed(summary)
    counts = {k: 1.0 for k in keys if k[0] != "SLH-DSA-SHAKE-128f"}
    m = cost_instructions.per_scenario(summary, counts)
    assert "x25519mlkem768__ml_root__slhf_leaf" not in set(m["scenario_id"])
