"""Client/server decomposition per scenario and per class."""

import pytest

from chainlab.analysis.analyze import analyze

from .conftest import BASELINE


def test_decomposition_per_scenario_and_class(make_store, constant_matrix):
    a = analyze(make_store(constant_matrix, baseline=BASELINE))
    d = a.decomposition.set_index("placement_class")
    assert d.loc["leaf", "srv_cli_ratio"] == pytest.approx(300.0)
    assert d.loc["leaf", "server_over_elapsed"] == pytest.approx(0.9)
    assert d.loc["leaf", "cpu_regime"] == "overwhelmingly server-bound"
    assert d.loc["root", "srv_cli_ratio"] == pytest.approx(0.6)
    assert d.loc["root", "cpu_regime"] == "balanced"
    assert d.loc["intermediate", "cpu_regime"] == "client-skewed"  # 0.7 / 1.5
    dc = a.decomposition_classes.set_index("class")
    assert dc.loc["leaf", "mean_server_cpu_ms"] == pytest.approx(900.0)
    assert dc.loc["none", "mean_srv_cli_ratio"] == pytest.approx(1.0)
    assert (
        dc.loc["none", "mean_srv_cli_ratio_lo"],
        dc.loc["none", "mean_srv_cli_ratio_hi"],
    ) == pytest.approx((1.0, 1.0))
