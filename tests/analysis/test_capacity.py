"""Capacity and cost: exact arithmetic on constant server CPU."""

import math

import pytest

from chainlab.analysis.analyze import analyze

from .conftest import BASELINE, SLH, constant


def test_capacity_and_cost_from_constant_server_cpu(make_store):
    scen = [constant(server_cpu_ms=0.5), constant(leaf_alg=SLH, server_cpu_ms=1000.0)]
    a = analyze(
        make_store(
            scen,
            baseline=BASELINE,
            analysis={"price_per_vcpu_hour": 0.036, "service_classes": {"api": 1e8}},
        )
    )
    c = a.capacity.set_index("placement_class")
    base, heavy = c.loc["none"], c.loc["leaf"]
    assert base["handshakes_per_core_s"] == pytest.approx(2000.0)
    assert base["handshakes_per_vcpu_hour"] == pytest.approx(7.2e6)
    assert heavy["handshakes_per_core_s"] == pytest.approx(1.0)
    assert heavy["infra_multiplier"] == pytest.approx(2000.0)
    assert heavy["retained_capacity"] == pytest.approx(1 / 2000)
    assert heavy["capacity_loss_pct"] == pytest.approx(99.95)
    # 0.5 ms x 1e6 handshakes = 500 CPU-seconds = 0.13889 CPU-hours
    assert base["cpu_hours_per_million"] == pytest.approx(500 / 3600)
    assert base["cost_per_million"] == pytest.approx(500 / 3600 * 0.036)
    assert heavy["extra_cost_per_million"] == pytest.approx((1e6 - 500) / 3600 * 0.036)
    assert (
        heavy["extra_cost_per_million_lo"],
        heavy["extra_cost_per_million_hi"],
    ) == pytest.approx((heavy["extra_cost_per_million"],) * 2)
    sc = a.service_classes.set_index("class")
    assert list(a.service_classes["service_class"].unique()) == ["api"]
    assert sc.loc["leaf", "median_monthly_cost"] == pytest.approx(100 * 1e6 / 3600 * 0.036)
    assert sc.loc["none", "mean_extra_monthly_cost"] == pytest.approx(0.0)
    per = a.service_scenarios
    assert len(per) == 2 and per["monthly_cost"].max() == pytest.approx(1000.0)


def test_capacity_without_baseline_has_no_relative_numbers(make_store):
    a = analyze(make_store([constant(server_cpu_ms=0.25)]))
    row = a.capacity.iloc[0]
    assert row["handshakes_per_core_s"] == pytest.approx(4000.0)
    assert math.isnan(row["infra_multiplier"]) and math.isnan(row["extra_cost_per_million"])
    assert math.isnan(a.service_classes.iloc[0]["mean_extra_monthly_cost"])


def test_capacity_comes_from_the_whole_connection_beside_the_handshake_span(make_store):
    """The server's CPU from accept to close derives capacity; the handshake span is shown."""
    a = analyze(make_store([constant(server_cpu_ms=0.5, server_close_cpu_ms=0.5)]))
    row = a.capacity.iloc[0]
    assert row["cpu_basis"] == "connection"
    assert row["handshakes_per_core_s"] == pytest.approx(1000.0)
    assert row["handshakes_per_core_s_handshake_only"] == pytest.approx(2000.0)
    assert row["server_cpu_s"] == pytest.approx(1e-3) and row["handshake_cpu_s"] == pytest.approx(
        5e-4
    )
