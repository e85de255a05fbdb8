"""The run's summary line says its wall time over the handshakes' own time (every attempt's
total_ns and every load step's span, its schedule and its last attempts' ends): the share
of a run that is overhead."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from chainlab.runner import stopwatch
from chainlab.runner.campaign import RunSummary
from chainlab.runner.stopwatch import Stopwatch
from chainlab.runner.wall_time import (
    handshake_seconds,
    overhead_note,
    parts_note,
    rest_note,
    rest_parts,
    time_parts,
)


def test_the_handshakes_own_time_and_the_overhead_ratio():
    result = SimpleNamespace(
        samples=[{"total_ns": 1_500_000_000}, {"total_ns": 500_000_000}, {"total_ns": None}],
        # A step's attempts started in its schedule end after it: its generator's wall.
        load_steps=[{"duration_s": 5.0, "wall_s": 5.25}, {"duration_s": 3.0, "wall_s": 3.0}],
        counting_seconds=0.0,
    )
    assert handshake_seconds(result) == 2.0 + 8.25
    # Instruction counts under callgrind are the measurement: their wall time counts too.
    result.counting_seconds = 40.0
    assert handshake_seconds(result) == 2.0 + 8.25 + 40.0
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.5, 0.0, 2.0)
    summary.load_seconds = 8.0
    assert summary.handshake_seconds == 10.0
    assert overhead_note(summary) == "; wall 12.5 s over the handshakes' own 10.0 s: 1.25x"
    assert overhead_note(RunSummary("r", Path("s"), [], [], [], True, 1.0, 0.0)) == ""


def test_the_summary_line_gives_the_estimate_over_the_wall_time():
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.5, 0.0, 10.0, 11.0)
    assert summary.handshake_seconds == 10.0
    assert overhead_note(summary).endswith("; estimated 11.0 s: estimate/wall 0.88")


def test_where_the_wall_time_went_adds_up_to_it():
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.0, 7.5, 7.0)
    # The scenarios' own 10 s: a load step's 1 s, client loops of 7.5 s holding 7 s of
    # attempts; the run's 2 s besides them.
    summary.scenario_seconds, summary.load_seconds = 10.0, 1.0
    parts = dict(time_parts(summary))
    assert list(parts.values()) == [8.0, 0.5, 1.5, 2.0]
    assert sum(parts.values()) == summary.wall_seconds
    assert parts_note(summary).startswith(
        "where the wall time went: handshakes 8.0 s (67 %); between them in the client loops "
        "0.5 s (4 %)"
    )
    # With load steps, what lies between them is among the scenarios' rest, and says so;
    # without, it names none.
    assert list(parts)[2].endswith("records, load steps' warm-ups and readings)")
    without = replace(summary, load_seconds=0.0, attempt_seconds=8.0)
    assert list(dict(time_parts(without)))[2].endswith("links, records)")
    # A cluster's scenarios run in parallel: more than the wall time, no parts.
    summary.scenario_seconds = 30.0
    assert time_parts(summary) == [] and parts_note(summary) == ""


def test_instruction_counts_are_a_part_of_their_own_not_the_scenarios_rest():
    # 40 s of counting among 50 s of handshakes' own time; client loops of 7.5 s (7 s of
    # attempts), a load step's 1 s, the scenarios' 50 s, the run's 2 s besides.
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 52.0, 7.5, 7.0)
    summary.scenario_seconds, summary.load_seconds, summary.counting_seconds = 50.0, 1.0, 40.0
    assert summary.handshake_seconds == 48.0
    parts = time_parts(summary)
    rest = "the rest of the scenarios (hierarchies, engine starts, servers, links, records"
    assert parts == [
        ("handshakes", 8.0),
        ("instruction counts under callgrind", 40.0),
        ("between them in the client loops", 0.5),
        (rest + ", load steps' warm-ups and readings)", 1.5),
        ("the run's start (caches, primitives, references), host readings and commits", 2.0),
    ]


def test_the_stopwatch_keeps_each_parts_own_time_and_none_inside_measurement():
    now = [0.0]
    w = Stopwatch(clock=lambda: now[0])
    with w.timed("visit"):
        now[0] += 1.0
        with w.timed("reading"):  # inside the visit: its own, not the visit's
            now[0] += 0.25
        # The measurement: nothing inside it timed, nor is it the visit's.
        with w.measuring(), w.timed("server starts"):
            now[0] += 5.0
        now[0] += 0.5
    with w.timed("reading"):
        now[0] += 0.25
    w.add("start", 2.0)
    got = {name: (p.seconds, p.count) for name, p in w.parts.items()}
    assert got == {"reading": (0.5, 2), "visit": (1.5, 1), "start": (2.0, 1)}
    assert "server starts" not in w.parts and w.parts["start"].seconds == 2.0
    # An exception leaves the scope closed and its time kept.
    try:
        with w.timed("visit"):
            now[0] += 1.0
            raise ValueError
    except ValueError:
        pass
    assert w.parts["visit"].seconds == 2.5 and w._inner == []
    # Consecutive steps: each lap the time since the one before, less the parts timed in it.
    w.laps()
    now[0] += 0.5
    w.lap("checks")
    now[0] += 0.25
    with w.timed("reading"):
        now[0] += 1.0
    w.lap("store")
    laps = (w.parts["checks"].seconds, w.parts["store"].seconds, w.parts["reading"].seconds)
    assert laps == (0.5, 0.25, 1.5)


def test_the_rest_is_the_timed_parts_and_what_none_timed():
    # Wall 12 s: client loops of 7.5 s (7 s of attempts), a load step's 1 s; the rest 3.5 s.
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.0, 7.5, 7.0)
    summary.scenario_seconds, summary.load_seconds = 10.0, 1.0
    w = summary.watch
    w.add(stopwatch.ESTIMATE, 0.75)
    w.add(stopwatch.HIERARCHIES, 0.001)  # too short to name: among what none timed
    w.add(stopwatch.CLIENT_BATCHES, 7.5 + 0.5)  # its process: 0.5 s beside the loop
    w.add(stopwatch.CLIENT_BATCHES, 0.25)
    w.add(stopwatch.LOAD_STEPS, 1.0 + 0.25)  # 0.25 s beside the step's span
    w.add(stopwatch.SERVER_STARTS, 1.0)
    parts = rest_parts(summary)
    assert parts == [
        (stopwatch.SERVER_STARTS, 1.0, 1),
        (stopwatch.ESTIMATE, 0.75, 1),
        (stopwatch.CLIENT_BATCHES, 0.75, 2),
        (stopwatch.LOAD_STEPS, 0.25, 1),
        ("not timed (the run's own Python between them)", 0.75, 0),
    ]
    assert sum(s for _, s, _ in parts) == 12.0 - 7.5 - 1.0
    assert rest_note(summary).startswith(
        f"the rest in parts: {stopwatch.SERVER_STARTS} 1.00 s; {stopwatch.ESTIMATE} 0.75 s; "
        f"{stopwatch.CLIENT_BATCHES} 0.75 s (2x)"
    )
    # Nothing timed, or a cluster's run (its scenarios' parts are its workers'): no line.
    assert rest_note(RunSummary("r", Path("s"), ["a"], [], [], False, 12.0, 7.5, 7.0)) == ""
    assert rest_note(replace(summary, local=False)) == ""
    summary.scenario_seconds = 30.0
    assert rest_parts(summary) == [] and rest_note(summary) == ""
