"""Baseline multipliers, plausibility, classes (Table 7) and paired comparisons."""

import math

import numpy as np
import pytest

from chainlab.analysis import compare
from chainlab.analysis.analyze import analyze
from chainlab.campaign.analysis_settings import PLAUSIBILITY_CLASSES

from .conftest import BASELINE, ML, SLH, constant


def test_constant_scenarios_give_exact_multipliers(make_store, constant_matrix):
    a = analyze(make_store(constant_matrix, baseline=BASELINE))
    m = a.multipliers.set_index("placement_class")
    assert (m.loc["none", "latency_x"], m.loc["none", "latency_x_lo"]) == (1.0, 1.0)
    assert m.loc["root", "latency_x"] == 2.0
    assert (m.loc["root", "latency_x_lo"], m.loc["root", "latency_x_hi"]) == (2.0, 2.0)
    assert m.loc["leaf", "latency_x"] == 1000.0
    assert m.loc["leaf", "server_cpu_x"] == pytest.approx(1800.0)
    assert m.loc["root", "bytes_read_x"] == pytest.approx(29000 / 16000)
    assert m.loc["leaf", "p95_x"] == 1000.0


def test_plausibility_classes_follow_the_thresholds(make_store, constant_matrix):
    a = analyze(make_store(constant_matrix, baseline=BASELINE))
    m = a.multipliers.set_index("placement_class")
    assert m.loc["none", "plausibility"] == "Reasonable"
    assert m.loc["root", "plausibility"] == "Penalized but plausible"  # 2x: in (1.5, 5]
    assert m.loc["intermediate", "plausibility"] == "Penalized but plausible"  # 3x
    assert m.loc["leaf", "plausibility"] == PLAUSIBILITY_CLASSES[3]
    assert m["plausibility_certain"].all()
    # Thresholds come from the campaign file.
    b = analyze(
        make_store(
            constant_matrix,
            baseline=BASELINE,
            analysis={"plausibility": {"reasonable": 2.5, "penalized": 2.8, "problematic": 1500}},
        )
    )
    mb = b.multipliers.set_index("placement_class")
    assert mb.loc["root", "plausibility"] == "Reasonable"
    assert mb.loc["intermediate", "plausibility"] == "Operationally problematic"
    assert mb.loc["leaf", "plausibility"] == "Operationally problematic"


def test_plausibility_boundaries():
    bounds = {"reasonable": 1.5, "penalized": 5.0, "problematic": 100.0}
    assert compare.plausibility(1.5, bounds) == ("Reasonable", 1)
    assert compare.plausibility(1.5000001, bounds)[1] == 2
    assert compare.plausibility(100.0, bounds)[1] == 3
    assert compare.plausibility(101.0, bounds)[1] == 4
    assert compare.plausibility(math.nan, bounds) == ("n/a", 0)


def test_uncertain_class_is_flagged(make_store):
    rng = np.random.default_rng(0)
    noisy = rng.lognormal(np.log(1.5), 0.8, 30) * 1e6  # mean near the 1.5x bound, wide CI
    a = analyze(
        make_store(
            [constant(), constant(root_alg=SLH, n=30, overrides={"total_ns": noisy})],
            baseline=BASELINE,
        )
    )
    row = a.multipliers[a.multipliers["placement_class"] == "root"].iloc[0]
    assert row["latency_x_lo"] < 1.5 < row["latency_x_hi"]
    assert not row["plausibility_certain"]


def test_table7_groups_overlap_like_the_paper(make_store):
    scen = [
        constant(latency_ms=1.0),
        constant(root_alg=SLH, latency_ms=2.0),
        constant(int1_alg=SLH, leaf_alg=SLH, latency_ms=1000.0),
        constant(leaf_alg=SLH, latency_ms=1200.0),
    ]
    a = analyze(make_store(scen, baseline=BASELINE))
    t7 = a.table7.set_index("class")
    assert t7.loc["intermediate_any", "n_scenarios"] == 1
    assert t7.loc["leaf", "n_scenarios"] == 2
    assert t7.loc["leaf", "mean_ms"] == pytest.approx(1100.0)
    assert t7.loc["leaf", "median_latency_x"] == pytest.approx(1100.0)
    assert t7.loc["root_leaf_not_heavy", "mean_latency_x"] == 2.0
    excl = a.classes.set_index("class")
    assert excl["n_scenarios"].sum() == 4
    assert excl.loc["leaf", "n_scenarios"] == 2  # the int+leaf one counts as leaf


def test_class_mean_interval_matches_the_delta_interval_for_one_scenario(make_store):
    rng = np.random.default_rng(2)
    s1 = constant(n=400, overrides={"total_ns": rng.lognormal(0, 0.3, 400) * 1e6})
    s2 = constant(
        leaf_alg=SLH, n=400, overrides={"total_ns": rng.lognormal(np.log(50), 0.3, 400) * 1e6}
    )
    a = analyze(make_store([s1, s2], baseline=BASELINE, analysis={"bootstrap_resamples": 20000}))
    leaf_mult = a.multipliers.set_index("placement_class").loc["leaf"]
    leaf_cls = a.classes.set_index("class").loc["leaf"]
    assert leaf_cls["mean_latency_x"] == pytest.approx(leaf_mult["latency_x"])
    assert leaf_cls["mean_latency_x_lo"] == pytest.approx(leaf_mult["latency_x_lo"], rel=0.01)
    assert leaf_cls["mean_latency_x_hi"] == pytest.approx(leaf_mult["latency_x_hi"], rel=0.01)


def test_pairs_are_found_along_single_axes(make_store):
    scen = [
        constant(kex="X25519MLKEM768", depth=3),  # baseline
        constant(kex="X25519MLKEM768", depth=3, leaf_alg=SLH, latency_ms=900.0),  # leaf
        constant(kex="X25519MLKEM768", depth=3, root_alg=SLH, latency_ms=2.0),  # root
        constant(kex="X25519", depth=3, latency_ms=0.8),  # kex
        constant(kex="X25519MLKEM768", depth=2, latency_ms=0.9),  # depth
        constant(kex="X25519MLKEM768", depth=3, served_chain="full", latency_ms=1.1),  # served
    ]
    a = analyze(make_store(scen, baseline=BASELINE))
    p = a.pairs
    axes = set(p["axis"])
    assert {"leaf_alg", "root_alg", "kex", "depth", "served_chain"} <= axes
    leaf = p[p["axis"] == "leaf_alg"].iloc[0]
    assert leaf["from_value"] == ML and leaf["to_value"] == SLH  # light -> heavy
    assert leaf["latency_ratio"] == 900.0 and leaf["latency_change"] == "higher"
    kex = p[p["axis"] == "kex"].iloc[0]
    assert kex["from_value"].startswith("X25519 (classical)")  # classical -> hybrid
    assert kex["latency_ratio"] == pytest.approx(1.0 / 0.8)
    depth = p[p["axis"] == "depth"].iloc[0]
    assert depth["from_value"] == "depth 2" and depth["latency_ratio"] == pytest.approx(1 / 0.9)
    # root and leaf both changed: not a single-axis pair
    both = p[(p["from_id"].str.contains("slh_root")) & (p["to_id"].str.contains("slh_leaf"))]
    assert both.empty


def test_uniform_hierarchy_pairs_are_campaign_a(make_store):
    scen = [
        constant(kex="X25519", depth=2, campaigns=("A",)),
        constant(
            kex="X25519", depth=2, root_alg=SLH, leaf_alg=SLH, latency_ms=1400.0, campaigns=("A",)
        ),
    ]
    p = analyze(make_store(scen)).pairs
    assert list(p["axis"]) == ["uniform"]
    assert p.iloc[0]["campaigns"] == "A"
    assert p.iloc[0]["latency_ratio"] == 1400.0


def test_depth_pairs_may_change_the_served_chain(make_store):
    scen = [
        constant(depth=2, root_alg=SLH, served_chain="full", latency_ms=3.0),
        constant(depth=3, root_alg=SLH, latency_ms=2.0),
    ]
    p = analyze(make_store(scen)).pairs
    assert list(p["axis"]) == ["depth"]
    assert "sends full → leaf+intermediates" in p.iloc[0]["context"]
    assert p.iloc[0]["latency_ratio"] == pytest.approx(2.0 / 3.0)
    assert p.iloc[0]["latency_change"] == "lower"


def test_strategy_matrix_keeps_the_baselines_settings(make_store, constant_matrix):
    scen = [*constant_matrix, constant(kex="X25519", latency_ms=0.7)]
    a = analyze(make_store(scen, baseline=BASELINE))
    assert len(a.strategy) == 4
    assert "X25519" not in set(
        a.summary.set_index("scenario_id").loc[a.strategy["scenario_id"], "kex"]
    )
    assert list(a.strategy["plausibility_rank"]) == sorted(a.strategy["plausibility_rank"])


def test_no_baseline_means_no_multipliers(make_store, constant_matrix):
    a = analyze(make_store(constant_matrix))
    assert a.baseline is None and a.multipliers.empty
    assert "No baseline scenario is named" in a.baseline_note
    b = analyze(make_store(constant_matrix, baseline="not-there"))
    assert "`not-there` named in the campaign file is not in this store" in b.baseline_note
