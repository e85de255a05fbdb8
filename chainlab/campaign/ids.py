"""Scenario ids: compositional, stable, and readable back into their parts.

    <kex>__<alg>_<role>[__<alg>_<role>...][__served_<policy>][__resumed|__resume<NN>][__<compression>][__client_<alg>[_<alg>...]][__quic][__stack_<tok>[_<tok>]][__net_<name>]

`<kex>` is the group name in lower case without punctuation (X25519MLKEM768 ->
x25519mlkem768); `<alg>` is the file's alias of the algorithm at that position (or, without an
alias, its name in lower case without punctuation: ML-DSA-65 -> mldsa65); roles run root to
leaf: `self` (depth 1), `root`/`leaf` (depth 2), `root`/`int`/`leaf` (depth 3),
`root`/`int1`/`int2`/`leaf` (depth 4). Axes at their defaults (served chain
leaf+intermediates, full handshake, no compression, no client certificate, TCP, loopback) add
nothing, so an id only names what differs: `x25519mlkem768__slh_root__ml_int__ml_leaf`,
`x25519__ml_root__ml_leaf__resumed`. A client certificate's hierarchy is named by its
algorithm tokens, root first: `__client_mldsa65_mldsa44`. QUIC instead of TCP adds `__quic`.
A TLS stack other than openssl-3.5 adds `__stack_<tok>` (both sides: `__stack_rustls`) or
`__stack_<client tok>_<server tok>` (`__stack_ossl35_rustls`: an OpenSSL 3.5 client, a rustls
server); chainlab.campaign.stacks names the tokens.

A scenario whose server chainlab does not start ([targets.<name>]) has no positions: its
target takes their place, `<kex>__target_<name>[...]` (`x25519mlkem768__target_edge`).
"""

from __future__ import annotations

from chainlab.campaign import stacks
from chainlab.campaign.algorithms import CERT_COMPRESSIONS, GROUPS, MIX_RE, TRANSPORTS, token
from chainlab.campaign.model import (
    DEFAULT_CERT_COMPRESSION,
    DEFAULT_HANDSHAKE_MODE,
    DEFAULT_SERVED_CHAIN,
    DEFAULT_TRANSPORT,
    ROLES,
)
from chainlab.network.profile import LOOPBACK

SERVED_TOKENS = {
    "leaf": "served_leaf",
    "full": "served_full",
    "intermediate-anchor": "served_intanchor",
}
CLIENT_PREFIX = "client_"
TARGET_PREFIX = "target_"
ROLE_TOKENS = {"self", "root", "int", "int1", "int2", "leaf"}
# Words of the suffix parts: never an algorithm alias, so an id reads back one way only.
RESERVED = {"served", "net", "resumed", "full", "client", "target", "stack"}
RESERVED |= {*CERT_COMPRESSIONS, *TRANSPORTS}


def compose(
    kex: str,
    alg_tokens: list[str],
    served_chain: str,
    handshake_mode: str,
    cert_compression: str,
    network: str,
    client_tokens: list[str] = (),
    target: str | None = None,
    transport: str = DEFAULT_TRANSPORT,
    stack_pair: tuple[str, str] = (stacks.DEFAULT_STACK, stacks.DEFAULT_STACK),
) -> str:
    """The id of a scenario from its parts (algorithm tokens root first; the client
    certificate hierarchy's likewise, empty without one; a target instead of positions)."""
    if target is not None:
        parts = [token(kex), TARGET_PREFIX + target]
    else:
        roles = ROLES[len(alg_tokens)]
        parts = [token(kex)] + [f"{t}_{r}" for t, r in zip(alg_tokens, roles, strict=True)]
    if served_chain != DEFAULT_SERVED_CHAIN:
        parts.append(SERVED_TOKENS[served_chain])
    if handshake_mode != DEFAULT_HANDSHAKE_MODE:
        parts.append(handshake_mode)
    if cert_compression != DEFAULT_CERT_COMPRESSION:
        parts.append(cert_compression)
    if client_tokens:
        parts.append(CLIENT_PREFIX + "_".join(client_tokens))
    if transport != DEFAULT_TRANSPORT:
        parts.append(transport)
    stack_token = stacks.token(*stack_pair)
    if stack_token is not None:
        parts.append(stack_token)
    if network != LOOPBACK:
        parts.append(f"net_{network}")
    return "__".join(parts)


def decode(
    scenario_id: str,
    algorithms: dict[str, str],
    networks: set[str],
    targets: set[str] = frozenset(),
) -> dict:
    """The parts of an id, given the file's token -> algorithm map, network and target names.

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
    target = None
    if rest and rest[0].startswith(TARGET_PREFIX):
        target = rest.pop(0)[len(TARGET_PREFIX) :]
        if target not in targets:
            names = ", ".join(sorted(targets)) or "none declared"
            raise ValueError(f"unknown target {target!r}; allowed: {names}")
    while (
        rest
        and "_" in rest[0]
        and rest[0].rsplit("_", 1)[1] in ROLE_TOKENS
        and rest[0].split("_", 1)[0] not in RESERVED
    ):
        alg_token, role = rest.pop(0).rsplit("_", 1)
        positions.append((alg_token, role))
    if target is not None and positions:
        raise ValueError("a target serves its own chain; allowed: no positions after target_")
    if target is None and not 1 <= len(positions) <= 4:
        raise ValueError(
            f"{len(positions)} certificate positions; allowed: 1 to 4 "
            "(<alg>_self, or <alg>_root .. <alg>_leaf)"
        )
    roles = tuple(r for _, r in positions)
    if target is None and roles != ROLES[len(positions)]:
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
    client_tokens: list[str] = []
    transport = DEFAULT_TRANSPORT
    stack_pair = (stacks.DEFAULT_STACK, stacks.DEFAULT_STACK)
    for p in rest:
        if p in served_by_token:
            served = served_by_token[p]
        elif p.startswith(CLIENT_PREFIX):
            client_tokens = p[len(CLIENT_PREFIX) :].split("_")
            unknown = [t for t in client_tokens if t not in algorithms]
            if unknown or not 1 <= len(client_tokens) <= 4:
                raise ValueError(
                    f"bad client certificate part {p!r}; allowed: client_ followed by 1 to 4 "
                    f"algorithm tokens root first, joined by '_' ({', '.join(sorted(algorithms))})"
                )
        elif p == "resumed" or MIX_RE.match(p):
            mode = p
        elif p in CERT_COMPRESSIONS and p != "none":
            comp = p
        elif p in TRANSPORTS and p != DEFAULT_TRANSPORT:
            transport = p
        elif stacks.decode(p) is not None:
            stack_pair = stacks.decode(p)
        elif p.startswith("net_") and p[4:] in networks:
            net = p[4:]
        else:
            allowed = [*served_by_token, "resumed", "resume<NN>", "zlib", "brotli", "zstd"]
            allowed += ["client_<alg>[_<alg>...]", "quic"]
            allowed += [f"stack_<tok>[_<tok>] ({', '.join(stacks.STACK_BY_TOKEN)})"]
            allowed += [f"net_{n}" for n in sorted(networks)]
            raise ValueError(f"unknown part {p!r}; allowed: {', '.join(allowed)}")
    canonical = compose(
        kex,
        [t for t, _ in positions],
        served,
        mode,
        comp,
        net,
        client_tokens,
        target,
        transport,
        stack_pair,
    )
    if canonical != scenario_id:
        raise ValueError(f"not in canonical form; write it as {canonical!r}")
    return {
        "kex": kex,
        "hierarchy": tuple(hierarchy),
        "served_chain": served,
        "handshake_mode": mode,
        "cert_compression": comp,
        "network": net,
        "client_auth": tuple(algorithms[t] for t in client_tokens),
        "target": target,
        "transport": transport,
        "client_stack": stack_pair[0],
        "server_stack": stack_pair[1],
    }
