"""The cost model checked in instructions: primitives' counts plus an overhead line fitted
on the other scenarios (leave-one-out)."""

import math
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
    assert keys[("openssl-3.5", "SLH-DSA-SHAKE-128f", "sign", "cv")].engine == "openssl-3.5"
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
    counts = {k: 1.0 for k in keys if k[1] != "SLH-DSA-SHAKE-128f"}
    m = cost_instructions.per_scenario(summary, counts)
    assert "x25519mlkem768__ml_root__slhf_leaf" not in set(m["scenario_id"])


def test_each_side_is_priced_as_its_stack_runs_it_with_its_stacks_own_line(summary):
    """Two scenarios on rustls: their ML-DSA priced with aws-lc's counts (the rustls engine
    times them), their overhead line fitted on each other only; the OpenSSL one alone on
    its stack has no line to predict with."""
    rustls = ["x25519mlkem768__ml_root__ml_int__ml_leaf", "x25519mlkem768__ml_root__slhf_leaf"]
    mixed = summary.copy()
    mixed.loc[mixed["scenario_id"].isin(rustls), ["client_stack", "server_stack"]] = "rustls"
    keys = cost_instructions.needed(mixed)
    assert keys[("aws-lc", "ML-DSA-44", "sign", "cv")].engine == "rustls"
    assert ("openssl-3.5", "ML-DSA-44", "sign", "cv") in keys  # the OpenSSL scenario's
    counts = {k: 2_000_000.0 if k[0] == "aws-lc" else 1_000_000.0 for k in keys}
    m = cost_instructions.per_scenario(mixed, counts).set_index("scenario_id")
    assert list(m.loc[rustls, "server_stack"]) == ["rustls", "rustls"]
    # The depth-3 ML-DSA-44 chain's rustls server signs once (aws-lc) and encapsulates once.
    encaps = counts[keys_of(keys, "X25519MLKEM768", "encaps", "rustls")]
    assert m.at[rustls[0], "server_primitives"] == 2_000_000 + encaps
    # Each rustls scenario's overhead is the other's residual (one other: a flat line).
    a, b = rustls
    assert m.at[a, "server_predicted"] == pytest.approx(
        m.at[a, "server_primitives"] + m.at[b, "server_residual"]
    )
    alone = "x25519mlkem768__ml_root__ml_leaf"
    assert math.isnan(m.at[alone, "server_predicted"])
    per = cost_instructions.per_stack(m.reset_index())
    assert set(per["stack"]) == {"rustls"} and set(per["n"]) == {2}


def keys_of(keys, subject, op, engine):
    [key] = [k for k, t in keys.items() if k[1:3] == (subject, op) and t.engine == engine]
    return key
