"""Analyses on demand: each is computed when first asked for, once, and a report computes
what its sections read; a store that varies a lever gets none of the placement study's."""

from dataclasses import replace

import pytest
from synthetic import SyntheticScenario

from chainlab.analysis import registry
from chainlab.analysis.analyze import analyze
from chainlab.report import build_report

SLH = "SLH-DSA-SHAKE-128f"
BASELINE = "x25519mlkem768__ml_root__ml_int__ml_leaf"
# The placement study's analyses: a store that varies a lever asks for none of them.
PLACEMENT = {
    "classes",
    "table7",
    "strategy",
    "correlations",
    "counterexamples",
    "decomposition_classes",
    "service_classes",
    "service_scenarios",
    "findings",
    "paper_matches",
    "paper_scenarios",
    "paper_classes",
    "paper_correlations",
    "paper_depth",
    "paper_kex",
}


def placement_store(make_store):
    return make_store(
        [
            SyntheticScenario(n=30),
            SyntheticScenario(n=30, leaf_alg=SLH, latency_ms=20, server_cpu_ms=15),
            SyntheticScenario(n=30, root_alg=SLH, latency_ms=1.5),
        ],
        baseline=BASELINE,
    )


def lever_store(make_store):
    return make_store(
        [
            SyntheticScenario(n=30),
            SyntheticScenario(n=30, cert_compression="zlib", bytes_read=12000),
            SyntheticScenario(n=30, leaf_alg=SLH, latency_ms=20, server_cpu_ms=15),
        ],
        baseline=BASELINE,
    )


def test_nothing_runs_until_asked_and_then_only_what_it_needs(make_store):
    a = analyze(placement_store(make_store))
    assert a.computed == []
    a.resumption  # noqa: B018
    assert a.computed == ["summary", "resumption"]
    a.table7  # noqa: B018
    assert set(a.computed) == {
        "summary",
        "resumption",
        "baseline",
        "baseline_note",
        "monte_carlo",
        "reference_network",
        "table7",
    }


def test_each_analysis_runs_once_and_a_group_is_kept_from_one_run(make_store, monkeypatch):
    calls = []
    producer = registry._PRODUCERS["baseline"]
    assert producer.names == ("baseline", "baseline_note")

    def counted(a):
        calls.append(1)
        return producer.fn(a)

    for name in producer.names:
        monkeypatch.setitem(registry._PRODUCERS, name, replace(producer, fn=counted))
    a = analyze(placement_store(make_store))
    first = a.baseline_note
    assert a.baseline_note is first and a.baseline is not None and a.multipliers is not None
    assert len(calls) == 1 and a.computed.count("baseline") == 1


def test_a_placement_store_reports_the_placement_study(make_store, tmp_path):
    a = analyze(placement_store(make_store))
    build_report(a.data.path, tmp_path / "r", analysis=a)
    assert a.placement_study is True
    assert set(a.computed) >= PLACEMENT
    assert len(a.computed) == len(set(a.computed))  # each once


def test_a_store_that_varies_a_lever_computes_none_of_the_placement_study(make_store, tmp_path):
    a = analyze(lever_store(make_store))
    out = build_report(a.data.path, tmp_path / "r", analysis=a)
    assert a.placement_study is False
    assert not PLACEMENT & set(a.computed), PLACEMENT & set(a.computed)
    assert "compression" in a.computed
    md = (out / "report.md").read_text()
    assert "Certificate compression" in md and "Paper Table 11" not in md


def test_an_unknown_name_and_a_circle_are_errors(make_store, monkeypatch):
    a = analyze(placement_store(make_store))
    with pytest.raises(AttributeError, match="sumary"):
        a.sumary  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(LookupError, match="'sumary' has no producer"):
        a.compute("sumary")
    monkeypatch.setitem(
        registry._PRODUCERS, "loop", registry.Producer(lambda a: a.compute("loop"), ("loop",))
    )
    with pytest.raises(RuntimeError, match="'loop' asks for itself"):
        a.compute("loop")


def test_every_analysis_is_declared_with_its_type_and_has_a_producer():
    # Each declaration (what a type checker holds readers to) is produced by exactly one
    # registered function, and nothing is produced that is not declared.
    assert sorted(registry.declared()) == sorted(registry.known())
    assert len(registry.declared()) == len(set(registry.declared()))


def test_a_name_is_produced_once():
    with pytest.raises(ValueError, match="'summary' is produced twice"):
        registry.produces("summary")(lambda a: None)


def test_a_store_of_probes_only_runs_only_the_probes_analyses(make_store):
    a = analyze(placement_store(make_store))
    a.probes_only = True  # as a store with targets and no lab scenario is read
    assert list(a.summary.columns) == ["scenario_id", "status", "placement_class"]
    assert a.summary.empty and a.baseline is None and "probes" in a.baseline_note
    assert a.network is None and a.projection is None and a.findings == []
    assert a.placement_study is False and a.mtc.empty
    assert a.metadata  # runs: it describes the store
    ran = {"summary", "baseline", "network", "findings", "placement_study", "mtc"}
    assert ran <= set(a.computed)  # recorded, each with its empty value
