"""The cost model's inputs, measured (docs/methods/cost-model.md#cost-model): every cryptographic
primitive a set of scenarios uses, timed in-process by the `primitives` of an engine that
links the implementation that runs it (docs/methods/cost-model.md#implementations), and the
reference handshakes of each stack that measure the TLS overhead beyond them.

Sampling, per primitive: a pilot batch, then batches sized from the pilot's coefficient of
variation until the Student-t interval of the mean CPU time is within
`target_rel_halfwidth` of the mean, or the primitive's timed operations reach
`time_cap_s`, whichever comes first (so the slowest SLH-DSA signatures, over a second each,
stop at the cap: that is how a run's time stays bounded). Each batch is one engine process
whose first operation is an unrecorded warm-up.

Cache (chainlab.runner.primitives_cache): the rows are kept in a store per machine and engine
build, so a second campaign on the same machine takes them from there; a cached primitive that
does not meet the asked interval (and did not reach the cap) is measured further.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from chainlab import engine, stats
from chainlab.axes import credential as certificates
from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    ALGORITHM_NAMES,
    CERT_COMPRESSIONS,
    COMPOSITE_COMPONENTS,
    GROUPS,
)
from chainlab.axes.handshake import view as handshake_view
from chainlab.axes.stack import DEFAULT_STACK, OPENSSL_STACKS, OWN_MLDSA_AND_CLASSICAL
from chainlab.campaign import measure_plan
from chainlab.campaign.model import (
    BATCH_MAX_S,
    MAX_BATCHES,
    MIN_SAMPLES,
    PATH_REFERENCE_COUNT,
    PILOT,
    REFERENCE_COUNT,
    REFERENCE_KEPT_SHARE,
    REFERENCE_ROUNDS,
    WAIT_REFERENCE_COUNT,
    WAIT_REFERENCE_WARMUP,
    NetworkProfile,
    PrimitivesPlan,
    Scenario,
)
from chainlab.errors import ChainlabError
from chainlab.model import cost, cost_fit, estimate, implementations, reference_specs
from chainlab.runner import host, references, seeds
from chainlab.runner.primitives_cache import (
    cache_path,
    cached_index,
    now,
    save_to_cache,
)
from chainlab.store.views import summarize_rows

# The CertificateVerify content the engine signs (its CV_MESSAGE_BYTES).
CV_MESSAGE_BYTES = 130
# Engine process time beyond its operations (start, key generation of the slowest SLH-DSA
# sets): the batch timeout's margin.
BATCH_MARGIN_S = 60.0


class PrimitiveError(ChainlabError):
    pass


@dataclass(frozen=True)
class Item:
    """One primitive to time: its implementation, the engine that times it (a stack's, with
    flags: chainlab.model.implementations.timer) and the engine's --subject, --op,
    --message, --message-bytes."""

    subject: str
    op: str
    message: str | None
    message_bytes: int | None
    implementation: str = implementations.REFERENCE
    timer: implementations.Timer = implementations.Timer(implementations.REFERENCE)

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.subject, self.op, self.message)

    @property
    def timing_key(self) -> tuple[str, str, str, str | None]:
        """The cost model's key: (implementation, subject, op, message)."""
        return (self.implementation, *self.key)

    def argv(self) -> list[str]:
        out = ["--subject", self.subject, "--op", self.op, *self.timer.flags]
        if self.timer.engine not in OPENSSL_STACKS:
            # The other engines' `primitives` sign the CertificateVerify content only.
            return out
        if self.message is not None:
            out += ["--message", self.message]
        if self.message_bytes is not None and self.message != cost.CV:
            out += ["--message-bytes", str(self.message_bytes)]
        return out


def item_of(key, timer: implementations.Timer | None = None) -> Item:
    """The Item of a key (subject, op, message): the reference implementation's; or
    (implementation, subject, op, message), timed by `timer`."""
    if len(key) == 4:
        implementation, *key = key
        subject, op, message = key
    else:
        subject, op, message = key
        implementation = implementations.unrecorded(subject, op)
    if message == cost.CV:
        size = CV_MESSAGE_BYTES
    elif message == cost.CERT:
        size = cost.CERT_MESSAGE_BYTES
    elif op == "decompress":
        size = cost.DECOMPRESS_BYTES
    elif op == cost.MTC_VERIFY:
        size = certificates.MTC_VERIFY_HASHES  # the engine reads it as the proof's hashes
    else:
        size = None
    timer = timer or implementations.Timer(implementations.REFERENCE)
    return Item(subject, op, message, size, implementation, timer)


def _measured(ops, stacks: tuple[str, str], signing: str | None) -> dict:
    """timing key -> Timer: what the runner measures for these operations, each side with
    its stack's implementations."""
    out = {}
    for o in ops:
        stack = stacks[0] if o.side == "client" else stacks[1]
        key, t = implementations.measured_key(stack, signing, *o.key)
        out[key] = t
    return out


def items_for(scenarios: list[Scenario], with_references: bool = True) -> list[Item]:
    """Every primitive the scenarios' operations use, in the implementations that run them
    (and the references' own, for each stack the scenarios run), sorted."""
    keys: dict = {}
    for s in scenarios:
        stacks = handshake_view(s).stacks
        keys |= _measured(estimate.scenario_operations(s), stacks, estimate.signing(s))
    if with_references:
        for stack in stacks_of(scenarios):
            for hierarchy, kex, _served, modes in reference_specs.REFERENCES.values():
                for mode in modes:
                    keys |= _measured(cost.operations(hierarchy, kex, mode), (stack, stack), None)
        for stack in references.waits_of(scenarios):
            hierarchy, kex, _served, _modes = reference_specs.reference_spec(
                reference_specs.WAIT_REFERENCE
            )
            keys |= _measured(cost.operations(hierarchy, kex), (stack, stack), None)
    ordered = sorted(keys, key=lambda k: (k[0], k[1], k[2], k[3] or ""))
    return [item_of(k, keys[k]) for k in ordered]


def stacks_of(scenarios: list[Scenario]) -> list[str]:
    """The stacks the scenarios run, either side (the reference stack always: its overhead
    prices what another stack's lacks)."""
    out = {DEFAULT_STACK}
    for s in scenarios:
        out |= set(handshake_view(s).stacks)
    return sorted(out)


def all_items() -> list[Item]:
    """Every primitive chainlab can place, in the reference implementation: sign and verify
    (CertificateVerify and certificate) for every signature algorithm, accepting a Merkle
    Tree Certificate of its key, every group's operations, every decompression."""
    keys: set[tuple[str, str, str | None]] = set()
    for a in ALGORITHM_NAMES:
        if a in COMPOSITE_COMPONENTS:
            continue  # priced as its parts: its components' and M''s pre-hash (below)
        keys |= {(a, "sign", cost.CV), (a, "verify", cost.CV), (a, "verify", cost.CERT)}
        keys.add((a, cost.MTC_VERIFY, None))
    for prehash in {p for _, _, p in COMPOSITE_COMPONENTS.values()}:
        keys |= {(prehash, cost.PREHASH, cost.CV), (prehash, cost.PREHASH, cost.CERT)}
    for g in GROUPS:
        ops = ("keygen", "encaps", "decaps") if cost.is_kem(g) else ("keygen", "derive")
        keys |= {(g, op, None) for op in ops}
    keys |= {(c, "decompress", None) for c in CERT_COMPRESSIONS if c != "none"}
    return [item_of(k) for k in sorted(keys, key=lambda k: (k[0], k[1], k[2] or ""))]


def stack_items() -> list[Item]:
    """Every signature the other implementations' engines time (sign and verify over the
    CertificateVerify content): OpenSSL 4.0's, aws-lc's, BoringSSL's and Go's ML-DSA and
    classical algorithms, and liboqs' ML-DSA, to stand beside `all_items`' OpenSSL 3.5."""
    out = []
    others = [
        i for i in dict.fromkeys(implementations.OWN.values()) if i != implementations.REFERENCE
    ]
    for implementation in [*others, implementations.LIBOQS]:
        # liboqs' ML-DSA here; its families are in all_items (the OpenSSL engine's).
        for subject in OWN_MLDSA_AND_CLASSICAL:
            for op in implementations.SIGNATURE_OPS:
                timer = implementations.timer(implementation, subject, op, cost.CV)
                if timer is not None:
                    out.append(item_of((implementation, subject, op, cost.CV), timer))
    return out


# -- measuring -------------------------------------------------------------------------


def satisfied(values_ns: list[int], plan: PrimitivesPlan) -> bool:
    """Whether these operations' mean meets the plan: the interval, or the time cap."""
    if sum(values_ns) / 1e9 >= plan.time_cap_s:
        return True
    return (
        len(values_ns) >= MIN_SAMPLES
        and stats.relative_halfwidth(values_ns, plan.confidence) <= plan.target_rel_halfwidth
    )


def next_count(values_ns: list[int], plan: PrimitivesPlan) -> int:
    """Operations the next batch times: what the interval needs by the variance so far
    (the normal approximation of docs/sampling.md), within the time left under the cap and
    within BATCH_MAX_S."""
    if len(values_ns) < 2:
        return PILOT
    mean = sum(values_ns) / len(values_ns)
    sd = statistics.stdev(values_ns)
    z = stats.z_value(plan.confidence)
    need = math.ceil((z * sd / mean / plan.target_rel_halfwidth) ** 2)
    more = max(need - len(values_ns), MIN_SAMPLES - len(values_ns), 1)
    # 10 % beyond the estimate, so a batch rarely falls just short.
    more = math.ceil(more * 1.1)
    left = min(plan.time_cap_s - sum(values_ns) / 1e9, BATCH_MAX_S)
    by_time = max(1, math.floor(left * 1e9 / mean))
    return max(1, min(more, by_time))


def time_item(
    engine_bin: Path,
    item: Item,
    plan: PrimitivesPlan,
    have: list[dict],
    run_id: str,
    cpus: str | None = None,
    read: Callable[[], int] | None = None,
) -> tuple[list[dict], list[int]]:
    """New rows for `item` until it is satisfied (with `have`, earlier rows of it), on `cpus`
    when given, and the host readings `read` took between its batches. Each row names its
    batch (`batch`: 0 the first), which lies between readings `batch` and `batch + 1` of
    the host read before the first batch, these, and the host read after the last
    (`host.at_batches`)."""
    rows: list[dict] = []
    between: list[int] = []
    seq = max((r["seq"] for r in have), default=-1) + 1
    batches = MAX_BATCHES + math.ceil(plan.time_cap_s / BATCH_MAX_S)
    for batch in range(batches):
        values = [r["cpu_ns"] for r in have + rows]
        if satisfied(values, plan):
            break
        if batch > 0 and read is not None:
            between.append(read())
        count = next_count(values, plan)
        mean_s = (sum(values) / len(values) / 1e9) if values else None
        timeout = BATCH_MARGIN_S + (count + 1) * (mean_s or plan.time_cap_s) * 3
        binary = (
            engine_bin
            if item.timer.engine == DEFAULT_STACK
            else engine.stack_path(item.timer.engine)
        )
        argv = [str(binary), "primitives", *item.argv(), "--count", str(count), "--warmup", "1"]
        if cpus is not None:
            argv += ["--cpus", cpus]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PrimitiveError(
                f"primitive {item.implementation} {item.subject} {item.op}: {count} operations "
                f"took over {timeout:.0f} s"
            ) from None
        if done.returncode != 0:
            raise PrimitiveError(
                f"primitive {item.implementation} {item.subject} {item.op}: "
                + (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            )
        at = now()
        for line in done.stdout.splitlines():
            rec = json.loads(line)
            if rec.get("warmup"):
                continue
            rows.append(
                {
                    "run_id": run_id,
                    "implementation": item.implementation,
                    "subject": item.subject,
                    "op": item.op,
                    "message": item.message,
                    "message_bytes": rec.get("message_bytes"),
                    "seq": seq,
                    "wall_ns": rec["wall_ns"],
                    "cpu_ns": rec["cpu_ns"],
                    "server_cpu_ns": None,
                    "kib": None,
                    "measured_run": run_id,
                    "measured_at": at,
                    "batch": batch,
                }
            )
            seq += 1
    return rows, between


@dataclass
class Outcome:
    rows: list[dict]  # every row the caller keeps (cached + measured)
    measured: int  # primitives measured now
    cached: int  # primitives taken from the cache whole
    seconds: float
    cache_note: str | None
    # Path references that could not be taken (no privileges for namespaces, a failed link):
    # their scenarios are priced without the path's extra.
    path_notes: list[str] = field(default_factory=list)
    # Measurements taken again because the host's speed moved during them (host.steady).
    host_notes: list[str] = field(default_factory=list)


def ensure(
    engine_bin: Path,
    items: list[Item],
    plan: PrimitivesPlan,
    run_id: str,
    workdir: Path,
    seed: int = 1,
    with_references: bool = True,
    read_cache: bool = True,
    write_cache: bool = True,
    on_item: Callable[[Item, int, int], None] | None = None,
    stacks: list[str] | None = None,
    profiles: list[tuple[NetworkProfile, str]] | None = None,
    transports: list[tuple[str, str]] | None = None,
    host_reading: Callable[[], int] | None = None,
    waits: list[str] | None = None,
    peers: list[tuple[str, str]] | None = None,
) -> Outcome:
    """Rows for every item (and the reference handshakes of each of `stacks`, the reference
    stack's when None; the full ones again over each (stack, transport) of `transports`; the
    path references over each (profile, stack) of `profiles`; the wait reference of each stack
    of `waits`; the peer reference of each (client, server) of `peers`),
    from the cache where it holds enough, measured otherwise; new rows are added to the
    cache. What is measured is measured on a steady host (`host.steady`, each measurement
    bracketed by `host_reading`: the host reference workload's wall ns by default)."""
    t0 = time.monotonic()
    info = engine.info()
    path = cache_path(info)
    refs = references.reference_keys(stacks, transports, peers) if with_references else []
    wanted = [item.timing_key for item in items] + refs
    wanted += [
        k
        for profile, stack in profiles or []
        for k in references.path_reference_keys(profile, stack)
    ]
    wanted += [references.wait_reference_key(stack) for stack in waits or []]
    by_key = cached_index(path, wanted) if read_cache else {}
    keep: list[dict] = []
    new: list[dict] = []
    total = len(items) + len(refs)
    shown: list[Item] = []

    def show(item: Item) -> None:
        # Once per item: a measurement taken again (host.steady) is not a new item.
        if on_item is not None and item not in shown:
            shown.append(item)
            on_item(item, len(shown) - 1, total)

    for item in items:
        have = by_key.get(item.timing_key, [])
        keep += [{**r, "run_id": run_id, "implementation": item.implementation} for r in have]
    fresh_items = [item for item in items if needs_measuring(item, by_key, plan)]
    # Each primitive on one CPU, the host read on that CPU around it: a shared VM's CPUs are
    # not equally fast at once (host.reference). Reference handshakes run where the kernel
    # puts their two processes, as scenarios do, and read every CPU.
    cpu = str(min(os.sched_getaffinity(0)))
    read = host_reading or _host_reading(engine_bin)

    read_cpu = host_reading or _host_reading(engine_bin, cpu)

    def time_one(item: Item) -> tuple[tuple[list[dict], list[int]], list[int]]:
        # The readings between its batches scale each batch (host.at_batches); whether
        # the host moved during the primitive is judged, as for any unit, by the readings
        # before and after it.
        show(item)
        have = by_key.get(item.timing_key, [])
        return time_item(engine_bin, item, plan, have, run_id, cpus=cpu, read=read_cpu), []

    timed = host.steady(fresh_items, time_one, read_cpu)
    for (got, between), seen in zip(timed.results, timed.seen, strict=True):
        got = host.at_batches(got, [seen[0], *between, seen[-1]])
        new += got
        keep += got
    n_measured = sum(bool(got) for got, _ in timed.results)
    n_cached = len(items) - n_measured
    host_notes = timed.notes(lambda i: _label(fresh_items[i]))

    missing = []
    for key in refs:
        have = by_key.get(key, [])
        if not needs_measuring(key, by_key, plan):
            n_cached += 1
            keep += [{**r, "run_id": run_id, "implementation": key[0]} for r in have]
        else:
            missing.append(key)
    n_measured += len(missing)
    per_round = math.ceil(REFERENCE_COUNT / REFERENCE_ROUNDS)
    # Round by round over every reference set, so a set's rounds lie apart in time.
    rounds = [(round_, key) for round_ in range(REFERENCE_ROUNDS) for key in missing]

    def time_round(unit) -> tuple[list[dict], list[int]]:
        round_, (stack, subject, mode, message) = unit
        if round_ == 0:
            show(Item(subject, mode, None, None, stack))
        try:
            return references.time_reference(
                engine_bin,
                subject[len(reference_specs.REFERENCE_PREFIX) :],
                mode,
                seed,
                workdir,
                run_id,
                stack,
                per_round,
                first_seq=round_ * per_round,
                carrier=reference_specs.transport_of(message),
                peer=reference_specs.peer_of(message),
            )
        except references.ReferenceFailed as e:
            raise PrimitiveError(str(e)) from e

    timed = host.steady(rounds, time_round, read)
    for got, around in zip(timed.results, timed.host_ns, strict=True):
        got = host.at_host(got, [around])
        new += got
        keep += got
    host_notes += timed.notes(
        lambda i: (
            f"reference handshakes {rounds[i][1][1]} {rounds[i][1][2]} "
            f"({rounds[i][1][0]}), round {rounds[i][0] + 1}"
        )
    )
    path_notes = []
    for profile, stack in profiles or []:
        keys = references.path_reference_keys(profile, stack)
        if not any(needs_measuring(key, by_key, plan) for key in keys):
            n_cached += len(keys)
            for key in keys:
                keep += [{**r, "run_id": run_id, "implementation": key[0]} for r in by_key[key]]
            continue
        for name, mode in reference_specs.PATH_REFERENCES:
            try:
                got = _path_and_twin(engine_bin, name, mode, seed, workdir, run_id, stack, profile)
            except references.ReferenceFailed as e:
                path_notes.append(f"{profile.name} ({stack}, {name}): {e}")
                continue
            n_measured += 2
            new += got
            keep += got
    for stack in waits or []:
        key = references.wait_reference_key(stack)
        have = by_key.get(key, [])
        if not needs_measuring(key, by_key, plan):
            n_cached += 1
            keep += [{**r, "run_id": run_id, "implementation": key[0]} for r in have]
            continue
        try:
            got, readings = references.time_reference(
                engine_bin, reference_specs.WAIT_REFERENCE, "full", seed, workdir, run_id, stack,
                WAIT_REFERENCE_COUNT, warmup=WAIT_REFERENCE_WARMUP,
            )  # fmt: skip
        except references.ReferenceFailed as e:
            raise PrimitiveError(str(e)) from e
        got = host.at_host(got, readings)
        n_measured += 1
        new += got
        keep += got
    note = save_to_cache(path, new, info) if write_cache else None
    return Outcome(keep, n_measured, n_cached, time.monotonic() - t0, note, path_notes, host_notes)


def _path_and_twin(
    engine_bin: Path,
    name: str,
    mode: str,
    seed: int,
    workdir: Path,
    run_id: str,
    stack: str,
    profile: NetworkProfile,
) -> list[dict]:
    """A path reference over `profile` and its loopback twin around it, so the path's extra is
    measured against the host as it was then (reference_specs.PATH_BASE_PREFIX), in two
    halves taken twin, path, path, twin: the first half of each seeded alike, the second
    alike, on a stack whose engine takes --random-seed. Each handshake of the path then has
    one on loopback that draws the same bytes: the same transcript, and the same number of
    rounds of ML-DSA signing's rejection loop, whose spread (a server CPU's sd of 0.6-0.9 ms
    on OpenSSL 3.5 against 1.3-2.3 ms means) had made the difference of two sets of 30 off
    by 0.5 ms (one cache's extra 1.04 ± 0.20 ms, another's 0.53 ± 0.15; 2026-11-30)."""
    half = PATH_REFERENCE_COUNT // 2
    common = (engine_bin, name, mode, seed, workdir, run_id, stack)
    seeded = stacks.has(stack, measure_plan.SEEDED)
    first, second = (
        seeds.derive(seed, "path-reference", stack, profile.name, name, mode, part)
        if seeded
        else None
        for part in (1, 2)
    )
    rest = PATH_REFERENCE_COUNT - half
    before, h1 = references.time_reference(*common, half, twin_of=profile, random_seed=first)
    over1, h2 = references.time_reference(*common, half, profile=profile, random_seed=first)
    over2, h3 = references.time_reference(
        *common, rest, first_seq=half, profile=profile, random_seed=second
    )
    after, h4 = references.time_reference(
        *common, rest, first_seq=half, twin_of=profile, random_seed=second
    )
    # One host speed for the four, so the path's extra over its twin is scaled as one.
    return host.at_host(before + over1 + over2 + after, [*h1, *h2, *h3, *h4])


def _host_reading(engine_bin: Path, cpus: str | None = None) -> Callable[[], int]:
    """The host reference workload's CPU time on `cpus` (None: every CPU's mean), for
    `host.steady`."""

    def read() -> int:
        try:
            return host.reference(engine_bin, cpus)["cpu_ns"]
        except host.ReferenceError as e:
            raise PrimitiveError(f"the host reference workload failed: {e}") from None

    return read


def _label(item: Item) -> str:
    return f"{item.implementation} {item.subject} {item.op}" + (
        f" ({item.message})" if item.message else ""
    )


def needs_measuring(item: Item | tuple, by_key: dict, plan: PrimitivesPlan) -> bool:
    """Whether the cache (`cache_index`) lacks enough of a primitive (an Item) or of a
    reference handshake (its key: stack, subject, mode, None) for `plan`."""
    if isinstance(item, Item):
        return not satisfied([r["cpu_ns"] for r in by_key.get(item.timing_key, [])], plan)
    path = reference_specs.is_path_reference(item[3])
    wait = item[1] == reference_specs.REFERENCE_PREFIX + reference_specs.WAIT_REFERENCE
    need = PATH_REFERENCE_COUNT if path else WAIT_REFERENCE_COUNT if wait else REFERENCE_COUNT
    return len(by_key.get(item, [])) < need * REFERENCE_KEPT_SHARE


def model(rows: list[dict], source: str) -> cost.CostModel:
    """The cost model of these rows (through a throw-away in-memory summary; where the rows
    are in a store already, `model_of_summary` of its own summary is quicker: interop.toml's
    83,000 rows took 0.27 s this way, 0.04 s the store's, 2026-12-01)."""
    return model_of_summary(summarize_rows(pd.DataFrame(rows)), source)


def model_of_summary(summary: pd.DataFrame, source: str) -> cost.CostModel:
    """The cost model of a primitive summary (`Store.primitive_summary`)."""
    return cost_fit.model_from_summary(summary.to_dict("records"), source)
