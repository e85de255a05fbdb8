"""Stores a user may hand chainlab by mistake, and exports that cannot be written: one line
each, exit status 2, nothing written beside them (issue #39)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
KEPT = STORES / "v10-instructions.duckdb"


def chainlab(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "chainlab", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


def one_line(out, *needles):
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for n in needles:
        assert n in lines[0], out.stderr


# Cut inside the header, the catalog and the data: each fails at another step of reading.
@pytest.mark.parametrize("size", [200_000, 1_000_000, 3_000_000])
def test_a_truncated_store_is_damaged_in_one_line(tmp_path, size):
    store = tmp_path / "cut.duckdb"
    shutil.copy(KEPT, store)
    with store.open("r+b") as f:
        f.truncate(size)
    one_line(chainlab("report", str(store), "--out", str(tmp_path / "r")), str(store))
    one_line(chainlab("export", str(store)), str(store))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.duckdb"], "nothing written"


def test_export_refuses_an_out_it_cannot_use_and_writes_nothing(tmp_path):
    store = tmp_path / "ok.duckdb"
    shutil.copy(KEPT, store)
    taken = tmp_path / "taken"
    taken.write_text("x")
    one_line(chainlab("export", str(store), "--out", str(taken)), "not a directory")
    one_line(chainlab("export", str(store), "--out", "/proc/x/y"), "cannot make the directory")
    one_line(chainlab("export", str(tmp_path / "none.duckdb")), "no store at")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.duckdb", "taken"]


def test_a_directory_is_not_a_store(tmp_path):
    d = tmp_path / "results"
    d.mkdir()
    one_line(chainlab("report", str(d)), "is a directory, not a store")
    one_line(chainlab("export", str(d)), "is a directory, not a store")
    toml = Path(__file__).resolve().parents[2] / "campaigns" / "quick.toml"
    for extra in ([], ["--resume"]):
        one_line(chainlab("run", str(toml), "--store", str(d), *extra), "is a directory")
    assert list(d.iterdir()) == []
