"""Merkle Tree Certificates end to end: a campaign crossing X.509 with both MTC kinds runs on
both stacks over TCP and QUIC; the store says what each client checked, the analysis pairs
each MTC with the X.509 chain of its leaf, and the report shows it."""

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone

CAMPAIGN = """
[campaign]
name = "mtc"
order = "declared"
[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 6
warmup = 1
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-65"]]
certificate = [
    "x509",
    { kind = "mtc-landmark", batch = 4096 },
    { kind = "mtc-standalone", batch = 4096, cosigners = ["ML-DSA-44"] },
]
stack = ["openssl-3.5", "rustls"]
[matrix.retry]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-65"]]
certificate = [{ kind = "mtc-landmark", batch = 4096, landmark_held = false, retry = true }]
[matrix.quic]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-65"]]
certificate = ["x509", { kind = "mtc-landmark", batch = 4096, landmark_held = false }]
transport = ["quic"]
"""


def test_an_mtc_campaign_runs_stores_and_reports(tmp_path, engine_bin, pki_cache):
    f = tmp_path / "mtc.toml"
    f.write_text(CAMPAIGN)
    c = load(f)
    store = tmp_path / "mtc.duckdb"
    summary = run(c, RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 9 and not summary.failed, summary
    with chainlab.open(store) as st:
        samples, scenarios = st.samples, st.table("scenarios")
    ok = samples[~samples["warmup"]]
    assert (ok["outcome"] == "ok").all(), ok[ok["outcome"] != "ok"]["error_detail"].tolist()
    kinds = scenarios.set_index("scenario_id")["certificate"].to_dict()
    for sid, g in ok.groupby("scenario_id"):
        if kinds[sid] == "x509":
            assert g["mtc_kind"].isna().all()
            continue
        assert g["mtc_proof_hashes"].eq(11).all(), sid
        want = {"mtc-landmark": "landmark", "mtc-standalone": "standalone"}[kinds[sid]]
        if "_nolm" in sid:
            want = "standalone"  # without the landmark, the CA-signed certificate
        assert set(g["mtc_kind"]) == {want}, sid
        checked = {"landmark": 0, "standalone": 2 if "mtcs" in sid else 1}[want]
        assert g["mtc_signatures_checked"].eq(checked).all(), sid
    # The retry: one sample per attempt, its server side both connections' (paired by the
    # first connection's id), its bytes the two flights.
    retry = ok[ok["scenario_id"].str.endswith("_nolm_retry")]
    landmark = ok[ok["scenario_id"].str.endswith("leaf__mtcl4096")]
    assert len(retry) == 6 and retry["server_cpu_ns"].notna().all()
    assert (retry["bytes_read"] > landmark["bytes_read"].max()).all()
    a = analyze(store)
    pairs = a.mtc.set_index("scenario_id")
    assert len(pairs) == 6
    landmark = pairs.loc["x25519mlkem768__mldsa44_root__mldsa65_leaf__mtcl4096"]
    # The landmark-relative MTC carries the leaf key and 11 hashes: smaller than the X.509
    # leaf, which carries the root's ML-DSA-44 signature.
    assert landmark["cert_bytes"] < landmark["twin_cert_bytes"]
    assert landmark["bytes_read"] < landmark["twin_bytes_read"]
    assert a.mtc_proofs["agrees"].all()
    out = build_report(store, tmp_path / "report", analysis=a)
    md = (out / "report.md").read_text() if out.is_dir() else out.read_text()
    assert "## Merkle Tree Certificates" in md and "mtc-landmark against X.509" in md
    assert engine_processes(str(pki_cache)) == []


LOADED = """
[campaign]
name = "mtc-load"
order = "declared"
[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 6
warmup = 1
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
certificate = [{ kind = "mtc-standalone", batch = 4096, cosigners = ["ML-DSA-44"] }]
handshake_mode = ["full", "resumed"]
stack = ["openssl-3.5", "rustls"]
[load]
fractions = [0.5]
step_s = 2
capacity_s = 2
search_steps = 0
verify = true
warmup = 5
"""


def test_mtc_scenarios_resume_and_run_under_load(tmp_path, engine_bin, pki_cache):
    """Under [load] the generator verifies the MTC as the handshake clients do (every
    attempt paired, none failed); resumed handshakes send no certificate at all."""
    f = tmp_path / "mtc-load.toml"
    f.write_text(LOADED)
    store = tmp_path / "mtc-load.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4 and not summary.failed, summary
    with chainlab.open(store) as st:
        samples, steps, attempts = st.samples, st.load_steps, st.load_samples
    measured = samples[~samples["warmup"]]
    assert (measured["outcome"] == "ok").all()
    resumed = measured[measured["scenario_id"].str.contains("resumed")]
    full = measured[~measured["scenario_id"].str.contains("resumed")]
    assert resumed["resumed"].all() and resumed["mtc_kind"].isna().all()
    assert (full["mtc_kind"] == "standalone").all() and full["mtc_signatures_checked"].eq(2).all()
    # Every scenario's load steps ran and verified; an attempt may fail only for the load's
    # own reasons (a generator out of slots on this 2-core machine), never the certificate.
    assert sorted(steps["scenario_id"].unique()) == sorted(measured["scenario_id"].unique())
    ok = attempts[attempts["outcome"] == "ok"]
    assert set(ok["scenario_id"]) == set(steps["scenario_id"])
    failed = attempts[attempts["outcome"] != "ok"]
    assert "verify_failed" not in set(failed["error_category"]), failed["error_detail"].head()
    assert engine_processes(str(pki_cache)) == []
