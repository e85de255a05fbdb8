"""Known answers for a probed target (chainlab.analysis.probe.per_target): one target's
stored moments and latencies, its figures computed by hand."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from chainlab.analysis.probe import per_target

# Latencies (ms) of 5 handshakes: mean 3, sample variance 2.5.
LATENCIES_MS = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
# The Student t quantile at 95 % and 4 degrees of freedom.
T_95_4 = 2.7764451051977987


def target_row(**over) -> dict:
    ns = 1e6  # the store keeps nanoseconds
    row = {
        "scenario_id": "x25519mlkem768__target_edge",
        "target": "edge",
        "params": json.dumps(
            {"target": {"address": "203.0.113.7:443", "servername": "edge.example", "ca": "ca.pem"}}
        ),
        "kex": "X25519MLKEM768",
        "handshake_mode": "full",
        "cert_compression": "none",
        "run_status": "completed",
        "n_measured": 6,
        "n_ok": 5,
        "n_failed_samples": 1,
        "negotiated_group": "X25519MLKEM768",
        "negotiated_sigalg": "mldsa65",
        "resumed_fraction": 0.0,
        "chain_len_mode": 2,
        "chain_bytes_mean": 9000.0,
        "total_mean": 3.0 * ns,
        "total_var": 2.5 * ns**2,
        "connect_mean": 0.5 * ns,
        "connect_var": 0.0,
        "connect_n": 5,
        "bytes_read_mean": 10_000.0,
        "bytes_read_var": 0.0,
        "bytes_read_n": 5,
        "bytes_written_mean": 1_500.0,
        "bytes_written_var": 0.0,
        "bytes_written_n": 5,
        "client_cpu_alone_mean": 1.2 * ns,
        "client_cpu_alone_var": 0.04 * ns**2,
        "client_cpu_alone_n": 5,
    }
    return {**row, **over}


def data(row: dict, failures: pd.DataFrame | None = None):
    return SimpleNamespace(
        targets=pd.DataFrame([row]),
        target_failures=failures
        if failures is not None
        else pd.DataFrame(columns=["scenario_id", "error_category", "n", "example_detail"]),
        latencies_ms={row["scenario_id"]: LATENCIES_MS},
    )


def test_a_target_is_described_from_its_moments_and_latencies():
    fails = pd.DataFrame(
        [{"scenario_id": "x25519mlkem768__target_edge", "error_category": "handshake_timeout",
          "n": 1, "example_detail": "no data from the peer within the timeout"}]
    )  # fmt: skip
    r = per_target(data(target_row(), fails), 0.95).iloc[0]
    assert (r["address"], r["servername"], r["status"]) == ("203.0.113.7:443", "edge.example", "ok")
    assert (r["n_measured"], r["n_ok"], r["n_failed"]) == (6, 5, 1)
    assert r["failures"] == "handshake_timeout 1: no data from the peer within the timeout"
    # Mean latency 3 ms, t interval: 3 ± t(0.975, 4) * sqrt(2.5 / 5).
    half = T_95_4 * math.sqrt(2.5 / 5)
    assert r["mean_ms"] == pytest.approx(3.0)
    assert (r["mean_ms_lo"], r["mean_ms_hi"]) == pytest.approx((3.0 - half, 3.0 + half))
    # Client CPU 1.2 ms, variance 0.04 ms².
    cpu_half = T_95_4 * math.sqrt(0.04 / 5)
    assert (r["client_cpu_ms_lo"], r["client_cpu_ms_hi"]) == pytest.approx(
        (1.2 - cpu_half, 1.2 + cpu_half)
    )
    # Nearest-rank median of 1..5 ms.
    assert r["median_ms"] == 3.0
    assert (r["bytes_read"], r["bytes_written"], r["chain_bytes"]) == (10_000, 1_500, 9_000)
    assert (r["negotiated_sigalg"], r["chain_len"]) == ("mldsa65", 2)


def test_a_target_that_never_completed_is_failed_with_its_cause():
    row = target_row(
        run_status="failed", n_ok=0, failure_cause="target_unreachable",
        failure_detail="connect refused",
    )  # fmt: skip
    r = per_target(data(row), 0.95).iloc[0]
    assert (r["status"], r["failure_cause"], r["failure_detail"]) == (
        "failed", "target_unreachable", "connect refused",
    )  # fmt: skip
