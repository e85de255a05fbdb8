"""[measure]: instruction counts under callgrind, read from a campaign file with overrides,
validated with one-line errors, and in the run-time estimate."""

import textwrap

import pytest

from chainlab.campaign import CampaignError, load
from chainlab.model import estimate

HEAD = """
[campaign]
name = "m"

[sampling]
mode = "fixed"
count = 5

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"], ["ML-DSA-44", "SLH-DSA-SHAKE-128f"]]
"""


def write(tmp_path, text):
    p = tmp_path / "m.toml"
    p.write_text(textwrap.dedent(HEAD + text))
    return p


def test_a_plan_per_scenario_with_its_overrides(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            [measure]
            instructions = "callgrind"
            count = 4
            [[measure.override]]
            where = { leaf = "SLH-DSA-SHAKE-128f" }
            count = 1
            warmup = 0
            """,
        )
    )
    plans = {sid.split("__")[-1]: s.measure for sid, s in c.scenarios.items()}
    assert (plans["mldsa44_leaf"].count, plans["mldsa44_leaf"].warmup) == (4, 1)
    assert (plans["slhdsashake128f_leaf"].count, plans["slhdsashake128f_leaf"].warmup) == (1, 0)
    # Counting adds its time to the estimate.
    s = c.scenarios["x25519mlkem768__mldsa44_root__mldsa44_leaf"]
    plain = load(write(tmp_path, "")).scenarios[s.scenario_id]
    assert estimate.scenario(s).seconds_expected > estimate.scenario(plain).seconds_expected + 2


def test_without_measure_nothing_is_counted(tmp_path):
    c = load(write(tmp_path, '[measure]\ninstructions = "none"\n'))
    assert all(s.measure is None for s in c.scenarios.values())


@pytest.mark.parametrize(
    "text,fragment",
    [
        ('[measure]\ninstructions = "perf"', "measure.instructions"),
        ('[measure]\ninstructions = "callgrind"\ncount = 0', "measure.count"),
        ('[measure]\ninstructions = "callgrind"\nruns = 2', "measure"),
        ('[measure]\ninstructions = "callgrind"\nrandom = "fixed"', "measure.random"),
        (
            '[measure]\ninstructions = "callgrind"\n[[measure.override]]\ncount = 2',
            "measure.override[0].where",
        ),
    ],
)
@pytest.mark.bad_input
def test_bad_measure_tables_name_the_key(tmp_path, text, fragment):
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    assert fragment in str(e.value), str(e.value)


def test_quic_scenarios_cannot_be_counted(tmp_path):
    text = 'transport = ["quic"]\n[measure]\ninstructions = "callgrind"\n'
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    assert "instruction counts with transport 'quic'" in str(e.value)


@pytest.mark.bad_input
def test_seeded_random_bytes_are_read_and_refused_where_a_stack_cannot_seed(tmp_path):
    c = load(write(tmp_path, '[measure]\ninstructions = "callgrind"\nrandom = "seeded"\n'))
    assert {s.measure.random for s in c.scenarios.values()} == {"seeded"}
    plain = load(write(tmp_path, '[measure]\ninstructions = "callgrind"\n'))
    assert {s.measure.random for s in plain.scenarios.values()} == {"system"}
    text = 'stack = ["rustls"]\n[measure]\ninstructions = "callgrind"\nrandom = "seeded"\n'
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    msg = str(e.value)
    assert "measure.random" in msg and "missing capability: seeded_random" in msg, msg
    assert "allowed: random = 'system'" in msg, msg
