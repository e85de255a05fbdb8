"""Scenarios of one host-reading window (chainlab.runner.window): they share the reading
that closes it as their end, are written together, and nothing ended is lost on a stop."""

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chainlab.model import host_speed
from chainlab.runner import host
from chainlab.runner.scenario_state import State
from chainlab.runner.stopwatch import Stopwatch
from chainlab.runner.window import Window


@dataclass
class Plan:
    scenario_id: str
    load: object = None
    measure: object = None


@dataclass
class Results:
    host_reference: list = field(default_factory=list)


class Execution:
    """What the window uses of a ScenarioExecution: its plan, state, results and readings."""

    def __init__(self, ctx, sid: str, load=None, measure=None):
        self.ctx = ctx
        self.plan = Plan(sid, load, measure)
        self.state = State(estimated_s_per_handshake=0.001)
        self.results = Results()

    def reference(self, phase: str, step: int = -1) -> None:
        self.add_reference(phase, step, self.ctx.readings.take(self.ctx.engine, None))

    def add_reference(self, phase: str, step: int, got: dict, note: bool = True) -> None:
        self.results.host_reference.append({"phase": phase, "step": step, **got})
        if note and phase == "end" and host.moved(host.drift(self.results.host_reference)):
            self.ctx.progress.note(f"{self.plan.scenario_id}: moved")

    def result(self):
        return [dict(r) for r in self.results.host_reference]


class Notes:
    def __init__(self):
        self.lines = []

    def note(self, text: str) -> None:
        self.lines.append(text)


@dataclass
class Ctx:
    readings: host.LastReading
    progress: Notes
    engine: Path = Path("engine")
    watch: Stopwatch = field(default_factory=Stopwatch)

    def defer(self):
        import contextlib

        return contextlib.nullcontext()


@pytest.fixture
def run(monkeypatch):
    """A run's context over a fake host workload (reading k takes 100 + 10 k ns, so any two
    are more than 10 % apart only when far apart), a settable clock, and what it wrote."""
    numbers = itertools.count(1)
    clock = [100.0]

    def reference(engine, cpus):
        n = next(numbers)
        return {"n": n, "wall_ns": 100 + n, "cpus": cpus}

    monkeypatch.setattr(host, "reference", reference)
    monkeypatch.setattr(host.time, "monotonic", lambda: clock[0])
    ctx = Ctx(host.LastReading(), Notes())
    written: list[list] = []
    window = Window(ctx, lambda done: written.append([(p.scenario_id, rows) for p, rows in done]))
    return ctx, window, clock, written


def one(ctx, window, clock, sid: str, seconds: float, **kw) -> Execution:
    """A scenario: its start reading, `seconds` of handshakes, its end."""
    ex = Execution(ctx, sid, **kw)
    ex.add_reference("start", -1, ctx.readings.take(ctx.engine, None, window=True))
    ctx.readings.measured()
    clock[0] += seconds
    window.read_end(ex)
    window.ended_one(ex)
    return ex


def test_scenarios_of_one_window_share_its_readings_and_are_written_together(run):
    ctx, window, clock, written = run
    a = one(ctx, window, clock, "a", 0.3)
    one(ctx, window, clock, "b", 0.3)
    assert written == []  # both wait for the reading that closes the window
    assert a.state.t_end is not None  # their wall time stopped as they ended
    c = one(ctx, window, clock, "c", host_speed.WINDOW_S)  # ends past the window: read now
    assert [[sid for sid, _ in w] for w in written] == [["a", "b", "c"]]
    for sid, rows in written[0]:
        assert [(r["phase"], r["n"]) for r in rows] == [("start", 1), ("end", 2)], sid
    # The next scenario opens a new window with that reading as its start.
    d = one(ctx, window, clock, "d", 0.1)
    assert [r["n"] for r in d.results.host_reference] == [2]
    window.close()  # the run stops: a reading for d, then d is written
    assert [sid for sid, _ in written[-1]] == ["d"]
    assert [(r["phase"], r["n"]) for r in written[-1][0][1]] == [("start", 2), ("end", 3)]
    assert c.state.t_end is not None


def test_a_reading_a_later_visit_takes_ends_those_waiting(run):
    """Interleaved order: a visit's start past the window reads the host anew, which is the
    end of the scenarios that ended before it."""
    ctx, window, clock, written = run
    one(ctx, window, clock, "a", 0.2)
    clock[0] += host_speed.WINDOW_S
    ctx.readings.take(ctx.engine, None, window=True)  # another scenario's visit starts
    one(ctx, window, clock, "b", 0.1)  # its visit opened the next window
    assert written == []  # a is complete, written with b once b's end is read
    window.close()
    (done,) = written
    assert [(sid, [r["n"] for r in rows]) for sid, rows in done] == [("a", [1, 2]), ("b", [2, 3])]


def test_a_reading_on_other_cores_is_no_end(run):
    ctx, window, clock, written = run
    one(ctx, window, clock, "a", 0.2)
    ctx.readings.new(ctx.engine, "1")  # a load step's reading on the server's cores
    window.close()
    assert [(r["phase"], r["n"], r["cpus"]) for r in written[0][0][1]] == [
        ("start", 1, None),
        ("end", 3, None),
    ]


def test_scenarios_with_load_or_counts_are_read_at_once(run):
    """Their load steps are read on the server's cores, their instruction counts come after
    the end reading: neither waits."""
    ctx, window, clock, written = run
    one(ctx, window, clock, "a", 0.1)
    one(ctx, window, clock, "counted", 0.1, measure=object())
    # The counted scenario's own end reading ended a's wait too; both written at once.
    assert [[sid for sid, _ in w] for w in written] == [["a", "counted"]]
    assert [r["n"] for r in written[0][1][1]] == [1, 2]


def test_a_window_the_host_moved_over_is_noted_once(run, monkeypatch):
    ctx, window, clock, written = run
    values = iter([100, 130])
    monkeypatch.setattr(host, "reference", lambda e, c: {"n": 0, "wall_ns": next(values)})
    one(ctx, window, clock, "a", 0.2)
    one(ctx, window, clock, "b", 0.2)
    one(ctx, window, clock, "c", host_speed.WINDOW_S)
    assert len(written[0]) == 3
    assert len(ctx.progress.lines) == 1
    assert "moved +30% over a window of 3 scenarios (a ... c)" in ctx.progress.lines[0]


def test_a_failed_reading_at_the_end_still_writes_what_ended(run, monkeypatch):
    ctx, window, clock, written = run
    one(ctx, window, clock, "a", 0.2)

    def broken(engine, cpus):
        raise host.ReferenceError("the reference workload took over 60 s")

    monkeypatch.setattr(host, "reference", broken)
    window.close()
    assert [sid for sid, _ in written[0]] == ["a"]
    assert [r["phase"] for r in written[0][0][1]] == ["start"]
    assert "host reference: the reference workload took over 60 s" in ctx.progress.lines[0]
    assert ctx.readings.waiting == []


def test_windows_counts_what_the_estimate_prices():
    w = host_speed.WINDOW_S
    assert host_speed.windows([]) == 0
    assert host_speed.windows([0.1 * w] * 5) == 1  # one window, closed by the run's end
    assert host_speed.windows([0.5 * w] * 4) == 2
    assert host_speed.windows([2 * w, 0.1 * w]) == 2  # a long scenario closes its own
