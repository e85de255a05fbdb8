"""`chainlab bench primitives` writes its store beside the primitives cache by default, never
into the working directory (issue #39)."""

from pathlib import Path

from chainlab import engine
from chainlab.bench import primitives as bench


def test_the_default_store_is_beside_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    store = bench.default_store(engine.info())
    assert store.parent == tmp_path / "cache"
    assert store.name.startswith("bench-primitives-") and store.suffix == ".duckdb"
    assert store.parent != Path.cwd()
