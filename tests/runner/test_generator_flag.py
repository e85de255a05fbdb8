"""When a load step's generator is called the limit (chainlab.runner.load.generator_notes):
for its CPU, or for scheduling lag that delayed attempts, never for a few milliseconds of lag
beside a slow handshake."""

import pytest

from chainlab.runner.load import generator_notes

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def test_lag_beside_a_slow_handshake_is_no_limit():
    # The SLH-DSA-128f leaf at 16.5/s: 8 ms of p99 lag, 120 ms of p99 latency, an idle core.
    assert generator_notes(0.05, 1, 8e6, 120e6) == []


def test_lag_that_is_a_tenth_of_the_latency_is_the_limit_and_says_so():
    assert generator_notes(0.3, 1, 8e6, 20e6) == [
        "p99 scheduling lag 8.0 ms, 40% of the p99 latency 20.0 ms"
    ]


def test_a_busy_generator_is_the_limit_whatever_its_lag():
    assert generator_notes(0.9, 1, 0.0, 5e6) == ["its process used 90% of its 1 core(s)"]


def test_small_lag_is_no_limit_even_beside_a_fast_handshake():
    assert generator_notes(0.2, 1, 4e6, 5e6) == []
