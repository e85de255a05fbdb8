"""A load step's connection slots (chainlab.runner.load.in_flight): the campaign's
`max_in_flight` where given, else enough for the step's offer at the scenario's latency
(Little's law with a margin), so a long path does not cap the offer at the slots."""

from types import SimpleNamespace

import pytest

from chainlab.runner import load

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def visit(max_in_flight, latencies_ms):
    return SimpleNamespace(
        plan=SimpleNamespace(load=SimpleNamespace(max_in_flight=max_in_flight)),
        state=SimpleNamespace(ok_values=[int(x * 1e6) for x in latencies_ms]),
    )


def test_slots_follow_rate_and_latency_unless_given():
    # Loopback: 1.5 ms at 1,000/s keeps 1.5 connections open: the floor.
    assert load.in_flight(visit(None, [1.4, 1.5, 1.6]), 1000.0) == load.MIN_IN_FLIGHT
    # A 50 ms path: ~105 ms per handshake at 1,000/s keeps ~105 open; a margin of 3.
    assert load.in_flight(visit(None, [104.0, 105.0, 106.0]), 1000.0) == 315
    # The old fixed 64 would have capped that offer at 64 / 0.105 s = 610/s.
    assert 64 / 0.105 < 1000.0
    # At most the engine's limit; the campaign's own value as it is.
    assert load.in_flight(visit(None, [500.0]), 10_000.0) == load.MAX_IN_FLIGHT
    assert load.in_flight(visit(512, [105.0]), 1000.0) == 512
    # No successful single connection: the floor.
    assert load.in_flight(visit(None, []), 1000.0) == load.MIN_IN_FLIGHT
