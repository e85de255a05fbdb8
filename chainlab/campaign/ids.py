"""Scenario ids: compositional, stable, and readable back into their parts.

    <kex>__<alg>_<role>[__<alg>_<role>...][__served_<policy>][__mtcl<batch>[_nolm]|__mtcs<batch>_<alg>[_<alg>...]][__resumed|__resume<NN>][__<compression>][__client_<alg>[_<alg>...]][__quic][__stack_<tok>[_<tok>]][__dual_<alg>[_<alg>...]][__pop_<kind><pct>[_<kind><pct>...]][__sgrp_<group>[_<group>...]][__net_<name>]

`<kex>` is the group name in lower case without punctuation (X25519MLKEM768 ->
x25519mlkem768); `<alg>` is the file's alias of the algorithm at that position (or, without an
alias, its name in lower case without punctuation: ML-DSA-65 -> mldsa65); roles run root to
leaf: `self` (depth 1), `root`/`leaf` (depth 2), `root`/`int`/`leaf` (depth 3),
`root`/`int1`/`int2`/`leaf` (depth 4). Axes at their defaults (served chain
leaf+intermediates, full handshake, no compression, no client certificate, TCP, loopback) add
nothing, so an id only names what differs: `x25519mlkem768__slh_root__ml_int__ml_leaf`,
`x25519__ml_root__ml_leaf__resumed`. A client certificate's hierarchy is named by its
algorithm tokens, root first: `__client_mldsa65_mldsa44`. QUIC instead of TCP adds `__quic`.
A Merkle Tree Certificate adds `__mtcl<batch>` (landmark-relative; `_nolm` when the client
lacks the landmark) or `__mtcs<batch>_<ca>[_<cosigner>...]` (standalone, its signers'
algorithm tokens; chainlab.axes.certificate). A TLS stack other than openssl-3.5 adds
`__stack_<tok>` (both sides: `__stack_rustls`) or
`__stack_<client tok>_<server tok>` (`__stack_ossl35_rustls`: an OpenSSL 3.5 client, a rustls
server); chainlab.axes.stack names the tokens. Staged rollout (chainlab.axes.rollout)
adds a second chain's algorithm tokens (`__dual_ecp256_ecp256`), a population's kinds with
their shares in per cent by name (`__pop_classical90_pq10`) and the server's own group order
(`__sgrp_x25519mlkem768_x25519`).

A scenario whose server chainlab does not start ([targets.<name>]) has no positions: its
target takes their place, `<kex>__target_<name>[...]` (`x25519mlkem768__target_edge`).
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

from chainlab import axes
from chainlab.axes.algorithms import GROUPS, token
from chainlab.axes.axis import NOT_MINE
from chainlab.campaign.model import ROLES

TARGET_PREFIX = "target_"
ROLE_TOKENS = {"self", "root", "int", "int1", "int2", "leaf"}
# Words of the suffix parts: never an algorithm alias, so an id reads back one way only.
RESERVED = {w for a in axes.registered() for w in a.id_words}


def compose(parts: dict[str, Any], alg_token: Callable[[str], str]) -> str:
    """The id of a scenario from its parts (axis key -> value; chainlab.axes), with
    `alg_token` naming an algorithm (its alias, or its plain token)."""
    if parts.get("target") is not None:
        head = [token(parts["kex"]), TARGET_PREFIX + parts["target"]]
    else:
        h = parts["hierarchy"]
        roles = ROLES[len(h)]
        positions = [f"{alg_token(a)}_{r}" for a, r in zip(h, roles, strict=True)]
        head = [token(parts["kex"]), *positions]
    tail = [axis.token(parts[axis.key], alg_token) for axis in axes.suffix_axes()]
    return "__".join(head + [t for t in tail if t is not None])


def decode(
    scenario_id: str,
    algorithms: dict[str, str],
    networks: set[str],
    targets: Set[str] = frozenset(),
) -> dict[str, Any]:
    """The parts of an id (axis key -> value), given the file's token -> algorithm map,
    network and target names.

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
    out = {a.key: a.default for a in axes.registered()}
    out.update(kex=kex, hierarchy=tuple(hierarchy), target=target)
    for p in rest:
        for axis in axes.suffix_axes():
            value = axis.untoken(p, algorithms)
            if value is NOT_MINE:
                continue
            if axis is axes.NETWORK and value not in networks:
                continue
            out[axis.key] = value
            break
        else:
            allowed = [axis.help() for axis in axes.suffix_axes() if axis is not axes.NETWORK]
            allowed += [f"net_{n}" for n in sorted(networks)]
            raise ValueError(f"unknown part {p!r}; allowed: {', '.join(allowed)}")
    canonical = compose(out, lambda alg: _token_of(alg, algorithms))
    if canonical != scenario_id:
        raise ValueError(f"not in canonical form; write it as {canonical!r}")
    return out


def _token_of(alg: str, algorithms: dict[str, str]) -> str:
    """The id token of an algorithm in the file's token -> algorithm map (its alias if it
    has one)."""
    tokens = [t for t, a in algorithms.items() if a == alg]
    plain = token(alg)
    return next((t for t in tokens if t != plain), plain)
