"""The reference handshakes of the cost model (docs/methods/cost-model.md#cost-model): real
handshakes of a small classical and a larger ML-DSA chain (reference_specs.REFERENCES) through each
stack's own server and client, whose cost beyond their primitives is the stack's TLS
overhead; the full ones again over each other transport a stack runs in a campaign (its
overhead there) and over each emulated profile a campaign runs (the path's own CPU), and
one whose client idles for a slow SLH-DSA signature on each stack whose client waits that
long in a campaign (reference_specs.WAIT_REFERENCE: the wake-up's CPU), and the classical one
between
each pair of different stacks a campaign runs (reference_specs.PEER_REFERENCE: what a peer adds).
chainlab.runner.primitives takes them beside the primitives, from the same cache.
"""

from __future__ import annotations

from pathlib import Path

from chainlab.axes.algorithms import DEFAULT_TRANSPORT
from chainlab.axes.handshake import view as handshake_view
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import (
    PATH_REFERENCE_WARMUP,
    REFERENCE_COUNT,
    REFERENCE_WARMUP,
    NetworkProfile,
    Scenario,
)
from chainlab.errors import ChainlabError
from chainlab.model import algorithm_costs, estimate, reference_specs
from chainlab.runner.context import RunContext
from chainlab.runner.primitives_cache import now
from chainlab.runner.progress import Silent
from chainlab.runner.scenario import ScenarioExecution


class ReferenceFailed(ChainlabError):
    """Reference handshakes that did not complete."""


def reference_keys(
    stacks: list[str] | None = None,
    transports: list[tuple[str, str]] | None = None,
    peers: list[tuple[str, str]] | None = None,
) -> list[tuple[str, str, str, str | None]]:
    """(stack, subject, mode, message) of each reference handshake of each stack (message
    None), of each full one over each (stack, transport) of `transports`, and of the peer
    reference of each (client, server) of `peers` (the server's, message naming the client)."""
    keys: list[tuple[str, str, str, str | None]] = [
        (stack, reference_specs.REFERENCE_PREFIX + name, mode, None)
        for stack in (stacks or [DEFAULT_STACK])
        for name, (_h, _k, _s, modes) in reference_specs.REFERENCES.items()
        for mode in modes
    ]
    keys += [
        (stack, reference_specs.REFERENCE_PREFIX + name, "full", reference_message(None, transport))
        for stack, transport in transports or []
        for name in reference_specs.REFERENCES
    ]
    name, mode = reference_specs.PEER_REFERENCE
    return keys + [
        (
            server,
            reference_specs.REFERENCE_PREFIX + name,
            mode,
            reference_specs.PEER_PREFIX + client,
        )
        for client, server in peers or []
    ]


def peers_of(scenarios: list[Scenario]) -> list[tuple[str, str]]:
    """(client, server) of each scenario between two different stacks (a target's server is
    not chainlab's): the peer references to take."""
    out = set()
    for s in scenarios:
        h = handshake_view(s)
        if h.target is None and h.stacks[0] != h.stacks[1]:
            out.add(h.stacks)
    return sorted(out)


def wait_reference_key(stack: str) -> tuple[str, str, str, None]:
    """The cache and timing key of a stack's wait reference (reference_specs.WAIT_REFERENCE)."""
    return (stack, reference_specs.REFERENCE_PREFIX + reference_specs.WAIT_REFERENCE, "full", None)


def waits_of(scenarios: list[Scenario]) -> list[str]:
    """The client stacks of the scenarios whose client idles reference_specs.LONG_WAIT_MS or
    more for
    the server's signature (by the built-in signing times: chosen before this machine's
    primitives are measured): the wait references to take."""
    out = set()
    for s in scenarios:
        if s.target_spec is not None:
            continue
        sign_ms = sum(
            o.count * algorithm_costs.SIGN_VERIFY_MS.get(o.subject, (0.0, 0.0))[0]
            for o in estimate.scenario_operations(s)
            if o.side == "server" and o.op == "sign"
        )
        if sign_ms >= reference_specs.LONG_WAIT_MS:
            out.add(handshake_view(s).stacks[0])
    return sorted(out)


def transports_of(scenarios: list[Scenario]) -> list[tuple[str, str]]:
    """(stack, transport) of each side of each scenario that is not over TCP."""
    out = set()
    for s in scenarios:
        h = handshake_view(s)
        if h.quic and h.target is None:
            out |= {(stack, "quic") for stack in h.stacks}
    return sorted(out)


def reference_message(profile: NetworkProfile | None, transport: str) -> str | None:
    """A reference handshake's `message`: where it ran, loopback over TCP being None."""
    if profile is not None:
        return reference_specs.path_key(profile)
    return None if transport == DEFAULT_TRANSPORT else reference_specs.TRANSPORT_PREFIX + transport


def path_reference_keys(
    profile: NetworkProfile, stack: str = DEFAULT_STACK
) -> list[tuple[str, str, str, str]]:
    """The cache and timing keys of a stack's path references over `profile`, then of their
    loopback twins (reference_specs.PATH_BASE_PREFIX), in PATH_REFERENCES' order each."""
    return [
        (stack, reference_specs.REFERENCE_PREFIX + name, mode, message(profile))
        for message in (reference_specs.path_key, reference_specs.path_base_key)
        for name, mode in reference_specs.PATH_REFERENCES
    ]


def profiles_of(scenarios: list[Scenario]) -> list[tuple[NetworkProfile, str]]:
    """(profile, stack) of each emulated profile the scenarios run on and each stack (either
    side) that runs over it (a target's path is not chainlab's): where to take path references.
    Each stack's own: a 50 ms path added 0.45 ms of server CPU to OpenSSL 3.5's handshakes
    and less to rustls' (families.toml, 2026-11-27: rustls over it priced with OpenSSL's
    extra was +26-30 %)."""
    out: dict[tuple[str, str], tuple[NetworkProfile, str]] = {}
    for s in scenarios:
        if s.network_profile is not None and s.target_spec is None:
            for stack in handshake_view(s).stacks:
                out.setdefault((s.network, stack), (s.network_profile, stack))
    return list(out.values())


def time_reference(
    engine_bin: Path,
    name: str,
    mode: str,
    seed: int,
    workdir: Path,
    run_id: str,
    stack: str = DEFAULT_STACK,
    count: int = REFERENCE_COUNT,
    first_seq: int = 0,
    profile: NetworkProfile | None = None,
    carrier: str = DEFAULT_TRANSPORT,
    warmup: int | None = None,
    peer: str | None = None,
    twin_of: NetworkProfile | None = None,
    random_seed: int | None = None,
) -> tuple[list[dict], list[int]]:
    """`count` reference handshakes through a stack's real server and client: per
    handshake, latency, both sides' CPU and the bytes carried (numbered from `first_seq`);
    over the emulated path `profile` when given (uncalibrated: its CPU is what is wanted),
    over `carrier` (a transport) on loopback otherwise; from a client on `peer` when given
    (a peer reference); on loopback as the twin of the path reference over `twin_of` when
    given (reference_specs.PATH_BASE_PREFIX); both sides seeded with `random_seed` when
    given (the OpenSSL engines' --random-seed: the k-th handshake of two runs with one seed
    draws the same bytes). With them, the host reference readings (CPU ns) the scenario took
    at its start and end."""
    if warmup is None:
        warmup = REFERENCE_WARMUP if profile is None and twin_of is None else PATH_REFERENCE_WARMUP
    s = reference_specs.reference_scenario(name, mode, stack, count, profile, warmup, carrier, peer)
    if twin_of is not None:
        message: str | None = reference_specs.path_base_key(twin_of)
    elif peer:
        message = reference_specs.PEER_PREFIX + peer
    else:
        message = reference_message(profile, carrier)
    networks = {profile.name: profile} if profile is not None else {}
    ctx = RunContext(engine_bin, run_id, seed, workdir, networks, Silent())
    ctx.random_seed = random_seed
    if profile is not None:
        ctx.calibrations[profile.name] = {}  # no calibration: the scenarios' own run does it
    ex = ScenarioExecution(ctx, s)
    try:
        ex.prepare()
        ex.open()
        while not ex.step():
            pass
    finally:
        ex.close()
    if ex.state.failed_run:
        raise ReferenceFailed(
            f"reference handshakes {name} ({mode}, {stack}"
            + (f" from a {peer} client" if peer else "")
            + f", {carrier}) failed: "
            f"{ex.state.failure_cause}: {ex.state.failure_detail}"
        )
    at = now()
    out = []
    for r in ex.result().samples:
        if r["warmup"] or r["outcome"] != "ok" or r["server_cpu_ns"] is None:
            continue
        out.append(
            {
                "run_id": run_id,
                "implementation": stack,
                "subject": reference_specs.REFERENCE_PREFIX + name,
                "op": mode,
                "message": message,
                "message_bytes": None,
                "seq": first_seq + r["seq"],
                "wall_ns": r["total_ns"],
                "cpu_ns": r["client_cpu_ns"],
                "server_cpu_ns": r["server_cpu_ns"],
                "kib": (r["bytes_read"] + r["bytes_written"]) / 1024,
                "measured_run": run_id,
                "measured_at": at,
            }
        )
    return out, [h["cpu_ns"] for h in ex.results.host_reference]
