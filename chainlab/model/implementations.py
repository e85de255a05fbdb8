"""Whose code runs each cryptographic operation of a handshake, and which engine times it
(docs/methods/cost-model.md#implementations).

A stack signs, verifies and exchanges keys with its own library: OpenSSL 3.5 and 4.0 their
own, rustls aws-lc (aws-lc-rs, what rustls-post-quantum calls), BoringSSL and Go their own.
liboqs signs liboqs' families (Falcon, MAYO, UOV, CROSS) on every stack that has them, and
ML-DSA where a scenario asks for it (the signature implementation axis; `signing` here). The
cost model prices each operation with the primitives of the implementation that runs it
(`candidates`), timed by an engine that links that implementation (`timer`): each engine's
`primitives` times its own.

What an engine cannot time (decompression on the non-OpenSSL engines: their `primitives`
time their own library's signatures and key exchange) is priced with the reference
implementation's figure, OpenSSL 3.5, and the prediction names it as *borrowed*, so a report
says which operation the model prices from another library.

Rows measured before implementations were recorded (store schema before 13) came from the
OpenSSL 3.5 engine: they read as what that engine runs (`unrecorded`).
"""

from __future__ import annotations

from dataclasses import dataclass

from chainlab.axes.algorithms import ALGORITHM_FAMILY, LIBOQS_FAMILIES
from chainlab.axes.stack import CAPABILITIES, OPENSSL_STACKS, OWN_MLDSA_AND_CLASSICAL

# The implementation whose primitives price what another cannot time, and what a row
# without an implementation was measured with.
REFERENCE = "openssl-3.5"
LIBOQS = "liboqs"
# A composite signature's M' runs chainlab-composite's own code (SHA-2 from the `sha2`
# crate) on every stack: one implementation, timed by the OpenSSL engine.
COMPOSITE = "chainlab-composite"
PREHASH = "prehash"
# Each stack's own library.
OWN: dict[str, str] = {
    "openssl-3.5": "openssl-3.5",
    "openssl-4.0": "openssl-4.0",
    "rustls": "aws-lc",
    "boringssl": "boringssl",
    "go": "go",
}
SIGNATURE_OPS = ("sign", "verify")
# The engines other than OpenSSL's time their library's key exchange for every group the
# stack has (each engine's primitives_kex: engine/crates/chainlab-rustls/src,
# engine/crates/chainlab-boring/src, engine/go).
KEY_EXCHANGE_TIMED: dict[str, tuple[str, ...]] = {
    stack: CAPABILITIES[stack].groups or () for stack in OWN if stack not in OPENSSL_STACKS
}
ML_DSA = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")


@dataclass(frozen=True)
class Timer:
    """The engine that times an implementation's operation: the stack whose binary it is,
    and its flags."""

    engine: str
    flags: tuple[str, ...] = ()


def _engine_times(stack: str, subject: str, op: str, message: str | None) -> bool:
    """Whether a stack's engine `primitives` times this operation of its own library."""
    if stack in OPENSSL_STACKS:
        return True  # the OpenSSL engine times every operation chainlab places
    # The other engines time a signature over the CertificateVerify content only
    # (chainlab_record::primitives, engine/go/primitives.go), and their groups' key exchange.
    if op in SIGNATURE_OPS:
        return message == "cv" and subject in OWN_MLDSA_AND_CLASSICAL
    return subject in KEY_EXCHANGE_TIMED.get(stack, ())


def of(stack: str, signing: str | None, subject: str, op: str) -> str:
    """The implementation that runs one operation on a side whose stack is `stack`."""
    if op == PREHASH:
        return COMPOSITE
    if op in SIGNATURE_OPS:
        if ALGORITHM_FAMILY.get(subject) in LIBOQS_FAMILIES:
            return LIBOQS
        if signing == LIBOQS and subject in ML_DSA:
            return LIBOQS
    return OWN[stack]


def unrecorded(subject: str, op: str) -> str:
    """The implementation of a row that names none (a store before schema 13, or a key
    without one): the OpenSSL 3.5 engine measured it, through liboqs for liboqs' families
    and through OpenSSL 3.5 for the rest."""
    return of(REFERENCE, None, subject, op)


def timer(implementation: str, subject: str, op: str, message: str | None) -> Timer | None:
    """The engine that times `implementation`'s operation, or None when none does."""
    if implementation == COMPOSITE:
        return Timer(REFERENCE) if op == PREHASH else None
    if implementation == LIBOQS:
        if subject in ML_DSA:
            if message != "cv":
                return None
            return Timer("rustls", ("--signature-impl", LIBOQS))
        if ALGORITHM_FAMILY.get(subject) in LIBOQS_FAMILIES:
            return Timer(REFERENCE)  # the OpenSSL engine times liboqs' families through liboqs
        return None
    for stack, own in OWN.items():
        if own == implementation and _engine_times(stack, subject, op, message):
            return Timer(stack)
    return None


def measured_key(
    stack: str, signing: str | None, subject: str, op: str, message: str | None
) -> tuple[tuple[str, str, str, str | None], Timer]:
    """The timing key the runner measures for one operation, and its engine: the first of
    `candidates` some engine times (the reference implementation's always is)."""
    for key in candidates(stack, signing, subject, op, message):
        t = timer(*key)
        if t is not None:
            return key, t
    raise AssertionError(f"no engine times {subject} {op}")  # the reference times all


def candidates(
    stack: str, signing: str | None, subject: str, op: str, message: str | None
) -> list[tuple[str, str, str, str | None]]:
    """Timing keys (implementation, subject, op, message) that price one operation, best
    first: the implementation's own; for a certificate's signature, its CertificateVerify
    figure (the same verification over a 130-byte message instead of a 2048-byte one, a few
    microseconds of hashing apart) where the engine times that one only; then the reference
    implementation's (borrowed)."""
    impl = of(stack, signing, subject, op)
    out = [(impl, subject, op, message)]
    if op == "verify" and message is not None and message != "cv":
        out.append((impl, subject, op, "cv"))
    if impl != REFERENCE:
        out.append((REFERENCE, subject, op, message))
    return out


def is_borrowed(key: tuple[str, str, str, str | None], stack: str, signing: str | None) -> bool:
    """Whether a timing key prices an operation with another implementation's figure."""
    impl, subject, op, _message = key
    return impl != of(stack, signing, subject, op)
