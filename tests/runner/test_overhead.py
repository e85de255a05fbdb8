"""The run's summary line says its wall time over the handshakes' own time (every attempt's
total_ns and every load step's span, its schedule and its last attempts' ends): the share
of a run that is overhead."""

from pathlib import Path
from types import SimpleNamespace

from chainlab.runner.campaign import RunSummary, handshake_seconds, overhead_note


def test_the_handshakes_own_time_and_the_overhead_ratio():
    result = SimpleNamespace(
        samples=[{"total_ns": 1_500_000_000}, {"total_ns": 500_000_000}, {"total_ns": None}],
        # A step's attempts started in its schedule end after it: its generator's wall.
        load_steps=[{"duration_s": 5.0, "wall_s": 5.25}, {"duration_s": 3.0, "wall_s": 3.0}],
    )
    assert handshake_seconds(result) == 2.0 + 8.25
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.5, 0.0, 10.0)
    assert overhead_note(summary) == "; wall 12.5 s over the handshakes' own 10.0 s: 1.25x"
    assert overhead_note(RunSummary("r", Path("s"), [], [], [], True, 1.0, 0.0)) == ""


def test_the_summary_line_gives_the_estimate_over_the_wall_time():
    summary = RunSummary("r", Path("s.duckdb"), ["a"], [], [], False, 12.5, 0.0, 10.0, 11.0)
    assert overhead_note(summary).endswith("; estimated 11.0 s: estimate/wall 0.88")
