"""The cost model at the host's speed (chainlab.model.host_speed): inputs brought to one host
reading, the whole model scaled to another, known answers by hand."""

from dataclasses import replace

import pytest

from chainlab.model import cost, cost_fit, host_speed

from .test_cost import REFERENCE_PRIMITIVES, prim, ref

MS = 1e6


def test_inputs_are_brought_to_the_median_reading_of_those_that_have_one():
    fast = {**prim("ML-DSA-44", "sign", "cv", 1.0), "cpu_var": 4.0, "host_mean": 20 * MS}
    mid = {**prim("ML-DSA-44", "verify", "cv", 1.0), "host_mean": 30 * MS}
    slow = {**ref("ecdsa", "full", 3.0, 2.0, 1.0, 5.0), "host_mean": 40 * MS}
    unread = prim("X25519", "keygen", None, 1.0)  # a store before 16: no reading
    rows, host_ns = host_speed.normalised([fast, mid, slow, unread])
    assert host_ns == 30 * MS
    # Timed on a host 1.5x as fast as the median: it would have taken 1.5x as long there.
    assert rows[0]["cpu_mean"] == pytest.approx(1.5 * MS)
    assert rows[0]["cpu_var"] == pytest.approx(4.0 * 1.5**2)
    assert rows[1]["cpu_mean"] == pytest.approx(1.0 * MS)
    # A reference's latency and both sides' CPU scale; its KiB and count do not.
    assert (rows[2]["wall_mean"], rows[2]["cpu_mean"], rows[2]["server_mean"]) == pytest.approx(
        (2.25 * MS, 1.5 * MS, 0.75 * MS)
    )
    assert (rows[2]["kib"], rows[2]["n"]) == (5.0, 100)
    assert rows[3] == unread  # without a reading: as it is
    assert fast["cpu_mean"] == 1.0 * MS  # the caller's rows are not changed


def test_without_any_reading_the_model_has_no_host_speed_and_is_never_scaled():
    rows = [*REFERENCE_PRIMITIVES, ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0)]
    m = cost_fit.model_from_summary(rows, "fixture")
    assert m.host_ns is None
    assert host_speed.factor(m, 30 * MS) is None


def test_the_model_keeps_the_reading_its_inputs_were_brought_to():
    rows = [{**r, "host_mean": 20 * MS} for r in REFERENCE_PRIMITIVES]
    rows[0] = {**rows[0], "host_mean": 40 * MS}  # ECDSA-P256 sign, timed on a slower host
    m = cost_fit.model_from_summary(rows, "fixture")
    assert m.host_ns == 20 * MS
    sign = next(t for k, t in m.timings.items() if k[1:3] == ("ECDSA-P256", "sign"))
    assert sign.mean_ms == pytest.approx(0.01)  # 0.02 ms on a host half as fast
    assert host_speed.factor(m, 30 * MS) == pytest.approx(1.5)
    assert host_speed.factor(m, None) is None and host_speed.factor(m, 0) is None


def test_the_whole_model_scales_to_another_host_speed():
    line = cost.Line(0.2, 0.01, 0.02)
    m = cost.CostModel(
        timings={("openssl-3.5", "ML-DSA-44", "sign", "cv"): cost.Timing(0.5, 0.05, 40)},
        overheads={"openssl-3.5": cost.Overhead({"server": line}, {"server": line})},
        source="hand-made",
        stack_references={"openssl-3.5": {("ecdsa", "full"): {"latency": 1.0, "kib": 2.0, "n": 9}}},
        path_extras={("openssl-3.5", "wan"): {"server": line}},
        peer_extras={("go", "rustls"): {"server": 0.1, "client_se": 0.01}},
        wait_extras={"go": {"client": 0.3, "client_se": 0.03}},
        host_ns=20 * MS,
    )
    s = host_speed.at_speed(m, 2.0)
    assert s.timings[("openssl-3.5", "ML-DSA-44", "sign", "cv")] == cost.Timing(1.0, 0.1, 40)
    doubled = cost.Line(0.4, 0.02, 0.04)
    assert s.overheads["openssl-3.5"] == cost.Overhead({"server": doubled}, {"server": doubled})
    assert s.stack_references["openssl-3.5"][("ecdsa", "full")] == {
        "latency": 2.0,
        "kib": 2.0,
        "n": 9,
    }
    assert s.path_extras[("openssl-3.5", "wan")] == {"server": doubled}
    assert s.peer_extras[("go", "rustls")] == {"server": 0.2, "client_se": 0.02}
    assert s.wait_extras["go"] == {"client": 0.6, "client_se": 0.06}
    assert s.host_ns == 40 * MS and s.source == "hand-made"
    assert m.timings[("openssl-3.5", "ML-DSA-44", "sign", "cv")].mean_ms == 0.5  # unchanged


def test_the_estimate_prices_at_the_reading_it_took():
    """at_reading: the model brought to a host reading (a run's estimate, from the reading
    as it starts); as it is without a reading, or for a model with no host speed."""
    m = cost.CostModel(
        timings={("openssl-3.5", "ML-DSA-44", "sign", "cv"): cost.Timing(0.5, 0.05, 40)},
        overheads={},
        source="hand-made",
        host_ns=40 * MS,
    )
    fast = host_speed.at_reading(m, 20 * MS)  # the host twice as fast as at the primitives
    assert fast.timings[("openssl-3.5", "ML-DSA-44", "sign", "cv")].mean_ms == 0.25
    assert fast.host_ns == 20 * MS
    assert host_speed.at_reading(m, None) is m
    assert host_speed.at_reading(replace(m, host_ns=None), 20 * MS).host_ns is None
    assert host_speed.at_reading(None, 20 * MS) is None


def test_rows_at_different_readings_scale_as_each_row_would():
    import pandas as pd

    from chainlab.store.views import summarize_rows

    # Two batches of one primitive: 1 ms at a 20 ms reading, 3 ms at 40 ms. At 40 ms each
    # would have taken 2 ms and 3 ms: mean 2.5 ms, where scaling the 2 ms mean by the mean
    # reading (30 ms) would give 2.67.
    rows = pd.DataFrame(
        [
            {"subject": "ML-DSA-65", "op": "sign", "message": "cv", "message_bytes": 130,
             "measured_run": "r", "seq": i, "wall_ns": ns, "cpu_ns": ns, "server_cpu_ns": None,
             "kib": None, "measured_at": pd.Timestamp("2026-11-30"), "host_cpu_ns": h,
             "implementation": "openssl-3.5"}
            for i, (ns, h) in enumerate([(1 * MS, 20 * MS), (3 * MS, 40 * MS)])
        ]
    )  # fmt: skip
    [summary] = summarize_rows(rows).to_dict("records")
    scaled = summary["cpu_mean"] * 40 * MS / summary["host_mean"]
    assert scaled == pytest.approx(2.5 * MS)
    # One reading for every row: that reading, as before.
    same = summarize_rows(rows.assign(host_cpu_ns=30 * MS)).to_dict("records")[0]
    assert same["host_mean"] == pytest.approx(30 * MS)
