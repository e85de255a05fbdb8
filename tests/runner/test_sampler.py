"""The stopping rule on synthetic latencies: no engine, no clock."""

import numpy as np
import pytest

from chainlab.campaign.model import SamplingPolicy
from chainlab.runner import sampler
from chainlab.runner.sampler import decide, predicted_count
from chainlab.stats import relative_halfwidth


def policy(**kw) -> SamplingPolicy:
    base = dict(
        mode="adaptive",
        count=1000,
        target_rel_halfwidth=0.01,
        confidence=0.95,
        min=20,
        max=5000,
        time_cap_s=None,
        warmup=0,
        batch_warmup=0,
        timeout_ms=10000,
        max_failed_fraction=0.5,
    )
    base.update(kw)
    return SamplingPolicy(**base)


def simulate(p: SamplingPolicy, draw, seconds_per_handshake=0.001):
    """Drives `decide` like the runner does; returns (values, reason, batches)."""
    values: list[float] = []
    batches = 0
    elapsed = 0.0
    while True:
        d = decide(p, values, len(values), 0, elapsed, seconds_per_handshake)
        if d.stop:
            return values, d.reason, batches
        assert d.batch >= 1
        values.extend(draw(d.batch))
        elapsed += d.batch * seconds_per_handshake
        batches += 1
        assert batches < 100, "the rule must converge in few batches"


def test_low_variance_stops_early_at_min():
    rng = np.random.default_rng(1)
    values, reason, batches = simulate(policy(), lambda k: rng.normal(1400.0, 7.0, k))  # CV 0.5 %
    assert reason == "ci_target"
    assert len(values) == 20 and batches == 1
    assert relative_halfwidth(values) <= 0.01


def test_moderate_variance_stops_near_the_predicted_count():
    rng = np.random.default_rng(2)
    values, reason, _ = simulate(policy(), lambda k: rng.normal(2.0, 0.4, k))  # CV 20 %
    assert reason == "ci_target"
    # (1.96 * 0.20 / 0.01)^2 = 1537: the rule stops once the interval is narrow enough,
    # not long after (at most one batch's growth past it).
    assert 1200 <= len(values) <= 3200
    assert relative_halfwidth(values) <= 0.01


def test_high_variance_runs_to_max():
    rng = np.random.default_rng(3)
    values, reason, _ = simulate(policy(max=3000), lambda k: rng.lognormal(0.0, 1.5, k))
    assert reason == "max_count"
    assert len(values) == 3000  # never past max
    assert relative_halfwidth(values) > 0.01


def test_time_cap_stops_and_bounds_batches():
    rng = np.random.default_rng(4)
    p = policy(time_cap_s=2.0, max=100000)
    values, reason, _ = simulate(p, lambda k: rng.lognormal(0.0, 1.5, k), 0.01)
    assert reason == "time_cap"
    assert len(values) <= 2.0 / 0.01  # batches were cut to the time left


def test_fixed_mode_runs_exactly_count():
    rng = np.random.default_rng(5)
    values, reason, batches = simulate(
        policy(mode="fixed", count=300), lambda k: rng.normal(5, 1, k)
    )
    assert (len(values), reason, batches) == (300, "fixed_count", 1)


def test_failures_above_the_fraction_stop_as_failed():
    p = policy()
    assert decide(p, [1.0] * 4, 10, 6, 0.0, 0.001).reason == "failed"
    assert decide(p, [1.0] * 6, 10, 4, 0.0, 0.001).reason is None


def test_batches_grow_at_most_geometrically():
    p = policy(min=10, max=10**6)
    rng = np.random.default_rng(6)
    values = list(rng.lognormal(0, 1.0, 10))
    d = decide(p, values, 10, 0, 0.0, 0.001)
    assert 1 <= d.batch <= (sampler.SAMPLE_GROWTH - 1) * 10  # n grows at most 4-fold


@pytest.mark.parametrize("cv", [0.05, 0.2])
def test_predicted_count_matches_the_formula(cv):
    rng = np.random.default_rng(7)
    x = rng.normal(1.0, cv, 5000)
    n_star = predicted_count(list(x), policy())
    expected = (1.96 * x.std(ddof=1) / (0.01 * x.mean())) ** 2  # z ~ t at n = 5000
    assert abs(n_star - expected) <= 1 + 0.005 * expected


def test_a_settled_sample_goes_straight_to_the_predicted_count():
    p = policy(min=10, max=10**6)
    rng = np.random.default_rng(7)
    values = list(rng.normal(2.0, 0.4, sampler.SETTLED_N))  # CV 20 %: n* about 1537
    d = decide(p, values, len(values), 0, 0.0, 0.001)
    assert d.batch == predicted_count(values, p) - len(values)
    assert d.batch > 0
    # Below it, the batch at most quadruples the sample.
    few = values[:200]
    assert decide(p, few, 200, 0, 0.0, 0.001).batch == 600
