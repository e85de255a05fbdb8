"""The synthetic store factory writes through the real store writer."""

import duckdb

from chainlab.bench.synthetic import SyntheticScenario, build_store, paper_matrix
from chainlab.campaign import ids
from chainlab.store import SCHEMA_VERSION


def test_paper_matrix_has_the_requested_samples_and_15_scenarios(tmp_path):
    scen = paper_matrix(20_000)
    assert len(scen) == 15 and sum(s.n for s in scen) == 20_000
    assert len({s.scenario_id for s in scen}) == 15
    p = build_store(tmp_path / "m.duckdb", scen)
    con = duckdb.connect(str(p), read_only=True)
    assert con.execute("SELECT count(*) FROM samples WHERE NOT warmup").fetchone()[0] == 20_000
    assert con.execute("SELECT count(*) FROM scenarios").fetchone()[0] == 15
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    assert (
        con.execute("SELECT value FROM meta WHERE key='created_by'")
        .fetchone()[0]
        .startswith("chainlab ")
    )
    con.close()


def test_default_ids_are_compositional():
    assert SyntheticScenario().scenario_id == "x25519mlkem768__ml_root__ml_int__ml_leaf"
    s = SyntheticScenario(kex="X25519", depth=2, leaf_alg="SLH-DSA-SHAKE-128f", served_chain="full")
    assert s.scenario_id == "x25519__ml_root__slhdsashake128f_leaf__served_full"
    assert s.int1_alg is None


def test_ids_are_the_campaigns_at_every_depth():
    """Depth 1 is `_self`, depth 4 `_int1`/`_int2`, as chainlab.campaign.ids composes them."""
    one = SyntheticScenario(depth=1, leaf_alg="ML-DSA-44")
    assert one.scenario_id == "x25519mlkem768__mldsa44_self"
    four = SyntheticScenario(depth=4, int2_alg="SLH-DSA-SHAKE-192s")
    assert four.scenario_id == "x25519mlkem768__ml_root__ml_int1__slh_int2__ml_leaf"
    tokens = {"ml": "ML-DSA-65", "slh": "SLH-DSA-SHAKE-192s", "mldsa44": "ML-DSA-44"}
    for s in (one, four):
        parts = ids.decode(s.scenario_id, tokens, set())
        assert parts["hierarchy"] == s.hierarchy


def test_certificates_and_observed_chain_follow_the_served_policy(tmp_path):
    p = build_store(tmp_path / "c.duckdb", [SyntheticScenario(depth=3, served_chain="full")])
    con = duckdb.connect(str(p), read_only=True)
    served = con.execute("SELECT role, served FROM certificates ORDER BY position").fetchall()
    assert served == [("leaf", True), ("int1", True), ("root", True)]
    assert con.execute("SELECT count(*) FROM observed_chain").fetchone()[0] == 3
    con.close()


def test_certificate_roles_are_the_runners(tmp_path):
    """The store's role names come from chainlab.campaign.model.Scenario, as the runner's."""
    scenarios = [SyntheticScenario(depth=4, int2_alg="ML-DSA-44"), SyntheticScenario(depth=1)]
    con = duckdb.connect(str(build_store(tmp_path / "d.duckdb", scenarios)), read_only=True)
    roles = con.execute(
        "SELECT list(role ORDER BY position) FROM certificates GROUP BY scenario_id"
    ).fetchall()
    con.close()
    assert sorted(r[0] for r in roles) == [["leaf", "int2", "int1", "root"], ["self-signed"]]
