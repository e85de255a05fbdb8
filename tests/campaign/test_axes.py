"""The axis registry is the one place an axis is declared: throwaway axes, registered in this
test only, are validated, expanded, named in ids, matched by `where`, stored, read back from
older stores, paired, labelled and handed to the engine, with no other change. One is a
simple lever (one string of a set); the other a structured one (a table of two fields, read
by its own reader) with a rule across axes, a run-time estimate, an engine flag, and a field
the server records, which the store keeps in a column and an analysis frame reads."""

import shutil
from pathlib import Path

import duckdb
import pytest
from synthetic import SyntheticScenario, build_store

import chainlab
from chainlab import axes
from chainlab.analysis import twins
from chainlab.analysis.analyze import analyze
from chainlab.axes.axis import NOT_MINE
from chainlab.campaign import ids, load
from chainlab.campaign.loader import CampaignError
from chainlab.model import estimate
from chainlab.runner import engine_args, records
from chainlab.runner.scenario_state import Files
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


@pytest.mark.bad_input
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
        pear, Path("eng"), Files(pki_dir=Path("pki")), "127.0.0.1:0", Path("r"), 1
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
    assert "fruit" not in axes.matrix_keys() and "basket" not in axes.matrix_keys()


# -- a structured axis: a table value with two fields -------------------------------------

FRUITS = ("apple", "pear")
NO_BASKET = "none"
BASKET_MS = 5.0  # what each fruit adds to a handshake's estimated time


def read_basket(v, item, at: str) -> str | None:
    """'none', or a table { fruit = "pear", count = 3 } kept as "pear*3"."""
    if item == NO_BASKET:
        return item
    t = v.table(item, at)
    v.keys(t, ("fruit", "count"), at)
    fruit = v.string(t.get("fruit"), f"{at}.fruit", choices=FRUITS)
    count = v.integer(t.get("count"), f"{at}.count", 1, 9)
    return None if fruit is None or count is None else f"{fruit}*{count}"


def split(value: str) -> tuple[str, int]:
    fruit, count = value.split("*")
    return fruit, int(count)


def check_basket(v, sid: str, h, with_load: bool) -> None:
    """A basket of more than two rides TCP only (`h`: the scenario's handshake, whose
    `parts` hold this axis's value)."""
    basket = h.parts["basket"]
    big = basket != NO_BASKET and split(basket)[1] > 2
    if big and h.quic:
        v.bad("matrix", f"scenario {sid}: basket of more than two over QUIC; allowed: TCP")


def basket_untoken(part: str, _algorithms):
    if not part.startswith("basket_") or part[7:-1] not in FRUITS or not part[-1].isdigit():
        return NOT_MINE
    return f"{part[7:-1]}*{part[-1]}"


BASKET = axes.Axis(
    key="basket",
    label="fruit basket",
    default=NO_BASKET,
    read=read_basket,
    columns=("basket_fruit", "basket_count"),
    store=lambda v: (NO_BASKET, "0") if v == NO_BASKET else (split(v)[0], str(split(v)[1])),
    id_part=lambda v, _: "basket_{}{}".format(*split(v)),
    id_read=basket_untoken,
    where={"basket_fruit": lambda v: {NO_BASKET if v == NO_BASKET else split(v)[0]}},
    where_read={"basket_fruit": (NO_BASKET, *FRUITS)},
    check=check_basket,
    server_flags=lambda v, s, files: ["--basket", v] if v != NO_BASKET else [],
    estimate_ms=lambda v, s: 0.0 if v == NO_BASKET else BASKET_MS * split(v)[1],
    describe=lambda fruit, count: (
        "no basket" if fruit == NO_BASKET else f"basket of {count} {fruit}"
    ),
    # What the server weighed of the basket, per connection, and its mean per scenario.
    recorded=(axes.Recorded("basket_weight", "INTEGER", "server", "basket_grams"),),
    frames={
        "baskets": "SELECT scenario_id, avg(basket_weight) AS grams FROM measured "
        "WHERE basket_weight IS NOT NULL GROUP BY scenario_id"
    },
)

BASKET_CAMPAIGN = """
[campaign]
name = "basket"
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-65", "ML-DSA-65"]]
transport = {transport}
basket = {basket}
exclude = {exclude}
"""
PLAIN = "x25519__mldsa65_root__mldsa65_leaf"


@pytest.fixture
def basket():
    with axes.added(BASKET) as axis:
        yield axis


def write_basket(tmp_path, basket='["none", { fruit = "pear", count = 3 }]', transport='["tcp"]',
                 exclude="[]") -> Path:  # fmt: skip
    f = tmp_path / "basket.toml"
    f.write_text(BASKET_CAMPAIGN.format(basket=basket, transport=transport, exclude=exclude))
    return f


def test_a_structured_value_is_read_by_its_own_reader(basket, tmp_path):
    bad = '[{ fruit = "plum", count = 3 }, { fruit = "pear", count = 12 }, { fruit = "pear" }]'
    with pytest.raises(CampaignError) as e:
        load(write_basket(tmp_path, basket=bad))
    lines = str(e.value).splitlines()
    assert any("matrix.m.basket[0].fruit" in ln and "'plum'" in ln for ln in lines)
    assert any("matrix.m.basket[1].count" in ln and "12" in ln for ln in lines)
    assert any("matrix.m.basket[2].count" in ln for ln in lines)


def test_its_rule_across_axes_is_checked(basket, tmp_path):
    with pytest.raises(CampaignError, match="basket of more than two over QUIC"):
        load(write_basket(tmp_path, transport='["tcp", "quic"]'))
    # Excluded, the rule has nothing to refuse.
    load(write_basket(tmp_path, transport='["tcp", "quic"]', exclude='[{ transport = "quic" }]'))


def test_it_is_expanded_named_estimated_and_handed_to_the_engine(basket, tmp_path):
    c = load(write_basket(tmp_path))
    assert list(c.scenarios) == [PLAIN, f"{PLAIN}__basket_pear3"]
    full = c.scenarios[f"{PLAIN}__basket_pear3"]
    assert full.value("basket") == "pear*3"
    back = ids.decode(full.scenario_id, {"mldsa65": "ML-DSA-65"}, set())
    assert back["basket"] == "pear*3"
    plain = c.scenarios[PLAIN]
    assert estimate.handshake_ms(full) - estimate.handshake_ms(plain) == pytest.approx(
        3 * BASKET_MS
    )
    argv = engine_args.server_argv(
        full, Path("eng"), Files(pki_dir=Path("pki")), "127.0.0.1:0", Path("r"), 1
    )
    assert argv[argv.index("--basket") + 1] == "pear*3"
    assert "--basket" not in engine_args.server_argv(
        plain, Path("eng"), Files(pki_dir=Path("pki")), "127.0.0.1:0", Path("r"), 1
    )
    # `where` reads the field it offers.
    c = load(write_basket(tmp_path, exclude='[{ basket_fruit = "pear" }]'))
    assert list(c.scenarios) == [PLAIN]


def test_it_is_stored_in_its_columns_paired_and_labelled(basket, tmp_path):
    scenarios = [
        SyntheticScenario(n=30, latency_ms=1.0),
        SyntheticScenario(n=30, latency_ms=2.0, axis_values={"basket": "pear*3"}),
    ]
    path = build_store(tmp_path / "basket.duckdb", scenarios)
    with chainlab.open(path) as st:
        got = st.scenarios.set_index("scenario_id")[["basket_fruit", "basket_count"]]
    base = "x25519mlkem768__ml_root__ml_int__ml_leaf"
    assert got.loc[base].tolist() == ["none", "0"]
    assert got.loc[f"{base}__basket_pear3"].tolist() == ["pear", "3"]
    a = analyze(path)
    [(scenario, twin)] = twins.pairs(a.summary, "basket_fruit", NO_BASKET)
    assert (scenario["basket_count"], twin["basket_count"]) == ("3", "0")
    assert axes.labels()["basket_fruit"] == "basket fruit basket"
    labels = dict(zip(a.summary["scenario_id"], a.summary["label"], strict=True))
    assert labels[f"{base}__basket_pear3"].endswith("basket of 3 pear")
    assert labels[base].endswith("no basket")


def test_what_it_records_is_a_column_and_a_frame_read_when_asked(basket, tmp_path):
    client = {"conn_id": "c1", "seq": 0, "start_unix_ns": 1, "outcome": "ok"}
    [row] = records.sample_rows("run", "sid", [client], [{"conn_id": "c1", "basket_grams": 450}])
    assert row["basket_weight"] == 450
    [row] = records.sample_rows("run", "sid", [client], [])
    assert row["basket_weight"] is None
    scenarios = [
        SyntheticScenario(n=30, latency_ms=1.0),
        SyntheticScenario(n=30, latency_ms=2.0, axis_values={"basket": "pear*3"}),
    ]
    path = build_store(tmp_path / "basket.duckdb", scenarios)
    base = "x25519mlkem768__ml_root__ml_int__ml_leaf"
    con = duckdb.connect(str(path))
    try:
        con.execute(
            "UPDATE samples SET basket_weight = 450 WHERE scenario_id = ?",
            [f"{base}__basket_pear3"],
        )
    finally:
        con.close()
    a = analyze(path)
    assert "baskets" not in a.data.frames._frames_read  # not read before it is asked for
    got = a.data.frame("baskets")
    assert got.set_index("scenario_id")["grams"].to_dict() == {f"{base}__basket_pear3": 450.0}


def test_an_older_store_has_an_empty_frame_until_opened_for_writing(basket, tmp_path):
    path = tmp_path / "v6.duckdb"
    shutil.copy(STORES / "v6-tiny.duckdb", path)
    assert analyze(path).data.frame("baskets").empty
    with Store.open(path, read_only=False):
        pass
    con = duckdb.connect(str(path), read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM samples WHERE basket_weight IS NULL").fetchone()
        total = con.execute("SELECT count(*) FROM samples").fetchone()
    finally:
        con.close()
    assert n == total
    assert analyze(path).data.frame("baskets").empty  # the column, no value in it
