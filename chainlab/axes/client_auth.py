"""The `client_auth` axis: a client certificate (mutual TLS) and its hierarchy, or none."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    NO_CLIENT_AUTH,
)
from chainlab.axes.axis import (
    Axis,
    AxisReader,
    hierarchy_part,
    hierarchy_token,
)
from chainlab.axes.hierarchy import read_algorithm
from chainlab.schema import allowed, fmt

CLIENT_PREFIX = "client_"


def client_auth_name(h: tuple[str, ...]) -> str:
    """The store's `client_auth`: the client hierarchy's algorithms root first, comma-
    separated, or 'none'."""
    return ",".join(h) if h else NO_CLIENT_AUTH


def read_client_auth(v: AxisReader, item: Any, at: str) -> tuple[str, ...] | None:
    """A client certificate: 'none', or its hierarchy (an array of algorithms root to leaf,
    or a [hierarchies] name)."""
    if item == NO_CLIENT_AUTH:
        return ()
    if isinstance(item, str) and item not in v.hierarchies:
        v.bad(
            at,
            f"bad value {fmt(item)}; allowed: 'none', a [hierarchies] name "
            f"({allowed(v.hierarchies, item) or 'none declared'}) or an array of "
            "algorithms root to leaf",
        )
        return None
    return v.read_hierarchy(item, at)


CLIENT_AUTH = Axis(
    params=lambda h: {"client_auth": client_auth_name(h)},
    params_always=True,
    key="client_auth",
    label="client certificate",
    default=(),
    read=read_client_auth,
    store=lambda h: (client_auth_name(h),),
    order={NO_CLIENT_AUTH: 0},
    id_part=hierarchy_token(CLIENT_PREFIX),
    id_read=hierarchy_part(CLIENT_PREFIX, "client certificate"),
    id_help="client_<alg>[_<alg>...]",
    id_words=("client",),
    not_with_target=True,
    where={"client_leaf": lambda h: {h[-1] if h else NO_CLIENT_AUTH}},
    where_read={
        # A client certificate's leaf algorithm, or 'none' (no client certificate).
        "client_leaf": lambda v, item, at: (
            item if item == NO_CLIENT_AUTH else read_algorithm(v, item, at)
        ),
    },
    shape=lambda v, h: replace(h, client_hierarchy=v),
    server_flags=lambda h, s, files: (
        ["--client-ca", str(files.client_pki_dir / "ca.pem")] if h else []
    ),
    client_flags=lambda h, s, files, _seed: ["--cert-pki", str(files.client_pki_dir)] if h else [],
    needs=lambda h, _: [stacks.need("both", "client_auth")] if h else [],
)
