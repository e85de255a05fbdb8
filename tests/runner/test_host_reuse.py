"""The run's latest host reading (host.LastReading): one scenario's end and the next one's
start (or one load step's and the next's) are read once, never across a measurement, other
cores or too long a pause."""

import itertools
from pathlib import Path

import pytest

from chainlab.model import host_speed
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


def test_a_scenario_start_takes_the_windows_reading_whatever_ran_since(readings):
    """A scenario's start (`window`) within WINDOW_S of the latest reading takes it although a
    scenario was measured since: the two share the window's readings
    (chainlab.runner.window)."""
    last, clock = readings
    engine = Path("engine")
    last.take(engine, None)
    last.measured()
    clock[0] += 0.5 * host_speed.WINDOW_S
    assert last.take(engine, None, window=True)["n"] == 1
    assert last.take(engine, "1", window=True)["n"] == 2  # not on other cores
    last.measured()
    clock[0] += host_speed.WINDOW_S
    assert last.take(engine, "1", window=True)["n"] == 3  # the window is over


def test_a_new_reading_goes_to_those_waiting_on_its_cores(readings):
    last, _ = readings
    engine = Path("engine")
    got = []
    last.wait(None, got.append)
    last.new(engine, "1")
    assert got == [] and len(last.waiting) == 1
    last.new(engine, None)
    assert got == [{"n": 2, "cpus": None}] and last.waiting == []
