"""Runs a campaign into a store: order, resume, interrupts, one transaction per window.

Guarantees:
- a scenario's samples and its `scenario_runs` row are committed together, after the
  scenario ends, with the other scenarios of its host-reading window (at most a second's
  worth, chainlab.runner.window); an interrupt writes every scenario that ended, and a crash
  loses at most the scenario in flight and those of its window (in the interleaved order:
  also the scenarios not yet finished);
- SIGINT/SIGTERM stop the engine processes (process groups, in `finally`) and tear down an
  emulated link (namespaces, forwarder; a second signal waits until that is done), mark the
  run `interrupted` and exit 130; a SIGKILL of chainlab takes the engines and the forwarder
  down through their parent-death signal, and the next run with an emulated profile removes
  the namespaces it left;
- emulated profiles: before the first emulated scenario the run checks privileges and
  removes leftovers of killed runs; without privileges those scenarios fail with the reason
  and loopback scenarios run;
- `--resume` skips scenarios the store already holds as completed.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chainlab import __version__, engine, environment, machine
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.fields import CLUSTER_ADDRESS, CLUSTER_ADDRESS_RE, SEED_MAX
from chainlab.campaign.loader import split_problem
from chainlab.campaign.model import Campaign, Scenario
from chainlab.errors import ChainlabError, one_line
from chainlab.model import load_steps, run_estimate
from chainlab.model.estimate import fmt_duration
from chainlab.runner import (
    executors,
    fresh,
    network,
    parts,
    primitives,
    primitives_cache,
    references,
    seeds,
    stopwatch,
    workdir,
)
from chainlab.runner.context import RunContext
from chainlab.runner.host import LastReading, LoadWatch
from chainlab.runner.links import SharedLinks
from chainlab.runner.progress import Progress
from chainlab.runner.servers import ServerPool
from chainlab.runner.wall_time import (
    attempt_seconds,
    load_seconds,
    overhead_note,
    parts_note,
    rest_note,
)
from chainlab.schema import counted
from chainlab.store import Store, StoreError, not_a_file


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM: stop, clean up, mark the run interrupted."""


class SignalGuard:
    """Turns SIGINT/SIGTERM into Interrupted, except inside `deferred()` (a store commit),
    where the signal waits until the block ends."""

    def __init__(self) -> None:
        self.deferring = False
        self.pending: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handler(self, signum, _frame):
        if self.deferring:
            self.pending = signum
            return
        raise Interrupted(signal.Signals(signum).name)

    @contextlib.contextmanager
    def deferred(self):
        outer, self.deferring = self.deferring, True
        try:
            yield
        finally:
            self.deferring = outer  # a block inside another leaves the signal to the outer
            if not outer and self.pending is not None:
                sig, self.pending = self.pending, None
                raise Interrupted(signal.Signals(sig).name)


@dataclass
class RunOptions:
    store: Path
    resume: bool = False
    campaigns: list[str] | None = None
    seed: int | None = None
    order: str | None = None
    live_progress: bool | None = None
    # A Dask scheduler's address: scenarios run on its workers (runner.executors), whole on
    # one host or split over two.
    cluster: str | None = None
    placement: str = "whole"


@dataclass
class RunSummary:
    run_id: str
    store: Path
    completed: list[str]
    failed: list[str]
    skipped: list[str]
    interrupted: bool
    wall_seconds: float
    engine_seconds: float
    # Every single-connection attempt's total_ns (warm-ups too); with the load steps' spans
    # and the instruction counts' time, the handshakes' own time (`handshake_seconds`).
    attempt_seconds: float = 0.0
    estimate_s: float = 0.0  # the run-time estimate it started with
    # Each failed scenario's cause and detail, as stored (`scenario_runs`).
    failures: dict[str, str] = field(default_factory=dict)
    # The scenarios' own wall times (`scenario_runs.wall_seconds`), for where the rest of
    # the wall time went (`wall_time.time_parts`).
    scenario_seconds: float = 0.0
    load_seconds: float = 0.0
    counting_seconds: float = 0.0
    # Where the run's own time went outside its handshakes (chainlab.runner.wall_time); a
    # cluster's scenarios run on its workers, whose parts this process does not time.
    watch: stopwatch.Stopwatch = field(default_factory=stopwatch.Stopwatch)
    local: bool = True

    @property
    def handshake_seconds(self) -> float:
        """The handshakes' own time (`handshake_seconds` of each scenario); the rest of the
        wall time is the run's overhead."""
        return self.attempt_seconds + self.load_seconds + self.counting_seconds


def _say(text: str) -> None:
    """A line of the run's own before its progress display starts."""
    print(f"chainlab: {text}", file=sys.stderr, flush=True)


def ordered(scenarios: list[Scenario], order: str, seed: int) -> list[Scenario]:
    """Scenario order: 'declared', or 'random' (a seeded shuffle, so a rerun with the same
    seed repeats it). 'interleaved' keeps the declared list; the runner alternates batches."""
    out = list(scenarios)
    if order == "random":
        random.Random(seeds.derive(seed, "order")).shuffle(out)
    return out


def git_commit(repo: Path) -> str | None:
    """HEAD of the repository chainlab runs from, '-dirty' if tracked files changed."""
    if not (repo / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "") if head else None


def run(campaign: Campaign, opts: RunOptions) -> RunSummary:
    t0 = time.monotonic()
    watch = stopwatch.Stopwatch()
    watch.laps()
    selected = campaign.select(opts.campaigns)
    seed = campaign.seed if opts.seed is None else opts.seed
    order = opts.order or campaign.order
    # Every option, variable and the store's own state first: nothing is built or written
    # for a run that would be refused. The load steps against the cost model too (the
    # commands check them on reading the file; a campaign given here may not have been).
    load_steps.check(campaign)
    check_options(campaign, selected, opts)
    if opts.cluster is not None:
        executors.reach(opts.cluster)
    # What this run needs that this checkout has not built yet (a stack, liboqs, the link):
    # built now, once, before anything is written.
    engine.ensure(parts.needed(selected, seed), say=_say)
    eng = engine.path()
    info = engine.info()
    # Every other TLS stack a scenario runs: its binary must be there before anything runs,
    # and its build facts (versions, pins) go into the run's metadata.
    others = sorted({st for s in selected for st in s.handshake.stacks} - {DEFAULT_STACK})
    if others:
        info = {**info, "stacks": {st: engine.stack_info(st) for st in others}}
    removed = workdir.remove_orphans(workdir.RUN_PREFIX)
    watch.lap(stopwatch.CHECKS)
    # Other processes' load on the CPUs, read while the store opens and the caches are read
    # (LoadWatch) rather than in a window of its own before the estimate.
    watched = LoadWatch.begin()
    try:
        store = Store.open_or_create(opts.store)
    except BaseException:
        watched.release()
        raise
    run_id = uuid.uuid4().hex
    try:
        done = store.completed_scenarios() if opts.resume else set()
        todo = [s for s in ordered(selected, order, seed) if s.scenario_id not in done]
        skipped = [s.scenario_id for s in selected if s.scenario_id in done]
        store.register_scenarios(selected, campaign.memberships(opts.campaigns))
        # We hold the store's write lock, so a run still marked running was killed.
        store.mark_dead_runs()
        watch.lap(stopwatch.STORE_OPENED)
        # The run-time estimate (the one `validate` prints), stored with what it had to make
        # and the spread the other load on the CPUs makes now.
        made = fresh.fresh(eng, todo, seed, campaign.primitives, measured=selected)
        watch.lap(stopwatch.CACHES_READ)
        # Its first is the estimate's, and may start a window; each one taken is timed.
        readings = LastReading(watch=watch)
        model, load_read, at_host = primitives_cache.estimate_model(
            lambda: readings.take(eng, None), watched
        )
        est = run_estimate.run(
            todo, model, made, campaign.primitives, load_read, host_reading_ns=at_host
        )
        watch.lap(stopwatch.ESTIMATE)
        store.begin_run(
            {
                "run_id": run_id,
                "started_at": datetime.now(UTC).replace(tzinfo=None),
                "status": "running",
                "campaign_file_name": campaign.path.name,
                "campaign_file_sha256": campaign.sha256,
                "campaign_toml": campaign.text,
                "chainlab_version": __version__,
                "chainlab_commit": git_commit(engine.REPO),
                "engine_info": info,
                "openssl_version": info["openssl_build"]["openssl_version"],
                "openssl_patch_sha": info["openssl_build"]["patch_sha256_16"],
                "machine": machine.describe(),
                "libraries": machine.libraries(),
                "options": {
                    "campaigns": opts.campaigns or list(campaign.campaigns),
                    "seed": seed,
                    "order": order,
                    "resume": opts.resume,
                    "cluster": opts.cluster is not None,
                    "placement": opts.placement,
                    "skipped_completed": len(skipped),
                    "scenarios": len(todo),
                },
                "estimate": est.to_json(),
            }
        )
        progress = Progress(todo, live=opts.live_progress)
        progress.use_estimate(est)
        progress.note(f"chainlab: {estimate_note(est)}")
        if note := removed.note():
            progress.note(f"chainlab: {note}")
        summary = RunSummary(run_id, opts.store, [], [], skipped, False, 0.0, 0.0)
        summary.estimate_s = est.expected_s
        summary.watch, summary.local = watch, opts.cluster is None
        watch.lap(stopwatch.RUN_REGISTERED)
        status = "failed"
        with SignalGuard() as guard, workdir.held(workdir.RUN_PREFIX) as tmp:
            ctx = RunContext(eng, run_id, seed, tmp, campaign.networks, progress)
            ctx.readings = readings
            ctx.watch = watch
            ctx.defer = guard.deferred
            ctx.links = SharedLinks()
            ctx.servers = ServerPool(tmp) if opts.cluster is None else None
            try:
                if skipped:
                    progress.note(
                        f"chainlab: --resume: {counted(len(skipped), 'scenario')} already "
                        "completed in the store, skipped"
                    )
                with watch.timed(stopwatch.PRIMITIVES):
                    _primitives(ctx, store, selected, campaign, guard, progress)
                progress.start()
                with watch.timed(stopwatch.NETWORK_CHECKS):
                    _network_preflight(ctx, todo, campaign, progress)
                executors.executor(opts.cluster, order, opts.placement).execute(
                    ctx,
                    todo,
                    lambda done: _store_results(store, guard, done, progress, summary),
                )
                status = "completed"
            except KeyboardInterrupt:
                summary.interrupted = True
                status = "interrupted"
                raise
            finally:
                with guard.deferred():
                    try:
                        if ctx.servers is not None:
                            ctx.servers.close()
                        ctx.links.close()
                    finally:
                        _end_run(store, run_id, status)
                summary.wall_seconds = time.monotonic() - t0
                for line in (parts_note(summary), rest_note(summary)):
                    if line:
                        progress.note(f"chainlab: {line}")
                progress.finish(
                    f"chainlab: run {status}: {len(summary.completed)} completed, "
                    f"{len(summary.failed)} failed, {len(summary.skipped)} skipped; "
                    f"store {opts.store}" + overhead_note(summary)
                )
        return summary
    finally:
        watched.release()
        store.close()


def estimate_note(est: run_estimate.RunEstimate) -> str:
    """The run-time estimate in one line: expected, range, and what the run must make."""
    ph, f = est.phases, est.fresh
    made = [
        f"{counted(len(f.primitives), 'primitive')} and "
        f"{counted(len(f.references), 'reference handshake set')} to measure "
        f"({fmt_duration(ph['primitives'] + ph['references'])})",
        f"{counted(len(f.hierarchies), 'hierarchy', 'hierarchies')} to generate "
        f"({fmt_duration(ph['hierarchies'])})",
    ]
    if est.host_reading_ns is not None:
        ms = est.host_reading_ns / 1e6
        made.append(f"priced at the host's speed now (reference workload {ms:.1f} ms)")
    if est.noise_cv > 0:
        made.append(
            f"other load kept a CPU busy: handshakes taken to spread by at least {est.noise_cv:.0%}"
        )
    return (
        f"estimated run time: {fmt_duration(est.expected_s)} (range {fmt_duration(est.low_s)} "
        f"to {fmt_duration(est.high_s)}); " + ", ".join(made)
    )


def check_options(campaign: Campaign, selected: list[Scenario], opts: RunOptions) -> None:
    """Every problem with the run's options, the environment and the store it would write,
    one line each, before anything is built or written (ChainlabError)."""
    problems = []
    if opts.seed is not None and not 0 <= opts.seed <= SEED_MAX:
        problems.append(f"--seed {opts.seed}: allowed: an integer 0 to {SEED_MAX}")
    if opts.cluster is not None and not CLUSTER_ADDRESS_RE.match(opts.cluster):
        problems.append(f"--cluster {one_line(opts.cluster)!r}: allowed: {CLUSTER_ADDRESS}")
    if opts.placement == "split":
        if opts.cluster is None:
            problems.append(
                "--placement split: needs a cluster (--cluster or the file's [cluster] "
                "address); allowed without one: whole"
            )
        problem = split_problem(selected, campaign.load)
        if problem:
            problems.append(f"{campaign.path.name}: placement {problem}")
    problems += _store_problems(campaign, opts)
    problems += environment.problems()
    for kind in ("pki", "primitives"):
        problems += [p for p in environment.cache_problems(kind) if p not in problems]
    if problems:
        raise ChainlabError("\n".join(problems))


def _store_problems(campaign: Campaign, opts: RunOptions) -> list[str]:
    """What is wrong with writing `opts.store`: not a file, there without --resume, a parent
    that cannot be a folder; with --resume, another campaign's or another seed's store
    (read, never written, here)."""
    path = opts.store
    if path.is_dir():
        return [not_a_file(path)]
    if not path.exists():
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    return [f"store {path}: cannot be made: {parent} is not a folder"]
                if not os.access(parent, os.W_OK | os.X_OK):
                    return [f"store {path}: cannot be made: {parent} is not writable"]
                break
        return []
    if not opts.resume:
        return [f"store {path} exists; pass --resume to continue it, or --store for a new one"]
    with Store.open(path) as st:
        earlier = st.campaign_files()
        seeds = st.run_seeds()
    if earlier and campaign.path.name not in earlier:
        # Another campaign file's scenarios would be appended to it silently. Its edits (a
        # scenario more, a changed sampling) are allowed: the store refuses a scenario whose
        # parameters changed (Store.register_scenarios).
        return [
            f"--resume: store {path} holds the runs of {', '.join(sorted(earlier))}, not of "
            f"{campaign.path.name}; allowed: --resume with that campaign file, or a new --store "
            f"for {campaign.path.name}"
        ]
    seed = campaign.seed if opts.seed is None else opts.seed
    if seeds and seed not in seeds:
        given = f"--seed {seed}" if opts.seed is not None else f"{campaign.path.name}'s seed {seed}"
        return [
            f"--resume: store {path} was run with seed {', '.join(map(str, sorted(seeds)))}, "
            f"not {given}; allowed: --seed {min(seeds)} (its scenarios' hierarchies and draws "
            "come from it), or a new --store"
        ]
    return []


def _end_run(store: Store, run_id: str, status: str) -> None:
    """Mark the run ended. When the store's file system refuses even that (the error that
    ended the run is on its way to the user), the run stays 'running' and the next writer
    marks it 'interrupted' (Store.mark_dead_runs); either way `--resume` completes it."""
    try:
        store.end_run(run_id, status)
    except StoreError:
        if status != "failed":
            raise


def _network_preflight(ctx, todo, campaign, progress) -> None:
    """Privileges, forwarder and leftovers, once, before the first emulated scenario."""
    ready = network.preflight(todo, campaign.networks)
    if ready["removed"]:
        progress.note(
            "chainlab: removed leftovers of a killed earlier run: " + ", ".join(ready["removed"])
        )
    ctx.network_errors = ready["errors"]
    for reason in sorted(set(ready["errors"].values())):
        names = sorted(n for n, r in ready["errors"].items() if r == reason)
        n = sum(s.network in names for s in todo)
        progress.note(
            f"chainlab: network profile(s) {', '.join(names)} cannot run, their {n} "
            f"scenarios will fail: {reason}"
        )
        for name in names:
            progress.calibration_skipped(name)


def _primitives(ctx, store, scenarios, campaign, guard, progress) -> None:
    """The cost model's primitives and reference handshakes, once, before the scenarios
    (from the machine's cache where it holds them), kept in the store. A failure is noted
    and the scenarios run: their report then says the cost model has no input."""
    plan = campaign.primitives
    if not plan.measure:
        return
    items = primitives.items_for(scenarios)
    progress.note(
        f"chainlab: primitives: {len(items)} operations and the reference handshakes, from "
        "this machine's cache where it holds them, measured otherwise"
    )
    try:
        out = primitives.ensure(
            ctx.engine,
            items,
            plan,
            ctx.run_id,
            ctx.workdir / "primitives",
            seed=ctx.seed,
            stacks=primitives.stacks_of(scenarios),
            profiles=references.profiles_of(scenarios),
            transports=references.transports_of(scenarios),
            waits=references.waits_of(scenarios),
            peers=references.peers_of(scenarios),
        )
    except primitives.PrimitiveError as e:
        progress.note(f"chainlab: primitives not measured, the cost model has no input: {e}")
        return
    for note in out.path_notes:
        progress.note(
            "chainlab: a path reference not taken; its scenarios are priced with the other's "
            f"extra CPU (flat in KiB), or without the path's where neither was: {note}"
        )
    for note in out.host_notes:
        progress.note(f"chainlab: primitives: {note}")
    with guard.deferred():
        store.write_primitives(out.rows)
    # Estimates (the ETA, each scenario's first batch) from this machine's primitives, as
    # the store now holds them for this run.
    summary = store.primitive_summary(ctx.run_id)
    ctx.cost_model = primitives.model_of_summary(summary, "this run's primitives")
    progress.use_model(ctx.cost_model)
    progress.note(
        f"chainlab: primitives: {out.measured} measured, {out.cached} from this machine's "
        f"cache, {out.seconds:.1f}s"
        + (f" (cache not updated: {out.cache_note})" if out.cache_note else "")
    )


def _store_results(store, guard, done, progress, summary) -> None:
    """Writes the scenarios `done` ([(plan, rows)], those of one host-reading window) in one
    transaction, then counts and reports each."""
    with guard.deferred():
        store.write_scenarios([result for _, result in done])
    for plan, result in done:
        summary.engine_seconds += result.scenario_run["engine_seconds"]
        summary.attempt_seconds += attempt_seconds(result)
        summary.scenario_seconds += result.scenario_run.get("wall_seconds") or 0.0
        summary.load_seconds += load_seconds(result)
        summary.counting_seconds += result.counting_seconds
        ok = result.status == "completed"
        (summary.completed if ok else summary.failed).append(plan.scenario_id)
        if not ok:
            row = result.scenario_run
            why = row.get("failure_cause") or "failed"
            detail = row.get("failure_detail")
            summary.failures[plan.scenario_id] = f"{why}: {detail}" if detail else why
        progress.scenario_end(plan, result)
