"""Matrix expansion: the cross product of a matrix's axes, less its exclusions, as scenario
ids (chainlab.campaign.ids) and their parts. The loader validates the values first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from chainlab import axes
from chainlab.campaign import ids


def expand(
    values: dict[str, list[Any]],
    excludes: list[dict[str, Any]],
    alg_token: Callable[[str], str],
    parts_by_id: dict[str, dict[str, Any]],
) -> tuple[list[str], list[int]]:
    """(scenario ids in declaration order, indexes of exclusions that excluded nothing).

    `values`: axis key -> values (validated); an axis left out has its default (the
    registry's, chainlab.axes). `excludes`: `where` tables (property -> set of
    values); `alg_token`: an algorithm's id token (its alias, or its plain token). Every new
    id's parts (axis key -> value) are added to `parts_by_id` (shared by all matrices of a
    file, so a scenario two matrices produce is one scenario)."""
    keys = [a.key for a in axes.registered()]
    defaults = {a.key: a.default for a in axes.registered()}
    combos = itertools.product(*(values.get(k) or [defaults[k]] for k in keys))
    out: list[str] = []
    excluded_by = [0] * len(excludes)
    for combo in combos:
        parts = dict(zip(keys, combo, strict=True))
        sid = ids.compose(parts, alg_token)
        hit = [matches(w, parts, sid) for w in excludes]
        for i, h in enumerate(hit):
            excluded_by[i] += h
        if any(hit):
            continue
        parts_by_id.setdefault(sid, parts)
        if sid not in out:
            out.append(sid)
    return out, [i for i, n in enumerate(excluded_by) if n == 0]


def matches(where: dict[str, Any], parts: dict[str, Any], sid: str) -> bool:
    """Whether a scenario (its parts and id) has, for every key of `where`, one of the
    values listed there (each axis says which `where` keys it offers and their facts)."""
    for k, vals in where.items():
        if k == "scenario":
            facts = {sid}
        else:
            axis = next(a for a in axes.registered() if k in a.where_facts())
            facts = axis.where_facts()[k](parts[axis.key])
        if not facts & vals:
            return False
    return True
