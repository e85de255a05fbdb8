"""A scenario over an emulated link (chainlab.network): the engine runs inside the link's
namespaces, the calibration is stored, and the latency carries the link's round trips."""

import os

import pytest

import chainlab
from chainlab.campaign import load
from chainlab.errors import ChainlabError
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.netns]


def test_scenario_over_an_emulated_link(tmp_path, engine_bin, pki_cache):
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    try:
        from chainlab.network.link import forwarder_path

        forwarder_path()
    except (ImportError, ChainlabError) as e:
        pytest.skip(f"emulated link not available: {e}")
    toml = tmp_path / "n.toml"
    toml.write_text(
        '[aliases]\nml = "ML-DSA-65"\n'
        "[network.lan]\ndelay_ms = 5\n"
        '[sampling]\nmode = "fixed"\ncount = 20\nwarmup = 2\n'
        '[matrix.m]\nkex = ["X25519MLKEM768"]\nhierarchy = [["ml", "ml"]]\nnetwork = ["lan"]\n'
    )
    summary = run(load(toml), RunOptions(store=tmp_path / "n.duckdb", live_progress=False))
    assert summary.completed == ["x25519mlkem768__ml_root__ml_leaf__net_lan"], summary
    assert engine_processes(str(pki_cache)) == []
    st = chainlab.open(tmp_path / "n.duckdb")
    try:
        np_ = st.network_profiles
        assert list(np_["profile"]) == ["lan"]
        assert np_.iloc[0]["measured"] is not None
        ok = st.samples.query("not warmup and outcome == 'ok'")
        assert len(ok) == 20
        # TCP connect takes one round trip (10 ms), the TLS 1.3 handshake at least one more.
        assert (ok["connect_ns"] >= 9_000_000).all()
        assert (ok["total_ns"] >= 19_000_000).all()
    finally:
        st.close()
