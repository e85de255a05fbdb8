"""The cost model: a handshake's cryptographic operations on each side, and its cost
predicted from measured primitives (docs/methods/cost-model.md#cost-model).

Operations of one handshake, by side (`operations`):

    server, full     sign the CertificateVerify with the leaf's key;
                     key exchange: KEM encapsulation, or DH key generation + derivation
    server, resumed  key exchange only (no Certificate, no CertificateVerify)
    client, full     key exchange: KEM key generation + decapsulation, or DH key generation
                     + derivation; verify the CertificateVerify with the leaf's key; verify
                     the signature of every certificate below the trust anchor with its
                     issuer's key (the anchor's own self-signature is not verified; without
                     verification only the CertificateVerify is checked); decompress the
                     Certificate message when compression is on
    client, resumed  key exchange only

With a client certificate (mutual TLS, full handshakes only: a resumed TLS 1.3 handshake
asks for none), the client also signs its own CertificateVerify with its leaf's key, and
the server verifies that signature and every certificate of the client's chain below the
client root (its trust anchor for clients).

The served-chain policy changes the bytes, not the operations: the client builds the same
path whether an intermediate arrives in the handshake or from its untrusted store. Only the
trust anchor changes them: with the leaf's issuing intermediate as the anchor
(`intermediate-anchor`), the client verifies the leaf alone.

Prediction (`predict`): each side's CPU is its operations' measured mean times plus the
TLS overhead (everything that is not a primitive: state machine, X.509 parsing, record
layer, syscalls), measured by reference handshakes and modelled as linear in the bytes
the handshake carries (`Overhead`). Loopback latency is both sides' operations (they run
one after the other) plus the latency overhead. The primitives and the overhead come from a
store (`chainlab.runner.primitives` measures them); this module only does the arithmetic.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import cast

from chainlab.axes.algorithms import (
    COMPOSITE_COMPONENTS,
    DEFAULT_TRANSPORT,
    GROUPS,
    resumption_ratio,
)
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.model import implementations
from chainlab.model.reference_specs import overhead_key

# What a signature operation signs (the engine's --message): the CertificateVerify content
# (130 bytes, TLS 1.3 scheme) or a TBSCertificate (certificate scheme).
CV = "cv"
CERT = "cert"
# Size of the TBSCertificate a `verify cert` primitive is measured on. The hierarchies'
# TBSCertificates are 340 (ECDSA subject) to 3000 bytes (ML-DSA-87 subject); the message is
# hashed once per verification (SHA-2 for ECDSA/RSA, SHAKE inside ML-DSA / SLH-DSA), a few
# microseconds across that range, so one size stands for all.
CERT_MESSAGE_BYTES = 2048
# Certificate bytes a `decompress` primitive restores; a scenario's decompression is scaled
# linearly from it by its Certificate message size.
DECOMPRESS_BYTES = 16384
# A client's acceptance of a Merkle Tree Certificate (the engine's `primitives --op
# mtc-verify`, subject the leaf key's algorithm).
MTC_VERIFY = "mtc-verify"
# A composite signature's message representative M' (the engine's `primitives --op
# prehash`, subject the composite's pre-hash, SHA256 or SHA512).
PREHASH = "prehash"
# Sides of a handshake.
SIDES = ("server", "client")
# Categories of operations, in the order a cost breakdown stacks them.
CATEGORIES = (
    "sign",
    "key exchange",
    "verify CertificateVerify",
    "verify certificates",
    "decompress",
)


def is_kem(group: str) -> bool:
    """ML-KEM and the hybrids run as KEMs in TLS 1.3; the rest are Diffie-Hellman groups."""
    return GROUPS[group] in ("hybrid", "pure_pq")


# An operation of a handshake, merged by it: (side, category, subject, op, message).
OpKey = tuple[str, str, str, str, str | None]
# What a primitive timing is of: (subject, op, message), and by whose code:
# (implementation, subject, op, message).
PrimitiveKey = tuple[str, str, str | None]
TimingKey = tuple[str, str, str, str | None]


@dataclass(frozen=True)
class Operation:
    side: str  # server | client
    category: str  # one of CATEGORIES
    subject: str  # signature algorithm, group or compression
    op: str  # sign | verify | keygen | encaps | decaps | derive | decompress
    message: str | None  # cv | cert for signatures
    count: float  # how many per handshake (decompression: a fraction of DECOMPRESS_BYTES)

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.subject, self.op, self.message)


def operations(
    hierarchy: tuple[str, ...] | list[str],
    kex: str,
    handshake_mode: str = "full",
    cert_compression: str = "none",
    verify: bool = True,
    certificate_message_bytes: int | None = None,
    anchor_depth: int = 0,
    client_hierarchy: tuple[str, ...] | list[str] = (),
    signers: tuple[str, ...] | None = None,
    retry: bool = False,
) -> list[Operation]:
    """Every cryptographic operation of one handshake, merged by (side, category, key).

    `hierarchy` is root first, leaf last; `certificate_message_bytes` (the uncompressed
    Certificate message) scales decompression and is needed only when compression is on.
    `anchor_depth` is how many positions below the root the client's trust anchor sits (0:
    the root; `Scenario.anchor_depth`); `client_hierarchy` the client certificate's hierarchy,
    root first (empty: none); `signers` a Merkle Tree Certificate's, when the server sends
    one (None: an X.509 chain; empty: a landmark-relative MTC); `retry` the trust-anchor
    retry of an MTC (a first full handshake the client abandons at the certificate: both
    sides' key exchange, the server's signature and the client's MTC check twice). A
    resumption mix
    (`resumeNN`) gives the expected operations of one handshake: the full handshake's
    weighted by 1 - r, the resumed one's by r.
    """
    ratio = resumption_ratio(handshake_mode)
    if 0 < ratio < 1:
        mixed: defaultdict[OpKey, float] = defaultdict(float)
        for mode, weight in (("full", 1 - ratio), ("resumed", ratio)):
            for o in operations(
                hierarchy,
                kex,
                mode,
                cert_compression,
                verify,
                certificate_message_bytes,
                anchor_depth,
                client_hierarchy,
                signers,
                retry,
            ):
                mixed[(o.side, o.category, o.subject, o.op, o.message)] += weight * o.count
        return [Operation(*k, count=n) for k, n in mixed.items()]
    h = list(hierarchy)
    ops: defaultdict[OpKey, float] = defaultdict(float)

    def add(
        side: str,
        category: str,
        subject: str,
        op: str,
        message: str | None = None,
        count: float = 1.0,
    ) -> None:
        ops[(side, category, subject, op, message)] += count

    if is_kem(kex):
        add("server", "key exchange", kex, "encaps")
        add("client", "key exchange", kex, "keygen")
        add("client", "key exchange", kex, "decaps")
    else:
        for side in SIDES:
            add(side, "key exchange", kex, "keygen")
            add(side, "key exchange", kex, "derive")
    if ratio == 0:
        leaf = h[-1]
        add("server", "sign", leaf, "sign", CV)
        add("client", "verify CertificateVerify", leaf, "verify", CV)
        if verify and signers is not None:
            # A Merkle Tree Certificate: its proof, then each subtree signature (a ~100-byte
            # message; one CERT size stands for every signed message, as below).
            add("client", "verify certificates", leaf, MTC_VERIFY, None)
            for signer in signers:
                add("client", "verify certificates", signer, "verify", CERT)
        elif verify:
            # Certificates below the anchor (h[anchor_depth]); each is checked with its
            # issuer's key.
            for issuer in h[anchor_depth:-1]:
                add("client", "verify certificates", issuer, "verify", CERT)
        if client_hierarchy:
            c = list(client_hierarchy)
            add("client", "sign", c[-1], "sign", CV)
            add("server", "verify CertificateVerify", c[-1], "verify", CV)
            for issuer in c[:-1]:
                add("server", "verify certificates", issuer, "verify", CERT)
        if cert_compression != "none":
            if certificate_message_bytes is None:
                raise ValueError("compression on: the Certificate message size is needed")
            add(
                "client",
                "decompress",
                cert_compression,
                "decompress",
                None,
                certificate_message_bytes / DECOMPRESS_BYTES,
            )
    if retry and ratio == 0:
        for k in list(ops):
            side, category, _subject, op, _message = k
            if side == "server" or category == "key exchange" or op == MTC_VERIFY:
                ops[k] *= 2
    return [Operation(*k, count=n) for k, n in composite_parts(ops).items()]


def composite_parts(ops: Mapping[OpKey, float]) -> dict[OpKey, float]:
    """Each composite ML-DSA signature operation as its parts: its ML-DSA and traditional
    components' same operation on the same message, and M' (PREHASH of the message, the
    composite's pre-hash as subject); every other operation as it is
    (docs/methods/cost-model.md#composite-cost)."""
    out: defaultdict[OpKey, float] = defaultdict(float)
    for (side, category, subject, op, message), n in ops.items():
        parts = COMPOSITE_COMPONENTS.get(subject)
        if parts is None or op not in ("sign", "verify"):
            out[(side, category, subject, op, message)] += n
            continue
        mldsa, trad, prehash = parts
        out[(side, category, mldsa, op, message)] += n
        out[(side, category, trad, op, message)] += n
        out[(side, category, prehash, PREHASH, message)] += n
    return out


def primitive_keys(ops: Iterable[Operation]) -> set[PrimitiveKey]:
    return {o.key for o in ops}


@dataclass(frozen=True)
class Timing:
    """A primitive's measured time per operation: mean and its standard error, in ms."""

    mean_ms: float
    se_ms: float
    n: int


@dataclass(frozen=True)
class Line:
    """intercept + slope x KiB, with standard errors (a two-point line has se on both)."""

    intercept_ms: float
    per_kib_ms: float
    se_ms: float = 0.0

    def at(self, kib: float) -> float:
        return self.intercept_ms + self.per_kib_ms * kib


@dataclass(frozen=True)
class Overhead:
    """The TLS overhead beyond the primitives, per handshake mode, from reference
    handshakes: server CPU, client CPU and loopback latency as lines in the KiB carried."""

    full: dict[str, Line]  # "server" | "client" | "latency" -> Line
    resumed: dict[str, Line]

    def of(self, handshake_mode: str, kib: float = 0.0) -> dict[str, Line]:
        """The lines of a mode; a resumption mix weighs the full and resumed lines (as flat
        lines at `kib`)."""
        ratio = resumption_ratio(handshake_mode)
        if ratio == 0:
            return self.full
        if ratio == 1:
            return self.resumed
        return {
            k: Line(
                (1 - ratio) * self.full[k].at(kib) + ratio * self.resumed[k].at(kib),
                0.0,
                math.hypot((1 - ratio) * self.full[k].se_ms, ratio * self.resumed[k].se_ms),
            )
            for k in self.full
        }


ZERO_OVERHEAD = Overhead(
    {k: Line(0.0, 0.0) for k in ("server", "client", "latency")},
    {k: Line(0.0, 0.0) for k in ("server", "client", "latency")},
)


class MissingPrimitive(KeyError):
    """A primitive the prediction needs has no stored timing."""


@dataclass
class Prediction:
    server_ms: float  # CPU per handshake
    client_ms: float
    latency_ms: float  # loopback
    server_se: float
    client_se: float
    latency_se: float
    # Primitive CPU only (no overhead), per side and by category.
    parts: dict[str, dict[str, float]] = field(default_factory=dict)
    overhead: dict[str, float] = field(default_factory=dict)
    # Operations priced with another implementation's figure than the one that runs them
    # (implementations.candidates): (side, subject, op) each.
    borrowed: set[tuple[str, str, str]] = field(default_factory=set)
    # CPU per side the scenario's emulated path adds (CostModel.path_extras), included above.
    path: dict[str, float] = field(default_factory=dict)
    # CPU per side its long idle wait for the peer's signature adds (CostModel.wait_extras).
    wait: dict[str, float] = field(default_factory=dict)
    # CPU per side a peer of another stack adds (CostModel.peer_extras), included above.
    peer: dict[str, float] = field(default_factory=dict)

    def with_path(
        self, extra: Mapping[str, float], profile: str = "", borrowed: tuple[str, ...] = ()
    ) -> Prediction:
        """This prediction on a path whose reference measured `extra` beyond loopback;
        `borrowed`: the sides whose stack is not the one the references ran (PATH_REFERENCES
        of the reference stack), named as borrowed like a primitive."""
        return replace(
            self,
            borrowed=self.borrowed | {(side, f"{profile} path", "CPU") for side in borrowed},
            server_ms=self.server_ms + extra["server"],
            client_ms=self.client_ms + extra["client"],
            server_se=math.hypot(self.server_se, extra["server_se"]),
            client_se=math.hypot(self.client_se, extra["client_se"]),
            path={side: extra[side] for side in SIDES},
        )

    def with_wait(self, extra: Mapping[str, float]) -> Prediction:
        """This prediction with what its client's wake-up after a long idle wait for the
        server's signature costs (`extra`: the client stack's WAIT_REFERENCE beyond its
        overhead line; a server that waits for a client's signature is not priced so)."""
        return replace(
            self,
            client_ms=self.client_ms + extra["client"],
            client_se=math.hypot(self.client_se, extra["client_se"]),
            wait={"client": extra["client"]},
        )

    def with_peer(self, extra: Mapping[str, float]) -> Prediction:
        """This prediction between two stacks whose pair's reference cost `extra` per side
        beyond each stack's own (PEER_REFERENCE)."""
        return replace(
            self,
            server_ms=self.server_ms + extra["server"],
            client_ms=self.client_ms + extra["client"],
            server_se=math.hypot(self.server_se, extra["server_se"]),
            client_se=math.hypot(self.client_se, extra["client_se"]),
            peer={side: extra[side] for side in SIDES},
        )

    def primitives_ms(self, side: str) -> float:
        return sum(self.parts.get(side, {}).values())


@dataclass(frozen=True)
class Pricing:
    """What prices a handshake's operations: timings by (implementation, subject, op,
    message), the TLS overhead per stack, the stacks of (client, server) and the signature
    implementation the scenario asks for."""

    timings: Mapping[TimingKey, Timing]
    overheads: Mapping[str, Overhead]
    stacks: tuple[str, str] = (DEFAULT_STACK, DEFAULT_STACK)
    # liboqs, or None: each stack signs with its own (the signature implementation axis)
    signing: str | None = None
    # the transport that carries the handshake (tcp, quic)
    carrier: str = DEFAULT_TRANSPORT

    @staticmethod
    def single(
        timings: Mapping[TimingKey, Timing] | Mapping[PrimitiveKey, Timing],
        overhead: Overhead = ZERO_OVERHEAD,
    ) -> Pricing:
        """Timings with one overhead for every stack (timings keyed (subject, op, message)
        are the reference implementation's)."""
        return Pricing(by_implementation(timings), {DEFAULT_STACK: overhead})

    def side_stack(self, side: str) -> str:
        return self.stacks[0] if side == "client" else self.stacks[1]

    def timing(self, o: Operation) -> tuple[TimingKey, Timing] | None:
        """The first candidate key (implementations.candidates) with a timing, and it."""
        stack = self.side_stack(o.side)
        for key in implementations.candidates(stack, self.signing, *o.key):
            t = self.timings.get(key)
            if t is not None:
                return key, t
        return None

    def overhead(self, side: str) -> Overhead:
        """The overhead of a side's stack over the transport (over TCP where that was not
        measured; the reference stack's where the stack has none)."""
        stack = self.side_stack(side)
        for key in (overhead_key(stack, self.carrier), stack, DEFAULT_STACK):
            if key in self.overheads:
                return self.overheads[key]
        return ZERO_OVERHEAD


def predict(
    ops: list[Operation],
    timings: Mapping[TimingKey, Timing] | Mapping[PrimitiveKey, Timing] | Pricing,
    overhead: Overhead = ZERO_OVERHEAD,
    handshake_mode: str = "full",
    kib: float = 0.0,
    connections: float = 1,
) -> Prediction:
    """Predicted server CPU, client CPU and loopback latency of one handshake (ms).

    Each operation costs count x its mean; standard errors add in quadrature (the primitives
    were measured independently). `timings` is a Pricing, or one implementation's timings
    keyed (subject, op, message) with `overhead` its lines. `kib` is the bytes the handshake
    carries (both ways), for the overhead's lines. Each side's CPU overhead is its stack's;
    the latency's is the mean of the two stacks' (the same when both sides run one stack).
    An attempt of `connections` connections (an MTC's trust-anchor retry: two) pays the
    overhead on each.
    """
    pricing = timings if isinstance(timings, Pricing) else Pricing.single(timings, overhead)
    parts: dict[str, dict[str, float]] = {side: {} for side in SIDES}
    var = dict.fromkeys(SIDES, 0.0)
    borrowed: set[tuple[str, str, str]] = set()
    for o in ops:
        found = pricing.timing(o)
        if found is None:
            raise MissingPrimitive(o.key)
        key, t = found
        if implementations.is_borrowed(key, pricing.side_stack(o.side), pricing.signing):
            borrowed.add((o.side, o.subject, o.op))
        parts[o.side][o.category] = parts[o.side].get(o.category, 0.0) + o.count * t.mean_ms
        var[o.side] += (o.count * t.se_ms) ** 2
    lines = {side: pricing.overhead(side).of(handshake_mode, kib) for side in SIDES}
    latency = [lines[side]["latency"] for side in SIDES]
    over = {side: connections * lines[side][side].at(kib) for side in SIDES}
    over["latency"] = connections * sum(line.at(kib) for line in latency) / 2
    latency_se = max(line.se_ms for line in latency)
    server = sum(parts["server"].values())
    client = sum(parts["client"].values())
    return Prediction(
        server_ms=server + over["server"],
        client_ms=client + over["client"],
        latency_ms=server + client + over["latency"],
        server_se=math.sqrt(var["server"] + lines["server"]["server"].se_ms ** 2),
        client_se=math.sqrt(var["client"] + lines["client"]["client"].se_ms ** 2),
        latency_se=math.sqrt(var["server"] + var["client"] + latency_se**2),
        parts=parts,
        overhead=over,
        borrowed=borrowed,
    )


@dataclass
class CostModel:
    """Primitive timings by implementation and the TLS overhead per stack, ready to predict;
    `source` says where from."""

    # (implementation, subject, op, message) -> Timing
    timings: dict[TimingKey, Timing]
    # stack -> its overhead lines, from its own reference handshakes
    overheads: dict[str, Overhead]
    source: str
    # Reference handshakes as measured: stack -> (name, mode) -> {latency, client, server,
    # kib} means
    stack_references: dict[str, dict[tuple[str, str], dict[str, float]]] = field(
        default_factory=dict
    )
    # (stack, network profile) -> {server, client: Line}: CPU per handshake the stack's path
    # references measured beyond its loopback ones, as a line in KiB carried (PATH_REFERENCES)
    path_extras: dict[tuple[str, str], dict[str, Line]] = field(default_factory=dict)
    # (client stack, server stack) -> {server, client, server_se, client_se}: CPU per full
    # handshake the pair's reference cost each side beyond its own stack's (PEER_REFERENCE)
    peer_extras: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # stack -> {client, client_se}: CPU per handshake the stack's client paid after its wait
    # reference's long idle wait beyond its primitives and overhead line (WAIT_REFERENCE)
    wait_extras: dict[str, dict[str, float]] = field(default_factory=dict)
    # The host reference workload's wall ns every figure above is at (chainlab.model.
    # host_speed); None: its inputs carried no reading, the model is at no known speed.
    host_ns: float | None = None
    # The least latency spread (sd over mean) the estimate takes a handshake's to be: what
    # other processes' load on this machine's CPUs as the run started makes it
    # (host_speed.with_contention); 0.0: none seen, or not read.
    noise_cv: float = 0.0

    def path_extra(self, stack: str, profile: str) -> tuple[dict[str, Line], bool] | None:
        """What a profile's path adds to a stack's handshake ({side: Line} in KiB), and
        whether it is borrowed (the reference stack's, where the stack's own path references
        were not taken)."""
        if (stack, profile) in self.path_extras:
            return self.path_extras[(stack, profile)], False
        if (DEFAULT_STACK, profile) in self.path_extras:
            return self.path_extras[(DEFAULT_STACK, profile)], stack != DEFAULT_STACK
        return None

    def peer_extra(self, stacks: tuple[str, str], handshake_mode: str) -> dict[str, float] | None:
        """What a handshake of `handshake_mode` between two stacks (client, server) adds per
        side beyond each stack's own (PEER_REFERENCE, a full handshake: a resumption mix's
        share of full ones), where the model holds the pair; None otherwise."""
        extra = self.peer_extras.get((stacks[0], stacks[1]))
        full = 1 - resumption_ratio(handshake_mode)
        if extra is None or full == 0:
            return None
        return {k: full * v for k, v in extra.items()}

    @property
    def overhead(self) -> Overhead:
        """The reference stack's overhead (OpenSSL 3.5)."""
        return self.overheads.get(DEFAULT_STACK, ZERO_OVERHEAD)

    @property
    def references(self) -> dict[tuple[str, str], dict[str, float]]:
        """The reference stack's reference handshakes."""
        return self.stack_references.get(DEFAULT_STACK, {})

    @property
    def stacks(self) -> list[str]:
        """The stacks whose overhead was measured."""
        return sorted(self.stack_references)

    def pricing(
        self,
        stacks: tuple[str, str],
        signing: str | None = None,
        transport: str = DEFAULT_TRANSPORT,
    ) -> Pricing:
        return Pricing(self.timings, self.overheads, (stacks[0], stacks[1]), signing, transport)

    def missing(
        self, ops: Iterable[Operation], pricing: Pricing | None = None
    ) -> set[PrimitiveKey]:
        """Keys of the operations no stored timing prices."""
        pricing = pricing or self.pricing((DEFAULT_STACK, DEFAULT_STACK))
        return {o.key for o in ops if pricing.timing(o) is None}


def by_implementation(
    timings: Mapping[TimingKey, Timing] | Mapping[PrimitiveKey, Timing],
) -> Mapping[TimingKey, Timing]:
    """Timings keyed (implementation, subject, op, message); one implementation's keyed
    (subject, op, message) are the reference's."""
    if any(len(k) == 3 for k in timings):
        one = cast(Mapping[PrimitiveKey, Timing], timings)
        return {(implementations.unrecorded(k[0], k[1]), *k): t for k, t in one.items()}
    return cast(Mapping[TimingKey, Timing], timings)
