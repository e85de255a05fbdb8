"""Served chains and client certificates, each read against its twin (analysis.twins):
what leaving intermediates out saves, and where a client certificate puts the CPU."""

import math

import pytest

from chainlab.analysis.analyze import analyze
from chainlab.analysis.intermediates import REFERENCE_POLICY

from .conftest import ML, SLH, constant


def served(policy, **kw):
    return constant(served_chain=policy, **kw)


def test_each_served_chain_is_read_against_leaf_and_intermediates(make_store):
    a = analyze(
        make_store(
            [
                served(REFERENCE_POLICY, latency_ms=2.0, client_cpu_ms=1.0, bytes_read=16000),
                served("leaf", latency_ms=1.8, client_cpu_ms=1.0, bytes_read=11900),
                served("intermediate-anchor", latency_ms=1.6, client_cpu_ms=0.8, bytes_read=11900),
                served("full", latency_ms=2.4, client_cpu_ms=1.0, bytes_read=20000),
            ]
        )
    )
    p = a.intermediates.set_index("policy")
    # The anchor first, then the leaf, then the full chain; all against one twin.
    assert list(a.intermediates["policy"]) == ["intermediate-anchor", "leaf", "full"]
    assert p["twin_id"].nunique() == 1
    assert p.at["leaf", "read_saving_bytes"] == 4100
    assert p.at["full", "read_saving_bytes"] == -4000
    assert p.at["intermediate-anchor", "latency_ratio"] == pytest.approx(0.8)
    assert p.at["intermediate-anchor", "client_cpu_diff_ms"] == pytest.approx(-0.2)
    # Constant samples: the intervals collapse onto the estimates.
    assert p.at["leaf", "latency_ratio_lo"] == pytest.approx(0.9)
    # Loopback pairs are projected onto one reference network, twin included.
    assert (p["round_trips_basis"].str.startswith("projected at")).all()
    assert p["round_trips"].notna().all() and p["twin_round_trips"].notna().all()
    assert p.at["full", "projected_ms"] > p.at["full", "twin_projected_ms"]
    assert math.isnan(p.at["leaf", "observed_round_trips"])


def test_a_scenario_without_its_twin_is_left_out(make_store):
    a = analyze(make_store([served("leaf"), served("full", leaf_alg=SLH)]))
    assert a.intermediates.empty


def test_client_certificates_move_cpu_to_the_client(make_store):
    common = dict(depth=2, int1_alg=None, bytes_written=1500)
    a = analyze(
        make_store(
            [
                constant(server_cpu_ms=1.0, client_cpu_ms=0.8, latency_ms=2.0, **common),
                constant(
                    client_auth=(ML, ML), server_cpu_ms=1.5, client_cpu_ms=1.6,
                    latency_ms=2.6, **{**common, "bytes_written": 8000},
                ),
                constant(
                    client_auth=(ML, SLH), server_cpu_ms=4.0, client_cpu_ms=40.8,
                    latency_ms=42.0, **{**common, "bytes_written": 20000},
                ),
            ]
        )
    )  # fmt: skip
    c = a.client_auth.set_index("client_leaf")
    assert set(c.index) == {ML, SLH}
    assert c.at[SLH, "client_cpu_diff_ms"] == pytest.approx(40.0)
    assert c.at[SLH, "server_cpu_diff_ms"] == pytest.approx(3.0)
    assert c.at[SLH, "client_share"] == pytest.approx(40.8 / 44.8)
    assert c.at[SLH, "twin_client_share"] == pytest.approx(0.8 / 1.8)
    assert c.at[ML, "written_more_bytes"] == 6500
    assert c.at[ML, "latency_ratio"] == pytest.approx(1.3)
    assert (c["client_auth"] == [f"{ML},{ML}", f"{ML},{SLH}"]).all()


def test_scenarios_on_different_machine_types_are_flagged(make_store):
    import json

    import duckdb

    path = make_store(
        [constant(latency_ms=1.0), constant(leaf_alg=SLH, latency_ms=2.0)], baseline=None
    )
    con = duckdb.connect(str(path))
    for cores, leaf in ((2, ML), (16, SLH)):
        host = {"executor": "dask", "hostname": f"h{cores}", "worker": f"tcp://h{cores}:1",
                "cpu_model": "EPYC", "cores": cores, "kernel": "6.1", "arch": "x86_64"}  # fmt: skip
        con.execute(
            "UPDATE scenario_runs SET host = ? WHERE scenario_id IN "
            "(SELECT scenario_id FROM scenarios WHERE leaf_alg = ?)",
            [json.dumps(host), leaf],
        )
    con.close()
    a = analyze(path)
    meta = dict(a.metadata)
    assert "tcp://h2:1" in meta["scenario hosts"] and "tcp://h16:1" in meta["scenario hosts"]
    assert "2 machine types" in meta["warning"]
    assert a.pairs["machines_differ"].all()
    assert set(a.summary["host"]) == {"tcp://h2:1", "tcp://h16:1"}


def test_twins_are_found_by_algorithm_not_by_hierarchy_label():
    """ML-DSA-44 and ML-DSA-65 chains share the label 'ML root / ML leaf': each scenario
    must still meet the twin with its own algorithms."""
    import pandas as pd

    from chainlab.analysis import twins

    rows = []
    for alg in ("ML-DSA-44", "ML-DSA-65"):
        for transport in ("tcp", "quic"):
            rows.append(
                {
                    "scenario_id": f"{alg}-{transport}",
                    "status": "ok",
                    "kex": "X25519MLKEM768",
                    "hierarchy": "ML root / ML leaf",
                    "depth": 2,
                    "root_alg": alg,
                    "int1_alg": math.nan,
                    "int2_alg": math.nan,
                    "leaf_alg": alg,
                    "served_chain": "leaf+intermediates",
                    "handshake_mode": "full",
                    "cert_compression": "none",
                    "client_auth": "none",
                    "transport": transport,
                    "network": "loopback",
                }
            )
    found = twins.pairs(pd.DataFrame(rows), "transport", "tcp")
    assert {(a["scenario_id"], b["scenario_id"]) for a, b in found} == {
        ("ML-DSA-44-quic", "ML-DSA-44-tcp"),
        ("ML-DSA-65-quic", "ML-DSA-65-tcp"),
    }
