"""Measurements a cache keeps are taken on a steady host (host.steady): pure logic over a
scripted host reference workload and counted measurements."""

import pytest

from chainlab.runner import host

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


@pytest.fixture(autouse=True)
def _default_passes(monkeypatch):
    """The default passes, whatever the session set (conftest: 1)."""
    monkeypatch.delenv("CHAINLAB_HOST_PASSES", raising=False)


def scripted(readings):
    """A host reference read that returns these wall times in turn (ms, for readability)."""
    it = iter(readings)
    return lambda: next(it)


class Counted:
    """A measurement that names its unit and how often it was taken."""

    def __init__(self, inner=None):
        self.calls = []
        self.inner = inner or {}

    def __call__(self, unit):
        self.calls.append(unit)
        return f"{unit}#{self.calls.count(unit)}", self.inner.get(len(self.calls), [])


def test_a_steady_host_measures_each_unit_once():
    m = Counted()
    got = host.steady(["a", "b", "c"], m, scripted([40, 41, 40, 42]))
    assert m.calls == ["a", "b", "c"]
    assert got.results == ["a#1", "b#1", "c#1"]
    assert got.again == [] and max(got.moved) < host.HOST_DRIFT_LIMIT
    assert got.notes(str) == []


def test_units_the_host_moved_during_are_taken_again_after_the_others():
    m = Counted()
    # The reading after b is 50 % slower than the one before it: it brackets b and c, so
    # both are taken again once the pass is over, after a reading of their own.
    got = host.steady(["a", "b", "c"], m, scripted([40, 40, 60, 40, 40, 40, 40]))
    assert m.calls == ["a", "b", "c", "b", "c"]
    assert got.results == ["a#1", "b#2", "c#2"]
    assert got.again == [1, 2]
    # The host around each kept measurement: the mean of the readings before and after it.
    assert got.host_ns == [40, 40, 40]
    notes = got.notes(lambda i: "abc"[i])
    assert [n[0] for n in notes] == ["b", "c"]
    assert all("measured again" in n and "(kept" in n for n in notes)


def test_a_host_steadily_slow_around_a_unit_is_no_reason_to_take_it_again():
    m = Counted()
    got = host.steady(["a", "b", "c"], m, scripted([60, 60, 40, 40, 40, 40]))
    # a ran on a host 1.5x slower than later, but steadily so (60 and 60): kept, with its
    # reading, which the cost model scales it by. b's readings moved (60, 40): again.
    assert m.calls == ["a", "b", "c", "b"]
    assert got.results == ["a#1", "b#2", "c#1"]
    assert got.again == [1]
    assert got.host_ns == [60, 40, 40]


def test_readings_a_measurement_took_itself_count_against_it():
    # The second call (b) reports a 70 ms reading of its own (a reference scenario's).
    m = Counted(inner={2: [70]})
    got = host.steady(["a", "b"], m, scripted([40, 40, 40, 40, 40]))
    assert m.calls == ["a", "b", "b"]
    assert got.results == ["a#1", "b#2"]


def test_rows_carry_the_mean_of_the_readings_around_them():
    rows = [{"seq": 0}, {"seq": 1}]
    assert host.at_host(rows, [40_000_000, 44_000_000, float("nan")]) == [
        {"seq": 0, "host_cpu_ns": 42_000_000},
        {"seq": 1, "host_cpu_ns": 42_000_000},
    ]
    assert host.at_host(rows, []) == rows  # no reading: left unset (NULL in the store)


def test_each_batch_carries_the_mean_of_the_readings_on_its_two_sides():
    rows = [{"seq": 0, "batch": 0}, {"seq": 1, "batch": 0}, {"seq": 2, "batch": 1}]
    assert host.at_batches(rows, [40_000_000, 60_000_000, 80_000_000]) == [
        {"seq": 0, "host_cpu_ns": 50_000_000},
        {"seq": 1, "host_cpu_ns": 50_000_000},
        {"seq": 2, "host_cpu_ns": 70_000_000},
    ]
    # A reading that failed (NaN) leaves its batch the other side's.
    assert host.at_batches(rows[2:], [40_000_000, float("nan"), 80_000_000]) == [
        {"seq": 2, "host_cpu_ns": 80_000_000}
    ]


def test_steady_keeps_the_readings_around_each_kept_measurement():
    m = Counted(inner={2: [45]})
    got = host.steady(["a", "b"], m, scripted([40, 42, 44]))
    assert got.seen == [[40, 42], [42, 45, 44]]


def test_how_far_apart_one_readings_cpus_were():
    # Each CPU's [wall, CPU] time: judged by the CPU time (a core another process held for
    # a while shows in the wall time only).
    assert host.uneven({"0": [40, 40], "1": [90, 60]}) == pytest.approx(0.5)
    assert host.uneven('{"0": [40, 40], "1": [80, 40]}') == 0.0  # the store's JSON text
    assert host.uneven({"0": [40, 40]}) is None  # one CPU: nothing to compare
    assert host.uneven(None) is None  # pinned, or a store before 16


def test_a_unit_the_host_keeps_moving_during_keeps_its_steadiest_measurement_and_says_so():
    m = Counted()
    # a steady; b's three passes, each between 40 before and then 80, 60, 70 after.
    reads = [40, 40, 80, 40, 60, 40, 70]
    got = host.steady(["a", "b"], m, scripted(reads), passes=3)
    assert m.calls == ["a", "b", "b", "b"]
    assert got.results == ["a#1", "b#2"]  # the measurement whose readings were closest
    assert got.moved[1] == 60 / 40 - 1
    assert got.host_ns == [40, 50]  # b#2's readings: 40 before, 60 after
    [note] = got.notes(lambda i: "ab"[i])
    assert note.startswith("b: measured again") and "still moving" in note and "50% apart" in note


def test_nothing_to_measure_reads_nothing():
    got = host.steady([], Counted(), scripted([]))
    assert got.results == [] and got.again == []


def test_a_shared_host_takes_each_unit_once_when_the_environment_says_so(monkeypatch):
    monkeypatch.setenv("CHAINLAB_HOST_PASSES", "1")
    m = Counted()
    got = host.steady(["a", "b"], m, scripted([40, 40, 80]))
    assert m.calls == ["a", "b"]  # b's moving host is not waited out
    assert got.results == ["a#1", "b#1"] and got.again == []
    assert got.moved[1] == 80 / 40 - 1  # still said: the host moved during b
    monkeypatch.setenv("CHAINLAB_HOST_PASSES", "2")
    m = Counted()
    host.steady(["a", "b"], m, scripted([40, 40, 80, 40, 40, 80]))
    assert m.calls == ["a", "b", "b"]
