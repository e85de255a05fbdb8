"""Servers kept from one visit to the next: where a visit's server would be started with the
same command as one that served an earlier visit (another visit of the scenario in an
interleaved run, or another scenario with the same server, as interop.toml's five client
stacks against each server), that server serves it, instead of a server started and stopped
for each visit (3.7 ms a start and 1.6 ms a stop: 1.3 s of interop.toml's 5.7 s of
handshakes, 2026-12-01).

A visit on a kept server begins at the records file's current line and the process's CPU
then; it ends with a sync (SIGUSR1 to the engine, engine/crates/chainlab-record/src/serve/
shared.rs: once every connection it accepted is over, recorded and none waits, it flushes its
records and prints a `synced` line), after which its records are the lines written since it
began and its CPU the process's from then to the sync (read before it: the sync's own work is
no visit's). A server that does not answer within
SYNC_TIMEOUT_S, or has exited, is stopped and read as a server of its own visit is. What a
kept server's visit lacks: its serving threads' own accounts (`server_thread` records, written
as a server stops), so `server_threads_cpu_ns` and `server_wait_cpu_ns` are unknown for its
scenario; its `server_exit` is 'kept'.

Only a server whose records say everything about each visit is kept: on loopback, over TCP
(a QUIC server takes no sync), on a stack whose server answers a sync (the Rust engines'
scaffold: `Capabilities.serves_visits`, not Go's), started by this machine, without load
steps, instruction counts or seeded randomness (its streams follow the server's own
connection count): `Scenario.keeps_server` and `key`. At most MAX_KEPT servers and
KEPT_MEMORY_SHARE of the memory available as the run starts are kept: past either, the one
used longest ago is stopped.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import orjson

from chainlab import processes

# How long a visit waits for a kept server's `synced` line: it answers within milliseconds
# of its last connection's close (a loopback client has exited by then).
SYNC_TIMEOUT_S = 5.0
# Kept at once, at most: interop.toml's 35 servers of 7 hierarchies are used five at a time;
# stacks.toml's 55 scenarios each visit their own server once a round.
MAX_KEPT = 64
# ... and their resident memory, at most this share of what was available as the run started
# (an OpenSSL engine's server: 8-12 MB).
KEPT_MEMORY_SHARE = 0.125


@dataclass
class KeptServer:
    """A running server kept between visits, and how far its records file was read."""

    proc: subprocess.Popen
    records: Path
    stderr: Path
    ready: dict
    engine_pid: int | None
    lines: int = 0


class ServerPool:
    """The kept servers of a run, by their command (`take`, `keep`, `close`)."""

    def __init__(self, workdir: Path, budget_bytes: int | None = None):
        self.dir = workdir / "servers"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._kept: OrderedDict[tuple[str, ...], KeptServer] = OrderedDict()
        self._started = 0
        self.budget_bytes = (
            _available_bytes() * KEPT_MEMORY_SHARE if budget_bytes is None else budget_bytes
        )
        self.reused = 0

    def files(self) -> tuple[Path, Path]:
        """The records and stderr files of a new server."""
        self._started += 1
        return (
            self.dir / f"server-{self._started}.jsonl",
            self.dir / f"server-{self._started}.stderr",
        )

    def take(self, key: tuple[str, ...]) -> KeptServer | None:
        """The kept server of this command, now the caller's (None: none, or it has ended,
        in which case it is stopped and forgotten)."""
        server = self._kept.pop(key, None)
        if server is None:
            return None
        if server.proc.poll() is not None:
            _stop(server)
            return None
        self.reused += 1
        return server

    def keep(self, key: tuple[str, ...], server: KeptServer) -> None:
        """Keeps a server after its visit, stopping those used longest ago past the limits."""
        self._kept[key] = server
        self._kept.move_to_end(key)
        while len(self._kept) > MAX_KEPT or (
            len(self._kept) > 1 and self._resident() > self.budget_bytes
        ):
            _, oldest = self._kept.popitem(last=False)
            _stop(oldest)

    def close(self) -> None:
        """Stops every kept server."""
        while self._kept:
            _, server = self._kept.popitem(last=False)
            _stop(server)

    def _resident(self) -> int:
        return sum(_rss_bytes(s.proc.pid) for s in self._kept.values())


def key(ctx, plan, linked: bool, argv: list[str]) -> tuple[str, ...] | None:
    """The command that names a visit's kept server (`argv`, its records path a placeholder
    every visit shares), None where its server is not kept (the module's doc): `ctx` the
    run's (chainlab.runner.context.RunContext), `plan` the scenario
    (`Scenario.keeps_server`), `linked` whether it runs over an emulated link."""
    if (
        ctx.servers is None
        or not plan.keeps_server
        or linked
        or ctx.listen_host is not None
        or ctx.random_seed is not None
    ):
        return None
    return tuple(argv)


def sync(server: KeptServer, timeout_s: float = SYNC_TIMEOUT_S) -> bool:
    """Asks the server to sync and waits for its `synced` line; False when it did not
    answer in time or has exited (the caller stops it)."""
    if server.proc.poll() is not None:
        return False
    try:
        os.kill(server.proc.pid, signal.SIGUSR1)
    except ProcessLookupError:
        return False
    fd = processes.pipe(server.proc.stdout).fileno()
    deadline = time.monotonic() + timeout_s
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not sel.select(left):
                return False
            chunk = os.read(fd, 4096)  # the pipe itself: nothing waits in a buffer
            if not chunk:
                return False  # the server exited
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
                    if orjson.loads(line).get("event") == "synced":
                        return True
    return False


def _stop(server: KeptServer) -> None:
    processes.stop_group(server.proc)
    if server.proc.stdout is not None:
        server.proc.stdout.close()


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _available_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 1 << 30
