"""Open-loop load steps of a scenario (the campaign's [load] table), after its
single-connection measurement, on the same server.

1. Capacity, measured: `chainlab-engine load` offers CAPACITY_OVERLOAD x the capacity the
   single-connection phase implies (server cores / mean whole-connection server CPU). If the
   server keeps up with that (achieved >= SATURATED x the `servable` offer: the offer less
   the attempts refused by an answer, such as a client no chain serves; nothing saturated),
   the offer doubles, up to CAPACITY_TRIES times (achieved: completions_in_window per second
   of the schedule). The most successful handshakes per second any capacity step achieved
   is the capacity (a heavier offer's goodput falls as timeouts waste the server's work);
   whether the server was saturated, and what else limited a step,
   chainlab.analysis.load_capacity says.
   Its clients wait up to QUEUE_WAIT_MARGIN x the time a full in-flight queue takes to clear
   (at least the scenario's timeout), so a slow server's backlog is completed, not timed out.
2. The sustainable rate, searched: the overload throughput of step 1 is not what the server
   sustains (an overloaded event loop batches its work and completes more per second than
   it keeps up with at bounded latency), so `search_steps` offers bisect [SEARCH_FLOOR x
   that throughput, all of it], each as long as a capacity step, for the highest offer the
   server kept up with (`kept_up`: its achieved rate's interval reaches the servable
   offer, nothing saturated, its p99 within LATENCY_BOUND x the single-connection phase's
   p99). The
   analysis (chainlab.analysis.load_capacity) judges every step again with its own bound and
   reports the sustainable rate with its interval; the search only places the steps.
3. One step per offered load: `rates` as given, or `fractions` x the sustainable rate found
   (x the overload throughput without a search), with the scenario's timeout: past capacity,
   timeouts are what a real client would see.

A target (a server chainlab did not start) gets the steps of its `rates` only: its capacity
is not measured and nothing of its server is read (no records, no CPU, no counters).

Each step's attempts are paired with the server's records of the same connections (by
conn_id) and become `load_samples` rows; the step's counts, rates and the generator's own
health become a `load_steps` row. A step whose generator was the limit is flagged
(`generator_limited`), never reported as the server's capacity: its process used
GENERATOR_BUSY of its cores, or its lateness delayed attempts: the p99 scheduling lag above
GENERATOR_LAG_NS *and* at least GENERATOR_LAG_SHARE of the p99 latency, so a slow handshake
(an SLH-DSA leaf's tens of milliseconds) is not blamed on a few milliseconds of lag it
barely felt. Its note says which fired, with the figures.
"""

from __future__ import annotations

import collections
import json
import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chainlab import processes, stats
from chainlab.campaign.fields import MAX_IN_FLIGHT
from chainlab.model import estimate
from chainlab.runner import load_counters, records, seeds
from chainlab.runner.scenario_state import Visit, load_plan_of

# The capacity search offers this multiple of the single-connection estimate: enough to
# saturate a server whose connections cost up to a third less under load than alone.
CAPACITY_OVERLOAD = 1.5
# A step "kept up" when it achieved this share of the offered rate (Poisson counts over a
# few seconds wander by a few per cent).
SATURATED = 0.9
# Failures that are the server's answer, not a shortfall: the exchange ran to an alert or a
# rejected chain (a population's client that no chain serves, a client that distrusts the
# root: docs/engine-records.md "Error categories"). A step keeps up when it completes the rest
# of its offer; a population with 10 % such clients otherwise never "kept up" (88 % achieved).
ANSWERED = frozenset(
    {"verify_failed", "client_cert_rejected", "no_shared_group", "no_shared_sigalg", "tls_alert"}
)
# The capacity step's offer at least: enough attempts to saturate a server whose single-
# connection phase gave no figure, or one handling a few handshakes a second.
MIN_CAPACITY_ATTEMPTS = 10
# What the single-connection phase implies when it left no successful server record.
FALLBACK_CAPACITY = 10.0
# Doublings of the offer at most before the capacity step is taken as it is.
CAPACITY_TRIES = 3
# The sustainable-rate search bisects from this share of the overload throughput up (a
# server sustaining less than half of what it completes overloaded would be a finding the
# steps below it still show).
SEARCH_FLOOR = 0.5
# A step kept its latency bounded while its p99 stayed within this multiple of the reference
# p99 (what a connection waits without a queue: the runner's search takes the single-
# connection phase's, the analysis the scenario's lightest step's). Queueing in front of a
# busy server multiplies it long before the achieved rate falls: a step at 0.9 of an
# overloaded capacity here had a p99 42 times the lightest step's (363 ms against 8.7 ms)
# while achieving 95 % of its offer.
LATENCY_BOUND = 10.0
# The interval a search step's achieved rate is judged with (the report's level).
SEARCH_LEVEL = 0.95
# The generator was the limit when its process used this share of its cores ...
GENERATOR_BUSY = 0.85
# ... or started attempts this late (p99 of the scheduling lag): a generator with spare CPU
# starts them within a millisecond on this machine.
GENERATOR_LAG_NS = 5_000_000
# ... and that lag was at least this share of the p99 latency from the intended start.
GENERATOR_LAG_SHARE = 0.1
# How much longer than the expected wait of a full in-flight queue a capacity step's client
# waits before giving up.
QUEUE_WAIT_MARGIN = 2.0
# Without `max_in_flight`, a step opens at most this multiple of the connections its offer
# keeps open at the scenario's single-connection latency (rate x latency, Little's law):
# queueing in front of a busy server lengthens each connection, and a step that ran out of
# slots would measure the slots, not the server.
IN_FLIGHT_MARGIN = 3.0
# ... and at least this many (what a loopback step needs; the former fixed default), at
# most the engine's limit (chainlab.campaign.fields.MAX_IN_FLIGHT).
MIN_IN_FLIGHT = 64
# Bounds on waiting: for the load process beyond its schedule and timeout, and for the
# server's records of the step's last connections (written after each close).
PROCESS_GRACE_S = 30.0
SERVER_RECORDS_WAIT_S = 3.0


@dataclass
class Step:
    index: int
    kind: str  # capacity | search | step
    rate: float
    fraction: float | None
    duration_s: float
    timeout_ms: int  # the generator's connect + handshake timeout


def run(ex: Visit) -> tuple[list[dict], list[dict]]:
    """The scenario's load steps and their attempts as store rows; ex is the running
    chainlab.runner.scenario.ScenarioExecution (server up, single-connection phase done)."""
    plan = load_plan_of(ex)
    steps: list[dict] = []
    samples: list[dict] = []
    index = 0
    if ex.plan.target_spec is not None:
        _offer(ex, [(rate, None) for rate in plan.rates or ()], index, steps, samples)
        return steps, samples
    derived = _derived_capacity(ex)
    offered = max(CAPACITY_OVERLOAD * derived, MIN_CAPACITY_ATTEMPTS / plan.capacity_s)
    # A capacity step keeps the server saturated: its last queued connection waits for
    # max_in_flight others, and a client giving up before that would turn the server's work
    # into failures (goodput collapse) instead of measuring what the server completes.
    capacity_timeout = max(
        ex.plan.sampling.timeout_ms,
        math.ceil(QUEUE_WAIT_MARGIN * in_flight(ex, offered) / derived * 1e3),
    )
    capacity = 0.0
    for _ in range(CAPACITY_TRIES):
        left = len(plan.rates if plan.rates is not None else plan.fractions or ())
        row, rows = _run_step(
            ex, Step(index, "capacity", offered, None, plan.capacity_s, capacity_timeout), left
        )
        steps.append(row)
        samples += rows
        index += 1
        # The capacity is the most any capacity step achieved: past it, an overloaded
        # server's connections share its core until some time out, and the goodput of a
        # heavier offer falls (over a long path most of all).
        capacity = max(capacity, row["achieved_rate"])
        if saturated(row["n_saturated"], row["achieved_rate"], servable(row)) or capacity == 0:
            break
        offered *= 2
    if not capacity > 0:
        return steps, samples  # nothing completed: the steps' failures say why
    offers: list[tuple[float, float | None]]
    if plan.rates is not None:
        offers = [(rate, None) for rate in plan.rates]
    else:
        base = _search(ex, capacity, index, steps, samples) if plan.search_steps else capacity
        index = len(steps)
        offers = [(f * base, f) for f in plan.fractions or ()]
    _offer(ex, offers, index, steps, samples)
    return steps, samples


def _search(ex: Visit, capacity: float, index: int, steps: list, samples: list) -> float:
    """The search steps (appended in place): bisection of [SEARCH_FLOOR x capacity,
    capacity] for the highest offer that `kept_up`; returns it (the floor when none did)."""
    plan = load_plan_of(ex)
    bound_ns = LATENCY_BOUND * _unloaded_p99_ns(ex)
    lo, hi = SEARCH_FLOOR * capacity, capacity
    for k in range(plan.search_steps):
        rate = (lo + hi) / 2
        left = plan.search_steps - k - 1 + len(plan.fractions or ())
        step = Step(index + k, "search", rate, None, plan.capacity_s, ex.plan.sampling.timeout_ms)
        row, rows = _run_step(ex, step, left)
        steps.append(row)
        samples += rows
        if kept_up(row, rows, bound_ns):
            lo = rate
        else:
            hi = rate
    return lo


def kept_up(row: dict, rows: list[dict], bound_ns: float) -> bool:
    """Whether a step kept up with its offer: it did not fall behind (`fell_behind`, with
    its achieved rate's exact Poisson interval) and its successful attempts' p99 latency
    (from the intended start) stayed within `bound_ns` (no bound: nan)."""
    k = round(row["achieved_rate"] * row["duration_s"])
    hi = stats.poisson_rate_ci(k, row["duration_s"], SEARCH_LEVEL)[2]
    if fell_behind(row["n_saturated"], row["achieved_rate"], hi, servable(row)):
        return False
    latencies = [r["latency_ns"] for r in rows if r["outcome"] == "ok" and r["latency_ns"]]
    if not latencies:
        return False
    return not latency_unbounded(float(np.quantile(latencies, 0.99)), bound_ns)


def fell_behind(n_saturated: int, achieved: float, achieved_hi: float, offered: float) -> bool:
    """Whether a step fell behind its offer: `saturated`, or the upper end of its achieved
    rate's interval (nan: none) below the offer. With `latency_unbounded`, the rule of
    whether a step kept up, for the runner's search and the analysis alike."""
    short = achieved_hi == achieved_hi and achieved_hi < offered
    return saturated(n_saturated, achieved, offered) or short


def servable(row: dict) -> float:
    """The part of a step's offered rate that could succeed: the offer less the share of its
    measured attempts that failed by an answer (ANSWERED; `failures` by category, a dict or
    the store's JSON text). What `fell_behind` compares the achieved rate with."""
    failures = row.get("failures") or {}
    if isinstance(failures, str):
        failures = json.loads(failures)
    attempts = int(row["n_ok"]) + int(row["n_failed"])
    answered = sum(n for cause, n in failures.items() if cause in ANSWERED)
    offered = float(row["offered_rate"])
    return offered * (1 - answered / attempts) if attempts else offered


def latency_unbounded(p99: float, bound: float) -> bool:
    """Whether a step's p99 latency left its bound (either nan: not known to have)."""
    return p99 == p99 and bound == bound and p99 > bound


def _unloaded_p99_ns(ex: Visit) -> float:
    """The p99 of the single-connection phase's successful handshakes (nan without any)."""
    ok = ex.state.ok_values
    return float(np.quantile(ok, 0.99)) if ok else math.nan


def _offer(ex: Visit, offers, index: int, steps: list[dict], samples: list[dict]) -> None:
    """One step per (rate, fraction) offered, numbered from `index`, appended in place."""
    plan = load_plan_of(ex)
    for k, (rate, fraction) in enumerate(offers):
        row, rows = _run_step(
            ex,
            Step(index + k, "step", rate, fraction, plan.step_s, ex.plan.sampling.timeout_ms),
            len(offers) - k - 1,
        )
        steps.append(row)
        samples += rows


def saturated(n_saturated: int, achieved: float, offered: float) -> bool:
    """Whether a step found the server falling behind: some attempts could not start, or
    it achieved less than SATURATED of what was offered."""
    return n_saturated > 0 or achieved < SATURATED * offered


def generator_notes(busy: float, cores: int, lag_p99: float, latency_p99: float) -> list[str]:
    """Why the generator was the limit of a step (empty: it was not): its process used
    GENERATOR_BUSY of its cores, or its p99 scheduling lag (ns) was above GENERATOR_LAG_NS
    and at least GENERATOR_LAG_SHARE of the p99 latency from the intended start (ns)."""
    notes = []
    if busy >= GENERATOR_BUSY:
        notes.append(f"its process used {busy:.0%} of its {cores} core(s)")
    if lag_p99 > GENERATOR_LAG_NS and lag_p99 >= GENERATOR_LAG_SHARE * latency_p99:
        notes.append(
            f"p99 scheduling lag {lag_p99 / 1e6:.1f} ms, {lag_p99 / latency_p99:.0%} of the "
            f"p99 latency {latency_p99 / 1e6:.1f} ms"
        )
    return notes


def completions_in_window(measured: list[dict], duration_s: float) -> int:
    """The successful attempts that completed (intended start + latency from it) within a
    window as long as the schedule, starting at their median latency (the lower median, as
    DuckDB's quantile_disc): a step's achieved rate is this over `duration_s`, so neither an
    overload's backlog nor a lossy path's retransmission tail, draining after the schedule,
    stretches the time. The store's analysis counts the same (chainlab.store.views,
    _LOAD_WINDOWS)."""
    ok = [r for r in measured if r["outcome"] == "ok" and r.get("latency_ns") is not None]
    if not ok:
        return 0
    latencies = sorted(r["latency_ns"] for r in ok)
    start = latencies[(len(latencies) - 1) // 2]
    end = start + duration_s * 1e9
    return sum(1 for r in ok if start <= r["intended_ns"] + r["latency_ns"] < end)


def in_flight(ex: Visit, rate: float) -> int:
    """The connection slots of a step offering `rate`: the campaign's `max_in_flight`, else
    IN_FLIGHT_MARGIN x rate x the scenario's median single-connection latency (its path's
    round trips included), within MIN_IN_FLIGHT and MAX_IN_FLIGHT."""
    given = load_plan_of(ex).max_in_flight
    if given is not None:
        return given
    ok = ex.state.ok_values
    latency_s = float(np.median(ok)) / 1e9 if ok else 0.0
    wanted = math.ceil(IN_FLIGHT_MARGIN * rate * latency_s)
    return min(MAX_IN_FLIGHT, max(MIN_IN_FLIGHT, wanted))


def _derived_capacity(ex: Visit) -> float:
    """Handshakes per second the single-connection phase implies: server cores / mean
    whole-connection CPU of its measured successful connections (handshake CPU where absent;
    warm-ups left out: a server's first connection here cost 38 ms against 0.3 ms). Their
    server records are waited for: the server writes them a writer's turn after each close,
    and a phase of 60 quick handshakes had left 13 of them on file when its client ended
    (none on a loaded machine, which made the capacity step offer FALLBACK_CAPACITY's)."""
    measured = {
        r["conn_id"]
        for r in ex.results.client
        if not r.get("warmup") and r.get("outcome") == "ok" and r.get("conn_id")
    }
    try:
        srv = _server_records(ex, 0, measured)
    except records.RecordError:
        srv = []
    cpu = [
        r.get("conn_cpu_ns") or r.get("cpu_ns")
        for r in srv
        if r.get("conn_id") in measured
        and r.get("outcome") == "ok"
        and (r.get("conn_cpu_ns") or r.get("cpu_ns"))
    ]
    if not cpu:
        return FALLBACK_CAPACITY
    return load_plan_of(ex).server_cores * 1e9 / float(np.mean([float(c) for c in cpu if c]))


def _argv(ex: Visit, step: Step, rec: Path) -> list[str]:
    plan = load_plan_of(ex)
    argv = [
        *ex.client_head("load", plan.generator_stack),
        "--rate", f"{step.rate:.9g}",
        "--duration-ms", str(max(1, round(step.duration_s * 1000))),
        "--arrivals", plan.arrivals,
        "--seed", str(seeds.derive(ex.ctx.seed, "load-step", ex.plan.scenario_id, step.index)),
        "--max-in-flight", str(in_flight(ex, step.rate)),
        "--cpus", plan.generator_cpus,
        "--timeout-ms", str(step.timeout_ms),
        "--records", str(rec),
    ]  # fmt: skip
    if not plan.verify:
        argv.append("--no-verify")
    return ex.client_extras(argv)


def _warm_up(ex: Visit, step: Step) -> None:
    """The generator's and the server's first connections (page faults, lazy
    initialisation), one at a time in a process of their own before the first step, so the
    step's kernel counters (the server's cores, its process) cover its schedule alone: over
    a 50 ms path 20 warm-ups are 2 s of an idle server. Their records are not kept."""
    plan = load_plan_of(ex)
    if not plan.warmup:
        return
    before = records.count_lines(ex.server_records_path)
    ex.ctx.readings.measured()
    argv = [
        *ex.client_head("handshake", plan.generator_stack),
        "--count", str(plan.warmup),
        "--cpus", plan.generator_cpus,
        "--timeout-ms", str(step.timeout_ms),
        "--records", str(ex.dir / "load-warmup.jsonl"),
    ]  # fmt: skip
    if not plan.verify:
        argv.append("--no-verify")
    h = ex.plan.handshake
    if h.defers_close_on(plan.generator_of(h.stacks[0])):
        argv.append("--defer-close")  # over a path, 20 warm-ups' closes were 1 s
    timeout = plan.warmup * step.timeout_ms / 1000 + PROCESS_GRACE_S
    proc = processes.spawn(ex.client_extras(argv), subprocess.DEVNULL, subprocess.DEVNULL)
    try:
        processes.wait_exit(proc, timeout)
    finally:
        processes.stop_group(proc)
    if ex.plan.target_spec is None:
        # Every connection the client made (its own warm-up handshakes too), until the
        # server has written each, so none lands among the first step's records.
        made = {
            r["conn_id"] for r in records.read(ex.dir / "load-warmup.jsonl") if r.get("conn_id")
        }
        _server_records(ex, before, made)  # until they are written, not counted


def _run_step(ex: Visit, step: Step, steps_left: int) -> tuple[dict, list[dict]]:
    plan = load_plan_of(ex)
    rec = ex.dir / f"load-{step.index}.jsonl"
    err = ex.dir / f"load-{step.index}.stderr"
    target = ex.plan.target_spec is not None
    if step.index == 0:
        _warm_up(ex, step)
    server_before = records.count_lines(ex.server_records_path)
    ex.ctx.progress.note(
        f"chainlab: {ex.plan.scenario_id}: load {step.kind} {step.index}: offering "
        f"{step.rate:.1f}/s for {step.duration_s:g} s"
    )
    deadline = step.duration_s + step.timeout_ms / 1000 + PROCESS_GRACE_S
    ex.reference("start", step.index)  # the previous step's end, if just taken
    ex.ctx.readings.measured()
    before = None if target else load_counters.server(ex)
    t0 = time.monotonic()
    with err.open("wb") as errf:
        proc = processes.spawn(_argv(ex, step, rec), subprocess.DEVNULL, errf)
        try:
            while not processes.wait_exit(proc, 0.5):
                if time.monotonic() - t0 > deadline:
                    break
        finally:
            processes.stop_group(proc)
    after = None if target else load_counters.server(ex)
    ex.reference("end", step.index)
    got = records.read(rec)
    generator = next((r for r in got if r.get("side") == "generator"), None)
    if generator is None:
        tail = processes.tail(err)
        raise records.RecordError(
            f"load step {step.index}: the generator wrote no account of itself "
            f"({processes.describe_exit(proc.returncode)}{': ' + tail if tail else ''})"
        )
    client = [r for r in got if r.get("side") == "client"]
    # Each connection that completed has its server record; wait for exactly those.
    completed = {r["conn_id"] for r in client if r.get("outcome") == "ok" and r.get("conn_id")}
    server = [] if target else _server_records(ex, server_before, completed)
    by_conn = {r["conn_id"]: r for r in server if r.get("conn_id")}
    row, rows = _rows(ex, step, client, generator, by_conn)
    if target:
        # Nothing of a target's server is chainlab's to read.
        row.update(server_workers=0, server_cpus=None, server_cpu_s=None, server_cores=0)
    elif before is not None and after is not None:
        row.update(load_counters.deltas(before, after, row["wall_s"], plan.server_cores))
    eta = steps_left * (plan.step_s + estimate.LOAD_STEP_OVERHEAD_S)
    ex.ctx.progress.note(
        f"chainlab: {ex.plan.scenario_id}: load {step.kind} {step.index}: offered "
        f"{step.rate:.1f}/s, achieved {row['achieved_rate']:.1f}/s, {row['n_failed']} failed"
        + (f" (generator limited: {row['generator_note']})" if row["generator_limited"] else "")
        + f"; {steps_left} step(s) left, about {estimate.fmt_duration(eta)}"
    )
    return row, rows


def _server_records(ex: Visit, before: int, conn_ids: set[str]) -> list[dict]:
    """The server's records written after line `before` (as each connection closes, a
    writer's turn later), once every one of `conn_ids` is among them or after
    SERVER_RECORDS_WAIT_S. Waiting for the connections themselves, not a count of lines:
    a record of another connection (a late warm-up's) must not end the wait early."""
    t0 = time.monotonic()
    while True:
        server = [
            r
            for r in records.read(ex.server_records_path, after=before)
            if r.get("side") == "server"
        ]
        seen = {r.get("conn_id") for r in server}
        if conn_ids <= seen or time.monotonic() - t0 >= SERVER_RECORDS_WAIT_S:
            return server
        time.sleep(0.05)


def _rows(ex: Visit, step: Step, client, generator, by_conn) -> tuple[dict, list[dict]]:
    plan, run_id, sid = load_plan_of(ex), ex.ctx.run_id, ex.plan.scenario_id
    measured = [r for r in client if not r.get("warmup")]
    samples = []
    server_cpu = 0
    for r in measured:
        srv = by_conn.get(r.get("conn_id")) if r.get("conn_id") else None
        if srv is not None:
            server_cpu += srv.get("conn_cpu_ns") or srv.get("cpu_ns") or 0
        samples.append(
            {
                "run_id": run_id,
                "scenario_id": sid,
                "step": step.index,
                "seq": r["seq"],
                "intended_ns": r["intended_ns"],
                "sched_lag_ns": r.get("sched_lag_ns"),
                "latency_ns": r.get("latency_ns"),
                "total_ns": r.get("total_ns"),
                "outcome": r["outcome"],
                "error_category": r.get("error_category"),
                "resumed": r.get("resumed"),
                "client_cpu_ns": r.get("cpu_ns"),
                "server_cpu_ns": srv.get("cpu_ns") if srv else None,
                "server_conn_cpu_ns": srv.get("conn_cpu_ns") if srv else None,
                "client_kind": r.get("client_kind"),
                "chain_index": srv.get("chain_index") if srv else None,
            }
        )
    n_ok = sum(1 for r in measured if r["outcome"] == "ok")
    failures = collections.Counter(
        r.get("error_category") or "unknown" for r in measured if r["outcome"] != "ok"
    )
    wall_s = generator["wall_ns"] / 1e9
    cores = plan.generator_cores
    busy = generator["process_cpu_ns"] / generator["wall_ns"] / cores if wall_s else 0.0
    lags = [r["sched_lag_ns"] for r in measured if r.get("sched_lag_ns") is not None]
    lag_p99 = float(np.quantile(lags, 0.99)) if lags else 0.0
    latencies = [r["latency_ns"] for r in measured if r.get("latency_ns") is not None]
    latency_p99 = float(np.quantile(latencies, 0.99)) if latencies else 0.0
    notes = generator_notes(busy, cores, lag_p99, latency_p99)
    row = {
        "run_id": run_id,
        "scenario_id": sid,
        "step": step.index,
        "kind": step.kind,
        "fraction": step.fraction,
        "offered_rate": step.rate,
        "arrivals": plan.arrivals,
        "duration_s": step.duration_s,
        "timeout_ms": step.timeout_ms,
        "max_in_flight": in_flight(ex, step.rate),
        "server_workers": plan.server_workers,
        "server_cpus": plan.server_cpus,
        "generator_cpus": plan.generator_cpus,
        "scheduled": generator["scheduled"],
        "started": generator["started"],
        "n_ok": n_ok,
        "n_failed": len(measured) - n_ok,
        "n_saturated": generator["saturated"],
        "wall_s": wall_s,
        "achieved_rate": completions_in_window(measured, step.duration_s) / step.duration_s,
        "generator_cpu_s": generator["process_cpu_ns"] / 1e9,
        "generator_cores": cores,
        "generator_limited": bool(notes),
        "generator_note": "; ".join(notes) or None,
        "server_cpu_s": server_cpu / 1e9,
        "server_cores": plan.server_cores,
        "failures": dict(failures),
    }
    return row, samples
