"""Known answers for the twin analyses that had none: every handshake of a scenario has the
same latency, CPU and bytes (chainlab.bench.synthetic), so each ratio to its twin is exact by
hand and its interval has no width."""

import pytest

from chainlab.analysis.analyze import analyze

from .conftest import constant

TCP = dict(latency_ms=1.0, server_cpu_ms=0.5, client_cpu_ms=0.4, bytes_read=16000)


def test_quic_against_its_tcp_twin(make_store):
    quic = dict(latency_ms=0.8, server_cpu_ms=0.6, client_cpu_ms=0.5, bytes_read=17000)
    a = analyze(make_store([constant(**TCP), constant(**quic, axis_values={"transport": "quic"})]))
    [r] = a.quic.to_dict("records")
    assert r["scenario_id"].endswith("__quic") and r["twin_id"] == r["scenario_id"][:-6]
    # 0.8 / 1.0, 0.6 / 0.5, 0.5 / 0.4: exact, intervals of no width.
    for name, want in (
        ("latency_ratio", 0.8),
        ("server_cpu_ratio", 1.2),
        ("client_cpu_ratio", 1.25),
    ):
        assert (r[name], r[f"{name}_lo"], r[f"{name}_hi"]) == pytest.approx((want,) * 3), name
    assert (r["bytes_read"], r["twin_bytes_read"]) == (17000, 16000)


def test_another_stack_against_its_openssl_35_twin(make_store):
    rustls = dict(latency_ms=1.5, server_cpu_ms=0.25, client_cpu_ms=0.6, bytes_read=16000)
    a = analyze(
        make_store(
            [constant(**TCP), constant(**rustls, axis_values={"stack": ("rustls", "rustls")})]
        )
    )
    [r] = a.stacks.to_dict("records")
    assert r["stack"] == "rustls" and r["scenario_id"].endswith("__stack_rustls")
    for name, want in (
        ("latency_ratio", 1.5),
        ("server_cpu_ratio", 0.5),
        ("client_cpu_ratio", 1.5),
    ):
        assert (r[name], r[f"{name}_lo"], r[f"{name}_hi"]) == pytest.approx((want,) * 3), name


def test_a_client_certificate_against_its_twin(make_store):
    mtls = dict(latency_ms=1.25, server_cpu_ms=0.7, client_cpu_ms=0.9, bytes_read=16000)
    a = analyze(
        make_store([constant(**TCP), constant(**mtls, client_auth=("ML-DSA-44", "ML-DSA-44"))])
    )
    [r] = a.client_auth.to_dict("records")
    # Differences of CPU (0.7 - 0.5, 0.9 - 0.4 ms) and the latency ratio 1.25, all exact.
    for name, want in (
        ("server_cpu_diff_ms", 0.2),
        ("client_cpu_diff_ms", 0.5),
        ("latency_ratio", 1.25),
    ):
        assert (r[name], r[f"{name}_lo"], r[f"{name}_hi"]) == pytest.approx((want,) * 3), name


@pytest.mark.parametrize(
    "mix_latency,off_line",
    [(1.5, False), (1.8, True)],
    ids=["on the line", "off the line"],
)
def test_a_resumption_mix_against_its_line(make_store, mix_latency, off_line):
    """Full (r = 0) 2 ms, resumed (r = 1) 1 ms; half of the mix's handshakes resumed, so its
    line is (1 - 0.5)·2 + 0.5·1 = 1.5 ms; a mix measured at 1.8 ms is off it (no width)."""
    full = dict(latency_ms=2.0, server_cpu_ms=1.0, client_cpu_ms=0.8)
    resumed = dict(latency_ms=1.0, server_cpu_ms=0.2, client_cpu_ms=0.4)
    mix = dict(latency_ms=mix_latency, server_cpu_ms=0.6, client_cpu_ms=0.6)
    a = analyze(
        make_store(
            [
                constant(**full, n=40),
                constant(**resumed, n=40, handshake_mode="resumed"),
                constant(**mix, n=40, handshake_mode="resume50", resumed_share=0.5),
            ]
        )
    )
    r = a.resumption.set_index("ratio").loc[0.5]
    assert (r["resumed_share"], r["latency_line"]) == pytest.approx((0.5, 1.5))
    assert (r["latency_line_lo"], r["latency_line_hi"]) == pytest.approx((1.5, 1.5))
    assert r["server_cpu_line"] == pytest.approx(0.6) and not r["server_cpu_off_line"]
    assert r["latency"] == pytest.approx(mix_latency)
    assert bool(r["latency_off_line"]) is off_line
