"""The result store: schema version, transactions, the read API, export."""

from datetime import datetime
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import chainlab
from chainlab.campaign import load
from chainlab.commands.export import export
from chainlab.errors import ChainlabError
from chainlab.store import SCHEMA_VERSION, TABLES, ScenarioRows, Store, StoreError

REPO = Path(__file__).resolve().parents[2]


def scenario():
    c = load(REPO / "campaigns" / "quick.toml")
    return c, c.scenarios["x25519mlkem768__ml_root__ml_leaf"]


def fake_result(run_id, sid, n=5) -> ScenarioRows:
    samples = []
    for i in range(n):
        samples.append(
            {
                "run_id": run_id, "scenario_id": sid, "seq": i, "warmup": i == 0,
                "conn_id": f"{i:016x}", "start_unix_ns": 1_795_251_534_212_976_475 + i,
                "outcome": "ok", "error_category": None, "error_detail": None,
                "connect_ns": 100_000, "handshake_ns": 1_900_000, "total_ns": 2_000_000 + i,
                "client_cpu_ns": 500_000, "client_cpu_user_us": 400, "client_cpu_sys_us": 100,
                "bytes_read": 16000, "bytes_written": 1500, "conn_bytes_read": 16024,
                "conn_bytes_written": 1524, "grp": "X25519MLKEM768", "sigalg": "mldsa65",
                "resumed": False, "verify": True, "chain_len": 1, "chain_der_bytes": 5658,
                "server_handshake_ns": 1_800_000, "server_cpu_ns": 600_000,
                "server_cpu_user_us": 500, "server_cpu_sys_us": 100,
                "server_bytes_read": 1500, "server_bytes_written": 16000,
                "server_outcome": "ok", "server_error_category": None,
            }
        )  # fmt: skip
    row = {
        "run_id": run_id, "scenario_id": sid, "status": "completed",
        "started_at": datetime(2026, 1, 1), "ended_at": datetime(2026, 1, 1, 0, 1),
        "n_measured": n - 1, "n_ok": n - 1, "n_failed": 0, "n_warmup": 1,
        "stop_reason": "ci_target", "ci_rel_halfwidth": 0.01, "failure_cause": None,
        "pki_sha256": "ab" * 32, "served_chain_der_bytes": 5658, "served_chain_len": 1,
        "engine_seconds": 0.01, "server_exit": "sigterm", "sampling": {"mode": "adaptive"},
        "batches": 1, "wall_seconds": 0.02, "failure_detail": None,
    }  # fmt: skip
    chain = [
        {
            "run_id": run_id,
            "scenario_id": sid,
            "position": 0,
            "der_bytes": 5658,
            "subject": "CN=leaf",
            "sig_alg": "ML-DSA-65",
            "key_alg": "ML-DSA-65",
        }
    ]
    certs = [
        {
            "scenario_id": sid,
            "position": 0,
            "role": "leaf",
            "algorithm": "ML-DSA-65",
            "der_bytes": 5658,
            "sha256": "cd" * 32,
            "served": True,
        }
    ]
    return ScenarioRows(row, samples, chain, certs, None)


def run_row(run_id):
    return {
        "run_id": run_id, "started_at": datetime(2026, 1, 1), "status": "running",
        "campaign_file_name": "quick.toml", "campaign_file_sha256": "00" * 32,
        "campaign_toml": "", "chainlab_version": "0.1.0", "chainlab_commit": None,
        "engine_info": {"engine_version": "0.1.0"}, "openssl_version": "3.5.5",
        "openssl_patch_sha": "c3ea711679cad962", "machine": {"cores": 2}, "options": {},
    }  # fmt: skip


@pytest.fixture
def filled(tmp_path):
    c, s = scenario()
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.register_scenarios([s], [("kex", s.scenario_id), ("depth", s.scenario_id)])
        st.begin_run(run_row("r1"))
        st.write_scenario(fake_result("r1", s.scenario_id))
        st.end_run("r1", "completed")
    return path, s


def test_read_api_gives_dataframes(filled):
    path, s = filled
    st = chainlab.open(path)
    try:
        for t in TABLES:
            assert isinstance(getattr(st, t), pd.DataFrame)
        smp = st.samples
        assert len(smp) == 5 and smp["start_unix_ns"].dtype == "int64"
        assert smp["start_unix_ns"].iloc[0] == 1_795_251_534_212_976_475  # no float rounding
        assert set(st.campaign_scenarios["campaign"]) == {"kex", "depth"}
        assert st.scenarios.loc[0, "kex_family"] == "hybrid"
        assert st.runs.loc[0, "status"] == "completed"
        assert st.completed_scenarios() == {s.scenario_id}
        with pytest.raises(ChainlabError, match="read-only"):
            st.end_run("r1", "failed")
    finally:
        st.close()


def test_schema_version_mismatch_says_what_to_do(filled):
    path, _ = filled
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(ChainlabError) as e:
        chainlab.open(path)
    msg = str(e.value)
    assert f"schema version 0, this chainlab reads version {SCHEMA_VERSION}" in msg
    assert "older chainlab" in msg and "new store" in msg
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(ChainlabError, match="newer chainlab: upgrade"):
        chainlab.open(path)


@pytest.mark.bad_input
def test_not_a_store(tmp_path):
    p = tmp_path / "x.duckdb"
    duckdb.connect(str(p)).close()
    with pytest.raises(ChainlabError, match="not a chainlab store"):
        chainlab.open(p)
    with pytest.raises(ChainlabError, match="no store at"):
        chainlab.open(tmp_path / "missing.duckdb")


def test_failure_mid_scenario_leaves_no_partial_rows(filled, monkeypatch):
    path, s = filled

    real = Store.insert

    def boom(self, table, rows, **kw):
        if table == "observed_chain":
            raise RuntimeError("disk full (simulated)")
        return real(self, table, rows, **kw)

    with Store.open(path, read_only=False) as st:
        st.begin_run(run_row("r2"))
        # Samples and scenario_runs are inserted before the observed chain: fail there.
        monkeypatch.setattr(Store, "insert", boom)
        with pytest.raises(RuntimeError, match="simulated"):
            st.write_scenario(fake_result("r2", s.scenario_id, n=7))
    st = chainlab.open(path)
    try:
        assert set(st.samples["run_id"]) == {"r1"}
        assert list(st.scenario_runs["run_id"]) == ["r1"]
        assert len(st.samples) == 5
    finally:
        st.close()


def test_a_windows_scenarios_are_written_in_one_transaction(tmp_path, monkeypatch):
    """Store.write_scenarios: each table's rows of all its scenarios in one statement (shared
    certificates kept once), and nothing of any of them when one part fails."""
    c = load(REPO / "campaigns" / "quick.toml")
    ids = sorted(c.scenarios)[:3]
    path = tmp_path / "w.duckdb"
    statements = []
    real = Store.insert

    def counted(self, table, rows, **kw):
        statements.append(table)
        return real(self, table, rows, **kw)

    with Store.create(path) as st:
        st.register_scenarios([c.scenarios[i] for i in ids], [])
        st.begin_run(run_row("r1"))
        monkeypatch.setattr(Store, "insert", counted)
        results = [fake_result("r1", sid, n=4 + k) for k, sid in enumerate(ids)]
        for r in results:  # one hierarchy's certificate in each: the same row thrice
            r.certificates = [{**r.certificates[0], "scenario_id": ids[0]}]
        st.write_scenarios(results)
        assert statements.count("samples") == 1 and statements.count("scenario_runs") == 1

        def boom(self, table, rows, **kw):
            if table == "host_reference":
                raise RuntimeError("disk full (simulated)")
            return real(self, table, rows, **kw)

        monkeypatch.setattr(Store, "insert", boom)
        again = [fake_result("r2", sid) for sid in ids]
        again[0].host_reference = [
            {"run_id": "r2", "scenario_id": ids[0], "step": -1, "phase": "start",
             "wall_ns": 1, "cpu_ns": 1}
        ]  # fmt: skip
        with pytest.raises(RuntimeError, match="simulated"):
            st.write_scenarios(again)
    with chainlab.open(path) as st:
        assert sorted(st.scenario_runs["scenario_id"]) == ids
        assert len(st.samples) == 4 + 5 + 6 and set(st.samples["run_id"]) == {"r1"}
        assert len(st.certificates) == 1


def primitive_rows(run_id, cpu_ns, n=3, implementation="openssl-3.5"):
    return [
        {
            "run_id": run_id, "implementation": implementation, "subject": "ML-DSA-44",
            "op": "sign", "message": "cv", "message_bytes": 130, "seq": i,
            "wall_ns": cpu_ns + i, "cpu_ns": cpu_ns + 10 * i, "server_cpu_ns": None,
            "kib": None, "measured_run": run_id, "measured_at": datetime(2026, 11, 24),
            "host_cpu_ns": 15_000_000,
        }
        for i in range(n)
    ]  # fmt: skip


def test_a_runs_primitive_summary_is_its_own_rows_as_they_would_sum_in_memory(tmp_path):
    """Store.primitive_summary(run_id), which a run prices its estimates with once its
    primitives are written, is that run's rows alone, summed as views.summarize_rows sums the
    same rows in memory (the path before, 0.27 s for interop.toml's 83,000)."""
    from chainlab.store import views

    path = tmp_path / "p.duckdb"
    mine = primitive_rows("r2", 700_000) + primitive_rows("r2", 90_000, implementation="rustls")
    with Store.create(path) as st:
        st.begin_run(run_row("r1"))
        st.write_primitives(primitive_rows("r1", 500_000, n=5))
        st.begin_run(run_row("r2"))
        st.write_primitives(mine)
        st.write_primitives(mine[:2])  # written again (a resumed run): counted once
        ours = st.primitive_summary("r2")
        everything = st.primitive_summary()
    assert ours[["implementation", "n"]].values.tolist() == [["openssl-3.5", 3], ["rustls", 3]]
    assert ours["cpu_mean"].tolist() == [700_010, 90_010]
    pd.testing.assert_frame_equal(
        ours.reset_index(drop=True),
        views.summarize_rows(pd.DataFrame(mine)).reset_index(drop=True),
        check_dtype=False,
    )
    assert everything.loc[everything["implementation"] == "openssl-3.5", "n"].item() == 8


@pytest.mark.bad_input
def test_changed_scenario_definition_is_refused(filled):
    path, s = filled
    from dataclasses import replace

    changed = replace(s, hierarchy=("ML-DSA-44", "ML-DSA-44"))
    with Store.open(path, read_only=False) as st, pytest.raises(ChainlabError) as e:
        st.register_scenarios([changed], [])
    assert s.scenario_id in str(e.value) and "new store" in str(e.value)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_round_trips_through_pandas(filled, tmp_path, fmt):
    path, _ = filled
    files = export(path, fmt, tmp_path / f"out-{fmt}")
    assert sorted(f.stem for f in files) == sorted(TABLES)
    st = chainlab.open(path)
    try:
        for f in files:
            back = pd.read_parquet(f) if fmt == "parquet" else pd.read_csv(f)
            orig = getattr(st, f.stem)
            assert len(back) == len(orig), f.stem
            assert list(back.columns) == list(orig.columns), f.stem
        back = (
            pd.read_parquet(files[TABLES.index("samples")])
            if fmt == "parquet"
            else (pd.read_csv(files[TABLES.index("samples")]))
        )
        assert back["total_ns"].tolist() == st.samples["total_ns"].tolist()
        assert back["start_unix_ns"].tolist() == st.samples["start_unix_ns"].tolist()
    finally:
        st.close()


def test_a_file_system_error_is_one_line_and_keeps_the_store(filled, monkeypatch):
    """Disk full, permission denied, read-only file system: StoreError (a ChainlabError, so
    one line and exit 2) naming the store and the cause; nothing of the transaction kept."""
    import errno

    path, s = filled

    real = Store.insert

    def full(self, table, rows, **kw):
        if table == "observed_chain":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, table, rows, **kw)

    with Store.open(path, read_only=False) as st:
        st.begin_run(run_row("r2"))
        monkeypatch.setattr(Store, "insert", full)
        with pytest.raises(StoreError) as e:
            st.write_scenario(fake_result("r2", s.scenario_id, n=7))
    msg = str(e.value)
    assert msg.startswith(f"store {path}: cannot write (No space left on device)")
    assert "--resume" in msg and "\n" not in msg
    with chainlab.open(path) as st:
        assert set(st.samples["run_id"]) == {"r1"} and len(st.samples) == 5


def test_a_version_1_store_is_upgraded_only_when_opened_for_writing(tmp_path):
    import shutil

    kept = REPO / "tests" / "data" / "stores" / "v1-tiny.duckdb"
    path = tmp_path / kept.name
    shutil.copy(kept, path)

    def version():
        con = duckdb.connect(str(path), read_only=True)
        try:
            return con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            con.close()

    with chainlab.open(path) as st:  # read-only: the file is left as it is
        assert "libraries" not in st.runs.columns
    assert version() == ("1",)
    with Store.open(path, read_only=False) as st:
        assert st.completed_scenarios()  # what was stored is still there
    assert version() == (str(SCHEMA_VERSION),)
    with chainlab.open(path) as st:
        assert st.runs["libraries"].isna().all()  # unknown for runs of version 1


def test_a_version_2_store_gains_the_cost_model_tables_when_opened_for_writing(tmp_path):
    import shutil

    kept = REPO / "tests" / "data" / "stores" / "v2-tiny.duckdb"
    path = tmp_path / kept.name
    shutil.copy(kept, path)
    with chainlab.open(path) as st:  # read-only: a table of version 3 reads as empty
        assert st.primitive_samples.empty
        assert "client_instructions" not in st.samples.columns
        assert st.primitive_summary().empty
    with Store.open(path, read_only=False) as st:
        st.write_primitives(
            [
                {
                    "run_id": "r",
                    "subject": "ML-DSA-44",
                    "op": "sign",
                    "message": "cv",
                    "message_bytes": 130,
                    "seq": i,
                    "wall_ns": 500_000 + i,
                    "cpu_ns": 500_000,
                    "server_cpu_ns": None,
                    "kib": None,
                    "measured_run": "r",
                    "measured_at": datetime(2026, 11, 24),
                }
                for i in range(3)
            ]
        )
    with chainlab.open(path) as st:
        assert st.samples["client_instructions"].isna().all()
        summary = st.primitive_summary()
    assert summary[["subject", "op", "message", "n"]].values.tolist() == [
        ["ML-DSA-44", "sign", "cv", 3]
    ]
    assert summary["cpu_mean"].iloc[0] == 500_000


def test_a_version_3_store_gains_client_certificates_when_opened_for_writing(tmp_path):
    import shutil

    from chainlab.analysis.load import load_store
    from chainlab.campaign import load

    kept = REPO / "tests" / "data" / "stores" / "v3-tiny.duckdb"
    path = tmp_path / kept.name
    shutil.copy(kept, path)
    with chainlab.open(path) as st:  # read-only: every scenario had no client certificate
        assert "client_auth" not in st.scenarios.columns
        assert st.observed_client_chain.empty
    assert set(load_store(path).scenarios["client_auth"]) == {"none"}
    campaign = load(REPO / "tests" / "data" / "stores" / "tiny.toml")
    with Store.open(path, read_only=False) as st:
        # The same scenarios register again: their stored parameters still match.
        st.register_scenarios(campaign.scenarios.values(), [])
    with chainlab.open(path) as st:
        assert set(st.scenarios["client_auth"]) == {"none"}
        assert list(st.observed_client_chain.columns)[:3] == ["run_id", "scenario_id", "position"]


def test_a_version_4_store_is_upgraded_to_transports_and_datagrams(tmp_path):
    """Version 5 adds scenarios.transport ('tcp' for every earlier scenario) and QUIC's
    datagram counts (NULL for every earlier sample)."""
    import shutil

    kept = REPO / "tests" / "data" / "stores" / "v4-tiny.duckdb"
    path = tmp_path / kept.name
    shutil.copy(kept, path)
    with chainlab.open(path) as st:  # read-only: as it is
        assert "transport" not in st.scenarios.columns
    with Store.open(path, read_only=False):
        pass
    con = duckdb.connect(str(path), read_only=True)
    try:
        version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        con.close()
    assert version == (str(SCHEMA_VERSION),)
    with chainlab.open(path) as st:
        assert set(st.scenarios["transport"]) == {"tcp"}
        assert st.samples["flight_datagrams"].isna().all()
        assert st.samples["datagrams_read"].isna().all()
