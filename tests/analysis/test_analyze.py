"""Whole analyses on awkward stores: one scenario, a failed scenario, no baseline."""

from chainlab.analysis.analyze import analyze

from .conftest import BASELINE, SLH, constant


def test_single_scenario_store(make_store):
    a = analyze(make_store([constant(leaf_alg=SLH, latency_ms=5.0)], baseline=BASELINE))
    assert len(a.summary) == 1
    assert a.pairs.empty and a.multipliers.empty and a.strategy.empty
    assert "not in this store" in a.baseline_note
    assert (a.correlations["n_scenarios"] <= 1).all()
    assert a.counterexamples.empty
    assert len(a.capacity) == 1
    holds = {f["topic"]: f["holds"] for f in a.findings}
    assert set(holds.values()) <= {"not testable", "yes", "no"}
    assert holds["key exchange"] == "not testable"


def test_store_with_a_failed_scenario(make_store, constant_matrix):
    failed = constant(
        kex="X25519",
        leaf_alg=SLH,
        status="failed",
        failure_cause="excessive_message_size",
        n=0,
        n_failed=5,
    )
    a = analyze(make_store([*constant_matrix, failed], baseline=BASELINE))
    s = a.summary.set_index("status")
    assert len(a.summary) == 5 and (a.summary["status"] == "failed").sum() == 1
    assert "excessive_message_size" in s.loc["failed", "failure"]
    assert failed.scenario_id not in set(a.multipliers["scenario_id"])
    assert failed.scenario_id not in set(a.pairs["from_id"]) | set(a.pairs["to_id"])
    assert failed.scenario_id not in set(a.capacity["scenario_id"])
    assert a.classes["n_scenarios"].sum() == 4
    assert list(a.failures["scenario_id"]) == [failed.scenario_id]
    meta = dict(a.metadata)
    assert meta["scenarios"] == "5 executed, 4 analysed, 1 failed"


def test_failed_baseline_is_explained(make_store, constant_matrix):
    scen = list(constant_matrix)
    scen[0] = constant(status="failed", failure_cause="server_exit", n=0, n_failed=3)
    a = analyze(make_store(scen, baseline=BASELINE))
    assert a.baseline is None and "failed" in a.baseline_note
    assert a.multipliers.empty
    assert a.capacity["infra_multiplier"].isna().all()


def test_findings_on_a_paper_shaped_store(make_store, constant_matrix):
    a = analyze(make_store(constant_matrix, baseline=BASELINE))
    f = {x["topic"]: x for x in a.findings}
    assert f["SLH-DSA in the leaf"]["holds"] == "yes"  # 1000x > 100x
    assert f["SLH-DSA above the leaf only"]["holds"] == "yes"  # 2x and 3x <= 5x
    assert f["client/server CPU"]["holds"] == "yes"
    assert f["depth and chain exposure"]["holds"] == "not testable"
