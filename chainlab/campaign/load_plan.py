"""The campaign file's [load] table (docs/campaigns.md): offered loads, how to run them, and
[[load.override]] plans for the scenarios a `where` table matches. `v` is the campaign
loader's validator (chainlab.campaign.loader), whose problems these report into.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainlab.campaign.tables import TableReaders

import os
from dataclasses import replace

from chainlab.campaign.fields import (
    LOAD_DEFAULTS,
    LOAD_FIELDS,
    WORKERS_PER_CORE,
)
from chainlab.campaign.matrix import matches
from chainlab.campaign.model import LoadPlan, cpu_list


def read(v: TableReaders, value: Any) -> LoadPlan | None:
    """[load]: the offered loads and how to run them; rules between keys and the
    machine's cores here; the steps' lengths against each scenario's expected capacity are
    the cost model's to check (chainlab.model.load_steps)."""
    v.load_overrides = []
    if value is None:
        return None
    table = v.table(value, "load")
    got = v.p.check(LOAD_FIELDS, table, "load", also=("override",))
    v.load_overrides = read_overrides(v, table.get("override", []))
    if None in got.values():
        return None
    if ("rates" in got) == ("fractions" in got):
        v.bad(
            "load",
            "give exactly one of `rates` (attempts per second) and `fractions` (of the "
            f"measured capacity); got {' and '.join(sorted(got)) if got else 'neither'}",
        )
        return None
    values = {**LOAD_DEFAULTS, **got}
    cores = os.cpu_count() or 1
    for key in ("server_cpus", "generator_cpus"):
        beyond = [c for c in cpu_list(values[key]) if c >= cores]
        if beyond:
            v.bad(
                f"load.{key}",
                f"bad value {values[key]!r}: CPU {beyond[0]} does not exist; allowed: "
                f"CPUs 0 to {cores - 1} (this machine has {cores})",
            )
            return None
    if set(cpu_list(values["server_cpus"])) & set(cpu_list(values["generator_cpus"])):
        v.notes.append(
            "load: the server and the generator share CPUs, so a step whose generator "
            "competes with the server measures both"
        )
    if values["server_workers"] is None:
        per_core = 1 if values["server_model"] == "event" else WORKERS_PER_CORE
        values["server_workers"] = per_core * len(cpu_list(values["server_cpus"]))
    for key in ("rates", "fractions"):
        values[key] = tuple(values[key]) if key in got else None
    return LoadPlan(**values)


def read_overrides(v: TableReaders, value: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """[[load.override]]: `where` a scenario matches, and the step plan it gets instead
    (e.g. longer steps for a scenario that handles a handshake a second)."""
    fields = {
        k: LOAD_FIELDS[k]
        for k in ("rates", "fractions", "step_s", "capacity_s", "max_in_flight", "generator_stack")
    }
    out = []
    for i, (where, got) in enumerate(v.read_overrides(value, "load.override", fields)):
        if "rates" in got and "fractions" in got:
            v.bad(f"load.override[{i}]", "give at most one of `rates` and `fractions`")
            continue
        out.append((where, {k: tuple(x) if isinstance(x, list) else x for k, x in got.items()}))
    return out


def for_scenario(
    v: TableReaders, load: LoadPlan | None, parts: dict[str, Any], sid: str
) -> LoadPlan | None:
    """The scenario's plan: [load] with the overrides it matches applied in order."""
    if load is None:
        return None
    for where, values in v.load_overrides:
        if matches(where, parts, sid) and None not in values.values():
            if "rates" in values:
                values = {**values, "fractions": None}
            elif "fractions" in values:
                values = {**values, "rates": None}
            load = replace(load, **values)
    return load
