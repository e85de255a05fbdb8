"""Known answers for the cost model against measurements (chainlab.analysis.cost_model
.per_scenario): a model whose every primitive takes 0.5 ms (se 0.1 ms) and no TLS overhead,
one scenario measured at known means, every figure of its row by hand."""

import math

import pandas as pd
import pytest

from chainlab.analysis.cost_model import per_scenario, scenario_of
from chainlab.campaign import cost, estimate

MEAN_MS, SE_MS = 0.5, 0.1
Z_95 = 1.959963984540054

ROW = {
    "scenario_id": "x25519mlkem768__mldsa65_root__mldsa65_leaf",
    "label": "ML-DSA-65 root, ML-DSA-65 leaf",
    "status": "ok",
    "root_alg": "ML-DSA-65",
    "int1_alg": None,
    "int2_alg": None,
    "leaf_alg": "ML-DSA-65",
    "kex": "X25519MLKEM768",
    "served_chain": "leaf+intermediates",
    "handshake_mode": "full",
    "cert_compression": "none",
    "network": "loopback",
    "n_ok": 100,
    "server_cpu_ms": 2.0,
    "server_cpu_ms_lo": 1.9,
    "server_cpu_ms_hi": 2.1,
    "client_cpu_ms": 4.0,
    "client_cpu_ms_lo": 3.8,
    "client_cpu_ms_hi": 4.2,
    "mean_ms": 5.0,
    "mean_ms_lo": 4.9,
    "mean_ms_hi": 5.1,
}


def test_every_figure_of_a_scenario_row_is_the_hand_computed_one():
    ops = estimate.scenario_operations(scenario_of(ROW))
    timings = {o.key: cost.Timing(MEAN_MS, SE_MS, 50) for o in ops}
    model = cost.CostModel(timings, cost.ZERO_OVERHEAD, "hand-made")
    r = per_scenario(pd.DataFrame([ROW]), model, {}).iloc[0]
    for side, measured in (("server", 2.0), ("client", 4.0)):
        count = sum(o.count for o in ops if o.side == side)
        predicted = count * MEAN_MS
        se = math.sqrt(sum((o.count * SE_MS) ** 2 for o in ops if o.side == side))
        assert r[f"{side}_predicted"] == pytest.approx(predicted)
        assert r[f"{side}_predicted_lo"] == pytest.approx(predicted - Z_95 * se)
        assert r[f"{side}_error"] == pytest.approx(predicted / measured - 1)
        # No overhead: the primitives are the whole prediction; the residual is the rest.
        assert r[f"{side}_primitives"] == pytest.approx(predicted)
        assert r[f"{side}_residual"] == pytest.approx(measured - predicted)
        assert r[f"{side}_residual_share"] == pytest.approx((measured - predicted) / measured)
    # Loopback latency: both sides' primitives back to back.
    latency = r["server_predicted"] + r["client_predicted"]
    assert r["latency_predicted"] == pytest.approx(latency)
    assert r["latency_error"] == pytest.approx(latency / 5.0 - 1)
    # The leaf's one CertificateVerify signature of 0.5 ms is far below 95 % of the server's
    # predicted CPU: not signing-dominated.
    assert r["server_sign"] == pytest.approx(MEAN_MS)
    assert not r["signing_dominated"]


def test_a_scenario_the_model_lacks_a_primitive_for_is_left_out():
    ops = estimate.scenario_operations(scenario_of(ROW))
    timings = {o.key: cost.Timing(MEAN_MS, SE_MS, 50) for o in ops[1:]}
    model = cost.CostModel(timings, cost.ZERO_OVERHEAD, "hand-made")
    assert per_scenario(pd.DataFrame([ROW]), model, {}).empty
