"""The `target` axis: a server chainlab does not start ([targets.<name>]), in place of
the hierarchy's positions."""

from __future__ import annotations

from typing import Any

from chainlab.axes.axis import (
    Axis,
    AxisReader,
)
from chainlab.schema import fmt


def _target(v: AxisReader, item: Any, at: str) -> Any:
    """A matrix's target: the name of one of the file's [targets.<name>] tables."""
    if not v.target_names:
        v.bad(at, f"bad value {fmt(item)}; allowed: the name of a [targets.<name>] table (none "
              "declared)")  # fmt: skip
        return None
    return v.string(item, at, choices=v.target_names)


TARGET = Axis(
    key="target",
    label="target",
    default=None,
    read=_target,
    id_words=("target",),
    where={"target": lambda t: {t} if t else set()},
    structural=True,
)
