"""Scenarios that end inside one host-reading window (chainlab.model.host_speed.WINDOW_S) share
its readings and are written together.

A scenario's end reading is the next reading taken after its handshakes: at once where the
window is over or the scenario cannot wait (its load steps are read on the server's cores;
its instruction counts come after its end reading), else whichever reading comes first,
the one that closes the window when a later scenario ends, or the start of a later visit.
Scenarios whose end readings are in are written in one store transaction (`finish` gets
them in the order they ended) as soon as none is still waiting, and whatever ended is
written when the run stops, on Ctrl-C too. A run killed outright loses at most the
scenarios of its open window; `--resume` runs them again.
"""

from __future__ import annotations

from collections.abc import Callable

from chainlab.model import host_speed
from chainlab.runner import host, stopwatch
from chainlab.runner.scenario import ScenarioExecution
from chainlab.schema import counted


class Window:
    """The scenarios ended in the current window, until they are written (`finish`)."""

    def __init__(self, ctx, finish: Callable[[list], None]):
        self.ctx = ctx
        self.finish = finish
        self.ended: list[ScenarioExecution] = []
        self.waiting: set[int] = set()  # id() of those without their end reading yet

    def read_end(self, ex: ScenarioExecution) -> None:
        """`ex`'s handshakes and load steps are done: its end reading, the next one taken,
        now where the window is over or it cannot wait."""
        if not _waits(ex):
            ex.reference("end")
            return
        self.waiting.add(id(ex))

        def give(got: dict) -> None:
            self.waiting.discard(id(ex))
            ex.add_reference("end", -1, got, note=False)  # noted once for the window

        self.ctx.readings.wait(None, give)
        if self.ctx.readings.age() >= host_speed.WINDOW_S:
            self._read()

    def ended_one(self, ex: ScenarioExecution) -> None:
        """`ex` has ended (closed): written with the others once none is waiting."""
        ex.state.end()
        self.ended.append(ex)
        if not self.waiting:
            self._write()

    def close(self) -> None:
        """The run stops: a reading for those still waiting, then everything ended is
        written (a failed reading is noted; they are written without it)."""
        with self.ctx.defer():
            if self.waiting:
                self._read()
            self._write()

    def _read(self) -> None:
        """A new reading, the end of those waiting (a failed one is noted: they go without)."""
        try:
            self.ctx.readings.new(self.ctx.engine, None)
        except host.ReferenceError as e:
            self.ctx.progress.note(f"chainlab: host reference: {e}")
            self.waiting.clear()
            self.ctx.readings.waiting.clear()

    def _write(self) -> None:
        if not self.ended:
            return
        done, self.ended = self.ended, []
        self._note_moved(done)
        with self.ctx.watch.timed(stopwatch.WRITES):
            self.finish([(ex.plan, ex.result()) for ex in done])

    def _note_moved(self, done: list[ScenarioExecution]) -> None:
        """One line for the scenarios of a window over which the host's speed moved (those
        read on their own are noted as they end)."""
        shared: dict[float, list[str]] = {}
        for ex in done:
            drift = host.drift(ex.results.host_reference)
            if drift is not None and host.moved(drift) and _waits(ex):
                shared.setdefault(drift, []).append(ex.plan.scenario_id)
        for drift, ids in shared.items():
            self.ctx.progress.note(
                f"chainlab: the host's speed moved {drift:+.0%} over a window of "
                f"{counted(len(ids), 'scenario')} ({ids[0]}"
                + (f" ... {ids[-1]}" if len(ids) > 1 else "")
                + ") (reference workload, end over start): their figures were taken on a "
                "changing host"
            )


def _waits(ex: ScenarioExecution) -> bool:
    """Whether `ex` waits for the window's reading: not where its load steps are read on the
    server's cores, nor where its instruction counts come after its end reading."""
    return ex.plan.load is None and ex.plan.measure is None
