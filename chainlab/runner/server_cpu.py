"""The server process's CPU while it served a scenario, and how much of it its records
account for (docs/methods/capacity.md#server-cpu-accounted): per visit, the process's CPU from
its ready line to the runner's stop (its threads' run time, /proc/<pid>/task/*/schedstat:
the clock the engines' own CPU fields read), the connections' `conn_cpu_ns` summed over
every record the server wrote (warm-ups, samples, load steps), and its serving threads'
accounts (`server_thread` records: their CPU, of it waiting for connections). What the
connections do not account for is a figure of its own per scenario run, never lost.

Only a server this machine started and can see: the ready line's pid must be a process
here running the engine binary the runner started (not a target chainlab did not start,
not a process of another PID namespace); otherwise the process's CPU is unknown (None).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def engine_pid(ready: dict, binary: str, proc: Path = PROC) -> int | None:
    """The ready line's pid when it is a process here running `binary`, else None."""
    pid = ready.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        exe = os.readlink(proc / str(pid) / "exe")
    except OSError:
        return None
    return pid if os.path.realpath(exe) == os.path.realpath(binary) else None


def process_cpu_ns(pid: int | None, proc: Path = PROC) -> int | None:
    """The process's CPU so far, ns: the sum of its threads' run time (schedstat's first
    field); None when the process cannot be read."""
    if pid is None:
        return None
    total, seen = 0, False
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return None
    for task in tasks:
        # A thread that ended between the listing and the read counts no more.
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int((task / "schedstat").read_text().split()[0])
            seen = True
    return total if seen else None


@dataclass
class ServerCpu:
    """A scenario run's server CPU, summed over its visits (ns). `process_ns` is None when
    any visit's process could not be read (then no share of it is known)."""

    process_ns: int | None = 0
    conn_ns: int = 0
    threads_ns: int = 0
    wait_ns: int = 0
    accounts: int = 0
    visits: int = 0

    def add_visit(self, process_ns: int | None, lines: list[dict]) -> None:
        """One visit: the process's CPU while it served (None: unknown) and every line its
        records file holds (connections and `server_thread` accounts)."""
        self.visits += 1
        if process_ns is None or self.process_ns is None:
            self.process_ns = None
        else:
            self.process_ns += process_ns
        for r in lines:
            if r.get("side") == "server":
                self.conn_ns += r.get("conn_cpu_ns") or 0
            elif r.get("side") == "server_thread":
                self.accounts += 1
                self.threads_ns += r.get("cpu_ns") or 0
                self.wait_ns += r.get("wait_cpu_ns") or 0

    def columns(self) -> dict:
        """The `scenario_runs` columns (schema.sql), all None when nothing was served."""
        if not self.visits or not self.process_ns:
            return dict.fromkeys(COLUMNS)
        return {
            "server_process_cpu_ns": self.process_ns,
            "server_conn_cpu_ns": self.conn_ns,
            "server_threads_cpu_ns": self.threads_ns if self.accounts else None,
            "server_wait_cpu_ns": self.wait_ns if self.accounts else None,
        }


def rest(process_ns: float, conn_ns: float, threads_ns: float, wait_ns: float) -> dict:
    """What the connections leave of the process's CPU, by where it went (ns, as the
    server's own accounts say; nan where it writes none): waiting for connections (on the
    Go engine, whose one account is the whole process's, everything outside its
    connections), the serving threads' own remainder, the other threads (records writer,
    main thread, a runtime's helpers)."""
    if threads_ns != threads_ns:
        return {"waiting": math.nan, "threads_rest": math.nan, "other": math.nan}
    return {
        "waiting": wait_ns,
        "threads_rest": max(threads_ns - conn_ns - wait_ns, 0),
        "other": max(process_ns - threads_ns, 0),
    }


COLUMNS = (
    "server_process_cpu_ns",
    "server_conn_cpu_ns",
    "server_threads_cpu_ns",
    "server_wait_cpu_ns",
)
