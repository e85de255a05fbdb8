"""A deterministic store and its report, built once per test session for the report tests.

Sample values come from arithmetic (no random draws), so the store is identical on every
machine; bootstrap and Monte-Carlo intervals use the report's fixed seed.
"""

import numpy as np
import pytest
from conftest import figure_files
from synthetic import SyntheticScenario, build_store, network_example

ML, SLH = "ML-DSA-65", "SLH-DSA-SHAKE-192s"
N = 60


def wobble(mean_ms: float, spread: float, n: int = N) -> np.ndarray:
    """n values (ns) around mean_ms with a fixed pattern of +-spread relative deviations."""
    pattern = ((np.arange(n) * 7) % 13 - 6) / 6.0  # -1..1, mean 0
    return (mean_ms * (1 + spread * pattern)) * 1e6


def scenario(latency, server, client, spread=0.1, **kw) -> SyntheticScenario:
    kw.setdefault("n", N)
    n = kw["n"]
    return SyntheticScenario(
        n_warmup=3,
        overrides={
            "total_ns": wobble(latency, spread, n),
            "server_cpu_ns": wobble(server, spread / 2, n),
            "client_cpu_ns": wobble(client, spread / 3, n)[::-1],
        },
        **kw,
    )


def golden_scenarios() -> list[SyntheticScenario]:
    return [
        scenario(0.8, 0.56, 0.62, campaigns=("B",), bytes_read=16008),
        scenario(2.1, 0.67, 1.9, root_alg=SLH, campaigns=("B",), bytes_read=28947),
        scenario(1400, 1401, 2.0, leaf_alg=SLH, spread=0.02, campaigns=("B",), bytes_read=27015),
        scenario(
            1405,
            1403,
            3.2,
            int1_alg=SLH,
            leaf_alg=SLH,
            spread=0.02,
            campaigns=("B",),
            bytes_read=38046,
        ),
        scenario(0.7, 0.5, 0.52, kex="X25519", bytes_read=14920, n_failed=2),
        scenario(
            3.4,
            1.9,
            1.9,
            depth=2,
            root_alg=SLH,
            served_chain="full",
            campaigns=("C",),
            bytes_read=39962,
        ),
        scenario(1402, 1400, 2.9, kex="MLKEM768", leaf_alg=SLH, spread=0.02, bytes_read=26983),
        SyntheticScenario(
            kex="X25519",
            leaf_alg=SLH,
            status="failed",
            failure_cause="handshake_timeout",
            n=0,
            n_failed=4,
            n_warmup=0,
        ),
    ]


BASELINE = "x25519mlkem768__ml_root__ml_int__ml_leaf"


@pytest.fixture(scope="session")
def golden_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("golden")
    return build_store(d / "golden.duckdb", golden_scenarios(), baseline=BASELINE)


@pytest.fixture(scope="session")
def golden_report(golden_store):
    """The golden store's whole report, figures' files too (the HTML and figure tests)."""
    from chainlab.report import build_report

    with figure_files():
        return build_report(golden_store)


@pytest.fixture(scope="session")
def network_store(tmp_path_factory):
    """tests/synthetic.py's network_example: emulated profiles (one flagged, one known
    only from the campaign file), loopback twins, exact latencies."""
    scenarios, profiles, campaign = network_example()
    d = tmp_path_factory.mktemp("network")
    return build_store(
        d / "network.duckdb", scenarios, network_profiles=profiles, campaign_toml=campaign
    )


@pytest.fixture(scope="session")
def network_report(network_store):
    from chainlab.report import build_report

    with figure_files():
        return build_report(network_store)
