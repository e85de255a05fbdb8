"""Engine processes: started in their own process group, never outliving chainlab.

Each engine process gets its own session (so a terminal's Ctrl-C reaches chainlab only, which
then stops the engines in order) and a parent-death signal (so even a SIGKILL of chainlab
takes them down: the kernel sends SIGKILL to the child when its parent dies).
`stop_group` is called in `finally` blocks; a group that ignores SIGTERM is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import selectors
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from chainlab import engine

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_libc = ctypes.CDLL(None, use_errno=True)


def _child_setup() -> None:  # runs in the child between fork and exec
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def pipe(stream: IO[Any] | None) -> IO[Any]:
    """A child's stdout (or stdin) that `spawn` was asked to pipe."""
    if stream is None:
        raise ValueError("the process was started without that pipe")
    return stream


# util-linux's `setpriv --pdeathsig KILL` sets the parent-death signal and execs the command
# (the same process): Python starts it with vfork, 1.5 ms a process, where a `preexec_fn`
# makes it fork the whole interpreter, 7 ms a process with chainlab's libraries loaded
# (2026-11-30; a scenario starts a server and a client each batch). An engine started
# directly sets the signal itself, told chainlab's pid (`engine.PARENT_PID_VAR`), and spares
# setpriv's exec: 0.70 ms a process where setpriv's took 1.48 (`/bin/true`, 2026-11-30).
SETPRIV = shutil.which("setpriv")


def spawn(argv: list[str], stdout, stderr, cwd: Path | None = None) -> subprocess.Popen:
    """Starts argv in a new session, killed if chainlab dies. An engine is started itself,
    told chainlab's pid; one wrapped in `ip netns exec` that enters the namespace itself
    (`engine.NETNS_ENGINE_NAMES`) is started itself too, told the namespace."""
    common = {"stdin": subprocess.DEVNULL, "stdout": stdout, "stderr": stderr, "cwd": cwd}
    argv, netns = unwrap_namespace(argv)
    if Path(argv[0]).name in engine.ENGINE_NAMES:
        env = {**os.environ, engine.PARENT_PID_VAR: str(os.getpid())}
        if netns is not None:
            env[engine.NETNS_VAR] = netns
        return subprocess.Popen(argv, **common, env=env, start_new_session=True)
    # A command that cannot be found fails here, as Popen says it, not inside setpriv.
    if SETPRIV is not None and shutil.which(argv[0]) is not None:
        argv = [SETPRIV, "--pdeathsig", "KILL", "--", *argv]
        return subprocess.Popen(argv, **common, start_new_session=True)
    return subprocess.Popen(
        argv,
        **common,
        start_new_session=True,
        preexec_fn=_child_setup,  # safe: chainlab spawns from its only thread
    )


# How chainlab.network.link runs a command in a namespace, and where `ip netns add` keeps the
# namespaces' files (iproute2's NETNS_RUN_DIR).
NETNS_EXEC = ("ip", "netns", "exec")
NETNS_RUN_DIR = Path("/run/netns")


def unwrap_namespace(argv: list[str]) -> tuple[list[str], str | None]:
    """`ip netns exec NAME ENGINE ...` of an engine that enters a namespace itself: the
    engine's own command and the namespace's file (NETNS_RUN_DIR/NAME), which spares `ip`'s
    exec, its mount namespace and setpriv (3.6 ms of each start, `/bin/true` wrapped,
    2026-12-01); anything else as it is, with None."""
    if (
        tuple(argv[:3]) == NETNS_EXEC
        and len(argv) > 4
        and Path(argv[4]).name in engine.NETNS_ENGINE_NAMES
    ):
        return list(argv[4:]), str(NETNS_RUN_DIR / argv[3])
    return argv, None


def wait_exit(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Waits up to `timeout_s` for the process to exit, waking the moment it does (pidfd),
    not at the next poll tick; True when it has exited."""
    if proc.poll() is not None:
        return True
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # pre-5.3 kernel: Popen's own polling wait
        try:
            proc.wait(timeout=timeout_s)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        select.select([fd], [], [], timeout_s)
    finally:
        os.close(fd)
    return proc.poll() is not None


def stop(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM one process (not its group), SIGKILL it after `grace_s`; drains its pipes while
    waiting so a child blocked on a full pipe still exits."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.communicate(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def stop_group(proc: subprocess.Popen, grace_s: float = 5.0) -> str:
    """SIGTERM the process group, SIGKILL it after `grace_s`; says how the process ended."""
    if proc.poll() is not None:
        return describe_exit(proc.returncode)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    # Woken the moment it exits (Popen.wait with a timeout polls, up to 50 ms late: every
    # scenario's server stops this way).
    if not wait_exit(proc, grace_s):
        _killpg(proc.pid)
        proc.wait()
        return f"killed: did not stop within {grace_s:g} s of SIGTERM"
    _killpg(proc.pid)  # anything the process left in its group
    rc = proc.returncode
    return "sigterm" if rc in (0, -signal.SIGTERM) else describe_exit(rc)


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"crashed: {name}"
    return "exited: 0" if rc == 0 else f"crashed: exit {rc}"


def tail(path: Path, lines: int = 1) -> str:
    """The last non-empty lines of a text file ('' when missing), for error messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    got = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(got[-lines:])


class ServerStartError(Exception):
    pass


def wait_ready(proc: subprocess.Popen, timeout_s: float, stderr_path: Path) -> dict:
    """Reads the server's ready line (JSON, `"event": "ready"`) from its stdout.

    Waits on the pipe (select), never a fixed sleep; raises ServerStartError with the
    server's last stderr line when it exits or stays silent past `timeout_s`.
    """
    deadline = time.monotonic() + timeout_s
    sel = selectors.DefaultSelector()
    sel.register(pipe(proc.stdout), selectors.EVENT_READ)
    buf = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerStartError(
                    f"server printed no ready line within {timeout_s:g} s"
                    + (f" ({tail(stderr_path)})" if tail(stderr_path) else "")
                )
            if not sel.select(timeout=min(left, 0.5)):
                if proc.poll() is not None:
                    raise ServerStartError(
                        f"server {describe_exit(proc.returncode)} before ready: "
                        f"{tail(stderr_path) or 'no message'}"
                    )
                continue
            chunk = os.read(pipe(proc.stdout).fileno(), 4096)
            if not chunk:
                proc.wait(timeout=5)
                raise ServerStartError(
                    f"server {describe_exit(proc.returncode)} before ready: "
                    f"{tail(stderr_path) or 'no message'}"
                )
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("event") == "ready":
                    return msg
    finally:
        sel.close()
