"""Progress output: live two-line display on a terminal, one line per scenario otherwise."""

import io
from pathlib import Path

from chainlab.campaign import load
from chainlab.runner.progress import Progress
from chainlab.runner.scenario_state import State
from chainlab.store import ScenarioRows

REPO = Path(__file__).resolve().parents[2]


def running_state() -> State:
    """A scenario's state two batches in."""
    return State(
        estimated_s_per_handshake=0.003,
        attempted=150,
        batches=2,
        ok_values=[2_000_000 + 1000 * (i % 7) for i in range(150)],
        rel_halfwidth=0.013,
        sampling_s=1.0,
        seconds_per_handshake=0.002,
    )


def result(sid, status="completed"):
    row = {"scenario_id": sid, "status": status, "stop_reason": "ci_target", "n_ok": 150,
           "n_measured": 150, "ci_rel_halfwidth": 0.009, "wall_seconds": 2.5,
           "failure_cause": None, "failure_detail": None}  # fmt: skip
    return ScenarioRows(row, [], [], [], None)


def scenarios():
    return list(load(REPO / "campaigns" / "quick.toml").scenarios.values())


def test_plain_mode_prints_one_line_per_scenario_with_eta():
    ss = scenarios()
    out = io.StringIO()
    p = Progress(ss, live=False, stream=out)
    p.start()
    plan, state = ss[0], running_state()
    p.scenario_start(plan, state)
    p.scenario_tick(plan, state, 10, 100)
    p.scenario_step(plan, state)
    p.scenario_end(plan, result(ss[0].scenario_id))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"chainlab: {len(ss)} scenarios, estimated")
    assert lines[1].startswith(f"[1/{len(ss)}] {ss[0].scenario_id}: completed (ci_target)")
    assert "ci=0.90%" in lines[1] and "campaign ETA" in lines[1]
    assert "\x1b" not in out.getvalue()


def test_live_mode_draws_both_bars():
    ss = scenarios()
    out = io.StringIO()
    p = Progress(ss, live=True, stream=out)
    plan, state = ss[0], running_state()
    p.scenario_start(plan, state)
    text = out.getvalue()
    assert "campaign" in text and "━" in text and "ETA" in text  # rich's bars
    assert "scenario" in text and ss[0].scenario_id in text and "ci=1.30%" in text
    p.scenario_end(plan, result(ss[0].scenario_id, "failed"))
    assert f"[1/{len(ss)}] {ss[0].scenario_id}: failed" in out.getvalue()
    p.finish("chainlab: run completed")
    assert "chainlab: run completed" in out.getvalue()
