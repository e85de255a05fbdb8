"""Resumption mixes with the real engine: the share that resumed follows the asked ratio,
a resumed handshake carries no leaf signature, and the report sets the mixes against the
line of their full and resumed ends."""

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run
from chainlab.stats import proportion_ci

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

CAMPAIGN = """
[campaign]
name = "mix"
order = "declared"
seed = 5
[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHA2-128f"
[sampling]
mode = "fixed"
count = 120
warmup = 2
[primitives]
measure = false
[matrix.m]
kex = ["X25519"]
hierarchy = [["ml", "ml"], ["ml", "slhf"]]
resumption_ratio = [0, 0.5, 0.9, 1]
"""


@pytest.fixture(scope="module")
def mix_store(tmp_path_factory, engine_bin, pki_cache):
    d = tmp_path_factory.mktemp("mix")
    f = d / "mix.toml"
    f.write_text(CAMPAIGN)
    store = d / "mix.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 8
    return store


def test_the_share_resumed_follows_the_ratio(mix_store):
    with chainlab.open(mix_store) as st:
        shares = st.query(
            "SELECT scenario_id, count_if(resumed) AS k, count(*) AS n FROM samples "
            "WHERE NOT warmup AND outcome = 'ok' GROUP BY ALL"
        ).set_index("scenario_id")
    for sid, ratio in [
        ("x25519__ml_root__ml_leaf", 0.0),
        ("x25519__ml_root__ml_leaf__resume50", 0.5),
        ("x25519__ml_root__slhf_leaf__resume90", 0.9),
        ("x25519__ml_root__slhf_leaf__resumed", 1.0),
    ]:
        k, n = int(shares.loc[sid, "k"]), int(shares.loc[sid, "n"])
        assert n == 120
        _, lo, hi = proportion_ci(k, n, 0.999)
        assert lo <= ratio <= hi, (sid, k, n)


def test_a_resumed_handshake_costs_no_leaf_signature(mix_store):
    with chainlab.open(mix_store) as st:
        cpu = st.query(
            "SELECT scenario_id, resumed, median(server_cpu_ns) / 1e6 AS ms FROM samples "
            "WHERE NOT warmup AND outcome = 'ok' GROUP BY ALL"
        )
    med = {(r.scenario_id, r.resumed): r.ms for r in cpu.itertuples()}
    slh_full = med[("x25519__ml_root__slhf_leaf", False)]
    slh_resumed = med[("x25519__ml_root__slhf_leaf__resume50", True)]
    ml_resumed = med[("x25519__ml_root__ml_leaf__resume50", True)]
    # An SLH-DSA leaf resumed costs about what an ML-DSA leaf resumed costs.
    assert slh_resumed < 2 * ml_resumed
    assert slh_full > 10 * slh_resumed


def test_the_report_sets_mixes_against_their_line(mix_store, tmp_path):
    a = analyze(mix_store)
    r = a.resumption.set_index("scenario_id")
    assert len(r) == 8
    mix = r.loc["x25519__ml_root__slhf_leaf__resume50"]
    full = r.loc["x25519__ml_root__slhf_leaf"]
    resumed = r.loc["x25519__ml_root__slhf_leaf__resumed"]
    w = mix["resumed_share"]
    line = (1 - w) * full["server_cpu"] + w * resumed["server_cpu"]
    assert mix["server_cpu_line"] == pytest.approx(line)
    # Capacity is the inverse of the connection CPU's line, not a line itself.
    assert mix["capacity_line"] < (1 - w) * full["capacity"] + w * resumed["capacity"]
    out = build_report(mix_store, tmp_path / "r")
    md = (out / "report.md").read_text()
    assert "## Resumption mix" in md and "resumption_mix.png" in md
