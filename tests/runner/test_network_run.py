"""Campaign runs over emulated links (chainlab.network): the engine runs inside the link's
namespaces, each profile is calibrated once per run and stored once, a run without
privileges still runs its loopback scenarios, and a crash, Ctrl-C or SIGTERM in the middle of
an emulated scenario leaves no namespace, forwarder or engine behind."""

import json
import os
import secrets
import signal
import subprocess
import time

import pytest

import chainlab
from chainlab.campaign import load
from chainlab.network import namespaces
from chainlab.runner import seeds
from chainlab.runner.campaign import RunOptions, run
from chainlab.runner.scenario import ScenarioExecution

from .conftest import engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone


def unique_profile(prefix: str) -> str:
    """A profile name no other run uses: it becomes the tag of the link's namespaces."""
    return f"{prefix}{secrets.token_hex(3)}"


def our_namespaces(profile: str) -> list[str]:
    """`ip netns list` entries of links for `profile` (chainlab-<profile>-<id>-c/-s)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    names = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
    return [n for n in names if n.startswith(f"chainlab-{profile}-")]


def our_forwarders(profile: str) -> list[int]:
    return [
        pid
        for pid, argv in namespaces.forwarder_processes()
        if any(a.startswith(f"chainlab-{profile}-") for a in argv)
    ]


@pytest.mark.netns
def test_scenarios_over_an_emulated_link_calibrate_it_once(
    tmp_path, engine_bin, pki_cache, netns_root, monkeypatch
):
    from chainlab.network import link as linkmod

    calibrated = []
    real = linkmod.run_calibration

    def counting(link, **kw):
        calibrated.append(link.profile)
        return real(link, **kw)

    monkeypatch.setattr(linkmod, "run_calibration", counting)
    opened = []
    real_open = linkmod.Link._open

    def counting_open(cls, *args, **kw):
        opened.append(args)
        return real_open(*args, **kw)

    monkeypatch.setattr(linkmod.Link, "_open", classmethod(counting_open))
    toml = tmp_path / "n.toml"
    # Interleaved: every batch is a visit, two scenarios share the profile, and a target no
    # run meets makes each take several batches; one link (chainlab.runner.links) serves
    # every visit, and the run closes it.
    toml.write_text(
        '[campaign]\nseed = 7\norder = "interleaved"\n[aliases]\nml = "ML-DSA-65"\n'
        "[network.lan]\ndelay_ms = 5\n"
        "[primitives]\nmeasure = false\n"  # the path reference is test_primitives.py's
        "[sampling]\ntarget_rel_halfwidth = 0.0001\nmin = 4\nmax = 12\nwarmup = 1\n"
        '[matrix.m]\nkex = ["X25519", "X25519MLKEM768"]\nhierarchy = [["ml", "ml"]]\n'
        'network = ["lan"]\n'
    )
    summary = run(load(toml), RunOptions(store=tmp_path / "n.duckdb", live_progress=False))
    assert sorted(summary.completed) == [
        "x25519__ml_root__ml_leaf__net_lan",
        "x25519mlkem768__ml_root__ml_leaf__net_lan",
    ], summary
    assert engine_processes(str(pki_cache)) == []
    assert len(calibrated) == 1
    assert len(opened) == 1
    assert our_namespaces("lan") == [] and our_forwarders("lan") == []
    # Derived from the campaign's seed and the profile: the loss pattern replays.
    assert calibrated[0].seed == seeds.derive(7, "link", "lan")
    st = chainlab.open(tmp_path / "n.duckdb")
    try:
        sr = st.scenario_runs
        assert (sr["batches"] >= 2).all()  # several visits, one link, one calibration
        # The forwarder's own timing while it carried each emulated scenario is stored: its
        # visits' wake-ups only, not the calibration's nor the other scenario's.
        emulated = sr[sr["scenario_id"].str.contains("net_lan")]
        assert len(emulated) and emulated["link_timer_late_us_mean"].notna().all()
        assert (emulated["link_timer_late_us_max"] >= emulated["link_timer_late_us_mean"]).all()
        assert emulated["link_flagged"].notna().all()
        assert sr[~sr["scenario_id"].str.contains("net_")]["link_flagged"].isna().all()
        np_ = st.network_profiles
        assert list(np_["profile"]) == ["lan"]
        measured = json.loads(np_.iloc[0]["measured"])
        assert measured["configured_rtt_ms"] == 10
        assert bool(np_.iloc[0]["flagged"]) == measured["flagged"]
        assert json.loads(np_.iloc[0]["configured"])["seed"] == seeds.derive(7, "link", "lan")
        ok = st.samples.query("not warmup and outcome == 'ok'")
        assert len(ok) == 24
        # TCP connect takes one round trip (10 ms), the TLS 1.3 handshake at least one more.
        assert (ok["connect_ns"] >= 9_000_000).all()
        assert (ok["total_ns"] >= 19_000_000).all()
    finally:
        st.close()


@pytest.mark.netns
def test_over_a_path_with_delay_the_client_reads_each_close_after_the_next_handshake(
    tmp_path, engine_bin, pki_cache, netns_root
):
    """The close's round trip leaves the run: the engine's time is its handshakes' own (9 of
    them on a 50 ms path, where reading each close first took a round trip more, 0.45 s), and
    each connection still closes on both sides with the whole connection's bytes counted."""
    profile = unique_profile("dc")
    toml = tmp_path / "d.toml"
    toml.write_text(
        '[campaign]\nseed = 3\n[aliases]\nml = "ML-DSA-65"\n'
        f"[network.{profile}]\ndelay_ms = 25\n"
        "[primitives]\nmeasure = false\n"
        '[sampling]\nmode = "fixed"\ncount = 8\nwarmup = 1\n'
        '[matrix.m]\nkex = ["X25519MLKEM768"]\nhierarchy = [["ml", "ml"]]\n'
        f'network = ["{profile}"]\n'
    )
    c = load(toml)
    (s,) = c.scenarios.values()
    assert s.handshake.defers_close
    summary = run(c, RunOptions(store=tmp_path / "d.duckdb", live_progress=False))
    assert summary.completed == [s.scenario_id], summary
    st = chainlab.open(tmp_path / "d.duckdb")
    try:
        (engine_s,) = st.scenario_runs["engine_seconds"]
        rows = st.samples.sort_values("seq")
    finally:
        st.close()
    assert list(rows["seq"]) == list(range(9))
    assert set(rows["outcome"]) == set(rows["server_outcome"]) == {"ok"}
    # The whole connection's bytes: the server's tickets and close_notify read after its
    # handshake's flight.
    assert (rows["conn_bytes_read"] > rows["bytes_read"]).all()
    handshakes_s = rows["total_ns"].sum() / 1e9
    # One engine process: its start and the last close (a round trip) besides the handshakes.
    assert engine_s - handshakes_s < 0.25, (engine_s, handshakes_s)


def test_without_privileges_emulated_scenarios_fail_and_loopback_ones_run(
    tmp_path, engine_bin, pki_cache, monkeypatch
):
    # Not root and no capabilities, as namespaces.require_privileges sees the process.
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(namespaces, "_effective_capabilities", lambda: 0)
    profile = unique_profile("nopriv")
    toml = tmp_path / "p.toml"
    toml.write_text(
        '[aliases]\nml = "ML-DSA-65"\n'
        f"[network.{profile}]\ndelay_ms = 5\n"
        "[primitives]\nmeasure = false\n"  # what fails is the link, not the cost model
        '[sampling]\nmode = "fixed"\ncount = 10\nwarmup = 1\n'
        '[matrix.m]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\n'
        f'network = ["loopback", "{profile}"]\n'
    )
    summary = run(load(toml), RunOptions(store=tmp_path / "p.duckdb", live_progress=False))
    assert summary.completed == ["x25519__ml_root__ml_leaf"]
    assert summary.failed == [f"x25519__ml_root__ml_leaf__net_{profile}"]
    assert our_namespaces(profile) == []
    st = chainlab.open(tmp_path / "p.duckdb")
    try:
        failed = st.scenario_runs.query("status == 'failed'").iloc[0]
        assert failed["failure_cause"] == "network_unavailable"
        assert "emulated network profiles need root" in failed["failure_detail"]
        assert "use only the 'loopback' network" in failed["failure_detail"]
        assert failed["n_measured"] == 0
        assert len(st.network_profiles) == 0
        assert st.runs.iloc[0]["status"] == "completed"
    finally:
        st.close()


@pytest.mark.netns
def test_a_crash_in_an_emulated_scenario_tears_the_link_down(
    tmp_path, engine_bin, pki_cache, netns_root, monkeypatch
):
    profile = unique_profile("crash")
    seen = []

    def crash(self, count, warm):
        seen.extend(our_namespaces(profile))
        raise RuntimeError("injected crash while the link is up")

    monkeypatch.setattr(ScenarioExecution, "_run_batch", crash)
    toml = tmp_path / "c.toml"
    toml.write_text(
        f'[aliases]\nml = "ML-DSA-65"\n[network.{profile}]\ndelay_ms = 1\n'
        # The crash is the scenario's: no reference handshake runs first (they would crash).
        "[primitives]\nmeasure = false\n"
        '[sampling]\nmode = "fixed"\ncount = 10\n'
        f'[matrix.m]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\nnetwork = ["{profile}"]\n'
    )
    with pytest.raises(RuntimeError, match="injected crash"):
        run(load(toml), RunOptions(store=tmp_path / "c.duckdb", live_progress=False))
    assert len(seen) == 2  # client and server namespace existed when it crashed
    assert our_namespaces(profile) == []
    assert our_forwarders(profile) == []
    assert engine_processes(str(pki_cache)) == []
    st = chainlab.open(tmp_path / "c.duckdb")
    try:
        assert st.runs.iloc[0]["status"] == "failed"
    finally:
        st.close()


@pytest.mark.netns
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_during_an_emulated_scenario_tears_everything_down(
    tmp_path, engine_bin, pki_cache, netns_root, cli, sig
):
    profile = unique_profile("sig")
    toml = tmp_path / "s.toml"
    # One scenario whose single client batch would run for up to the time cap (bounded).
    toml.write_text(
        f'[aliases]\nml = "ML-DSA-65"\n[network.{profile}]\ndelay_ms = 2\n'
        # The signal finds the scenario's client, not a reference handshake's.
        "[primitives]\nmeasure = false\n"
        "[sampling]\ntarget_rel_halfwidth = 0.0001\nmin = 100000\nmax = 100000\n"
        "time_cap_s = 20\nwarmup = 1\n"
        f'[matrix.m]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\nnetwork = ["{profile}"]\n'
    )
    store = tmp_path / "s.duckdb"
    p = cli.popen(
        "run", toml, "--store", store, cwd=tmp_path, env={"CI": "true"}, stderr=subprocess.PIPE
    )
    try:
        # Wait until the link exists and the measuring client runs inside it (after the
        # calibration), then signal.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            running = any(" handshake " in c for c in engine_processes(str(pki_cache)))
            if our_namespaces(profile) and running:
                break
            time.sleep(0.1)
        assert p.poll() is None, p.stderr.read()
        assert len(our_namespaces(profile)) == 2
        assert our_forwarders(profile)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert "run interrupted" in err
    assert our_namespaces(profile) == []
    assert our_forwarders(profile) == []
    assert engine_processes(str(pki_cache)) == []
    st = chainlab.open(store)
    try:
        assert st.runs.iloc[0]["status"] == "interrupted"
        assert len(st.scenario_runs) == 0  # the scenario in flight is lost, nothing else
    finally:
        st.close()
