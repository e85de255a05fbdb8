"""Transport-vs-latency correlations and counterexamples with known answers."""

import math

import pytest

from chainlab.analysis.analyze import analyze

from .conftest import SLH, constant


def test_linear_bytes_latency_gives_r_one(make_store):
    # latency = 0.001 ms per byte read, exactly, in four non-heavy-leaf scenarios
    scen = [
        constant(kex=k, bytes_read=b, latency_ms=b / 1000)
        for k, b in (
            ("X25519", 10000),
            ("X25519MLKEM768", 12000),
            ("MLKEM768", 15000),
            ("SecP256r1MLKEM768", 21000),
        )
    ]
    c = analyze(make_store(scen)).correlations.set_index(["subset_key", "metric"])
    r = c.loc[("all", "bytes_read")]
    assert (r["pearson_r"], r["pearson_r_lo"], r["pearson_r_hi"]) == (1.0, 1.0, 1.0)
    assert r["spearman_rho"] == 1.0
    assert c.loc[("not_heavy_leaf", "bytes_read"), "n_scenarios"] == 4
    heavy = c.loc[("heavy_leaf", "bytes_read")]
    assert heavy["n_scenarios"] == 0 and math.isnan(heavy["pearson_r"])
    assert heavy["note"] == "needs at least 3 scenarios"
    # chain bytes are the same in all four: no correlation can be computed
    assert math.isnan(c.loc[("all", "chain_bytes"), "pearson_r"])


def test_subsets_split_on_the_heavy_leaf(make_store):
    scen = [
        constant(kex="X25519", bytes_read=10000, latency_ms=1.0),
        constant(kex="MLKEM768", bytes_read=20000, latency_ms=2.0),
        constant(kex="X25519MLKEM768", bytes_read=30000, latency_ms=3.0),
        constant(kex="X25519", leaf_alg=SLH, bytes_read=27000, latency_ms=1400.0),
        constant(kex="MLKEM768", leaf_alg=SLH, bytes_read=40000, latency_ms=1300.0),
        constant(kex="X25519MLKEM768", leaf_alg=SLH, bytes_read=50000, latency_ms=1350.0),
    ]
    c = analyze(make_store(scen)).correlations.set_index(["subset_key", "metric"])
    assert c.loc[("not_heavy_leaf", "bytes_read"), "pearson_r"] == pytest.approx(1.0)
    assert c.loc[("heavy_leaf", "bytes_read"), "spearman_rho"] == pytest.approx(-0.5)
    assert c.loc[("all", "bytes_read"), "n_scenarios"] == 6
    assert c.loc[("heavy_leaf", "bytes_read"), "note"] == "interval needs at least 4 scenarios"


def test_counterexamples_more_bytes_lower_latency(make_store):
    scen = [
        constant(root_alg=SLH, bytes_read=40000, latency_ms=3.0),  # many bytes, fast
        constant(leaf_alg=SLH, bytes_read=27000, latency_ms=1400.0),  # fewer bytes, slow
        constant(bytes_read=16000, latency_ms=1.0),
    ]
    ce = analyze(make_store(scen)).counterexamples
    br = ce[ce["metric"] == "bytes_read"]
    assert len(br) == 1
    row = br.iloc[0]
    assert "slh_root" in row["more_bytes_lower_latency"]
    assert "slh_leaf" in row["less_bytes_higher_latency"]
    assert row["bytes_diff"] == 13000 and row["rank"] == 1
    assert row["latency_ratio"] == pytest.approx(1400 / 3)


def test_counterexamples_need_a_significant_latency_difference(make_store):
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.lognormal(0, 1.0, 20) * 1e6
    b = a * 1.01
    scen = [
        constant(root_alg=SLH, n=20, bytes_read=40000, overrides={"total_ns": a}),
        constant(n=20, bytes_read=16000, overrides={"total_ns": b}),
    ]
    ce = analyze(make_store(scen)).counterexamples
    assert ce.empty or (ce["metric"] != "bytes_read").all()
