"""Synthetic stores with known answers for the analysis tests (tests/synthetic.py writes
them through the real schema)."""

import pytest
from synthetic import SyntheticScenario, build_store

ML, SLH, SLHF = "ML-DSA-65", "SLH-DSA-SHAKE-192s", "SLH-DSA-SHAKE-128f"
BASELINE = "x25519mlkem768__ml_root__ml_int__ml_leaf"


@pytest.fixture
def make_store(tmp_path):
    """make_store(scenarios, **build_store kwargs) -> path of a new store."""
    counter = {"n": 0}

    def make(scenarios, name=None, **kw):
        counter["n"] += 1
        path = tmp_path / (name or f"store{counter['n']}.duckdb")
        return build_store(path, scenarios, **kw)

    return make


def constant(**kw) -> SyntheticScenario:
    """A scenario whose every measured handshake has the same latency, CPU and bytes."""
    kw.setdefault("n", 50)
    kw.setdefault("latency_cv", 0.0)
    kw.setdefault("cpu_cv", 0.0)
    kw.setdefault("server_close_cpu_ms", 0.0)  # the connection costs what its handshake does
    return SyntheticScenario(**kw)


@pytest.fixture
def constant_matrix():
    """Baseline (1 ms) plus root-, intermediate- and leaf-heavy variants with exact values:
    latency 1, 2, 3, 1000 ms; server CPU 0.5, 0.6, 0.7, 900 ms; client CPU 0.5, 1.0, 1.5, 3."""
    return [
        constant(latency_ms=1.0, server_cpu_ms=0.5, client_cpu_ms=0.5, bytes_read=16000),
        constant(
            root_alg=SLH, latency_ms=2.0, server_cpu_ms=0.6, client_cpu_ms=1.0, bytes_read=29000
        ),
        constant(
            int1_alg=SLH, latency_ms=3.0, server_cpu_ms=0.7, client_cpu_ms=1.5, bytes_read=28000
        ),
        constant(
            leaf_alg=SLH,
            latency_ms=1000.0,
            server_cpu_ms=900.0,
            client_cpu_ms=3.0,
            bytes_read=27000,
        ),
    ]
