"""Per-scenario statistics with exact answers on constant data."""

import math

import numpy as np
import pytest

from chainlab.analysis.load import load_store
from chainlab.analysis.summary import (
    chain_exposure,
    cpu_regime,
    failures_table,
    instr_server_share,
    scenario_summary,
)

from .conftest import SLH, constant


def _summary(path):
    d = load_store(path)
    return d, scenario_summary(d)


def test_constant_scenario_has_exact_statistics(make_store):
    _, s = _summary(
        make_store(
            [
                constant(
                    latency_ms=2.0,
                    server_cpu_ms=0.5,
                    client_cpu_ms=0.25,
                    connect_fraction=0.25,
                    bytes_read=12345,
                )
            ]
        )
    )
    r = s.iloc[0]
    assert (r["mean_ms"], r["mean_ms_lo"], r["mean_ms_hi"]) == (2.0, 2.0, 2.0)
    assert (r["median_ms"], r["p95_ms"], r["p99_ms"]) == (2.0, 2.0, 2.0)
    assert r["connect_ms"] == 0.5 and r["tls_ms"] == 1.5 and r["connect_share"] == 0.25
    assert r["bytes_read"] == 12345
    assert (r["srv_cli_ratio"], r["srv_cli_ratio_lo"], r["srv_cli_ratio_hi"]) == (2.0, 2.0, 2.0)
    assert r["server_over_elapsed"] == 0.25 and r["client_over_elapsed"] == 0.125
    assert r["status"] == "ok" and r["placement_class"] == "none"


def test_quantiles_are_nearest_rank_with_order_statistic_intervals(make_store):
    lat = np.arange(1, 201, dtype=float)  # 1..200 ms
    sc = constant(n=200, overrides={"total_ns": lat * 1e6})
    _, s = _summary(make_store([sc]))
    r = s.iloc[0]
    assert r["median_ms"] == 100.0 and r["p95_ms"] == 190.0 and r["p99_ms"] == 198.0
    assert r["p95_ms_lo"] < 190.0 < r["p95_ms_hi"]
    assert r["mean_ms"] == pytest.approx(100.5)


def test_paired_cpu_ratio_interval_uses_the_covariance(make_store):
    rng = np.random.default_rng(1)
    client = rng.lognormal(0, 0.5, 300) * 1e6
    sc = constant(n=300, overrides={"client_cpu_ns": client, "server_cpu_ns": 3 * client})
    _, s = _summary(make_store([sc]))
    r = s.iloc[0]
    # Server CPU is 3x client CPU on every connection (up to rounding to whole ns): the
    # paired interval is (almost) a point, an independent-samples one would not be.
    assert r["srv_cli_ratio"] == pytest.approx(3.0, rel=1e-6)
    assert r["srv_cli_ratio_hi"] - r["srv_cli_ratio_lo"] < 1e-5
    assert r["server_cpu_ms_hi"] / r["server_cpu_ms_lo"] > 1.05


def test_placement_classes_and_heavy_positions(make_store, constant_matrix):
    _, s = _summary(make_store(constant_matrix))
    by = s.set_index("hierarchy")
    assert by.loc["ML root / ML int / ML leaf", "placement_class"] == "none"
    assert by.loc["SLH root / ML int / ML leaf", "placement_class"] == "root"
    assert by.loc["ML root / SLH int / ML leaf", "placement_class"] == "intermediate"
    assert by.loc["ML root / ML int / SLH leaf", "placement_class"] == "leaf"
    assert by.loc["ML root / ML int / SLH leaf", "heavy_positions"] == "leaf"


def test_failed_scenario_is_excluded_and_explained(make_store):
    d, s = _summary(
        make_store(
            [
                constant(),
                constant(
                    leaf_alg=SLH, status="failed", failure_cause="server_crashed", n=3, n_failed=2
                ),
            ]
        )
    )
    f = s[s["status"] == "failed"].iloc[0]
    assert math.isnan(f["mean_ms"]) and math.isnan(f["p95_ms"]) and f["cpu_regime"] == "n/a"
    assert "server_crashed" in f["failure"]
    ft = failures_table(d, s)
    assert set(ft["scenario_id"]) == {f["scenario_id"]}
    assert ft.iloc[0]["n"] == 2


@pytest.mark.parametrize(
    ("ratio", "share", "regime"),
    [
        (0.3, 0.3, "client-skewed"),
        (1.0, 0.7, "balanced"),
        (5.0, 0.8, "server-skewed"),
        (400.0, 0.998, "overwhelmingly server-bound"),
        (400.0, 0.5, "server-skewed"),
        (math.nan, 0.5, "n/a"),
    ],
)
def test_cpu_regimes(ratio, share, regime):
    bands = {"balanced_low": 0.5, "balanced_high": 2.0, "server_bound": 10.0}
    assert cpu_regime(ratio, share, bands) == regime


def test_chain_exposure_says_whether_the_root_is_sent(make_store):
    d, _ = _summary(
        make_store(
            [
                constant(depth=2, root_alg=SLH, served_chain="full"),
                constant(depth=3, root_alg=SLH),
            ]
        )
    )
    ex = chain_exposure(d).set_index("depth")
    assert bool(ex.loc[2, "root_sent"]) and not bool(ex.loc[3, "root_sent"])
    assert ex.loc[2, "observed_chain_len"] == 2 and ex.loc[3, "observed_chain_len"] == 2
    assert "root SLH-DSA-SHAKE-192s" in ex.loc[2, "declared_sent"]


def test_the_instruction_regime_takes_the_servers_share_of_instructions_on_loopback():
    """On loopback a handshake is its two sides' work in turn: the server's share of the
    instructions stands for its share of elapsed, whatever the host's contention did to the
    wall clock; over a link the link's delay is not in any count, so the wall clock stays."""
    row = {"server_instr": 950.0, "client_instr": 50.0, "server_over_elapsed": 0.6}
    assert instr_server_share(row, "loopback") == pytest.approx(0.95)
    assert instr_server_share(row, "wan-50ms") == 0.6
    bands = {"balanced_low": 0.5, "balanced_high": 2.0, "server_bound": 10.0}
    ratio = row["server_instr"] / row["client_instr"]
    assert cpu_regime(ratio, instr_server_share(row, "loopback"), bands) == (
        "overwhelmingly server-bound"
    )
    assert cpu_regime(ratio, instr_server_share(row, "wan-50ms"), bands) == "server-skewed"
