"""Reading a store: which samples count, failures, runs, and errors for bad stores."""

import datetime as dt

import duckdb
import numpy as np
import pytest
from synthetic import build_store

from chainlab.analysis.load import load_store
from chainlab.errors import ChainlabError
from chainlab.store import SCHEMA_VERSION

from .conftest import BASELINE, SLH, constant


def test_counts_exclude_warmup_and_failures(make_store):
    path = make_store([constant(n=40, n_failed=3, n_warmup=7, latency_ms=2.0)], baseline=BASELINE)
    d = load_store(path)
    row = d.scenarios.iloc[0]
    assert (row["n_ok"], row["n_measured"], row["n_failed_samples"]) == (40, 43, 3)
    assert row["total_mean"] == pytest.approx(2e6)
    assert d.latencies_ms[BASELINE].size == 40
    assert np.all(np.diff(d.latencies_ms[BASELINE]) >= 0)
    assert d.config.baseline == BASELINE
    assert list(d.failures["n"]) == [3]


def test_warmup_values_never_reach_the_statistics(make_store):
    s = constant(n=10, n_warmup=5, latency_ms=1.0)
    path = make_store([s])
    con = duckdb.connect(str(path))
    con.execute("UPDATE samples SET total_ns = 999000000 WHERE warmup")
    con.close()
    assert load_store(path).scenarios.iloc[0]["total_mean"] == pytest.approx(1e6)


def test_failed_scenario_is_marked_with_its_cause(make_store):
    path = make_store(
        [
            constant(),
            constant(
                leaf_alg=SLH, status="failed", failure_cause="handshake_timeout", n=0, n_failed=12
            ),
        ]
    )
    d = load_store(path)
    failed = d.scenarios[d.scenarios["failed"]]
    assert len(failed) == 1
    assert "handshake_timeout" in failed.iloc[0]["failure_note"]
    assert "12 of 12" in failed.iloc[0]["failure_note"]


def test_a_completed_rerun_supersedes_a_failed_run(tmp_path):
    path = build_store(
        tmp_path / "s.duckdb", [constant(status="failed", failure_cause="x", latency_ms=5.0)]
    )
    # A second run (a --resume) completes the same scenario with other samples.
    con = duckdb.connect(str(path))
    con.execute(
        "INSERT INTO runs SELECT * REPLACE ('run2' AS run_id, started_at + INTERVAL 1 HOUR "
        "AS started_at, ended_at + INTERVAL 1 HOUR AS ended_at) FROM runs"
    )
    con.execute(
        "INSERT INTO scenario_runs (run_id, scenario_id, status, started_at, ended_at, "
        "n_measured, n_ok, n_failed, n_warmup, stop_reason, ci_rel_halfwidth, "
        "failure_cause, pki_sha256, served_chain_der_bytes, served_chain_len, "
        "engine_seconds) SELECT 'run2', scenario_id, 'completed', started_at, "
        "ended_at + INTERVAL 2 HOUR, n_measured, n_ok, 0, n_warmup, 'fixed_count', "
        "NULL, NULL, pki_sha256, served_chain_der_bytes, served_chain_len, "
        "engine_seconds FROM scenario_runs"
    )
    con.execute(
        "INSERT INTO samples SELECT * REPLACE ('run2' AS run_id, total_ns // 5 AS total_ns) "
        "FROM samples"
    )
    con.close()
    d = load_store(path)
    row = d.scenarios.iloc[0]
    assert row["run_id"] == "run2" and not row["failed"]
    assert row["total_mean"] == pytest.approx(1e6)
    assert len(d.runs) == 2


@pytest.mark.bad_input
def test_not_a_file(tmp_path):
    with pytest.raises(ChainlabError, match="no store at .*missing.duckdb"):
        load_store(tmp_path / "missing.duckdb")


@pytest.mark.bad_input
def test_not_a_chainlab_store(tmp_path):
    p = tmp_path / "other.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(ChainlabError, match="not a chainlab store .missing table 'meta'"):
        load_store(p)


def test_other_schema_version_says_so(make_store):
    path = make_store([constant()])
    con = duckdb.connect(str(path))
    newer = SCHEMA_VERSION + 1
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(newer)])
    con.close()
    with pytest.raises(
        ChainlabError,
        match=f"schema version {newer}, this chainlab reads version {SCHEMA_VERSION}",
    ):
        load_store(path)


def test_store_without_runs(make_store, tmp_path):
    path = make_store([constant()])
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM runs")
    con.close()
    with pytest.raises(ChainlabError, match="holds no run"):
        load_store(path)


def test_run_metadata_is_read(make_store):
    path = make_store([constant()], started_at=dt.datetime(2026, 1, 2, 3, 4, 5))
    d = load_store(path)
    assert str(d.runs.iloc[0]["started_at"]).startswith("2026-01-02 03:04:05")
    assert d.campaign_name == "synthetic-campaign.toml"
    assert len(d.campaign_sha256) == 64


def test_registered_but_never_run_scenarios_are_named(make_store):
    from chainlab.analysis.analyze import analyze

    path = make_store([constant()])
    con = duckdb.connect(str(path))
    con.execute(
        "INSERT INTO scenarios BY NAME SELECT * REPLACE ('never_ran' AS scenario_id) FROM scenarios"
    )
    con.close()
    d = load_store(path)
    assert d.not_run == ["never_ran"] and len(d.scenarios) == 1
    meta = dict(analyze(path).metadata)
    assert "never_ran" in meta["not run"]
