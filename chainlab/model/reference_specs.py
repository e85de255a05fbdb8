"""The reference handshakes the cost model's overhead lines are fitted on, and the names
their stored rows carry (docs/methods/cost-model.md#cost-model): what each reference runs,
and how a row's `message` names its path, transport or peer (chainlab.runner.primitives
measures them; chainlab.model.cost and cost_fit read them)."""

from __future__ import annotations

import hashlib
import json

from chainlab import axes
from chainlab.axes.algorithms import DEFAULT_TRANSPORT
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import (
    REFERENCE_COUNT,
    REFERENCE_WARMUP,
    NetworkProfile,
    SamplingPolicy,
    Scenario,
)
from chainlab.network.profile import LOOPBACK

# Reference handshakes that measure the TLS overhead (chainlab.runner.primitives runs them
# through the real server and client, on loopback): a small classical chain and a larger
# post-quantum one with fast signatures, so the overhead's growth with the bytes a handshake
# carries is measured, not assumed. name -> (hierarchy, group, served chain, modes).
REFERENCES: dict[str, tuple[tuple[str, ...], str, str, tuple[str, ...]]] = {
    "ecdsa": (("ECDSA-P256", "ECDSA-P256"), "X25519", "leaf+intermediates", ("full", "resumed")),
    "mldsa": (("ML-DSA-44", "ML-DSA-44", "ML-DSA-44"), "X25519", "full", ("full",)),
}
REFERENCE_PREFIX = "tls-reference:"
# The full reference handshakes also taken over each emulated path a campaign runs (their
# `message` is PATH_PREFIX + the profile's name and digest: chainlab.runner.primitives). One
# connection at a time, a 50 ms path adds CPU per handshake that loopback's references do not
# pay: each wait's sleep and wake-up, and a flight's segments read as they arrive (loopback
# carries a flight in one 64 KiB segment, a 1500-byte MTU in one per 1.4 KiB). It grows with
# the bytes: over 50 ms (2026-11-28, one run) the ECDSA reference (1.2 KiB) added 0.25 ms of
# client and 0.20 ms of server CPU on OpenSSL 3.5, the ML-DSA one (15 KiB) 0.48 and 0.34;
# BoringSSL 0.20 / 0.13 and 0.37 / 0.16. Priced with the ECDSA one alone, mtc.toml's
# ML-DSA chains over the path fell 10-30 % short. The model draws a line in KiB through the
# two extras (as the overhead line, cost_fit.path_extras) and adds it at a scenario's bytes
# to each scenario on that path; a store with one of them (before 2026-11-28) is flat.
PATH_REFERENCES = (("ecdsa", "full"), ("mldsa", "full"))
PATH_PREFIX = "path:"
# Each path reference's loopback twin, taken in the same minute (half just before it, half
# just after: `message` PATH_BASE_PREFIX + the profile's name and digest), is what the path's
# extra is measured against, not the stack's loopback references, which the cache may have
# kept from hours before: on this VM the host's speed moves that much between runs. With
# the cached ones (taken 12 h before), composite.toml's rustls server over a 50 ms path was
# priced -2 to +22 % (three of six +17 % or more) and on loopback -12 to -23 % (2026-11-29):
# the path's extra had absorbed the host's slowdown since then.
PATH_BASE_PREFIX = "path-base:"
# How a path reference and its twin are taken (chainlab.runner.primitives._path_and_twin):
# 2 since 2026-11-30, in halves seeded alike on the stacks that take --random-seed; 1 before,
# unseeded.
PATH_METHOD = 2
# A side that idles this long for its peer's signature (the server's SLH-DSA CertificateVerify
# before the client can go on) wakes to cold caches: its work after the wait cost 0.4-0.8 ms
# more CPU than the primitives timed back to back and the overhead line predict, after an
# SLH-DSA-SHAKE-128f signature (42 ms: levers.toml's and quick.toml's clients -12 to -16 %)
# as after a 192s one (1.5 s: the paper matrix's, -11 to -23 %), while ML-DSA's 1 ms waits
# priced within 5 % (2026-11-27): the cost of one sleep and wake-up, as a path's waits cost
# (PATH_REFERENCES).
LONG_WAIT_MS = 10.0
# The wait reference: a full handshake whose server signs with SLH-DSA-SHAKE-128f (~42 ms
# here), so its client idles past LONG_WAIT_MS once, taken on each stack whose client waits
# that long in a campaign. What its client CPU measures beyond its primitives and the
# stack's overhead line is the stack's wake-up extra, added to each scenario whose client
# waits that long on loopback (a path's own reference already pays its waits' wake-ups).
# name -> (hierarchy, group, served chain, modes), as REFERENCES.
WAIT_REFERENCE = "wait"
WAIT_REFERENCES: dict[str, tuple[tuple[str, ...], str, str, tuple[str, ...]]] = {
    WAIT_REFERENCE: (
        ("ECDSA-P256", "SLH-DSA-SHAKE-128f"),
        "X25519",
        "leaf+intermediates",
        ("full",),
    ),
}
# The full reference handshakes also taken over each other transport a stack runs in a
# campaign (`message` TRANSPORT_PREFIX + the transport): OpenSSL 3.5's QUIC scenarios on
# loopback had cost 17-36 % more server CPU than the TCP references predict (quic.toml,
# 2026-11-27), packet protection and acknowledgements being per datagram. The stack's
# overhead over that transport is fitted on them; a resumed handshake keeps the TCP line.
TRANSPORT_PREFIX = "transport:"
# The ECDSA full reference also taken between each pair of different stacks a campaign runs
# (client -> server; `message` PEER_PREFIX + the client stack, its implementation the
# server's), in the same rounds as the stacks' own: a stack's CPU depends on its peer. With
# an OpenSSL or rustls client, BoringSSL's server took ~35 us (-10 to -12 %) more than with
# its own; rustls' server 10-20 % less with a BoringSSL or Go client (interop.toml, two runs
# of 2026-11-27): what each side of the pair cost beyond its own stack's reference is added
# to a full handshake between them (CostModel.peer_extras).
PEER_REFERENCE = ("ecdsa", "full")
PEER_PREFIX = "peer:"


def reference_spec(name: str) -> tuple[tuple[str, ...], str, str, tuple[str, ...]]:
    """(hierarchy, group, served chain, modes) of a reference handshake, overhead or wait."""
    return REFERENCES[name] if name in REFERENCES else WAIT_REFERENCES[name]


def transport_of(message: str | None) -> str:
    """The transport a reference handshake's `message` names (TCP where it names none)."""
    if message is not None and message.startswith(TRANSPORT_PREFIX):
        return message[len(TRANSPORT_PREFIX) :]
    return DEFAULT_TRANSPORT


def peer_of(message: str | None) -> str | None:
    """The client stack a reference handshake's `message` names (a peer reference), or
    None (the stack's own client)."""
    if message is not None and message.startswith(PEER_PREFIX):
        return message[len(PEER_PREFIX) :]
    return None


def overhead_key(stack: str, transport: str) -> str:
    """Whose overhead prices a stack over a transport: the stack's own over TCP."""
    return stack if transport == DEFAULT_TRANSPORT else f"{stack} over {transport}"


def path_key(profile: NetworkProfile) -> str:
    """The `message` of a path reference over `profile` (a NetworkProfile): its name and a
    digest of its configuration and of PATH_METHOD, so a changed profile, or a cache's path
    references taken the way before, are measured again."""
    conf = {k: v for k, v in sorted(profile.to_dict().items()) if k not in ("description",)}
    conf["method"] = PATH_METHOD
    digest = hashlib.sha256(json.dumps(conf, sort_keys=True).encode()).hexdigest()[:12]
    return f"{PATH_PREFIX}{profile.name}:{digest}"


def path_base_key(profile: NetworkProfile) -> str:
    """The `message` of the loopback twin of a path reference over `profile`."""
    return PATH_BASE_PREFIX + path_key(profile)[len(PATH_PREFIX) :]


def path_profile(message: str) -> str:
    """The profile name of a path reference's `message`, or of its loopback twin's."""
    prefix = PATH_BASE_PREFIX if message.startswith(PATH_BASE_PREFIX) else PATH_PREFIX
    return message[len(prefix) :].rsplit(":", 1)[0]


def is_path_reference(message: str | None) -> bool:
    """Whether a reference handshake's `message` names a path reference or its loopback
    twin (measured together, in one round each: PATH_REFERENCE_COUNT)."""
    return message is not None and message.startswith((PATH_PREFIX, PATH_BASE_PREFIX))


def reference_scenario(
    name: str,
    mode: str,
    stack: str = DEFAULT_STACK,
    count: int = REFERENCE_COUNT,
    profile: NetworkProfile | None = None,
    warmup: int = REFERENCE_WARMUP,
    transport: str = DEFAULT_TRANSPORT,
    peer: str | None = None,
) -> Scenario:
    """A reference handshake as a scenario: `count` fixed handshakes of the reference's
    hierarchy through `stack`'s server (from `peer`'s client where given), over `profile`
    or loopback, over `transport`: what chainlab.runner.references runs and what the
    run-time estimate prices."""
    hierarchy, kex, served, _modes = reference_spec(name)
    policy = SamplingPolicy(
        mode="fixed",
        count=count,
        target_rel_halfwidth=0.02,
        confidence=0.95,
        min=count,
        max=count,
        time_cap_s=None,
        warmup=warmup,
        batch_warmup=1,
        timeout_ms=10_000,
        max_failed_fraction=0.0,
    )
    # A full or a resumed handshake of the reference hierarchy, its served chain as the
    # reference says, the server on the stack and the client on `peer` (the stack when
    # None); every other axis at its default.
    return Scenario(
        scenario_id=f"reference_{name}_{mode}",
        kex=kex,
        hierarchy=hierarchy,
        network=profile.name if profile is not None else LOOPBACK,
        network_profile=profile,
        sampling=policy,
        levers=(
            (axes.SERVED_CHAIN.key, served),
            (axes.HANDSHAKE_MODE.key, mode),
            (axes.STACK.key, (peer or stack, stack)),
            (axes.TRANSPORT.key, transport),
        ),
    )
