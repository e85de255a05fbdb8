"""Stores a user may hand chainlab by mistake, and exports that cannot be written: one line
each, exit status 2, nothing written beside them (issue #39)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
KEPT = STORES / "v10-instructions.duckdb"


def one_line(out, *needles):
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for n in needles:
        assert n in lines[0], out.stderr


# Cut inside the header, the catalog and the data: each fails at another step of reading.
@pytest.mark.parametrize("size", [200_000, 1_000_000, 3_000_000])
@pytest.mark.bad_input
def test_a_truncated_store_is_damaged_in_one_line(tmp_path, size, main):
    store = tmp_path / "cut.duckdb"
    shutil.copy(KEPT, store)
    with store.open("r+b") as f:
        f.truncate(size)
    one_line(main("report", str(store), "--out", str(tmp_path / "r")), str(store))
    one_line(main("export", str(store)), str(store))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.duckdb"], "nothing written"


@pytest.mark.bad_input
def test_export_refuses_an_out_it_cannot_use_and_writes_nothing(tmp_path, main):
    store = tmp_path / "ok.duckdb"
    shutil.copy(KEPT, store)
    taken = tmp_path / "taken"
    taken.write_text("x")
    one_line(main("export", str(store), "--out", str(taken)), "not a directory")
    one_line(main("export", str(store), "--out", "/proc/x/y"), "cannot make the directory")
    one_line(main("export", str(tmp_path / "none.duckdb")), "no store at")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.duckdb", "taken"]


@pytest.mark.bad_input
def test_a_directory_is_not_a_store(tmp_path, main):
    d = tmp_path / "results"
    d.mkdir()
    one_line(main("report", str(d)), "is a directory, not a store")
    one_line(main("export", str(d)), "is a directory, not a store")
    toml = Path(__file__).resolve().parents[2] / "campaigns" / "quick.toml"
    for extra in ([], ["--resume"]):
        one_line(main("run", str(toml), "--store", str(d), *extra), "is a directory")
    assert list(d.iterdir()) == []


# A table of the store's own schema version dropped after it was written (never read as an
# empty table of a later version), one the first stores had and one added since.
@pytest.mark.parametrize("table", ["samples", "certificates", "load_steps"])
@pytest.mark.bad_input
def test_a_store_missing_a_table_is_damaged_in_one_line(tmp_path, table, main):
    import duckdb

    store = tmp_path / "dropped.duckdb"
    shutil.copy(KEPT, store)
    with duckdb.connect(str(store)) as con:
        con.execute(f"DROP TABLE {table} CASCADE")
    want = f"is damaged: schema version 10 has table(s) '{table}'"
    one_line(main("report", str(store), "--out", str(tmp_path / "r")), want)
    one_line(main("export", str(store)), want)
    toml = Path(__file__).resolve().parents[2] / "campaigns" / "quick.toml"
    one_line(main("run", str(toml), "--store", str(store), "--resume"), want)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dropped.duckdb"], "nothing written"


@pytest.mark.bad_input
def test_a_duckdb_file_of_another_program_is_not_a_store(tmp_path, main):
    import duckdb

    foreign = tmp_path / "other.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE meta (k INTEGER)")
        con.execute("CREATE TABLE prices (item VARCHAR, price DOUBLE)")
    plain = tmp_path / "notes.duckdb"
    plain.write_text("not a database\n")
    for f in (foreign, plain):
        one_line(main("report", str(f), "--out", str(tmp_path / "r")), "not a chainlab store")
        one_line(main("export", str(f)), "not a chainlab store")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.duckdb", "other.duckdb"]


@pytest.mark.bad_input
def test_a_store_another_process_writes_is_in_use(tmp_path, main):
    store = tmp_path / "busy.duckdb"
    shutil.copy(KEPT, store)
    # Another process holding the store open for writing, as a running `chainlab run` does.
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); "
         "sys.stdin.read()", str(store)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "open"
        one_line(main("report", str(store), "--out", str(tmp_path / "r")), "in use by another")
        one_line(main("export", str(store)), "in use by another process")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy.duckdb"], "nothing written"


@pytest.mark.bad_input
def test_a_store_of_a_newer_chainlab_is_refused_and_nothing_is_written(tmp_path, main):
    import duckdb

    store = tmp_path / "newer.duckdb"
    shutil.copy(KEPT, store)
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    one_line(main("export", str(store)), "written by a newer chainlab")
    one_line(main("report", str(store), "--out", str(tmp_path / "r")), "newer chainlab")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["newer.duckdb"], "nothing written"


def test_run_says_it_makes_a_stores_missing_folders(main):
    out = main("run", "--help")
    assert "missing parent directories are created" in " ".join(out.stdout.split())
