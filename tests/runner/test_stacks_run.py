"""TLS stacks through a whole run: one hierarchy on OpenSSL 3.5, OpenSSL 4.0 and rustls, and
across stacks both ways; stored, paired and reported."""

import json

import pytest

import chainlab
from chainlab.campaign import load
from chainlab.errors import ChainlabError
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

CAMPAIGN = """
[campaign]
seed = 5
order = "interleaved"

[aliases]
ml = "ML-DSA-44"

[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 12
warmup = 2

[matrix.same]
kex = ["X25519MLKEM768", "MLKEM768"]
hierarchy = [["ml", "ml", "ml"]]
stack = ["openssl-3.5", "openssl-4.0", "rustls"]

[matrix.cross]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml", "ml"]]
client_stack = ["openssl-3.5", "rustls"]
server_stack = ["openssl-3.5", "rustls"]
exclude = [{ client_stack = "openssl-3.5", server_stack = "openssl-3.5" },
           { client_stack = "rustls", server_stack = "rustls" }]
"""


def test_stacks_run_side_by_side_from_one_pki(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "stacks.toml"
    toml.write_text(CAMPAIGN)
    store = tmp_path / "stacks.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert not summary.failed, summary
    assert len(summary.completed) == 8
    assert engine_processes(str(pki_cache)) == []

    with chainlab.open(store) as st:
        scen = st.scenarios.set_index("scenario_id")
        samples = st.samples.query("not warmup")
        runs = st.runs
        sruns = st.scenario_runs.set_index("scenario_id")
        chains = st.observed_chain
    base = "x25519mlkem768__ml_root__ml_int__ml_leaf"
    assert scen.loc[f"{base}__stack_rustls_ossl35", ["client_stack", "server_stack"]].tolist() == [
        "rustls",
        "openssl-3.5",
    ]
    assert set(scen["client_stack"]) == {"openssl-3.5", "openssl-4.0", "rustls"}
    # Every handshake completed with the group asked for and ML-DSA-44's scheme, the two
    # sides' records of each connection paired, each side's bytes the other's.
    assert (samples["outcome"] == "ok").all() and (samples["server_outcome"] == "ok").all()
    kex = samples["scenario_id"].map(scen["kex"])
    assert (samples["grp"] == kex).all()
    assert (samples["sigalg"] == "mldsa44").all()
    assert (samples["bytes_read"] == samples["server_bytes_written"]).all()
    assert (samples["bytes_written"] == samples["server_bytes_read"]).all()
    assert (samples["server_cpu_ns"] > 0).all() and (samples["client_cpu_ns"] > 0).all()
    # One PKI, whatever the stacks: the same certificates served and observed everywhere.
    assert sruns["pki_sha256"].nunique() == 1
    observed = {
        sid: [tuple(r) for r in g.sort_values("position")[["der_bytes", "subject", "sig_alg",
                                                             "key_alg"]].to_numpy()]
        for sid, g in chains.groupby("scenario_id")
    }  # fmt: skip
    assert len(observed) == 8 and len({tuple(v) for v in observed.values()}) == 1
    # The run names each stack's build.
    info = runs.iloc[0]["engine_info"]
    info = json.loads(info) if isinstance(info, str) else info
    assert info["stacks"]["rustls"]["build"]["rustls"] == "0.23.46"
    assert info["stacks"]["openssl-4.0"]["openssl_build"]["openssl_version"].startswith("4.0")

    from chainlab.analysis.analyze import analyze

    a = analyze(store)
    assert set(a.stacks["stack"]) == {
        "openssl-4.0",
        "rustls",
        "openssl-3.5 → rustls",
        "rustls → openssl-3.5",
    }
    assert (a.stacks["latency_ratio_lo"] <= a.stacks["latency_ratio"]).all()
    assert set(a.stack_cost_split["stack"]) == {"openssl-3.5", "openssl-4.0", "rustls"}


@pytest.mark.bad_input
def test_a_binary_of_another_stack_is_refused_before_anything_runs(tmp_path, engine_bin):
    toml = tmp_path / "s.toml"
    toml.write_text(CAMPAIGN)
    store = tmp_path / "s.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHAINLAB_RUSTLS", str(engine_bin))
        with pytest.raises(ChainlabError, match="engine of stack 'openssl-3.5', not 'rustls'"):
            run(load(toml), RunOptions(store=store, live_progress=False))
    assert not store.exists()
