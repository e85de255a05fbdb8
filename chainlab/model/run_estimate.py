"""The run-time estimate of a whole run: each scenario's estimate
(chainlab.model.estimate.scenario) plus what a run does before and between them, which
depends on this machine's caches:

    run = RUN_START_S
        + primitives to measure      (each: its batches' engine starts and set-up, and the
                                      operations its interval needs, within the time cap)
        + reference handshakes to take (each: REFERENCE_ROUNDS rounds of a server and client
                                      start and REFERENCE_COUNT / rounds + warm-up handshakes)
        + hierarchies to generate    (each: its signatures; the root signs itself and its
                                      child, each intermediate its child; an MTC batch's
                                      log entries)
        + calibrations               (each emulated profile once)
        + the scenarios

`Fresh` lists what the caches lack (chainlab.runner.fresh reads them, for `validate` and for a
run). A run stores its estimate with its Fresh (`runs.estimate`), so the estimate of a stored
run can be made again from the store alone and compared with the wall time the run took
(`chainlab bench model`; tests/model/test_run_estimate_stores.py).

Constants were measured on this 2-core machine kind (2026-11-27) and say where from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from chainlab.axes.handshake import closes_later
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import (
    BATCH_MAX_S,
    PATH_REFERENCE_COUNT,
    PATH_REFERENCE_WARMUP,
    PILOT,
    REFERENCE_COUNT,
    REFERENCE_ROUNDS,
    REFERENCE_WARMUP,
    WAIT_REFERENCE_COUNT,
    WAIT_REFERENCE_WARMUP,
    NetworkProfile,
    PrimitivesPlan,
    Scenario,
)
from chainlab.model import (
    cost,
    estimate,
    host_speed,
    implementations,
    orchestration,
    reference_specs,
)
from chainlab.model.algorithm_costs import SIGN_VERIFY_MS
from chainlab.model.calibration_time import calibration_seconds, calibration_total

# A run's own start before its first scenario (the engine's build facts, the store, reading
# the primitives cache): 0.59 s with every cache warm in a signature-placement.toml run; and
# where it reads other processes' load, what that window (host_speed.LOAD_WINDOW_S) lasts
# beyond the store's opening and the caches' reading, which it watches through
# (chainlab.runner.host.LoadWatch): those took 0.20-0.22 s of it in quick.toml's runs,
# the window and the estimate after them 0.09-0.11 s (2026-12-01).
RUN_START_S = 0.6
LOAD_WINDOW_LEFT_S = 0.1
# How far a run strays from its estimate beyond what its handshake counts allow: the model's
# own error (per-handshake and per-process costs on a host whose speed swings). Over every
# bundled campaign's runs of 2026-11-27 and -28, estimate / wall time fell between 0.88
# (mtc.toml: the run took 1.14x its estimate) and 1.08; the range widens the counts' range by
# this share each way, so a fixed-count campaign's range is not a single figure.
MODEL_SPREAD = 0.15

# -- primitives (chainlab.runner.primitives) ---------------------------------------------
# One engine process per batch: its start and key generation, apart from the operations.
# Items of 5 operations followed each other every 4-5 ms on the OpenSSL, BoringSSL and Go
# engines and every 33 ms on the rustls engine (v13-stacks store).
ENGINE_START_S = {"rustls": 0.033}
ENGINE_START_DEFAULT_S = 0.005
# A primitive its pilot batch satisfies takes one batch; any other took three (pilot, sized
# batch, top-up) in the runs above.
BATCHES_AFTER_PILOT = 3
# The spread of one operation's time, for the operations its interval needs (the count a
# 2 % interval took, n = (1.96 cv / 0.02)^2, read back as a cv). ML-DSA signing repeats its
# rejection loop a geometric number of times (estimate.CV_REJECTION_SIGN). Operations under
# 2 ms carry the scheduler's noise: most meet the interval in their pilot of 5 (cv under
# 0.03), some take hundreds (X25519 derive 1832 once, cv 0.44); 0.05 (24 operations, three
# batches) prices the usual one. From 2 ms on (SLH-DSA-SHAKE-128f verify, signing) they vary
# by a per cent or two, so their pilot batch suffices.
CV_FAST_OPERATION = 0.05
CV_SLOW_OPERATION = 0.02
SLOW_OPERATION_MS = 2.0
# An operation with no timing yet (a key exchange's step, a decompression): microseconds.
UNTIMED_OP_MS = 0.05
# The host reference read after each primitive's batch and each reference round (runner.
# host.steady, runner.primitives.time_item):
# its 8 rounds of SHAKE-256 (~20 ms) and the engine process's start.
HOST_READING_S = 0.025

# -- reference handshakes (chainlab.runner.primitives.time_reference) --------------------
# Each round starts a server and a client and times the host; 0.24-0.30 s per round and
# reference in the runs above, of which 120 handshakes took about 0.12 s; once a server
# stopped in 2 ms, 0.18 s per round with 120 handshakes of 0.26-0.74 ms (quick.toml, cold).
REFERENCE_ROUND_START_S = 0.12
# A reference handshake not yet measured on this stack (ECDSA or ML-DSA-44, loopback).
REFERENCE_HANDSHAKE_MS = 1.0

# -- hierarchies (chainlab.runner.pki) ---------------------------------------------------
# `chainlab-engine pki` beyond its signatures: 0.01 s for an ML-DSA-65 pair; an SLH-DSA-
# SHAKE-192s root over two ML-DSA-65 certificates took 2.73 s (two 1.3 s signatures).
PKI_START_S = 0.01
# Issuing a Merkle Tree Certificate batch (`pki --mtc-batch N`): its log entries hashed into a
# tree, ~0.85 us an entry. In an mtc.toml run after an engine rebuild (2026-11-28), each
# scenario first issuing a 2^22-entry batch took 3.4-3.7 s beyond its estimate; `pki` for
# one took 5.0 s under load and 0.03 s for 4096 entries.
MTC_ENTRY_S = 0.85e-6


@dataclass(frozen=True)
class Fresh:
    """What a run must make because this machine's caches lack it: primitives to measure
    (engine, implementation, subject, op, message), reference handshakes to take (stack,
    subject, mode, message: None, or a path reference's reference_specs.path_key) and hierarchies to
    generate (the first scenario needing it, algorithms root first)."""

    primitives: tuple[tuple[str, str, str, str, str | None], ...] = ()
    references: tuple[tuple[str, str, str, str | None], ...] = ()
    # (scenario, hierarchy, MTC batch size: 0 without MTCs)
    hierarchies: tuple[tuple[str, tuple[str, ...], int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "primitives": [list(p) for p in self.primitives],
            "references": [list(r) for r in self.references],
            "hierarchies": [[sid, list(h), batch] for sid, h, batch in self.hierarchies],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Fresh:
        # Lists as stored, read back as the tuples they were (JSON keeps no tuple).
        primitives: Any = tuple(tuple(p) for p in d.get("primitives", []))
        references: Any = tuple(tuple(r) for r in d.get("references", []))
        return cls(
            primitives,
            references,
            # A run before MTC batches were priced stored (scenario, hierarchy).
            tuple((x[0], tuple(x[1]), x[2] if len(x) > 2 else 0) for x in d.get("hierarchies", [])),
        )


@dataclass(frozen=True)
class RunEstimate:
    """A run's estimated wall time: expected, and the range its adaptive scenarios allow
    widened by the model's own error (MODEL_SPREAD);
    `phases` the expected seconds of each part; `fresh` what it was made for."""

    low_s: float
    expected_s: float
    high_s: float
    phases: dict[str, float]
    fresh: Fresh = field(default_factory=Fresh)
    # Per scenario (for the ETA): the hierarchies it generates first, in seconds.
    hierarchies_s: dict[str, float] = field(default_factory=dict)
    # The least latency spread it took a handshake's to be (CostModel.noise_cv).
    noise_cv: float = 0.0
    # The host reading it priced at (CPU ns; host_speed.at_reading), None: the model's own.
    host_reading_ns: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "low_s": self.low_s,
            "expected_s": self.expected_s,
            "high_s": self.high_s,
            "phases": self.phases,
            "fresh": self.fresh.to_json(),
            "noise_cv": self.noise_cv,
            "host_reading_ns": self.host_reading_ns,
        }


def run(
    scenarios: list[Scenario],
    model: cost.CostModel | None = None,
    fresh: Fresh | None = None,
    plan: PrimitivesPlan | None = None,
    load_read: bool = False,
    windowed: bool = True,
    host_reading_ns: float | None = None,
) -> RunEstimate:
    """The estimate of running `scenarios` with `fresh` to make first, primitives measured
    by `plan` (the cost model `model`, else the built-in table, prices handshakes and
    operations); `load_read`: the run starts by reading other processes' load (whose spread
    `model.noise_cv` holds); `windowed`: scenarios share host-reading windows (runs before
    them read the host and committed once per scenario); `host_reading_ns`: the reading
    `model` was brought to (host_speed.at_reading), kept with the estimate."""

    def windows(seconds: list[float]) -> float:
        n = host_speed.windows(seconds) if windowed else len(seconds)
        return host_speed.WINDOW_COST_S * n

    fresh = fresh or Fresh()
    plan = plan or PrimitivesPlan()
    paths = {s.network: s.network_profile for s in scenarios if s.network_profile is not None}
    own = {s.scenario_id: estimate.scenario(s, model) for s in scenarios}
    pki: dict[str, float] = {}
    for sid, hierarchy, batch in fresh.hierarchies:
        pki[sid] = pki.get(sid, 0.0) + hierarchy_seconds(hierarchy, model, batch)
    _, calibration = calibration_total(scenarios)
    phases = {
        "start": RUN_START_S + (LOAD_WINDOW_LEFT_S if load_read else 0.0),
        "primitives": sum(primitive_seconds(p, model, plan) for p in fresh.primitives),
        "references": sum(reference_seconds(r, model, paths) for r in fresh.references),
        "hierarchies": sum(pki.values()),
        "calibration": calibration,
        "scenarios": sum(e.seconds_expected for e in own.values()),
        # Their host readings and store commits, one of each per window.
        "windows": windows([e.seconds_expected for e in own.values()]),
    }
    fixed = sum(v for k, v in phases.items() if k not in ("scenarios", "windows"))
    low = windows([e.seconds_low for e in own.values()])
    high = windows([e.seconds_high for e in own.values()])
    return RunEstimate(
        (1 - MODEL_SPREAD) * (fixed + low + sum(e.seconds_low for e in own.values())),
        fixed + phases["scenarios"] + phases["windows"],
        (1 + MODEL_SPREAD) * (fixed + high + sum(e.seconds_high for e in own.values())),
        phases,
        fresh,
        pki,
        model.noise_cv if model is not None else 0.0,
        host_reading_ns,
    )


def _op_ms(
    implementation: str, subject: str, op: str, message: str | None, model: cost.CostModel | None
) -> float:
    if model is not None:
        t = model.timings.get((implementation, subject, op, message))
        if t is not None:
            return t.mean_ms
    if op in ("sign", "verify") and subject in SIGN_VERIFY_MS:
        return SIGN_VERIFY_MS[subject][op == "verify"]
    return UNTIMED_OP_MS


def primitive_seconds(
    p: tuple[str, str, str, str, str | None],
    model: cost.CostModel | None = None,
    plan: PrimitivesPlan | None = None,
) -> float:
    """Measuring one primitive (engine, implementation, subject, op, message) under `plan`
    (chainlab.runner.primitives: batches until the interval or the time cap)."""
    plan = plan or PrimitivesPlan()
    engine, implementation, subject, op, message = p
    op_ms = _op_ms(implementation, subject, op, message, model)
    if op == "sign" and subject in estimate.REJECTION_SIGNERS:
        cv = estimate.CV_REJECTION_SIGN
    else:
        cv = CV_FAST_OPERATION if op_ms < SLOW_OPERATION_MS else CV_SLOW_OPERATION
    z = NormalDist().inv_cdf(0.5 + plan.confidence / 2)
    need = math.ceil((z * cv / plan.target_rel_halfwidth) ** 2)
    cap_ops = max(PILOT, math.floor(plan.time_cap_s * 1000 / op_ms))
    n = min(max(need, PILOT), cap_ops)
    # After the pilot, batches of at most BATCH_MAX_S each, the host read between two.
    after_pilot = max(BATCHES_AFTER_PILOT - 1, math.ceil(n * op_ms / 1000 / BATCH_MAX_S))
    batches = 1 if n <= PILOT else 1 + after_pilot
    # Each batch: its engine's start, one warm-up operation and, for a verification, the
    # signature it verifies.
    setup_ms = op_ms
    if op == "verify":
        setup_ms += _op_ms(implementation, subject, "sign", message, model)
    start = ENGINE_START_S.get(engine, ENGINE_START_DEFAULT_S)
    return batches * (HOST_READING_S + start + setup_ms / 1000) + n * op_ms / 1000


def reference_seconds(
    r: tuple[str, str, str, str | None] | tuple[str, str, str],
    model: cost.CostModel | None = None,
    paths: Mapping[str, NetworkProfile] | None = None,
) -> float:
    """Taking one stack's reference handshakes (stack, subject, mode, message) in their
    rounds; a path reference (its message names the profile, one of `paths`) in two halves,
    each over a link of its own, each handshake paying the path's round trips, and its
    loopback twin in two; a wait reference in one round, each handshake paying the server's
    SLH-DSA signature."""
    stack, subject, mode = r[:3]
    message = r[3] if len(r) > 3 else None
    if message is not None and message.startswith(reference_specs.PATH_PREFIX):
        profile = (paths or {}).get(reference_specs.path_profile(message))
        rtt = 2 * profile.delay_ms if profile is not None else 0.0
        name = subject[len(reference_specs.REFERENCE_PREFIX) :]
        # Its handshake over the path as a scenario's: the round trips its flights need (the
        # ML-DSA reference's 15 KiB one more than the ECDSA one's, past the initial window:
        # 2.9 s against 2.0 s per half over 50 ms, 2026-11-30), and the close's unless the
        # client reads it after the next handshake.
        s = reference_specs.reference_scenario(name, mode, stack, profile=profile)
        ms = estimate.network_cost(s, model).mean_ms
        if not closes_later(stack, profile, resumes=mode != "full"):
            ms += rtt
        # Two halves (chainlab.runner.primitives._path_and_twin), each over a link of its own.
        rounds = PATH_REFERENCE_COUNT + 2 * PATH_REFERENCE_WARMUP
        return 2 * (orchestration.LINK_S + REFERENCE_ROUND_START_S) + rounds * ms / 1000
    if message is not None and message.startswith(reference_specs.PATH_BASE_PREFIX):
        # Its loopback twin: two rounds (before and after it) of half the count each.
        twin_round = PATH_REFERENCE_COUNT / 2 + PATH_REFERENCE_WARMUP
        return 2 * (REFERENCE_ROUND_START_S + twin_round * REFERENCE_HANDSHAKE_MS / 1000)
    if subject == reference_specs.REFERENCE_PREFIX + reference_specs.WAIT_REFERENCE:
        # One round; each handshake waits for the server's SLH-DSA signature.
        hierarchy, *_ = reference_specs.reference_spec(reference_specs.WAIT_REFERENCE)
        impl = implementations.of(stack, None, hierarchy[-1], "sign")
        ms = REFERENCE_HANDSHAKE_MS + _op_ms(impl, hierarchy[-1], "sign", cost.CV, model)
        per_round = WAIT_REFERENCE_COUNT + WAIT_REFERENCE_WARMUP
        return HOST_READING_S + REFERENCE_ROUND_START_S + per_round * ms / 1000
    ms = REFERENCE_HANDSHAKE_MS
    if model is not None:
        name = subject.split(":", 1)[-1]
        over = reference_specs.overhead_key(stack, reference_specs.transport_of(message))
        got = model.stack_references.get(over, {}).get((name, mode))
        if got is not None:
            ms = got["latency"]
    rounds_each = REFERENCE_COUNT / REFERENCE_ROUNDS + REFERENCE_WARMUP
    return REFERENCE_ROUNDS * (
        HOST_READING_S
        + REFERENCE_ROUND_START_S
        + rounds_each * (ms + orchestration.connection_gap_ms(stack)) / 1000
    )


def hierarchy_seconds(
    hierarchy: tuple[str, ...], model: cost.CostModel | None = None, mtc_batch: int = 0
) -> float:
    """Generating one hierarchy (root first): the root signs itself and its child, each
    intermediate its child; keys and the leaf cost next to nothing beside them; with MTCs,
    their batch's log entries (MTC_ENTRY_S)."""
    signs = [1 + (len(hierarchy) > 1)] + [1] * max(len(hierarchy) - 2, 0)
    ms = 0.0
    for alg, n in zip(hierarchy, signs, strict=False):
        impl = implementations.of(DEFAULT_STACK, None, alg, "sign")
        ms += n * _op_ms(impl, alg, "sign", cost.CV, model)
    return PKI_START_S + ms / 1000 + mtc_batch * MTC_ENTRY_S


def cluster_seconds(
    scenarios: list[Scenario], workers: int, model: cost.CostModel | None = None
) -> tuple[float, float]:
    """Estimated wall time of a campaign on `workers` worker hosts, one scenario at a time
    each (chainlab.runner.executors), and the busiest host's share of the work: each
    scenario's expected time, plus its profile's calibration (a worker calibrates per
    scenario), dealt longest first to the least loaded host (LPT; within 4/3 of the best
    schedule, Graham 1969)."""
    if workers < 1:
        raise ValueError(f"workers = {workers}; allowed: at least 1")
    jobs = sorted(
        (
            estimate.scenario(s, model).seconds_expected
            + (calibration_seconds(s.network_profile) if s.network_profile else 0.0)
            for s in scenarios
        ),
        reverse=True,
    )
    hosts = [0.0] * workers
    for t in jobs:
        hosts[hosts.index(min(hosts))] += t
    total = sum(jobs)
    return max(hosts), (max(hosts) / total if total else 0.0)
