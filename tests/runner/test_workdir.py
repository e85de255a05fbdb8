"""Work directories: held while their process lives, removed by a later one once it is gone
(chainlab.runner.workdir)."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from chainlab.runner import workdir

# A process that makes a run's work directory, writes into it, says where, and waits.
HOLDER = """
import sys, time
from chainlab.runner import workdir
with workdir.held(workdir.RUN_PREFIX) as d:
    (d / "records.jsonl").write_bytes(b"x" * 5000)
    print(d, flush=True)
    time.sleep(60)
"""


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    """The temporary directory, here and in the processes the test starts."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def holder() -> tuple[subprocess.Popen, Path]:
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    assert line, "the holder made no directory"
    return p, Path(line)


def test_a_live_processes_directory_is_kept_and_a_killed_ones_removed(tmp_root):
    p, d = holder()
    try:
        assert d.parent == tmp_root and (d / workdir.LOCK_NAME).exists()
        assert workdir.remove_orphans(workdir.RUN_PREFIX) == workdir.Removed()
        assert d.exists()
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert d.exists()  # a SIGKILL skips the removal
    removed = workdir.remove_orphans(workdir.RUN_PREFIX)
    assert not d.exists()
    assert removed.count == 1 and removed.bytes >= 5000
    assert removed.note() == (
        f"removed 1 work directory of killed runs or workers (0.0 MB) from {tmp_root}"
    )


def test_what_is_not_a_held_directory_of_the_prefix_is_left_alone(tmp_root):
    older = tmp_root / f"{workdir.RUN_PREFIX}older"  # no lock file: a chainlab before this
    older.mkdir()
    worker = tmp_root / f"{workdir.WORKER_PREFIX}x"
    worker.mkdir()
    (worker / workdir.LOCK_NAME).touch()  # an orphaned worker's: another prefix
    (tmp_root / f"{workdir.RUN_PREFIX}file").write_text("not a directory")
    assert workdir.remove_orphans(workdir.RUN_PREFIX) == workdir.Removed()
    assert older.exists() and worker.exists()
    assert workdir.remove_orphans(workdir.WORKER_PREFIX).count == 1
    assert not worker.exists()


def test_a_held_directory_is_locked_while_held_and_gone_after(tmp_root):
    with workdir.held(workdir.WORKER_PREFIX) as d:
        assert d.is_dir() and (d / workdir.LOCK_NAME).exists()
        # Another process (or thread, with its own open file) cannot take the lock.
        assert workdir.remove_orphans(workdir.WORKER_PREFIX) == workdir.Removed()
        assert sorted(p.name for p in d.iterdir()) == [workdir.LOCK_NAME]
    assert not d.exists()
    assert workdir.Removed().note() is None
