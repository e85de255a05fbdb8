"""What a run reads of the primitives caches, read once: each cache's summary kept beside it
(`<cache>.summary.json`) while the file is unchanged, and its index per version of the file."""

from __future__ import annotations

import json
import math
from datetime import datetime

import pytest

from chainlab.runner import primitives_cache
from chainlab.store import Store


def row(seq: int, cpu_ns: int, subject: str = "ML-DSA-44") -> dict:
    return {
        "run_id": "r", "measured_run": "r", "measured_at": datetime(2026, 11, 30, 12, seq),
        "implementation": "openssl-3.5", "subject": subject, "op": "sign",
        "message": "message-sha256", "message_bytes": 32, "seq": seq, "wall_ns": cpu_ns + 5,
        "cpu_ns": cpu_ns, "host_cpu_ns": 40_000_000,
    }  # fmt: skip


@pytest.fixture
def cache(tmp_path):
    path = tmp_path / "cache.duckdb"
    with Store.create(path) as st:
        st.write_primitives([row(k, 1_000_000 + 1000 * k) for k in range(4)])
    return path


def summary(path):
    st = path.stat()
    return primitives_cache._summary.__wrapped__(path, st.st_mtime_ns, st.st_size)


def same(a: tuple, b: tuple) -> bool:
    def eq(x, y):  # DuckDB's parallel sums may differ in the last bits from one query to the next
        if isinstance(x, float) and isinstance(y, float):
            return math.isclose(x, y, rel_tol=1e-12) or (math.isnan(x) and math.isnan(y))
        return x == y

    return len(a) == len(b) and all(x.keys() == y.keys() and all(eq(x[k], y[k]) for k in x)
                                    for x, y in zip(a, b, strict=True))  # fmt: skip


def test_a_caches_summary_is_kept_beside_it_and_read_back_as_made(cache, monkeypatch):
    first = summary(cache)
    assert first and first[0]["n"] == 4
    side = cache.with_name(cache.name + ".summary.json")
    assert side.is_file()

    def refused(*a, **kw):
        raise AssertionError("the cache was opened although its summary is kept")

    monkeypatch.setattr(Store, "open", refused)
    again = summary(cache)
    assert same(first, again)  # timestamps, NaN variances and all
    assert type(again[0]["first_measured"]) is type(first[0]["first_measured"])


def test_a_changed_cache_or_a_broken_sidecar_is_summarized_anew(cache):
    summary(cache)
    side = cache.with_name(cache.name + ".summary.json")
    with Store.open(cache, read_only=False) as st:
        st.write_primitives([row(k, 2_000_000, "ML-DSA-65") for k in range(3)])
    got = summary(cache)
    assert {r["subject"] for r in got} == {"ML-DSA-44", "ML-DSA-65"}
    side.write_text("{not json")
    assert same(summary(cache), got)
    made = json.loads(side.read_text())["made_from"]
    made["query"] = "0" * 16  # the summary's query changed since
    side.write_text(json.dumps({"made_from": made, "rows": []}))
    assert same(summary(cache), got)


def test_a_cache_that_cannot_take_its_sidecar_still_gives_its_summary(cache):
    side = cache.with_name(cache.name + ".summary.json")
    side.mkdir()  # where the sidecar would go: the write fails, nothing is left behind
    assert summary(cache)[0]["n"] == 4
    assert sorted(p.name for p in cache.parent.iterdir()) == [cache.name, side.name]


def test_a_caches_index_is_made_once_per_version_of_the_file(cache, monkeypatch):
    made = []
    real = primitives_cache.cache_index
    monkeypatch.setattr(primitives_cache, "cache_index", lambda rows: made.append(1) or real(rows))
    primitives_cache._index.cache_clear()
    a = primitives_cache.cached_index(cache)
    b = primitives_cache.cached_index(cache)
    assert a is b and len(made) == 1
    key = ("openssl-3.5", "ML-DSA-44", "sign", "message-sha256")
    assert len(a[key]) == 4
    with Store.open(cache, read_only=False) as st:
        st.write_primitives([row(9, 1_000_000)])
    assert len(primitives_cache.cached_index(cache)[key]) == 5
    assert len(made) == 2
    assert primitives_cache.cached_index(cache.with_name("none.duckdb")) == {}


def test_a_run_reads_only_the_rows_of_its_own_keys(cache):
    """cached_index(path, keys): the rows of those timing keys, as the whole cache's index
    holds them (a message-less operation's too), and nothing else."""
    with Store.open(cache, read_only=False) as st:
        st.write_primitives(
            [row(k, 2_000_000, "ML-DSA-65") for k in range(3)]
            + [{**row(k, 50_000, "X25519"), "op": "derive", "message": None} for k in range(2)]
            # Another stack's rows of the same operation: not read.
            + [{**row(k, 900_000), "implementation": "rustls"} for k in range(2)]
            # A row of a store before schema 13, which names no implementation: read with
            # its operation's, and indexed under the engine that measured it (OpenSSL 3.5).
            + [{**row(9, 50_000, "X25519"), "op": "derive", "message": None,
                "implementation": None}]
        )  # fmt: skip
    mine = [
        ("openssl-3.5", "ML-DSA-44", "sign", "message-sha256"),
        ("openssl-3.5", "X25519", "derive", None),
    ]
    whole = primitives_cache.cache_index(primitives_cache.cached_rows(cache))
    got = primitives_cache.cached_index(cache, mine)
    assert set(got) == set(mine)
    for key in mine:
        assert got[key] == whole[key] and got[key]
    assert len(got[mine[1]]) == 3 and ("rustls", "ML-DSA-44", "sign", "message-sha256") in whole
    assert {r["implementation"] for r in primitives_cache.cached_rows(cache, frozenset(mine))} == {
        "openssl-3.5",
        None,
    }
    with Store.open(cache) as st:
        assert st.primitive_records([]) == []
