"""What a run spends outside its handshakes, at the host's speed (chainlab.model.orchestration):
scaled by the model's host reading, and so in a scenario's estimate."""

from dataclasses import replace
from pathlib import Path

import pytest

from chainlab.axes.handshake import view
from chainlab.campaign import load
from chainlab.model import cost, estimate, host_speed, orchestration

REPO = Path(__file__).resolve().parents[2]


def model(host_ns: float | None) -> cost.CostModel:
    return replace(cost.CostModel({}, {}, "test", {}), host_ns=host_ns)


def test_the_costs_scale_with_the_host_reading_and_a_link_s_do_not():
    assert orchestration.factor(None) == 1.0
    assert orchestration.factor(model(None)) == 1.0
    at, slow = model(orchestration.READING_NS), model(2 * orchestration.READING_NS)
    assert orchestration.factor(at) == pytest.approx(1.0)
    assert orchestration.factor(slow) == pytest.approx(2.0)
    assert orchestration.scenario_s(at, False) == pytest.approx(orchestration.SCENARIO_S)
    assert orchestration.scenario_s(slow, True) == pytest.approx(
        2 * orchestration.SCENARIO_S + orchestration.LINK_S
    )
    # The first batch's start is the scenario's; each one after it and each record costs.
    assert orchestration.batches_s(at, 1, 0) == 0.0
    assert orchestration.batches_s(slow, 3, 100) == pytest.approx(
        2 * (2 * orchestration.BATCH_S + 100 * orchestration.RECORD_S)
    )


def test_a_scenario_on_a_host_twice_as_slow_pays_twice_its_orchestration():
    """interop.toml's scenarios: one batch of 20 handshakes and 2 warm-ups each."""
    s = next(iter(load(REPO / "campaigns" / "interop.toml").scenarios.values()))
    at = model(orchestration.READING_NS)
    slow = host_speed.at_speed(at, 2.0)
    assert slow.host_ns == pytest.approx(2 * orchestration.READING_NS)
    n = s.sampling.count + s.sampling.warmup

    def outside(m: cost.CostModel) -> float:
        handshakes = n * estimate.network_cost(s, m).mean_ms / 1000
        gaps = n * estimate.between_attempts_ms(s, view(s), s.handshake.stacks[0]) / 1000
        return estimate.scenario(s, m).seconds_expected - handshakes - gaps

    once = orchestration.SCENARIO_S + n * orchestration.RECORD_S
    assert outside(at) == pytest.approx(once)
    assert outside(slow) == pytest.approx(2 * once)
