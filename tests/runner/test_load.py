"""Load steps end to end with the real engine: capacity measured, offered loads run on the
scenario's server, every attempt stored and paired with the server's record; a generator
that cannot keep up is flagged, never reported as the server's capacity."""

import subprocess
import sys
import time

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.runner import host
from chainlab.runner import load as load_runner
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

CAMPAIGN = """
[campaign]
name = "loadtest"
order = "declared"
[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 30
warmup = 2
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
[load]
{load}
"""


def run_campaign(tmp_path, load_table: str):
    f = tmp_path / "loadtest.toml"
    f.write_text(CAMPAIGN.format(load=load_table))
    store = tmp_path / "loadtest.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    return store, summary


def test_load_steps_are_measured_stored_and_reported(
    tmp_path, engine_bin, pki_cache, main, figures, monkeypatch
):
    monkeypatch.setattr(host, "REUSE_S", 60.0)  # a loaded CI host's pauses are not the rule's
    store, summary = run_campaign(
        tmp_path,
        "fractions = [0.5]\nstep_s = 2\ncapacity_s = 2\nverify = false\nwarmup = 5",
    )
    assert summary.completed and not summary.failed
    with chainlab.open(store) as st:
        steps, samples, ref = st.load_steps, st.load_samples, st.host_reference
    # The host's speed timed around the scenario and each step, on the server's core.
    assert set(zip(ref["step"], ref["phase"], strict=True)) == {
        (step, phase) for step in [-1, *steps["step"]] for phase in ("start", "end")
    }
    assert (ref["wall_ns"] > 0).all() and (ref["cpus"] == "0").all()
    # Read once where nothing ran between: a step starts on the previous one's end reading
    # (the scenario's last load step ends it); never across the step's own load.
    at = {(r.step, r.phase): (r.wall_ns, r.cpu_ns) for r in ref.itertuples()}
    order = sorted(steps["step"])
    for prev, step in zip(order, order[1:], strict=False):
        assert at[(step, "start")] == at[(prev, "end")]
    for step in order:
        assert at[(step, "start")] != at[(step, "end")]
    assert at[(-1, "end")] == at[(order[-1], "end")]
    # The server's side of each step, from the kernel.
    assert steps["server_process_cpu_s"].notna().all() and steps["server_cores_busy"].notna().all()
    assert (steps["listen_overflows"] >= 0).all()
    kinds = list(steps.sort_values("step")["kind"])
    assert kinds[0] == "capacity" and kinds[-1] == "step" and kinds.count("step") == 1
    # The sustainable-rate search: three bisection steps between the capacity steps and the
    # fraction, the first at 3/4 of the overload throughput.
    assert kinds[-4:-1] == ["search"] * 3
    for _, r in steps.iterrows():
        got = samples[samples["step"] == r["step"]]
        # every scheduled attempt is a row: started or saturated, none skipped
        assert len(got) == r["scheduled"] == r["n_ok"] + r["n_failed"]
        assert r["n_saturated"] == (got["error_category"] == "generator_saturated").sum()
        ok = got[got["outcome"] == "ok"]
        assert ok["server_conn_cpu_ns"].notna().all()  # paired with the server's records
        assert (ok["latency_ns"] >= ok["total_ns"]).all()
    step = steps[steps["kind"] == "step"].iloc[0]
    capacity = steps[steps["kind"] == "capacity"]["achieved_rate"].max()
    search = steps[steps["kind"] == "search"].sort_values("step")
    assert search["offered_rate"].iloc[0] == pytest.approx(0.75 * capacity)
    # The fraction is of the highest offer the search kept up with (its floor if none).
    bases = [0.5 * capacity, *search["offered_rate"]]
    assert any(step["offered_rate"] == pytest.approx(0.5 * b) for b in bases), (step, bases)
    # Half the capacity is kept up with, open loop.
    assert step["achieved_rate"] == pytest.approx(step["offered_rate"], rel=0.15)
    a = analyze(store)
    cap = a.load_capacity.iloc[0]
    assert cap["capacity"] == pytest.approx(capacity)
    # The runner's achieved rates (its capacity search) and the store's (the report) are one
    # definition: completions within the schedule's length from the median latency on.
    by_step = a.load_steps.set_index("step")["achieved_rate"]
    for _, r in steps.iterrows():
        assert by_step[r["step"]] == pytest.approx(r["achieved_rate"]), r["step"]
    assert cap["derived_per_core"] > 0 and cap["measured_over_derived"] > 0
    assert set(a.load_steps["p99_ms"].dropna().index) == set(range(len(steps)))
    out = main("report", store, "--out", tmp_path / "r")
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Capacity under load" in md and "Measured versus derived capacity" in md
    # The answer's p99 is at a fraction of the rate the search kept up with, and says so.
    assert "of the sustainable rate searched" in md
    assert "## Host speed during each scenario" in md
    assert (tmp_path / "r" / "figures" / "load_latency.svg").exists()
    assert engine_processes(str(pki_cache)) == []


def test_a_generator_that_cannot_keep_up_is_flagged(tmp_path, engine_bin, pki_cache):
    """The generator shares its core with a busy process and is offered far more than half
    a core can start: its step is flagged generator_limited, with the reason."""
    hog = subprocess.Popen(
        [sys.executable, "-c",
         "import os, time\nos.sched_setaffinity(0, {1})\nend = time.monotonic() + 60\n"
         "while time.monotonic() < end:\n    pass\n"],
    )  # fmt: skip
    try:
        time.sleep(0.2)
        store, summary = run_campaign(tmp_path, "rates = [3000]\nstep_s = 2\ncapacity_s = 1")
    finally:
        hog.kill()
        hog.wait()
    assert summary.completed
    with chainlab.open(store) as st:
        steps, samples = st.load_steps, st.load_samples
    step = steps[steps["kind"] == "step"].iloc[0]
    assert bool(step["generator_limited"]), step.to_dict()
    # The flag agrees with what was stored: the generator's CPU, or its attempts' lags.
    lags = samples[samples["step"] == step["step"]]["sched_lag_ns"].dropna()
    busy = step["generator_cpu_s"] / step["wall_s"] / step["generator_cores"]
    assert busy >= load_runner.GENERATOR_BUSY or lags.quantile(0.99) > load_runner.GENERATOR_LAG_NS
    assert "scheduling lag" in step["generator_note"] or "core" in step["generator_note"]


def test_load_steps_run_over_quic(tmp_path, engine_bin, pki_cache):
    """The same steps over QUIC: the generator's connections each on a fresh UDP socket, the
    server's one listener thread serving them at once (the engine test pairs every attempt
    with the server's record of it)."""
    f = tmp_path / "quic-load.toml"
    chain = '[["ML-DSA-44", "ML-DSA-44"]]'
    text = CAMPAIGN.format(
        load="fractions = [0.5]\nstep_s = 2\ncapacity_s = 2\nverify = false\nwarmup = 5\n"
        "search_steps = 0"
    )
    f.write_text(text.replace(chain, chain + '\ntransport = "quic"'))
    store = tmp_path / "quic-load.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert summary.completed == ["x25519mlkem768__mldsa44_root__mldsa44_leaf__quic"], summary
    with chainlab.open(store) as st:
        steps, samples = st.load_steps, st.load_samples
    assert list(steps.sort_values("step")["kind"])[-1] == "step"
    for _, r in steps.iterrows():
        got = samples[samples["step"] == r["step"]]
        assert len(got) == r["scheduled"] == r["n_ok"] + r["n_failed"]
        ok = got[got["outcome"] == "ok"]
        # The capacity search overloads the server on purpose; half its capacity does not.
        assert len(ok) >= 0.9 * len(got) if r["kind"] == "step" else len(ok) > 0
    step = steps[steps["kind"] == "step"].iloc[0]
    assert step["achieved_rate"] == pytest.approx(step["offered_rate"], rel=0.15)
    cap = analyze(store).load_capacity.iloc[0]
    assert cap["capacity"] > 0 and cap["derived_per_core"] > 0
    assert engine_processes(str(pki_cache)) == []


def test_load_steps_run_on_rustls_with_an_event_driven_server(tmp_path, engine_bin, pki_cache):
    """[load] on the rustls stack: its own generator against its server's event loop (the
    default server model under [load]); every attempt is paired and half the capacity is
    kept up with."""
    f = tmp_path / "rustls-load.toml"
    chain = '[["ML-DSA-44", "ML-DSA-44"]]'
    text = CAMPAIGN.format(
        load="fractions = [0.5]\nstep_s = 2\ncapacity_s = 2\nverify = false\nwarmup = 5\n"
        "search_steps = 0"
    )
    f.write_text(text.replace(chain, chain + '\nstack = "rustls"'))
    c = load(f)
    (scenario,) = c.scenarios.values()
    assert scenario.load.server_model == "event" and scenario.load.server_workers == 1
    store = tmp_path / "rustls-load.duckdb"
    summary = run(c, RunOptions(store=store, live_progress=False))
    assert summary.completed == [scenario.scenario_id], summary
    with chainlab.open(store) as st:
        steps, samples = st.load_steps, st.load_samples
    for _, r in steps.iterrows():
        got = samples[samples["step"] == r["step"]]
        assert len(got) == r["scheduled"] == r["n_ok"] + r["n_failed"]
        assert got[got["outcome"] == "ok"]["server_conn_cpu_ns"].notna().all()
    step = steps[steps["kind"] == "step"].iloc[0]
    assert step["achieved_rate"] == pytest.approx(step["offered_rate"], rel=0.15)
    assert engine_processes(str(pki_cache)) == []


def at_host_speed(a) -> dict[str, float]:
    """Each scenario's capacity per core times the reference workload's time around its best
    capacity step (start and end averaged): a capacity in units of the host's speed then."""
    steps, ref = a.data.load_steps, a.data.host_reference
    out = {}
    for sid, g in steps[steps["kind"] == "capacity"].groupby("scenario_id"):
        best = g.loc[g["achieved_rate"].idxmax()]
        around = ref[(ref["scenario_id"] == sid) & (ref["step"] == best["step"])]
        assert len(around) == 2, around
        out[sid] = best["achieved_rate"] / best["server_cores"] * around["wall_ns"].mean()
    return out


PATH_CAMPAIGN = """
[campaign]
name = "paths"
order = "declared"
[network.wan50]
delay_ms = 25
[network.lossy]
delay_ms = 50
loss = 0.01
[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 10   # one at a time; what is checked is the load steps'
warmup = 2
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-65", "ML-DSA-65"]]
network = ["loopback", "wan50", "lossy"]
[load]
fractions = [0.5]
step_s = 2
capacity_s = 6
search_steps = 0
verify = false
warmup = 5
max_in_flight = 512
generator_stack = "rustls"
"""


def test_capacity_over_long_and_lossy_paths_is_the_server_cores(
    tmp_path, engine_bin, pki_cache, netns_root
):
    """Event loops make a capacity the CPU's on any path: the same server measured on
    loopback, over a 50 ms round trip and over a 100 ms one losing 1 % each way keeps its
    core at least half busy at the capacity step and achieves per core about what it achieves on
    loopback, where a pool of 4 blocking workers managed 0.17 of it at 50 ms with its core
    15 % busy.

    The bands are wide on purpose: the three scenarios run a minute apart on a shared VM
    whose speed moves by up to 1.7x within one run (the reference workload timed around
    each load step went from 35 to 59 ms in one CI run, and a 10 % band failed there; on
    2026-11-29 the lossy path read 1.74x loopback's, the host 25 % and 38 % slower at the
    end of those two scenarios than at their start), and the busy share is the kernel's
    account of a step's whole window, its ramp included (a clean-clone CI run on 2026-11-30
    read 0.53 on the lossy path, the host 24 % faster at its end, and the next read its
    per-core capacity at 0.58 of loopback's at the host's speed: half busy and 0.45 of
    loopback still set an event loop apart from the blocking pool's 15 % and 0.17).
    The 10 % agreement is shown by `chainlab bench load` and campaigns/load.toml, which
    print the ratios of one run."""
    f = tmp_path / "paths.toml"
    f.write_text(PATH_CAMPAIGN)
    store = tmp_path / "paths.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 3 and not summary.failed, summary
    a = analyze(store)
    cap = a.load_capacity.set_index("scenario_id")
    speed = at_host_speed(a)
    base = "x25519mlkem768__mldsa65_root__mldsa65_leaf"
    for far in ("wan50", "lossy"):
        sid = f"{base}__net_{far}"
        r = cap.loc[sid]
        assert r["server_utilisation"] >= 0.5, (far, r.to_dict())
        # Per core and per unit of the host's speed around each capacity step (the reference
        # workload's time there): the VM's speed moved by a third within one scenario.
        ratio = speed[sid] / speed[base]
        assert 0.45 <= ratio <= 2.5, (far, r["capacity_per_core"], cap.loc[base].to_dict())
    assert engine_processes(str(pki_cache)) == []
