"""The synthetic store factory writes what the schema says."""

import duckdb

from chainlab.analysis.synthetic import SyntheticScenario, build_store, paper_matrix


def test_paper_matrix_has_the_requested_samples_and_15_scenarios(tmp_path):
    scen = paper_matrix(20_000)
    assert len(scen) == 15 and sum(s.n for s in scen) == 20_000
    assert len({s.scenario_id for s in scen}) == 15
    p = build_store(tmp_path / "m.duckdb", scen)
    con = duckdb.connect(str(p), read_only=True)
    assert con.execute("SELECT count(*) FROM samples WHERE NOT warmup").fetchone()[0] == 20_000
    assert con.execute("SELECT count(*) FROM scenarios").fetchone()[0] == 15
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "1"
    con.close()


def test_default_ids_are_compositional():
    assert SyntheticScenario().scenario_id == "x25519mlkem768__ml_root__ml_int__ml_leaf"
    s = SyntheticScenario(kex="X25519", depth=2, leaf_alg="SLH-DSA-SHAKE-128f", served_chain="full")
    assert s.scenario_id == "x25519__ml_root__slhdsashake128f_leaf__served_full"
    assert s.int1_alg is None


def test_certificates_and_observed_chain_follow_the_served_policy(tmp_path):
    p = build_store(tmp_path / "c.duckdb", [SyntheticScenario(depth=3, served_chain="full")])
    con = duckdb.connect(str(p), read_only=True)
    served = con.execute("SELECT role, served FROM certificates ORDER BY position").fetchall()
    assert served == [("leaf", True), ("int1", True), ("root", True)]
    assert con.execute("SELECT count(*) FROM observed_chain").fetchone()[0] == 3
    con.close()
