"""The `kex` axis: the key-exchange group the client offers and the server takes (its
family stored beside it); it leads every scenario id."""

from __future__ import annotations

from typing import Any

from chainlab.axes.algorithms import (
    GROUPS,
    canonical_group,
)
from chainlab.axes.axis import (
    Axis,
    AxisReader,
)
from chainlab.schema import allowed, fmt


def read_group(v: AxisReader, value: Any, at: str) -> str | None:
    """A key-exchange group, in any accepted spelling."""
    if not isinstance(value, str):
        v.bad(at, f"expected a key-exchange group name, got {fmt(value)}")
        return None
    canon = canonical_group(value)
    if canon is None:
        v.bad(at, f"unknown key-exchange group {value!r}; allowed: {allowed(GROUPS, value)}")
    return canon


KEX = Axis(
    key="kex",
    label="key exchange",
    default=None,  # required
    read=read_group,
    columns=("kex", "kex_family"),
    store=lambda g: (g, GROUPS[g]),
    where={"kex": lambda g: {g}, "kex_family": lambda g: {GROUPS[g]}},
    where_read={"kex_family": ("classical", "hybrid", "pure_pq")},
    order={"classical": 0, "hybrid": 1, "pure_pq": 2},  # of its family
    structural=True,
)
