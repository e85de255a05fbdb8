"""The `hierarchy` axis: the certificate hierarchy's algorithms, root first (stored as
its depth and one algorithm per role); the id's positions."""

from __future__ import annotations

from typing import Any

from chainlab.axes.axis import (
    Axis,
    AxisReader,
)


def read_algorithm(v: AxisReader, item: Any, at: str) -> str | None:
    return v.resolve_alg(item, at)


HIERARCHY = Axis(
    key="hierarchy",
    label="hierarchy",
    default=None,  # required (a target's is empty)
    read=lambda v, item, at: v.read_hierarchy(item, at),
    columns=("depth", "root_alg", "int1_alg", "int2_alg", "leaf_alg"),
    store=lambda h: (
        len(h),
        h[0] if len(h) >= 2 else None,
        h[1] if len(h) >= 3 else None,
        h[2] if len(h) >= 4 else None,
        h[-1] if h else None,
    ),
    where={
        "depth": lambda h: {len(h)},
        "root": lambda h: {h[0]} if len(h) >= 2 else set(),
        "int": lambda h: set(h[1:-1]),
        "leaf": lambda h: {h[-1]} if h else set(),
        "algorithm": lambda h: set(h),
    },
    not_with_target=True,
    where_read={
        "depth": lambda v, item, at: v.integer(item, at, 1, 4),
        "root": read_algorithm,
        "int": read_algorithm,
        "leaf": read_algorithm,
        "algorithm": read_algorithm,
    },
    structural=True,
)
