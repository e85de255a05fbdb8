"""The axis registry is the one place an axis is declared: a throwaway axis, registered in
this test only, is validated, expanded, named in ids, matched by `where`, stored, read back
from older stores, paired, labelled and handed to the engine, with no other change."""

import shutil
from pathlib import Path

import duckdb
import pytest

import chainlab
from chainlab.analysis import twins
from chainlab.analysis.analyze import analyze
from chainlab.bench.synthetic import SyntheticScenario, build_store
from chainlab.campaign import axes, ids, load
from chainlab.campaign.loader import CampaignError
from chainlab.runner import engine_args
from chainlab.store import Store

STORES = Path(__file__).parents[1] / "data" / "stores"

FRUIT = axes.Axis(
    key="fruit",
    label="fruit served",
    default="apple",
    read=("apple", "pear"),
    flags=lambda v: ["--fruit", v],
)

CAMPAIGN = """
[campaign]
name = "fruit"
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-65", "ML-DSA-65"]]
fruit = {fruit}
exclude = {exclude}
"""


@pytest.fixture
def fruit():
    with axes.added(FRUIT) as axis:
        yield axis


def write(tmp_path, fruit='["apple", "pear"]', exclude="[]") -> Path:
    f = tmp_path / "fruit.toml"
    f.write_text(CAMPAIGN.format(fruit=fruit, exclude=exclude))
    return f


def test_unknown_values_are_refused_by_key_value_and_allowed(fruit, tmp_path):
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, fruit='["apple", "plum"]'))
    msg = str(e.value)
    assert "matrix.m.fruit[1]" in msg and "'plum'" in msg and "apple" in msg and "pear" in msg


def test_expanded_named_in_ids_and_read_back(fruit, tmp_path):
    c = load(write(tmp_path))
    assert list(c.scenarios) == [
        "x25519__mldsa65_root__mldsa65_leaf",
        "x25519__mldsa65_root__mldsa65_leaf__fruit_pear",
    ]
    pear = c.scenarios["x25519__mldsa65_root__mldsa65_leaf__fruit_pear"]
    assert pear.value("fruit") == "pear" and pear.params()["fruit"] == "pear"
    # The default is never named, in the id or the params (older scenarios keep theirs).
    apple = c.scenarios["x25519__mldsa65_root__mldsa65_leaf"]
    assert apple.value("fruit") == "apple" and "fruit" not in apple.params()
    back = ids.decode(pear.scenario_id, {"mldsa65": "ML-DSA-65"}, set())
    assert back["fruit"] == "pear"
    with pytest.raises(ValueError, match="fruit_pear"):
        ids.decode("x25519__mldsa65_self__fruit_plum", {"mldsa65": "ML-DSA-65"}, set())


def test_where_tables_test_it(fruit, tmp_path):
    c = load(write(tmp_path, exclude='[{ fruit = "pear" }]'))
    assert list(c.scenarios) == ["x25519__mldsa65_root__mldsa65_leaf"]
    with pytest.raises(CampaignError, match="exclude\\[0\\].fruit"):
        load(write(tmp_path, exclude='[{ fruit = "plum" }]'))


def test_the_engine_gets_its_flag(fruit, tmp_path):
    c = load(write(tmp_path))
    pear = c.scenarios["x25519__mldsa65_root__mldsa65_leaf__fruit_pear"]
    argv = engine_args.server_argv(
        pear, Path("eng"), Path("pki"), "127.0.0.1:0", Path("r"), 1, None
    )
    assert argv[argv.index("--fruit") + 1] == "pear"


def test_stored_paired_and_labelled(fruit, tmp_path):
    scenarios = [
        SyntheticScenario(n=30, latency_ms=1.0),
        SyntheticScenario(n=30, latency_ms=2.0, axis_values={"fruit": "pear"}),
    ]
    path = build_store(tmp_path / "fruit.duckdb", scenarios)
    with chainlab.open(path) as st:
        stored = dict(zip(st.scenarios["scenario_id"], st.scenarios["fruit"], strict=True))
    assert stored == {
        "x25519mlkem768__ml_root__ml_int__ml_leaf": "apple",
        "x25519mlkem768__ml_root__ml_int__ml_leaf__fruit_pear": "pear",
    }
    a = analyze(path)
    assert set(a.summary["fruit"]) == {"apple", "pear"}
    [(scenario, twin)] = twins.pairs(a.summary, "fruit", "apple")
    assert (scenario["fruit"], twin["fruit"]) == ("pear", "apple")
    pair = a.pairs[a.pairs["axis"] == "fruit"]
    assert list(pair["axis_label"]) == ["fruit served"]
    assert list(pair["to_value"]) in (["pear"], ["apple"])
    labels = dict(zip(a.summary["scenario_id"], a.summary["label"], strict=True))
    assert labels["x25519mlkem768__ml_root__ml_int__ml_leaf__fruit_pear"].endswith("fruit pear")


def test_an_older_store_gets_the_column_at_its_default(fruit, tmp_path):
    path = tmp_path / "v6.duckdb"
    shutil.copy(STORES / "v6-tiny.duckdb", path)
    # Read as it is: every scenario ran before the axis existed, at its default.
    a = analyze(path)
    assert set(a.summary["fruit"]) == {"apple"}
    # Opened for writing: the column is added, at the default, NOT NULL as in a new store.
    with Store.open(path, read_only=False):
        pass
    con = duckdb.connect(str(path), read_only=True)
    try:
        values = {r[0] for r in con.execute("SELECT fruit FROM scenarios").fetchall()}
        nullable = con.execute(
            "SELECT is_nullable FROM information_schema.columns "
            "WHERE table_name = 'scenarios' AND column_name = 'fruit'"
        ).fetchone()
    finally:
        con.close()
    assert values == {"apple"} and nullable == ("NO",)


def test_the_registry_is_unchanged_outside_the_fixture():
    assert "fruit" not in axes.matrix_keys()
