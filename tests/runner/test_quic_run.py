"""QUIC scenarios through a whole run (the `transport` axis): on loopback and over an
emulated 50 ms RTT link, where the anti-amplification limit shows as round trips."""

import math

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

RTT_MS = 50.0


def medians_ms(store) -> dict[str, float]:
    with chainlab.open(store) as st:
        ok = st.samples.query("not warmup and outcome == 'ok'")
        return (ok.groupby("scenario_id")["total_ns"].median() / 1e6).to_dict()


@pytest.mark.netns
def test_quic_round_trips_over_a_50ms_link(tmp_path, engine_bin, pki_cache, netns_root):
    """An ECDSA P-256 chain fits the server's first QUIC flight (one round trip, where TCP
    needs two); an SLH-DSA-SHAKE-128f root sent in full is far above three times the
    client's first flight and takes at least one more. Round trips are read from each
    scenario's median against its loopback twin, never from absolute times."""
    toml = tmp_path / "q.toml"
    toml.write_text(
        '[campaign]\nseed = 3\norder = "declared"\n'
        '[aliases]\nec = "ECDSA-P256"\nml = "ML-DSA-44"\nslhf = "SLH-DSA-SHAKE-128f"\n'
        f"[network.wan]\ndelay_ms = {RTT_MS / 2}\n"
        "[primitives]\nmeasure = false\n"  # the path reference is test_primitives.py's
        '[sampling]\nmode = "fixed"\ncount = 8\nwarmup = 1\n'
        '[matrix.ec]\nkex = ["X25519MLKEM768"]\nhierarchy = [["ec", "ec"]]\n'
        'transport = ["tcp", "quic"]\nnetwork = ["loopback", "wan"]\n'
        '[matrix.slh]\nkex = ["X25519MLKEM768"]\nhierarchy = [["slhf", "ml"]]\n'
        'served_chain = ["full"]\ntransport = ["quic"]\nnetwork = ["loopback", "wan"]\n'
    )
    store = tmp_path / "q.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert not summary.failed, summary
    assert engine_processes(str(pki_cache)) == []
    med = medians_ms(store)

    def round_trips(sid: str) -> float:
        return (med[f"{sid}__net_wan"] - med[sid]) / RTT_MS

    ec_quic = "x25519mlkem768__ec_root__ec_leaf__quic"
    ec_tcp = "x25519mlkem768__ec_root__ec_leaf"
    slh = "x25519mlkem768__slhf_root__ml_leaf__served_full__quic"
    assert round(round_trips(ec_quic)) == 1, med
    assert round(round_trips(ec_tcp)) == 2, med  # TCP connect, then the TLS round trip
    assert round(round_trips(slh)) >= 2, med

    with chainlab.open(store) as st:
        ok = st.samples.query("not warmup and outcome == 'ok'")
        quic = ok[ok["scenario_id"].str.contains("__quic")]
        assert quic["datagrams_read"].notna().all() and quic["flight_datagrams"].notna().all()
        tcp = ok[~ok["scenario_id"].str.contains("__quic")]
        assert tcp["datagrams_read"].isna().all()
        # The client had to acknowledge before the rest of the SLH chain could come.
        wan = quic.groupby("scenario_id")["flight_datagrams"].min()
        assert wan[f"{slh}__net_wan"] > wan[f"{ec_quic}__net_wan"], wan
        assert set(st.scenarios.set_index("scenario_id")["transport"]) == {"tcp", "quic"}

    # The report's model predicts the same round trips for each transport.
    a = analyze(store)
    rows = {r["scenario_id"]: r for r in a.quic.to_dict("records")}
    assert rows[f"{ec_quic}__net_wan"]["round_trips"] == 1
    assert rows[f"{ec_quic}__net_wan"]["twin_round_trips"] == 2
    observed = rows[f"{ec_quic}__net_wan"]["observed_round_trips"]
    assert math.isfinite(observed) and abs(observed - 1) < 0.5
    projection = a.network.projection.set_index("emulated_id")
    assert projection.at[f"{slh}__net_wan", "round_trips"] >= 2


def test_quic_scenarios_run_on_loopback_and_are_reported(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "l.toml"
    toml.write_text(
        '[campaign]\nseed = 1\norder = "declared"\n[aliases]\nml = "ML-DSA-44"\n'
        "[primitives]\nmeasure = false\n"  # QUIC's references are test_primitives.py's
        '[sampling]\nmode = "fixed"\ncount = 10\nwarmup = 1\n'
        '[matrix.m]\nkex = ["X25519MLKEM768", "MLKEM768"]\nhierarchy = [["ml", "ml"]]\n'
        'transport = ["tcp", "quic"]\n'
    )
    store = tmp_path / "l.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert not summary.failed and len(summary.completed) == 4, summary
    with chainlab.open(store) as st:
        ok = st.samples.query("not warmup and outcome == 'ok'")
        assert len(ok) == 40
        quic = ok[ok["scenario_id"].str.endswith("__quic")]
        # Every QUIC connection was counted on both sides, and what the client sent up to its
        # Finished the server had read by its own completion (the engine tests check the
        # connection's bytes for equality both ways).
        assert (quic["bytes_read"] > 0).all() and (quic["server_bytes_written"] > 0).all()
        assert (quic["bytes_written"] <= quic["server_bytes_read"]).all()
        assert set(quic["grp"]) == {"X25519MLKEM768", "MLKEM768"}
    a = analyze(store)
    assert len(a.quic) == 2
    assert set(a.quic["twin_id"]) == {
        "x25519mlkem768__ml_root__ml_leaf",
        "mlkem768__ml_root__ml_leaf",
    }
    assert a.quic["latency_ratio"].notna().all()
    assert (a.quic["round_trips_basis"].str.startswith("projected at")).all()
