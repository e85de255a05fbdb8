"""Where a run's time outside its handshakes goes: named parts of the runner's own work
(server starts, hierarchies, host readings, store writes, ...), each timed where it runs.

A part's time is exclusive, as a profiler's own time: a part timed inside another (a host
reading inside a scenario's start) counts for itself and not for the one around it, and a
lap (consecutive steps of the run's start) leaves out the parts timed during it, so the
parts never add up to more than the time they cover. Inside `measuring` (instruction
counts under callgrind: the measurement itself, `chainlab.runner.wall_time
.handshake_seconds`) nothing is timed, so no part takes time the handshakes' own holds.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class Part:
    seconds: float = 0.0
    count: int = 0


@dataclass
class Stopwatch:
    """Named parts' exclusive seconds and how often each ran, in the order first timed."""

    parts: dict[str, Part] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    # Per open scope: the time its inner scopes took (None: inside `measuring`).
    _inner: list[float | None] = field(default_factory=list)
    _lap: float | None = None  # when the last `lap` ended
    _scoped: float = 0.0  # the outermost scopes' time since then

    def laps(self) -> None:
        """Starts timing consecutive steps (`lap`), outside any open scope."""
        self._lap, self._scoped = self.clock(), 0.0

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Times the block as part `name`, less the parts timed inside it."""
        if None in self._inner:
            yield
            return
        start = self.clock()
        self._inner.append(0.0)
        try:
            yield
        finally:
            inner = self._inner.pop() or 0.0
            took = self.clock() - start
            part = self.parts.setdefault(name, Part())
            part.seconds += max(took - inner, 0.0)
            part.count += 1
            self._enclosed(took)

    @contextlib.contextmanager
    def measuring(self) -> Iterator[None]:
        """The block is measurement: neither it nor anything inside it is a part (its time
        still leaves the enclosing part's, as any inner scope's does)."""
        start = self.clock()
        self._inner.append(None)
        try:
            yield
        finally:
            self._inner.pop()
            self._enclosed(self.clock() - start)

    def _enclosed(self, took: float) -> None:
        """A scope that took `took` closed: it leaves the enclosing scope's time, or the
        current lap's where it was outermost."""
        if not self._inner:
            self._scoped += took
        elif self._inner[-1] is not None:
            self._inner[-1] += took

    def lap(self, name: str) -> None:
        """Part `name` is the time since `laps` or the previous lap, less the parts timed
        meanwhile."""
        now = self.clock()
        if self._lap is not None:
            self.add(name, max(now - self._lap - self._scoped, 0.0))
        self._lap, self._scoped = now, 0.0

    def add(self, name: str, seconds: float) -> None:
        """Part `name` took `seconds`, measured by the caller, outside any open scope."""
        part = self.parts.setdefault(name, Part())
        part.seconds += seconds
        part.count += 1


# The parts a local run times (chainlab.runner.wall_time lists them after the handshakes).
# The run's start, step by step.
CHECKS = "the run's checks and builds, killed runs' work directories removed"
STORE_OPENED = "the store opened, the scenarios registered"
CACHES_READ = "the caches read (what the run must make)"
ESTIMATE = "other load watched (what its 0.3 s window lacked) and the estimate"
RUN_REGISTERED = "the run registered"
PRIMITIVES = "primitives and references (cached or measured)"
HIERARCHIES = "hierarchies"
NETWORK_CHECKS = "network checks (privileges, leftovers of killed runs)"
# An emulated link opened for a visit (each profile's calibration with its first), closed.
LINKS = "links opened (each profile calibrated with its first)"
LINKS_CLOSED = "links closed"
SERVER_STARTS = "server starts"
SERVER_STOPS = "server stops and their records read"
# A client batch's process: the time its engine's loop did not hold (start, exit, records).
CLIENT_BATCHES = "client processes (start, exit, records read)"
HOST_READINGS = "host readings"
# A scenario's load steps: their time outside the steps' own spans (warm-ups, readings
# around each step, the generator's start, the server's records drained).
LOAD_STEPS = "load steps' warm-ups, readings and records"
WRITES = "scenario rows made and written"
