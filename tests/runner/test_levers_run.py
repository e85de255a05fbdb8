"""Intermediate suppression, trust anchors and client certificates with the real engine:
the client trusting only the intermediate reads exactly the omitted certificates' bytes
less, a client certificate's chain is what the server recorded, and the report reads each
lever against its twin."""

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner import pki
from chainlab.runner.campaign import RunOptions, run

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
name = "levers"
order = "declared"
seed = 3
[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHAKE-128f"
[sampling]
mode = "fixed"
count = 8
warmup = 1
[primitives]
measure = false
[matrix.anchor]
kex = ["X25519"]
hierarchy = [["ml", "ml", "ml"]]
served_chain = ["leaf+intermediates", "leaf", "intermediate-anchor"]
[matrix.mtls]
kex = ["X25519"]
hierarchy = [["ml", "ml"]]
client_auth = ["none", ["ml", "ml", "ml"], ["ml", "slhf"]]
"""
# A TLS 1.3 CertificateEntry's framing around a certificate's DER: a 3-byte length before,
# a 2-byte extensions block after (RFC 8446, 4.4.2).
ENTRY_FRAMING = 5


@pytest.fixture(scope="module")
def levers_store(tmp_path_factory, engine_bin, pki_cache):
    d = tmp_path_factory.mktemp("levers")
    f = d / "levers.toml"
    f.write_text(CAMPAIGN)
    store = d / "levers.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 6, summary
    return store


def test_an_intermediate_anchor_omits_the_intermediate(levers_store, engine_bin):
    with chainlab.open(levers_store) as st:
        s = st.samples
        obs = st.observed_chain
    s = s[~s["warmup"]]
    assert (s["outcome"] == "ok").all()
    read = s.groupby("scenario_id")["bytes_read"].agg(["min", "max"])
    assert (read["min"] == read["max"]).all()  # the same bytes every handshake
    base = "x25519__ml_root__ml_int__ml_leaf"
    anchored = f"{base}__served_intanchor"
    pki_dir = pki.ensure(engine_bin, ("ML-DSA-44",) * 3, 3)
    int_der = len(pki.pem_certs(pki_dir / "int1.pem")[0])
    assert read.at[base, "min"] - read.at[anchored, "min"] == int_der + ENTRY_FRAMING
    assert len(obs[obs["scenario_id"] == anchored]) == 1


def test_the_server_records_the_client_chain(levers_store, engine_bin):
    with chainlab.open(levers_store) as st:
        chains = st.observed_client_chain
        scen = st.scenarios.set_index("scenario_id")
    deep = "x25519__ml_root__ml_leaf__client_ml_ml_ml"
    assert scen.at[deep, "client_auth"] == "ML-DSA-44,ML-DSA-44,ML-DSA-44"
    assert scen.at["x25519__ml_root__ml_leaf", "client_auth"] == "none"
    c = chains[chains["scenario_id"] == deep].sort_values("position")
    client_dir = pki.ensure_client(engine_bin, ("ML-DSA-44",) * 3, 3)
    sent = [len(d) for d in pki.pem_certs(client_dir / "chain-leaf+intermediates.pem")]
    assert list(c["der_bytes"]) == sent
    assert c["subject"].iloc[0].endswith("chainlab client leaf (ML-DSA-44)")
    slh = chains[chains["scenario_id"] == "x25519__ml_root__ml_leaf__client_ml_slhf"]
    assert list(slh["key_alg"]) == ["SLH-DSA-SHAKE-128f"]
    # The client root is a CA of its own, not the server's.
    server_root = pki.pem_certs(pki.ensure(engine_bin, ("ML-DSA-44",) * 2, 3) / "ca.pem")
    assert pki.pem_certs(client_dir / "ca.pem") != server_root


def test_the_report_reads_each_lever_against_its_twin(levers_store, tmp_path):
    a = analyze(levers_store)
    assert set(a.intermediates["policy"]) == {"leaf", "intermediate-anchor"}
    c = a.client_auth.set_index("client_leaf")
    # An SLH-DSA client leaf signs on the client: its added CPU dwarfs the server's.
    assert (
        c.at["SLH-DSA-SHAKE-128f", "client_cpu_diff_ms_lo"]
        > c.at["SLH-DSA-SHAKE-128f", "server_cpu_diff_ms_hi"]
    )
    out = build_report(levers_store, tmp_path / "r")
    md = (out / "report.md").read_text()
    assert "## Intermediates and trust anchors" in md
    assert "## Mutual TLS" in md and "client_auth_split.png" in md
