"""What a scenario's axis values make of its handshake and its run, as the plumbing sees it.

The estimate (chainlab.model.estimate), the stacks' capability check
(chainlab.axes.stack), cross-axis rules and the runner ask a `Handshake`, never an axis
by its key: which stacks run, whether QUIC carries it, the handshake mode, the compression,
the client's certificate, which certificates the server sends and where the client's trust
anchor sits, the credential (an X.509 chain or a Merkle Tree Certificate), the mixture a
client population makes. Each axis writes its part through `Axis.shape`
(chainlab.axes.handshake folds them in registry order), so an axis that changes
what a handshake is says so in its own declaration, and a new one adds a field here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from chainlab.axes.algorithms import DEFAULT_SERVED_CHAIN, resumption_ratio
from chainlab.axes.credential import X509, Certificate, parse
from chainlab.axes.stack import DEFAULT_STACK, feature, has
from chainlab.axes.stack import label as stack_label

# The client reading each connection's close after the next handshake (`handshake
# --defer-close`); Go's client closes at once.
DEFERRED_CLOSE = feature(
    "deferred_close",
    "a connection's close read after the next handshake (an emulated path's TCP handshakes)",
    ("openssl-3.5", "openssl-4.0", "rustls", "boringssl"),
)


@dataclass(frozen=True)
class Handshake:
    # Every axis's value (axis key -> value): an axis's own module reads its own there.
    parts: Mapping[str, Any] = field(repr=False, compare=False, hash=False)
    kex: str | None
    hierarchy: tuple[str, ...]  # root first; empty for a target
    target: str | None = None
    # The scenario's emulated link (chainlab.campaign.model.NetworkProfile; None: loopback).
    network_profile: Any = None
    # The TLS stack of (the client, the server).
    stacks: tuple[str, str] = (DEFAULT_STACK, DEFAULT_STACK)
    quic: bool = False  # QUIC carries the handshake (else TCP)
    # full, resumed, or a resumption mix resumeNN (chainlab.axes.algorithms).
    mode: str = "full"
    compression: str = "none"  # the certificate compression the client offers
    client_hierarchy: tuple[str, ...] = ()  # the client certificate's, root first
    # The X.509 certificates the server sends: leaf, leaf+intermediates or full.
    sent: str = DEFAULT_SERVED_CHAIN
    # How many certificates the client's trust anchor sits above the root (1: the leaf's
    # issuing intermediate).
    anchor_depth: int = 0
    # What the server authenticates with (chainlab.axes.certificate).
    credential: Certificate = parse(X509)
    # The trust anchor IDs the client requests in the trust_anchors extension
    # (chainlab.axes.trust_anchors); None: no extension, and an MTC's negotiation is the
    # campaign's stand-in.
    anchors_requested: int | None = None
    # Bytes the axes add to the client's ClientHello beyond the key share and the engine's
    # own extensions (certificate compression's compress_certificate extension, ...): each
    # axis's `shape` adds its own.
    client_hello_extra: int = 0
    # The engine's `serve --chain`: which of the hierarchy's files the server sends.
    engine_chain: str = DEFAULT_SERVED_CHAIN
    # A second chain the server also holds, root first (chainlab.axes.rollout).
    second_hierarchy: tuple[str, ...] = ()
    # What the successful handshakes are made of, (weight, chain sent, group) per kind of
    # client (chainlab.axes.rollout.mixture); None: one kind, the hierarchy, the kex.
    mixture: tuple[tuple[float, tuple[str, ...], str], ...] | None = None

    @property
    def resumed_share(self) -> float:
        """The share of handshakes that resume (0 full, 1 resumed)."""
        return resumption_ratio(self.mode)

    @property
    def connections(self) -> int:
        """Connections per attempt: an MTC's trust-anchor retry makes two, the first
        abandoned at its certificate (chainlab.axes.certificate); else one."""
        return 2 if self.credential.retry and self.resumed_share == 0 else 1

    @property
    def defers_close(self) -> bool:
        """Whether the client reads each connection's close (the server's tickets and
        close_notify) after the next handshake instead of before it (`handshake
        --defer-close`): over TCP on an emulated path with delay, where waiting for the
        server's close_notify would cost each attempt a round trip outside its handshake,
        when the next attempt needs nothing of the close (no resumption, no client
        certificate) and the client's engine has it. Nothing timed changes: our close_notify
        and FIN still go at once."""
        return self.defers_close_on(self.stacks[0])

    def defers_close_on(self, client_stack: str) -> bool:
        """`defers_close` for a client of another stack in this scenario (the load
        generator's, whose warm-up handshakes run one at a time)."""
        return closes_later(
            client_stack,
            self.network_profile,
            quic=self.quic,
            resumes=self.resumed_share > 0,
            client_cert=bool(self.client_hierarchy),
        )

    @property
    def leaf_alg(self) -> str | None:
        return self.hierarchy[-1] if self.hierarchy else None

    @property
    def stack_label(self) -> str:
        """The stack, or `client → server` when the two sides differ."""
        return stack_label(*self.stacks)

    def kinds(self) -> tuple[tuple[float, tuple[str, ...], str], ...]:
        """(weight, chain sent, group) of each kind of handshake."""
        if self.mixture is not None:
            return self.mixture
        return ((1.0, self.hierarchy, self.kex or ""),)

    def client_verifies(self) -> tuple[str, ...]:
        """The algorithms whose signatures the client verifies: the hierarchy's, or a
        Merkle Tree Certificate's signers and its leaf key."""
        if self.credential.is_mtc:
            return (*self.credential.signers, *self.hierarchy[-1:])
        return self.hierarchy


def closes_later(
    client_stack: str,
    profile: Any,
    quic: bool = False,
    resumes: bool = False,
    client_cert: bool = False,
) -> bool:
    """`Handshake.defers_close` from its parts: `profile` a NetworkProfile or None (loopback)."""
    return (
        profile is not None
        and profile.delay_ms > 0
        and not quic
        and not resumes
        and not client_cert
        and has(client_stack, DEFERRED_CLOSE)
    )


class ScenarioLike(Protocol):
    """What an axis's engine flags read of a scenario (chainlab.campaign.model.Scenario)."""

    @property
    def scenario_id(self) -> str: ...

    @property
    def handshake(self) -> Handshake: ...

    @property
    def depth(self) -> int: ...

    def value(self, key: str) -> Any: ...


def view(s: ScenarioLike | Handshake) -> Handshake:
    """The handshake a scenario's axis values make (a campaign Scenario's `handshake`; a
    Handshake is its own): what the estimates price, never an axis by its key."""
    return s if isinstance(s, Handshake) else s.handshake
