"""Engine processes die with chainlab: an engine started directly sets its parent-death
signal itself, told chainlab's pid (chainlab.processes.spawn, engine.PARENT_PID_VAR)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainlab import engine
from chainlab.runner import pki

pytestmark = pytest.mark.engine

# A chainlab stand-in: starts a server through processes.spawn, says its pid, waits.
PARENT = """
import subprocess, sys, time
from chainlab import processes
argv = sys.argv[1:]
proc = processes.spawn(argv, subprocess.PIPE, subprocess.DEVNULL)
proc.stdout.readline()  # its ready line
print(proc.pid, flush=True)
time.sleep(60)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_an_engine_started_directly_dies_with_the_process_that_started_it(
    tmp_path, engine_bin, pki_cache
):
    served = pki.ensure(engine_bin, ("ML-DSA-44", "ML-DSA-44"), 1)
    argv = [
        str(engine_bin), "serve", "--pki", str(served), "--listen", "127.0.0.1:0",
        "--records", str(tmp_path / "server.jsonl"),
    ]  # fmt: skip
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, *argv], stdout=subprocess.PIPE, text=True
    )
    try:
        pid = int(parent.stdout.readline())
        # Started as itself (no setpriv before it), told whose child it is.
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert f"{engine.PARENT_PID_VAR}={parent.pid}".encode() in environ
        assert Path(f"/proc/{pid}/exe").resolve() == engine_bin.resolve()
        assert alive(pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the engine outlived the process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if "pid" in locals() and alive(pid):
            os.kill(pid, signal.SIGKILL)


def started_with(engine_bin: Path, var: str, value: str) -> subprocess.CompletedProcess:
    """The engine's `info` run with `var` set to `value`: what it says as it starts."""
    return subprocess.run(
        [str(engine_bin), "info"],
        env={**os.environ, var: value},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_without_its_parent_an_engine_ends_at_once_saying_why(engine_bin):
    out = started_with(engine_bin, engine.PARENT_PID_VAR, "1")
    assert out.returncode == 2
    assert out.stderr.startswith("chainlab-engine: error: the chainlab process that started")
    assert "(pid 1) is gone" in out.stderr and out.stdout == ""


def test_an_engine_that_cannot_enter_its_namespace_ends_saying_why(engine_bin):
    # (Entering one: tests/test_netns_entry.py.)
    out = started_with(engine_bin, engine.NETNS_VAR, "/run/netns/chainlab-no-such-namespace")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(
        'chainlab-engine: error: CHAINLAB_NETNS="/run/netns/chainlab-no-such-namespace": '
        "cannot open it"
    )
