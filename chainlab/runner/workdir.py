"""Work directories of runs and cluster workers (records, hierarchies' copies, engine logs):
made in the system's temporary directory, held while their process lives, removed by a later
one when it is gone.

`TemporaryDirectory` removes its directory when the run ends, Ctrl-C and SIGTERM included;
a SIGKILL, the OOM killer or a lost machine skip that, and the directory stays (3 MB for a
two-scenario run, hundreds for a long campaign's records; the test suite's four SIGKILLed
runs left 60 of them in /tmp over a day of CI, 2026-12-01). So each directory holds a lock
file that its process keeps locked (`flock`, released by the kernel however the process
ends), and every run and worker first removes the directories of its kind whose lock it can
take. A directory without a lock file (being made, or made by a chainlab before this one)
is left alone, as is one whose lock is held: a live run's, on this machine or sharing its
/tmp.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

RUN_PREFIX = "chainlab-run-"
WORKER_PREFIX = "chainlab-worker-"
LOCK_NAME = ".owner.lock"


@dataclass(frozen=True)
class Removed:
    """The work directories of dead processes that a new one removed."""

    count: int = 0
    bytes: int = 0

    def note(self) -> str | None:
        """One line for the run's log, None when nothing was removed."""
        if not self.count:
            return None
        what = "directory" if self.count == 1 else "directories"
        return (
            f"removed {self.count} work {what} of killed runs or workers "
            f"({self.bytes / 1e6:.1f} MB) from {tempfile.gettempdir()}"
        )


@contextlib.contextmanager
def held(prefix: str) -> Iterator[Path]:
    """A new work directory named `prefix`..., locked until the block ends and removed
    still locked, so no other process's `remove_orphans` walks it at the same time (a
    process removes the orphans of its kind first)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        fd = _locked_file(d)
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise
    try:
        yield d
    finally:
        try:
            shutil.rmtree(d, ignore_errors=True)
        finally:
            os.close(fd)


def remove_orphans(prefix: str, root: Path | None = None) -> Removed:
    """Removes every directory `prefix`... in `root` (the temporary directory) whose lock
    file no live process holds."""
    root = Path(tempfile.gettempdir()) if root is None else root
    count = size = 0
    try:
        candidates = [p for p in root.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return Removed()
    for d in candidates:
        if d.is_symlink() or not d.is_dir():
            continue
        try:
            fd = os.open(d / LOCK_NAME, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # no lock file: being made, or not ours to judge
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held: its process lives
            bytes_ = _size(d)
            shutil.rmtree(d, ignore_errors=True)
            if not d.exists():
                count, size = count + 1, size + bytes_
        finally:
            os.close(fd)
    return Removed(count, size)


def _locked_file(d: Path) -> int:
    """The directory's lock file, locked, as an fd this process keeps open. Locked under
    another name and renamed into place, so no other process finds it unlocked."""
    staging = d / f"{LOCK_NAME}.{os.getpid()}"
    fd = os.open(staging, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(staging, d / LOCK_NAME)
    return fd


def _size(d: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(d):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
