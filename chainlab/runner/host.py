"""The host's speed, measured: `chainlab-engine reference` (a fixed SHAKE-256 workload) timed
on given cores, so measurements minutes apart can be read against how fast the host was.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chainlab import environment
from chainlab.model import host_speed
from chainlab.model.host_speed import LOAD_WINDOW_S
from chainlab.runner.stopwatch import HOST_READINGS, Stopwatch

# Rounds of the engine's reference workload: ~20 ms on this machine kind (16 rounds took
# 40.4-40.9 ms in three runs' 30-64 readings on 2026-11-27, their spells up to 66 ms), so
# timing it before and after each scenario costs about 0.05 s. Twenty milliseconds are
# thousands of clock resolutions and many scheduler ticks: enough to read a 10 % move
# (HOST_DRIFT_LIMIT), while each reading was 6 % of a warm paper-matrix scenario's overhead.
ROUNDS = 8
# Far above the workload's time on any machine that can run a campaign.
TIMEOUT_S = 60.0
# A scenario whose host speed (the workload's time at its end over its start, minus 1)
# moved more than this is flagged in the progress and the report: the wall-clock figures of
# its start and end were taken on hosts that far apart. This VM's fixed workload took 40 to
# 77 ms within one run; 10 % is past the few per cent one scenario's own noise moves it.
HOST_DRIFT_LIMIT = 0.10


# A reading taken this recently, with nothing measured since, stands for a new one: the end
# of one load step and the start of the next are read once; so are the last step's end and
# its scenario's.
REUSE_S = 1.0


class ReferenceError(Exception):
    pass


@dataclass
class LastReading:
    """The run's latest host reading, until something is measured (`measured`): whatever
    runs handshakes (a client batch, a load step or its warm-up, an instruction count) says
    so before it starts. Those waiting for the next reading (`wait`: scenarios ended in the
    window, chainlab.runner.window) get it as it is taken, on the cores they name."""

    cpus: str | None = None
    got: dict | None = None
    at: float = 0.0
    fresh: bool = False  # nothing measured since `got`
    waiting: list[tuple[str | None, Callable[[dict], None]]] = field(default_factory=list)
    # The run's stopwatch (chainlab.runner.stopwatch): each reading taken is a part of it.
    watch: Stopwatch | None = None

    def take(self, engine: Path, cpus: str | None, window: bool = False) -> dict:
        """A reading on `cpus` (`reference`): the latest one where it was on the same cores
        less than REUSE_S ago and nothing was measured since, or (`window`: a scenario's
        start) less than host_speed.WINDOW_S ago whatever ran since; else a new one."""
        age = time.monotonic() - self.at
        reuse = (self.fresh and age < REUSE_S) or (window and age < host_speed.WINDOW_S)
        if self.got is not None and self.cpus == cpus and reuse:
            return dict(self.got)
        return self.new(engine, cpus)

    def new(self, engine: Path, cpus: str | None) -> dict:
        """A new reading on `cpus`, given to those waiting for one there."""
        with self.watch.timed(HOST_READINGS) if self.watch else contextlib.nullcontext():
            got = reference(engine, cpus)
        self.cpus, self.got, self.at, self.fresh = cpus, got, time.monotonic(), True
        waiting, self.waiting = self.waiting, []
        for where, give in waiting:
            if where == cpus:
                give(dict(got))
            else:
                self.waiting.append((where, give))
        return got

    def wait(self, cpus: str | None, give: Callable[[dict], None]) -> None:
        """`give` gets the next reading taken on `cpus`."""
        self.waiting.append((cpus, give))

    def age(self) -> float:
        """Seconds since the latest reading (infinite before the first)."""
        return time.monotonic() - self.at if self.got is not None else math.inf

    def measured(self) -> None:
        """Something ran that the next reading must come after."""
        self.fresh = False


def reference(engine: Path, cpus: str | None) -> dict:
    """{wall_ns, cpu_ns, cpus, steal_ns, per_cpu_ns} of the reference workload: on `cpus`
    once; with none given (the processes it stands for go wherever the kernel puts them),
    once on each CPU this process may use, at once, `wall_ns` and `cpu_ns` their means and
    `per_cpu_ns` each CPU's [wall ns, CPU ns]. A shared VM's CPUs are not equally fast at the
    same moment (2026-11-30, this one: 23 ms on CPU 0 and 38-40 ms on CPU 1 in the same
    second, a minute later the other way round), and one unpinned reading reports whichever
    CPU it landed on. The CPU time is the host's speed (how long the work takes while it
    runs); the wall time also counts waiting for a core another process holds."""
    if cpus is not None:
        (out,) = _run(engine, [cpus])
        return {**out, "cpus": cpus, "steal_ns": steal_ns(), "per_cpu_ns": None}
    own = sorted(os.sched_getaffinity(0))
    each = dict(zip(own, _run(engine, [str(cpu) for cpu in own]), strict=True))
    return {
        "wall_ns": round(sum(r["wall_ns"] for r in each.values()) / len(each)),
        "cpu_ns": round(sum(r["cpu_ns"] for r in each.values()) / len(each)),
        "cpus": None,
        "steal_ns": steal_ns(),
        "per_cpu_ns": {str(cpu): [r["wall_ns"], r["cpu_ns"]] for cpu, r in each.items()},
    }


def _run(engine: Path, cpus: list[str]) -> list[dict]:
    """{wall_ns, cpu_ns} of the workload pinned to each of `cpus`, all at once (one CPU's
    process does not slow another's: the workload fits in each core's cache), so reading
    every CPU costs what reading one does."""
    procs = [
        subprocess.Popen(
            [str(engine), "reference", "--rounds", str(ROUNDS), "--cpus", c],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for c in cpus
    ]
    outs = []
    try:
        for p in procs:
            try:
                stdout, stderr = p.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise ReferenceError(f"the reference workload took over {TIMEOUT_S:g} s") from None
            if p.returncode != 0:
                raise ReferenceError(f"reference workload: {stderr.strip() or p.returncode}")
            out = json.loads(stdout)
            outs.append({"wall_ns": int(out["wall_ns"]), "cpu_ns": int(out["cpu_ns"])})
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def uneven(per_cpu_ns: dict | str | None) -> float | None:
    """How much slower the slowest CPU of one reading was than its fastest, in CPU time
    (slowest / fastest - 1); None for a reading on one set of CPUs, or before schema 16."""
    if isinstance(per_cpu_ns, str):
        per_cpu_ns = json.loads(per_cpu_ns)
    if not isinstance(per_cpu_ns, dict) or len(per_cpu_ns) < 2:
        return None
    times = [float(wall_cpu[1]) for wall_cpu in per_cpu_ns.values()]
    return max(times) / min(times) - 1 if min(times) > 0 else None


def steal_ns(stat: Path = Path("/proc/stat")) -> int | None:
    """The machine's steal time so far, all CPUs (the hypervisor ran something else while a
    CPU of this guest was runnable): the `cpu` line's 8th value, in clock ticks. None where
    the kernel does not report it."""
    try:
        line = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if line[0] != "cpu" or len(line) < 9:
        return None
    return int(line[8]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


# What foreign_load takes off each CPU's busy ticks: the counters' resolution.
RESOLUTION_TICKS = 1
# And off the CPU this process works on while it watches (`LoadWatch`), besides its own
# time: that CPU's busy ticks less this process's own time read -0.9 to +2.1 on this VM at
# rest (18 windows of a store opened and the caches read, 2026-12-01): its own time in the
# counters' ticks against its clock's, and the kernel's work for it (its writes).
PINNED_TICKS = 3


def foreign_load(window_s: float = LOAD_WINDOW_S, stat: Path = Path("/proc/stat")) -> float | None:
    """The share of the last `window_s` seconds the busiest CPU this process may use spent
    on other load (the kernel's per-CPU counters, everything but idle and iowait: other
    processes, and steal, the hypervisor's other guests), read while chainlab runs nothing:
    0.00 on this VM at rest, 0.48-0.52 beside a process busy on one core half of each tenth
    of a second (2026-11-30). None where the kernel does not report it.

    A CPU's busy ticks are counted less one (`RESOLUTION_TICKS`): the counters move in clock
    ticks (30 in the window), and one tick is as likely the kernel's own housekeeping or
    chainlab's threads as another process. Read as load, that one tick (0.033) gave every
    handshake a spread of at least 0.087, and quick.toml at rest an estimate of 1.81 of its
    wall time (2026-12-01)."""
    return LoadWatch.begin(stat, pin=False).end(window_s)


@dataclass
class LoadWatch:
    """`foreign_load` read while this process works (a run's start: its store opened, its
    caches read) instead of idling through the window: from `begin` every thread of the
    process runs on one CPU (`pinned`, the lowest it may use), so the other CPUs' busy ticks
    are other load alone and the pinned CPU's are other load and this process's own CPU
    time, which is taken off (with `PINNED_TICKS`). A neighbour that can run elsewhere does,
    on the CPUs this process leaves idle; one bound to the pinned CPU shows there, in what
    this process's own time does not account for. `end` waits out what the window lacks and
    lets the threads run anywhere again (`release`, also what a failure before `end` must
    call). Where the kernel refuses the pinning (or there is one CPU), this process's own
    time is taken off every CPU: a neighbour may read less than it was, never this process
    as one. `pin=False`: nothing is taken off; this process must run nothing meanwhile."""

    stat: Path
    started: float
    before: dict[str, tuple[int, int]]
    own_ns: int
    # The CPUs whose busy ticks this process's own time is taken off.
    mine: frozenset[str] = frozenset()
    # The CPU this process's threads run on while it watches (None: not pinned).
    pinned: int | None = None
    # Each thread's own CPUs before pinning, restored by `release`.
    affinity: dict[int, set[int]] = field(default_factory=dict)

    @classmethod
    def begin(cls, stat: Path = Path("/proc/stat"), pin: bool = True) -> LoadWatch:
        cpus = sorted(os.sched_getaffinity(0))
        affinity: dict[int, set[int]] = {}
        mine = frozenset(f"cpu{c}" for c in cpus) if pin else frozenset()
        pinned = None
        if pin and len(cpus) > 1:
            try:
                for tid in _threads():
                    with contextlib.suppress(ProcessLookupError):  # a thread that ended
                        affinity[tid] = os.sched_getaffinity(tid)
                        os.sched_setaffinity(tid, {cpus[0]})
                mine, pinned = frozenset({f"cpu{cpus[0]}"}), cpus[0]
            except OSError:
                _restore(affinity, set(cpus))
                affinity = {}
        own = _own_ns()
        return cls(stat, time.monotonic(), _cpu_times(stat), own, mine, pinned, affinity)

    def end(self, window_s: float = LOAD_WINDOW_S) -> float | None:
        """The busiest CPU's share of other load since `begin`, at least `window_s` on."""
        time.sleep(max(self.started + window_s - time.monotonic(), 0.0))
        after = _cpu_times(self.stat)
        own_ticks = (_own_ns() - self.own_ns) * os.sysconf("SC_CLK_TCK") / 1e9
        self.release()
        own = {f"cpu{c}" for c in os.sched_getaffinity(0)}
        shares = []
        for cpu in own & self.before.keys() & after.keys():
            off = own_ticks + PINNED_TICKS if cpu in self.mine else RESOLUTION_TICKS
            busy = after[cpu][0] - self.before[cpu][0] - off
            total = after[cpu][1] - self.before[cpu][1]
            if total > 0:
                shares.append(max(busy, 0) / total)
        return max(shares) if shares else None

    def release(self) -> None:
        """Every thread runs on the CPUs it had again (those started since: the process's)."""
        if self.affinity:
            _restore(self.affinity, self.affinity.get(os.getpid(), set()))
            self.affinity = {}


def _threads() -> list[int]:
    """This process's threads (/proc/self/task)."""
    return [int(t) for t in os.listdir("/proc/self/task")]


def _restore(affinity: dict[int, set[int]], default: set[int]) -> None:
    for tid in _threads():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(tid, affinity.get(tid, default) or default)


def _own_ns() -> int:
    """This process's CPU time so far, every thread's, and its waited-for children's."""
    t = os.times()
    return time.process_time_ns() + int((t.children_user + t.children_system) * 1e9)


def _cpu_times(stat: Path) -> dict[str, tuple[int, int]]:
    """Per CPU (`cpuN`): its busy and total clock ticks so far (/proc/stat: user, nice,
    system, idle, iowait, irq, softirq, steal; idle and iowait are not busy)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        f = line.split()
        if len(f) >= 9 and f[0].startswith("cpu") and f[0][3:].isdigit():
            ticks = [int(x) for x in f[1:9]]
            out[f[0]] = (sum(ticks) - ticks[3] - ticks[4], sum(ticks))
    return out


def drift(rows: list[dict]) -> float | None:
    """The scenario's host drift from its reference rows (step -1): end over start, minus 1
    (positive: the host got slower); None until both are timed."""
    own = {r["phase"]: r["wall_ns"] for r in rows if r["step"] == -1}
    start, end = own.get("start"), own.get("end")
    if start and end and start > 0 and end > 0:
        return end / start - 1
    return None


def moved(drift: float | None) -> bool:
    """Whether a scenario's host drift (`drift`) flags it: more than HOST_DRIFT_LIMIT."""
    return drift is not None and abs(drift) > HOST_DRIFT_LIMIT


# Passes over the measurements a cache keeps for later runs (primitives, reference
# handshakes): the first, then at most this many more over those during which the host's
# speed moved. This VM's spells last seconds to a minute (2026-11-27: X25519MLKEM768
# encapsulation measured 1.50x and the OpenSSL reference's server CPU 1.45x in one 3-second
# spell of a first run, and every later run on that machine was priced from them:
# browser.toml's OpenSSL server +31.5 %), so a measurement is taken again after the rest of
# the phase, not at once. Where the host is known to be shared (the tests that run beside
# each other), CHAINLAB_HOST_PASSES=1 takes each once: a neighbour's load is no spell to
# wait out.
STEADY_PASSES = 3


@dataclass
class Steady:
    """Measurements taken on a steady host (`steady`): per unit, the result kept and how far
    apart the host's readings around it were (slowest over fastest, minus 1; 0.0: the same)."""

    results: list
    moved: list[float]
    again: list[int] = field(default_factory=list)  # units measured more than once
    # Per unit, the readings around its kept measurement: before, its own, after (CPU ns).
    seen: list[list[float]] = field(default_factory=list)

    @property
    def host_ns(self) -> list[float]:
        """Per unit, the host as its kept measurement found it: the mean of the readings
        around it, what the cost model scales it by (primitive_samples.host_cpu_ns)."""
        return [sum(s) / len(s) if s else math.nan for s in self.seen]

    def notes(self, label: Callable[[int], str]) -> list[str]:
        """One line per unit measured again, or kept although the host moved around it."""
        out = []
        for i in self.again:
            s = self.moved[i]
            kept = "kept" if s <= HOST_DRIFT_LIMIT else "still moving, the steadiest kept"
            out.append(f"{label(i)}: measured again, the host's speed moved during it ({kept}: "
                       f"the readings around it {s:.0%} apart)")  # fmt: skip
        return out


def steady(
    units: list,
    measure: Callable[[Any], tuple[Any, list[int]]],
    read: Callable[[], int],
    passes: int | None = None,
) -> Steady:
    """Measures each unit with the host reference workload timed before the first and after
    each (`read`: its CPU ns); `measure(unit)` returns its result and any readings it took
    itself (a reference handshake's scenario times the host at its start and end). A unit
    whose readings around it were more than HOST_DRIFT_LIMIT apart (the host's speed moved
    during it, so the speed it ran at is not known) is measured again after the others, up
    to `passes` in all, and the measurement whose readings were closest is kept. A host that
    was steadily slow or fast is no reason: each result keeps the mean of its readings
    (`host_ns`), which the cost model brings every input to one speed with
    (chainlab.model.host_speed). `passes` defaults to STEADY_PASSES, or CHAINLAB_HOST_PASSES
    where set."""
    if passes is None:
        passes = environment.host_passes(STEADY_PASSES)
    results: list = [None] * len(units)
    moved = [math.inf] * len(units)
    kept: list[list[float]] = [[] for _ in units]
    todo = list(range(len(units)))
    again: set[int] = set()
    for n in range(passes):
        if not todo:
            break
        if n > 0:
            again.update(todo)
        last = read()  # before the pass's first unit
        for i in todo:
            before = last
            got, inner = measure(units[i])
            last = read()
            seen: list[float] = [before, *inner, last]
            apart = max(seen) / min(seen) - 1 if min(seen) > 0 else math.inf
            if results[i] is None or apart < moved[i]:
                results[i], moved[i], kept[i] = got, apart, seen
        todo = [i for i in todo if moved[i] > HOST_DRIFT_LIMIT]
    moved = [0.0 if math.isinf(m) else m for m in moved]
    return Steady(results, moved, sorted(again), kept)


def at_host(rows: list[dict], readings: Sequence[float]) -> list[dict]:
    """`rows` with the host's speed around their measurement (`host_cpu_ns`: the mean of
    the host reference workload's readings around it; left unset without a reading)."""
    seen = [r for r in readings if math.isfinite(r) and r > 0]
    if not seen:
        return rows
    host_ns = round(sum(seen) / len(seen))
    return [{**r, "host_cpu_ns": host_ns} for r in rows]


def at_batches(rows: list[dict], readings: Sequence[float]) -> list[dict]:
    """`rows` of batches taken between host readings (`batch` k lies between `readings[k]`
    and `readings[k + 1]`), each with the mean of the two around its batch (`host_cpu_ns`),
    or of those that are readings; the `batch` key is dropped. A batch with neither is left
    unset."""
    out = []
    for r in rows:
        k = r["batch"]
        row = {key: v for key, v in r.items() if key != "batch"}
        out += at_host([row], readings[k : k + 2])
    return out
