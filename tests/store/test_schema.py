"""The store contract: schema.sql declares the columns once; every kept store (v1 ... current)
upgraded has exactly the tables, columns and types of a freshly created store; rows are
inserted by column name and a key a table lacks is refused, never dropped."""

import shutil
from pathlib import Path

import pytest

from chainlab.errors import ChainlabError
from chainlab.store import SCHEMA_VERSION, TABLES, Store, schema

STORES = sorted((Path(__file__).parents[1] / "data" / "stores").glob("v*-*.duckdb"))


def catalog(st: Store) -> dict[str, dict[str, tuple[str, str]]]:
    """table -> column -> (type, nullable), as the store's catalog says."""
    rows = st.con.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
    ).fetchall()
    out: dict = {}
    for table, column, dtype, nullable in rows:
        out.setdefault(table, {})[column] = (dtype, nullable)
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    with Store.create(tmp_path_factory.mktemp("fresh") / "fresh.duckdb") as st:
        return catalog(st)


def test_a_fresh_store_has_every_table(fresh):
    assert set(TABLES) | {"meta"} == set(fresh)


@pytest.mark.parametrize("kept", STORES, ids=lambda p: p.name)
def test_every_kept_store_upgrades_to_exactly_a_fresh_store(kept, tmp_path, fresh):
    path = tmp_path / kept.name
    shutil.copy(kept, path)
    with Store.open(path, read_only=False) as st:
        got = catalog(st)
        version = st.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    assert set(got) == set(fresh)
    for table, columns in fresh.items():
        assert got[table] == columns, f"{kept.name}: table {table}"


def test_rows_are_inserted_by_name_and_unknown_keys_refused(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.con.begin()
        # Keys in any order; a column no row names keeps its default (NULL).
        st.insert(
            "observed_chain",
            [{"key_alg": "k", "sig_alg": "s", "subject": "CN=x", "der_bytes": 7,
              "position": 0, "scenario_id": "a", "run_id": "r"}],
        )  # fmt: skip
        with pytest.raises(ChainlabError) as e:
            st.insert("observed_chain", [{"run_id": "r", "scenario_id": "a", "positon": 1}])
        st.con.rollback()
    msg = str(e.value)
    assert "table observed_chain has no column 'positon'" in msg and "position" in msg


def test_json_columns_take_dicts_and_types_come_from_the_catalog(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.con.begin()
        st.insert(
            "network_profiles",
            [{"run_id": "r", "profile": "p", "configured": {"delay_ms": 25},
              "measured": None, "flagged": False}],
        )  # fmt: skip
        st.con.commit()
        sql = "SELECT configured, measured, flagged FROM network_profiles"
        row = st.con.execute(sql).fetchone()
    assert row == ('{"delay_ms": 25}', None, False)


def test_arrow_types_cover_every_declared_type(fresh):
    """Every type schema.sql uses is handed to DuckDB as a declared Arrow type, so no
    column's type is guessed from its values."""
    used = {dtype for columns in fresh.values() for dtype, _ in columns.values()}
    assert {t for t in used if schema.arrow_field("c", t) is None} == set()


def test_the_schema_files_header_names_the_version_the_code_writes():
    head = schema.SCHEMA_SQL.read_text().splitlines()[0]
    assert head.startswith(f"-- chainlab result store, schema version {SCHEMA_VERSION} (")


def test_upgrades_add_columns_as_schema_sql_declares_them():
    assert schema.column_sql("instruction_samples", "random") == (
        "random VARCHAR NOT NULL DEFAULT 'system'"
    )
    assert schema.add_columns("instruction_samples", "random", if_missing=True) == (
        "ALTER TABLE instruction_samples ADD COLUMN IF NOT EXISTS random VARCHAR DEFAULT 'system'",
        "ALTER TABLE instruction_samples ALTER COLUMN random SET NOT NULL",
    )
    with pytest.raises(KeyError, match="no column samples.nope"):
        schema.column_sql("samples", "nope")
    # No upgrade step spells a column's type itself: each ADD COLUMN is schema.sql's.
    for version, steps in schema.UPGRADES.items():
        for sql in steps:
            if " ADD COLUMN " in sql:
                table = sql.split()[2]
                added = sql.split(" ADD COLUMN ", 1)[1].removeprefix("IF NOT EXISTS ")
                declared = schema.column_sql(table, added.split()[0]).replace(" NOT NULL", "")
                assert added == declared, f"version {version}: {sql}"


def test_the_lever_columns_are_declared_by_their_axes_alone():
    from chainlab import axes

    text = schema.table_sql("scenarios")
    for axis in axes.levers():
        for column in axis.column_names:
            assert column not in text, f"schema.sql names the axis column {column}"
