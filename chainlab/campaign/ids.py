"""Scenario ids: compositional, stable, and readable back into their parts.

    <kex>__<alg>_<role>[__<alg>_<role>...][__served_<policy>][__resumed|__resume<NN>][__<compression>][__net_<name>]

`<kex>` is the group name in lower case without punctuation (X25519MLKEM768 ->
x25519mlkem768); `<alg>` is the file's alias of the algorithm at that position (or, without an
alias, its name in lower case without punctuation: ML-DSA-65 -> mldsa65); roles run root to
leaf: `self` (depth 1), `root`/`leaf` (depth 2), `root`/`int`/`leaf` (depth 3),
`root`/`int1`/`int2`/`leaf` (depth 4). Axes at their defaults (served chain
leaf+intermediates, full handshake, no compression, loopback) add nothing, so an id only names
what differs: `x25519mlkem768__slh_root__ml_int__ml_leaf`, `x25519__ml_root__ml_leaf__resumed`.
"""

from __future__ import annotations

from chainlab.campaign.algorithms import CERT_COMPRESSIONS, GROUPS, MIX_RE, token
from chainlab.campaign.model import (
    DEFAULT_CERT_COMPRESSION,
    DEFAULT_HANDSHAKE_MODE,
    DEFAULT_SERVED_CHAIN,
    ROLES,
)
from chainlab.network.profile import LOOPBACK

SERVED_TOKENS = {"leaf": "served_leaf", "full": "served_full"}
ROLE_TOKENS = {"self", "root", "int", "int1", "int2", "leaf"}
# Words of the suffix parts: never an algorithm alias, so an id reads back one way only.
RESERVED = {"served", "net", "resumed", "full", *CERT_COMPRESSIONS}


def compose(
    kex: str,
    alg_tokens: list[str],
    served_chain: str,
    handshake_mode: str,
    cert_compression: str,
    network: str,
) -> str:
    """The id of a scenario from its parts (algorithm tokens root first)."""
    roles = ROLES[len(alg_tokens)]
    parts = [token(kex)] + [f"{t}_{r}" for t, r in zip(alg_tokens, roles, strict=True)]
    if served_chain != DEFAULT_SERVED_CHAIN:
        parts.append(SERVED_TOKENS[served_chain])
    if handshake_mode != DEFAULT_HANDSHAKE_MODE:
        parts.append(handshake_mode)
    if cert_compression != DEFAULT_CERT_COMPRESSION:
        parts.append(cert_compression)
    if network != LOOPBACK:
        parts.append(f"net_{network}")
    return "__".join(parts)


def decode(scenario_id: str, algorithms: dict[str, str], networks: set[str]) -> dict:
    """The parts of an id, given the file's token -> algorithm map and network names.

    Raises ValueError saying which part is not understood and what is allowed there.
    """
    parts = scenario_id.split("__")
    kex_by_token = {token(g): g for g in GROUPS}
    if parts[0] not in kex_by_token:
        raise ValueError(
            f"unknown key-exchange token {parts[0]!r}; allowed: {', '.join(kex_by_token)}"
        )
    kex = kex_by_token[parts[0]]
    positions: list[tuple[str, str]] = []
    rest = parts[1:]
    while (
        rest
        and "_" in rest[0]
        and rest[0].rsplit("_", 1)[1] in ROLE_TOKENS
        and rest[0].split("_", 1)[0] not in RESERVED
    ):
        alg_token, role = rest.pop(0).rsplit("_", 1)
        positions.append((alg_token, role))
    if not 1 <= len(positions) <= 4:
        raise ValueError(
            f"{len(positions)} certificate positions; allowed: 1 to 4 "
            "(<alg>_self, or <alg>_root .. <alg>_leaf)"
        )
    roles = tuple(r for _, r in positions)
    if roles != ROLES[len(positions)]:
        raise ValueError(
            f"positions {'/'.join(roles)}; allowed for depth {len(positions)}: "
            f"{'/'.join(ROLES[len(positions)])}"
        )
    hierarchy = []
    for alg_token, _ in positions:
        if alg_token not in algorithms:
            raise ValueError(
                f"unknown algorithm token {alg_token!r}; allowed: {', '.join(sorted(algorithms))}"
            )
        hierarchy.append(algorithms[alg_token])
    served, mode, comp, net = DEFAULT_SERVED_CHAIN, DEFAULT_HANDSHAKE_MODE, "none", LOOPBACK
    served_by_token = {v: k for k, v in SERVED_TOKENS.items()}
    for p in rest:
        if p in served_by_token:
            served = served_by_token[p]
        elif p == "resumed" or MIX_RE.match(p):
            mode = p
        elif p in CERT_COMPRESSIONS and p != "none":
            comp = p
        elif p.startswith("net_") and p[4:] in networks:
            net = p[4:]
        else:
            allowed = [*served_by_token, "resumed", "resume<NN>", "zlib", "brotli", "zstd"]
            allowed += [f"net_{n}" for n in sorted(networks)]
            raise ValueError(f"unknown part {p!r}; allowed: {', '.join(allowed)}")
    canonical = compose(kex, [t for t, _ in positions], served, mode, comp, net)
    if canonical != scenario_id:
        raise ValueError(f"not in canonical form; write it as {canonical!r}")
    return {
        "kex": kex,
        "hierarchy": tuple(hierarchy),
        "served_chain": served,
        "handshake_mode": mode,
        "cert_compression": comp,
        "network": net,
    }
