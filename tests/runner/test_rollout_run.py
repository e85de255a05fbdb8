"""Staged rollout end to end, on both stacks: a dual-chain server and a mixed population of
clients, one connection at a time and under load. Every attempt names its kind and the chain
it was sent; a kind no chain serves is counted by category, never retried; the draws keep
their shares; the analysis splits the figures by kind and the report shows them."""

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run
from chainlab.stats import proportion_ci

from .conftest import engine_processes

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone

COUNT = 60
CAMPAIGN = f"""
[campaign]
name = "rollout"
order = "declared"
[clients.pq]
groups = ["X25519MLKEM768", "X25519"]
signatures = ["ML-DSA-65"]
[clients.classical]
groups = ["X25519"]
signatures = ["ECDSA-P256"]
[clients.stranger]
groups = ["X25519"]
signatures = ["Ed25519"]
[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = {COUNT}
warmup = 1
max_failed_fraction = 0.9
[matrix.m]
kex = ["X25519"]
hierarchy = [["ECDSA-P256", "ECDSA-P256"]]
second_chain = [["ML-DSA-65", "ML-DSA-65"]]
population = [{{ classical = 1, pq = 0 }}, {{ classical = 0.4, pq = 0.5, stranger = 0.1 }}]
stack = ["openssl-3.5", "rustls"]
[load]
fractions = [0.5]
step_s = 1
capacity_s = 1
search_steps = 0
verify = true
warmup = 2
"""


def test_a_rollout_campaign_runs_stores_and_reports(tmp_path, engine_bin, pki_cache):
    f = tmp_path / "rollout.toml"
    f.write_text(CAMPAIGN)
    store = tmp_path / "rollout.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4 and not summary.failed, summary
    with chainlab.open(store) as st:
        samples, attempts = st.samples, st.load_samples
    measured = samples[~samples["warmup"]]
    for sid, g in measured.groupby("scenario_id"):
        # One sample per attempt: nothing retried.
        assert len(g) == COUNT, sid
        assert g["client_kind"].notna().all(), sid
        for kind, chain in (("classical", 0), ("pq", 1)):
            got = g[g["client_kind"] == kind]
            assert (got["outcome"] == "ok").all(), (sid, kind)
            assert got["chain_index"].eq(chain).all(), (sid, kind)
            # Bytes each way as both sides counted them.
            assert (got["bytes_read"] == got["server_bytes_written"]).all(), (sid, kind)
        stranger = g[g["client_kind"] == "stranger"]
        assert (stranger["outcome"] == "failed").all(), sid
        assert stranger["server_error_category"].eq("no_shared_sigalg").all(), sid
        if "pq50" in sid:
            # The draw: each share within its binomial interval (99.9 %).
            for kind, share in (("classical", 0.4), ("pq", 0.5), ("stranger", 0.1)):
                _, lo, hi = proportion_ci(int((g["client_kind"] == kind).sum()), COUNT, 0.999)
                assert lo <= share <= hi, (sid, kind, lo, hi)
        else:
            assert set(g["client_kind"]) == {"classical"}, sid
    started = attempts[attempts["sched_lag_ns"].notna()]
    assert started["client_kind"].notna().all()
    pq = started[(started["client_kind"] == "pq") & (started["outcome"] == "ok")]
    assert len(pq) and pq["chain_index"].dropna().eq(1).all()

    a = analyze(store)
    kinds = a.rollout_kinds
    assert set(kinds["kind"]) == {"classical", "pq", "stranger", "all"}
    stranger = kinds[kinds["kind"] == "stranger"]
    assert stranger["failures"].str.startswith("no_shared_sigalg").all()
    pq = kinds[kinds["kind"] == "pq"]
    classical = kinds[(kinds["kind"] == "classical") & kinds["scenario_id"].str.contains("pq50")]
    # The ML-DSA-65 chain is ~4 KB more than the ECDSA one.
    assert (pq["bytes_read"].to_numpy() > classical["bytes_read"].to_numpy() + 3000).all()
    shares = a.rollout_shares
    assert sorted(set(shares["pq_share"])) == [0.0, 0.5]
    # The sustained rate leads, the overload throughput stays beside it (never above it).
    known = shares.dropna(subset=["sustained_per_core"])
    assert len(known), shares[["scenario_id", "capacity_per_core"]]
    assert (known["sustained_per_core"] <= known["capacity_per_core_hi"]).all()
    assert len(a.rollout_rule) and set(a.rollout_rule["verdict"]) <= {
        "rolls back",
        "holds",
        "undecided",
    }
    out = build_report(store, tmp_path / "report", analysis=a)
    md = (out / "report.md").read_text() if out.is_dir() else out.read_text()
    assert "## Staged rollout" in md and "Rollback rule" in md
    assert "sustained /s/core" in md and "overload throughput /s/core" in md
    assert engine_processes(str(pki_cache)) == []


def test_a_go_server_serves_a_population_of_another_stacks_clients(tmp_path, engine_bin, pki_cache):
    """Go's crypto/tls cannot narrow the schemes its client offers, so a Go client is no
    population (validate refuses it); a Go dual-chain server serves one: each kind gets the
    chain its schemes ask for, a kind neither chain serves fails by category."""
    text = CAMPAIGN.split("[load]")[0].replace(
        'stack = ["openssl-3.5", "rustls"]',
        'client_stack = ["openssl-3.5"]\nserver_stack = ["go"]',
    )
    text = text.replace("population = [{ classical = 1, pq = 0 }, ", "population = [")
    f = tmp_path / "rollout.toml"
    f.write_text(text)
    store = tmp_path / "go.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 1 and not summary.failed, summary
    with chainlab.open(store) as st:
        samples = st.samples
    g = samples[~samples["warmup"]]
    assert len(g) == COUNT
    for kind, chain in (("classical", 0), ("pq", 1)):
        got = g[g["client_kind"] == kind]
        assert len(got) and (got["outcome"] == "ok").all(), kind
        assert got["chain_index"].eq(chain).all(), kind
        assert (got["bytes_read"] == got["server_bytes_written"]).all(), kind
    stranger = g[g["client_kind"] == "stranger"]
    assert len(stranger) and stranger["server_error_category"].eq("no_shared_sigalg").all()
    assert engine_processes(str(pki_cache)) == []
