"""Instruction counts under callgrind end to end, on both stacks: each counted handshake has
one count per side from the engine's per-connection span, a deterministic side repeats to
well under 1 %, the store names the counter, and the analysis and report carry the
instruction ratios beside the CPU ratios."""

import os

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner import host, instructions
from chainlab.runner.campaign import RunOptions, run
from chainlab.runner.wall_time import time_parts

from .conftest import engine_processes

# Three counted handshakes per scenario: a side that repeats is seen to repeat (its spread
# over three), and a deeper chain's mean to be higher.
COUNT = 3
CAMPAIGN = f"""
[campaign]
name = "instr"
order = "declared"
[sampling]
mode = "fixed"
count = 20
warmup = 1
[measure]
instructions = "callgrind"
count = {COUNT}
[matrix.m]
kex = ["X25519"]
hierarchy = [["ECDSA-P256", "ECDSA-P256"], ["ECDSA-P256", "ECDSA-P256", "ECDSA-P256"]]
stack = ["openssl-3.5", "rustls"]
"""


def test_instructions_are_counted_per_connection_and_side(tmp_path, engine_bin, pki_cache):
    f = tmp_path / "instr.toml"
    f.write_text(CAMPAIGN)
    store = tmp_path / "instr.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4 and not summary.failed, summary
    # The counting's time is the run's own part of its wall time, among the handshakes' own:
    # four valgrind pairs started, each taking seconds.
    assert summary.counting_seconds > 4 * 1.0
    assert summary.handshake_seconds > summary.counting_seconds
    assert dict(time_parts(summary))["instruction counts under callgrind"] > 4.0
    with chainlab.open(store) as st:
        rows, samples, ref = st.instruction_samples, st.samples, st.host_reference
    for sid, g in rows.groupby("scenario_id"):
        assert len(g) == COUNT + 1 and g["warmup"].sum() == 1, sid
        counted = g[~g["warmup"]]
        assert (counted["outcome"] == "ok").all(), sid
        assert counted["source"].str.startswith("callgrind (valgrind-").all()
        assert (counted["server_instructions"] > 100_000).all(), sid
        # The client's attempt is the same code path each time: X25519, two ECDSA verifies.
        c = counted["client_instructions"]
        assert (c.max() - c.min()) / c.mean() < 0.01, (sid, list(c))
        # Counted handshakes are not wall-clock samples.
        assert len(samples[samples["scenario_id"] == sid]) == 21
    # A deeper chain costs the client one more verification, in instructions too.
    means = rows[~rows["warmup"]].groupby("scenario_id")["client_instructions"].mean()
    assert (
        means["x25519__ecdsap256_root__ecdsap256_int__ecdsap256_leaf"]
        > means["x25519__ecdsap256_root__ecdsap256_leaf"]
    )
    assert "steal_ns" in ref and ref["steal_ns"].notna().all()

    a = analyze(store)
    s = a.summary.set_index("scenario_id")
    assert (s["instr_source"].str.startswith("callgrind")).all()
    assert (s["client_instr_cv"] < 0.01).all()
    depth = a.pairs[a.pairs["axis"] == "depth"]
    assert len(depth) and depth["client_instr_ratio"].gt(1).all()
    out = build_report(store, tmp_path / "report", analysis=a)
    md = (out / "report.md").read_text() if out.is_dir() else out.read_text()
    assert "client instr ×" in md and "callgrind (valgrind-" in md
    assert engine_processes(str(pki_cache)) == []


def test_a_cut_dump_is_an_error_not_a_count(tmp_path):
    out = tmp_path / "client.out"
    (tmp_path / "client.out.1").write_text("version: 1\ntotals: 1234\n")
    (tmp_path / "client.out.2").write_text("version: 1\n")
    with pytest.raises(instructions.InstructionError, match="no totals line"):
        instructions.dumps(out)
    (tmp_path / "client.out.2").write_text("totals: 99\n")
    assert instructions.dumps(out) == [1234, 99]


def test_steal_and_drift(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 0 5 100 1 0 2 7 0 0\ncpu0 5 0 2 50 0 0 1 3 0 0\n")
    assert host.steal_ns(stat) == 7 * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    stat.write_text("intr 1 2 3\n")
    assert host.steal_ns(stat) is None
    rows = [
        {"step": -1, "phase": "start", "wall_ns": 40},
        {"step": -1, "phase": "end", "wall_ns": 50},
    ]
    assert host.drift(rows) == pytest.approx(0.25)
    assert host.drift(rows[:1]) is None


SEEDED = """
[campaign]
name = "seeded"
seed = 5
[sampling]
mode = "fixed"
count = 3
[measure]
instructions = "callgrind"
count = 3
random = "seeded"
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
"""


def test_seeded_runs_count_the_same_handshakes(tmp_path, engine_bin, pki_cache):
    """ML-DSA signing's count varies with its random bytes; seeded, two runs count the
    same handshakes, connection for connection."""
    f = tmp_path / "seeded.toml"
    f.write_text(SEEDED)
    counts = []
    for name in ("a", "b"):
        store = tmp_path / f"{name}.duckdb"
        summary = run(load(f), RunOptions(store=store, live_progress=False))
        assert len(summary.completed) == 1 and not summary.failed, summary
        with chainlab.open(store) as st:
            rows = st.instruction_samples.sort_values("seq")
        assert (rows["random"] == "seeded").all()
        assert (rows["outcome"] == "ok").all()
        counts.append(rows[["server_instructions", "client_instructions"]].to_numpy())
    a, b = counts
    # The same code over the same bytes: equal but for the process's own layout (well
    # under 0.1 %; ML-DSA-44's handshakes differ by ~25 % per extra signing round).
    assert abs(b / a - 1).max() < 0.001, (a, b)
    md = build_report(store, tmp_path / "report").joinpath("report.md").read_text()
    assert "seeded random bytes" in md
    assert engine_processes(str(pki_cache)) == []


@pytest.mark.parametrize("stack", ["openssl-3.5", "rustls"])
def test_each_engines_primitives_are_counted_one_operation_at_a_time(stack, engine_bin):
    """The cost model in instructions counts each side's primitives with the engine that
    times them (chainlab.bench.model): every engine's `primitives` dumps one count per
    operation. X25519 key generation repeats to the instruction."""
    from chainlab import engine

    binary = engine_bin if stack == "openssl-3.5" else engine.stack_path(stack)
    got = instructions.count_primitive(binary, ["--subject", "X25519", "--op", "keygen"], 3)
    assert 10_000 < got < 10_000_000
