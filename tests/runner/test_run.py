"""End to end with the real engine: quick.toml into a store, a killed run resumed, Ctrl-C,
and a scenario whose server goes away. Each asserts that no engine process is left."""

import hashlib
import json
import signal
import subprocess
import time

import pytest

import chainlab
from chainlab.campaign import load
from chainlab.runner import pki, stopwatch
from chainlab.runner.campaign import RunOptions, run
from chainlab.runner.wall_time import rest_parts
from chainlab.schema import counted

from .conftest import REPO, engine_processes

QUICK = REPO / "campaigns" / "quick.toml"
pytestmark = pytest.mark.slow


def launch(cli, args, cwd, env_extra=None, **kw):
    return cli.popen(*args, cwd=cwd, env={"CI": "true", **(env_extra or {})}, **kw)


def no_engines_left(marker, within_s=5.0):
    deadline = time.monotonic() + within_s
    while engine_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engine_processes(marker) == []


@pytest.fixture(scope="module")
def quick_store(tmp_path_factory, engine_bin, pki_cache, cli):
    d = tmp_path_factory.mktemp("quick")
    store = d / "quick.duckdb"
    # The hierarchies this session's cache lacks before the run (other tests may have made
    # some): what the run's stored estimate must count as to generate.
    c = load(QUICK)
    missing = {
        tuple(spec[0])
        for s in c.select(None)
        for spec in pki.needed(s, c.seed)
        if not pki.cached(pki.location(engine_bin, *spec))
    }
    p = launch(cli, ["run", str(QUICK), "--store", str(store)], d, stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    no_engines_left(str(pki_cache))
    return store, err, missing


def test_quick_campaign_end_to_end(quick_store):
    store, err, missing = quick_store
    c = load(QUICK)
    ids = set(c.scenarios)
    assert "run completed: 6 completed, 0 failed" in err
    st = chainlab.open(store)
    try:
        sr = st.scenario_runs
        assert set(sr["scenario_id"]) == ids
        assert (sr["status"] == "completed").all()
        assert sr["stop_reason"].isin(["ci_target", "max_count", "time_cap"]).all()
        # Each server kept for later visits (chainlab.runner.servers), alive as its scenario ended.
        assert (sr["server_exit"] == "kept").all()
        s = st.samples
        meas = s[~s["warmup"]]
        # scenario_runs counts are the samples' counts
        for _, r in sr.iterrows():
            ms = meas[meas["scenario_id"] == r["scenario_id"]]
            assert len(ms) == r["n_measured"] and (ms["outcome"] == "ok").sum() == r["n_ok"]
            ws = s[(s["scenario_id"] == r["scenario_id"]) & s["warmup"]]
            assert len(ws) == r["n_warmup"] >= 1
            seqs = sorted(s[s["scenario_id"] == r["scenario_id"]]["seq"])
            assert seqs == list(range(len(seqs)))  # batches continue the numbering
        # client and server records are paired: the server wrote what the client read
        ok = meas[meas["outcome"] == "ok"]
        assert ok["server_cpu_ns"].notna().all()
        assert (ok["bytes_read"] == ok["server_bytes_written"]).all()
        kex = ok["scenario_id"].map(lambda x: c.scenarios[x].kex.lower())
        assert (ok["grp"].str.lower() == kex).all()  # OpenSSL spells x25519 in lower case
        # the observed chain is what the server sends
        for _, r in sr.iterrows():
            oc = st.observed_chain.query("scenario_id == @r.scenario_id")
            assert len(oc) == r["served_chain_len"]
            assert oc["der_bytes"].sum() == r["served_chain_der_bytes"]
        # shared scenarios are stored once, with both memberships
        cs = st.campaign_scenarios
        shared = "x25519mlkem768__ml_root__ml_leaf"
        assert set(cs[cs["scenario_id"] == shared]["campaign"]) == {"kex", "depth"}
        assert len(st.scenarios) == len(ids)
        run = st.runs.iloc[0]
        assert run["status"] == "completed" and run["ended_at"] is not None
        assert run["campaign_file_name"] == "quick.toml"
        assert run["campaign_file_sha256"] == hashlib.sha256(QUICK.read_bytes()).hexdigest()
        assert run["openssl_version"].startswith("3.")
        machine = json.loads(run["machine"])
        assert machine["cores"] >= 1 and machine["kernel"]
        libraries = json.loads(run["libraries"])  # the analysis libraries of the run
        assert {"python", "numpy", "scipy", "pandas", "duckdb"} <= set(libraries)
        assert all(isinstance(v, str) and v for v in libraries.values())
        assert str(REPO) not in run["machine"] and str(REPO) not in run["options"]
        # The run-time estimate it started with, and what it had to make: each hierarchy
        # the cache lacked before the run, once, charged to a scenario of the run.
        est = json.loads(run["estimate"])
        assert est["low_s"] <= est["expected_s"] <= est["high_s"]
        assert set(est["phases"]) == {
            "start", "primitives", "references", "hierarchies", "calibration", "scenarios",
            "windows",
        }  # fmt: skip
        made = est["fresh"]["hierarchies"]  # [scenario, hierarchy, MTC batch]
        assert len(made) == len({tuple(h) for _, h, _ in made})
        assert {tuple(h) for _, h, _ in made} == missing
        assert {sid for sid, _, _ in made} <= ids
        assert "estimated run time: " in err and "estimate/wall " in err
        # Priced at the host's speed as the run started (a reading, also its first window's).
        assert est["host_reading_ns"] > 0 and "priced at the host's speed now" in err
        certs = st.certificates
        assert set(certs["scenario_id"]) == ids
    finally:
        st.close()


def wait_for_first_scenario(p):
    """Reads the run's stderr until the first scenario is committed (its line printed)."""
    lines = []
    for line in p.stderr:
        lines.append(line)
        if line.startswith("[1/"):
            return lines
    raise AssertionError("run ended before the first scenario: " + "".join(lines))


def test_killed_run_resumes_to_the_same_completed_set(tmp_path, quick_store, pki_cache, cli):
    store = tmp_path / "k.duckdb"
    p = launch(cli, ["run", str(QUICK), "--store", str(store)], tmp_path, stderr=subprocess.PIPE)
    try:
        wait_for_first_scenario(p)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait(timeout=30)
    no_engines_left(str(pki_cache))  # the parent-death signal took them down
    st = chainlab.open(store)  # a killed run leaves a store that opens
    first = st.completed_scenarios()
    assert 1 <= len(first) < 6
    st.close()

    p = launch(cli, ["run", str(QUICK), "--store", str(store), "--resume"], tmp_path,
            stderr=subprocess.PIPE)  # fmt: skip
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert f"{counted(len(first), 'scenario')} already completed" in err
    no_engines_left(str(pki_cache))

    ref = chainlab.open(quick_store[0])
    st = chainlab.open(store)
    try:
        assert st.completed_scenarios() == ref.completed_scenarios()
        # every scenario ran to completion exactly once: no duplicate samples
        sr = st.scenario_runs
        assert sr.groupby("scenario_id").size().max() == 1
        per = st.query("SELECT scenario_id, count(DISTINCT run_id) AS runs, count(*) AS n, "
                       "count(DISTINCT seq) AS seqs FROM samples GROUP BY 1")  # fmt: skip
        assert (per["runs"] == 1).all() and (per["n"] == per["seqs"]).all()
        runs = st.runs.sort_values("started_at")
        assert list(runs["status"]) == ["interrupted", "completed"]
        assert runs.iloc[0]["ended_at"] is None or str(runs.iloc[0]["ended_at"]) == "NaT"
    finally:
        st.close()
        ref.close()


def test_ctrl_c_marks_the_run_interrupted(tmp_path, engine_bin, pki_cache, cli):
    store = tmp_path / "i.duckdb"
    p = launch(cli, ["run", str(QUICK), "--store", str(store), "--order", "declared"], tmp_path,
            stderr=subprocess.PIPE)  # fmt: skip
    try:
        wait_for_first_scenario(p)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    no_engines_left(str(pki_cache))
    st = chainlab.open(store)
    try:
        assert st.runs.iloc[0]["status"] == "interrupted"
        assert len(st.completed_scenarios()) >= 1
        assert set(st.samples["scenario_id"]) == st.completed_scenarios()
    finally:
        st.close()


def test_a_scenario_whose_server_goes_away_fails_and_the_campaign_goes_on(
    tmp_path, engine_bin, pki_cache, monkeypatch
):
    # An engine whose server stops accepting after 12 connections, as a crashed one would.
    wrapper = tmp_path / "engine-wrapper"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = serve ]; then exec {engine_bin} "$@" --max-connections 12; fi\n'
        f'exec {engine_bin} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("CHAINLAB_ENGINE", str(wrapper))
    toml = tmp_path / "f.toml"
    toml.write_text(
        '[aliases]\nml = "ML-DSA-65"\n[primitives]\nmeasure = false\n'
        '[sampling]\nmode = "fixed"\ncount = 40\nwarmup = 2\ntimeout_ms = 2000\n'
        '[matrix.m]\nkex = ["X25519", "X25519MLKEM768"]\nhierarchy = [["ml", "ml"]]\n'
    )
    summary = run(load(toml), RunOptions(store=tmp_path / "f.duckdb", live_progress=False))
    assert sorted(summary.failed) == ["x25519__ml_root__ml_leaf",
                                      "x25519mlkem768__ml_root__ml_leaf"]  # fmt: skip
    no_engines_left(str(pki_cache))
    st = chainlab.open(tmp_path / "f.duckdb")
    try:
        sr = st.scenario_runs
        assert (sr["status"] == "failed").all()
        assert (sr["stop_reason"] == "failed").all()
        for _, r in sr.iterrows():
            assert r["failure_cause"] in ("server_exited", "connect_refused")
            assert r["n_failed"] > 0 and r["n_ok"] <= 12
            assert r["failure_detail"]
        assert st.runs.iloc[0]["status"] == "completed"
    finally:
        st.close()


def test_interleaved_order_alternates_batches(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "il.toml"
    toml.write_text(
        '[campaign]\norder = "interleaved"\n[aliases]\nml = "ML-DSA-65"\n'
        # a target no run meets: every scenario runs to max, in several batches
        "[sampling]\ntarget_rel_halfwidth = 0.0001\nmin = 20\nmax = 60\nwarmup = 2\n"
        '[matrix.m]\nkex = ["X25519", "X25519MLKEM768"]\nhierarchy = [["ml", "ml"]]\n'
    )
    summary = run(load(toml), RunOptions(store=tmp_path / "il.duckdb", live_progress=False))
    assert len(summary.completed) == 2
    no_engines_left(str(pki_cache))
    st = chainlab.open(tmp_path / "il.duckdb")
    try:
        sr = st.scenario_runs
        assert (sr["stop_reason"] == "max_count").all() and (sr["batches"] >= 2).all()
        # Each scenario's wall time is its own visits', not the time since both were made:
        # the two together fill the interleaved span once (each alone was nearly all of it).
        span = (sr["ended_at"].max() - sr["started_at"].min()).total_seconds()
        assert (sr["wall_seconds"] > 0).all()
        assert sr["wall_seconds"].sum() < 1.3 * span, (list(sr["wall_seconds"]), span)
        s = st.samples.sort_values("start_unix_ns")
        # batches alternate: the scenario id changes more than once along the time axis
        changes = (s["scenario_id"] != s["scenario_id"].shift()).sum() - 1
        assert changes >= 3
        # Where the rest went: a server started per visit (one per batch, interleaved), a
        # client process per batch, each hierarchy read once; the parts never add up to
        # more than the time outside the client loops.
        parts, batches = summary.watch.parts, int(sr["batches"].sum())
        assert parts[stopwatch.SERVER_STARTS].count == batches
        assert parts[stopwatch.CLIENT_BATCHES].count == batches
        assert parts[stopwatch.HIERARCHIES].count == 2
        # On loopback no link is opened or closed; the network checks ran once, finding none.
        assert stopwatch.LINKS not in parts and stopwatch.LINKS_CLOSED not in parts
        assert parts[stopwatch.NETWORK_CHECKS].count == 1
        loops = max(summary.engine_seconds, summary.attempt_seconds)
        rest = rest_parts(summary)
        named = sum(s for name, s, _ in rest[:-1])
        assert all(s >= 0 for _, s, _ in rest) and 0 < named <= summary.wall_seconds - loops
        assert sum(s for _, s, _ in rest) == pytest.approx(summary.wall_seconds - loops)
    finally:
        st.close()


def test_a_store_write_refused_by_the_file_system_ends_the_run_resumably(
    tmp_path, engine_bin, pki_cache, monkeypatch, capsys
):
    """Disk full during a scenario's commit: one line naming the store and the cause, exit 2,
    the run marked failed, the scenarios committed before kept; --resume completes it."""
    import duckdb

    from chainlab.cli import main
    from chainlab.model import host_speed
    from chainlab.store import Store

    tiny = REPO / "tests" / "data" / "stores" / "tiny.toml"
    store = tmp_path / "full.duckdb"
    real = Store.insert
    calls = {"n": 0}

    def full_disk(self, table, rows, **kw):
        if table == "samples":
            calls["n"] += 1
            if calls["n"] == 2:
                raise duckdb.IOException("IO Error: Could not write file: No space left on device")
        return real(self, table, rows, **kw)

    monkeypatch.setattr(Store, "insert", full_disk)
    monkeypatch.setenv("CI", "true")
    # Each scenario its own host-reading window, so each its own commit.
    monkeypatch.setattr(host_speed, "WINDOW_S", 0.0)
    assert main(["run", str(tiny), "--store", str(store)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"chainlab: error: store {store}: cannot write (IO Error: ")
    assert "No space left on device" in err[-1] and "--resume" in err[-1]
    assert not any("Traceback" in line for line in err)
    with chainlab.open(store) as st:
        assert list(st.runs["status"]) == ["failed"]
        assert len(st.scenario_runs) == 1  # the first scenario's commit is kept whole
        assert set(st.samples["scenario_id"]) == set(st.scenario_runs["scenario_id"])
    no_engines_left(str(pki_cache))
    monkeypatch.setattr(Store, "insert", real)
    assert main(["run", str(tiny), "--store", str(store), "--resume"]) == 0
    with chainlab.open(store) as st:
        assert list(st.runs["status"]) == ["failed", "completed"]
        assert len(st.scenario_runs) == 3 and (st.scenario_runs["status"] == "completed").all()
