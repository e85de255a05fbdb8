"""What a scenario asks of its TLS stacks, checked against what each can do (the capability
tables of chainlab.axes.stack): `validate` refuses a scenario a side's stack cannot run, one
line per problem, so such a combination is never discovered failing at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

from chainlab.axes import algorithm_sizes
from chainlab.axes.handshake import Handshake
from chainlab.axes.stack import CAPABILITIES, FEATURES, has


def certificate_message_bytes(h: Handshake) -> int:
    """About how many bytes the server's Certificate message has (the certificates it sends,
    estimated from key and signature sizes; 0 for a Merkle Tree Certificate or a target).
    `h`: the scenario's handshake (chainlab.axes.handshake)."""
    if not h.hierarchy or h.credential.is_mtc:
        return 0
    certs = list(reversed(algorithm_sizes.certificate_bytes(h.hierarchy)))  # leaf first
    if len(certs) > 1 and h.sent != "full":
        certs = certs[:1] if h.sent == "leaf" else certs[:-1]
    return sum(certs)


@dataclass(frozen=True)
class Problem:
    """What a side's stack cannot do of a scenario, as one line."""

    text: str
    # The client meets it on the wire (a chain it cannot verify, a Certificate message too
    # long for it): the scenario can run and fail by category, which is what an interop
    # matrix ([campaign] interop = true) records. Anything else stops an engine before its
    # first handshake, and is always refused.
    on_the_wire: bool = False
    # How the client records such a failure, where the table knows it (None: some failure).
    category: str | None = None


def problems(h: Handshake, with_load: bool, needs: list[tuple[str, str, str]]) -> list[Problem]:
    """What the scenario (its handshake, chainlab.axes.handshake) asks of a side's stack
    that the stack cannot do: one line per problem, naming the side, the stack and the
    missing capability. `needs` are the (side, capability, text) the scenario's axis values
    need (chainlab.axes: `Axis.needs`); the run's own needs ([load], a target) are
    added here."""
    out: list[Problem] = []
    hierarchy = h.hierarchy
    needs = [
        *needs,
        *([("both", "load", FEATURES["load"].text)] if with_load else []),
        *([("both", "targets", FEATURES["targets"].text)] if h.target is not None else []),
    ]
    for side, stack in zip(("client", "server"), h.stacks, strict=True):
        caps = CAPABILITIES[stack]
        for need_side, feature, text in needs:
            if need_side in (side, "both") and not has(stack, feature):
                out.append(
                    Problem(
                        f"{side} stack {stack} cannot do {text} (missing capability: {feature})"
                    )
                )
        comp, algs = h.compression, caps.cert_compressions
        if comp != "none" and algs is not None and comp not in algs:
            out.append(
                Problem(
                    f"{side} stack {stack} has no certificate compression {comp} "
                    + (f"(it has: {', '.join(algs)})" if algs else "(it has none)")
                )
            )
        if caps.groups is not None and h.kex not in caps.groups:
            out.append(
                Problem(
                    f"{side} stack {stack} has no key-exchange group {h.kex} "
                    f"(it has: {', '.join(caps.groups)})"
                )
            )
        if side == "client":
            for alg in dict.fromkeys(a for a in hierarchy if a in caps.root_only):
                if len(hierarchy) < 3 or alg in hierarchy[1:]:
                    out.append(
                        Problem(
                            f"client stack {stack} can use {alg} only as the root of a hierarchy "
                            "of depth 3 or more (its key fits in no Certificate message; the "
                            "client checks the root's signature on the intermediate itself)",
                            on_the_wire=True,
                        )
                    )
        limit = caps.max_handshake_message
        if side == "client" and limit is not None and certificate_message_bytes(h) > limit:
            out.append(
                Problem(
                    f"client stack {stack} cannot receive a Certificate message of about "
                    f"{certificate_message_bytes(h)} bytes (it accepts at most {limit}; "
                    "a UOV key is tens of kilobytes: send at most one)",
                    on_the_wire=True,
                )
            )
        if caps.signature_algorithms is not None:
            # The server signs with its leaf's key; the client verifies every signature of
            # the chain (each certificate's issuer, and the leaf's CertificateVerify), or of
            # a Merkle Tree Certificate (its subtree signatures and the CertificateVerify).
            # A leaf the client cannot verify fails before any certificate arrives: the client
            # does not offer its scheme, and the server finds none it shares (no_shared_sigalg
            # on the server; each client stack names the alert its own way): some failure.
            used = hierarchy[-1:] if side == "server" else h.client_verifies()
            for alg in dict.fromkeys(used):
                if alg not in caps.signature_algorithms:
                    verb = "sign with" if side == "server" else "verify"
                    leaf = bool(hierarchy) and alg == hierarchy[-1]
                    out.append(
                        Problem(
                            f"{side} stack {stack} cannot {verb} {alg} "
                            f"(it has: {', '.join(caps.signature_algorithms)})",
                            on_the_wire=side == "client",
                            category="verify_failed" if side == "client" and not leaf else None,
                        )
                    )
    return out
