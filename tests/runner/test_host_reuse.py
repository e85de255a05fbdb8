"""The run's latest host reading (host.LastReading): one scenario's end and the next one's
start (or one load step's and the next's) are read once, never across a measurement, other
cores or too long a pause."""

import itertools
from pathlib import Path

import pytest

from chainlab.runner import host


@pytest.fixture
def readings(monkeypatch):
    """A LastReading over a fake workload numbering its readings, and a settable clock."""
    numbers = itertools.count(1)
    clock = [100.0]
    monkeypatch.setattr(host, "reference", lambda engine, cpus: {"n": next(numbers), "cpus": cpus})
    monkeypatch.setattr(host.time, "monotonic", lambda: clock[0])
    return host.LastReading(), clock


def test_a_start_right_after_an_end_reuses_its_reading(readings):
    last, clock = readings
    engine = Path("engine")
    assert last.take(engine, None)["n"] == 1  # a scenario's end
    clock[0] += 0.3  # its server stopped, the next one's started
    again = last.take(engine, None)  # the next scenario's start
    assert again == {"n": 1, "cpus": None}
    again["n"] = 99  # a copy: the kept reading does not change
    assert last.take(engine, None)["n"] == 1


def test_a_measurement_other_cores_or_a_pause_take_a_new_reading(readings):
    last, clock = readings
    engine = Path("engine")
    last.take(engine, None)
    last.measured()  # a client batch ran
    assert last.take(engine, None)["n"] == 2
    assert last.take(engine, "1")["n"] == 3  # the server's cores differ
    clock[0] += host.REUSE_S
    assert last.take(engine, "1")["n"] == 4  # too long ago
    last.measured()  # a load step ran: its end is read anew
    assert last.take(engine, "1")["n"] == 5
