"""Matrix expansion: the cross product of a matrix's axes, less its exclusions, as scenario
ids (chainlab.campaign.ids) and their parts. The loader validates the values first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from chainlab.campaign import ids, stacks
from chainlab.campaign.algorithms import GROUPS, NO_CLIENT_AUTH
from chainlab.campaign.model import (
    DEFAULT_CERT_COMPRESSION,
    DEFAULT_HANDSHAKE_MODE,
    DEFAULT_SERVED_CHAIN,
    DEFAULT_TRANSPORT,
)
from chainlab.network.profile import LOOPBACK

# The axes a [matrix.<name>] crosses, in the order scenario parts are named.
MATRIX_AXES = (
    "kex",
    "hierarchy",
    "served_chain",
    "handshake_mode",
    "cert_compression",
    "client_auth",
    "transport",
    "stack",
    "network",
    "target",
)
# The scenario columns of an axis where they are not the axis itself: the stack axis is
# each side's stack.
AXIS_COLUMNS = {"stack": ("client_stack", "server_stack")}


def axis_columns(axis: str) -> tuple[str, ...]:
    """The scenario (and summary) columns an axis sets."""
    return AXIS_COLUMNS.get(axis, (axis,))


# The axes besides the hierarchy (and a target's name), as scenario columns: what a
# scenario's label adds to its chain when it varies, and what a comparison of hierarchies
# holds fixed.
OTHER_AXES = tuple(
    c for a in MATRIX_AXES if a not in ("hierarchy", "target") for c in axis_columns(a)
)
# Scenario properties a `where` table (exclusions, sampling overrides) may test.
WHERE_KEYS = (
    "scenario",
    "kex",
    "kex_family",
    "depth",
    "root",
    "int",
    "leaf",
    "algorithm",
    "served_chain",
    "handshake_mode",
    "cert_compression",
    "client_leaf",
    "transport",
    "stack",
    "client_stack",
    "server_stack",
    "network",
    "target",
)
# The value of an axis a matrix leaves out (kex and hierarchy are required).
AXIS_DEFAULTS = {
    "served_chain": DEFAULT_SERVED_CHAIN,
    "handshake_mode": DEFAULT_HANDSHAKE_MODE,
    "cert_compression": DEFAULT_CERT_COMPRESSION,
    "client_auth": (),
    "transport": DEFAULT_TRANSPORT,
    # (client stack, server stack): a matrix's `stack`, or `client_stack` x `server_stack`.
    "stack": (stacks.DEFAULT_STACK, stacks.DEFAULT_STACK),
    "network": LOOPBACK,
    "target": None,
}


def expand(
    axes: dict[str, list],
    excludes: list[dict],
    alg_token: Callable[[str], str],
    parts_by_id: dict[str, dict],
) -> tuple[list[str], list[int]]:
    """(scenario ids in declaration order, indexes of exclusions that excluded nothing).

    `axes`: axis -> values (validated); `excludes`: `where` tables (property -> set of
    values); `alg_token`: an algorithm's id token (its alias, or its plain token). Every new
    id's parts are added to `parts_by_id` (shared by all matrices of a file, so a scenario
    two matrices produce is one scenario)."""
    combos = itertools.product(*(axes.get(a) or [AXIS_DEFAULTS[a]] for a in MATRIX_AXES))
    out: list[str] = []
    excluded_by = [0] * len(excludes)
    for values in combos:
        parts = dict(zip(MATRIX_AXES, values, strict=True))
        parts["client_stack"], parts["server_stack"] = parts.pop("stack")
        sid = ids.compose(
            parts["kex"],
            [alg_token(a) for a in parts["hierarchy"]],
            parts["served_chain"],
            parts["handshake_mode"],
            parts["cert_compression"],
            parts["network"],
            [alg_token(a) for a in parts["client_auth"]],
            parts["target"],
            parts["transport"],
            (parts["client_stack"], parts["server_stack"]),
        )
        hit = [matches(w, parts, sid) for w in excludes]
        for i, h in enumerate(hit):
            excluded_by[i] += h
        if any(hit):
            continue
        parts_by_id.setdefault(sid, parts)
        if sid not in out:
            out.append(sid)
    return out, [i for i, n in enumerate(excluded_by) if n == 0]


def matches(where: dict, parts: dict, sid: str) -> bool:
    """Whether a scenario (its parts and id) has, for every key of `where`, one of the
    values listed there."""
    h = parts["hierarchy"]
    facts = {
        "scenario": {sid},
        "kex": {parts["kex"]},
        "kex_family": {GROUPS[parts["kex"]]},
        "depth": {len(h)},
        "root": {h[0]} if len(h) >= 2 else set(),
        "int": set(h[1:-1]),
        "leaf": {h[-1]} if h else set(),
        "algorithm": set(h),
        "served_chain": {parts["served_chain"]},
        "handshake_mode": {parts["handshake_mode"]},
        "cert_compression": {parts["cert_compression"]},
        "client_leaf": {parts["client_auth"][-1] if parts["client_auth"] else NO_CLIENT_AUTH},
        "transport": {parts["transport"]},
        # Either side's stack; client_stack / server_stack test one side.
        "stack": {parts["client_stack"], parts["server_stack"]},
        "client_stack": {parts["client_stack"]},
        "server_stack": {parts["server_stack"]},
        "network": {parts["network"]},
        "target": {parts["target"]} if parts["target"] else set(),
    }
    return all(facts[k] & vals for k, vals in where.items())
