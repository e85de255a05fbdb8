"""[load]: impossible plans are refused before anything runs, one line each (read as the
commands read a file: the loader, then the steps against the cost model); overrides."""

import os

import pytest

from chainlab.campaign import CampaignError, load
from chainlab.commands import read_campaign

HEAD = """
[campaign]
name = "l"
[aliases]
ml = "ML-DSA-65"
slhs = "SLH-DSA-SHAKE-192s"
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"], ["ml", "slhs"]]
"""


def write(tmp_path, body: str):
    p = tmp_path / "l.toml"
    p.write_text(HEAD + body)
    return p


def problems(tmp_path, body: str) -> list[str]:
    with pytest.raises(CampaignError) as e:
        read_campaign(write(tmp_path, body))
    return e.value.problems


BAD = [
    ("[load]\nrates = [0, 500]\nstep_s = 5", "load.rates[0]: bad value 0; allowed: a number > 0"),
    ("[load]\nfractions = [-0.5]", "load.fractions[0]: bad value -0.5; allowed: a number > 0"),
    (
        "[load]\nfractions = []",
        "load.fractions: expected an array of fractions with at least 1 value, got an empty array",
    ),
    ("[load]\nrates = [100]\nfractions = [1]", "load: give exactly one of `rates`"),
    ("[load]\nstep_s = 5", "load: give exactly one of `rates`"),
    ("[load]\nrates = [500]\nmax_in_flight = 0", "load.max_in_flight: bad value 0; allowed: an"),
    ("[load]\nrates = [500]\nserver_cpus = \"one\"", "load.server_cpus: bad value 'one'; allowed"),
    ("[load]\nrates = [10]\nstep_s = 5", "bad value 10: a 5 s step holds 50"),
    ("[load]\nrates = [500]\ngenerator_cpus = \"4096\"", "load.generator_cpus: bad value '4096'"),
    ("[load]\nrates = [500]\ngenerator_stack = \"gnutls\"", "load.generator_stack: bad value "
     "'gnutls'; allowed: "),
    # At 0.3 of ~0.7/s, a 60 s step holds ~13 attempts of the SLH-DSA-192s leaf.
    ("[load]\nfractions = [0.3]\nstep_s = 60", "load.step_s: bad value 60 for scenario "
     "x25519mlkem768__ml_root__slhs_leaf"),
]  # fmt: skip


@pytest.mark.parametrize("body,fragment", BAD, ids=[b[1][:40] for b in BAD])
@pytest.mark.bad_input
def test_impossible_load_plans_are_one_line_each(tmp_path, body, fragment):
    got = problems(tmp_path, body)
    assert len(got) == 1, got
    assert got[0].startswith(f"{tmp_path / 'l.toml'}: ") and "\n" not in got[0]
    assert fragment in got[0], got[0]


def test_more_cores_than_the_machine_has(tmp_path):
    cores = os.cpu_count()
    got = problems(tmp_path, f'[load]\nrates = [500]\nserver_cpus = "0-{cores}"')
    assert f"CPU {cores} does not exist" in got[0] and f"this machine has {cores}" in got[0]


def test_a_plan_and_its_override_reach_each_scenario(tmp_path):
    c = load(
        write(
            tmp_path,
            "[load]\nfractions = [0.5, 1.0]\nstep_s = 5\n"
            '[[load.override]]\nwhere = { leaf = "slhs" }\nfractions = [1.0]\nstep_s = 200\n',
        )
    )
    ml = c.scenarios["x25519mlkem768__ml_root__ml_leaf"].load
    slh = c.scenarios["x25519mlkem768__ml_root__slhs_leaf"].load
    assert ml.fractions == (0.5, 1.0) and ml.step_s == 5.0
    # Event loops by default, one per server core.
    assert (ml.server_model, ml.server_workers) == ("event", 1)
    assert slh.fractions == (1.0,) and slh.step_s == 200.0
    assert (ml.server_cpus, ml.generator_cpus, ml.arrivals) == ("0", "1", "poisson")


def test_a_generator_stack_is_held_to_what_its_client_can_do(tmp_path):
    # rustls' client verifies no SLH-DSA and runs no QUIC; each is refused by name.
    body = '[load]\nrates = [500]\ngenerator_stack = "rustls"\n'
    got = [p for p in problems(tmp_path, 'transport = ["quic"]\n' + body) if "generator" in p]
    assert any("the generator's stack rustls cannot do QUIC" in p for p in got), got
    assert any("the generator's stack rustls cannot verify SLH-DSA-SHAKE-192s" in p for p in got)
    assert all("load.generator_stack: scenario" in p for p in got), got
    # ML-DSA over TCP: the rustls generator runs.
    (tmp_path / "ok.toml").write_text(HEAD.replace(', ["ml", "slhs"]', "") + body)
    ok = load(tmp_path / "ok.toml")
    assert all(s.load.generator_stack == "rustls" for s in ok.scenarios.values())


def test_a_thread_pool_server_gets_four_workers_per_core(tmp_path):
    c = load(write(tmp_path, '[load]\nrates = [100]\nserver_model = "threads"\n'))
    plan = next(iter(c.scenarios.values())).load
    assert (plan.server_model, plan.server_workers) == ("threads", 4)


def test_the_time_estimate_covers_the_load_steps(tmp_path):
    from chainlab.model import estimate

    base = load(write(tmp_path, ""))
    plan = (
        "[load]\nfractions = [0.5, 1.0]\nstep_s = 5\n"
        '[[load.override]]\nwhere = { leaf = "slhs" }\nstep_s = 300\n'
    )
    with_load = load(write(tmp_path, plan))
    sid = "x25519mlkem768__ml_root__ml_leaf"
    extra = (
        estimate.scenario(with_load.scenarios[sid]).seconds_expected
        - estimate.scenario(base.scenarios[sid]).seconds_expected
    )
    assert extra >= 2 * 5 + 5  # two steps and a capacity measurement, at least
