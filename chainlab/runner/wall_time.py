"""Where a local run's wall time went: its handshakes' own time (what a perfectly efficient
runner would still spend), the client loops' time between handshakes, and the rest, in the
parts the run timed where they ran (chainlab.runner.stopwatch) and what none of them timed.
The run prints these as its last lines (docs/campaigns.md, "Estimated run time")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainlab.runner import stopwatch

if TYPE_CHECKING:
    from chainlab.runner.campaign import RunSummary

# A part of the rest shorter than this is not named (it would read 0.00 s).
SHOWN_S = 0.005


def handshake_seconds(result) -> float:
    """A scenario's handshakes' own time: its attempts' total_ns, its load steps' spans and
    its instruction counts' wall time (the time a perfectly efficient runner would still
    spend). A step's span is its generator's wall time, from its schedule's start to its last
    attempt's end: the attempts started late in the schedule are measured after it (an
    overloaded step's queue, a path's round trips), and no runner could end the step before
    them. Counting under callgrind is the measurement (valgrind slows a handshake about
    22-fold and takes seconds to start): signature-placement-instructions.toml spent 495 s of
    its 534 s counting, and over its handshakes alone read 14.35x (2026-12-01)."""
    return attempt_seconds(result) + load_seconds(result) + result.counting_seconds


def attempt_seconds(result) -> float:
    """A scenario's single-connection attempts' total_ns (`handshake_seconds`)."""
    return sum(r.get("total_ns") or 0 for r in result.samples) / 1e9


def load_seconds(result) -> float:
    """A scenario's load steps' spans (`handshake_seconds`)."""
    return sum(r.get("wall_s") or 0.0 for r in result.load_steps)


def overhead_note(summary: RunSummary) -> str:
    """The run's wall time over its handshakes' own time (process starts, hierarchies,
    primitives, calibration and the gaps between batches are the rest), and over the
    estimate it started with."""
    if summary.handshake_seconds <= 0 or summary.wall_seconds <= 0:
        return ""
    wall, own = summary.wall_seconds, summary.handshake_seconds
    out = f"; wall {wall:.1f} s over the handshakes' own {own:.1f} s: {wall / own:.2f}x"
    if summary.estimate_s > 0:
        est = summary.estimate_s
        out += f"; estimated {est:.1f} s: estimate/wall {est / wall:.2f}"
    return out


def time_parts(summary: RunSummary) -> list[tuple[str, float]]:
    """Where a local run's wall time went, in seconds, from what its scenarios recorded: their
    handshakes (and load steps); their instruction counts under callgrind, where they have
    them; the client loops' time between handshakes (closes, records written, sockets; a
    path's round trips); the rest of the scenarios' own time, which runs from a scenario's
    making (`State.t0`) in either order (its hierarchies made or read from the cache, engine
    processes started and stopped, links, records read); and the rest of the run (its
    start: caches, primitives, references; its host readings and store commits). Nothing
    where the scenarios' times do not fit in the wall time (a cluster's, run in parallel)."""
    wall, scenarios = summary.wall_seconds, summary.scenario_seconds
    if wall <= 0 or scenarios <= 0 or scenarios > wall:
        return []
    attempts, load, counting = (
        summary.attempt_seconds,
        summary.load_seconds,
        summary.counting_seconds,
    )
    loops = max(summary.engine_seconds, attempts)
    parts = [("handshakes", attempts + load)]
    if counting > 0:
        parts.append(("instruction counts under callgrind", counting))
    # Between a scenario's load steps: the warm-up, the host readings around each, the
    # generator's start and its server records drained (load.toml: 60 s for 55 steps).
    steps = ", load steps' warm-ups and readings" if load > 0 else ""
    return [
        *parts,
        ("between them in the client loops", loops - attempts),
        (
            "the rest of the scenarios (hierarchies, engine starts, servers, links, records"
            + steps
            + ")",
            max(scenarios - loops - load - counting, 0.0),
        ),
        (
            "the run's start (caches, primitives, references), host readings and commits",
            wall - scenarios,
        ),
    ]


def parts_note(summary: RunSummary) -> str:
    """`time_parts` in one line, each with its share of the wall time."""
    parts = time_parts(summary)
    if not parts:
        return ""
    wall = summary.wall_seconds
    each = "; ".join(f"{name} {s:.1f} s ({100 * s / wall:.0f} %)" for name, s in parts)
    return f"where the wall time went: {each}"


def rest_parts(summary: RunSummary) -> list[tuple[str, float, int]]:
    """The wall time outside the handshakes and the client loops, in the parts the run timed
    (`summary.watch`; seconds and how often each ran), largest first, then what none of them
    timed (with the parts too short to name, under SHOWN_S). A client batch's part is its
    process's time the engine's loop did not hold (the loops are the handshakes and the time
    between them); a scenario's load steps' part, its time outside the steps' spans. Nothing
    for a cluster's run (its scenarios' parts are its workers'), where `time_parts` has
    nothing, or where the run timed nothing."""
    if not summary.local or not time_parts(summary) or not summary.watch.parts:
        return []
    loops = max(summary.engine_seconds, summary.attempt_seconds)
    less = {stopwatch.CLIENT_BATCHES: loops, stopwatch.LOAD_STEPS: summary.load_seconds}
    timed = [
        (name, max(part.seconds - less.get(name, 0.0), 0.0), part.count)
        for name, part in summary.watch.parts.items()
    ]
    rest = summary.wall_seconds - loops - summary.load_seconds - summary.counting_seconds
    named = sorted((p for p in timed if p[1] >= SHOWN_S), key=lambda p: -p[1])
    untimed = max(rest - sum(s for _, s, _ in named), 0.0)
    return [*named, ("not timed (the run's own Python between them)", untimed, 0)]


def rest_note(summary: RunSummary) -> str:
    """`rest_parts` in one line, each with how often it ran."""
    parts = rest_parts(summary)
    if not parts:
        return ""
    each = "; ".join(f"{name} {s:.2f} s" + (f" ({n}x)" if n > 1 else "") for name, s, n in parts)
    return f"the rest in parts: {each}"
