"""The store reads a frame the first time the analysis asks for it (chainlab.store.frames):
what every report reads at once, the rest late, each late read on its own read-only
connection, so nothing holds the file between reads."""

import shutil
from pathlib import Path

import pytest

from chainlab.analysis.load import load_store
from chainlab.store import Store

KEPT = Path(__file__).parents[1] / "data" / "stores" / "v14-quick.duckdb"
LATE = ("primitives", "host_reference", "network_samples", "rollout_attempts", "load_latencies")


@pytest.fixture
def store(tmp_path):
    copy = tmp_path / "quick.duckdb"
    shutil.copy(KEPT, copy)
    return copy


def test_the_late_frames_are_read_only_when_asked_and_then_kept(store, monkeypatch):
    data = load_store(store)
    frames = data.frames
    assert frames is not None
    assert not set(LATE) & set(vars(frames)), "read before anything asked"
    assert frames._tables_read == {}
    reads = []
    read = frames.read
    monkeypatch.setattr(frames, "read", lambda q: reads.append(q) or read(q))
    # The store holds primitives and certificates: each read once, on first use.
    assert len(data.primitives) > 0 and len(data.primitives) == len(data.primitives)
    assert len(data.certificates) == 14 and len(data.certificates) == 14
    assert len(reads) == 2
    # A frame the store cannot hold (no emulated scenario) needs no read at all.
    assert data.network_samples.empty and len(reads) == 2


def test_nothing_holds_the_store_between_late_reads(store):
    """Between two reads another process could write the store: a late read opens it
    read-only for its own query and closes it."""
    data = load_store(store)
    with Store.open(store) as st:  # opened for writing: no read-only connection is open
        assert len(st.scenarios) > 0
    assert len(data.host_reference) == 12


def test_a_late_read_of_a_store_gone_since_is_one_line(store):
    from chainlab.errors import ChainlabError

    data = load_store(store)
    store.unlink()
    store.mkdir()
    with pytest.raises(ChainlabError, match="quick.duckdb"):
        _ = data.primitives
