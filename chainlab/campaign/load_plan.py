"""The campaign file's [load] table (docs/campaigns.md): offered loads, how to run them, and
[[load.override]] plans for the scenarios a `where` table matches. `v` is the campaign
loader's validator (chainlab.campaign.loader), whose problems these report into.
"""

from __future__ import annotations

import os
from dataclasses import replace

from chainlab.campaign import estimate
from chainlab.campaign.fields import (
    LOAD_DEFAULTS,
    LOAD_FIELDS,
    MAX_IN_FLIGHT,
    MIN_STEP_ATTEMPTS,
    WORKERS_PER_CORE,
)
from chainlab.campaign.matrix import matches
from chainlab.campaign.model import LoadPlan, Scenario, cpu_list


def read(v, value) -> LoadPlan | None:
    """[load]: the offered loads and how to run them; rules between keys and the
    machine's cores here, the steps' lengths against each scenario in check_load_steps."""
    v.load_overrides: list[tuple[dict, dict]] = []
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


def read_overrides(v, value) -> list[tuple[dict, dict]]:
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


def for_scenario(v, load: LoadPlan | None, parts: dict, sid: str) -> LoadPlan | None:
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


def check_steps(v, scenarios: dict[str, Scenario]) -> None:
    """Each step must hold about MIN_STEP_ATTEMPTS attempts: at its rate, or for
    fractions at the capacity the cost model expects of the scenario."""
    checked = set()
    for sid, sc in scenarios.items():
        # Absolute rates hold the same attempts for every scenario of a plan: say it once.
        key = sc.load if sc.load.rates is not None else (sc.load, sid)
        if key not in checked:
            checked.add(key)
            check_plan(v, sid, sc)


def check_plan(v, sid: str, sc: Scenario) -> None:
    load = sc.load
    if load.rates is not None:
        # Little's law: a generator with `slots` connections open at a time, each lasting a
        # handshake, can start at most slots / handshake time attempts a second; past that
        # every step would measure its slots (generator_saturated), not the server.
        slots = load.max_in_flight or MAX_IN_FLIGHT
        handshake_s = estimate.handshake_ms(sc) / 1e3
        most = slots / handshake_s if handshake_s > 0 else float("inf")
        for i, rate in enumerate(load.rates):
            if rate > most:
                v.bad(
                    f"load.rates[{i}]",
                    f"bad value {rate:g} for scenario {sid}: {slots} connection slots "
                    f"(max_in_flight) at about {handshake_s * 1e3:.1f} ms a handshake (the "
                    f"estimate, its path included) start at most {most:.0f} attempts/s; "
                    f"allowed: a rate up to {most:.0f}/s, or more slots (max_in_flight up to "
                    f"{MAX_IN_FLIGHT})",
                )
            if rate * load.step_s < MIN_STEP_ATTEMPTS:
                v.bad(
                    f"load.rates[{i}]",
                    f"bad value {rate:g}: a {load.step_s:g} s step holds "
                    f"{rate * load.step_s:.0f} attempts; allowed: at least "
                    f"{MIN_STEP_ATTEMPTS} per step (a rate >= "
                    f"{MIN_STEP_ATTEMPTS / load.step_s:g}/s, or a longer step_s)",
                )
        return
    capacity = load.server_cores / (estimate.server_cpu_ms(sc) / 1e3)
    low = min(load.fractions)
    if low * capacity * load.step_s < MIN_STEP_ATTEMPTS:
        need = MIN_STEP_ATTEMPTS / (low * capacity)
        v.bad(
            "load.step_s",
            f"bad value {load.step_s:g} for scenario {sid}: at fraction {low:g} of its "
            f"expected capacity ({capacity:.1f}/s, from the cost model) a step holds "
            f"{low * capacity * load.step_s:.0f} attempts; allowed: at least "
            f"{MIN_STEP_ATTEMPTS} per step (step_s >= {need:.0f}, e.g. in a "
            "[[load.override]] for this scenario)",
        )
